#ifndef HS_ANALYSIS_VIEWS_H
#define HS_ANALYSIS_VIEWS_H
#include "common/log.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "analysis/calltree.h"
#include "common/buf.h"
#include "common/diag.h"

/*
 * views - the stack viewer's tabs as rows (perfview-semantics.md §5, §6,
 * §11): ByName, CallTree, Callers and Callees of a focus name,
 * Caller-Callee and the Flame Graph, with the When, First, Last and Fold
 * columns and the summary line; and their text, CSV and JSON forms (the
 * JSON is what the HTTP API returns too; docs/json-api.md).
 *
 * Every view is computed from a built hs_calltree (so after the filter and
 * Fold%) without another look at the samples, except for the When column,
 * which takes one pass over the samples for the rows a view shows.
 *
 * Rows of tree views are in depth-first order, children sorted by |Inc|
 * descending then First; each names its parent row. The Callers tree
 * grows upward from the focus: a row's children are its callers, ending
 * at ROOT. Caller-Callee rows are the callers (section CALLER), the focus
 * (FOCUS) and the callees (CALLEE), each list sorted by |Inc|.
 *
 * Ownership: a view owns its rows and the names of the Callers/Callees
 * trees; other row names are borrowed from the calltree, which must
 * outlive the view. Release with hs_view_release().
 */

enum hs_view_kind {
	HS_VIEW_BYNAME,
	HS_VIEW_CALLTREE,
	HS_VIEW_CALLERS,
	HS_VIEW_CALLEES,
	HS_VIEW_CALLER_CALLEE,
	HS_VIEW_FLAME,
	HS_VIEW__COUNT
};

/* "byname", "calltree", "callers", "callees", "caller-callee", "flame". */
const char *hs_view_kind_name(enum hs_view_kind kind);
/* 0 and *@kind, or -EINVAL for an unknown name. */
HS_MUST_CHECK int hs_view_kind_parse(const char *name, enum hs_view_kind *kind);
/* The view needs a focus name. */
int hs_view_kind_has_focus(enum hs_view_kind kind);
/*
 * The focus rule, for every front end (as in PerfView, only the callers,
 * callees and caller-callee views have a focus): a focus (@focus, NULL:
 * none given) with another view is an error, and so is none with one of
 * these when @need. @what is how the front end names the focus
 * ("--focus", "focus"). Returns 0, or -EINVAL with @diag saying what is
 * wrong.
 */
HS_MUST_CHECK int hs_view_focus_check(enum hs_view_kind kind, const char *focus, int need,
				      const char *what, struct hs_diag *diag);
/* The view's rows form a tree. */
int hs_view_kind_is_tree(enum hs_view_kind kind);

enum hs_row_section {
	HS_ROW_PLAIN, /* ByName and tree rows */
	HS_ROW_CALLER,
	HS_ROW_FOCUS,
	HS_ROW_CALLEE,
};

struct hs_view_row {
	const char *name;     /* full name; borrowed (see above) */
	uint32_t parent;      /* parent row (tree views) or HS_NO_NODE */
	uint32_t depth;	      /* 0 at a tree's root and for flat rows */
	uint32_t nr_children; /* children in the tree, shown or not */
	enum hs_row_section section;
	double exc, exc_count, inc, inc_count, fold, fold_count;
	int64_t first, last; /* ns; first > last when the row has no sample */
	double x, width;     /* Flame Graph rectangle, fractions of the total */
	char when[HS_WHEN_BUCKETS + 1];
	/* what the name stands for (filter.h hs_filtered_origin()) */
	uint8_t origin;	    /* enum hs_origin_kind */
	uint32_t entry_at;  /* HS_ORIGIN_ENTRY: where the entry frame starts */
	const char *module; /* short module, borrowed like @name; or NULL */
};

struct hs_view_summary {
	double metric, count;	    /* ROOT inclusive */
	size_t samples;		    /* samples that passed the filter */
	int64_t first, last;	    /* ns; ROOT's First and Last (0, 0 when empty) */
	double bucket_ms;	    /* TimeBucket: the width of a When character */
	double metric_per_interval; /* metric / (Last - First) in ms; 0 if none */
	double start_ms, end_ms;    /* the When histogram's range */
	int time_metric;	    /* TimeMetric scaling */
	const char *unit;	    /* borrowed metric unit, or NULL */
	double fold_pct;	    /* Fold% applied, NAN for none */
};

