/*
 * trace_symbolize - a trace's addresses through the symbolizer into its
 * symbol section (see trace_symbolize.h).
 */
#include "symbols/trace_symbolize.h"
#include "symbols/symbols.h"
#include "format/trace_reader.h"
#include "format/trace_symbols.h"
#include "common/alloc.h"
#include "common/diag.h"
#include "common/fileio.h"
#include "common/hash.h"
#include "common/idindex.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The nodes already resolved, indexed by their (module, address) key:
 * the first node of each key is resolved, the others share its entry.
 */
struct node_key {
	uint64_t mod;  /* module index + 1; 0: none */
	uint64_t addr; /* module-relative when there is a module */
};

static void node_key(const struct hs_trace *t, uint32_t node, struct node_key *k)
{
	uint32_t m = t->node_module[node];

	k->mod = m == HS_TRACE_NONE ? 0 : (uint64_t)m + 1;
	k->addr = t->node_addr[node] - (m == HS_TRACE_NONE ? 0 : t->modules[m].bias);
}

static uint64_t node_key_hash(const struct node_key *k)
{
	uint64_t pair[2] = {k->mod, k->addr};

	return hs_hash_bytes(pair, sizeof(pair));
}

static int node_key_eq(const void *ctx, uint32_t node, const void *key)
{
	const struct node_key *k = key;
	struct node_key other;

	node_key(ctx, node, &other);
	return other.mod == k->mod && other.addr == k->addr;
}

/* Where the chunks go: @fd, whose offset is @offset, onwards. */
struct sink {
	int fd;
	uint64_t offset;
};

static int emit(void *ctx, const uint8_t *chunk, size_t n)
{
	struct sink *s = ctx;
	int err = hs_write_all(s->fd, chunk, n);

	if (!err)
		s->offset += n;
	return err;
}

/* Copy the first @n bytes of @in to @out. */
static int copy_prefix(int in, int out, uint64_t n)
{
	size_t cap = 1 << 16;
	uint8_t *buf = hs_malloc(cap);
	uint64_t off = 0;
	int err = buf ? 0 : -ENOMEM;

	while (!err && off < n) {
		size_t want = n - off < cap ? (size_t)(n - off) : cap;
		ssize_t k = pread(in, buf, want, (off_t)off);

		if (k < 0) {
			if (errno != EINTR)
				err = -errno;
			continue;
		}
		if (k == 0) {
			err = -EIO;
			break;
		}
		err = hs_write_all(out, buf, (size_t)k);
		off += (uint64_t)k;
	}
	hs_free(buf);
	return err;
}

static int note_bad(struct hs_symbolize_result *res, struct hs_symbolizer *s,
		    const struct hs_sym_module *mod)
{
	struct hs_sym_module_info info;
	struct hs_symbolize_module *b;

	if (HS_GROW(res->bad, res->nr_bad + 1, res->alloc_bad))
		return -ENOMEM;
	b = &res->bad[res->nr_bad];
	b->path = hs_strdup(mod->path ? mod->path : "");
	b->why = NULL;
	if (!hs_symbolizer_module_info(s, mod, &info) && info.why)
		b->why = hs_strdup(info.why);
	if (!b->path) {
		hs_free(b->why);
		return -ENOMEM;
	}
	res->nr_bad++;
	return 0;
}

