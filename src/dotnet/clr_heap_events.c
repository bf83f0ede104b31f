/*
 * clr_heap_events - decoders of the heap-dump events (clr_heap_events.h).
 * The batch owns nothing; a value's strings are the caller's.
 */
#include "dotnet/clr_heap_events.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

static uint64_t take(struct hs_clr_bulk *b, unsigned bytes, int *bad)
{
	uint64_t v = 0;
	unsigned i;

	if (*bad || (size_t)(b->end - b->next) < bytes) {
		*bad = 1;
		return 0;
	}
	for (i = 0; i < bytes; i++)
		v |= (uint64_t)b->next[i] << (8 * i);
	b->next += bytes;
	return v;
}

/* The bytes of one fixed-size value, for the count check. */
static size_t value_size(uint32_t id, unsigned ptr)
{
	switch (id) {
	case HS_CLR_GC_BULK_NODE:
		return ptr + 24;
	case HS_CLR_GC_BULK_EDGE:
		return ptr + 4;
	case HS_CLR_GC_BULK_ROOT_EDGE:
		return 2 * ptr + 5;
	case HS_CLR_GC_BULK_ROOT_CWT_EDGE:
		return 3 * (size_t)ptr;
	default:
		return 0; /* variable: a string in each */
	}
}

int hs_clr_bulk_begin(const struct hs_nettrace_event *ev, unsigned pointer_size,
		      struct hs_clr_bulk *b)
{
	uint32_t id = ev->meta->event_id;
	size_t size;
	int bad = 0;

	memset(b, 0, sizeof(*b));
	if (strcmp(ev->meta->provider, "Microsoft-Windows-DotNETRuntime") ||
	    (id != HS_CLR_GC_BULK_NODE && id != HS_CLR_GC_BULK_EDGE &&
	     id != HS_CLR_GC_BULK_ROOT_CWT_EDGE && id != HS_CLR_GC_BULK_ROOT_EDGE &&
	     id != HS_CLR_GC_BULK_TYPE && id != HS_CLR_GC_BULK_ROOT_STATIC_VAR))
		return -ENOENT;
	if (pointer_size != 4 && pointer_size != 8)
		return -EINVAL;
	b->event_id = id;
	b->pointer_size = pointer_size;
	b->next = ev->payload;
	b->end = ev->payload + ev->payload_size;
	if (id == HS_CLR_GC_BULK_TYPE) {
		b->count = (uint32_t)take(b, 4, &bad);
	} else if (id == HS_CLR_GC_BULK_ROOT_STATIC_VAR) {
		b->count = (uint32_t)take(b, 4, &bad);
		b->app_domain = take(b, 8, &bad);
	} else {
		b->index = (uint32_t)take(b, 4, &bad);
		b->count = (uint32_t)take(b, 4, &bad);
	}
	take(b, 2, &bad); /* CLR instance id */
	if (bad)
		return -EINVAL;
	size = value_size(id, pointer_size);
	if (size && (uint64_t)b->count * size > (uint64_t)(b->end - b->next))
		return -EINVAL;
	return 0;
}

static int want(const struct hs_clr_bulk *b, uint32_t id)
{
	return b->event_id == id ? 0 : -ENOENT;
}

int hs_clr_bulk_node(struct hs_clr_bulk *b, struct hs_clr_heap_node *out)
{
	int bad = 0, err = want(b, HS_CLR_GC_BULK_NODE);

	if (err)
		return err;
	out->address = take(b, b->pointer_size, &bad);
	out->size = take(b, 8, &bad);
	out->type_id = take(b, 8, &bad);
	out->nr_edges = take(b, 8, &bad);
	return bad ? -EINVAL : 0;
}

int hs_clr_bulk_edge(struct hs_clr_bulk *b, struct hs_clr_heap_edge *out)
{
	int bad = 0, err = want(b, HS_CLR_GC_BULK_EDGE);

	if (err)
		return err;
	out->target = take(b, b->pointer_size, &bad);
	out->field_id = (uint32_t)take(b, 4, &bad);
	return bad ? -EINVAL : 0;
}

int hs_clr_bulk_root(struct hs_clr_bulk *b, struct hs_clr_heap_root *out)
{
	int bad = 0, err = want(b, HS_CLR_GC_BULK_ROOT_EDGE);

	if (err)
		return err;
	out->address = take(b, b->pointer_size, &bad);
	out->kind = (uint32_t)take(b, 1, &bad);
	out->flags = (uint32_t)take(b, 4, &bad);
	out->root_id = take(b, b->pointer_size, &bad);
	return bad ? -EINVAL : 0;
}

int hs_clr_bulk_cwt(struct hs_clr_bulk *b, struct hs_clr_heap_cwt *out)
{
	int bad = 0, err = want(b, HS_CLR_GC_BULK_ROOT_CWT_EDGE);

	if (err)
		return err;
	out->key = take(b, b->pointer_size, &bad);
	out->value = take(b, b->pointer_size, &bad);
	out->root_id = take(b, b->pointer_size, &bad);
	return bad ? -EINVAL : 0;
}

/* A UTF-16 string into *@out: 0, -EINVAL, -ENOMEM. */
static int take_string(struct hs_clr_bulk *b, char **out)
{
	const unsigned char *p = b->next;
	int err = hs_nettrace_utf16(&p, b->end, out);

	if (!err)
		b->next = p;
	return err;
}

int hs_clr_bulk_static(struct hs_clr_bulk *b, struct hs_clr_heap_static *out)
{
	int bad = 0, err = want(b, HS_CLR_GC_BULK_ROOT_STATIC_VAR);

	out->field = NULL;
	if (err)
		return err;
	out->root_id = take(b, 8, &bad);
	out->object = take(b, 8, &bad);
	out->type_id = take(b, 8, &bad);
	out->flags = (uint32_t)take(b, 4, &bad);
	if (bad)
		return -EINVAL;
	return take_string(b, &out->field);
}

int hs_clr_bulk_type(struct hs_clr_bulk *b, struct hs_clr_heap_type *out)
{
	int bad = 0, err = want(b, HS_CLR_GC_BULK_TYPE);

	out->name = NULL;
	if (err)
		return err;
	out->type_id = take(b, 8, &bad);
	out->module_id = take(b, 8, &bad);
	out->name_id = (uint32_t)take(b, 4, &bad);
	out->flags = (uint32_t)take(b, 4, &bad);
	out->element_type = (uint8_t)take(b, 1, &bad);
	if (bad)
		return -EINVAL;
	err = take_string(b, &out->name);
	if (err)
		return err;
	out->nr_params = (uint32_t)take(b, 4, &bad);
	if (bad || (uint64_t)out->nr_params * 8 > (uint64_t)(b->end - b->next)) {
		hs_free(out->name);
		out->name = NULL;
		return -EINVAL;
	}
	out->params = b->next;
	b->next += (size_t)out->nr_params * 8;
	return 0;
}

uint64_t hs_clr_heap_type_param(const struct hs_clr_heap_type *t, uint32_t i)
{
	uint64_t v = 0;
	int k;

	for (k = 7; k >= 0; k--)
		v = v << 8 | t->params[(size_t)i * 8 + (unsigned)k];
	return v;
}
