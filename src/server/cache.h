#ifndef HS_SERVER_CACHE_H
#define HS_SERVER_CACHE_H
#include "common/log.h"
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "analysis/calltree.h"
#include "analysis/view_part.h"
#include "analysis/views.h"
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * cache - the server's recently used results, so that moving between tabs,
 * expanding a tree node, scrolling or redrawing the timeline does not
 * compute anything again: derived sources (Drill Into, Flatten, diffs,
 * ranged memory views), filter results (a source and its patterns: what
 * the call trees of every Fold% and time window with those patterns
 * share, calltree.h's hs_calltree_build_on()), call trees (a source and
 * its filter parameters),
 * full views (a call tree, a view kind and a focus), the ByName and
 * CallTree views whose rows are made per answer (view_part.h: what
 * /api/tree and /api/rows read) and answer texts (a timeline, a heap
 * trace's heap and RSS curves).
 *
 * Entries are found by their canonical key (params.h). Each kind keeps at
 * most max[kind] entries, and all of them together about max_bytes of
 * memory less what is held beside the cache (@outside: the sources the
 * app loads in place) and less @working (what a request builds that is
 * not kept: its temporaries, its answer's text), but never less than
 * @min_bytes; beyond that the least recently used entry goes, together with
 * every entry that borrows from it (a view borrows its call tree, a call
 * tree its filter result, a filter result its derived source).
 *
 * Threads. The server answers several requests at once (server.h), so
 * the cache is shared: @lock covers the entry list, every entry's @refs,
 * @state, @used and the counters; an entry's payload is written only by
 * the request that claimed it, before hs_cache_publish(), and is read-only
 * afterwards, so readers holding a reference need no lock.
 *   - A request holds what it uses in a struct hs_cache_hold: every entry
 *     it got (hs_cache_get(), hs_cache_claim(), hs_cache_add()) keeps a
 *     reference, and so does everything that entry borrows from, until
 *     hs_cache_hold_release(). An entry with references is never dropped.
 *   - Each result is built once: hs_cache_claim() either finds the entry
 *     (waiting while another request builds it) or inserts a BUILDING
 *     placeholder that its caller fills without the lock and publishes.
 *     A build fails for everyone who waited on it, with its message.
 *   - A builder only ever waits for entries that its own entry borrows
 *     from (a view for its tree, a tree for its source, a diff for its two
 *     sides), so waits cannot form a cycle.
 *
 * Ownership: the cache owns its entries and what they hold; pointers into
 * an entry are valid while a hold references it.
 */

enum hs_cache_kind {
	HS_CACHE_SOURCE,
	HS_CACHE_FILTER,
	HS_CACHE_TREE,
	HS_CACHE_VIEW,
	HS_CACHE_PARTS,
	HS_CACHE_TEXT,
	HS_CACHE__KINDS
};

enum hs_cache_state { HS_CACHE_READY, HS_CACHE_BUILDING, HS_CACHE_FAILED };

struct hs_cache_entry {
	enum hs_cache_kind kind;
	char *key;		    /* owned */
	uint64_t used;		    /* clock of the last use */
	size_t bytes;		    /* about what it holds (set when published) */
	struct hs_cache_entry *dep; /* the entry this one borrows from, or NULL */
	/* under the cache's lock: */
	unsigned refs; /* holds that reference it or a dependent */
	enum hs_cache_state state;
	int listed; /* in the cache's list (else freed at refs 0) */
	int err;    /* HS_CACHE_FAILED: the build's error */
	char *msg;  /* and its message (owned), or NULL */
	union {
		struct {
			struct hs_stack_source src;
			double when[2]; /* the When range it carries (query.h) */
			int has_when;
		} source;
		struct hs_filtered filter; /* hs_calltree_filter()'s */
		struct hs_calltree tree;
		struct {
			struct hs_view v;
			uint32_t *child_off; /* nr_rows + 1 offsets into child */
			uint32_t *child;     /* row -> its children rows, in order */
		} view;
		struct hs_view_parts parts;
		struct {
			char *s; /* hs_malloc()ed text, NUL-terminated */
			size_t len;
		} text;
	} u;
};

struct hs_cache {
	pthread_mutex_t lock;
	pthread_cond_t built; /* an entry left HS_CACHE_BUILDING */
	struct hs_cache_entry **e;
	size_t nr, alloc;
	uint64_t clock;
	size_t max[HS_CACHE__KINDS];
	size_t bytes, max_bytes;
	size_t outside;	  /* held beside the entries (hs_cache_count_outside()) */
	size_t working;	  /* left for a request's temporaries */
	size_t min_bytes; /* what the entries may keep whatever @outside */
	size_t hits, misses;
};

/* The entries one request uses (each referenced once). */
struct hs_cache_hold {
	struct hs_cache_entry **e;
	size_t nr, alloc;
};
#define HS_CACHE_HOLD_INIT                                                               \
	{                                                                                \
		0                                                                        \
	}

/*
 * Default sizes: 8 sources, 8 filter results, 8 call trees, 32 views,
 * 32 views in parts, 32 texts; 1.375 GiB for the entries, the sources
 * loaded in place and 128 MiB of a request's temporaries together (issue
 * 17's 2M-sample profile then stays under 1.5 GB, its entries keeping
 * about 1 GiB), the entries keeping at least 256 MiB.
 */
void hs_cache_init(struct hs_cache *c);
/*
 * Count @bytes more held beside the cache (a source loaded in place)
 * against its memory budget; the entries over it go now.
 */
void hs_cache_count_outside(struct hs_cache *c, size_t bytes);
/* Free every entry; no hold may reference any. */
void hs_cache_release(struct hs_cache *c);
/* Drop @h's references; @h is reusable. */
void hs_cache_hold_release(struct hs_cache *c, struct hs_cache_hold *h);
/*
 * The ready entry of @kind with @key, referenced in @h (marked used), or
 * NULL (none, still being built, failed, or no memory to hold it).
 */
struct hs_cache_entry *hs_cache_get(struct hs_cache *c, struct hs_cache_hold *h,
				    enum hs_cache_kind kind, const char *key);
/*
 * Find or start the entry of @kind with @key, borrowing from @dep (held
 * by @h, or NULL). Returns 0 with the ready entry in *@out; 1 with a new
 * HS_CACHE_BUILDING entry that the caller fills and hands to
 * hs_cache_publish(); or a negative errno: -ENOMEM, or the error of
 * another request's failed build of it (its message in @d). Waits while
 * another request builds it. *@out is referenced in @h.
 */
HS_MUST_CHECK int hs_cache_claim(struct hs_cache *c, struct hs_cache_hold *h,
				 enum hs_cache_kind kind, const char *key,
				 struct hs_cache_entry *dep, struct hs_cache_entry **out,
				 struct hs_diag *d);
/*
 * End the build of @e (claimed): @err 0 makes it ready (and old entries
 * over the limits go), otherwise it leaves the cache and the requests
 * waiting for it get @err and @d's message. @e stays referenced by the
 * claimer's hold.
 */
void hs_cache_publish(struct hs_cache *c, struct hs_cache_entry *e, int err,
		      const struct hs_diag *d);
/*
 * Before building an entry of @kind that will take about @bytes: drop the
 * least recently used entries nobody holds until that much more fits the
 * memory budget (or none is left to drop), so that what an earlier
 * request left behind goes before the build, not after it.
 */
void hs_cache_make_room(struct hs_cache *c, enum hs_cache_kind kind, size_t bytes);
/*
 * About what a filter result of @in, a view of @ct of @kind, or its parts
 * (view_part.h), will take. (A call tree says what it will take itself,
 * before it allocates: hs_calltree_build_on_room().)
 */
size_t hs_cache_filter_estimate(const struct hs_stack_source *in);
size_t hs_cache_view_estimate(const struct hs_calltree *ct, enum hs_view_kind kind);
size_t hs_cache_parts_estimate(const struct hs_calltree *ct, enum hs_view_kind kind);
/*
 * A new empty entry of @kind with a copy of @key, to fill and then hand
 * to hs_cache_add() (or hs_cache_entry_free()). NULL when out of memory.
 */
HS_MUST_CHECK struct hs_cache_entry *
hs_cache_entry_new(enum hs_cache_kind kind, const char *key, struct hs_cache_entry *dep);
/* Free @e and what it holds (its payload must be filled or zero). */
void hs_cache_entry_free(struct hs_cache_entry *e);
/*
 * Add the filled entry @e (taken: on -ENOMEM it is freed; @e's dep must be
 * held by @h) as ready, referenced in @h, then drop old entries over the
 * limits. 0 or -ENOMEM. No entry of that key may be listed: requests that
 * may race for a key use hs_cache_claim().
 */
HS_MUST_CHECK int hs_cache_add(struct hs_cache *c, struct hs_cache_hold *h,
			       struct hs_cache_entry *e);
/* Counters for /api/stats, read under the lock. */
void hs_cache_counts(struct hs_cache *c, size_t *entries, size_t *hits, size_t *misses);
/* Index the children of a view entry's rows (after filling u.view.v). 0 or -ENOMEM. */
HS_MUST_CHECK int hs_cache_index_view(struct hs_cache_entry *e);
#endif