/* Look up one key and add its entry to the section. */
static int resolve(struct hs_symbolizer *s, struct hs_symw *w, const struct hs_trace *t,
		   const struct hs_sym_module *mods, uint8_t *mod_bad, uint32_t m,
		   uint64_t addr, struct hs_symbolize_result *res)
{
	struct hs_symw_frame frames[HS_SYM_FRAMES_MAX];
	struct hs_sym_result r;
	const char *modname = NULL;
	unsigned i, n;
	int err;

	if (m != HS_TRACE_NONE)
		err = hs_symbolizer_lookup(s, &mods[m], addr, &r);
	else
		err = hs_symbolizer_lookup_jit(s, addr, &r);
	if (err)
		return err;
	res->addresses++;
	switch (r.status) {
	case HS_SYM_FOUND:
		res->found++;
		if (m == HS_TRACE_NONE) {
			res->jit++;
			modname = r.module;
		}
		break;
	case HS_SYM_NO_SYMBOL:
		res->no_symbol++;
		break;
	case HS_SYM_BAD_MODULE:
		res->bad_module++;
		if (m != HS_TRACE_NONE && !mod_bad[m]) {
			mod_bad[m] = 1;
			err = note_bad(res, s, &mods[m]);
			if (err)
				return err;
		}
		break;
	case HS_SYM_NO_MODULE:
		res->no_module++;
		break;
	}
	n = r.nr_frame < HS_SYM_FRAMES_MAX ? r.nr_frame : HS_SYM_FRAMES_MAX;
	if (!n)
		n = 1;
	for (i = 0; i < n; i++) {
		if (i < r.nr_frame) {
			frames[i].function = r.frame[i].function;
			frames[i].file = r.frame[i].file;
			frames[i].line = r.frame[i].line;
			frames[i].flags =
			    r.frame[i].flags & HS_SYM_INLINE ? HS_TSYM_INLINE : 0;
		} else {
			memset(&frames[i], 0, sizeof(frames[i]));
		}
	}
	if (r.nr_frame && r.frame[0].line)
		res->with_lines++;
	if (r.nr_frame > 1)
		res->inlined++;
	(void)t;
	return hs_symw_add(w, m == HS_TRACE_NONE ? 0 : m + 1, addr, (unsigned)r.status,
			   modname, frames, n);
}

static int open_symbolizer(const struct hs_symbolize_opts *o, const struct hs_trace *t,
			   struct hs_symbolizer **out, struct hs_symbolize_result *res,
			   struct hs_diag *diag)
{
	struct hs_diag md = HS_DIAG_INIT(NULL);
	struct hs_symbolizer *s = hs_symbolizer_new(o->flags);
	char msg[600];
	size_t i;
	int err;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < o->nr_debug_dirs; i++) {
		err = hs_symbolizer_add_debug_dir(s, o->debug_dirs[i]);
		if (err) {
			hs_diag_set(diag, 0, "debug directory '%s': %s", o->debug_dirs[i],
				    strerror(-err));
			hs_symbolizer_free(s);
			return err;
		}
	}
	if (!o->no_perf_map) {
		if (o->perf_map) {
			md.file = o->perf_map;
			err = hs_symbolizer_add_perf_map(s, o->perf_map, &md);
		} else {
			char path[64];

			snprintf(path, sizeof(path), "/tmp/perf-%llu.map",
				 (unsigned long long)t->info.pid);
			md.file = path;
			err = t->info.present ? hs_symbolizer_add_perf_map(s, path, &md)
					      : -ENOENT;
			if (err == -ENOENT)
				err = 0;
		}
		if (err == -ENOMEM) {
			hs_symbolizer_free(s);
			return err;
		}
		if (err) {
			if (!md.set)
				hs_diag_set(&md, 0, "%s", strerror(-err));
			res->perf_map_error =
			    hs_strdup(hs_diag_format(&md, msg, sizeof(msg)));
		}
	}
	*out = s;
	return 0;
}

static int symbolize(const struct hs_trace *t, struct hs_symbolizer *s, struct hs_symw *w,
		     struct hs_symbolize_result *res)
{
	struct hs_sym_module *mods;
	struct hs_idindex seen = HS_IDINDEX_INIT;
	uint8_t *mod_bad;
	size_t i;
	int err = 0;

	mods = hs_calloc(t->nr_modules + 1, sizeof(*mods));
	mod_bad = hs_calloc(t->nr_modules + 1, 1);
	if (!mods || !mod_bad) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->nr_modules; i++) {
		mods[i].path = t->modules[i].path;
		mods[i].build_id = t->modules[i].build_id;
		mods[i].build_id_len = t->modules[i].build_id_len;
		mods[i].bias = t->modules[i].bias;
	}
	for (i = 0; i < t->nr_nodes && !err; i++) {
		struct node_key k;
		uint64_t h;
		size_t pos;

		if (!t->node_addr[i])
			continue;
		node_key(t, (uint32_t)i, &k);
		h = node_key_hash(&k);
		if (hs_idindex_reserve(&seen, seen.nr + 1)) {
			err = -ENOMEM;
			break;
		}
		pos = hs_idindex_slot(&seen, h, node_key_eq, t, &k);
		if (hs_idindex_at(&seen, pos) != HS_IDINDEX_NONE)
			continue;
		hs_idindex_set(&seen, pos, h, (uint32_t)i);
		err = resolve(s, w, t, mods, mod_bad, t->node_module[i], k.addr, res);
	}
	if (!err)
		err = hs_symw_finish(w);
