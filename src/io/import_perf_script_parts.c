/*
 * import_perf_script_parts - a `perf script` file read from a mapping, and
 * a big one parsed on all cores (import_perf_script.h maps the importer's
 * files).
 *
 * The file is mapped read-only and its lines are read in place: no copy
 * into a buffer, no per-line work but the parse. In the CPU view (without
 * symbol files, whose hook is not thread-safe) a big file is cut into
 * parts at blank lines, one part per online CPU. A blank line ends every
 * event, so a part starts as the serial parse is after that line: with
 * no event open. The calling thread parses the first part straight into
 * the caller's stack source; worker threads parse the others, each into
 * a stack source of its own whose frame and stack ids follow first sight
 * within the part. The parts are then merged in file order: a part's
 * frames, then its stacks (callers before callees, as ids go), are
 * interned into the caller's source in their local id order, which is
 * the order in which the serial parse meets them after the parts before,
 * so every frame id, stack id and sample is the serial parse's. A process
 * frame's name is its pid's first name in the whole file, which a later
 * part cannot know: there a process frame is a placeholder named by the
 * pid, and the merge maps it to the real one and adds the part's names of
 * that pid, in order. A merged sample is weighed as the serial parse
 * weighs it (the time to the next sample on its CPU), as it is appended.
 * An error is the first one in file order, at its line in the whole file.
 *
 * The merge runs beside the parse: a worker parses its part a chunk at a
 * time (about CHUNK_BYTES, ended at a blank line like a part) and hands
 * each chunk's new frames, processes, comms, stacks and samples over as
 * copies (its tables move as they grow), which the calling thread merges,
 * in order, as soon as the parts before are in. So that the calling thread
 * ends with the workers, its own first part is the smaller by what the
 * merges cost it (hs__ps_first_part_bytes()): at the end only the last chunk's
 * merge is left, not a whole part's.
 *
 * A file that shrinks while it is mapped (truncated, or rewritten in
 * place) makes a read past its new end fault with SIGBUS. Every read of
 * the mapping (read_guarded()) runs under a SIGBUS handler that turns
 * such a fault, in that thread and inside the mapping, into the error
 * "the file shrank while it was read" at the line being read; any other
 * SIGBUS goes to the action there was before, which is put back once no
 * mapped import runs.
 *
 * HEAPSCOPE_PARSE_THREADS=N sets the threads (1: one part, no thread),
 * HEAPSCOPE_PARSE_PART_BYTES=N the size parts are cut near (every part,
 * the first too) and HEAPSCOPE_PARSE_CHUNK_BYTES=N the size of the chunks
 * (tests use tiny parts and chunks so that every boundary case is met).
 *
 * Ownership: the mapping, the parts, their sources and chunks live for
 * one import; a chunk is the worker's until it is queued, then the
 * merger's, which frees it once merged; the caller's source gets the
 * merged model.
 */
#include "io/import_perf_script.h"
#include "common/alloc.h"
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MIN_PART_BYTES ((size_t)32 << 20) /* smaller files: one part */
#define CHUNK_BYTES ((size_t)32 << 20)	  /* a part is handed over in these */
/*
 * The merge of a part's chunks costs the merging thread about this share
 * of what parsing them cost (bench/README.md, perfopen3: 0.9 s against
 * 6.7 s of CPU for the second half of issue 17's 6.2 GB script), in
 * thousandths.
 */
#define MERGE_PER_MILLE 135

/*
 * What a part's parse added to its source in one chunk of its text, copied
 * (the part's tables move as they grow) for the merger: its new frames'
 * names, its new processes (their placeholder frame and first comm id),
 * its new comms ("PID:COMM", with the next comm id of the same pid as
 * known at the chunk's end), stacks and samples, all in local id order.
 */
