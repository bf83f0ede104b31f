/*
 * import_perf_script - `perf script` text to a stack source, streaming
 * (perfview-semantics.md §9 and §10).
 *
 * The input is a series of events, each a header line
 *
 *	COMM PID[/TID] [CPU] SECONDS: [PERIOD] EVENT: details
 *
 * followed by its call stack, one TAB-led frame line per frame, leaf
 * first; a blank line or the next header ends the event. Each event is
 * classified by kind (kinds[] below) and handed, with its frames, to that
 * kind's handler. CPU samples become samples whose stack is
 * `Process <comm> (<pid>)` -> `Thread (<tid>)` -> outermost frame ... leaf
 * and whose metric is the time in ms to the next CPU sample on the same
 * CPU (the last sample of each CPU is dropped). The other kinds are
 * recognised and, in the CPU view, ignored.
 *
 * The thread-time view (HS_PERF_THREAD_TIME, docs/perf.md) is a state
 * machine of its own: import_perf_script_threadtime.c. Header and frame
 * lines are parsed by import_perf_script_parse.c; import_perf_script.h
 * maps the three files.
 *
 * The samples are put in time order at the end.
 *
 * Speed: lines are parsed in place, from the mapped file (a regular
 * file, import_perf_script_parts.c, which also parses a big one in parts
 * on all cores) or from a block line reader (a stream).
 * What costs is memory latency: every frame line looks its name up in the
 * frame table and its (frame, caller) pair up in the stack table, which
 * holds millions of stacks, and each lookup waits for a cache miss. So
 * the lookups are batched and their memory fetched ahead, which lets the
 * misses overlap: an event's frame names are queued and interned together
 * at its end (resolve_frames()), and in the CPU view a batch of samples'
 * stacks is interned together (flush_samples()). The order of interning
 * is that of the text, so ids are the same as interning line by line. A
 * sample's stack reuses the interned prefix it shares with the previous
 * sample. Nothing is allocated per line once the tables are warm. (A
 * cache keyed by the raw frame text was measured slower: it holds every
 * distinct return address and sampled IP, far more entries than there
 * are frames.) In the CPU view of a mapped file, whole stacks are
 * memoized by the bytes of their frame lines ("whole stacks memoized"
 * below): a sample whose lines were seen before is neither split nor
 * looked up frame by frame, and HEAPSCOPE_PARSE_MEMO=0 turns that off;
 * most are found by their "fast keys", whose lines after the first few
 * are compared as raw bytes, without a pass over each line's fields.
 *
 * Process names are final only at the end (a pid's threads may have
 * several COMM values): each pid's process frame is interned at first
 * sight under its first name and renamed at the end if that changed.
 */
#include "io/import_perf_script.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct ps;
typedef int (*ps_handler)(struct ps *ps, const struct ps_event *ev);

static int on_cpu_sample(struct ps *ps, const struct ps_event *ev);
static int on_ignored(struct ps *ps, const struct ps_event *ev);

/*
 * What each kind does at the end of its event, in each view, and what its
 * frame lines become. (A sched_wakeup read after a sched_waking keeps no
 * frames: start_event.)
 */
static const struct {
	ps_handler finish[2];
	enum ps_frames frames[2];
} kinds[PS__NR_KINDS] = {
    [PS_CPU] = {{on_cpu_sample, on_cpu_sample}, {FR_KEEP, FR_KEEP}},
    [PS_SCHED_SWITCH] = {{on_ignored, hs__ps_on_sched_switch}, {FR_NONE, FR_KEEP}},
    [PS_SCHED_EXEC] = {{on_ignored, on_ignored}, {FR_NONE, FR_NONE}},
    [PS_SCHED_EXIT] = {{on_ignored, hs__ps_on_sched_exit}, {FR_NONE, FR_NONE}},
    [PS_SCHED_WAKING] = {{on_ignored, hs__ps_on_sched_wakeup}, {FR_NONE, FR_WAKER}},
    [PS_SCHED_WAKEUP] = {{on_ignored, hs__ps_on_sched_wakeup}, {FR_NONE, FR_WAKER}},
    [PS_BLOCK_ISSUE] = {{on_ignored, on_ignored}, {FR_NONE, FR_NONE}},
    [PS_BLOCK_COMPLETE] = {{on_ignored, on_ignored}, {FR_NONE, FR_NONE}},
    [PS_IRQ_ENTRY] = {{on_ignored, on_ignored}, {FR_NONE, FR_NONE}},
    [PS_IRQ_EXIT] = {{on_ignored, on_ignored}, {FR_NONE, FR_NONE}},
};

/* Record a malformed-input error at the current line; returns -EINVAL. */
int hs__ps_fail(struct ps *ps, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hs_diag_set(ps->diag, ps->lr.lineno, "%s%s", buf,
		    ps->lr.last_had_newline ? "" : " (the file ends here: cut off?)");
	return -EINVAL;
}

/* The same for the event whose header is at @line. */
int hs__ps_fail_at(struct ps *ps, uint64_t line, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hs_diag_set(ps->diag, line, "%s", buf);
	return -EINVAL;
}

int hs__ps_nomem(struct ps *ps)
{
	hs_diag_set(ps->diag, ps->lr.lineno, "out of memory");
	return -ENOMEM;
}

#define READIED_SUFFIX " (READIED_BY)"

/*
 * Queue "module!symbol" for @ft to be interned at the end of the event
 * (resolve_frames()); a waker's frame in the thread-time view gets
 * READIED_SUFFIX. The frame pushed next (push_frame()) is its place.
 */
static int queue_frame_text(struct ps *ps, const struct frame_text *ft)
{
	size_t ml = (size_t)(ft->mod_end - ft->mod), sl = (size_t)(ft->sym_end - ft->sym);
	size_t tl = ft->tier ? (size_t)(ft->tier_end - ft->tier) + 2 : 0;
	int readied = ps->ev.frames == FR_WAKER;
	size_t xl = readied ? sizeof(READIED_SUFFIX) - 1 : 0;
	size_t len = ml + tl + sl + xl + 1;
	struct pending_frame *pf;
	char *p;

	if (HS_GROW(ps->fpend, ps->nr_fpend + 1, ps->alloc_fpend) ||
	    hs_buf_grow(&ps->fnames, len + 1))
		return hs__ps_nomem(ps);
	pf = &ps->fpend[ps->nr_fpend++];
	pf->off = ps->fnames.len;
	pf->len = len;
	pf->line = ps->lr.lineno;
	p = ps->fnames.s + ps->fnames.len;
	memcpy(p, ft->mod, ml);
	p += ml;
	*p++ = '!';
	if (tl) {
		*p++ = '[';
		memcpy(p, ft->tier, tl - 2);
		p += tl - 2;
		*p++ = ']';
	}
	memcpy(p, ft->sym, sl);
	memcpy(p + sl, READIED_SUFFIX, xl);
	ps->fnames.len += len;
	ps->fnames.s[ps->fnames.len] = '\0';
	return 0;
}

/*
 * Intern the event's queued frame names into ps->frames, in order. The
 * frame table is small but its lookups miss the CPU caches one after the
 * other: prefetching every name's slot, entry and bytes first lets them
 * overlap.
 */
static int resolve_frames(struct ps *ps)
{
	struct hs_strtab *t = &ps->out->frames;
	size_t k, n = ps->nr_fpend;
	int stage, err;

	HS_BUG_ON(n != ps->nr_frames);
	for (k = 0; k < n; k++) {
		struct pending_frame *pf = &ps->fpend[k];

		pf->hash = hs_hash_bytes(ps->fnames.s + pf->off, pf->len);
	}
	for (stage = 0; stage < 3; stage++)
		for (k = 0; k < n; k++)
			hs_strtab_prefetch(t, ps->fpend[k].hash, stage);
	for (k = 0; k < n; k++) {
		const struct pending_frame *pf = &ps->fpend[k];

		err = hs_strtab_intern_hashed(t, ps->fnames.s + pf->off, pf->len,
					      pf->hash, &ps->frames[k]);
		if (err == -ENOMEM) {
			hs_diag_set(ps->diag, pf->line, "out of memory");
			return err;
		}
		if (err) {
			hs_diag_set(ps->diag, pf->line, "too many frame names");
			return err;
		}
	}
	ps->nr_fpend = 0;
	hs_buf_reset(&ps->fnames);
	return 0;
}

/* A frame perf left unknown: ask the symbol files beside the trace. */
static int resolve_unknown(struct ps *ps, uint64_t addr, struct frame_text *ft, int *hit)
{
	const char *sym, *mod, *m, *me, *y, *ye;
	size_t sym_len, mod_len;
	int ret;

	ret = ps->syms->lookup(ps->syms->ctx, ps->ev.pid, addr, ft->mod,
			       (size_t)(ft->mod_end - ft->mod), &sym, &sym_len, &mod,
			       &mod_len);
	if (ret < 0) {
		hs_diag_set(ps->diag, ps->lr.lineno,
			    "cannot read the trace's symbol maps");
		return ret;
	}
	*hit = ret > 0;
	if (!ret)
		return 0;
	y = skip_space(sym, sym + sym_len);
	ye = trim_end(y, sym + sym_len);
	if (hs__ps_assembly_token(y, ye, &m, &me, &y, &ye)) {
		ft->mod = m;
		ft->mod_end = me;
	} else {
		ft->mod = mod;
		ft->mod_end = mod + mod_len;
	}
	ft->sym = y;
	ft->sym_end = ye;
	hs__ps_take_tier(ft);
	hs__ps_jitted_rule(&ft->mod, &ft->mod_end, &ft->sym, &ft->sym_end);
	return 0;
}

