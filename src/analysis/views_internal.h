#ifndef HS_ANALYSIS_VIEWS_INTERNAL_H
#define HS_ANALYSIS_VIEWS_INTERNAL_H
#include <stdint.h>
#include "analysis/calltree.h"
#include "analysis/views.h"

/*
 * views_internal - what views.c shares with view_part.c, which makes
 * some rows of a view the way views.c makes all of them. Private to
 * src/analysis.
 */

/* Set @r's costs and times from a node's exclusive @e and inclusive @c. */
void hs__view_row_set(struct hs_view_row *r, const struct hs_node_exc *e,
		      const struct hs_node_inc *c);

/*
 * Fill the slots of @m (hs_calltree_when()) and write the When strings of
 * every row of @v: row r's histogram is slot r's (@slot_row NULL) or the
 * sum of the slots s with slot_row[s] == r. 0 or -ENOMEM.
 */
int hs__view_fill_when(struct hs_view *v, const struct hs_calltree *ct,
		       const struct hs_when_map *m, const uint32_t *slot_row);

/*
 * The When strings of ByName rows: @row_of (an output frame of @ct, ROOT
 * at index nr_frames, -> row of @v or HS_NO_NODE) names the rows; a
 * sample counts once in each of them whose name is on its path. 0 or
 * -ENOMEM.
 */
int hs__view_byname_when(struct hs_view *v, const struct hs_calltree *ct,
			 const uint32_t *row_of);

/* Each row's origin and module (views.h), from the output frame of its name. */
void hs__view_set_origins(struct hs_view *v, const struct hs_calltree *ct);
#endif
