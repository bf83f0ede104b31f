#ifndef HS_ANALYSIS_MEMVIEWS_INTERNAL_H
#define HS_ANALYSIS_MEMVIEWS_INTERNAL_H
/*
 * memviews_internal - what the memory views' files share: the key table
 * and the stack builder (memviews_stacks.c), used by the views' event
 * passes (memviews.c). Not for use outside src/analysis/memviews*.c.
 */
#include "analysis/memviews.h"
#include "analysis/pattern.h"
#include "common/buf.h"
#include "common/idindex.h"
#include "common/log.h"
#include "common/strtab.h"
#include "common/u64map.h"
#include <stddef.h>
#include <stdint.h>

/*
 * Stack keys: what decides an event's stack (thread, node, allocation
 * function, category: size class << 1 | large), numbered as met. Samples
 * carry keys while the events are read (a streamed trace's nodes are not
 * all known yet); the keys become stacks at the end.
 */
struct keytab {
	uint64_t *node; /* node index, HS_TRACE_NONE, or id | HS_TRACE_EV_NODE_ID */
	uint32_t *thread;
	uint16_t *tagcat; /* tag << 8 | category */
	size_t *last;	  /* key -> its latest sample, or SIZE_MAX */
	size_t n, alloc;
	struct hs_idindex index; /* of the keys above */
	size_t c_key;		 /* the last key looked up (n: none) */
};

#define NO_CHAIN UINT32_MAX

struct builder {
	const struct hs_trace *t;
	const struct hs_memview_opts *o;
	struct hs_stack_source *out;
	struct hs_buf name;
	/* node -> its frames (outermost first) in chain_frame/chain_loc */
	uint32_t *node_first; /* NO_CHAIN: not computed yet */
	uint8_t *node_len;
	uint32_t *chain_frame, *chain_loc;
	size_t nr_chain, alloc_chain;
	struct hs_u64map roots; /* thread << 9 | exit << 8 | category -> root number */
	uint32_t *root_stack;	/* root number -> its stack */
	size_t nr_roots, alloc_roots;
	struct hs_u64map base;	/* root << 32 | node -> stack */
	struct hs_u64map leaf;	/* stack << 8 | tag -> stack */
	uint32_t *thread_stack; /* thread -> its pseudo-frame stack */
	uint32_t process_stack, broken_frame;
	uint32_t fn_frame[256]; /* tag -> allocation function frame */
	uint32_t large_frame;
	uint32_t class_frame[65];
	const char *libc; /* the C library's path, or NULL */
	uint32_t *path;	  /* scratch: nodes leaf first */
	/* leaks: which allocations are known exit-time ones */
	struct hs_patlist alloc_pats, exit_pats;
	uint8_t *frame_kind; /* frame -> FK_* bits (0: not looked at) */
	uint32_t *frame_mod; /* frame -> its module's length, when FK_SEEN */
	size_t alloc_kind;
	/* node -> is its allocation an exit-time one: 0 not known, 1 no, 2 yes */
	uint8_t *node_exit;
	/*
	 * node -> the answer of a walk that came to it from below with its
	 * module known: frame << 1 | answer, the frame one of that module
	 * (HS_NO_FRAME: none yet)
	 */
	uint32_t *node_cont;
	uint32_t exit_frame; /* HS_EXIT_TIME_FRAME */
	/*
	 * "module!function" of every out-of-line frame of the symbol
	 * section: an inlined copy of one of these is named as it is, not
	 * "... (inline)", unless o->split_inline
	 */
	struct hs_strtab outofline;
};

enum { FK_SEEN = 1, FK_ALLOCATOR = 2, FK_EXIT = 4 };

/* A new key for (@node, @thread, @tagcat), or its existing one. */
int key_find(struct keytab *k, uint64_t node, uint32_t thread, unsigned tagcat,
	     uint32_t *key);
void keytab_release(struct keytab *k);
/* The CPU and wall views: samples rather than heap events */
static inline int is_sample_view(enum hs_memview_kind kind)
{
	return kind == HS_MEM_CPU || kind == HS_MEM_WALL;
}
/* The stack of key @k (see memviews_stacks.c). 0 or a negative errno. */
int key_stack(struct builder *b, const struct keytab *keys, size_t k, uint32_t *stack);
int builder_init(struct builder *b, const struct hs_trace *t,
		 const struct hs_memview_opts *o, struct hs_stack_source *out);
void builder_release(struct builder *b);
/*
 * The heap views' default FoldPats for trace @t into *@fold (a new
 * string, the caller frees it): the heap preset and the trace's
 * allocation wrappers (see memviews_stacks.c). 0 or -ENOMEM.
 */
HS_MUST_CHECK int heap_fold(const struct hs_trace *t, const struct hs_memview_opts *o,
			    char **fold);

/* The key of (@node, @thread, @tagcat), a new one when it has none. */
static inline int key_of(struct keytab *k, uint64_t node, uint32_t thread,
			 unsigned tagcat, uint32_t *key)
{
	size_t c = k->c_key;

	if (c < k->n && k->node[c] == node && k->thread[c] == thread &&
	    k->tagcat[c] == tagcat) {
		*key = (uint32_t)c;
		return 0;
	}
	return key_find(k, node, thread, tagcat, key);
}
#endif