struct chunk {
	struct chunk *next;
	size_t frame0, nr_frames; /* local ids [frame0, frame0 + nr_frames) */
	struct hs_buf names;	  /* their names, one after the other */
	uint32_t *name_len;
	size_t nr_procs;
	uint32_t *proc_pid, *proc_frame, *proc_first;
	size_t comm0, nr_comms;
	struct hs_buf comms;
	uint32_t *comm_len, *comm_next;
	size_t stack0, nr_stacks;
	uint32_t *stack_frame, *stack_caller;
	size_t nr_samples;
	int64_t *time;
	uint32_t *cpu, *stack;
	int have_base;
	int64_t base;
};

struct part {
	const char *start, *end; /* its bytes in the mapping */
	struct hs_stack_source src;
	struct ps ps;
	struct hs_diag diag;
	int err;
	int done; /* parsed (err and diag say how), under parts.lock */
	/* chunks parsed and not merged yet, oldest first, under parts.lock */
	struct chunk *head, *tail;
	/* the part's counts at the last chunk's end (the parsing thread's) */
	size_t nr_frames, nr_procs, nr_comms, nr_stacks, nr_samples;
};

struct parts {
	struct part *part;
	size_t nr;
	size_t next;	    /* the next part nobody parses yet, under lock */
	int stop;	    /* an error: parse no more parts */
	size_t chunk_bytes; /* a part is handed over in chunks of about this */
	pthread_mutex_t lock;
	pthread_cond_t done; /* a part is parsed or a chunk is ready */
};

/* ---- reads of a mapping that may shrink ---- */

struct bus_guard {
	const char *lo, *hi; /* the mapping */
	sigjmp_buf jump;
};

static __thread struct bus_guard *bus_guard; /* this thread's read, or NULL */
static pthread_mutex_t bus_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t bus_users; /* mapped imports running, under bus_lock */
static struct sigaction bus_before;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct bus_guard *g = bus_guard;
	const char *at = si->si_addr;
	struct sigaction dfl;

	if (g && at >= g->lo && at < g->hi)
		siglongjmp(g->jump, 1);
	if (bus_before.sa_flags & SA_SIGINFO) {
		bus_before.sa_sigaction(sig, si, uc);
		return;
	}
	if (bus_before.sa_handler != SIG_DFL && bus_before.sa_handler != SIG_IGN) {
		bus_before.sa_handler(sig);
		return;
	}
	/* the default action: the faulting read faults again on return */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
}

static void bus_watch(void)
{
	struct sigaction sa;

	pthread_mutex_lock(&bus_lock);
	if (!bus_users++) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &bus_before);
	}
	pthread_mutex_unlock(&bus_lock);
}

static void bus_unwatch(void)
{
	pthread_mutex_lock(&bus_lock);
	if (!--bus_users)
		sigaction(SIGBUS, &bus_before, NULL);
	pthread_mutex_unlock(&bus_lock);
}

/*
 * @read(@arg), which reads the mapping [@lo, @hi) for @ps: its result, or
 * -EIO with ps->diag set when the file shrank under the read. What the
 * read allocates hangs from @ps or @arg at every read of the mapping, so
 * a read cut short is released as one that failed.
 */
static int read_guarded(struct ps *ps, const char *lo, const char *hi,
			int (*read)(void *arg), void *arg)
{
	struct bus_guard g = {.lo = lo, .hi = hi};
	int err;

	if (sigsetjmp(g.jump, 1)) {
		bus_guard = NULL;
		hs_diag_set(ps->diag, ps->lr.lineno + 1,
			    "the file shrank while it was read (truncated or "
			    "rewritten meanwhile?)");
		return -EIO;
	}
	bus_guard = &g;
	err = read(arg);
	bus_guard = NULL;
	return err;
}

static int read_all(void *ps)
{
	return hs__ps_read_all(ps);
}

/* hs__ps_read_all(@ps) of its mapped bytes, under read_guarded(). */
static int read_mapped(struct ps *ps)
{
	return read_guarded(ps, ps->mem, ps->mem_end, read_all, ps);
}

/* A positive number from the environment variable @name, else @dflt. */
static size_t env_size(const char *name, size_t dflt)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return dflt;
	v = strtoull(s, &end, 10);
	return *end || !v ? dflt : (size_t)v;
}

