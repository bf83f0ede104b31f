/*
 * import_heapscope - a .heapscope trace as a stack source: one sample per
 * heap allocation, its bytes as the metric, stacks rooted in the process
 * and thread pseudo-frames (design.md "The stack source").
 */
#include "io/io.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* (thread, node) -> stack id, open addressing. */
struct memo {
	uint64_t *key;		/* thread << 32 | node, + 1 (0 = empty) */
	uint32_t *val;
	size_t n, cap;
};

static uint32_t *memo_slot(struct memo *m, uint64_t key)
{
	size_t mask = m->cap - 1, i;

	if (!m->cap)
		return NULL;
	i = hs_hash_u64(key) & mask;
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & mask;
	return m->key[i] ? &m->val[i] : NULL;
}

static int memo_put(struct memo *m, uint64_t key, uint32_t val)
{
	size_t i, mask;

	if (2 * (m->n + 1) > m->cap) {
		struct memo g = { .cap = m->cap ? 2 * m->cap : 4096 };
		size_t j;

		g.key = hs_calloc(g.cap, sizeof(uint64_t));
		g.val = hs_calloc(g.cap, sizeof(uint32_t));
		if (!g.key || !g.val) {
			hs_free(g.key);
			hs_free(g.val);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->key[j])
				continue;
			i = hs_hash_u64(m->key[j]) & (g.cap - 1);
			while (g.key[i])
				i = (i + 1) & (g.cap - 1);
			g.key[i] = m->key[j];
			g.val[i] = m->val[j];
		}
		g.n = m->n;
		hs_free(m->key);
		hs_free(m->val);
		*m = g;
	}
	mask = m->cap - 1;
	i = hs_hash_u64(key) & mask;
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & mask;
	if (!m->key[i])
		m->n++;
	m->key[i] = key;
	m->val[i] = val;
	return 0;
}

struct builder {
	const struct hs_trace *t;
	struct hs_stack_source *out;
	struct memo memo;
	uint32_t *node_frame;		/* node -> frame id, or HS_NO_FRAME */
	uint32_t *thread_stack;		/* thread -> its pseudo-frame stack */
	uint32_t broken_frame;
	uint32_t process_stack;
	uint32_t *path;			/* scratch: nodes leaf first */
};

static int intern_name(struct builder *b, const char *name, uint32_t *frame)
{
	return hs_source_intern_frame(b->out, name, strlen(name), frame);
}

static int node_frame(struct builder *b, uint32_t node, uint32_t *frame)
{
	char name[1200];
	int err;

	if (node == HS_TRACE_NONE) {
		*frame = b->broken_frame;
		return 0;
	}
	if (b->node_frame[node] != HS_NO_FRAME) {
		*frame = b->node_frame[node];
		return 0;
	}
	hs_trace_frame_name(b->t, node, name, sizeof(name));
	err = intern_name(b, name, frame);
	if (!err)
		b->node_frame[node] = *frame;
	return err;
}

static int thread_stack(struct builder *b, uint32_t th, uint32_t *stack)
{
	const struct hs_trace_thread *tt = &b->t->threads[th];
	char name[256];
	uint32_t frame;
	int err;

	if (b->thread_stack[th] != HS_NO_STACK) {
		*stack = b->thread_stack[th];
		return 0;
	}
	if (tt->name && tt->name[0])
		snprintf(name, sizeof(name), "Thread (%" PRIu64 ") %s", tt->tid, tt->name);
	else
		snprintf(name, sizeof(name), "Thread (%" PRIu64 ")", tt->tid);
	err = intern_name(b, name, &frame);
	if (!err)
		err = hs_source_intern_stack(b->out, frame, b->process_stack, stack);
	if (!err)
		b->thread_stack[th] = *stack;
	return err;
}

