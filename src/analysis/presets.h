#ifndef HS_ANALYSIS_PRESETS_H
#define HS_ANALYSIS_PRESETS_H
#include <stddef.h>

/*
 * presets - the GroupPats presets of PerfView's stack viewer
 * (perfview-semantics.md §2), mapped to Linux frame names
 * ("/full/path/to/module!function"; processes "Process <comm> (<pid>)",
 * threads "Thread (<tid>) <name>").
 *
 * A preset is a name, a GroupPats text, a FoldPats text, a Fold%, a
 * comment and an ExcPats text. Applying one sets GroupPats to "[name]
 * group" (which is what hs_preset_group_text() returns) plus FoldPats,
 * Fold% and ExcPats when they are not empty. "Just My App" depends on
 * the executable's directory and is built on demand.
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
 * Heap views: FoldPats that charge the allocator to the code that called
 * it, so that ByName's Exc names the user's functions (docs/memory.md
 * lists what each entry folds). The entries name only functions that lie
 * between a user's function and the allocation function on the ordinary
 * paths to it: the malloc family and the C library's wrappers that only
 * allocate; operator new and delete; libstdc++'s allocators, containers,
 * strings, shared pointers and the helpers that build their elements;
 * Rust's alloc crate (Vec, String, Box, Rc, Arc, collections, format!),
 * hashbrown and std's HashMap, Iterator::collect, Option::map_or_else
 * (which format! goes through) and the global allocator.
 * Frames above user code that the user needs stay (std::thread's runner,
 * std::sort and the comparator it calls, std::function, std::__invoke).
 *
 * C++ frames are matched by their qualified name, not a return type or an
 * argument: a balanced template argument list is HS__TARGS's "(?&t)", and
 * HS__CXX_AT skips the module and a function template's return type.
 */
#define HS__TARGS "(?(DEFINE)(?<t><(?:[^<>]|(?&t))*+>))"
#define HS__CXX_AT "^[^!]*!(?:(?:[^<>()]|(?&t))*\\s)?(?:std|__gnu_cxx)::(?:__cxx11::)?"
#define HS_PRESET_HEAP_FOLD                                                              \
	"@!(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|"       \
	"memalign|valloc|pvalloc|mmap|mmap64|mremap|__libc_malloc|__libc_calloc|"        \
	"__libc_realloc|__libc_memalign|strdup|__strdup|strndup|__strndup)"              \
	"( \\(inline\\))?$;"                                                             \
	"@!operator (new|delete);"                                                       \
	"@" HS__TARGS HS__CXX_AT                                                         \
	"(?:allocator|__new_allocator|new_allocator|allocator_traits|"                   \
	"__alloc_traits|basic_string|vector|_Vector_base|deque|_Deque_base|list|"        \
	"_List_base|forward_list|_Fwd_list_base|map|multimap|set|multiset|"              \
	"_Rb_tree|unordered_map|unordered_multimap|unordered_set|"                       \
	"unordered_multiset|_Hashtable|__detail::_Hashtable_alloc|"                      \
	"__detail::_Map_base|__detail::_Insert_base|__detail::_Insert|"                  \
	"__detail::_AllocNode|__detail::_ReuseOrAllocNode|stack|queue|"                  \
	"priority_queue|pair|shared_ptr|__shared_ptr|__shared_count|"                    \
	"_Sp_counted_ptr_inplace|_Sp_counted_ptr|_Sp_counted_deleter|"                   \
	"__allocated_ptr|__uninitialized_copy|__uninitialized_fill_n|"                   \
	"__uninitialized_default_n_1)"                                                   \
	"(?&t)::(?:\\w+::)*(?:~?\\w+(?&t)?|operator[^(]*)\\(;"                           \
	"@" HS__TARGS HS__CXX_AT                                                         \
	"(?:make_shared|allocate_shared|__make_shared|__allocate_shared|"                \
	"make_unique|make_unique_for_overwrite|__allocate_guarded|to_string|"            \
	"to_wstring|getline|operator\\+|_Construct|construct_at|"                        \
	"__uninitialized_copy_a|__uninitialized_move_if_noexcept_a|"                     \
	"__uninitialized_fill_n_a|__uninitialized_default_n_a|__do_uninit_copy|"         \
	"__relocate_a|__relocate_a_1)(?&t)?\\(;"                                         \
	"@^[^!]*!<*(?:&(?:mut )?)?(?:alloc|hashbrown|std::collections|core::fmt)::"      \
	"(?![^!]* as (?!(?:core|alloc|std|hashbrown)::));"                               \
	"@^[^!]*!<[^!]*? as (?:alloc|hashbrown|<\\[_\\]>)::;"                            \
	"@^[^!]*!<(?:&(?:mut )?)*(?:\\w+|\\[[^!]*?\\]) as core::fmt::;"                  \
	"@^[^!]*!<(?:\\[[^!]*?\\]|str)>::;"                                              \
	"@^[^!]*!(?:<[^!]*? as )?core::iter::traits::iterator::Iterator>?::collect\\b;"  \
	"@^[^!]*!<?core::option::Option<.*?>?::map_or_else\\b;"                          \
	"@^[^!]*!<?std::(?:alloc|sys::(?:\\w+::)*alloc)::;"                              \
	"@^[^!]*!(?:__rust|__rdl|__rg)_(?:alloc|alloc_zeroed|realloc)( \\(inline\\))?$"
