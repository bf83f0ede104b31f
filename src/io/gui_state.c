/*
 * gui_state - FilterGuiState field names and slots (see gui_state.h).
 */
#include "io/gui_state.h"
#include <string.h>

static const char *const names[HS_GUI__COUNT] = {
	[HS_GUI_START] = "Start",
	[HS_GUI_END] = "End",
	[HS_GUI_GROUP] = "GroupRegEx",
	[HS_GUI_FOLD_PCT] = "FoldPercent",
	[HS_GUI_FOLD] = "FoldRegEx",
	[HS_GUI_INC] = "IncludeRegEx",
	[HS_GUI_EXC] = "ExcludeRegEx",
};

int hs_gui_field_find(const char *name, size_t len)
{
	int f;

	for (f = 0; f < HS_GUI__COUNT; f++)
		if (strlen(names[f]) == len && !memcmp(names[f], name, len))
			return f;
	return -1;
}

char **hs_gui_field_slot(struct hs_source_defaults *d, enum hs_gui_field f)
{
	switch (f) {
	case HS_GUI_START: return &d->start;
	case HS_GUI_END: return &d->end;
	case HS_GUI_GROUP: return &d->group;
	case HS_GUI_FOLD_PCT: return &d->fold_pct;
	case HS_GUI_FOLD: return &d->fold;
	case HS_GUI_INC: return &d->inc;
	default: return &d->exc;
	}
}
