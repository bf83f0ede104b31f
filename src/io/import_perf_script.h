#ifndef HS_IO_IMPORT_PERF_SCRIPT_H
#define HS_IO_IMPORT_PERF_SCRIPT_H
/*
 * import_perf_script - what the three files of the `perf script` importer
 * share. Internal to them; perf_script.h is what the rest of src/io sees.
 *
 *   import_perf_script.c             the driver: the line loop, events to
 *                                    their kind's handler, frames and
 *                                    stacks interned into the stack source,
 *                                    CPU samples, the end (names, order)
 *   import_perf_script_parse.c       the line parser: header lines, frame
 *                                    lines' text, tracepoint fields; it
 *                                    reads text and fills structs, nothing
 *                                    else (no allocation, no stack source)
 *   import_perf_script_threadtime.c  the thread-time view's state machine
 *                                    (sched_switch, wakeups, exits)
 *   import_perf_script_parts.c       a mapped file cut into parts at blank
 *                                    lines, parsed on worker threads each
 *                                    into a stack source of its own, merged
 *                                    in file order into the same model
 *
 * struct ps is the importer's state: hs__import_perf_script() creates and
 * frees the stream's, hs__ps_import_mapped() the mapped file's and one per
 * part (hs__ps_init() and hs__ps_release() in the driver); the other files
 * borrow it for the duration of a call. Errors: functions returning int give 0
 * or a negative errno, with ps->diag filled (hs__ps_fail() and co.),
 * except the parser's, whose contracts are given beside them.
 */
#include "io/io.h"
#include "io/perf_script.h"
#include "common/buf.h"
#include "common/idindex.h"
#include "common/linereader.h"
#include "common/strtab.h"
#include "common/u64map.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_LINE ((size_t)1 << 20) /* longest line accepted */
#define MAX_FRAMES 100000	   /* frames of one event */
#define NO_ID UINT32_MAX

enum ps_kind {
	PS_CPU, /* anything not named below: a CPU sample */
	PS_SCHED_SWITCH,
	PS_SCHED_EXEC,
	PS_SCHED_EXIT,
	PS_SCHED_WAKING, /* sched_waking: a wakeup, in the waker's context */
	PS_SCHED_WAKEUP, /* sched_wakeup[_new]: the same, or its second half */
	PS_BLOCK_ISSUE,
	PS_BLOCK_COMPLETE,
	PS_IRQ_ENTRY,
	PS_IRQ_EXIT,
	PS__NR_KINDS
};

/* What an event's frame lines become (kinds[].frames). */
enum ps_frames {
	FR_NONE,  /* only checked */
	FR_KEEP,  /* interned into ps->frames */
	FR_WAKER, /* the same, named "NAME (READIED_BY)" */
};

/* One event being read: its header, then its frames in ps->frames. */
struct ps_event {
	enum ps_kind kind;
	enum ps_frames frames; /* kinds[kind].frames[tt], or FR_NONE */
	uint32_t pid, tid;
	int64_t cpu;   /* -1 when the header has no [CPU] */
	int64_t time;  /* ns from the first event */
	uint64_t line; /* line of the header */
	/* comm, event name and details are copied to ps->comm, ->event, ->details */
};

/* A frame name waiting to be interned (struct ps's fnames). */
struct pending_frame {
	size_t off; /* of the name in ps->fnames */
	size_t len;
	uint64_t hash; /* hs_hash_bytes() of the name */
	uint64_t line; /* of its frame line, for an error */
};

/* A CPU sample waiting for its stack (struct ps's spend). */
struct pending_sample {
	size_t sample;	       /* its index in ps->out */
	uint32_t proc, thread; /* its process and thread frames */
	size_t off, n;	       /* its frames: spend_frames[off, off + n) */
	uint64_t line;	       /* of its header, for an error */
};

/* A sample's frame lines seen before (struct ps's memo_texts). */
struct memo_text {
	uint64_t hash;	   /* hs_hash_bytes() of its key */
	size_t off, len;   /* its key: memo_keys[off, off + len) */
	size_t frames_off; /* its frames: memo_frames[frames_off, + nr_frames) */
	uint32_t nr_frames;
	/*
	 * Its fast key (import_perf_script.c, memo_fast_scan()), when it has
	 * one: memo_fast[fast_off, + fast_head + fast_raw), the head's key
	 * then the raw bytes of the other lines (raw_lines of them).
	 */
	size_t fast_off;
	uint32_t fast_head, fast_raw, raw_lines;
};