struct hs_view_opts {
	enum hs_view_kind kind;
	const char *focus;  /* the focus name (callers, callees, caller-callee) */
	size_t limit;	    /* at most this many rows (per list); 0 = all */
	unsigned max_depth; /* tree rows deeper than this are left out; 0 = all */
	int no_when;	    /* leave the When column empty (saves a pass) */
};

struct hs_view {
	enum hs_view_kind kind;
	char *focus; /* owned copy, or NULL */
	struct hs_view_summary sum;
	double basis; /* percent basis: |ROOT inclusive| */
	struct hs_view_row *rows;
	size_t nr_rows;
	size_t nr_total;	      /* rows the view had before --limit / --depth */
	struct hs_stack_source names; /* names of Callers/Callees tree rows */
};

/* @x as a percentage of @v's basis; 0 when the basis is 0 */
double hs_view_pct(const struct hs_view *v, double x);

/*
 * Compute view @o->kind of @ct into @v. Returns 0; -ENOENT when the focus
 * name is not a node of the tree (or is missing); -ENOMEM. On error @v is
 * left released.
 */
HS_MUST_CHECK int hs_view_build(struct hs_view *v, const struct hs_calltree *ct,
				const struct hs_view_opts *o);
void hs_view_release(struct hs_view *v);

/*
 * The samples of a Callers (@kind HS_VIEW_CALLERS) or Callees
 * (HS_VIEW_CALLEES) tree node: that tree of the focus @path[0] is built as
 * hs_view_build() builds it, and its node reached from the root through
 * the names @path[1..n) is the one meant. @pick (ct->t.nr bytes, zeroed
 * by the caller) gets 1 for each node of @ct whose samples count in that
 * node's Inc (its When histogram), so hs_drill_pick() gives exactly them.
 * Returns 0; -ENOENT (no such focus or node; @diag says which); -EINVAL
 * for another @kind; -ENOMEM.
 */
HS_MUST_CHECK int hs_view_focus_pick(const struct hs_calltree *ct, enum hs_view_kind kind,
				     const char *const *path, size_t n, uint8_t *pick,
				     struct hs_diag *diag);

/*
 * The node of @t behind each row of its full CallTree view (no limit, no
 * depth: the rows hs_view_build() makes, depth first over the alive
 * children), into @node_of_row, which has room for @nr rows (the view's
 * nr_total); the rows past @nr are left out. Returns 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_view_tree_nodes(const struct hs_tree *t, uint32_t *node_of_row,
				     size_t nr);

/*
 * What row @r's name stands for, for front ends that need its module
 * (Group Module, Ungroup Module): @group is NULL for a frame, "plain" or
 * "entry" for a group; @module the short module (NULL: none, or a plain
 * group of frames of several modules); @function the function of a frame
 * (or of an entry group's entry frame) without its module and a trailing
 * " (inline)", NULL for a plain group; @entry an entry group's entry
 * frame (NULL otherwise). Pointers borrow from the row; @function and
 * @entry are not NUL-terminated (their lengths are given).
 */
struct hs_row_parts {
	const char *group;
	const char *module;
	const char *function, *entry;
	size_t function_len, entry_len;
};
void hs_view_row_parts(const struct hs_view_row *r, struct hs_row_parts *p);

/* The summary line alone. */
void hs_view_summary_fill(struct hs_view_summary *s, const struct hs_calltree *ct);

/*
 * A name as displayed: without a trailing annotation " {...}" (a brace
 * group after a space that ends the name), which is what PerfView's rule
 * of cutting names at their first '{' is for. Braces that are part of a
 * name stay: C++ lambdas ("main::{lambda(int)#1}::operator()(int) const"),
 * Rust closures ("f::{closure#0}", "f::{{closure}}"), a name that starts
 * with one. Returns the number of bytes of @name to show.
 */
size_t hs_view_display_len(const char *name);

/*
 * Where the bracketed group that ends at @s[@end - 1] opens: the index of
 * its @open character, nested pairs of @open and @close counted; @end when
 * it never opens.
 */
size_t hs_view_group_start(const char *s, size_t end, char open, char close);

