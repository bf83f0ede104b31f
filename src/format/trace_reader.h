#ifndef HS_FORMAT_TRACE_READER_H
#define HS_FORMAT_TRACE_READER_H
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "common/idindex.h"
#include "format/trace_compact.h"
#include "format/trace_format.h"
#include "format/trace_record.h"
#include "common/log.h"

/*
 * trace_reader - read .heapscope traces (docs/trace-format.md).
 *
 * Two levels:
 *  - hs_trace_reader: a stream of decoded records, chunk by chunk, in file
 *    order, in bounded memory. It stops cleanly where a file was cut off
 *    and reports how much it recovered; it rejects corrupt data with the
 *    file offset in a struct hs_diag.
 *  - hs_trace: a whole trace in memory: process info, modules, threads,
 *    the stack tree, and the events as columns sorted by time, with times
 *    converted to nanoseconds. Reallocs are split into a free and an
 *    allocation, mremaps into an munmap and an mmap.
 *
 * Memory comes from hs_malloc (common/alloc.h). The reader owns its
 * buffers; records handed out borrow from them until the next call.
 * Input is untrusted: every size is bounded, nothing is trusted to be
 * consistent (node ids, parents, module ids are all checked).
 *
 * A symbol section that is damaged (cut off, corrupt) does not make the
 * trace unreadable: the reader skips the rest of the section, says where
 * (struct hs_trace_sym_damage) and the trace is read without names.
 */

/* Where a trace's symbol section is damaged. */
struct hs_trace_sym_damage {
	const char *what; /* what is wrong (a static string); NULL:
			   * nothing is */
	uint64_t offset;  /* file offset of the chunk where it is */
};

struct hs__chunk_events;

struct hs_trace_reader {
	/* input: a file descriptor (owned) or a memory buffer (borrowed) */
	int fd;
	const uint8_t *mem;
	uint64_t size;	  /* bytes of input */
	const char *name; /* for messages, borrowed */

	unsigned major, minor;
	uint64_t offset;	      /* file offset of the next chunk */
	uint64_t chunk_offset;	      /* file offset of the current chunk */
	struct hs_chunk_header chunk; /* the current chunk */
	uint64_t nr_chunks;	      /* complete chunks read so far */
	uint64_t nr_records;	      /* decoded so far */
	uint64_t nr_events;	      /* the events of those, counted as
				       * hs_trace_load() does (a realloc
				       * that frees is two) */

	uint8_t *stored, *raw; /* payload buffers */
	size_t alloc_stored, alloc_raw;
	/* a columnar or compact chunk's records (hs_chunk_unpack()) */
	struct hs_chunk_unpack unpack;
	const uint8_t *p, *end; /* the rest of the current payload */
	const uint8_t *payload; /* start of the current payload */
	struct hs_rec_state st;
	void *dctx; /* ZSTD_DCtx */

	int cut_off;	     /* the file ends inside a chunk */
	uint64_t cut_offset; /* where that chunk started */
	int end_seen;	     /* the last chunk read was an END chunk */
	int done;
	/* symbol sections (runs of SYMBOLS chunks) begun so far */
	unsigned sym_sections;
	/* the last one is damaged (the rest of it is skipped: sym_skip) */
	struct hs_trace_sym_damage sym_damage;
	int sym_skip;
	unsigned prev_kind; /* kind of the previous chunk */
	/* end of the last complete chunk that is not SYMBOLS, and the
	 * number of chunks up to it: where a new symbol section goes */
	uint64_t data_end, data_chunks;
	/* hs_trace_reader_skip_events(): the offsets of the chunks that hold
	 * only events (increasing), the next one to look for, and the chunks
	 * skipped so far */
	uint64_t *skip_off;
	size_t nr_skip, skip_at;
	uint64_t skipped;
	/* chunks decompressed ahead on other cores (trace_prefetch.h),
	 * started at the third chunk; pf_threads: how many workers (0: the
	 * reader reads alone) */
	struct hs__prefetch *pf;
	unsigned pf_threads;
	/* the pool decodes EVENTS chunks' events too (hs_trace_stream()
	 * sets it before the first chunk), and those of the current chunk
	 * (NULL: none; borrowed from the pool until the next chunk) */
	int pf_decode;
	const struct hs__chunk_events *pre;
	/* a stream's reader unpacks the 5.0 compact chunks the pool did not
	 * decode into events itself (hs_chunk_unpack_events(); hs_trace_stream()
	 * sets it): their pieces, owned, are @pre then */
	int unpack_events;
	struct hs__chunk_events *own_events;
};

