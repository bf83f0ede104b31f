#ifndef HS_ANALYSIS_DIFF_H
#define HS_ANALYSIS_DIFF_H
#include "analysis/filter.h"

/*
 * diff - PerfView's Diff (perfview-semantics.md §7): one stack source made
 * of the test samples as they are and the baseline samples negated, so
 * every view of it shows test - baseline.
 *
 * Each side first goes through its own filter (time window, GroupPats,
 * FoldPats, IncPats, ExcPats: the samples that pass, with prorated
 * metrics), but the diff keeps each sample's RAW stack (full frame names,
 * at most HS_DIFF_MAX_DEPTH frames from the leaf), re-interned into one
 * source, so the diff window can group and fold it afresh.
 *
 * Ownership: both inputs are borrowed; @out must be initialised by the
 * caller and receives owned copies of everything.
 */
#define HS_DIFF_MAX_DEPTH 1000

/*
 * Build @out = @test - @base. Returns 0, -EINVAL for a bad pattern (the
 * message in @diag) or -ENOMEM. On error @out holds a partial result the
 * caller releases.
 */
int hs_diff_build(const struct hs_stack_source *base,
		  const struct hs_filter_params *base_params,
		  const struct hs_stack_source *test,
		  const struct hs_filter_params *test_params, struct hs_stack_source *out,
		  struct hs_diag *diag);
#endif
