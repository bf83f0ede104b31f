#ifndef HS_IO_GUI_STATE_H
#define HS_IO_GUI_STATE_H
#include <stddef.h>
#include "common/log.h"
#include "model/stack_source.h"

/*
 * gui_state - the text boxes of PerfView's saved FilterGuiState, shared by
 * the XML and JSON importers (perfview-semantics.md §8): their element or
 * key names and where each lands in struct hs_source_defaults.
 *
 * Nothing here allocates but hs_gui_defaults_check(); returned pointers
 * point into @d.
 */
enum hs_gui_field {
	HS_GUI_START,
	HS_GUI_END,
	HS_GUI_GROUP,
	HS_GUI_FOLD_PCT,
	HS_GUI_FOLD,
	HS_GUI_INC,
	HS_GUI_EXC,
	HS_GUI__COUNT
};

/* The field named by @len bytes at @name ("GroupRegEx", ...); -1 if none. */
int hs_gui_field_find(const char *name, size_t len);
/* Where field @f is kept in @d. */
char **hs_gui_field_slot(struct hs_source_defaults *d, enum hs_gui_field f);
/* Start, End and FoldPercent hold numbers; PerfView drops other text there. */
static inline int hs_gui_field_is_number(enum hs_gui_field f)
{
	return f == HS_GUI_START || f == HS_GUI_END || f == HS_GUI_FOLD_PCT;
}

/*
 * Check the patterns saved in @d (GroupRegEx, FoldRegEx, IncludeRegEx,
 * ExcludeRegEx) as the filter will parse them. A bad one would make every
 * view of the file fail with a message naming neither: it is dropped, and
 * @d->warning says which, from which file (@file, borrowed; NULL: the
 * input) and why. Returns 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_gui_defaults_check(struct hs_source_defaults *d, const char *file);
#endif
