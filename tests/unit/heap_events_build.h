/*
 * heap_events_build - payloads of the runtime's heap-dump events built
 * byte by byte, for test_clr_heap_events and test_heap_snapshot.
 */
#ifndef HS_TEST_HEAP_EVENTS_BUILD_H
#define HS_TEST_HEAP_EVENTS_BUILD_H
#include <string.h>
#include "dotnet/nettrace.h"

struct payload {
	unsigned char b[4096];
	size_t n;
	struct hs_nettrace_meta meta;
	struct hs_nettrace_event ev;
};

static inline void pl_put(struct payload *p, uint64_t v, unsigned bytes)
{
	unsigned i;

	assert_true(p->n + bytes <= sizeof(p->b));
	for (i = 0; i < bytes; i++)
		p->b[p->n++] = (unsigned char)(v >> (8 * i));
}

/* An ASCII string as NUL-terminated UTF-16LE. */
static inline void pl_utf16(struct payload *p, const char *s)
{
	do
		pl_put(p, (unsigned char)*s, 2);
	while (*s++);
}

static inline void pl_start(struct payload *p, uint32_t event_id)
{
	memset(p, 0, sizeof(*p));
	p->meta.provider = (char *)"Microsoft-Windows-DotNETRuntime";
	p->meta.event_id = event_id;
	p->meta.event_name = (char *)"";
}

/* Index, count, CLR instance id: the header of nodes, edges, roots. */
static inline void pl_indexed(struct payload *p, uint32_t event_id, uint32_t index, uint32_t count)
{
	pl_start(p, event_id);
	pl_put(p, index, 4);
	pl_put(p, count, 4);
	pl_put(p, 7, 2);
}

static inline const struct hs_nettrace_event *pl_event(struct payload *p)
{
	p->ev.meta = &p->meta;
	p->ev.payload = p->b;
	p->ev.payload_size = (uint32_t)p->n;
	return &p->ev;
}

static inline void pl_node(struct payload *p, uint64_t address, uint64_t size, uint64_t type,
		    uint64_t edges)
{
	pl_put(p, address, 8);
	pl_put(p, size, 8);
	pl_put(p, type, 8);
	pl_put(p, edges, 8);
}

static inline void pl_edge(struct payload *p, uint64_t target)
{
	pl_put(p, target, 8);
	pl_put(p, 0, 4);	/* field id */
}

static inline void pl_root(struct payload *p, uint64_t address, uint8_t kind, uint32_t flags)
{
	pl_put(p, address, 8);
	pl_put(p, kind, 1);
	pl_put(p, flags, 4);
	pl_put(p, 0x77, 8);	/* root id */
}

static inline void pl_type(struct payload *p, uint64_t id, uint8_t element, const char *name,
		    uint32_t nr_params, const uint64_t *params)
{
	uint32_t i;

	pl_put(p, id, 8);
	pl_put(p, 0xabc, 8);	/* module */
	pl_put(p, 0, 4);	/* name id */
	pl_put(p, 0, 4);	/* flags */
	pl_put(p, element, 1);
	pl_utf16(p, name);
	pl_put(p, nr_params, 4);
	for (i = 0; i < nr_params; i++)
		pl_put(p, params[i], 8);
}

static inline void pl_static(struct payload *p, uint64_t object, uint64_t type, const char *field)
{
	pl_put(p, 0x55, 8);	/* root id */
	pl_put(p, object, 8);
	pl_put(p, type, 8);
	pl_put(p, 0, 4);
	pl_utf16(p, field);
}

/* GCStart version 1 (count, depth, reason, type, CLR id). */
static inline const struct hs_nettrace_event *pl_gc_start(struct payload *p, uint32_t count,
						   uint32_t depth, uint32_t type)
{
	pl_start(p, 1);
	p->meta.version = 1;
	pl_put(p, count, 4);
	pl_put(p, depth, 4);
	pl_put(p, 1, 4);	/* induced */
	pl_put(p, type, 4);
	pl_put(p, 7, 2);
	return pl_event(p);
}

static inline const struct hs_nettrace_event *pl_gc_end(struct payload *p, uint32_t count,
						 uint32_t depth)
{
	pl_start(p, 2);
	p->meta.version = 1;
	pl_put(p, count, 4);
	pl_put(p, depth, 4);
	pl_put(p, 7, 2);
	return pl_event(p);
}
#endif
