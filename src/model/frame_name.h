#ifndef HS_MODEL_FRAME_NAME_H
#define HS_MODEL_FRAME_NAME_H
#include <stddef.h>

/*
 * frame_name - the one reader of a frame's full name "module!function",
 * for every part of heapscope that needs the module or the function.
 *
 * The module ends at the first '!' that is
 * - outside brackets: '!' in template arguments or parameters
 *   ("f<(!B)>", "g(bool (*)(!x))") belongs to the function;
 * - not a C++ operator's: "X::operator!=", "operator!", "operator !"
 *   (spaces allowed after "operator") have no module;
 * - not the first character (an empty module is no module).
 * A name without such a '!' has no module and is all function. The
 * function is everything after the separator; a trailing " (inline)"
 * (an inlined copy, as the symbolizer names it) is counted apart.
 *
 * Ownership: nothing is allocated; the parts point into the name, which
 * the caller keeps. Names need not be NUL-terminated (@len bytes).
 */

struct hs_frame_name {
	const char *module; /* into the name; NULL when it has none */
	size_t module_len;
	const char *function; /* after the separator, or the whole name */
	size_t function_len;  /* without a trailing " (inline)" */
	int inlined;	      /* the name ends in " (inline)" */
};

/* The '!' that ends the module of @name (@len bytes), or NULL. */
const char *hs_frame_name_bang(const char *name, size_t len);

/* Split @name (@len bytes) into its parts (above). */
void hs_frame_name_split(const char *name, size_t len, struct hs_frame_name *out);

/*
 * The module as the viewer shows it: without its directories (after the
 * last '/' or '\\'); sets *@len. NULL when @name has no module.
 */
const char *hs_frame_name_short_module(const char *name, size_t len, size_t *mlen);

/* @len without a trailing " (inline)". */
size_t hs_frame_name_strip_inline(const char *s, size_t len);
#endif
