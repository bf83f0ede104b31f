/*
 * trace_symbols - writing and reading the symbol section (see
 * trace_symbols.h and docs/trace-format.md, "Symbols").
 */
#include "format/trace_symbols.h"
#include "format/trace_writer.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define SYMW_CHUNK_BYTES ((size_t)4 << 20)  /* raw payload per chunk */
#define SYM_STR_BYTES_MAX ((size_t)1 << 30) /* reader's cap on string bytes */
#define SYM_ENTRIES_MAX ((size_t)1 << 28)

/* --- writer ------------------------------------------------------------- */

int hs_symw_init(struct hs_symw *w, uint32_t seq, hs_symw_emit_fn emit, void *ctx)
{
	memset(w, 0, sizeof(*w));
	hs_strtab_init(&w->strs, SYM_STR_BYTES_MAX);
	hs_buf_init(&w->payload);
	hs_buf_init(&w->out);
	w->seq = seq;
	w->chunk_bytes = SYMW_CHUNK_BYTES;
	w->emit = emit;
	w->ctx = ctx;
	w->cctx = ZSTD_createCCtx();
	return w->cctx ? 0 : -ENOMEM;
}

void hs_symw_release(struct hs_symw *w)
{
	hs_strtab_release(&w->strs);
	hs_buf_release(&w->payload);
	hs_buf_release(&w->out);
	ZSTD_freeCCtx(w->cctx);
	w->cctx = NULL;
}

static int flush(struct hs_symw *w)
{
	size_t bound = ZSTD_compressBound(w->payload.len), n;
	uint8_t *dst;
	int err;

	hs_buf_reset(&w->out);
	err = hs_buf_grow(&w->out, HS_CHUNK_HEADER_SIZE + bound);
	if (err)
		return err;
	dst = (uint8_t *)w->out.s + HS_CHUNK_HEADER_SIZE;
	n = ZSTD_compressCCtx(w->cctx, dst, bound, w->payload.s, w->payload.len, 3);
	if (ZSTD_isError(n))
		return -ENOMEM;
	if (n > HS_CHUNK_MAX || w->payload.len > HS_CHUNK_MAX)
		return -E2BIG;
	hs_tw_chunk_header((uint8_t *)w->out.s, HS_CHUNK_SYMBOLS, HS_CHUNK_ZSTD,
			   (uint32_t)n, (uint32_t)w->payload.len, w->seq, dst);
	err = w->emit(w->ctx, (const uint8_t *)w->out.s, HS_CHUNK_HEADER_SIZE + n);
	if (err)
		return err;
	w->seq++;
	w->nr_chunks++;
	hs_buf_reset(&w->payload);
	return 0;
}

/* Id of @s in the section, writing a SYM_STRING record the first time. */
static int string_id(struct hs_symw *w, const char *s, uint64_t *id)
{
	uint8_t prefix[1 + HS_VARINT_MAX];
	size_t before, len;
	uint32_t k;
	int err;

	if (!s) {
		*id = 0;
		return 0;
	}
	len = strlen(s);
	if (len > HS_STRING_MAX)
		len = HS_STRING_MAX;
	before = hs_strtab_count(&w->strs);
	err = hs_strtab_intern(&w->strs, s, len, &k);
	if (err)
		return err;
	*id = (uint64_t)k + 1;
	if (hs_strtab_count(&w->strs) == before)
		return 0;
	err = hs_buf_add(
	    &w->payload, prefix,
	    (size_t)(hs_tw_sized_prefix(prefix, HS_TAG_SYM_STRING, len) - prefix));
	return err ? err : hs_buf_add(&w->payload, s, len);
}

int hs_symw_add(struct hs_symw *w, uint32_t module, uint64_t addr, unsigned status,
		const char *modname, const struct hs_symw_frame *frames, unsigned n)
{
	uint8_t body[16 + HS_SYM_FRAMES_MAX * 4 * HS_VARINT_MAX], *q = body;
	uint8_t prefix[1 + HS_VARINT_MAX];
	uint64_t id;
	unsigned i;
	int err;

	if (!n || n > HS_SYM_FRAMES_MAX || status >= HS_TSYM__COUNT)
		return -EINVAL;
	if (w->payload.len >= w->chunk_bytes) {
		err = flush(w);
		if (err)
			return err;
	}
	/* the strings first: their records must come before this one */
	q = hs_put_varint(q, module);
	q = hs_put_varint(q, addr);
	q = hs_put_varint(q, status);
	err = string_id(w, modname, &id);
	if (err)
		return err;
	q = hs_put_varint(q, id);
	q = hs_put_varint(q, n);
	for (i = 0; i < n; i++) {
		err = string_id(w, frames[i].function, &id);
		if (err)
			return err;
		q = hs_put_varint(q, id);
		err = string_id(w, frames[i].file, &id);
		if (err)
			return err;
		q = hs_put_varint(q, id);
		q = hs_put_varint(q, frames[i].line);
		q = hs_put_varint(q, frames[i].flags & HS_TSYM_INLINE);
	}
	err = hs_buf_add(
	    &w->payload, prefix,
	    (size_t)(hs_tw_sized_prefix(prefix, HS_TAG_SYM_ADDR, (size_t)(q - body)) -
		     prefix));
	if (!err)
		err = hs_buf_add(&w->payload, body, (size_t)(q - body));
	if (!err)
		w->nr_entries++;
	return err;
}

