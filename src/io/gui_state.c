/*
 * gui_state - FilterGuiState field names and slots (see gui_state.h).
 */
#include "io/gui_state.h"
#include "analysis/group.h"
#include "analysis/pattern.h"
#include "common/buf.h"
#include "common/alloc.h"
#include "common/diag.h"
#include <errno.h>
#include <string.h>

static const char *const names[HS_GUI__COUNT] = {
    [HS_GUI_START] = "Start",	   [HS_GUI_END] = "End",
    [HS_GUI_GROUP] = "GroupRegEx", [HS_GUI_FOLD_PCT] = "FoldPercent",
    [HS_GUI_FOLD] = "FoldRegEx",   [HS_GUI_INC] = "IncludeRegEx",
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
	case HS_GUI_START:
		return &d->start;
	case HS_GUI_END:
		return &d->end;
	case HS_GUI_GROUP:
		return &d->group;
	case HS_GUI_FOLD_PCT:
		return &d->fold_pct;
	case HS_GUI_FOLD:
		return &d->fold;
	case HS_GUI_INC:
		return &d->inc;
	default:
		return &d->exc;
	}
}

/* The name the filter gives field @f's patterns in its messages. */
static const char *filter_name(enum hs_gui_field f)
{
	return f == HS_GUI_FOLD ? "FoldPats" : f == HS_GUI_INC ? "IncPats" : "ExcPats";
}

int hs_gui_defaults_check(struct hs_source_defaults *d, const char *file)
{
	static const enum hs_gui_field fields[] = {
	    HS_GUI_GROUP,
	    HS_GUI_FOLD,
	    HS_GUI_INC,
	    HS_GUI_EXC,
	};
	struct hs_buf warning = HS_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]) && !err; i++) {
		char **slot = hs_gui_field_slot(d, fields[i]);
		struct hs_diag diag = HS_DIAG_INIT(NULL);
		int bad;

		if (!*slot)
			continue;
		if (fields[i] == HS_GUI_GROUP) {
			struct hs_groups g = HS_GROUPS_INIT;

			bad = hs_groups_parse(&g, *slot, &diag);
			hs_groups_release(&g);
		} else {
			struct hs_patlist l = HS_PATLIST_INIT;

			bad = hs_patlist_parse(&l, *slot, filter_name(fields[i]), &diag);
			hs_patlist_release(&l);
		}
		if (bad == -ENOMEM) {
			err = bad;
			break;
		}
		if (!bad)
			continue;
		err = hs_buf_addf(&warning,
				  "%s%s: the %s saved in its view state is not used: %s",
				  warning.len ? "\n" : "", file ? file : "<input>",
				  names[fields[i]], diag.set ? diag.msg : "bad pattern");
		hs_free(*slot);
		*slot = NULL;
	}
	if (!err && warning.len) {
		hs_free(d->warning);
		d->warning = hs_buf_detach(&warning);
		if (!d->warning)
			err = -ENOMEM;
	}
	hs_buf_release(&warning);
	return err;
}