/*
 * A CPU sample's frame lines keyed for the memo (memo_scan()), maybe
 * before the parse reaches them, so that their lookup's memory can be
 * fetched while the samples before them are read.
 */
struct memo_ahead {
	const char *at;	  /* the first frame line keyed, or NULL: none */
	const char *stop; /* the line after the last frame line */
	uint32_t lines;	  /* frame lines keyed */
	int ok;		  /* the memo takes them: key and hash are set */
	struct hs_buf key;
	uint64_t hash;
};

#define MEMO_AHEAD 4 /* the current sample's key and up to 3 ahead */

struct proc {
	uint32_t pid;
	uint32_t frame;	      /* its `Process ...` frame */
	uint32_t first, last; /* its comm ids, in order of first sight */
	uint32_t nr_comms;
	const char *comm; /* last comm seen (borrowed from ps->comms) */
	size_t comm_len;
};

/* Thread-time state of one thread. */
enum thr_state {
	T_RUNNING, /* running, or nothing known */
	T_BLOCKED, /* switched out, not runnable */
	T_READY,   /* switched out while runnable (preempted) */
};

struct thr {
	enum thr_state state;
	int64_t since;		/* ns: when it was switched out */
	int64_t woken;		/* ns: its first wakeup since, or -1 */
	uint32_t stack;		/* Process -> Thread -> frames at the switch-out */
	uint32_t readied_stack; /* stack -> READIED BY ..., or HS_NO_STACK */
	size_t last_cpu;	/* its last CPU sample's index + 1, 0 = none */
};

struct ps {
	struct hs_stack_source *out;
	struct hs_diag *diag;
	const struct hs__perf_symbols *syms;
	int tt; /* the thread-time view (index into kinds[]) */
	/*
	 * Where lines come from: lr reading a stream, or (mapped) the bytes
	 * [mem, mem_end) of a mapped file, one part of it or all; then
	 * lr.lineno and lr.last_had_newline are kept as lr would keep them
	 * and nothing else of lr is used.
	 */
	struct hs_linereader lr;
	int mapped;
	const char *mem, *mem_end;
	const char *mem_clean; /* no NUL in the lines before this */
	const char *mem_nul;   /* a NUL found at or after mem_clean, or NULL */
	const char *mem_kept;  /* mapped pages from here on are not dropped yet */
	int first_part;	       /* the text's first line is here (BOM, PERFILE) */
	/*
	 * A part after the first (import_perf_script_parts.c): a process frame
	 * is a placeholder named after the pid alone, which the merge maps to
	 * the real one (a pid's first name is known only in file order).
	 */
	int proc_placeholders;
	struct hs_buf name; /* scratch: a name being built */

	/* the current event */
	int in_event;
	int after_frame; /* the last line was a frame line */
	struct ps_event ev;
	struct hs_buf comm, event, details;
	struct hs_buf inl; /* inlined frames waiting for a module */
	size_t nr_inl;
	uint32_t *frames; /* leaf first */
	size_t nr_frames, alloc_frames;
	/*
	 * The event's frame names waiting to be interned (at the end of the
	 * event, as a batch, in order): name k is frames[k], which holds
	 * nothing until then. fnames holds the names one after the other.
	 */
	struct hs_buf fnames;
	struct pending_frame *fpend;
	size_t nr_fpend, alloc_fpend;

	/*
	 * CPU view: samples added with their stacks still to intern (as a
	 * batch of at most SAMPLE_BATCH, in order), their frames leaf first
	 * one sample after the other in spend_frames.
	 */
	struct pending_sample *spend;
	size_t nr_spend, alloc_spend;
	uint32_t *spend_frames;
	size_t nr_spend_frames, alloc_spend_frames;

	int have_base;
	int64_t base; /* ns of the first event */