/*
 * Open @path. Checks the file header; returns 0, -errno, or -EINVAL with
 * @diag filled for a file that is not a trace (or a version we do not
 * read). On failure nothing needs releasing.
 */
HS_MUST_CHECK
int hs_trace_reader_open(struct hs_trace_reader *r, const char *path,
			 struct hs_diag *diag);
/* The same over @n bytes at @data (borrowed while the reader is open). */
HS_MUST_CHECK
int hs_trace_reader_open_mem(struct hs_trace_reader *r, const void *data, size_t n,
			     const char *name, struct hs_diag *diag);
/*
 * Decode the next record into @rec (borrowing from the reader). Returns 1
 * for a record, 0 at the end of the input (whole or cut off: see cut_off),
 * or a negative errno (-EINVAL: corrupt, @diag names the offset; -EIO,
 * -ENOMEM). After an error or the end, keeps returning the same. Damage
 * inside a symbol section is no error: the rest of the section is
 * skipped and sym_damage says where.
 */
HS_MUST_CHECK
int hs_trace_reader_next(struct hs_trace_reader *r, struct hs_rec *rec,
			 struct hs_diag *diag);
/*
 * From now on, step over the EVENTS chunks that the footer marks as
 * holding only events (since 1.4, hs_tw_footer_marked()) without reading
 * their payload: for readers that want the stack tree, the modules and the
 * threads, not the events (symbolize). A trace without the marks (older,
 * or cut off) is read whole. Returns the number of chunks that will be
 * skipped, or -ENOMEM.
 */
HS_MUST_CHECK int hs_trace_reader_skip_events(struct hs_trace_reader *r);
/* Close the file and free the buffers. */
void hs_trace_reader_close(struct hs_trace_reader *r);

/* What the PROCESS record said; strings owned by the struct hs_trace. */
struct hs_trace_info {
	int present; /* a PROCESS record was read */
	uint64_t pid, ppid, page_size, sample_bytes, max_depth;
	unsigned unwind, clock, flags;
	uint64_t start_realtime_ns, parent_pid;
	char *exe, *comm, *cwd;
	char **argv;
	size_t argc;
};

/*
 * Decode a PROCESS body into @info (whose strings are allocated with
 * hs_malloc; free them with hs_trace_info_release()). Returns 0, -EINVAL
 * (malformed; *@why says what) or -ENOMEM.
 */
HS_MUST_CHECK
int hs_trace_info_decode(const uint8_t *body, size_t n, struct hs_trace_info *info,
			 const char **why);
void hs_trace_info_release(struct hs_trace_info *info);

#define HS_TRACE_NONE UINT32_MAX	  /* no node / module / thread */
#define HS_TRACE_MISSING (UINT32_MAX - 1) /* node_parent: defined nowhere */

struct hs_trace_module {
	uint64_t id, bias, start, end;
	char *path;
	uint8_t *build_id;
	size_t build_id_len;
	uint64_t load_ticks, unload_ticks; /* unload: UINT64_MAX if never */
	uint64_t unload_node; /* first node id after the unload, or UINT64_MAX */
};

struct hs_trace_thread {
	uint64_t tid;		   /* 0: the process itself */
	char *name;		   /* latest name, or NULL */
	int64_t start_ns, exit_ns; /* -1 if unknown */
	uint64_t allocs, frees, bytes;
};

