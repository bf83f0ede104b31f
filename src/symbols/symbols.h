#ifndef HS_SYMBOLS_SYMBOLS_H
#define HS_SYMBOLS_SYMBOLS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/log.h"

struct hs_buf;
struct hs_diag;

/*
 * symbols - turn code addresses into function names, inline frames and
 * file:line. ELF .symtab/.dynsym and DWARF are read with elfutils (libdwfl,
 * libdw), which also decompresses compressed debug sections and follows
 * separate debug files; names are demangled with libiberty (Itanium C++,
 * Rust legacy and v0); JIT-compiled code is named from perf maps
 * (/tmp/perf-<pid>.map). docs/symbols.md tells users where symbols are
 * looked for.
 *
 * Modules. A module is one mapped ELF file as the trace recorded it: its
 * path, its GNU build id and its load bias. The symbolizer opens each
 * module once (keyed by path + build id) and keeps it open. The file at
 * the recorded path is used only if its build id equals the recorded one;
 * otherwise (missing, corrupt or rebuilt file) the symbolizer looks the
 * build id up in the debug directories and, when DEBUGINFOD_URLS is set,
 * on debuginfod servers. If nothing matches, every address of the module
 * resolves to "module!?": a rebuilt file never gives wrong names. A module
 * recorded without a build id is taken on trust from its path.
 *
 * Addresses. hs_symbolizer_lookup() takes @vaddr in the module's ELF
 * virtual-address space: the run-time address minus the load bias
 * (dl_iterate_phdr's dlpi_addr; 0 for a non-PIE executable). It describes
 * the instruction AT @vaddr. For a return address (every frame of an
 * unwound stack except a leaf that is the interrupted instruction) the
 * CALLER subtracts 1 first, so that the line and inline frames are those
 * of the call and not of the statement after it (and a call that ends a
 * noreturn function is not named after the next function).
 * hs_symbolizer_lookup_addr() takes a run-time address, finds its module
 * in a struct hs_sym_modmap and does the subtraction when told
 * HS_SYM_RETURN_ADDRESS.
 *
 * Results. A lookup fills a struct hs_sym_result: the module path and one
 * or more frames, INNERMOST FIRST. frame[0] is the innermost inlined
 * function at the address, with the address's own file:line; each later
 * frame is the function that frame[i - 1] was inlined into, with the
 * file:line of that inlined call; the last frame is the real (out-of-line)
 * function and the only one without HS_SYM_INLINE. Without DWARF there is
 * one frame with a symbol-table name and no file:line.
 *
 * Ownership. The symbolizer owns every string (interned) and every frame
 * array it hands out; they stay valid and unchanged until
 * hs_symbolizer_free(), however many lookups follow. struct hs_sym_module
 * and the strings it points to are borrowed during a call only (the
 * symbolizer copies what it keeps). A struct hs_sym_modmap borrows the
 * modules added to it: they must outlive the map.
 *
 * Typical use, for the return addresses of a recorded stack:
 *
 *	struct hs_symbolizer *s = hs_symbolizer_new(0);
 *	struct hs_sym_modmap map = HS_SYM_MODMAP_INIT;
 *	hs_sym_modmap_add(&map, &mod, seg_start, seg_end);	   per PT_LOAD
 *	hs_symbolizer_lookup_addr(s, &map, ret, HS_SYM_RETURN_ADDRESS, &r);
 *	for (i = r.nr_frame; i-- > 0; )		   outermost to innermost
 *		hs_sym_format_frame(&r, i, &name);	   "module!function"
 *	hs_sym_modmap_release(&map);
 *	hs_symbolizer_free(s);			   r's strings die here
 *
 * Cost. Results are cached per (module, address): looking an address up
 * again costs one hash probe. Each open module keeps its file (and its
 * debug file) open, so the first module opened raises the process's soft
 * RLIMIT_NOFILE to the hard limit. Not thread-safe: callers serialise
 * access.
 */

/* A module as recorded at run time. Borrowed by every call that takes it. */
struct hs_sym_module {
	const char *path;	       /* file as mapped; NULL is taken as "" */
	const unsigned char *build_id; /* GNU build id bytes, or NULL */
	size_t build_id_len;	       /* 0 when unknown */
	uint64_t bias;		       /* load bias, used by the _addr helpers */
};