/*
 * Output. Text: the summary line, then aligned columns (Name, Exc %, Exc,
 * Exc Ct, Inc %, Inc, Inc Ct, Fold, When, First, Last), tree names
 * indented by depth, two spaces a level up to HS_VIEW_TEXT_MAX_INDENT
 * levels, deeper rows with their depth in brackets ("[1234] name"); the
 * Name column is at most HS_VIEW_TEXT_MAX_NAME_WIDTH wide (a longer name
 * pushes the rest of its line right); rows are written as they are
 * formatted, in memory that does not grow with them. In text, CSV and
 * folded output, control characters in names (and in the focus and the
 * unit) are escaped as common/escape.h says. Flame Graph text is folded stacks ("a;b;c
 * 12", root first). CSV: a header then one row per line (trees: a Depth column;
 * Caller-Callee: a Section column; Flame Graph: rectangles). Each returns
 * 0 or -EIO when writing failed. @f is borrowed.
 */
HS_MUST_CHECK int hs_view_write_text(const struct hs_view *v, FILE *f);
#define HS_VIEW_TEXT_MAX_INDENT 50
#define HS_VIEW_TEXT_MAX_NAME_WIDTH 200
/*
 * How text output fits names: @short_templates writes each template's
 * arguments as "<…>" ("std::vector<…>::push_back(…)" keeps its function
 * parameters); @width > 0 cuts names as printed (indented, escaped),
 * ending them in "…", so that a line fits in
 * @width columns (names keep at least 16).
 */
struct hs_text_opts {
	int short_templates;
	size_t width;
};
HS_MUST_CHECK int hs_view_write_text_opts(const struct hs_view *v,
					  const struct hs_text_opts *o, FILE *f);
/* @name (@len bytes) with its template arguments as "<…>", into @b. */
HS_MUST_CHECK int hs_view_short_templates(struct hs_buf *b, const char *name, size_t len);
HS_MUST_CHECK int hs_view_write_csv(const struct hs_view *v, FILE *f);
/* Folded stacks of the call tree: one line per node with exclusive cost. */
HS_MUST_CHECK int hs_view_write_folded(const struct hs_view *v, FILE *f);

/*
 * JSON (docs/json-api.md). hs_view_write_json() writes the document to
 * @f, indented, with a trailing newline; hs_view_json_dump() returns it
 * as a new string (free with hs_free(); NULL when out of memory), its
 * length in *@len, with jansson dump flags @flags. Neither recurses
 * through a tree nor holds more than one row's object, and indentation
 * stops growing at HS_VIEW_JSON_MAX_INDENT levels of nesting, so a tree
 * of any depth costs time and memory linear in its rows. Return 0, -EIO
 * or -ENOMEM. hs_view_json() parses that document back into a new
 * jansson object (the caller owns one reference): NULL when out of
 * memory, or when the tree is deeper than jansson's parser allows (about
 * 1,000 rows deep), so it is for small views and tests.
 */
struct json_t;
HS_MUST_CHECK int hs_view_write_json(const struct hs_view *v, FILE *f);
HS_MUST_CHECK char *hs_view_json_dump(const struct hs_view *v, size_t flags, size_t *len);
HS_MUST_CHECK struct json_t *hs_view_json(const struct hs_view *v);
/* The jansson dump flags of hs_view_write_json(). */
#define HS_VIEW_JSON_FLAGS                                                               \
	(JSON_INDENT(2) | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
/* Levels of nesting past which lines are indented no further. */
#define HS_VIEW_JSON_MAX_INDENT 32
/*
 * Row @i as in hs_view_json() but without "children" (tree rows keep
 * "depth" and "nr_children"); the summary object. New references, or
 * NULL when out of memory (or @i out of range).
 */
HS_MUST_CHECK struct json_t *hs_view_row_json(const struct hs_view *v, size_t i);
HS_MUST_CHECK struct json_t *hs_view_summary_json(const struct hs_view *v);
/*
 * A JSON string of @s (borrowed; names from files and programs need not
 * be UTF-8: bytes outside valid sequences become U+FFFD, as in every JSON
 * this module writes); json null for NULL. A new reference, or NULL when
 * out of memory.
 */
struct json_t *hs_view_json_text(const char *s);
#endif