	/* processes and threads */
	struct hs_u64map pids; /* pid -> index in procs */
	struct proc *procs;
	size_t nr_procs, alloc_procs;
	struct hs_strtab comms; /* "<pid>:<comm>" */
	uint32_t *comm_next;	/* comm id -> next comm id of its pid, NO_ID */
	size_t alloc_comm_next;
	struct hs_u64map tids; /* tid -> thread frame */

	/* weights: cpu + 1 -> last sample index + 1 on that CPU */
	struct hs_u64map cpus;
	/*
	 * CPU view: cpu + 1 of each sample (index: its index in out minus
	 * first_sample, the samples out held before), and whether a CPU's
	 * samples came out of time order (then weighed again at the end)
	 */
	size_t first_sample;
	uint32_t *sample_cpu;
	size_t alloc_sample_cpu;
	int cpu_unordered;

	/*
	 * CPU view of mapped text (import_perf_script.c, "whole stacks
	 * memoized"): a sample's frame lines, as bytes, to their frames and,
	 * with its pid and tid, to its stack. memo_on: 0 when off (a stream,
	 * thread time, symbol files, HEAPSCOPE_PARSE_MEMO=0, or too few
	 * repeats).
	 */
	int memo_on;
	struct hs_idindex memo_index; /* text id by hash of its key */
	struct memo_text *memo_texts; /* by text id */
	size_t nr_memo_texts, alloc_memo_texts;
	char *memo_keys; /* the texts' keys, one after the other (a mapping) */
	size_t memo_keys_len;
	uint32_t *memo_frames; /* the texts' frames, leaf first */
	size_t nr_memo_frames, alloc_memo_frames;
	struct hs_u64map memo_threads; /* pid << 32 | tid -> thread key */
	struct hs_u64map memo_stacks;  /* text id << 32 | thread key -> stack */
	size_t memo_lookups, memo_hits;
	/*
	 * The fast keys (memo_fast_scan()): text id by hash of the head's key
	 * and the raw bytes of the lines after it, up to MEMO_FAST_SPAN; the
	 * keys one after the other in memo_fast (a mapping); fast_key the
	 * current sample's head key and hashed bytes (scratch); on a miss,
	 * what memo_add_text() keeps of it (fast_ok: the sample has a fast
	 * key; fast_at its first frame line, fast_raw where its raw lines
	 * start, fast_head the head key's length, fast_hash, fast_lines the
	 * head's lines).
	 */
	struct hs_idindex memo_fast_index;
	char *memo_fast;
	size_t memo_fast_len;
	struct hs_buf memo_fast_key;
	int memo_fast_ok;
	const char *memo_fast_at, *memo_fast_raw;
	size_t memo_fast_head;
	uint64_t memo_fast_hash;
	uint32_t memo_fast_lines;
	size_t memo_fast_hits;
	/* keys, a ring (memo_try()); memo_next: the one to fill next */
	struct memo_ahead memo_ahead[MEMO_AHEAD];
	size_t memo_next;
	/* the current event: its text's id on a hit, else NO_ID */
	uint32_t memo_text;
	/* on a miss: its key (in memo_ahead[]), its hash, its last frame line */
	const char *memo_block;
	size_t memo_len;
	uint64_t memo_hash, memo_last_line;
	/* and its frame lines [memo_at, memo_stop), memo_lines of them */
	const char *memo_at, *memo_stop;
	uint32_t memo_lines;

	/* the previous sample's path, root first, to reuse its prefix */
	uint32_t *path_frame, *path_stack;
	size_t path_len, alloc_path, alloc_path2;

	/* thread time */
	struct hs_u64map thr_index; /* tid -> index in thrs + 1 */
	struct thr *thrs;
	size_t nr_thrs, alloc_thrs;
	uint32_t cpu_time_frame, blocked_frame, ready_frame; /* NO_ID until needed */
	int seen_waking;   /* a sched_waking was read: sched_wakeup is its twin */
	int64_t last_time; /* ns of the latest event */

	char msg[400]; /* why a header did not parse */
};

struct header {
	const char *comm, *comm_end;
	uint64_t pid, tid;
	int64_t cpu;
	int64_t time; /* ns, absolute */
	const char *event, *event_end;
	const char *details, *details_end;
};