/* Append @frame to the event's frames. */
static int push_frame(struct ps *ps, uint32_t frame)
{
	if (ps->nr_frames >= MAX_FRAMES)
		return hs__ps_fail(ps, "more than %d frames in one stack", MAX_FRAMES);
	if (HS_GROW(ps->frames, ps->nr_frames + 1, ps->alloc_frames))
		return hs__ps_nomem(ps);
	ps->frames[ps->nr_frames++] = frame;
	return 0;
}

/*
 * perf (without --no-inline) prints the functions inlined at an address
 * as "ADDRESS SYMBOL (inlined)" lines, innermost first, usually followed
 * by the host function's own frame at the same address. Such frames wait
 * in ps->inl (each an 8-byte address, then the symbol and a NUL) for the
 * next frame with a module: those at its address @addr take its module
 * @mod..@mod_end; the others (perf printed no host for them) keep the
 * module "inlined", as PerfView reads them.
 */
static int flush_inlined(struct ps *ps, uint64_t addr, const char *mod,
			 const char *mod_end)
{
	static const char inl[] = "inlined";
	struct frame_text ft = {0};
	size_t off = 0, n;
	uint64_t at;
	int err;

	while (off < ps->inl.len) {
		memcpy(&at, ps->inl.s + off, sizeof(at));
		off += sizeof(at);
		n = strlen(ps->inl.s + off);
		ft.sym = ps->inl.s + off;
		ft.sym_end = ft.sym + n;
		off += n + 1;
		ft.mod = mod && at == addr ? mod : inl;
		ft.mod_end = mod && at == addr ? mod_end : inl + sizeof(inl) - 1;
		err = push_frame(ps, NO_ID);
		if (!err)
			err = queue_frame_text(ps, &ft);
		if (err)
			return err;
	}
	hs_buf_reset(&ps->inl);
	ps->nr_inl = 0;
	return 0;
}

/*
 * A TAB-led frame line: "ADDRESS SYMBOL[+0xOFF] (MODULE)". Appends its
 * frame to ps->frames when the event's kind wants frames.
 */
static int read_frame(struct ps *ps, const char *line, const char *end)
{
	const char *a = skip_space(line, end), *p = skip_hex(a, end), *text;
	struct frame_text ft;
	uint64_t addr, digits = 0;
	int err, hit = 0;

	if (p - a <= 16)
		for (text = a; text < p; text++)
			digits = digits << 4 | (uint64_t)hex_value(*text);
	addr = digits; /* digits in a register: addr's address is taken */
	if (p - a > 16 || (p < end && !is_space(*p)))
		return hs__ps_fail(ps, "bad frame address '%.*s' (expected hex)",
				   quote_len(a, end), a);
	text = skip_space(p, end);
	end = trim_end(text, end);
	if (text == end)
		return hs__ps_fail(
		    ps, "frame line has no 'SYMBOL (MODULE)' after the address");
	err = hs__ps_split_frame(ps, text, end, &ft);
	if (err || ps->ev.frames == FR_NONE)
		return err;
	if (ft.inlined) {
		if (ps->nr_frames + ps->nr_inl >= MAX_FRAMES)
			return hs__ps_fail(ps, "more than %d frames in one stack",
					   MAX_FRAMES);
		if (hs_buf_add(&ps->inl, (const char *)&addr, sizeof(addr)) ||
		    hs_buf_add(&ps->inl, ft.sym, (size_t)(ft.sym_end - ft.sym)) ||
		    hs_buf_addc(&ps->inl, '\0'))
			return hs__ps_nomem(ps);
		ps->nr_inl++;
		return 0;
	}
	if (ft.unknown && ps->syms) {
		err = resolve_unknown(ps, addr, &ft, &hit);
		if (err)
			return err;
	}
	if (ps->inl.len) {
		err = flush_inlined(ps, addr, ft.mod, ft.mod_end);
		if (err)
			return err;
	}
	err = push_frame(ps, NO_ID);
	return err ? err : queue_frame_text(ps, &ft);
}

/* ---- processes, threads, stacks ---- */

static int proc_add_comm(struct ps *ps, struct proc *pr, uint32_t pid, const char *comm,
			 size_t len)
{
	size_t before = hs_strtab_count(&ps->comms);
	uint32_t id;
	int n;

	hs_buf_reset(&ps->name);
	n = hs_buf_addf(&ps->name, "%d:", (int)pid);
	if (n || hs_buf_add(&ps->name, comm, len) ||
	    hs_strtab_intern(&ps->comms, ps->name.s, ps->name.len, &id))
		return hs__ps_nomem(ps);
	pr->comm = hs_strtab_get(&ps->comms, id) + (ps->name.len - len);
	pr->comm_len = len;
	if (id < before)
		return 0; /* this pid had that name before */
	if (HS_GROW(ps->comm_next, (size_t)id + 1, ps->alloc_comm_next))
		return hs__ps_nomem(ps);
	ps->comm_next[id] = NO_ID;
	if (pr->nr_comms)
		ps->comm_next[pr->last] = id;
	else
		pr->first = id;
	pr->last = id;
	pr->nr_comms++;
	return 0;
}

/* The process frame of @pid, noting @comm as one of its names. */
int hs__ps_process_frame(struct ps *ps, uint32_t pid, const char *comm, size_t len,
			 uint32_t *frame)
{
	struct proc *pr;
	uint64_t *v;
	int err, added;

	v = hs_u64map_ref(&ps->pids, pid, 0, &added);
	if (!v)
		return hs__ps_nomem(ps);
	if (!*v) {
		if (HS_GROW(ps->procs, ps->nr_procs + 1, ps->alloc_procs))
			return hs__ps_nomem(ps);
		pr = &ps->procs[ps->nr_procs++];
		memset(pr, 0, sizeof(*pr));
		pr->pid = pid;
		*v = ps->nr_procs;
		err = proc_add_comm(ps, pr, pid, comm, len);
		if (err)
			return err;
		hs_buf_reset(&ps->name);
		/* no frame line's name lacks a '!': a placeholder is unique */
		if (ps->proc_placeholders
			? hs_buf_addf(&ps->name, "\001%u", (unsigned)pid)
			: hs_buf_adds(&ps->name, "Process ") ||
			      hs_buf_add(&ps->name, comm, len) ||
			      hs_buf_addf(&ps->name, " (%d)", (int)pid))
			return hs__ps_nomem(ps);
		err =
		    hs_source_intern_frame(ps->out, ps->name.s, ps->name.len, &pr->frame);
		if (err)
			return err == -ENOMEM ? hs__ps_nomem(ps) : err;
	}
	pr = &ps->procs[*v - 1];
	if (len != pr->comm_len || memcmp(comm, pr->comm, len)) {
		err = proc_add_comm(ps, pr, pid, comm, len);
		if (err)
			return err;
	}
	*frame = pr->frame;
	return 0;
}

int hs__ps_thread_frame(struct ps *ps, uint32_t tid, uint32_t *frame)
{
	uint64_t *v;
	char name[32];
	uint32_t id;
	int err, n, added;

	v = hs_u64map_ref(&ps->tids, tid, 0, &added);
	if (!v)
		return hs__ps_nomem(ps);
	if (!*v) {
		n = snprintf(name, sizeof(name), "Thread (%d)", (int)tid);
		err = hs_source_intern_frame(ps->out, name, (size_t)n, &id);
		if (err)
			return err == -ENOMEM ? hs__ps_nomem(ps) : err;
		*v = (uint64_t)id + 1;
	}
	*frame = (uint32_t)(*v - 1);
	return 0;
}

/*
 * Intern the stack Process -> Thread -> @frames (@n of them, leaf first),
 * reusing the prefix it shares with the previous stack built. Errors are
 * told at @line.
 */
static int build_path(struct ps *ps, uint32_t proc, uint32_t thread,
		      const uint32_t *frames, size_t nr, uint64_t line, uint32_t *stack)
{
	size_t n = nr + 2, i = 0;
	uint32_t s = HS_NO_STACK, f;
	int err;

	if (HS_GROW(ps->path_frame, n, ps->alloc_path) ||
	    HS_GROW(ps->path_stack, n, ps->alloc_path2)) {
		hs_diag_set(ps->diag, line, "out of memory");
		return -ENOMEM;
	}
	for (;; i++) {
		if (i == n) {
			*stack = ps->path_stack[n - 1];
			ps->path_len = n;
			return 0;
		}
		f = i == 0 ? proc : i == 1 ? thread : frames[n - 1 - i];
		if (i >= ps->path_len || ps->path_frame[i] != f)
			break;
	}
	if (i)
		s = ps->path_stack[i - 1];
	for (; i < n; i++) {
		f = i == 0 ? proc : i == 1 ? thread : frames[n - 1 - i];
		err = hs_source_intern_stack(ps->out, f, s, &s);
		if (err) {
			ps->path_len = 0;
			if (err == -ENOMEM)
				hs_diag_set(ps->diag, line, "out of memory");
			return err;
		}
		ps->path_frame[i] = f;
		ps->path_stack[i] = s;
	}
	ps->path_len = n;
	*stack = s;
	return 0;
}