enum hs_sym_frame_flags {
	HS_SYM_INLINE = 1 << 0, /* inlined into the next frame */
};

struct hs_sym_frame {
	const char *function; /* demangled name, or NULL when unknown ("?") */
	const char *file;     /* source file as DWARF names it, or NULL */
	uint32_t line;	      /* 1-based; 0 when unknown */
	uint32_t column;      /* 1-based; 0 when unknown */
	unsigned flags;	      /* enum hs_sym_frame_flags */
};

enum hs_sym_status {
	HS_SYM_FOUND,	   /* frame[0..] name a function */
	HS_SYM_NO_SYMBOL,  /* module readable, no function here: "module!?" */
	HS_SYM_BAD_MODULE, /* no usable file for the module: "module!?" */
	HS_SYM_NO_MODULE,  /* no module contains the address: "?!?" */
};

struct hs_sym_result {
	enum hs_sym_status status;
	const char *module;		  /* module path; NULL for HS_SYM_NO_MODULE */
	const struct hs_sym_frame *frame; /* nr_frame frames, innermost first */
	unsigned nr_frame;		  /* at least 1 */
};

/*
 * Debuginfod is asked only when DEBUGINFOD_URLS is set and not empty:
 * by the symbolizer for a module whose file is missing or of another
 * build, and by libdw for the separate debug info of a file it has. Only
 * the first can be turned off here; unset DEBUGINFOD_URLS to stop both.
 */
enum hs_symbolizer_flags {
	HS_SYM_NO_SYSTEM_DEBUG = 1 << 0, /* skip /usr/lib/debug */
	HS_SYM_NO_DEBUGINFOD = 1 << 1,	 /* no debuginfod for missing files */
	HS_SYM_NO_DEMANGLE = 1 << 2,	 /* keep mangled names */
};

struct hs_symbolizer;

/*
 * New symbolizer; @flags is a set of enum hs_symbolizer_flags. Returns an
 * owned object (free with hs_symbolizer_free()) or NULL when out of memory.
 */
struct hs_symbolizer *hs_symbolizer_new(unsigned flags);
/* Close every module and free every result. NULL is a no-op. */
void hs_symbolizer_free(struct hs_symbolizer *s);

/*
 * Search @dir (copied) for separate debug files, before /usr/lib/debug and
 * in the order added: DIR/.build-id/xx/yyyy.debug by build id and the
 * .gnu_debuglink name under DIR (see docs/symbols.md). A relative @dir is
 * made absolute with realpath(3), so it must exist. Must be called before
 * the first lookup. Returns 0, -EBUSY after a lookup, -EINVAL for an
 * empty name or one with ':', -errno from realpath(3), or -ENOMEM.
 */
HS_MUST_CHECK int hs_symbolizer_add_debug_dir(struct hs_symbolizer *s, const char *dir);

/*
 * Describe @vaddr (ELF virtual address, already minus 1 for a return
 * address) in module @mod (borrowed). Fills *@out with a result owned by
 * @s. Returns 0 — also when nothing was found (see out->status) — or
 * -ENOMEM, in which case *@out is a "module!?" result.
 */
HS_MUST_CHECK int hs_symbolizer_lookup(struct hs_symbolizer *s,
				       const struct hs_sym_module *mod, uint64_t vaddr,
				       struct hs_sym_result *out);

/*
 * Which files a module resolved to, for messages and tests. @main_file is
 * the ELF file in use (the recorded path, or what the build id led to),
 * @debug_file the file DWARF comes from (NULL if none was found; "(no
 * name)" for one libdw fetched without naming it), @why the reason the
 * file at the recorded path was not used (NULL when it was). All are
 * owned by @s. Opens the module if needed. Returns 0, or -ENOMEM.
 */
struct hs_sym_module_info {
	const char *main_file;
	const char *debug_file;
	const char *why;
	int usable;
};
HS_MUST_CHECK int hs_symbolizer_module_info(struct hs_symbolizer *s,
					    const struct hs_sym_module *mod,
					    struct hs_sym_module_info *info);