struct frame_text {
	const char *mod, *mod_end;
	const char *sym, *sym_end;
	const char *tier, *tier_end; /* .NET optimization tier, or empty */
	int unknown;		     /* module or symbol is "unknown" */
	int inlined;		     /* "SYMBOL (inlined)": no module of its own */
};

/* --- text helpers (the parser's and the driver's) ---------------------- */

static inline int is_space(char c)
{
	/* bits 9 to 13 (TAB, LF, VT, FF, CR) and 32, less LF */
	unsigned u = (unsigned char)c;

	return u <= 32 && ((1ull << u) & 0x100003A00ull);
}

static inline int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int hex_value(char c)
{
	unsigned u = (unsigned char)c;

	if (u - '0' < 10)
		return (int)(u - '0');
	u |= 0x20; /* lower case */
	return u - 'a' < 6 ? (int)(u - 'a' + 10) : -1;
}

/*
 * Eight bytes at a time: the runs of blanks and hex digits that every
 * frame line starts with (perf pads its addresses to 16 columns) are
 * skipped a word at a time where the byte order allows, and a byte at a
 * time for the rest (same result: the word loops only skip bytes the
 * byte loops would skip, and stop at or before where those stop).
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PS_WORDS 1
#else
#define PS_WORDS 0
#endif
#define PS_ONES UINT64_C(0x0101010101010101)
#define PS_HIGHS (PS_ONES * 0x80)

/* The 8 bytes at @p (unaligned), the first in the low byte. */
static inline uint64_t load_word(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* The high bit of each byte of @x that is not zero. */
static inline uint64_t nonzero_bytes(uint64_t x)
{
	return (((x & ~PS_HIGHS) + ~PS_HIGHS) | x) & PS_HIGHS;
}

/* The high bit of each byte of @w that is a hex digit (as hex_value()). */
static inline uint64_t hex_bytes(uint64_t w)
{
	/* per byte, no carry: b + (0x80 - lo) has its high bit iff b >= lo */
	uint64_t b = w & ~PS_HIGHS, l = b | (PS_ONES * 0x20);
	uint64_t digit = (b + PS_ONES * (0x80 - '0')) & ~(b + PS_ONES * (0x7f - '9'));
	uint64_t alpha = (l + PS_ONES * (0x80 - 'a')) & ~(l + PS_ONES * (0x7f - 'f'));

	return (digit | alpha) & ~w & PS_HIGHS;
}

/* The index of the first byte flagged (high bit) in @m, which is not 0. */
static inline size_t first_flagged(uint64_t m)
{
	return (size_t)__builtin_ctzll(m) / 8;
}

static inline const char *skip_space(const char *p, const char *end)
{
	while (p < end && is_space(*p)) {
		p++;
		/* after a blank, spaces a word at a time */
		while (PS_WORDS && end - p >= 8) {
			uint64_t m = nonzero_bytes(load_word(p) ^ (PS_ONES * ' '));

			if (m) {
				p += first_flagged(m);
				break;
			}
			p += 8;
		}
	}
	return p;
}

/* The end of the hex digits at @p (@p itself when there are none). */
static inline const char *skip_hex(const char *p, const char *end)
{
	while (PS_WORDS && end - p >= 8) {
		uint64_t m = ~hex_bytes(load_word(p)) & PS_HIGHS;

		if (m)
			return p + first_flagged(m);
		p += 8;
	}
	while (p < end && hex_value(*p) >= 0)
		p++;
	return p;
}

/*
 * The last '(' in [@begin, @p), or NULL: memrchr() without the call, a
 * word at a time from the end (a frame line's module bracket is near it).
 */
static inline const char *last_paren(const char *begin, const char *p)
{
	while (PS_WORDS && p - begin >= 8) {
		uint64_t m =
		    ~nonzero_bytes(load_word(p - 8) ^ (PS_ONES * '(')) & PS_HIGHS;

		if (m)
			return p - 8 + (63 - __builtin_clzll(m)) / 8;
		p -= 8;
	}
	while (p > begin)
		if (*--p == '(')
			return p;
	return NULL;
}

/* After the last '/' or '\\' in [@begin, @p), or @begin when there is none. */
static inline const char *after_last_slash(const char *begin, const char *p)
{
	while (PS_WORDS && p - begin >= 8) {
		uint64_t w = load_word(p - 8);
		uint64_t m = ~(nonzero_bytes(w ^ (PS_ONES * '/')) &
			       nonzero_bytes(w ^ (PS_ONES * '\\'))) &
			     PS_HIGHS;

		if (m)
			return p - 8 + (63 - __builtin_clzll(m)) / 8 + 1;
		p -= 8;
	}
	while (p > begin && p[-1] != '/' && p[-1] != '\\')
		p--;
	return p;
}

/* The start of the hex digits that end at @p, not before @begin. */
static inline const char *skip_hex_back(const char *begin, const char *p)
{
	while (PS_WORDS && p - begin >= 8) {
		uint64_t m = ~hex_bytes(load_word(p - 8)) & PS_HIGHS;

		if (m) /* after the last byte that is no digit */
			return p - 8 + (63 - __builtin_clzll(m)) / 8 + 1;
		p -= 8;
	}
	while (p > begin && hex_value(p[-1]) >= 0)
		p--;
	return p;
}

/*
 * The first '\n' in [@p, @end), or NULL: memchr() without the call, 16
 * bytes at a time where SSE2 is there (a frame line is about 100 bytes:
 * the call and its set-up cost more than the search).
 */
static inline const char *find_nl(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');

	while (end - p >= 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		    _mm_loadu_si128((const __m128i *)(const void *)p), nl));

		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	return end > p ? memchr(p, '\n', (size_t)(end - p)) : NULL;
}