/*
 * Intern the stack Process -> Thread -> frames (outermost first), reusing
 * the prefix it shares with the previous sample's stack.
 */
int hs__ps_build_stack(struct ps *ps, uint32_t proc, uint32_t thread, uint32_t *stack)
{
	return build_path(ps, proc, thread, ps->frames, ps->nr_frames, ps->lr.lineno,
			  stack);
}

#define SAMPLE_BATCH 32 /* CPU samples whose stacks are interned together */

/* Frame @i of pending sample @ps_ from the root: process, thread, outermost... */
static inline uint32_t pending_frame_at(const struct ps *ps,
					const struct pending_sample *p, size_t i)
{
	return i == 0	? p->proc
	       : i == 1 ? p->thread
			: ps->spend_frames[p->off + p->n + 1 - i];
}

/*
 * Intern the stacks of the pending samples, in order, and set them. The
 * stack table is large and each level's lookup depends on the one above
 * it, so one sample's lookups wait for memory one after the other; first
 * walking all the batch's samples a level at a time, prefetching and
 * guessing each level's stack, overlaps those waits across samples. The
 * guesses only warm the caches: build_path() then interns each stack as
 * if alone, so the ids are those of interning the samples one by one.
 */
static int flush_samples(struct ps *ps)
{
	uint32_t guess[SAMPLE_BATCH];
	size_t k, level, nr = ps->nr_spend, alive = nr;
	int err;

	for (k = 0; k < nr; k++)
		guess[k] = HS_NO_STACK;
	for (level = 0; alive; level++) {
		for (k = 0; k < nr; k++) {
			const struct pending_sample *p = &ps->spend[k];

			if (level < p->n + 2 && (!level || guess[k] != HS_NO_STACK))
				hs_source_prefetch_stack(
				    ps->out, pending_frame_at(ps, p, level), guess[k]);
		}
		alive = 0;
		for (k = 0; k < nr; k++) {
			const struct pending_sample *p = &ps->spend[k];

			if (level >= p->n + 2 || (level && guess[k] == HS_NO_STACK))
				continue;
			guess[k] = hs_source_guess_stack(
			    ps->out, pending_frame_at(ps, p, level), guess[k]);
			alive += guess[k] != HS_NO_STACK;
		}
	}
	for (k = 0; k < nr; k++) {
		const struct pending_sample *p = &ps->spend[k];
		/* no sample of the batch may have a frame: then none is kept */
		const uint32_t *frames = p->n ? ps->spend_frames + p->off : NULL;
		uint32_t stack;

		err = build_path(ps, p->proc, p->thread, frames, p->n, p->line, &stack);
		if (err)
			return err;
		ps->out->stack[p->sample] = stack;
	}
	ps->nr_spend = 0;
	ps->nr_spend_frames = 0;
	return 0;
}

/* Queue sample @sample (CPU view) for its stack: @proc -> @thread -> frames. */
static int queue_sample(struct ps *ps, size_t sample, uint32_t proc, uint32_t thread)
{
	struct pending_sample *p;

	if (HS_GROW(ps->spend, ps->nr_spend + 1, ps->alloc_spend) ||
	    HS_GROW(ps->spend_frames, ps->nr_spend_frames + ps->nr_frames,
		    ps->alloc_spend_frames))
		return hs__ps_nomem(ps);
	p = &ps->spend[ps->nr_spend++];
	p->sample = sample;
	p->proc = proc;
	p->thread = thread;
	p->off = ps->nr_spend_frames;
	p->n = ps->nr_frames;
	p->line = ps->ev.line;
	if (ps->nr_frames)
		memcpy(ps->spend_frames + p->off, ps->frames,
		       ps->nr_frames * sizeof(*ps->frames));
	ps->nr_spend_frames += ps->nr_frames;
	return ps->nr_spend == SAMPLE_BATCH ? flush_samples(ps) : 0;
}

static int has_nul(struct ps *ps, const char *line, const char *end);

/*
 * ---- whole stacks memoized ----
 *
 * Samples repeat their stacks, and a stack's frame lines repeat their
 * text but for the addresses and the leaf's offset. In the CPU view of
 * a mapped text (no symbol files), the frame lines of a CPU sample, from
 * the first to the blank line that ends it, are looked up by a key made
 * of their bytes less what the parse ignores (memo_key_line()) before
 * they are parsed: a key seen before gives the frames it gave then,
 * without a split or a frame lookup, and with the same pid and tid the
 * stack it gave then, without a stack lookup. Only new keys are parsed,
 * and remembered (a copy of the key, the frames) once their event ended
 * well. Lines of one key give the same frames (the symbol hook that asks
 * by pid and address turns the memo off), the process and thread frames
 * depend on the pid and tid alone, and a hit interns nothing, which the
 * first occurrence did before: every id is the parse's. A text that is
 * not only frame lines up to a blank line (srclines, comments, a cut-off
 * end) is parsed. After every MEMO_CHECK lookups the memo turns itself off if fewer than
 * an eighth hit (profiles whose stacks never repeat), and it remembers
 * no new key once its keys take MEMO_MAX_BYTES (the frequent stacks come
 * early; a key is about two thirds of its text: 40 MiB hold as many
 * stacks as 64 MiB of the longer keys of before did). A text with a fast
 * key ("fast keys" below) is remembered by that alone, and only one that
 * has none gets a key: the keys hold the texts the fast keys do not take.
 */
#define MEMO_CHECK 16384
#define MEMO_MAX_BYTES ((size_t)40 << 20)
#define MEMO_RESOLVED (UINT64_C(1) << 63) /* memo_stacks: a stack id, not a sample */
#define MEMO_FAST_MAX ((size_t)64 << 20)  /* the fast keys' bytes, at most */
#define MEMO_FAST_SPAN 256		  /* raw bytes hashed after the head */
#define MEMO_FAST_HEAD 16		  /* lines of a head, at most */

static int memo_env(void)
{
	const char *s = getenv("HEAPSCOPE_PARSE_MEMO");

	return !s || strcmp(s, "0");
}

static void memo_release(struct ps *ps)
{
	size_t k;

	hs_idindex_release(&ps->memo_index);
	hs_free(ps->memo_texts);
	ps->memo_texts = NULL;
	ps->nr_memo_texts = ps->alloc_memo_texts = 0;
	if (ps->memo_keys)
		hs_map_free(ps->memo_keys, MEMO_MAX_BYTES);
	ps->memo_keys = NULL;
	ps->memo_keys_len = 0;
	for (k = 0; k < MEMO_AHEAD; k++) {
		hs_buf_release(&ps->memo_ahead[k].key);
		ps->memo_ahead[k].at = NULL;
	}
	hs_free(ps->memo_frames);
	ps->memo_frames = NULL;
	ps->nr_memo_frames = ps->alloc_memo_frames = 0;
	hs_u64map_release(&ps->memo_threads);
	hs_u64map_release(&ps->memo_stacks);
	hs_idindex_release(&ps->memo_fast_index);
	if (ps->memo_fast)
		hs_map_free(ps->memo_fast, MEMO_FAST_MAX);
	ps->memo_fast = NULL;
	ps->memo_fast_len = 0;
	hs_buf_release(&ps->memo_fast_key);
	ps->memo_fast_ok = 0;
}

struct memo_key {
	const char *p;
	size_t len;
};

static int memo_text_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct ps *ps = ctx;
	const struct memo_text *t = &ps->memo_texts[id];
	const struct memo_key *k = key;

	return t->len == k->len && !memcmp(ps->memo_keys + t->off, k->p, k->len);
}

/*
 * Append the key of frame line [@p, @nl) (after its TAB; @a is its first
 * byte that is not blank, before @nl) to @k: a tag
 * byte, the bytes the frame depends on, '\n'. 'a': the address is left
 * out (1 to 16 hex digits and the blanks around them, which the parse
 * only checks: without symbol files it uses an address only to match
 * inlined frames with their host); 'o': so are the digits of the
 * symbol's "+0x" offset, which the parse cuts off (the last "+0x" of
 * the symbol, not its start, followed by hex digits to its end; not in
 * map-file text, which the parse reads otherwise); 'r': the line as it
 * is (what the parse refuses or reads otherwise). In 'a' and 'o' keys a
 * module path "(/DIR/FILE)" is keyed as "(/FILE)": the parse keeps the
 * file name alone (after the last '/' or '\\'), and what is left out,
 * between "(/" and a separator, changes nothing in it (the brackets it
 * strips are the outer pair; ".map" and the file name lie after the last
 * separator), so keys are a third shorter (1.7 KB a stack instead of 2.5
 * in issue 17's profile). Returns 1 for an inlined frame (whose address
 * matters), else 0, or -ENOMEM.
 */