int hs_symw_finish(struct hs_symw *w)
{
	if (w->payload.len || !w->nr_chunks)
		return flush(w);
	return 0;
}

/* --- reader ------------------------------------------------------------- */

void hs__trace_syms_release(struct hs_trace_symtab *s)
{
	size_t i;

	for (i = 0; i < s->nr_str; i++)
		hs_free(s->str[i]);
	hs_free(s->str);
	hs_free(s->sym);
	hs_free(s->frame);
	hs_idindex_release(&s->index);
	hs_free(s->node_sym);
	memset(s, 0, sizeof(*s));
}

void hs__trace_syms_reset(struct hs_trace_symtab *s)
{
	hs__trace_syms_release(s);
}

static uint64_t key_hash(uint32_t module, uint64_t addr)
{
	uint64_t k[2] = {module, addr};

	return hs_hash_bytes(k, sizeof(k));
}

/* An address to look up: (module, addr) as in struct hs_trace_sym. */
struct sym_key {
	uint32_t module;
	uint64_t addr;
};

static int sym_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hs_trace_symtab *s = ctx;
	const struct sym_key *k = key;

	return s->sym[id].module == k->module && s->sym[id].addr == k->addr;
}

static int add_string(struct hs_trace_symtab *s, const struct hs_rec *rec,
		      const char **why)
{
	char *copy;

	if (rec->body_len > HS_STRING_MAX ||
	    s->str_bytes + rec->body_len > SYM_STR_BYTES_MAX ||
	    s->nr_str >= UINT32_MAX - 1) {
		*why = "symbol section: too many string bytes";
		return -EINVAL;
	}
	if (HS_GROW(s->str, s->nr_str + 1, s->alloc_str))
		return -ENOMEM;
	copy = hs_strndup((const char *)rec->body, rec->body_len);
	if (!copy)
		return -ENOMEM;
	s->str[s->nr_str++] = copy;
	s->str_bytes += rec->body_len + 1;
	return 0;
}

static int get_id(const struct hs_trace_symtab *s, const uint8_t **q, const uint8_t *end,
		  uint32_t *id)
{
	uint64_t v;

	if (hs_get_varint(q, end, &v) || v > s->nr_str)
		return -1;
	*id = (uint32_t)v;
	return 0;
}

static int add_addr(struct hs_trace *t, const struct hs_rec *rec, const char **why)
{
	struct hs_trace_symtab *s = &t->syms;
	const uint8_t *q = rec->body, *end = rec->body + rec->body_len;
	struct hs_trace_sym e;
	struct sym_key k;
	uint64_t module, status, n, v, h;
	uint32_t id;
	size_t i, pos;

	memset(&e, 0, sizeof(e));
	if (hs_get_varint(&q, end, &module) || hs_get_varint(&q, end, &e.addr) ||
	    hs_get_varint(&q, end, &status) || get_id(s, &q, end, &e.modname) ||
	    hs_get_varint(&q, end, &n))
		goto bad;
	if (module > t->nr_modules || status >= HS_TSYM__COUNT || !n ||
	    n > HS_SYM_FRAMES_MAX)
		goto bad;
	if (s->nr_sym >= SYM_ENTRIES_MAX) {
		*why = "symbol section: too many addresses";
		return -EINVAL;
	}
	e.module = (uint32_t)module;
	e.status = (uint8_t)status;
	e.nr = (uint16_t)n;
	e.first = (uint32_t)s->nr_frame;
	if (s->nr_frame + n > UINT32_MAX ||
	    HS_GROW(s->frame, s->nr_frame + n, s->alloc_frame))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct hs_trace_sym_frame *f = &s->frame[s->nr_frame + i];

		if (get_id(s, &q, end, &f->function) || get_id(s, &q, end, &f->file) ||
		    hs_get_varint(&q, end, &v) || v > UINT32_MAX)
			goto bad;
		f->line = (uint32_t)v;
		if (hs_get_varint(&q, end, &v))
			goto bad;
		f->flags = (uint32_t)(v & HS_TSYM_INLINE);
	}
	if (HS_GROW(s->sym, s->nr_sym + 1, s->alloc_sym))
		return -ENOMEM;
	if (hs_idindex_reserve(&s->index, s->nr_sym + 1))
		return -ENOMEM;
	s->nr_frame += n;
	k.module = e.module;
	k.addr = e.addr;
	h = key_hash(e.module, e.addr);
	pos = hs_idindex_slot(&s->index, h, sym_eq, s, &k);
	id = hs_idindex_at(&s->index, pos);
	if (id != HS_IDINDEX_NONE) {
		s->sym[id] = e; /* listed again: the later entry counts */
		return 0;
	}
	s->sym[s->nr_sym] = e;
	hs_idindex_set(&s->index, pos, h, (uint32_t)s->nr_sym);
	s->nr_sym++;
	return 0;