/*
 * The symbol section (docs/trace-format.md, "Symbols"): what each code
 * address of the stack tree resolved to when the trace was symbolized.
 * Strings are numbered from 1; 0 means "none". The status values are
 * those of enum hs_sym_status (symbols/symbols.h).
 */
enum hs_trace_sym_status {
	HS_TSYM_FOUND,
	HS_TSYM_NO_SYMBOL,
	HS_TSYM_BAD_MODULE,
	HS_TSYM_NO_MODULE,
	HS_TSYM__COUNT
};
#define HS_TSYM_INLINE 1u /* frame flag: inlined into the next frame */

struct hs_trace_sym_frame {
	uint32_t function; /* string id; 0: unknown ("?") */
	uint32_t file;	   /* string id; 0: unknown */
	uint32_t line;	   /* 1-based; 0: unknown */
	uint32_t flags;	   /* HS_TSYM_INLINE */
};

struct hs_trace_sym {
	uint64_t addr;	  /* module-relative (ELF) address, or the
			   * run-time address without a module */
	uint32_t module;  /* 1 + module index; 0: no module */
	uint32_t modname; /* string naming the module (a perf map);
			   * 0: the module's recorded path */
	uint32_t first;	  /* frames [first, first + nr), innermost first */
	uint16_t nr;
	uint8_t status; /* enum hs_trace_sym_status */
};

struct hs_trace_symtab {
	int present; /* the trace has a symbol section */
	char **str;  /* string id - 1 -> owned string */
	size_t nr_str, alloc_str, str_bytes;
	struct hs_trace_sym *sym;
	size_t nr_sym, alloc_sym;
	struct hs_trace_sym_frame *frame;
	size_t nr_frame, alloc_frame;
	struct hs_idindex index; /* of sym, by (module, addr) */
	uint32_t *node_sym;	 /* node -> sym index, HS_TRACE_NONE; NULL
				  * when there is no symbol section */
	uint64_t offset;	 /* file offset of the section in use */
};

/* What the SAMPLING and SAMPLING_END records said, and the samples read. */
struct hs_trace_sampling {
	int present; /* a SAMPLING record was read */
	uint64_t cpu_hz, wall_hz, signal, flags;
	int ended; /* a SAMPLING_END record was read */
	uint64_t dropped, signals;
	uint64_t cpu_samples, wall_samples; /* SAMPLE records read */
};

struct hs_trace {
	struct hs_trace_info info;

	/* the stack tree: node index -> parent index (HS_TRACE_NONE at the
	 * root, HS_TRACE_MISSING if the parent was never defined),
	 * call-site address (0 = incomplete-stack marker), module index
	 * (or HS_TRACE_NONE) and the ticks when it was defined */
	uint64_t *node_addr;
	uint32_t *node_parent;
	uint32_t *node_module;
	uint64_t *node_id;
	uint64_t *node_ticks;
	size_t nr_nodes, alloc_nodes;
	struct hs_idindex node_ix; /* node id -> index (keys: node_id) */

	struct hs_trace_module *modules;
	size_t nr_modules, alloc_modules;
	struct hs_trace_thread *threads;
	size_t nr_threads, alloc_threads;

	/* events, sorted by time (stable: file order for equal times) */
	int64_t *time; /* ns since the start */
	uint64_t *addr;
	uint64_t *size;	  /* bytes (or mapping length) */
	uint32_t *stack;  /* node index or HS_TRACE_NONE */
	uint32_t *thread; /* thread index */
	uint8_t *op;	  /* enum hs_trace_op */
	uint8_t *fn;	  /* the record tag it came from */
	size_t nr_events, alloc_events;

	/* process-level samples */
	int64_t *rss_time;
	uint64_t *rss_bytes;
	size_t nr_rss, alloc_rss;
	uint64_t *clock_ticks;
	int64_t *clock_ns;
	size_t nr_clock, alloc_clock;