/*
 * Leaks views: the functions of the C library, its dynamic linker and
 * libstdc++ that allocate once and never free before the program exits:
 * stdio buffers, locale and iconv data, time zones, NSS modules, atexit
 * handlers, the dynamic linker's data for dlopen()ed libraries and thread
 * TLS, libstdc++'s emergency exception pool, Rust std's record of the
 * main thread (thread_info, for its stack overflow handler). They are
 * matched against an allocation's allocating frames only (memviews.c),
 * not against every frame of its stack: a user's allocation made under
 * dlopen() (in a library's constructor) is the user's. The blocks they made are put
 * under the pseudo-frame HS_EXIT_TIME_FRAME, which the leaks view's
 * default ExcPats HS_PRESET_LEAK_SUPPRESS leave out.
 */
/*
 * PerfView's defaults for the heap views of a heap snapshot (its memory
 * stack window): GroupPats "[group Framework]", FoldPats that charge
 * arrays ("[]" in a type name) and strings to the object that holds them,
 * and ExcPats that leave out the objects no root reaches. PerfView's
 * "mscorlib!String" names .NET Framework's string type; .NET's is
 * System.Private.CoreLib.dll's System.String, folded the same way.
 */
#define HS_PRESET_PERFVIEW_HEAP_GROUP "mscorlib!=>LIB;System%!=>LIB;"
#define HS_PRESET_PERFVIEW_HEAP_FOLD                                                     \
	"[];mscorlib!String;@System\\.Private\\.CoreLib\\.dll!System\\.String$"
#define HS_PRESET_PERFVIEW_HEAP_EXC "[not reachable from roots]"

#define HS_EXIT_TIME_FRAME "KnownExitTimeAlloc"
#define HS_PRESET_LEAK_SUPPRESS "^" HS_EXIT_TIME_FRAME
#define HS_PRESET_EXIT_TIME_ALLOCS                                                       \
	"@!(_IO_file_doallocate|_nl_[a-z_]*|__gconv_[a-z_]*|__nss_[a-z_]*|"              \
	"__new_exitfn|tzset_internal|__tzfile_read|dl_open_worker|_dl_[a-z_]*)"          \
	"( \\(inline\\))?$;"                                                             \
	"@!(_GLOBAL__sub_I_eh_alloc\\.cc|\\(anonymous namespace\\)::pool::pool\\();"     \
	"@!std::sys(?:_common)?::(?:\\w+::)*thread_info::set(?:_current_info)?"          \
	"( \\(inline\\))?$"

struct hs_preset {
	const char *name;     /* e.g. "group modules" (shown as "[group modules]") */
	const char *group;    /* GroupPats without the "[name]" prefix */
	const char *fold;     /* FoldPats; "" for none */
	const char *fold_pct; /* Fold%; "" for blank */
	const char *comment;
	int needs_exe_dir; /* "group" is built from the executable's directory */
	const char *exc;   /* ExcPats; NULL for none */
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
int hs_preset_group_text(const struct hs_preset *p, const char *exe_dir, char **out);
#endif
