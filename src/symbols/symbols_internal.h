#ifndef HS_SYMBOLS_SYMBOLS_INTERNAL_H
#define HS_SYMBOLS_SYMBOLS_INTERNAL_H
#include "symbols/symbols.h"
#include "common/buf.h"
#include "common/idindex.h"
#include "common/strtab.h"
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <time.h>
#include "common/log.h"

/*
 * symbols_internal - what the files of src/symbols share and nothing else
 * uses: the symbolizer's fields, the range index behind struct
 * hs_sym_modmap, and the entry points between symbolizer.c (modules,
 * cache, storage), dwarf.c (one address to frames) and perfmap.c.
 *
 * Ownership follows symbols.h: everything hangs off the symbolizer and is
 * freed by hs_symbolizer_free().
 */

/* The range index also holds perf-map entries and DWARF scopes; @item is
 * borrowed and returned as is. */
HS_MUST_CHECK
int hs__ranges_add(struct hs_sym_modmap *m, const void *item, uint64_t start,
		   uint64_t end);
const void *hs__ranges_find(struct hs_sym_modmap *m, uint64_t addr);

/* A function symbol of a module (see elfsyms.c). */
struct hs__elf_sym {
	uint64_t start, end; /* [start, end) in module addresses */
	const char *name;    /* libdw's or interned; no "@VERSION" */
	int sized;	     /* st_size was not 0 */
};

/* One open module. */
struct hs__sym_mod {
	uint64_t hash;		 /* of path and build id */
	const char *path;	 /* interned */
	unsigned char *build_id; /* owned copy, NULL when none */
	size_t build_id_len;
	uint32_t id;		   /* index in hs_symbolizer.mod */
	Dwfl *dwfl;		   /* owned; NULL when unusable */
	Dwfl_Module *dm;	   /* the one module of dwfl */
	const char *main_file;	   /* interned; the file dwfl reads */
	const char *why;	   /* interned; why the path was not used */
	struct hs_sym_modmap syms; /* items: symv entries */
	struct hs__elf_sym *symv;  /* owned; NULL until first needed */
};

struct hs__cache_ent {
	uint64_t vaddr;
	uint32_t mod;	 /* module id */
	uint32_t status; /* enum hs_sym_status */
	uint32_t nr_frame;
	const struct hs_sym_frame *frame;
};

/* A hash map from a DIE (its Dwarf and offset) to a borrowed pointer. */
struct hs__die_map {
	struct hs__die_ent {
		const void *dw;
		uint64_t off;
		void *val;
	} * ent; /* in the order added */
	size_t nr, alloc;
	struct hs_idindex index; /* of ent, by (dw, off) */
};

/* libdebuginfod, loaded on first use as libdw itself does: linking it
 * would load curl and its TLS stack into every heapscope command. */
struct hs__debuginfod {
	int tried; /* dlopen was attempted */
	void *so;  /* dlopen handle */
	debuginfod_client *client;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
};

struct hs_symbolizer {
	unsigned flags;	   /* enum hs_symbolizer_flags */
	int started;	   /* a module was opened: dirs are fixed */
	int nofile_raised; /* RLIMIT_NOFILE was raised */
	char **debug_dir;  /* owned absolute names, in search order */
	size_t nr_debug_dir, alloc_debug_dir;
	char *debuginfo_path;	  /* libdwfl's search string, owned */
	char *debug_cache;	  /* debug_cache.c's directory, owned; or NULL */
	Dwfl_Callbacks callbacks; /* shared by every module's Dwfl */

	struct hs__sym_mod **mod; /* owned, by id */
	size_t nr_mod, alloc_mod;
	struct hs_idindex mod_index; /* of mod, by (path, build id) */

	struct hs__cache_ent *cache; /* resolved addresses, as added */
	size_t nr_cache, alloc_cache;
	struct hs_idindex cache_index; /* of cache, by (module, vaddr) */

	struct hs_sym_frame **block; /* frame storage, blocks never move */
	size_t nr_block, alloc_block;
	size_t block_used, block_size; /* fill of the newest block */
	struct hs_sym_frame *scratch;  /* frames of the lookup in progress */
	size_t nr_scratch, alloc_scratch;

	/* dwarf.c */
	struct hs__die_map units;    /* unit DIE -> owned struct hs__unit */
	struct hs__die_map prefixes; /* subprogram DIE -> "ns::cls::" */
	Dwarf_Die *path;	     /* scopes from a unit down to a pc */
	size_t alloc_path;
	struct hs__unit_range { /* a unit's index while it is built */
		uint64_t low, high;
		size_t die;
	} * uranges;
	size_t nr_uranges, alloc_uranges;

	struct hs_strtab str; /* every string handed out */
	uint32_t *demangled;  /* raw name id -> demangled id + 1 */
	size_t alloc_demangled;
	struct hs_buf tmp;

	struct hs_sym_modmap jit;     /* items: struct hs__jit_sym */
	struct hs__jit_sym **jit_arr; /* owned arrays of entries */
	size_t nr_jit_arr, alloc_jit_arr;