	/* how the trace ended */
	int has_footer;
	uint64_t footer[HS_FC__COUNT];
	int has_end;
	unsigned end_reason;
	uint64_t end_detail;
	int64_t duration_ns; /* time of the last event or sample */
	int cut_off;	     /* the file was cut off (no END, or inside a chunk) */
	uint64_t cut_offset; /* where the cut-off chunk starts, or the file size */
	uint64_t nr_chunks;
	uint64_t nr_records;
	uint64_t file_size;
	uint64_t missing_nodes;	     /* references to nodes never defined */
	struct hs_trace_symtab syms; /* the symbol section, if any */
	/* the symbol section is damaged: it was dropped (syms.present is 0) */
	struct hs_trace_sym_damage sym_damage;
	struct hs_trace_sampling sampling; /* CPU and wall-clock sampling */
	uint64_t data_end, data_chunks;	   /* see struct hs_trace_reader */
	/* hs_trace_stream(): the most events it kept back at once, waiting
	 * for earlier ones (at a chunk's start; for tests and benchmarks) */
	size_t stream_staged_max;
	/* hs_trace_stream(): events moved to put late runs in order (for
	 * tests: it grows as n log n, not n^2, however often time runs
	 * backwards in the file) */
	size_t stream_moves;
	/* hs_trace_stream(): chunks whose events waited in the file and were
	 * decoded again in their turn (trace_order.h) */
	size_t stream_deferred;
	/* hs_trace_stream(): batches handed over that pointed into the
	 * stage, not copies (trace_order.h) */
	size_t stream_lent;
	/* hs_trace_stream(): batches handed over as copies (no index, or
	 * after a stage too large to lend from: both counters non-zero show
	 * the switch) */
	size_t stream_copied;
	/* hs_trace_stream(): the most events in batches handed over at once
	 * after a stage too large to lend from (at most
	 * STREAM_COPY_IN_FLIGHT, unless one tick has more; 0: no such stage) */
	size_t stream_copy_in_flight;
	/* hs_trace_stream(): the most events of one thread's run of late
	 * events merged at once (at most 2 * STREAM_WINDOW without the
	 * footer's index: trace_order.h's run_cap) */
	size_t stream_run_max;
	/* hs_trace_stream(): the trace had no footer, and its chunk index
	 * was rebuilt from its chunks (trace_order.c's index_rebuild()) */
	int stream_index_rebuilt;
};

/*
 * Read the whole trace at @path into @t (initialised here). Returns 0 (a
 * cut-off file is not an error: see t->cut_off), or a negative errno with
 * @diag filled; @t is then released.
 */
HS_MUST_CHECK int hs_trace_load(const char *path, struct hs_trace *t,
				struct hs_diag *diag);
enum hs_trace_load_flags {
	HS_TRACE_NO_EVENTS = 1 << 0,	     /* keep no events: stack tree, modules,
					      * threads and symbols only */
	HS_TRACE_SKIP_EVENT_CHUNKS = 1 << 1, /* with NO_EVENTS: do not even read
					      * the chunks that hold only events
					      * (hs_trace_reader_skip_events()); the
					      * threads' counts and the trace's
					      * duration are then unknown */
};
/* hs_trace_load() with @flags (enum hs_trace_load_flags). */
HS_MUST_CHECK
int hs_trace_load_flags(const char *path, struct hs_trace *t, unsigned flags,
			struct hs_diag *diag);
/*
 * Streaming: a trace's events handed over in time order without keeping
 * them (a few bytes per event instead of the columns of hs_trace_load()),
 * for front ends that make one pass over them (analysis/memviews.h).
 */
struct hs_trace_event {
	int64_t time; /* ns since the start */
	uint64_t addr, size;
	/* node index, HS_TRACE_NONE (no stack) or, with HS_TRACE_EV_NODE_ID,
	 * the id of a node defined later in the file (hs_trace_node_index()
	 * finds it once the stream is over) */
	uint64_t node;
	uint32_t thread; /* thread index */
	uint8_t op, fn;	 /* enum hs_trace_op, record tag */
	/* hs_trace_stream()'s reading side: the ordinal of the EVENTS chunk
	 * the event came from, modulo 2^16 (trace_order.h); not for sinks */
	uint16_t seq;
};
#define HS_TRACE_EV_NODE_ID (1ull << 63)