static int memo_key_line(struct hs_buf *k, const char *p, const char *a, const char *nl,
			 const char *lim)
{
	const char *q, *rest, *end, *lp, *se, *d, *m, *file, *from;
	char *w;

	/* 16 bytes more: copy_short() may write past what it copies */
	if (k->len + (size_t)(nl - p) + 3 + 16 > k->alloc &&
	    hs_buf_grow(k, (size_t)(nl - p) + 2 + 16))
		return -ENOMEM;
	w = k->s + k->len;
	q = skip_hex(a, nl);
	rest = skip_space(q, nl);
	end = trim_end(rest, nl);
	lp = end > rest && end[-1] == ')' ? last_paren(rest, end) : NULL;
	if (q == a || q - a > 16 || q == nl || !is_space(*q) || !lp) {
		*w++ = 'r';
		w = copy_short(w, p, (size_t)(nl - p), lim);
	} else if ((size_t)(end - lp) == 9 && !memcmp(lp, "(inlined)", 9)) {
		return 1;
	} else {
		se = trim_end(rest, lp);
		d = skip_hex_back(rest, se);
		/* the module as the parse reads it ends where brackets and blanks do */
		for (m = end;
		     m > lp && (*(m - 1) == ')' || *(m - 1) == ']' || is_space(m[-1]));
		     m--)
			;
		/* "(/DIR/FILE)": the module is FILE, whatever DIR is */
		file = lp[1] == '/' ? after_last_slash(lp + 2, end) : NULL;
		if (d < se && d - rest >= 4 && !memcmp(d - 3, "+0x", 3) &&
		    (m - lp < 4 || memcmp(m - 4, ".map", 4))) {
			*w++ = 'o';
			w = copy_short(w, rest, (size_t)(d - rest), lim);
			from = se;
		} else {
			*w++ = 'a';
			from = rest;
		}
		if (file) {
			w = copy_short(w, from, (size_t)(lp + 2 - from), lim);
			from = file;
		}
		w = copy_short(w, from, (size_t)(nl - from), lim);
	}
	*w++ = '\n';
	k->len = (size_t)(w - k->s);
	return 0;
}

/*
 * Key the frame lines that start at @at for the memo into @a
 * (memo_key_line() for each; the raw bytes when one is an inlined frame),
 * up to the blank line that ends them: a->ok is 0 when the memo does not
 * take them (no frame line, a line too long, or not ended by a blank
 * line). A function of the bytes of [@at, ps->mem_end) alone, so a key
 * made ahead is the key made in time; the NUL check is memo_try()'s.
 * Returns 0 or -ENOMEM.
 */
static int memo_scan(const struct ps *ps, const char *at, struct memo_ahead *a)
{
	const char *p = at, *end = ps->mem_end, *nl, *sp;
	struct hs_buf *k = &a->key;
	uint32_t lines = 0;
	int raw = 0, ret;

	a->at = at;
	a->ok = 0;
	hs_buf_reset(k);
	if (hs_buf_addc(k, '\001'))
		return -ENOMEM;
	while (p < end && *p == '\t') {
		nl = find_nl(p, end);
		if (!nl || (size_t)(nl - p) > MAX_LINE)
			return 0;
		sp = skip_space(p + 1, nl);
		if (sp == nl)
			break; /* blank */
		if (!raw) {
			ret = memo_key_line(k, p + 1, sp, nl, end);
			if (ret < 0)
				return -ENOMEM;
			raw = ret;
		}
		lines++;
		p = nl + 1;
	}
	if (!lines || p == end)
		return 0;
	nl = find_nl(p, end);
	if (!is_blank(p, nl ? nl : end))
		return 0;
	if (raw) {
		hs_buf_reset(k);
		if (hs_buf_addc(k, '\002') || hs_buf_add(k, at, (size_t)(p - at)))
			return -ENOMEM;
	}
	a->stop = p;
	a->lines = lines;
	a->hash = hs_hash_bytes(k->s, k->len);
	a->ok = 1;
	return 0;
}

/*
 * The frame lines of the CPU sample after the one whose key @a holds,
 * when the text goes on with its header right after @a's blank line;
 * else NULL. Only a guess of where a later sample's key starts: a key
 * is used when the parse meets its very first line.
 */
static const char *memo_next_lines(const struct ps *ps, const struct memo_ahead *a)
{
	const char *p = a->stop, *end = ps->mem_end, *nl;

	nl = find_nl(p, end); /* the blank line */
	if (!nl || ++nl == end || *nl == '\t' || *nl == '#' || *nl == '\n')
		return NULL;
	nl = find_nl(nl, end); /* the header */
	return nl && nl + 1 < end && nl[1] == '\t' ? nl + 1 : NULL;
}

/*
 * Fetch ahead what looking up key @a will read, stage @stage: 0 its
 * index slot, 1 its text's entry (the slot fetched before), 2 the first
 * bytes of that text's key (the entry fetched before). Nothing changes.
 */
static void memo_prefetch(const struct ps *ps, const struct memo_ahead *a, int stage)
{
	uint32_t id;

	if (!a->ok)
		return;
	if (stage == 0) {
		hs_idindex_prefetch(&ps->memo_index, a->hash);
		return;
	}
	/* the first slot of that fingerprint: most likely the text */
	id = hs_idindex_guess(&ps->memo_index, a->hash);
	if (id == HS_IDINDEX_NONE)
		return;
	if (stage == 1) {
		__builtin_prefetch(&ps->memo_texts[id]);
	} else {
		const struct memo_text *t = &ps->memo_texts[id];
		const char *b = ps->memo_keys + t->off;

		__builtin_prefetch(b);
		__builtin_prefetch(b + 64);
		__builtin_prefetch(b + 128);
		__builtin_prefetch(b + 192);
	}
}

/*
 * ---- fast keys ----
 *
 * Most of a sample's frame lines repeat byte for byte, addresses and
 * offsets included (return addresses); only the leaf's do not (the
 * sampled address), and a kernel stack's first user frame. A fast key
 * is the key of the head, the kernel frames' lines and the first line
 * after them (memo_key_line(), as in a key), then the raw bytes of the
 * other lines: the text is found by the hash of the head's key and of
 * the raw lines that end within MEMO_FAST_SPAN bytes, and a candidate is
 * the text when its head key and all its raw bytes are those of the
 * sample, up to a blank line. Equal raw bytes parse the same; so a fast
 * hit is a hit of the key (the whole key is never made, compared or
 * hashed: no pass over each line's fields, only a compare of the bytes
 * as they lie). A sample the fast keys miss is looked up by its key; a
 * text is given its fast key when it is remembered, while the fast
 * keys take less than MEMO_FAST_MAX bytes.
 */

/* Whether frame line [@p, @nl) is a kernel frame's. */
static int kernel_line(const char *p, const char *nl)
{
	static const char k[] = "([kernel.kallsyms])";
	size_t n = sizeof(k) - 1;

	return (size_t)(nl - p) >= n && !memcmp(nl - n, k, n);
}

/*
 * The fast key of the frame lines that start at @at into ps->memo_fast_*
 * (memo_fast_ok 0: none, when the head is not all frame lines that the
 * memo takes, or is more than MEMO_FAST_HEAD lines). 0 or -ENOMEM.
 */
static int memo_fast_scan(struct ps *ps, const char *at)
{
	const char *p = at, *end = ps->mem_end, *nl, *sp, *raw;
	struct hs_buf *k = &ps->memo_fast_key;
	uint32_t lines = 0;
	int ret, more = 1;

	ps->memo_fast_ok = 0;
	ps->memo_fast_at = at;
	hs_buf_reset(k);
	while (more) {
		if (p == end || *p != '\t' || lines == MEMO_FAST_HEAD)
			return 0;
		nl = find_nl(p, end);
		if (!nl || (size_t)(nl - p) > MAX_LINE)
			return 0;
		sp = skip_space(p + 1, nl);
		if (sp == nl)
			return 0; /* the text ends in its head: the key's */
		ret = memo_key_line(k, p + 1, sp, nl, end);
		if (ret)
			return ret < 0 ? -ENOMEM : 0; /* inlined: its address counts */
		more = kernel_line(p, nl);
		lines++;
		p = nl + 1;
	}
	raw = p;
	ps->memo_fast_head = k->len;
	ps->memo_fast_lines = lines;
	while (p < end && *p == '\t') {
		nl = find_nl(p, end);
		if (!nl || nl + 1 - raw > (ptrdiff_t)MEMO_FAST_SPAN ||
		    is_blank(p + 1, nl))
			break;
		p = nl + 1;
	}
	if (hs_buf_add(k, raw, (size_t)(p - raw)))
		return -ENOMEM;
	ps->memo_fast_raw = raw;
	ps->memo_fast_hash = hs_hash_bytes(k->s, k->len);
	ps->memo_fast_ok = 1;
	return 0;
}