static size_t nr_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = env_size("HEAPSCOPE_PARSE_THREADS", cpus > 0 ? (size_t)cpus : 1);

	return n > MAX_THREADS ? MAX_THREADS : n;
}

/*
 * The bytes of a text of @bytes that the calling thread parses itself
 * when @threads parse it (@part_bytes each, evenly): less than the others,
 * since it also merges their parts while they parse, so that it ends when
 * they do. With a share s of the text and the others (1 - s) / (n - 1)
 * each, s + m (1 - s) = (1 - s) / (n - 1) for a merge cost m per byte
 * parsed; at least an eighth of an even part, which is all it takes
 * once the others' merges alone would keep it busy (m >= 1 / (n - 1)).
 */
size_t hs__ps_first_part_bytes(size_t bytes, size_t threads, size_t part_bytes)
{
	double m = MERGE_PER_MILLE / 1000.0, o, share;
	size_t first, floor = part_bytes / 8;

	assert(threads >= 2);
	o = 1.0 / (double)(threads - 1);
	/* from 9 threads on, merging alone keeps the caller busy: o <= m */
	if (o <= m)
		return floor;
	share = (o - m) / (1.0 + o - m);
	assert(share > 0.0 && share < 1.0);
	first = (size_t)(share * (double)bytes);
	return first < floor ? floor : first;
}

/*
 * The end of the first blank line that starts at or after @from (a line
 * start) in [@from, @end), or NULL.
 */
static const char *after_blank_line(const char *from, const char *end)
{
	const char *p = from, *nl;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return NULL;
		if (is_blank(p, nl))
			return nl + 1;
		p = nl + 1;
	}
	return NULL;
}

/* Where a mapped text is cut into parts: at[0, nr) start them, at[nr] ends. */
struct cuts {
	const char *start, *end;
	size_t first_bytes, part_bytes; /* the first part's target, the others' */
	const char **at;		/* owned */
	size_t nr, alloc;
};

/*
 * Cut [c->start, c->end) into parts of about c->part_bytes, each ending
 * after a blank line (the last one at the end), into c->at. Returns 0 or
 * -ENOMEM.
 */
static int cut_parts(void *arg)
{
	struct cuts *c = arg;
	const char *start = c->start, *end = c->end, *from = start, *nl, *cut;
	size_t k;

	for (k = 1;; k++) {
		if (HS_GROW(c->at, c->nr + 2, c->alloc))
			return -ENOMEM;
		c->at[c->nr++] = from;
		/* from the first line that starts at or after the target */
		if (c->first_bytes >= (size_t)(end - start) ||
		    (k > 1 &&
		     c->part_bytes > ((size_t)(end - start) - c->first_bytes) / (k - 1)))
			break; /* the target is past the end */
		nl = start + c->first_bytes + (k - 1) * c->part_bytes - 1;
		if (nl + 1 < from)
			nl = from - 1; /* the blank line's '\n' */
		nl = memchr(nl, '\n', (size_t)(end - nl));
		cut = nl ? after_blank_line(nl + 1, end) : NULL;
		if (!cut || cut == end)
			break;
		from = cut;
	}
	c->at[c->nr] = end;
	return 0;
}

static void chunk_free(struct chunk *ch)
{
	if (!ch)
		return;
	hs_buf_release(&ch->names);
	hs_buf_release(&ch->comms);
	hs_free(ch->name_len);
	hs_free(ch->proc_pid);
	hs_free(ch->proc_frame);
	hs_free(ch->proc_first);
	hs_free(ch->comm_len);
	hs_free(ch->comm_next);
	hs_free(ch->stack_frame);
	hs_free(ch->stack_caller);
	hs_free(ch->time);
	hs_free(ch->cpu);
	hs_free(ch->stack);
	hs_free(ch);
}

/* An array of @n elements of @size (at least one), or NULL. */
static void *chunk_array(size_t n, size_t size)
{
	return hs_malloc((n ? n : 1) * size);
}

/*
 * What part @pt's parse added since its last chunk, copied into a new
 * chunk (*@out), the part's counts moved on. 0 or -ENOMEM.
 */