/* Event @i of a loaded trace's columns as a struct hs_trace_event. */
void hs_trace_event_get(const struct hs_trace *t, size_t i, struct hs_trace_event *e);

struct hs_trace_sink {
	/* @n events of one time, in order (the array is borrowed); 0 or -errno */
	int (*events)(void *ctx, const struct hs_trace_event *ev, size_t n);
	/*
	 * Whether the block at @addr is live now, for ordering events of
	 * several threads that share a time as hs_trace_load() does; NULL
	 * leaves them in file order.
	 */
	int (*live)(void *ctx, uint64_t addr);
	void *ctx;
};

/*
 * Hand the events of loaded trace @t to @sink in batches, in the loaded
 * order: what a caller of hs_trace_stream() does after its -EAGAIN.
 * 0 or the sink's error.
 */
HS_MUST_CHECK int hs_trace_feed(const struct hs_trace *t,
				const struct hs_trace_sink *sink);

/*
 * Read @path into @t like hs_trace_load(), except that the events go to
 * @sink in time order instead of into @t (t->nr_events stays 0). Returns
 * 0; -EAGAIN when the file's events are not in time order (threads
 * written out of order, or a clock that is not in ns): the sink then got
 * some of them and the caller starts again with hs_trace_load(); the
 * sink's error; or an error of hs_trace_load(). On error @t is released.
 */
HS_MUST_CHECK
int hs_trace_stream(const char *path, struct hs_trace *t,
		    const struct hs_trace_sink *sink, struct hs_diag *diag);
/* The same from memory (for tests and fuzzing). */
HS_MUST_CHECK
int hs_trace_stream_mem(const void *data, size_t n, const char *name, struct hs_trace *t,
			const struct hs_trace_sink *sink, struct hs_diag *diag);
/* The index of the node with id @id, or HS_TRACE_NONE. */
uint32_t hs_trace_node_index(const struct hs_trace *t, uint64_t id);

/* The same from memory (for tests and fuzzing). */
HS_MUST_CHECK
int hs_trace_load_mem(const void *data, size_t n, const char *name, struct hs_trace *t,
		      struct hs_diag *diag);
void hs_trace_release(struct hs_trace *t);

/*
 * Write the frames of node @node leaf first into @out (room for @max node
 * indexes); returns the depth. A missing parent ends the stack with
 * HS_TRACE_NONE (the caller shows BROKEN).
 */
size_t hs_trace_stack(const struct hs_trace *t, uint32_t node, uint32_t *out, size_t max);
/*
 * Name of node @node's frame, "PATH!0xOFFSET", "[unknown]!0xADDR", or
 * "BROKEN" for the incomplete-stack marker, into @buf (size @n).
 * Returns @buf.
 */
const char *hs_trace_frame_name(const struct hs_trace *t, uint32_t node, char *buf,
				size_t n);
/*
 * The symbols of node @node: sets *@sym to its address's entry and
 * *@frames to its frames, innermost first (the inlined functions, then
 * the function they are in), and returns how many (at least 1). Returns
 * 0 when the trace has no symbols for the node (no symbol section, an
 * address the section does not list, or the BROKEN marker).
 */
unsigned hs_trace_node_syms(const struct hs_trace *t, uint32_t node,
			    const struct hs_trace_sym **sym,
			    const struct hs_trace_sym_frame **frames);
/* String @id of the symbol section (borrowed); NULL for 0 or an unknown id. */
const char *hs_trace_sym_str(const struct hs_trace *t, uint32_t id);
/* The module path an entry names: its modname, its module's path or NULL. */
const char *hs_trace_sym_module(const struct hs_trace *t, const struct hs_trace_sym *sym);

/*
 * Sampling weight of an allocation of @size bytes in @t: 1 for a full
 * trace, 1 / (1 - exp(-size / N)) with --sample-bytes N.
 */