/* The frames of remembered text @id become the sample's. 0 or -ENOMEM. */
static int memo_take(struct ps *ps, uint32_t id)
{
	const struct memo_text *t = &ps->memo_texts[id];

	if (HS_GROW(ps->frames, (size_t)t->nr_frames + 1, ps->alloc_frames))
		return -ENOMEM;
	memcpy(ps->frames, ps->memo_frames + t->frames_off,
	       t->nr_frames * sizeof(*ps->frames));
	ps->nr_frames = t->nr_frames;
	ps->memo_text = id;
	return 0;
}

/* Whether text @id's fast key is the one memo_fast_scan() just made. */
static int memo_fast_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct ps *ps = ctx;
	const struct memo_text *t = &ps->memo_texts[id];
	const char *stored = ps->memo_fast + t->fast_off, *raw = ps->memo_fast_raw;
	const char *stop = raw + t->fast_raw, *nl;

	(void)key;
	if (t->fast_head != ps->memo_fast_head ||
	    (size_t)(ps->mem_end - raw) <= t->fast_raw ||
	    memcmp(stored, ps->memo_fast_key.s, t->fast_head) ||
	    memcmp(stored + t->fast_head, raw, t->fast_raw))
		return 0;
	/* and the sample's frame lines end there, as the text's did */
	nl = find_nl(stop, ps->mem_end);
	return is_blank(stop, nl ? nl : ps->mem_end);
}

/*
 * The fast lookup of the CPU sample whose header was just read: on a hit
 * its lines are read (as memo_try()'s hit) and *@hit is 1. 0 or -ENOMEM.
 */
static int memo_fast_try(struct ps *ps, int *hit)
{
	const char *start = ps->mem, *stop;
	const struct memo_text *t;
	uint32_t id;

	*hit = 0;
	if (memo_fast_scan(ps, start))
		return hs__ps_nomem(ps);
	if (!ps->memo_fast_ok || !ps->memo_fast_len)
		return 0;
	id = hs_idindex_find(&ps->memo_fast_index, ps->memo_fast_hash, memo_fast_eq, ps,
			     NULL);
	if (id == HS_IDINDEX_NONE)
		return 0;
	t = &ps->memo_texts[id];
	stop = ps->memo_fast_raw + t->fast_raw;
	if (has_nul(ps, start, stop))
		return 0;
	if (memo_take(ps, id))
		return hs__ps_nomem(ps);
	ps->memo_lookups++;
	ps->memo_hits++;
	ps->memo_fast_hits++;
	ps->mem = stop;
	ps->lr.lineno += ps->memo_fast_lines + t->raw_lines;
	ps->lr.last_had_newline = 1;
	ps->after_frame = 1;
	*hit = 1;
	return 0;
}

/*
 * Whether the sample whose key memo_try() made last (ps->memo_at) has
 * the fast key memo_fast_scan() made, and it fits in MEMO_FAST_MAX.
 */
static int memo_fast_fits(const struct ps *ps)
{
	return ps->memo_fast_ok && ps->memo_fast_at == ps->memo_at &&
	       ps->memo_fast_len + ps->memo_fast_head +
		       (size_t)(ps->memo_stop - ps->memo_fast_raw) <=
		   MEMO_FAST_MAX;
}

/*
 * Give text @t (@id), just remembered from that sample (its frame lines
 * [memo_at, memo_stop), memo_lines of them), its fast key, which
 * memo_fast_fits(); @id goes in the fast index. 0 or -ENOMEM.
 */
static int memo_fast_add(struct ps *ps, struct memo_text *t, uint32_t id)
{
	size_t raw = (size_t)(ps->memo_stop - ps->memo_fast_raw);
	size_t n = ps->memo_fast_head + raw;

	HS_BUG_ON(!memo_fast_fits(ps));
	if (!ps->memo_fast && !(ps->memo_fast = hs_map_zeroed(MEMO_FAST_MAX)))
		return -ENOMEM;
	if (hs_idindex_insert(&ps->memo_fast_index, ps->memo_fast_hash, id))
		return -ENOMEM;
	HS_BUG_ON(ps->memo_fast_raw > ps->memo_stop ||
		  ps->memo_fast_lines > ps->memo_lines);
	t->fast_off = ps->memo_fast_len;
	t->fast_head = (uint32_t)ps->memo_fast_head;
	t->fast_raw = (uint32_t)raw;
	t->raw_lines = ps->memo_lines - ps->memo_fast_lines;
	memcpy(ps->memo_fast + ps->memo_fast_len, ps->memo_fast_key.s,
	       ps->memo_fast_head);
	memcpy(ps->memo_fast + ps->memo_fast_len + ps->memo_fast_head, ps->memo_fast_raw,
	       raw);
	ps->memo_fast_len += n;
	return 0;
}

/*
 * A CPU sample's header was just read: look its frame lines up by their
 * key (memo_scan()). A hit reads them (its frames into ps->frames,
 * ps->memo_text set); a miss keeps the key in ps->memo_ahead[] for
 * memo_add_text(); text the memo does not take is left to the parse as
 * it is. The keys of the next MEMO_AHEAD - 1 samples are made now (or
 * were made by the samples before), and their lookups' slot, text entry
 * and key bytes fetched a stage a sample, so that these misses overlap
 * the reading of the samples between instead of waiting one after the
 * other; the lookups themselves run in the text's order.
 */
static int memo_try(struct ps *ps)
{
	const char *start = ps->mem, *next;
	struct memo_ahead *ring = ps->memo_ahead, *a = NULL, *b;
	struct memo_key key;
	size_t k, d;
	uint32_t id;
	int hit, err;

	err = memo_fast_try(ps, &hit);
	if (err || hit)
		return err;
	for (k = 0; k < MEMO_AHEAD; k++)
		if (ring[k].at == start) {
			a = &ring[k];
			break;
		}
	if (!a) {
		/* not made ahead: start the ring here */
		for (k = 0; k < MEMO_AHEAD; k++)
			ring[k].at = NULL;
		a = &ring[0];
		ps->memo_next = 1;
		if (memo_scan(ps, start, a))
			return hs__ps_nomem(ps);
	}
	/*
	 * the samples ahead: make the missing keys, fetch a stage of each;
	 * not once there are fast keys, which find most texts: then the key
	 * is made for this sample alone
	 */
	for (b = a, d = 1; !ps->memo_fast_len && d < MEMO_AHEAD; d++) {
		next = b->ok ? memo_next_lines(ps, b) : NULL;
		if (!next)
			break;
		for (k = 0; k < MEMO_AHEAD && ring[k].at != next; k++)
			;
		if (k == MEMO_AHEAD) {
			k = ps->memo_next;
			ps->memo_next = (k + 1) % MEMO_AHEAD;
			if (&ring[k] == a) /* never the current key */
				break;
			if (memo_scan(ps, next, &ring[k]))
				return hs__ps_nomem(ps);
		}
		b = &ring[k];
		memo_prefetch(ps, b, (int)(MEMO_AHEAD - 1 - d));
	}
	if (!a->ok)
		return 0;
	/* a key leaves bytes out: a NUL among them is the parse's error */
	if (has_nul(ps, start, a->stop))
		return 0;
	key.p = a->key.s;
	key.len = a->key.len;
	ps->memo_hash = a->hash;
	ps->memo_lookups++;
	id = hs_idindex_find(&ps->memo_index, ps->memo_hash, memo_text_eq, ps, &key);
	if (id == HS_IDINDEX_NONE) {
		ps->memo_block = key.p;
		ps->memo_len = key.len;
		ps->memo_last_line = ps->lr.lineno + a->lines;
		ps->memo_at = start;
		ps->memo_stop = a->stop;
		ps->memo_lines = a->lines;
		return 0;
	}
	ps->memo_hits++;
	if (memo_take(ps, id))
		return hs__ps_nomem(ps);
	ps->mem = a->stop;
	ps->lr.lineno += a->lines;
	ps->lr.last_had_newline = 1;
	ps->after_frame = 1;
	return 0;
}