static int take_chunk(struct part *pt, struct chunk **out)
{
	const struct hs_stack_source *src = &pt->src;
	const struct ps *lp = &pt->ps;
	struct chunk *ch = hs_calloc(1, sizeof(*ch));
	size_t nf = hs_source_nr_frames(src), nc = hs_strtab_count(&lp->comms), i;

	*out = NULL;
	if (!ch)
		return -ENOMEM;
	hs_buf_init(&ch->names);
	hs_buf_init(&ch->comms);
	ch->frame0 = pt->nr_frames;
	ch->nr_frames = nf - pt->nr_frames;
	ch->nr_procs = lp->nr_procs - pt->nr_procs;
	ch->comm0 = pt->nr_comms;
	ch->nr_comms = nc - pt->nr_comms;
	ch->stack0 = pt->nr_stacks;
	ch->nr_stacks = src->nr_stacks - pt->nr_stacks;
	ch->nr_samples = src->nr_samples - pt->nr_samples;
	ch->name_len = chunk_array(ch->nr_frames, sizeof(*ch->name_len));
	ch->proc_pid = chunk_array(ch->nr_procs, sizeof(*ch->proc_pid));
	ch->proc_frame = chunk_array(ch->nr_procs, sizeof(*ch->proc_frame));
	ch->proc_first = chunk_array(ch->nr_procs, sizeof(*ch->proc_first));
	ch->comm_len = chunk_array(ch->nr_comms, sizeof(*ch->comm_len));
	ch->comm_next = chunk_array(ch->nr_comms, sizeof(*ch->comm_next));
	ch->stack_frame = chunk_array(ch->nr_stacks, sizeof(*ch->stack_frame));
	ch->stack_caller = chunk_array(ch->nr_stacks, sizeof(*ch->stack_caller));
	ch->time = chunk_array(ch->nr_samples, sizeof(*ch->time));
	ch->cpu = chunk_array(ch->nr_samples, sizeof(*ch->cpu));
	ch->stack = chunk_array(ch->nr_samples, sizeof(*ch->stack));
	if (!ch->name_len || !ch->proc_pid || !ch->proc_frame || !ch->proc_first ||
	    !ch->comm_len || !ch->comm_next || !ch->stack_frame || !ch->stack_caller ||
	    !ch->time || !ch->cpu || !ch->stack)
		goto nomem;
	for (i = 0; i < ch->nr_frames; i++) {
		uint32_t id = (uint32_t)(ch->frame0 + i);

		ch->name_len[i] = (uint32_t)hs_strtab_len(&src->frames, id);
		if (hs_buf_add(&ch->names, hs_source_frame_name(src, id),
			       ch->name_len[i]))
			goto nomem;
	}
	for (i = 0; i < ch->nr_procs; i++) {
		const struct proc *pr = &lp->procs[pt->nr_procs + i];

		ch->proc_pid[i] = pr->pid;
		ch->proc_frame[i] = pr->frame;
		ch->proc_first[i] = pr->first;
	}
	for (i = 0; i < ch->nr_comms; i++) {
		uint32_t id = (uint32_t)(ch->comm0 + i);

		ch->comm_len[i] = (uint32_t)hs_strtab_len(&lp->comms, id);
		ch->comm_next[i] = lp->comm_next[id];
		if (hs_buf_add(&ch->comms, hs_strtab_get(&lp->comms, id),
			       ch->comm_len[i]))
			goto nomem;
	}
	/* (a table with nothing in it yet may be NULL) */
	if (ch->nr_stacks) {
		memcpy(ch->stack_frame, src->stack_frame + ch->stack0,
		       ch->nr_stacks * sizeof(*ch->stack_frame));
		memcpy(ch->stack_caller, src->stack_caller + ch->stack0,
		       ch->nr_stacks * sizeof(*ch->stack_caller));
	}
	if (ch->nr_samples) {
		memcpy(ch->time, src->time + pt->nr_samples,
		       ch->nr_samples * sizeof(*ch->time));
		memcpy(ch->cpu, lp->sample_cpu + pt->nr_samples,
		       ch->nr_samples * sizeof(*ch->cpu));
		memcpy(ch->stack, src->stack + pt->nr_samples,
		       ch->nr_samples * sizeof(*ch->stack));
	}
	ch->have_base = lp->have_base;
	ch->base = lp->base;
	pt->nr_frames = nf;
	pt->nr_procs = lp->nr_procs;
	pt->nr_comms = nc;
	pt->nr_stacks = src->nr_stacks;
	pt->nr_samples = src->nr_samples;
	*out = ch;
	return 0;
nomem:
	chunk_free(ch);
	return -ENOMEM;
}

