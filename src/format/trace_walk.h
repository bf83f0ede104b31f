#ifndef HS_FORMAT_TRACE_WALK_H
#define HS_FORMAT_TRACE_WALK_H
#include "format/trace_reader.h"
#include "common/log.h"

/*
 * trace_walk - one walk over a trace's records in file order, for the
 * readers of format/ (hs_trace_load(), hs_trace_stream()). It fills
 * struct hs_trace (process, stack tree, modules, threads, clock, RSS,
 * symbols, how it ended) and hands each record's events to one of two
 * sinks: the loaded columns (in file order; trace_load.c puts them in
 * time order), or the time-order sink of a stream (trace_order.h).
 */
struct hs__order;

/*
 * Walk the trace @r has open into @t (zeroed by the caller) with @flags
 * (enum hs_trace_load_flags): events into @t's columns, or to @order when
 * it is not NULL. At the end, parents, modules and symbols are resolved
 * and times are in ns. Returns 0 or a negative errno (@diag filled for a
 * corrupt trace); the caller releases @t either way.
 */
HS_MUST_CHECK
int hs__trace_walk(struct hs_trace_reader *r, struct hs_trace *t, unsigned flags,
		   struct hs__order *order, struct hs_diag *diag);
#endif