/*
 * Copy @n bytes from @src to @dst, which may be overwritten up to 15
 * bytes past @dst + @n; @src may be read up to 15 bytes past @src + @n
 * when that stays before @lim. Short copies without a call.
 */
static inline char *copy_short(char *dst, const char *src, size_t n, const char *lim)
{
#ifdef __SSE2__
	if (lim - src >= (ptrdiff_t)n + 16) {
		size_t o;

		for (o = 0; o < n; o += 16)
			_mm_storeu_si128(
			    (__m128i *)(void *)(dst + o),
			    _mm_loadu_si128((const __m128i *)(const void *)(src + o)));
		return dst + n;
	}
#else
	(void)lim;
#endif
	memcpy(dst, src, n);
	return dst + n;
}

static inline const char *trim_end(const char *p, const char *end)
{
	while (end > p && is_space(end[-1]))
		end--;
	return end;
}

/* Quote at most 40 bytes of a token for a message. */
static inline int quote_len(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && !is_space(*q))
		q++;
	return q - p > 40 ? 40 : (int)(q - p);
}

/* Weight of a sample at @from ended at @to, in ms (never negative). */
static inline double ms_between(int64_t from, int64_t to)
{
	return to > from ? (double)(to - from) / 1e6 : 0;
}

static inline int is_blank(const char *p, const char *end)
{
	return skip_space(p, end) == end;
}

/* --- import_perf_script.c: the driver ----------------------------------- */