/* Remember the missed text of the event ending now, with its frames: its id. */
static int memo_add_text(struct ps *ps, uint32_t *text)
{
	struct memo_key key = {ps->memo_block, ps->memo_len};
	struct memo_text *t;
	size_t pos;

	if (ps->nr_memo_texts >= NO_ID ||
	    hs_idindex_reserve(&ps->memo_index, ps->nr_memo_texts + 1) ||
	    HS_GROW(ps->memo_texts, ps->nr_memo_texts + 1, ps->alloc_memo_texts) ||
	    HS_GROW(ps->memo_frames, ps->nr_memo_frames + ps->nr_frames + 1,
		    ps->alloc_memo_frames))
		return hs__ps_nomem(ps);
	*text = (uint32_t)ps->nr_memo_texts;
	t = &ps->memo_texts[ps->nr_memo_texts++];
	t->hash = ps->memo_hash;
	t->off = t->len = 0; /* no key (yet) */
	t->fast_head = 0;    /* no fast key (yet) */
	t->frames_off = ps->nr_memo_frames;
	t->nr_frames = (uint32_t)ps->nr_frames;
	memcpy(ps->memo_frames + ps->nr_memo_frames, ps->frames,
	       ps->nr_frames * sizeof(*ps->frames));
	ps->nr_memo_frames += ps->nr_frames;
	/* a text with a fast key is found by it alone */
	if (memo_fast_fits(ps))
		return memo_fast_add(ps, t, *text) ? hs__ps_nomem(ps) : 0;
	/*
	 * The keys' room is mapped once, whole: its pages are had as they are
	 * first written (in huge pages: hits compare keys anywhere in it), and
	 * no key is ever copied to a bigger buffer.
	 */
	if (!ps->memo_keys && !(ps->memo_keys = hs_map_zeroed(MEMO_MAX_BYTES)))
		return hs__ps_nomem(ps);
	HS_BUG_ON(ps->memo_keys_len + ps->memo_len > MEMO_MAX_BYTES);
	pos = hs_idindex_slot(&ps->memo_index, ps->memo_hash, memo_text_eq, ps, &key);
	HS_BUG_ON(hs_idindex_at(&ps->memo_index, pos) != HS_IDINDEX_NONE);
	t->off = ps->memo_keys_len;
	t->len = ps->memo_len;
	memcpy(ps->memo_keys + ps->memo_keys_len, ps->memo_block, ps->memo_len);
	ps->memo_keys_len += ps->memo_len;
	hs_idindex_set(&ps->memo_index, pos, ps->memo_hash, *text);
	return 0;
}

/*
 * CPU view: the sample of event @ev (frames in ps->frames), its process
 * @proc and thread @thread, through the memo. *@done is 1 when the sample
 * was added with a known stack, else 0 and *@slot (or NULL) is where its
 * index goes once it is queued.
 */
static int memo_sample(struct ps *ps, const struct ps_event *ev, uint64_t **slot,
		       int *done)
{
	uint32_t text = ps->memo_text, stack;
	uint64_t *v, key;
	int added;

	*slot = NULL;
	*done = 0;
	if (text == NO_ID) {
		/* parsed: remember it if the memo's text was the whole stack */
		if (!ps->memo_block || ps->lr.lineno != ps->memo_last_line + 1 ||
		    (!memo_fast_fits(ps) &&
		     ps->memo_keys_len + ps->memo_len > MEMO_MAX_BYTES))
			return 0;
		int err = memo_add_text(ps, &text);

		if (err)
			return err;
	}
	v = hs_u64map_ref(&ps->memo_threads, (uint64_t)ev->pid << 32 | ev->tid,
			  hs_u64map_count(&ps->memo_threads), &added);
	if (!v)
		return hs__ps_nomem(ps);
	key = (uint64_t)text << 32 | (uint32_t)*v;
	v = hs_u64map_ref(&ps->memo_stacks, key, 0, &added);
	if (!v)
		return hs__ps_nomem(ps);
	if (added) {
		*slot = v;
		return 0;
	}
	if (*v & MEMO_RESOLVED) {
		stack = (uint32_t)*v;
	} else {
		size_t sample = (size_t)*v;

		/* that sample's stack may still be queued: intern the queue */
		if (ps->nr_spend && sample >= ps->spend[0].sample) {
			int err = flush_samples(ps);

			if (err)
				return err;
		}
		stack = ps->out->stack[sample];
		*v = MEMO_RESOLVED | stack;
	}
	*done = 1;
	return hs__ps_add_cpu_sample(ps, ev->time, ev->cpu, stack);
}

/* After every MEMO_CHECK lookups: off if fewer than an eighth hit. */
static void memo_check(struct ps *ps)
{
	if (ps->memo_lookups < MEMO_CHECK || ps->memo_lookups % MEMO_CHECK)
		return;
	if (ps->memo_hits * 8 >= ps->memo_lookups)
		return;
	ps->memo_on = 0;
	memo_release(ps);
}

/* ---- event handlers ---- */

static int on_ignored(struct ps *ps, const struct ps_event *ev)
{
	(void)ps;
	(void)ev;
	return 0;
}

/* "S.UUUUUU" seconds of event time @t (ns from the first event) into @buf. */
static const char *seconds(const struct ps *ps, int64_t t, char buf[32])
{
	uint64_t ns = (uint64_t)(t + ps->base);

	snprintf(buf, 32, "%llu.%06llu", (unsigned long long)(ns / 1000000000u),
		 (unsigned long long)(ns % 1000000000u / 1000u));
	return buf;
}

/*
 * The thread-time view reads the scheduler's events in the order given,
 * so it refuses a CPU whose samples go back in time (a CPU sample there
 * ends at the next one on its CPU, or at its thread's switch-out).
 */
static int out_of_order(struct ps *ps, const struct ps_event *ev, int64_t prev)
{
	char now_s[32], prev_s[32];

	seconds(ps, ev->time, now_s);
	seconds(ps, prev, prev_s);
	if (ev->cpu < 0)
		return hs__ps_fail_at(ps, ev->line,
				      "sample at %s s is earlier than the one "
				      "before it (%s s): the thread-time view needs the "
				      "events in time order (perf script prints them so)",
				      now_s, prev_s);
	return hs__ps_fail_at(
	    ps, ev->line,
	    "sample at %s s on CPU %lld is earlier than the "
	    "one before it on that CPU (%s s): the thread-time view needs "
	    "the events in time order (perf script prints them so)",
	    now_s, (long long)ev->cpu, prev_s);
}

/*
 * A CPU sample: metric pending (NAN) until the next sample on its CPU
 * ends it (or, in the thread-time view, its thread's switch-out or exit);
 * the previous sample on this CPU gets its weight now. In the CPU view,
 * samples that go back in time on their CPU are weighed again at the end
 * (reweigh_per_cpu()); the thread-time view refuses them.
 */
static int on_cpu_sample(struct ps *ps, const struct ps_event *ev)
{
	struct hs_stack_source *out = ps->out;
	uint32_t proc, thread, stack;
	struct thr *t;
	uint64_t *last;
	int err, added;

	err = hs__ps_process_frame(ps, ev->pid, ps->comm.s, ps->comm.len, &proc);
	if (!err)
		err = hs__ps_thread_frame(ps, ev->tid, &thread);
	/* the CPU view's stacks are interned in batches (queue_sample()) */
	if (!err && ps->tt)
		err = hs__ps_build_stack(ps, proc, thread, &stack);
	if (!err && ps->tt) {
		err = hs__ps_special_frame(ps, &ps->cpu_time_frame, HS_FRAME_CPU_TIME);
		if (!err)
			err = hs_source_intern_stack(out, ps->cpu_time_frame, stack,
						     &stack);
		if (err)
			return err == -ENOMEM ? hs__ps_nomem(ps) : err;
	}
	if (err)
		return err;
	if (!ps->tt) {
		uint64_t *memo_slot = NULL;
		int done = 0;

		if (ps->memo_on) {
			err = memo_sample(ps, ev, &memo_slot, &done);
			if (err || done)
				return err;
		}
		err = hs__ps_add_cpu_sample(ps, ev->time, ev->cpu, HS_NO_STACK);
		if (err)
			return err;
		if (memo_slot)
			*memo_slot = out->nr_samples - 1;
		return queue_sample(ps, out->nr_samples - 1, proc, thread);
	}
	last = hs_u64map_ref(&ps->cpus, (uint64_t)(ev->cpu + 1), 0, &added);
	if (!last)
		return hs__ps_nomem(ps);
	if (*last) {
		size_t prev = *last - 1;

		if (ev->time < out->time[prev])
			return out_of_order(ps, ev, out->time[prev]);
		if (isnan(out->metric[prev]))
			out->metric[prev] = ms_between(out->time[prev], ev->time);
	}
	if (hs_source_add_sample(out, ev->time, NAN, 1, stack))
		return hs__ps_nomem(ps);
	*last = out->nr_samples;
	err = hs__ps_get_thr(ps, ev->tid, &t);
	if (err)
		return err;
	t->last_cpu = out->nr_samples;
	return 0;
}

int hs__ps_add_cpu_sample(struct ps *ps, int64_t time, int64_t cpu, uint32_t stack)
{
	struct hs_stack_source *out = ps->out;
	uint64_t *last;
	int added;

	last = hs_u64map_ref(&ps->cpus, (uint64_t)(cpu + 1), 0, &added);
	if (!last)
		return hs__ps_nomem(ps);
	if (*last) {
		size_t prev = *last - 1;

		/* weighed at the end, in time order (reweigh_per_cpu()) */
		if (time < out->time[prev])
			ps->cpu_unordered = 1;
		out->metric[prev] = (double)(time - out->time[prev]) / 1e6;
	}
	if (HS_GROW(ps->sample_cpu, out->nr_samples - ps->first_sample + 1,
		    ps->alloc_sample_cpu))
		return hs__ps_nomem(ps);
	if (hs_source_add_sample(out, time, NAN, 1, stack))
		return hs__ps_nomem(ps);
	ps->sample_cpu[out->nr_samples - 1 - ps->first_sample] = (uint32_t)(cpu + 1);
	*last = out->nr_samples;
	return 0;
}

