#ifndef HS_SYMBOLS_SYMBOLS_INTERNAL_H
#define HS_SYMBOLS_SYMBOLS_INTERNAL_H
#include "symbols/symbols.h"

/*
 * symbols_internal - what the files of src/symbols share and nothing
 * else uses.
 *
 * The range index behind struct hs_sym_modmap also holds perf-map
 * entries; @item is borrowed and returned as is.
 */
int hs__ranges_add(struct hs_sym_modmap *m, const void *item, uint64_t start,
		   uint64_t end);
const void *hs__ranges_find(struct hs_sym_modmap *m, uint64_t addr);

/* One perf-map entry: run-time [start, end) named by @frame. */
struct hs__jit_sym {
	uint64_t start, end;
	const char *module;		/* the map's path, interned */
	struct hs_sym_frame frame;	/* strings interned */
};

/*
 * Intern @len bytes at @str in @s's string table. Returns the symbolizer's
 * copy (valid until hs_symbolizer_free()) or NULL when out of memory.
 */
const char *hs__sym_intern(struct hs_symbolizer *s, const char *str, size_t len);
/* Intern @raw demangled (unless HS_SYM_NO_DEMANGLE); NULL on -ENOMEM. */
const char *hs__sym_function_name(struct hs_symbolizer *s, const char *raw);
/*
 * Add @nr entries of @jit (taken: freed by the symbolizer, also on
 * failure) to the JIT ranges. Returns 0 or -ENOMEM (then none is added).
 */
int hs__sym_add_jit(struct hs_symbolizer *s, struct hs__jit_sym *jit, size_t nr);
#endif