/*
 * The end of the chunk of part text [@at, @end) that starts at @at: after
 * the first blank line at or after @at + @bytes (a chunk, like a part,
 * ends with no event open), else @end.
 */
static const char *chunk_end(const char *at, const char *end, size_t bytes)
{
	const char *nl, *cut;

	if ((size_t)(end - at) <= bytes)
		return end;
	nl = memchr(at + bytes - 1, '\n', (size_t)(end - (at + bytes - 1)));
	cut = nl ? after_blank_line(nl + 1, end) : NULL;
	return cut ? cut : end;
}

struct chunk_read {
	struct ps *ps;
	const char *end;
	size_t bytes;
};

/* The chunk guard's read: where the chunk ends, then the parse up to it. */
static int read_chunk(void *arg)
{
	struct chunk_read *r = arg;

	r->ps->mem_end = chunk_end(r->ps->mem, r->end, r->bytes);
	return hs__ps_read_all(r->ps);
}

/*
 * Parse part @k into its own source (a worker, or the merger helping), a
 * chunk at a time: each chunk's additions go to the merger as soon as
 * they are parsed, so that it merges them while this parse goes on.
 */
static void parse_part(struct parts *pp, size_t k)
{
	struct part *pt = &pp->part[k];
	struct ps *ps = &pt->ps;
	struct chunk_read r = {.ps = ps, .end = pt->end, .bytes = pp->chunk_bytes};
	struct chunk *ch;
	int err = 0;

	ps->mapped = 1;
	ps->mem = pt->start;
	ps->mem_end = pt->end;
	ps->mem_kept = ps->mem_clean = pt->start;
	ps->first_part = 0;
	ps->proc_placeholders = 1;
	/* to its end even when another part fails: that part's line needs this one's */
	while (!err && ps->mem < pt->end) {
		err = read_guarded(ps, ps->mem, pt->end, read_chunk, &r);
		if (!err && take_chunk(pt, &ch))
			err = hs__ps_nomem(ps);
		pthread_mutex_lock(&pp->lock);
		if (!err) {
			*(pt->tail ? &pt->tail->next : &pt->head) = ch;
			pt->tail = ch;
			pthread_cond_broadcast(&pp->done);
		}
		pthread_mutex_unlock(&pp->lock);
	}
	pthread_mutex_lock(&pp->lock);
	pt->err = err;
	if (pt->err)
		pp->stop = 1;
	pt->done = 1;
	pthread_cond_broadcast(&pp->done);
	pthread_mutex_unlock(&pp->lock);
}

/* The next part nobody parses yet (>= 1), or 0 when none is left. */
static size_t claim_part(struct parts *pp)
{
	size_t k = 0;

	pthread_mutex_lock(&pp->lock);
	if (!pp->stop && pp->next < pp->nr)
		k = pp->next++;
	pthread_mutex_unlock(&pp->lock);
	return k;
}

static void *worker(void *arg)
{
	struct parts *pp = arg;
	size_t k;

	while ((k = claim_part(pp)))
		parse_part(pp, k);
	return NULL;
}

/* The merger's maps of one part's local ids, grown chunk by chunk. */
struct merge {
	uint32_t *fmap; /* local frame -> merged frame */
	size_t alloc_fmap;
	uint32_t *smap; /* local stack -> merged stack */
	size_t alloc_smap;
	uint8_t *comm_done; /* a chunk's comms already noted (scratch) */
	size_t alloc_comm_done;
	int have_delta;
	int64_t delta; /* the part's times -> the merged source's */
};