/* End the current event, if any: hand it to its kind's handler. */
static int end_event(struct ps *ps)
{
	int err;

	if (!ps->in_event)
		return 0;
	ps->in_event = 0;
	ps->after_frame = 0;
	if (ps->inl.len) {
		err = flush_inlined(ps, 0, NULL, NULL);
		if (err)
			return err;
	}
	/* a memo hit's frames are known */
	err = ps->memo_text == NO_ID ? resolve_frames(ps) : 0;
	if (err)
		return err;
	if (ps->tt) {
		err = hs__ps_thread_ran(ps, &ps->ev);
		if (err)
			return err;
	}
	err = kinds[ps->ev.kind].finish[ps->tt](ps, &ps->ev);
	ps->nr_frames = 0;
	ps->memo_text = NO_ID;
	ps->memo_block = NULL;
	ps->memo_fast_ok = 0;
	if (ps->memo_on)
		memo_check(ps);
	return err;
}

static int copy_span(struct hs_buf *b, const char *p, const char *end)
{
	hs_buf_reset(b);
	return hs_buf_add(b, p, (size_t)(end - p));
}

/* A header line (not TAB-led, not blank) starts a new event. */

static int start_event(struct ps *ps, const char *line, const char *end)
{
	struct header h;
	int err;

	if (hs__ps_parse_header(ps, line, end, &h)) {
		if (ps->after_frame && hs__ps_is_srcline(line, end))
			return 0;
		return hs__ps_fail(ps, "%s", ps->msg);
	}
	err = end_event(ps);
	if (err)
		return err;
	if (!ps->have_base) {
		ps->have_base = 1;
		ps->base = h.time;
	}
	if (h.time - ps->base > ps->last_time)
		ps->last_time = h.time - ps->base;
	ps->ev.kind = hs__ps_event_kind(&h);
	ps->ev.frames = kinds[ps->ev.kind].frames[ps->tt];
	if (ps->ev.kind == PS_SCHED_WAKING)
		ps->seen_waking = 1;
	else if (ps->ev.kind == PS_SCHED_WAKEUP && ps->seen_waking)
		ps->ev.frames = FR_NONE; /* not the waker's stack, maybe */
	ps->ev.pid = (uint32_t)h.pid;
	ps->ev.tid = (uint32_t)h.tid;
	ps->ev.cpu = h.cpu;
	ps->ev.time = h.time - ps->base;
	ps->ev.line = ps->lr.lineno;
	if (copy_span(&ps->comm, h.comm, h.comm_end))
		return hs__ps_nomem(ps);
	if (ps->ev.kind != PS_CPU && (copy_span(&ps->event, h.event, h.event_end) ||
				      copy_span(&ps->details, h.details, h.details_end)))
		return hs__ps_nomem(ps);
	ps->in_event = 1;
	return 0;
}

/* ---- the end: process names, dropped samples ---- */

static int is_ignored_name(const char *s, size_t n)
{
	static const char *const ignored[] = {
	    ".NET Finalizer",
	    ".NET Tiered Compilation Worker",
	    ".NET BGC",
	    ".NET Server GC",
	};
	size_t i;

	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (strlen(ignored[i]) == n && !memcmp(ignored[i], s, n))
			return 1;
	return 0;
}

/*
 * A pid seen with several COMM values is named by all of them joined with
 * ';' in order of first sight, leaving out the .NET helper-thread names
 * unless nothing else is left.
 */
static int name_processes(struct ps *ps)
{
	size_t i;
	int pass, added, err;

	for (i = 0; i < ps->nr_procs; i++) {
		struct proc *pr = &ps->procs[i];
		const char *colon;
		uint32_t id;

		if (pr->nr_comms < 2)
			continue;
		hs_buf_reset(&ps->name);
		if (hs_buf_adds(&ps->name, "Process "))
			return hs__ps_nomem(ps);
		added = 0;
		for (pass = 0; pass < 2 && !added; pass++) {
			for (id = pr->first; id != NO_ID; id = ps->comm_next[id]) {
				const char *s = hs_strtab_get(&ps->comms, id);
				size_t n = hs_strtab_len(&ps->comms, id);

				colon = memchr(s, ':', n);
				n -= (size_t)(colon + 1 - s);
				s = colon + 1;
				if (!pass && is_ignored_name(s, n))
					continue;
				if ((added && hs_buf_addc(&ps->name, ';')) ||
				    hs_buf_add(&ps->name, s, n))
					return hs__ps_nomem(ps);
				added = 1;
			}
		}
		colon = hs_strtab_get(&ps->comms, pr->first);
		if (hs_buf_addf(&ps->name, " (%.*s)", (int)(strchr(colon, ':') - colon),
				colon))
			return hs__ps_nomem(ps);
		err =
		    hs_source_rename_frame(ps->out, pr->frame, ps->name.s, ps->name.len);
		/* -EEXIST: a real frame has this very name; keep the first one */
		if (err == -ENOMEM)
			return hs__ps_nomem(ps);
		if (err && err != -EEXIST)
			return err;
	}
	return 0;
}

/* Drop the samples still without a weight: the last one of each CPU. */
static void drop_unweighted(struct hs_stack_source *out)
{
	size_t i, j = 0;

	for (i = 0; i < out->nr_samples; i++) {
		if (isnan(out->metric[i]))
			continue;
		out->time[j] = out->time[i];
		out->metric[j] = out->metric[i];
		out->count[j] = out->count[i];
		out->stack[j] = out->stack[i];
		j++;
	}
	out->nr_samples = j;
}