/* Record a malformed-input error at the current line; returns -EINVAL. */
int hs__ps_fail(struct ps *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same for the event whose header is at @line. */
int hs__ps_fail_at(struct ps *ps, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record "out of memory" at the current line; returns -ENOMEM. */
int hs__ps_nomem(struct ps *ps);
/* The `Process <comm> (<pid>)` frame of @pid, seen with @comm (@len bytes). */
int hs__ps_process_frame(struct ps *ps, uint32_t pid, const char *comm, size_t len,
			 uint32_t *frame);
/* The `Thread (<tid>)` frame of @tid. */
int hs__ps_thread_frame(struct ps *ps, uint32_t tid, uint32_t *frame);
/* @proc -> @thread -> the event's frames (ps->frames), outermost first. */
int hs__ps_build_stack(struct ps *ps, uint32_t proc, uint32_t thread, uint32_t *stack);

/* Set up @ps to append the samples of @view to @out (errors to @diag). */
void hs__ps_init(struct ps *ps, enum hs_perf_view view, struct hs_stack_source *out,
		 struct hs_diag *diag, const struct hs__perf_symbols *syms);
/* Free what @ps holds (not out, diag or syms). */
void hs__ps_release(struct ps *ps);
/* Read every line and intern what is still pending; 0 or an error. */
int hs__ps_read_all(struct ps *ps);
/* The end: process names, weights, order, the metric's unit. */
int hs__ps_finish(struct ps *ps);
/*
 * CPU view: append a sample at @time (ns from the first event) on @cpu
 * (-1: none) with @stack; the previous sample on that CPU gets its weight.
 */
int hs__ps_add_cpu_sample(struct ps *ps, int64_t time, int64_t cpu, uint32_t stack);

/* --- import_perf_script_parts.c: a mapped file, in parts on all cores -- */

#define HS__PS_NOT_MAPPED 1 /* hs__ps_import_mapped(): not a regular file */

/*
 * Import @f's text from its current position by mapping the file: in
 * parts parsed on worker threads then merged in file order (CPU view,
 * no @syms), else in one part. Returns what hs__import_perf_script()
 * returns, or HS__PS_NOT_MAPPED (nothing done) when @f is no regular file
 * or cannot be mapped.
 */
int hs__ps_import_mapped(FILE *f, enum hs_perf_view view, struct hs_stack_source *out,
			 struct hs_diag *diag, const struct hs__perf_symbols *syms);

/* --- import_perf_script_parse.c: the line parser --------------------------- */

/* Decimal digits at *@pp (at least one) into *@v, at most @max; 0 or -1. */
int hs__ps_parse_uint(const char **pp, const char *end, uint64_t max, uint64_t *v);
/*
 * A header line `COMM PID[/TID] [CPU] SECONDS: [PERIOD] EVENT: details`
 * into @h (spans into the line). 0, or -1 with the reason in ps->msg.
 */
int hs__ps_parse_header(struct ps *ps, const char *line, const char *end,
			struct header *h);
/* The kind of the event whose header is @h. */
enum ps_kind hs__ps_event_kind(const struct header *h);
/*
 * "SYMBOL[+0xOFF] (MODULE)" (the text after a frame's address) into @ft
 * (spans into the text). 0, or hs__ps_fail()'s -EINVAL.
 */
int hs__ps_split_frame(struct ps *ps, const char *p, const char *end,
		       struct frame_text *ft);
/* An "[Assembly] symbol" token in map-file text: 1 and the spans, else 0. */
int hs__ps_assembly_token(const char *p, const char *end, const char **mod,
			  const char **mod_end, const char **sym, const char **sym_end);
/* jitted-<pid>.so's "[ret] [Assembly] Method(args)" to module and symbol. */
void hs__ps_jitted_rule(const char **mod, const char **mod_end, const char **sym,
			const char **sym_end);
/* A .NET tier suffix of the symbol ("Foo()[OptimizedTier1]") to ft->tier. */
void hs__ps_take_tier(struct frame_text *ft);
/* Whether the line is a `perf script -F +srcline` line under a frame. */
int hs__ps_is_srcline(const char *line, const char *end);
/* The value of the field "@key" in @p..@end (first, or last with @last); 0 or -1. */
int hs__ps_find_field(const char *p, const char *end, const char *key, int last,
		      const char **val, const char **val_end);

/* --- import_perf_script_threadtime.c: the thread-time view -------------- */

/* The thread-time state of @tid, created idle when missing. */
int hs__ps_get_thr(struct ps *ps, uint32_t tid, struct thr **t);
/* Intern a pseudo-frame once (CPU_TIME, BLOCKED_TIME, READIED_TIME). */
int hs__ps_special_frame(struct ps *ps, uint32_t *frame, const char *name);
/* @t runs again (or the trace ends) at @end: its wait becomes samples. */
int hs__ps_end_wait(struct ps *ps, struct thr *t, int64_t end);
/* Any event of a thread shows it running: its wait is over. */
int hs__ps_thread_ran(struct ps *ps, const struct ps_event *ev);
/* The handlers of the scheduler events in the thread-time view. */
int hs__ps_on_sched_switch(struct ps *ps, const struct ps_event *ev);
int hs__ps_on_sched_exit(struct ps *ps, const struct ps_event *ev);
int hs__ps_on_sched_wakeup(struct ps *ps, const struct ps_event *ev);
#endif