	struct hs__debuginfod dbgd;
	size_t lookups, hits, frames;
};

/* One perf-map entry: run-time [start, end) named by @frame. */
struct hs__jit_sym {
	uint64_t start, end;
	const char *module;	   /* the map's path, interned */
	struct hs_sym_frame frame; /* strings interned */
};

/*
 * Intern @len bytes at @str in @s's string table. Returns the symbolizer's
 * copy (valid until hs_symbolizer_free()) or NULL when out of memory.
 */
HS_MUST_CHECK const char *hs__sym_intern(struct hs_symbolizer *s, const char *str,
					 size_t len);
HS_MUST_CHECK const char *hs__sym_intern_buf(struct hs_symbolizer *s,
					     const struct hs_buf *b);
/* Intern @raw demangled (unless HS_SYM_NO_DEMANGLE); NULL on -ENOMEM. */
const char *hs__sym_function_name(struct hs_symbolizer *s, const char *raw);
/*
 * Add @nr entries of @jit (taken: freed by the symbolizer, also on
 * failure) to the JIT ranges. Returns 0 or -ENOMEM (then none is added).
 */
HS_MUST_CHECK int hs__sym_add_jit(struct hs_symbolizer *s, struct hs__jit_sym *jit,
				  size_t nr);

/*
 * dwarf.c: put the frames of @vaddr in usable module @m into s->scratch
 * (s->nr_scratch >= 1 on success), innermost first. 0 or -ENOMEM.
 */
HS_MUST_CHECK
int hs__sym_resolve(struct hs_symbolizer *s, struct hs__sym_mod *m, uint64_t vaddr);

/*
 * elfsyms.c: the function symbol covering @vaddr in *@out (NULL if none),
 * indexing the module's symbols on first use. 0 or -ENOMEM.
 */
HS_MUST_CHECK
int hs__sym_elf_lookup(struct hs_symbolizer *s, struct hs__sym_mod *m, uint64_t vaddr,
		       const struct hs__elf_sym **out);
void hs__sym_elf_release(struct hs__sym_mod *m);
/* Free what dwarf.c keeps in @s. */
void hs__sym_dwarf_release(struct hs_symbolizer *s);

/* --- debug_cache.c: decompressed copies of system debug files ------------ */

/* The cache's directory (owned by the caller), or NULL for none. */
char *hs__debug_cache_dir(void);

/*
 * The debug file of build id @id (@idlen bytes) under @cache: copied from
 * the same name under @from (a debug directory, as .build-id/xx/yyyy.debug)
 * with its compressed sections decompressed, unless an earlier run did so.
 * Returns 1 with *@out the copy's name (the caller's), 0 when there is no
 * copy (no such file, or too little compressed in it), or a negative errno.
 */
int hs__debug_cache_fill(const char *cache, const char *from, const unsigned char *id,
			 size_t idlen, char **out);

/* What a sweep keeps, by default: copies used in the last week (as
 * debuginfod's client keeps its downloads), at most 1 GiB of them. */
#define HS_DEBUG_CACHE_MAX_AGE (7LL * 24 * 3600)
#define HS_DEBUG_CACHE_MAX_SIZE (1ULL << 30)
struct hs__debug_cache_limits {
	long long max_age;	     /* seconds a copy stays unused; 0: no limit */
	unsigned long long max_size; /* bytes of copies kept; 0: no limit */
};
/* The defaults, or $HEAPSCOPE_DEBUG_CACHE_MAX_AGE (N[smhd], days without
 * a unit) and $HEAPSCOPE_DEBUG_CACHE_MAX_SIZE (N[KMG], bytes without). */
void hs__debug_cache_limits_from_env(struct hs__debug_cache_limits *l);

/* What a sweep did. */
struct hs__debug_cache_swept {
	unsigned removed;		  /* copies removed */
	unsigned long long removed_bytes; /* their bytes */
	unsigned long long kept_bytes;	  /* the bytes of the copies left */
};
/*
 * Sweep @cache as of @now if its last sweep is a day old (see the top of
 * debug_cache.c): the copies unused for longer than @l->max_age go, then
 * the least recently used ones while the copies take more than
 * @l->max_size; none used within the last day and an hour. Returns 1 when
 * it swept (*@out says what went), 0 when no sweep was due, another run
 * is sweeping or there is no cache, or a negative errno (the cache is
 * then not swept, or only in part). Costs one lstat() when not due.
 */
int hs__debug_cache_sweep(const char *cache, const struct hs__debug_cache_limits *l,
			  time_t now, struct hs__debug_cache_swept *out);
/* Testing aid: when set, a sweep calls it between renaming the copy
 * @name of the directory open at @dir_fd to @tmp and reading its mtime
 * again, where a symbolizer may come in. */
extern void (*hs__debug_cache_sweep_race)(int dir_fd, const char *name, const char *tmp);
#endif