/* The stack-source stack of node @node in thread @th. */
static int stack_of(struct builder *b, uint32_t th, uint32_t node, uint32_t *stack)
{
	size_t n, i;
	uint32_t s, frame, *hit = NULL;
	int err;

	if (node == HS_TRACE_NONE)
		return thread_stack(b, th, stack);
	/* climb until a node already known in this thread, or the root */
	n = 0;
	for (;;) {
		hit = memo_slot(&b->memo, ((uint64_t)th << 32 | node) + 1);
		if (hit || n > HS_DEPTH_LIMIT + 1)
			break;
		b->path[n++] = node;
		node = b->t->node_parent[node];
		if (node == HS_TRACE_MISSING) {
			b->path[n++] = HS_TRACE_NONE;	/* BROKEN */
			break;
		}
		if (node == HS_TRACE_NONE)
			break;
	}
	if (hit) {
		s = *hit;
	} else {
		err = thread_stack(b, th, &s);
		if (err)
			return err;
	}
	for (i = n; i-- > 0;) {
		err = node_frame(b, b->path[i], &frame);
		if (!err)
			err = hs_source_intern_stack(b->out, frame, s, &s);
		if (!err && b->path[i] != HS_TRACE_NONE)
			err = memo_put(&b->memo, ((uint64_t)th << 32 | b->path[i]) + 1, s);
		if (err)
			return err;
	}
	*stack = s;
	return 0;
}

int hs_trace_to_source(const struct hs_trace *t, struct hs_stack_source *out,
		       struct hs_diag *diag)
{
	struct builder b;
	char name[256];
	uint32_t frame;
	size_t i;
	int err;

	memset(&b, 0, sizeof(b));
	b.t = t;
	b.out = out;
	b.node_frame = hs_malloc((t->nr_nodes + 1) * sizeof(uint32_t));
	b.thread_stack = hs_malloc((t->nr_threads + 1) * sizeof(uint32_t));
	b.path = hs_malloc((HS_DEPTH_LIMIT + 4) * sizeof(uint32_t));
	if (!b.node_frame || !b.thread_stack || !b.path) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->nr_nodes; i++)
		b.node_frame[i] = HS_NO_FRAME;
	for (i = 0; i < t->nr_threads; i++)
		b.thread_stack[i] = HS_NO_STACK;
	snprintf(name, sizeof(name), "Process %s (%" PRIu64 ")",
		 t->info.comm && t->info.comm[0] ? t->info.comm : "?", t->info.pid);
	err = intern_name(&b, name, &frame);
	if (!err)
		err = hs_source_intern_stack(out, frame, HS_NO_STACK, &b.process_stack);
	if (!err)
		err = intern_name(&b, "BROKEN", &b.broken_frame);
	if (err)
		goto out;
	out->kind = HS_METRIC_PLAIN;
	hs_free(out->metric_unit);
	out->metric_unit = hs_strdup("bytes");
	if (!out->metric_unit) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->nr_events; i++) {
		uint32_t stack;
		double w;

		if (t->op[i] != HS_OP_ALLOC)
			continue;
		err = stack_of(&b, t->thread[i], t->stack[i], &stack);
		if (err)
			goto out;
		w = hs_trace_weight(t, t->size[i]);
		err = hs_source_add_sample(out, t->time[i], (double)t->size[i] * w, w, stack);
		if (err)
			goto out;
	}
out:
	if (err == -ENOMEM)
		hs_diag_set(diag, 0, "out of memory");
	else if (err == -E2BIG)
		hs_diag_set(diag, 0, "too many frames or stacks");
	hs_free(b.memo.key);
	hs_free(b.memo.val);
	hs_free(b.node_frame);
	hs_free(b.thread_stack);
	hs_free(b.path);
	return err;
}

int hs_import_heapscope(const char *path, struct hs_stack_source *out,
			struct hs_diag *diag)
{
	struct hs_trace t;
	int err = hs_trace_load(path, &t, diag);

	if (err) {
		if (!diag->set)
			hs_diag_set(diag, 0, "%s", strerror(-err));
		return err;
	}
	err = hs_trace_to_source(&t, out, diag);
	hs_trace_release(&t);
	return err;
}
