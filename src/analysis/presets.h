#ifndef HS_ANALYSIS_PRESETS_H
#define HS_ANALYSIS_PRESETS_H
#include <stddef.h>

/*
 * presets - the GroupPats presets of PerfView's stack viewer
 * (perfview-semantics.md §2), mapped to Linux frame names
 * ("/full/path/to/module!function"; processes "Process <comm> (<pid>)",
 * threads "Thread (<tid>) <name>").
 *
 * A preset is a name, a GroupPats text, a FoldPats text, a Fold% and a
 * comment. Applying one sets GroupPats to "[name] group" (which is what
 * hs_preset_group_text() returns) plus FoldPats and Fold% when they are not
 * empty. "Just My App" depends on the executable's directory and is built
 * on demand.
 *
 * heapscope's command line uses no grouping unless a preset or GroupPats
 * is given, and leaves Fold% blank; HS_PRESET_DEFAULT_GROUP is PerfView's
 * default GroupPats text for front ends that want it.
 *
 * Ownership: the table and its strings are static; hs_preset_group_text()
 * returns an owned string.
 */

/* PerfView's "Default text" of GroupPats. */
#define HS_PRESET_DEFAULT_GROUP "[group module entries]  {%}!=>module $1"
/* Strips process and thread ids (so a diff's nodes cancel). */
#define HS_PRESET_IGNORE_PID_TID "^Process% {%}->$1;^Thread->Thread;"

/*
 * Heap views: the allocator's entry points (the malloc family, operator
 * new and delete, the C++ standard library's allocator internals, and C
 * library functions that only wrap malloc) as FoldPats, so that their
 * cost is charged to the code that called them.
 */
#define HS_PRESET_HEAP_FOLD                                                      \
	"@!(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|" \
	"memalign|valloc|pvalloc|mmap|mmap64|mremap|__libc_malloc|__libc_calloc|"  \
	"__libc_realloc|__libc_memalign|strdup|__strdup|strndup|__strndup)"      \
	"( \\(inline\\))?$;"                                                       \
	"@!operator (new|delete);"                                               \
	"@!(std::|__gnu_cxx::)(__)?(new_allocator|allocator|allocator_traits)<;" \
	"@!std::_Vector_base<.*>::_M_allocate\\("
/*
 * Leaks views: allocations the C library and libstdc++ make once and
 * never free before the program exits (ExcPats): stdio buffers, locale
 * and iconv data, time zones, NSS modules, atexit handlers, the dynamic
 * linker's data for dlopen()ed libraries and thread TLS, libstdc++'s
 * emergency exception pool.
 */
#define HS_PRESET_LEAK_SUPPRESS                                                  \
	"@!(_IO_file_doallocate|_nl_[a-z_]*|__gconv_[a-z_]*|__nss_[a-z_]*|"        \
	"__new_exitfn|tzset_internal|__tzfile_read|dl_open_worker|_dl_[a-z_]*)"  \
	"( \\(inline\\))?$;"                                                       \
	"@!(_GLOBAL__sub_I_eh_alloc\\.cc|\\(anonymous namespace\\)::pool::pool\\()"

struct hs_preset {
	const char *name;	/* e.g. "group modules" (shown as "[group modules]") */
	const char *group;	/* GroupPats without the "[name]" prefix */
	const char *fold;	/* FoldPats; "" for none */
	const char *fold_pct;	/* Fold%; "" for blank */
	const char *comment;
	int needs_exe_dir;	/* "group" is built from the executable's directory */
};

size_t hs_presets_count(void);
/* Preset @i (0 <= i < count), borrowed; NULL when out of range. */
const struct hs_preset *hs_presets_get(size_t i);
/*
 * Preset called @name: case-insensitive, surrounding brackets and blanks
 * ignored, and '-' or '_' match a space ("group-modules"). Borrowed;
 * NULL when there is none.
 */
const struct hs_preset *hs_preset_find(const char *name);
/*
 * The GroupPats text that applies @p, "[name] group", as an owned string
 * in *@out. @exe_dir (an absolute directory) is needed by presets with
 * needs_exe_dir and ignored by the others. Returns 0, -EINVAL when
 * @exe_dir is needed but missing or not absolute, or -ENOMEM.
 */
int hs_preset_group_text(const struct hs_preset *p, const char *exe_dir,
			 char **out);
#endif