bad:
	*why = "malformed symbol record";
	return -EINVAL;
}

int hs__trace_syms_record(struct hs_trace *t, const struct hs_rec *rec, const char **why)
{
	t->syms.present = 1;
	if (rec->tag == HS_TAG_SYM_STRING)
		return add_string(&t->syms, rec, why);
	return add_addr(t, rec, why);
}

int hs__trace_syms_resolve(struct hs_trace *t)
{
	struct hs_trace_symtab *s = &t->syms;
	size_t i;

	if (!s->present)
		return 0;
	s->node_sym = hs_malloc((t->nr_nodes + 1) * sizeof(uint32_t));
	if (!s->node_sym)
		return -ENOMEM;
	for (i = 0; i < t->nr_nodes; i++) {
		uint64_t a = t->node_addr[i];
		uint32_t m = t->node_module[i], id;
		struct sym_key k = {0, 0};

		s->node_sym[i] = HS_TRACE_NONE;
		if (!a)
			continue;
		if (m != HS_TRACE_NONE) {
			a -= t->modules[m].bias;
			k.module = m + 1;
		}
		k.addr = a;
		id = hs_idindex_find(&s->index, key_hash(k.module, a), sym_eq, s, &k);
		if (id != HS_IDINDEX_NONE)
			s->node_sym[i] = id;
	}
	return 0;
}

int hs__trace_syms_take(struct hs_trace *t, struct hs_trace_reader *r,
			const struct hs_rec *rec, unsigned *section)
{
	const char *why = NULL;
	int err;

	if (r->sym_sections != *section) {
		hs__trace_syms_reset(&t->syms);
		*section = r->sym_sections;
		t->syms.offset = r->chunk_offset;
	}
	err = hs__trace_syms_record(t, rec, &why);
	if (err == -EINVAL) {
		hs__reader_sym_damaged(r, r->chunk_offset,
				       why ? why : "malformed symbol record");
		err = 0;
	}
	return err;
}

int hs_trace_ends_with_data(const char *path)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_trace_reader r;
	struct hs_chunk_chain c;
	int whole;

	if (hs_trace_reader_open(&r, path, &diag))
		return 0;
	hs__reader_chunk_chain(&r, &c);
	whole = !c.symbols && c.reached == r.size && c.reached > HS_FILE_HEADER_SIZE &&
		c.last_kind == HS_CHUNK_END;
	hs_trace_reader_close(&r);
	return whole;
}

int hs_trace_syms_read(struct hs_trace *t, const char *path, struct hs_diag *diag)
{
	struct hs_trace_reader r;
	struct hs_rec rec;
	unsigned section = 0;
	int ret, err;

	hs__trace_syms_release(&t->syms);
	memset(&t->sym_damage, 0, sizeof(t->sym_damage));
	if (t->cut_off || !t->data_chunks)
		return -EINVAL;
	err = hs_trace_reader_open(&r, path, diag);
	if (err)
		return err;
	/* the reader as it is after @t's data: an END chunk, then the section */
	err = hs__reader_resume_after_data(&r, t->data_end, t->data_chunks);
	while (!err && (ret = hs_trace_reader_next(&r, &rec, diag)) == 1) {
		if (rec.tag != HS_TAG_SYM_STRING && rec.tag != HS_TAG_SYM_ADDR) {
			err = -EINVAL; /* data after @t's: not the file @t read */
			break;
		}
		err = hs__trace_syms_take(t, &r, &rec, &section);
	}
	if (!err && r.done < 0)
		err = r.done;
	if (!err && r.data_end != t->data_end)
		err = -EINVAL;
	if (!err) {
		t->sym_damage = r.sym_damage;
		if (r.sym_damage.what)
			hs__trace_syms_reset(&t->syms);
		err = hs__trace_syms_resolve(t);
	}
	if (err)
		hs__trace_syms_release(&t->syms);
	hs_trace_reader_close(&r);
	return err;
}

unsigned hs_trace_node_syms(const struct hs_trace *t, uint32_t node,
			    const struct hs_trace_sym **sym,
			    const struct hs_trace_sym_frame **frames)
{
	const struct hs_trace_sym *e;

	if (!t->syms.node_sym || node >= t->nr_nodes ||
	    t->syms.node_sym[node] == HS_TRACE_NONE)
		return 0;
	/* node_sym holds sym indexes or HS_TRACE_NONE (trace_reader.h) */
	HS_BUG_ON(t->syms.node_sym[node] >= t->syms.nr_sym);
	e = &t->syms.sym[t->syms.node_sym[node]];
	*sym = e;
	*frames = t->syms.frame + e->first;
	return e->nr;
}

const char *hs_trace_sym_str(const struct hs_trace *t, uint32_t id)
{
	return id && id <= t->syms.nr_str ? t->syms.str[id - 1] : NULL;
}

const char *hs_trace_sym_module(const struct hs_trace *t, const struct hs_trace_sym *sym)
{
	if (sym->modname)
		return hs_trace_sym_str(t, sym->modname);
	if (sym->module && sym->module <= t->nr_modules)
		return t->modules[sym->module - 1].path;
	return NULL;
}