out:
	hs_idindex_release(&seen);
	hs_free(mods);
	hs_free(mod_bad);
	return err;
}

int hs_trace_symbolize(const char *path, const char *out,
		       const struct hs_symbolize_opts *o, struct hs_symbolize_result *res,
		       struct hs_diag *diag)
{
	struct hs_symbolizer *s = NULL;
	struct hs_symw w;
	struct hs_trace t;
	struct sink sink = {.fd = -1};
	int in = -1, err, in_place = !out || !strcmp(out, path), w_ready = 0;

	memset(res, 0, sizeof(*res));
	/*
	 * The rewriters' lock on the trace (trace_repack.h) from before it is
	 * read until its symbol section is written: a repack neither renames
	 * its file over the trace meanwhile nor reads it half written. After a
	 * repack that held it, this locks the file that repack left.
	 */
	in = hs_open_locked(path, in_place ? O_RDWR : O_RDONLY, 1);
	if (in < 0) {
		err = in;
		in = -1;
		if (in_place)
			hs_diag_set(diag, 0, "cannot open '%s' for writing: %s", path,
				    strerror(-err));
		else
			hs_diag_set(diag, 0, "cannot open: %s", strerror(-err));
		return err;
	}
	/* the stack tree and the modules: chunks of events only go unread */
	err = hs_trace_load_flags(path, &t,
				  HS_TRACE_NO_EVENTS | HS_TRACE_SKIP_EVENT_CHUNKS, diag);
	if (err) {
		close(in);
		return err;
	}
	err = open_symbolizer(o, &t, &s, res, diag);
	if (err)
		goto out;
	if (!hs_path_is_fd(path, in, 1)) {
		err = -ESTALE;
		hs_diag_set(diag, 0, "the trace was replaced while it was read");
		goto out;
	}
	if (in_place) {
		sink.fd = in; /* the file read, locked */
		in = -1;
	} else {
		sink.fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (sink.fd < 0) {
		err = -errno;
		hs_diag_set(diag, 0, "cannot open '%s' for writing: %s",
			    in_place ? path : out, strerror(errno));
		goto out;
	}
	if (!in_place) {
		err = copy_prefix(in, sink.fd, t.data_end);
		if (err) {
			hs_diag_set(diag, 0, "cannot copy to '%s': %s", out,
				    strerror(-err));
			goto out;
		}
	}
	/* the new section replaces what follows the last data chunk */
	sink.offset = t.data_end;
	if (lseek(sink.fd, (off_t)sink.offset, SEEK_SET) < 0) {
		err = -errno;
		hs_diag_set(diag, 0, "cannot write '%s': %s", in_place ? path : out,
			    strerror(errno));
		goto out;
	}
	err = hs_symw_init(&w, (uint32_t)t.data_chunks, emit, &sink);
	w_ready = !err;
	if (!err)
		err = symbolize(&t, s, &w, res);
	/* also after an error: whole chunks, and nothing of the old section */
	if (ftruncate(sink.fd, (off_t)sink.offset) && !err)
		err = -errno;
	if (err) {
		if (err != -ENOMEM)
			hs_diag_set(diag, 0, "cannot write the symbols to '%s': %s",
				    in_place ? path : out, strerror(-err));
		else
			hs_diag_set(diag, 0, "out of memory");
		goto out;
	}
	res->chunks = w.nr_chunks;
	res->bytes = sink.offset - t.data_end;
out:
	if (w_ready)
		hs_symw_release(&w);
	if (sink.fd >= 0 && close(sink.fd) && !err) {
		err = -errno;
		hs_diag_set(diag, 0, "cannot write '%s': %s", in_place ? path : out,
			    strerror(errno));
	}
	if (in >= 0)
		close(in);
	hs_symbolizer_free(s);
	hs_trace_release(&t);
	return err;
}

void hs_symbolize_result_release(struct hs_symbolize_result *res)
{
	size_t i;

	for (i = 0; i < res->nr_bad; i++) {
		hs_free(res->bad[i].path);
		hs_free(res->bad[i].why);
	}
	hs_free(res->bad);
	hs_free(res->perf_map_error);
	memset(res, 0, sizeof(*res));
}