static void merge_release(struct merge *m)
{
	hs_free(m->fmap);
	hs_free(m->smap);
	hs_free(m->comm_done);
	memset(m, 0, sizeof(*m));
}

/* Comm @i of @ch ("PID:COMM") noted as a name of its pid in @g. */
static int merge_comm(struct ps *g, const struct chunk *ch, const size_t *off, size_t i,
		      uint32_t pid, uint32_t *frame)
{
	const char *s = ch->comms.s + off[i];
	const char *comm = (const char *)memchr(s, ':', ch->comm_len[i]) + 1;

	return hs__ps_process_frame(g, pid, comm, ch->comm_len[i] - (size_t)(comm - s),
				    frame);
}

/*
 * The frames of chunk @ch as frames of the merged source, into m->fmap.
 * A new process's placeholder takes the merged frame of its pid, noting
 * its names of the chunk in order, as the serial parse met them; the
 * chunk's other comms (pids of earlier chunks) are noted after.
 */
static int merge_frames(struct ps *g, struct merge *m, const struct chunk *ch)
{
	size_t *off = hs_malloc((ch->nr_comms + 1) * sizeof(*off));
	const char *name = ch->names.s;
	size_t i, p = 0;
	uint32_t frame;
	int err = 0;

	if (!off || HS_GROW(m->fmap, ch->frame0 + ch->nr_frames, m->alloc_fmap) ||
	    HS_GROW(m->comm_done, ch->nr_comms + 1, m->alloc_comm_done)) {
		hs_free(off);
		return hs__ps_nomem(g);
	}
	off[0] = 0;
	for (i = 0; i < ch->nr_comms; i++) {
		off[i + 1] = off[i] + ch->comm_len[i];
		m->comm_done[i] = 0;
	}
	for (i = 0; i < ch->nr_frames && !err; name += ch->name_len[i], i++) {
		uint32_t id = (uint32_t)(ch->frame0 + i), c;

		/* the chunk's processes come in the order of their frames */
		if (p < ch->nr_procs && ch->proc_frame[p] == id) {
			for (c = ch->proc_first[p]; c != NO_ID && !err;
			     c = ch->comm_next[c - ch->comm0]) {
				m->comm_done[c - ch->comm0] = 1;
				err = merge_comm(g, ch, off, c - ch->comm0,
						 ch->proc_pid[p], &m->fmap[id]);
			}
			p++;
			continue;
		}
		err = hs_source_intern_frame(g->out, name, ch->name_len[i], &m->fmap[id]);
		if (err)
			err = err == -ENOMEM ? hs__ps_nomem(g) : err;
	}
	for (i = 0; i < ch->nr_comms && !err; i++) {
		const char *s = ch->comms.s + off[i];

		if (!m->comm_done[i])
			err = merge_comm(g, ch, off, i, (uint32_t)strtol(s, NULL, 10),
					 &frame);
	}
	hs_free(off);
	return err;
}

/* Append chunk @ch of a part (its chunks in order) to the merged source. */
static int merge_chunk(struct ps *g, struct merge *m, const struct chunk *ch)
{
	size_t i;
	int err;

	err = merge_frames(g, m, ch);
	if (!err && HS_GROW(m->smap, ch->stack0 + ch->nr_stacks, m->alloc_smap))
		err = hs__ps_nomem(g);
	for (i = 0; !err && i < ch->nr_stacks; i++) {
		uint32_t caller = ch->stack_caller[i];

		err = hs_source_intern_stack(g->out, m->fmap[ch->stack_frame[i]],
					     caller == HS_NO_STACK ? HS_NO_STACK
								   : m->smap[caller],
					     &m->smap[ch->stack0 + i]);
		if (err)
			err = err == -ENOMEM ? hs__ps_nomem(g) : err;
	}
	if (err)
		return err;
	if (ch->have_base && !m->have_delta) {
		if (!g->have_base) {
			g->have_base = 1;
			g->base = ch->base;
		}
		m->have_delta = 1;
		m->delta = ch->base - g->base;
	}
	for (i = 0; !err && i < ch->nr_samples; i++) {
		uint32_t s = ch->stack[i];

		err = hs__ps_add_cpu_sample(g, ch->time[i] + m->delta,
					    (int64_t)ch->cpu[i] - 1,
					    s == HS_NO_STACK ? s : m->smap[s]);
	}
	return err;
}

