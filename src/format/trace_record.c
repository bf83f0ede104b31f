/*
 * trace_record - the record codec's out-of-line part: tag names and the
 * decoder of every record (sized ones here, fixed ones inline in
 * trace_record.h). See trace_record.h and docs/trace-format.md.
 */
#include "format/trace_record.h"
#include <string.h>

static const char *const tag_names[] = {
    [HS_TAG_SPAN] = "span",
    [HS_TAG_NODE] = "node",
    [HS_TAG_MALLOC] = "malloc",
    [HS_TAG_CALLOC] = "calloc",
    [HS_TAG_REALLOC] = "realloc",
    [HS_TAG_REALLOCARRAY] = "reallocarray",
    [HS_TAG_POSIX_MEMALIGN] = "posix_memalign",
    [HS_TAG_ALIGNED_ALLOC] = "aligned_alloc",
    [HS_TAG_MEMALIGN] = "memalign",
    [HS_TAG_VALLOC] = "valloc",
    [HS_TAG_PVALLOC] = "pvalloc",
    [HS_TAG_FREE] = "free",
    [HS_TAG_REALLOC_FREE] = "realloc-free",
    [HS_TAG_FREE_TEMPORARY] = "free-temporary",
    [HS_TAG_MMAP] = "mmap",
    [HS_TAG_MUNMAP] = "munmap",
    [HS_TAG_MREMAP] = "mremap",
    [HS_TAG_PROCESS] = "process",
    [HS_TAG_CLOCK] = "clock",
    [HS_TAG_RSS] = "rss",
    [HS_TAG_MODULE] = "module",
    [HS_TAG_MODULE_UNLOAD] = "module-unload",
    [HS_TAG_THREAD_START] = "thread-start",
    [HS_TAG_THREAD_NAME] = "thread-name",
    [HS_TAG_THREAD_EXIT] = "thread-exit",
    [HS_TAG_FORK] = "fork",
    [HS_TAG_EXEC] = "exec",
    [HS_TAG_END] = "end",
    [HS_TAG_FOOTER] = "footer",
    [HS_TAG_SYM_STRING] = "sym-string",
    [HS_TAG_SYM_ADDR] = "sym-addr",
    [HS_TAG_SAMPLE] = "sample",
    [HS_TAG_SAMPLING] = "sampling",
    [HS_TAG_SAMPLING_END] = "sampling-end",
};

const char *hs_tag_name(unsigned tag)
{
	if (tag >= sizeof(tag_names) / sizeof(tag_names[0]))
		return NULL;
	return tag_names[tag];
}

/* Read a varint or fail the record. */
#define GET(v)                                                                           \
	do {                                                                             \
		if (hs_get_varint(&q, end, &(v)))                                        \
			goto bad_varint;                                                 \
	} while (0)

static int get_string(const uint8_t **q, const uint8_t *end, const uint8_t **s, size_t *n)
{
	uint64_t len;

	if (hs_get_varint(q, end, &len) || len > HS_STRING_MAX ||
	    len > (uint64_t)(end - *q))
		return -1;
	*s = *q;
	*n = (size_t)len;
	*q += len;
	return 0;
}

static int decode_sized(const uint8_t *q, const uint8_t *end, struct hs_rec *rec,
			const char **why)
{
	uint64_t v;

	switch (rec->tag) {
	case HS_TAG_CLOCK:
	case HS_TAG_RSS:
		GET(rec->ticks);
		GET(rec->value);
		break;
	case HS_TAG_MODULE:
		GET(rec->ticks);
		GET(rec->id);
		GET(rec->bias);
		GET(rec->start);
		GET(rec->end);
		if (get_string(&q, end, &rec->str, &rec->str_len) ||
		    get_string(&q, end, &rec->bytes, &rec->bytes_len)) {
			*why = "bad string in module record";
			return -1;
		}
		if (rec->end < rec->start) {
			*why = "module record ends before it starts";
			return -1;
		}
		break;
	case HS_TAG_MODULE_UNLOAD:
		GET(rec->ticks);
		GET(rec->id);
		if (q < end)
			GET(rec->parent); /* the next node id */
		break;
	case HS_TAG_THREAD_NAME:
		GET(rec->ticks);
		GET(rec->id);
		if (get_string(&q, end, &rec->str, &rec->str_len)) {
			*why = "bad string";
			return -1;
		}
		break;
	case HS_TAG_THREAD_START:
	case HS_TAG_EXEC:
		GET(rec->ticks);
		if (get_string(&q, end, &rec->str, &rec->str_len)) {
			*why = "bad string";
			return -1;
		}
		break;
	case HS_TAG_THREAD_EXIT:
		GET(rec->ticks);
		break;
	case HS_TAG_FORK:
		GET(rec->ticks);
		GET(rec->id);
		GET(rec->parent);
		break;
	case HS_TAG_END:
		GET(rec->ticks);
		GET(rec->value);
		GET(rec->detail);
		break;
	case HS_TAG_SAMPLE:
		GET(rec->ticks);
		GET(rec->id);
		GET(rec->value);
		GET(rec->size);
		GET(rec->stack);
		break;
	case HS_TAG_SAMPLING:
		GET(rec->ticks);
		GET(rec->value);
		GET(rec->detail);
		GET(rec->id);
		GET(rec->flags);
		break;
	case HS_TAG_SAMPLING_END:
		GET(rec->ticks);
		GET(rec->value);
		GET(rec->detail);
		GET(rec->size);
		GET(rec->old_size);
		break;
	default:
		/* PROCESS, FOOTER and unknown records: body only. */
		(void)v;
		break;
	}
	return 0;
bad_varint:
	*why = "bad varint in record body";
	return -1;
}

int hs_rec_decode(const uint8_t **p, const uint8_t *end, struct hs_rec_state *st,
		  struct hs_rec *rec, const char **why)
{
	const uint8_t *q = *p;
	uint64_t len;
	int ret;

	memset(rec, 0, sizeof(*rec));
	if (q >= end) {
		*why = "record past the end of the payload";
		return -1;
	}
	if (*q < HS_TAG_SIZED_FIRST || *q > HS_TAG_SIZED_LAST) {
		ret = hs_rec_decode_fixed(p, end, st, rec, why);
		if (ret == 0)
			*why = "unknown record tag";
		return ret == 1 ? 0 : -1;
	}
	rec->tag = *q++;
	rec->tid = st->tid;
	if (hs_get_varint(&q, end, &len) || len > (uint64_t)(end - q)) {
		*why = "sized record runs past the end of the payload";
		return -1;
	}
	rec->body = q;
	rec->body_len = (size_t)len;
	if (decode_sized(q, q + len, rec, why))
		return -1;
	*p = q + len;
	return 0;
}
