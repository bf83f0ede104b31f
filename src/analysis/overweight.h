#ifndef HS_ANALYSIS_OVERWEIGHT_H
#define HS_ANALYSIS_OVERWEIGHT_H
#include <stdio.h>
#include "analysis/calltree.h"

/*
 * overweight - PerfView's Overweight report (perfview-semantics.md §7):
 * which names grew more than their share when a whole run grew from
 * T1 (base) to T2 (test).
 *
 * Each side is filtered with its own parameters (patterns and time; Fold%
 * is never applied) and summed by name (ByName inclusive). For a name with
 * base value v1 and test value v2, with growth = T2/T1:
 *
 *   delta = v2 - v1            expected = v1 * (growth - 1)
 *   Overweight%     = 100 * delta / expected
 *   Responsibility% = 100 * delta / (T2 - T1)
 *
 * and an interest level 0-6 (one point each for |Overweight%| > 110,
 * |Responsibility%| > 5, > 20, > 100, v2/T2 < 0.95, v2/T2 < 0.75).
 * Only names present on both sides are rows; rows under 2% responsibility
 * are left out; equal totals give no rows. Rows are sorted by interest
 * (desc), overweight (desc), delta (asc). ROOT is a row (100%).
 *
 * Ownership: the report owns its rows and their names.
 */

struct hs_overweight_row {
	char *name; /* owned */
	double base, test, delta;
	double responsibility_pct, overweight_pct; /* 0 where undefined */
	int interest;
};

struct hs_overweight {
	double base_total, test_total;
	struct hs_overweight_row *rows;
	size_t nr;
};

/*
 * Compute the report. Only @bp->filter and @tp->filter are used (Fold% is
 * ignored). Returns 0; -EINVAL for a bad pattern (message in @diag);
 * -ENOMEM. On error @out is left empty.
 */
int hs_overweight_compute(const struct hs_stack_source *base,
			  const struct hs_view_params *bp,
			  const struct hs_stack_source *test,
			  const struct hs_view_params *tp, struct hs_overweight *out,
			  struct hs_diag *diag);
void hs_overweight_release(struct hs_overweight *ow);

/* Aligned text table. Returns 0 or -EIO. */
int hs_overweight_write_text(const struct hs_overweight *ow, FILE *f);
/* {"base_total", "test_total", "delta", "delta_pct", "rows": [...]}; 0 or -EIO/-ENOMEM.
 */
int hs_overweight_write_json(const struct hs_overweight *ow, FILE *f);
/* A self-contained HTML page (no scripts, no external files). 0 or -EIO. */
int hs_overweight_write_html(const struct hs_overweight *ow, const char *base_name,
			     const char *test_name, FILE *f);
#endif