/*
 * The next chunk of part @k to merge (taken from the part), or NULL once
 * the part is parsed and merged (pt->err says how). The part is parsed
 * here if nobody took it.
 */
static struct chunk *next_chunk(struct parts *pp, size_t k)
{
	struct part *pt = &pp->part[k];
	struct chunk *ch;

	pthread_mutex_lock(&pp->lock);
	if (pp->next == k) {
		pp->next++;
		pthread_mutex_unlock(&pp->lock);
		parse_part(pp, k);
		pthread_mutex_lock(&pp->lock);
	}
	while (!pt->head && !pt->done)
		pthread_cond_wait(&pp->done, &pp->lock);
	ch = pt->head;
	if (ch) {
		pt->head = ch->next;
		if (!pt->head)
			pt->tail = NULL;
	}
	pthread_mutex_unlock(&pp->lock);
	return ch;
}

/* Stop the parts' parse (an error): no part more, no chunk more. */
static void stop_parts(struct parts *pp)
{
	pthread_mutex_lock(&pp->lock);
	pp->stop = 1;
	pthread_mutex_unlock(&pp->lock);
}

/*
 * Merge part @k into @g, a chunk at a time as its parse hands them over.
 * An error of the part's parse wins over the merge's (a serial parse
 * would have met it first: the merge of earlier chunks fails only for
 * memory or a table's limit, which the part's own tables meet too).
 */
static int merge_part(struct ps *g, struct parts *pp, size_t k)
{
	struct part *pt = &pp->part[k];
	struct merge m = {0};
	struct chunk *ch;
	int err = 0;

	while ((ch = next_chunk(pp, k))) {
		if (!err) {
			err = merge_chunk(g, &m, ch);
			if (err)
				stop_parts(pp);
		}
		chunk_free(ch);
	}
	merge_release(&m);
	return pt->err ? pt->err : err;
}

/*
 * The CPU view of [@start, @end) cut at @cuts (@nr parts) into @g's
 * source: the first part here, the rest on up to @threads - 1 workers,
 * merged in order, each while it is parsed once the parts before it are
 * in.
 */
static int import_parts(struct ps *g, const char **cuts, size_t nr, size_t threads,
			size_t chunk_bytes)
{
	struct parts pp = {.nr = nr, .next = 1, .chunk_bytes = chunk_bytes};
	pthread_t tid[MAX_THREADS];
	size_t nr_tid = 0, k;
	uint64_t line0;
	int err;

	pp.part = hs_calloc(nr, sizeof(*pp.part));
	if (!pp.part)
		return hs__ps_nomem(g);
	for (k = 1; k < nr; k++) {
		struct part *pt = &pp.part[k];

		pt->start = cuts[k];
		pt->end = cuts[k + 1];
		hs_source_init(&pt->src);
		hs__ps_init(&pt->ps, HS_PERF_CPU, &pt->src, &pt->diag, NULL);
	}
	pthread_mutex_init(&pp.lock, NULL);
	pthread_cond_init(&pp.done, NULL);
	for (k = 1; k < threads && k < nr; k++) {
		if (pthread_create(&tid[nr_tid], NULL, worker, &pp))
			break; /* fewer workers: the merger parses what is left */
		nr_tid++;
	}
	err = read_mapped(g);
	if (err)
		stop_parts(&pp);
	line0 = g->lr.lineno;
	for (k = 1; !err && k < nr; k++) {
		struct part *pt = &pp.part[k];

		err = merge_part(g, &pp, k);
		if (err && pt->err) {
			hs_diag_set(g->diag, pt->diag.line ? pt->diag.line + line0 : 0,
				    "%s", pt->diag.msg);
			break;
		}
		line0 += pt->ps.lr.lineno;
		hs__ps_release(&pt->ps);
		hs_source_release(&pt->src);
		pt->done = 2; /* released */
	}
	if (err)
		stop_parts(&pp);
	for (k = 0; k < nr_tid; k++)
		pthread_join(tid[k], NULL);
	for (k = 1; k < nr; k++) {
		struct chunk *ch;

		while ((ch = pp.part[k].head)) {
			pp.part[k].head = ch->next;
			chunk_free(ch);
		}
		if (pp.part[k].done == 2)
			continue;
		hs__ps_release(&pp.part[k].ps);
		hs_source_release(&pp.part[k].src);
	}
	pthread_mutex_destroy(&pp.lock);
	pthread_cond_destroy(&pp.done);
	hs_free(pp.part);
	return err;
}