double hs_trace_weight(const struct hs_trace *t, uint64_t size);

/*
 * How the trace at @path ended, from its END record alone (the chunk
 * headers, then the last END chunk; no events read): 1 with *@reason
 * (enum hs_end_reason: HS_END_EXEC, ...) set, or 0 when it has none (cut
 * off) or cannot be read.
 */
int hs_trace_peek_end(const char *path, unsigned *reason);

/*
 * Whether the trace at @path was recorded with CPU or wall-clock sampling:
 * looks for its SAMPLING record in the first nine chunks only (the
 * collector's sampler thread writes it when it starts; the chunk it lands
 * in is the writer's next after that, usually the first), and of those
 * reads only the chunks the footer's 1.4 marks say hold records other
 * than events (all of them in a trace without the marks). Returns 1 with
 * *@out filled (its counts are 0), 0 when there is none, or a negative
 * errno with @diag filled (a damaged chunk among those read, or the
 * first read after the nine).
 */
HS_MUST_CHECK
int hs_trace_peek_sampling(const char *path, struct hs_trace_sampling *out,
			   struct hs_diag *diag);
/* --- for the readers in format/ ------------------------------------------ */

/*
 * Load @r's next chunk into r->p, r->end: 1 = loaded, 0 = end of input,
 * <0 = error (@diag filled). A damaged chunk of a symbol section is
 * skipped with the rest of the section.
 */
HS_MUST_CHECK int hs__reader_next_chunk(struct hs_trace_reader *r, struct hs_diag *diag);
/*
 * Read @n bytes at file offset @off: into *@buf (grown as needed, its
 * room in *@alloc) or, for a reader over memory, point into it. *@out
 * is where they are. 0 or a negative errno.
 */
HS_MUST_CHECK
int hs__reader_read(struct hs_trace_reader *r, uint64_t off, size_t n, uint8_t **buf,
		    size_t *alloc, const uint8_t **out);
/* The same into the reader's own buffer (valid until its next read). */
/*
 * The chain of chunk headers of the file @r reads, from the first
 * (hs__reader_footer(), hs_trace_ends_with_data()). It stops at the
 * file's end or at a header that cannot be read or parsed, or whose
 * chunk is larger than the format allows or runs past the file's end.
 */
struct hs_chunk_chain {
	uint64_t reached;   /* where it stopped: the file's size if whole */
	uint64_t end_off;   /* the last END chunk's offset; 0: none */
	unsigned last_kind; /* the last whole chunk's kind; 0: none */
	int symbols;	    /* a SYMBOLS chunk is in it */
};
void hs__reader_chunk_chain(struct hs_trace_reader *r, struct hs_chunk_chain *c);
/*
 * The FOOTER record of the trace @r reads (in its last END chunk): 0 with
 * its body at *@body (@len bytes; in *@raw, which the caller frees with
 * hs_free, or in the reader's buffers until its next read), or -1: none
 * (a cut-off trace), unreadable or out of memory.
 */
HS_MUST_CHECK
int hs__reader_footer(struct hs_trace_reader *r, uint8_t **raw, const uint8_t **body,
		      size_t *len);
HS_MUST_CHECK
int hs__reader_read_at(struct hs_trace_reader *r, uint64_t off, size_t n,
		       const uint8_t **out);
/*
 * Put @r, just opened, where a walk that read @data_chunks chunks of data
 * ending (with an END chunk) at file offset @data_end left it: its next
 * chunks are the symbol sections written after the data. 0, or -EINVAL
 * when the file is shorter than @data_end.
 */
HS_MUST_CHECK
int hs__reader_resume_after_data(struct hs_trace_reader *r, uint64_t data_end,
				 uint64_t data_chunks);
/*
 * The symbol section is damaged in the chunk at file offset @off (@what:
 * a static string): the rest of the section is skipped.
 */
void hs__reader_sym_damaged(struct hs_trace_reader *r, uint64_t off, const char *what);
#endif
