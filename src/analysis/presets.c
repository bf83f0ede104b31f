/*
 * presets - the built-in GroupPats presets (see presets.h).
 */
#include "analysis/presets.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <ctype.h>
#include <errno.h>
#include <string.h>

static const struct hs_preset presets[] = {
    {"no grouping", "", "", "", "every frame as it is", 0, NULL},
    {"group modules", "{%}!->module $1", "", "",
     "every frame of a module becomes 'module NAME'; neighbours merge", 0, NULL},
    {"group module entries", "{%}!=>module $1", "", "",
     "a module's frames merge into the frame through which it was "
     "entered: 'module NAME <<entry>>'",
     0, NULL},
    {"group full path module entries", "{*}!=>module $1", "", "",
     "like group module entries, with the module's full path", 0, NULL},
    {"group class entries", "{%!*}.%(=>class $1;{%!*}::=>class $1", "", "",
     "a class's (or C++ namespace's) methods merge into the one through "
     "which it was entered",
     0, NULL},
    {"group classes", "{%!*}.%(->class $1;{%!*}::->class $1", "", "",
     "every method of a class (or C++ namespace) becomes 'class NAME'", 0, NULL},
    {"fold threads", "Thread -> AllThreads", "", "",
     "all threads of a process as one node 'AllThreads'", 0, NULL},
    {"Just My App", "^EXE_DIR/*!->;!=>OTHER", "", "",
     "code under the executable's directory as it is, everything else "
     "as 'OTHER <<entry>>'",
     1, NULL},
    {"Ignore PID/TID", HS_PRESET_IGNORE_PID_TID, "", "",
     "processes by name only and one 'Thread' node, so that the nodes of "
     "two runs cancel in a diff",
     0, NULL},
    {"Ignore Paths", HS_PRESET_IGNORE_PID_TID "{%}!{*}->$1!$2", "", "",
     "Ignore PID/TID, and frames without their module's directory", 0, NULL},
    {"heap", "", HS_PRESET_HEAP_FOLD, "",
     "heap traces: the allocator's entry points (malloc family, operator "
     "new/delete, the C++ standard library's allocators, containers and "
     "strings, Rust's alloc crate and collections) folded into their "
     "callers, so ByName's Exc names the code that allocates (the default "
     "of heap views; docs/memory.md lists them)",
     0, NULL},
    {"perfview heap", HS_PRESET_PERFVIEW_HEAP_GROUP, HS_PRESET_PERFVIEW_HEAP_FOLD, "",
     "heap snapshots (.gcdump): PerfView's defaults for its heap views: "
     "the framework's types as 'LIB' entries, arrays and strings charged "
     "to the object that holds them, the objects no root reaches left out",
     0, HS_PRESET_PERFVIEW_HEAP_EXC},
};

#define NR_PRESETS (sizeof(presets) / sizeof(presets[0]))

size_t hs_presets_count(void)
{
	return NR_PRESETS;
}

const struct hs_preset *hs_presets_get(size_t i)
{
	return i < NR_PRESETS ? &presets[i] : NULL;
}

static int fold_char(unsigned char c)
{
	return c == '-' || c == '_' ? ' ' : tolower(c);
}

const struct hs_preset *hs_preset_find(const char *name)
{
	const char *b = name, *e;
	size_t i, n;

	while (isspace((unsigned char)*b) || *b == '[')
		b++;
	e = b + strlen(b);
	while (e > b && (isspace((unsigned char)e[-1]) || e[-1] == ']'))
		e--;
	n = (size_t)(e - b);
	for (i = 0; i < NR_PRESETS; i++) {
		const char *p = presets[i].name;
		size_t k;

		if (strlen(p) != n)
			continue;
		for (k = 0; k < n; k++)
			if (fold_char((unsigned char)p[k]) !=
			    fold_char((unsigned char)b[k]))
				break;
		if (k == n)
			return &presets[i];
	}
	return NULL;
}

/* Can @dir be written as a simplified pattern without any special? */
static int plain_dir(const char *dir)
{
	const unsigned char *p;

	for (p = (const unsigned char *)dir; *p; p++)
		if (!isalnum(*p) && *p < 0x80 && !strchr("/._+~-", *p))
			return 0;
	return 1;
}

/* "^DIR/" "*!->;!=>OTHER", or the same as a raw regex when DIR needs it. */
static int just_my_app(struct hs_buf *b, const char *dir)
{
	size_t len = strlen(dir);
	size_t i;
	int err = 0;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 1)
		len = 0; /* "/" itself */
	if (plain_dir(dir))
		return hs_buf_addf(b, "^%.*s/*!->;!=>OTHER", (int)len, dir);
	/* a raw regex in which every special byte is written as \xHH, so that
	 * ';', '->' and '=>' cannot break the GroupPats syntax */
	err = hs_buf_adds(b, "@^");
	for (i = 0; i < len && !err; i++) {
		unsigned char c = (unsigned char)dir[i];

		if (isalnum(c) || c >= 0x80 || c == '/')
			err = hs_buf_addc(b, (char)c);
		else
			err = hs_buf_addf(b, "\\x%02x", c);
	}
	if (!err)
		err = hs_buf_adds(b, "/.*!->;!=>OTHER");
	return err;
}

int hs_preset_group_text(const struct hs_preset *p, const char *exe_dir, char **out)
{
	struct hs_buf b = HS_BUF_INIT;
	int err;

	*out = NULL;
	if (p->needs_exe_dir && (!exe_dir || exe_dir[0] != '/'))
		return -EINVAL;
	err = hs_buf_addf(&b, "[%s] ", p->name);
	if (!err)
		err = p->needs_exe_dir ? just_my_app(&b, exe_dir)
				       : hs_buf_adds(&b, p->group);
	if (!err)
		*out = hs_buf_detach(&b);
	hs_buf_release(&b);
	return err ? err : *out ? 0 : -ENOMEM;
}