int hs__ps_import_mapped(FILE *f, enum hs_perf_view view, struct hs_stack_source *out,
			 struct hs_diag *diag, const struct hs__perf_symbols *syms)
{
	static const char empty[1];
	struct stat st;
	off_t pos;
	int fd = fileno(f), err;
	const char *map = NULL, *start = empty, *end = empty;
	struct cuts *cuts;
	size_t threads;
	struct ps *ps;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return HS__PS_NOT_MAPPED;
	pos = ftello(f);
	if (pos < 0 || pos > st.st_size)
		return HS__PS_NOT_MAPPED;
	if (pos < st.st_size) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			return HS__PS_NOT_MAPPED;
		madvise((void *)map, (size_t)st.st_size, MADV_SEQUENTIAL);
		start = map + pos;
		end = map + st.st_size;
	}
	ps = hs_malloc(sizeof(*ps));
	cuts = hs_calloc(1, sizeof(*cuts));
	if (!ps || !cuts) {
		hs_diag_set(diag, 0, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	bus_watch();
	hs__ps_init(ps, view, out, diag, syms);
	ps->mapped = 1;
	ps->mem = start;
	ps->mem_end = end;
	ps->mem_kept = ps->mem_clean = start;
	threads = nr_threads();
	if (view == HS_PERF_CPU && !syms && threads > 1) {
		cuts->start = start;
		cuts->end = end;
		cuts->part_bytes = (size_t)(end - start) / threads + 1;
		if (cuts->part_bytes < MIN_PART_BYTES)
			cuts->part_bytes = MIN_PART_BYTES;
		/* a file of one part's minimum or less: one part */
		cuts->first_bytes =
		    (size_t)(end - start) <= MIN_PART_BYTES
			? (size_t)(end - start)
			: hs__ps_first_part_bytes((size_t)(end - start), threads,
						  cuts->part_bytes);
		cuts->part_bytes =
		    (size_t)(end - start) > cuts->first_bytes
			? ((size_t)(end - start) - cuts->first_bytes) / (threads - 1) + 1
			: cuts->part_bytes;
		if (cuts->part_bytes < MIN_PART_BYTES)
			cuts->part_bytes = MIN_PART_BYTES;
		if (getenv("HEAPSCOPE_PARSE_PART_BYTES")) {
			cuts->part_bytes =
			    env_size("HEAPSCOPE_PARSE_PART_BYTES", cuts->part_bytes);
			cuts->first_bytes = cuts->part_bytes;
		}
		err = read_guarded(ps, start, end, cut_parts, cuts);
		if (err) {
			if (err == -ENOMEM)
				hs__ps_nomem(ps);
			goto release;
		}
	}
	if (cuts->nr > 1) {
		ps->mem_end = cuts->at[1];
		err = import_parts(ps, cuts->at, cuts->nr, threads,
				   env_size("HEAPSCOPE_PARSE_CHUNK_BYTES", CHUNK_BYTES));
	} else {
		err = read_mapped(ps);
	}
	if (!err)
		err = hs__ps_finish(ps);
release:
	hs__ps_release(ps);
	bus_unwatch();
out:
	hs_free(ps);
	if (cuts)
		hs_free(cuts->at);
	hs_free(cuts);
	if (map)
		munmap((void *)map, (size_t)st.st_size);
	fseeko(f, 0, SEEK_END); /* read to the end, as the stream reader leaves it */
	return err;
}