/* Order of samples by time, then by index (a stable sort). */
static int by_time(const void *a, const void *b, void *src)
{
	const int64_t *time = ((const struct hs_stack_source *)src)->time;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t ti = time[i], tj = time[j];

	if (ti != tj)
		return ti < tj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Put the samples in time order (blocked periods come out at their end). */
static int sort_samples(struct hs_stack_source *out)
{
	size_t n = out->nr_samples, i, sorted = 1;
	size_t *perm;
	void *tmp;

	for (i = 1; i < n && sorted; i++)
		sorted = out->time[i - 1] <= out->time[i];
	if (sorted)
		return 0;
	perm = hs_malloc(n * sizeof(*perm));
	tmp = hs_malloc(n * 8);
	if (!perm || !tmp) {
		hs_free(perm);
		hs_free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		perm[i] = i;
	qsort_r(perm, n, sizeof(*perm), by_time, out);
#define PERMUTE(arr, type)                                                               \
	do {                                                                             \
		type *t_ = tmp;                                                          \
		for (i = 0; i < n; i++)                                                  \
			t_[i] = (arr)[perm[i]];                                          \
		memcpy((arr), t_, n * sizeof(type));                                     \
	} while (0)
	PERMUTE(out->time, int64_t);
	PERMUTE(out->metric, double);
	PERMUTE(out->count, double);
	PERMUTE(out->stack, uint32_t);
#undef PERMUTE
	hs_free(perm);
	hs_free(tmp);
	return 0;
}

/* Order of this import's samples (indices from ps->first_sample): CPU, time, index. */
static int by_cpu_time(const void *a, const void *b, void *arg)
{
	const struct ps *ps = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	uint32_t ci = ps->sample_cpu[i], cj = ps->sample_cpu[j];
	int64_t ti = ps->out->time[ps->first_sample + i];
	int64_t tj = ps->out->time[ps->first_sample + j];

	if (ci != cj)
		return ci < cj ? -1 : 1;
	if (ti != tj)
		return ti < tj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/*
 * CPU view, some CPU's samples out of time order: weigh every sample of
 * this import again, as the time to the next sample on its CPU in time
 * order (the last of each CPU left without a weight, dropped as usual),
 * and count times from the earliest sample.
 */
static int reweigh_per_cpu(struct ps *ps)
{
	struct hs_stack_source *out = ps->out;
	int64_t *time = out->time + ps->first_sample;
	double *metric = out->metric + ps->first_sample;
	size_t n = out->nr_samples - ps->first_sample, k;
	size_t *perm = hs_malloc((n ? n : 1) * sizeof(*perm));
	int64_t earliest = 0;

	if (!perm)
		return hs__ps_nomem(ps);
	for (k = 0; k < n; k++)
		perm[k] = k;
	qsort_r(perm, n, sizeof(*perm), by_cpu_time, ps);
	for (k = 0; k < n; k++) {
		size_t i = perm[k], next = k + 1 < n ? perm[k + 1] : 0;

		if (k + 1 < n && ps->sample_cpu[next] == ps->sample_cpu[i])
			metric[i] = (double)(time[next] - time[i]) / 1e6;
		else
			metric[i] = NAN;
		if (time[i] < earliest)
			earliest = time[i];
	}
	for (k = 0; k < n; k++)
		time[k] -= earliest;
	hs_free(perm);
	return 0;
}

int hs__ps_finish(struct ps *ps)
{
	int err = name_processes(ps);
	size_t i;

	for (i = 0; !err && i < ps->nr_thrs; i++)
		err = hs__ps_end_wait(ps, &ps->thrs[i], ps->last_time);
	if (err)
		return err;
	if (ps->cpu_unordered) {
		err = reweigh_per_cpu(ps);
		if (err)
			return err;
	}
	drop_unweighted(ps->out);
	if ((ps->tt || ps->cpu_unordered) && sort_samples(ps->out))
		return hs__ps_nomem(ps);
	ps->out->kind = HS_METRIC_TIME;
	hs_free(ps->out->metric_unit);
	ps->out->metric_unit = hs_strdup("ms");
	return ps->out->metric_unit ? 0 : hs__ps_nomem(ps);
}

#define DROP_BYTES ((size_t)8 << 20)

/*
 * The mapped pages read before @upto leave the process: a file's pages
 * would otherwise add up in its RSS. (They stay in the page cache; a page
 * read again would just be mapped again.)
 */
static void drop_read(struct ps *ps, const char *upto)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = (uintptr_t)ps->mem_kept & ~(page - 1);
	uintptr_t to = (uintptr_t)upto & ~(page - 1);

	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
	ps->mem_kept = upto;
}

/*
 * The next line into *@line (*@len bytes, without its '\n' and a '\r'
 * before it): 1, 0 at the end, -E2BIG for an overlong line (nothing
 * consumed) or -EIO. From the mapped bytes, nothing is copied.
 */
static int next_line(struct ps *ps, const char **line, size_t *len)
{
	const char *p = ps->mem, *nl;
	size_t n;

	if (!ps->mapped) {
		char *l;
		int ret = hs_linereader_next(&ps->lr, &l, len);

		*line = l;
		return ret;
	}
	if (p == ps->mem_end)
		return 0;
	nl = find_nl(p, ps->mem_end);
	n = nl ? (size_t)(nl - p) : (size_t)(ps->mem_end - p);
	if (n > MAX_LINE)
		return -E2BIG;
	ps->lr.last_had_newline = nl != NULL;
	ps->mem = nl ? nl + 1 : ps->mem_end;
	if ((size_t)(p - ps->mem_kept) >= DROP_BYTES)
		drop_read(ps, p);
	if (n && p[n - 1] == '\r')
		n--;
	*line = p;
	*len = n;
	ps->lr.lineno++;
	return 1;
}

#define NUL_SCAN ((size_t)256 << 10)

/* Whether [@line, @end), the line just read, holds a NUL byte. */
static int has_nul(struct ps *ps, const char *line, const char *end)
{
	const char *from, *nul;
	size_t n;

	if (!ps->mapped)
		return memchr(line, '\0', (size_t)(end - line)) != NULL;
	/* a search per 256 KiB of mapped bytes, not one per line */
	if (ps->mem_nul && ps->mem_nul >= line)
		return ps->mem_nul < end;
	while (ps->mem_clean < end) {
		from = ps->mem_clean > line ? ps->mem_clean : line;
		n = (size_t)(ps->mem_end - from);
		nul = memchr(from, '\0', n < NUL_SCAN ? n : NUL_SCAN);
		if (nul) {
			ps->mem_nul = nul;
			return nul < end;
		}
		ps->mem_clean = from + (n < NUL_SCAN ? n : NUL_SCAN);
	}
	return 0;
}

/* The bytes not read yet start with @s (@n bytes). */
static int unread_starts_with(const struct ps *ps, const char *s, size_t n)
{
	if (ps->mapped)
		return (size_t)(ps->mem_end - ps->mem) >= n && !memcmp(ps->mem, s, n);
	return ps->lr.end - ps->lr.start >= n && !memcmp(ps->lr.buf + ps->lr.start, s, n);
}

static int read_lines(struct ps *ps)
{
	const char *line, *end;
	size_t len;
	int ret, first = ps->first_part, err;

	while ((ret = next_line(ps, &line, &len)) > 0) {
		end = line + len;
		if (first) {
			first = 0;
			if (len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3))
				line += 3;
			if (end - line >= 7 && !memcmp(line, "PERFILE", 7))
				return hs__ps_fail(ps,
						   "this is a binary perf.data file: "
						   "convert it with 'perf script -i FILE "
						   "> FILE.data.txt'");
		}
		if (has_nul(ps, line, end))
			return hs__ps_fail(ps,
					   "NUL byte in a line: not perf script text");
		if (line[0] == '\t' && !is_blank(line, end)) {
			if (!ps->in_event)
				return hs__ps_fail(
				    ps, "frame line outside a sample (no "
					"header line since the last blank line)");
			err = read_frame(ps, line + 1, end);
			if (err)
				return err;
			ps->after_frame = 1;
			continue;
		}
		if (is_blank(line, end)) {
			err = end_event(ps);
			if (err)
				return err;
			continue;
		}
		if (line[0] == '#')
			continue;
		err = start_event(ps, line, end);
		/* a header (not a srcline) of a CPU sample */
		if (!err && ps->memo_on && ps->mapped && ps->in_event &&
		    ps->ev.line == ps->lr.lineno && ps->ev.kind == PS_CPU)
			err = memo_try(ps);
		if (err)
			return err;
	}
	if (ret == -E2BIG && ps->first_part && !ps->lr.lineno &&
	    unread_starts_with(ps, "PERFILE", 7)) {
		hs_diag_set(ps->diag, 1,
			    "this is a binary perf.data file: convert it "
			    "with 'perf script -i FILE > FILE.data.txt'");
		return -EINVAL;
	}
	if (ret == -E2BIG) {
		hs_diag_set(ps->diag, ps->lr.lineno + 1, "line longer than %zu bytes",
			    (size_t)MAX_LINE);
		return -EINVAL;
	}
	if (ret < 0) {
		hs_diag_set(ps->diag, ps->lr.lineno + 1, "read error");
		return ret;
	}
	return end_event(ps);
}

int hs__ps_read_all(struct ps *ps)
{
	int err = read_lines(ps);

	return err ? err : flush_samples(ps);
}

void hs__ps_release(struct ps *ps)
{
	hs_linereader_release(&ps->lr);
	hs_buf_release(&ps->name);
	hs_buf_release(&ps->comm);
	hs_buf_release(&ps->event);
	hs_buf_release(&ps->details);
	hs_buf_release(&ps->inl);
	hs_free(ps->frames);
	hs_buf_release(&ps->fnames);
	hs_free(ps->fpend);
	hs_free(ps->spend);
	hs_free(ps->spend_frames);
	hs_u64map_release(&ps->pids);
	hs_free(ps->procs);
	hs_strtab_release(&ps->comms);
	hs_free(ps->comm_next);
	hs_u64map_release(&ps->tids);
	hs_u64map_release(&ps->cpus);
	hs_free(ps->sample_cpu);
	hs_u64map_release(&ps->thr_index);
	hs_free(ps->thrs);
	hs_free(ps->path_frame);
	hs_free(ps->path_stack);
	memo_release(ps);
}

void hs__ps_init(struct ps *ps, enum hs_perf_view view, struct hs_stack_source *out,
		 struct hs_diag *diag, const struct hs__perf_symbols *syms)
{
	size_t k;

	memset(ps, 0, sizeof(*ps));
	ps->out = out;
	ps->diag = diag;
	ps->syms = syms;
	ps->tt = view == HS_PERF_THREAD_TIME;
	ps->first_part = 1;
	ps->first_sample = out->nr_samples;
	ps->cpu_time_frame = ps->blocked_frame = ps->ready_frame = NO_ID;
	ps->memo_on = !ps->tt && !syms && memo_env();
	ps->memo_text = NO_ID;
	hs_idindex_init(&ps->memo_index);
	hs_idindex_init(&ps->memo_fast_index);
	hs_buf_init(&ps->memo_fast_key);
	for (k = 0; k < MEMO_AHEAD; k++)
		hs_buf_init(&ps->memo_ahead[k].key);
	hs_buf_init(&ps->name);
	hs_buf_init(&ps->comm);
	hs_buf_init(&ps->event);
	hs_buf_init(&ps->details);
	hs_buf_init(&ps->inl);
	hs_buf_init(&ps->fnames);
	hs_strtab_init(&ps->comms, 0);
}

int hs__import_perf_script(FILE *f, enum hs_perf_view view, struct hs_stack_source *out,
			   struct hs_diag *diag, const struct hs__perf_symbols *syms)
{
	struct ps *ps;
	int err;

	err = hs__ps_import_mapped(f, view, out, diag, syms);
	if (err != HS__PS_NOT_MAPPED)
		return err;
	ps = hs_malloc(sizeof(*ps));
	if (!ps) {
		hs_diag_set(diag, 0, "out of memory");
		return -ENOMEM;
	}
	hs__ps_init(ps, view, out, diag, syms);
	err = hs_linereader_init(&ps->lr, f, MAX_LINE);
	if (err)
		err = hs__ps_nomem(ps);
	if (!err)
		err = hs__ps_read_all(ps);
	if (!err)
		err = hs__ps_finish(ps);
	hs__ps_release(ps);
	hs_free(ps);
	return err;
}

int hs_import_perf_script(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs__import_perf_script(f, HS_PERF_CPU, out, diag, NULL);
}

int hs_import_perf_script_view(FILE *f, enum hs_perf_view view,
			       struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs__import_perf_script(f, view, out, diag, NULL);
}
