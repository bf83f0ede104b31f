#ifndef HS_FORMAT_TRACE_SYMBOLS_H
#define HS_FORMAT_TRACE_SYMBOLS_H
#include <stddef.h>
#include <stdint.h>
#include "common/buf.h"
#include "common/log.h"
#include "common/strtab.h"
#include "format/trace_reader.h"

/*
 * trace_symbols - the symbol section of a trace (docs/trace-format.md,
 * "Symbols"): the writer that encodes it as SYMBOLS chunks, and the
 * decoding the reader does into struct hs_trace_symtab.
 *
 * The writer (struct hs_symw) takes one entry per code address, copies
 * every string it is given (interned once per section) and hands out
 * whole chunks, header and zstd-compressed payload, through a callback:
 * the caller decides where they go (appended to the trace, or to a new
 * file). Memory comes from hs_malloc. Not for the collector.
 */

/* One frame of an entry; strings are borrowed for the call. */
struct hs_symw_frame {
	const char *function; /* NULL: unknown */
	const char *file;     /* NULL: unknown */
	uint32_t line;	      /* 0: unknown */
	unsigned flags;	      /* HS_TSYM_INLINE */
};

/* Called with each finished chunk (@n bytes, borrowed); 0 or -errno. */
typedef int (*hs_symw_emit_fn)(void *ctx, const uint8_t *chunk, size_t n);

struct hs_symw {
	struct hs_strtab strs; /* strings written so far: id = index + 1 */
	struct hs_buf payload; /* records of the chunk being filled */
	struct hs_buf out;     /* scratch: header + compressed payload */
	uint32_t seq;	       /* sequence number of the next chunk */
	size_t chunk_bytes;    /* flush a chunk once the payload is this big */
	hs_symw_emit_fn emit;
	void *ctx;
	void *cctx; /* ZSTD_CCtx */
	size_t nr_entries, nr_chunks;
};

/*
 * Start a section whose first chunk gets sequence number @seq (the number
 * of chunks before it in the file). Returns 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_symw_init(struct hs_symw *w, uint32_t seq, hs_symw_emit_fn emit,
			       void *ctx);
/*
 * Add the entry of @addr in module @module (1 + module index, 0: none):
 * @status (enum hs_trace_sym_status), @modname (NULL: the module's own
 * path) and @n frames (1 to HS_SYM_FRAMES_MAX) innermost first. Emits a
 * chunk when one is full. Returns 0, -EINVAL (bad @n or @status), -ENOMEM
 * or the callback's error.
 */
HS_MUST_CHECK int hs_symw_add(struct hs_symw *w, uint32_t module, uint64_t addr,
			      unsigned status, const char *modname,
			      const struct hs_symw_frame *frames, unsigned n);
/* Emit what is left (an empty section still gets one chunk). 0 or -errno. */
HS_MUST_CHECK int hs_symw_finish(struct hs_symw *w);
void hs_symw_release(struct hs_symw *w);

/*
 * Whether the file at @path ends with its data: whole chunks up to its
 * end, the last one END, and no symbol section (a trace whose program
 * ended, before it was symbolized). A symbolizer then only appends: what
 * a reader that opened the file before it wrote reads is unchanged.
 * 1 or 0 (also when the file cannot be read).
 */
int hs_trace_ends_with_data(const char *path);

/*
 * Read into @t, whose records were read before a symbolizer appended the
 * section (a stream of the file's data: `run`'s summary, read while
 * `run`'s symbolizer works), the section of the file at @path that
 * follows @t's data, as if @t had read it itself: its names, the damage
 * the reader reports (the section is then dropped), every node mapped to
 * its entry. Only the SYMBOLS chunks after @t->data_end are read. @t
 * must have ended with END (not cut off). Returns 0; -EINVAL when the
 * file holds more data after @t's, or @t was cut off (@t then has no
 * section); the reader's errors (a diag filled), -ENOMEM.
 */
HS_MUST_CHECK int hs_trace_syms_read(struct hs_trace *t, const char *path,
				     struct hs_diag *diag);

/* --- for trace_reader.c ------------------------------------------------ */

/* Forget the symbols read so far (a new section begins). */
void hs__trace_syms_reset(struct hs_trace_symtab *s);
void hs__trace_syms_release(struct hs_trace_symtab *s);
/*
 * Decode a SYM_STRING or SYM_ADDR record into @t. Returns 0, -EINVAL with
 * *@why set, or -ENOMEM.
 */
HS_MUST_CHECK int hs__trace_syms_record(struct hs_trace *t, const struct hs_rec *rec,
					const char **why);
/*
 * Take a SYM_STRING or SYM_ADDR record @rec, as reader @r gave it, into
 * @t (the walk's and hs_trace_syms_read()'s one way): the last symbol
 * section counts, so a new one (r->sym_sections is not *@section, then
 * updated) forgets what was taken before; a malformed record marks the
 * section damaged in @r, which skips the rest of it. Returns 0 or
 * -ENOMEM.
 */
HS_MUST_CHECK int hs__trace_syms_take(struct hs_trace *t, struct hs_trace_reader *r,
				      const struct hs_rec *rec, unsigned *section);
/* Map every node to its entry (after the modules are resolved). 0 or -ENOMEM. */
HS_MUST_CHECK int hs__trace_syms_resolve(struct hs_trace *t);
#endif
