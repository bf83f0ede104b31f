#ifndef HS_SERVER_CACHE_H
#define HS_SERVER_CACHE_H
#include "common/log.h"
#include <stddef.h>
#include <stdint.h>
#include "analysis/calltree.h"
#include "analysis/views.h"
#include "model/stack_source.h"

/*
 * cache - the server's recently used results, so that moving between tabs,
 * expanding a tree node or scrolling does not compute anything again:
 * derived sources (Drill Into, Flatten, diffs), call trees (a source and
 * its filter parameters) and full views (a call tree, a view kind and a
 * focus).
 *
 * Entries are found by their canonical key (params.h). Each kind keeps at
 * most max[kind] entries, and all of them together about max_bytes of
 * memory; beyond that the least recently used entry goes, together with
 * every entry that borrows from it (a view borrows its call tree, a call
 * tree its derived source). Entries used since the
 * last hs_cache_begin() are pinned: a request never loses what it holds.
 * Using an entry also counts as using what it borrows from.
 *
 * Ownership: the cache owns its entries and what they hold; pointers into
 * an entry are valid until the next hs_cache_begin(). Not thread-safe.
 */

enum hs_cache_kind { HS_CACHE_SOURCE, HS_CACHE_TREE, HS_CACHE_VIEW, HS_CACHE__KINDS };

struct hs_cache_entry {
	enum hs_cache_kind kind;
	char *key;		    /* owned */
	uint64_t used;		    /* clock of the last use */
	size_t bytes;		    /* about what it holds (set when added) */
	struct hs_cache_entry *dep; /* the entry this one borrows from, or NULL */
	union {
		struct {
			struct hs_stack_source src;
			double when[2]; /* the When range it carries (query.h) */
			int has_when;
		} source;
		struct hs_calltree tree;
		struct {
			struct hs_view v;
			uint32_t *child_off; /* nr_rows + 1 offsets into child */
			uint32_t *child;     /* row -> its children rows, in order */
		} view;
	} u;
};

struct hs_cache {
	struct hs_cache_entry **e;
	size_t nr, alloc;
	uint64_t clock, pin;
	size_t max[HS_CACHE__KINDS];
	size_t bytes, max_bytes;
	size_t hits, misses;
};

/* Default sizes: 8 sources, 8 call trees, 32 views, 1 GiB in all. */
void hs_cache_init(struct hs_cache *c);
void hs_cache_release(struct hs_cache *c);
/* A new request begins: what it uses from now on is pinned. */
void hs_cache_begin(struct hs_cache *c);
/* The entry of @kind with @key (marked used), or NULL. Borrowed. */
struct hs_cache_entry *hs_cache_get(struct hs_cache *c, enum hs_cache_kind kind,
				    const char *key);
/*
 * A new empty entry of @kind with a copy of @key, to fill and then hand
 * to hs_cache_add() (or hs_cache_entry_free()). NULL when out of memory.
 */
HS_MUST_CHECK struct hs_cache_entry *
hs_cache_entry_new(enum hs_cache_kind kind, const char *key, struct hs_cache_entry *dep);
/* Free @e and what it holds (its payload must be filled or zero). */
void hs_cache_entry_free(struct hs_cache_entry *e);
/*
 * Add @e (taken: on -ENOMEM it is freed), then drop old entries of its
 * kind over the limit. 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_cache_add(struct hs_cache *c, struct hs_cache_entry *e);
/* Index the children of a view entry's rows (after filling u.view.v). 0 or -ENOMEM. */
HS_MUST_CHECK int hs_cache_index_view(struct hs_cache_entry *e);
#endif