/*
 * JIT code: read a perf map (lines "START SIZE name", START and SIZE in
 * hex, as written by V8, the JVM's perf-map-agent, LuaJIT, ...). Its
 * entries name run-time addresses no module contains; when entries
 * overlap, the line read last wins. A malformed line is an error that
 * names it in @diag (may be NULL); nothing of the file is kept then. A
 * last line without '\n' (a map still being written) is skipped
 * silently. Results of such addresses name the map's path as module.
 * Returns 0, -errno from open(), -EINVAL or -ENOMEM.
 */
HS_MUST_CHECK int hs_symbolizer_add_perf_map(struct hs_symbolizer *s, const char *path,
					     struct hs_diag *diag);
/* The same for /tmp/perf-<pid>.map; -ENOENT when the process wrote none. */
HS_MUST_CHECK int hs_symbolizer_add_perf_map_pid(struct hs_symbolizer *s, pid_t pid,
						 struct hs_diag *diag);
/*
 * Name the run-time address @addr from the perf maps. Fills *@out (owned
 * by @s) and returns 0 whether or not it was found (HS_SYM_NO_MODULE).
 */
HS_MUST_CHECK int hs_symbolizer_lookup_jit(struct hs_symbolizer *s, uint64_t addr,
					   struct hs_sym_result *out);

/*
 * Module membership: a set of run-time address ranges, each belonging to
 * a module. The map borrows the modules (they must outlive it) and owns
 * its arrays. When ranges overlap (a library unloaded and another loaded
 * at its place) the range added last wins.
 */
struct hs_sym_modmap {
	struct hs_sym_range {
		uint64_t start, end; /* [start, end) */
		uint64_t max_end;    /* max end of ranges[0..i] once sorted */
		size_t seq;	     /* order of addition */
		const void *item;    /* borrowed */
	} * range;
	size_t nr, alloc;
	int sorted;
};
#define HS_SYM_MODMAP_INIT                                                               \
	{                                                                                \
		0                                                                        \
	}

void hs_sym_modmap_init(struct hs_sym_modmap *m);
void hs_sym_modmap_release(struct hs_sym_modmap *m);
/*
 * Say that run-time addresses [@start, @end) belong to @mod (borrowed),
 * e.g. each PT_LOAD segment dl_iterate_phdr reported. Returns 0, -EINVAL
 * for an empty range or -ENOMEM.
 */
HS_MUST_CHECK int hs_sym_modmap_add(struct hs_sym_modmap *m,
				    const struct hs_sym_module *mod, uint64_t start,
				    uint64_t end);
/* The module containing run-time address @addr, or NULL. */
const struct hs_sym_module *hs_sym_modmap_find(struct hs_sym_modmap *m, uint64_t addr);

enum hs_sym_lookup_flags {
	HS_SYM_RETURN_ADDRESS = 1 << 0, /* @addr is a return address: use addr-1 */
};

/*
 * Describe run-time address @addr: find its module in @map (may be NULL),
 * subtract the module's bias (and 1 with HS_SYM_RETURN_ADDRESS) and look
 * it up; an address outside every module is tried in the perf maps, and
 * otherwise gives HS_SYM_NO_MODULE ("?!?"). Returns 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_symbolizer_lookup_addr(struct hs_symbolizer *s,
					    struct hs_sym_modmap *map, uint64_t addr,
					    unsigned flags, struct hs_sym_result *out);

/*
 * Append frame @i of @r to @out as the stack source's frame name
 * "module!function": "/lib/libc.so.6!malloc", "/bin/x!?", "?!?".
 * Returns 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_sym_format_frame(const struct hs_sym_result *r, unsigned i,
				      struct hs_buf *out);

/*
 * Demangle @name (Itanium C++ "_Z...", Rust "_R..." and legacy "_ZN...h<hash>E")
 * into @out, with parameters for C++. Returns 1 if it was demangled, 0 if
 * it is not a mangled name (nothing appended), -ENOMEM.
 */
HS_MUST_CHECK int hs_sym_demangle(const char *name, struct hs_buf *out);

/* Statistics, for benchmarks and -v output. */
struct hs_symbolizer_stats {
	size_t modules;	   /* modules opened (usable or not) */
	size_t lookups;	   /* calls of hs_symbolizer_lookup() */
	size_t cache_hits; /* of which answered from the cache */
	size_t frames;	   /* frames stored */
	size_t strings;	   /* distinct strings interned */
};
void hs_symbolizer_stats(const struct hs_symbolizer *s, struct hs_symbolizer_stats *st);
#endif
