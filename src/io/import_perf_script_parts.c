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
 * A file that shrinks while it is mapped (truncated, or rewritten in
 * place) makes a read past its new end fault with SIGBUS. Every read of
 * the mapping (read_guarded()) runs under a SIGBUS handler that turns
 * such a fault, in that thread and inside the mapping, into the error
 * "the file shrank while it was read" at the line being read; any other
 * SIGBUS goes to the action there was before, which is put back once no
 * mapped import runs.
 *
 * HEAPSCOPE_PARSE_THREADS=N sets the threads (1: one part, no thread),
 * HEAPSCOPE_PARSE_PART_BYTES=N the size parts are cut near (tests use
 * tiny parts so that every boundary case is met).
 *
 * Ownership: the mapping, the parts and their sources live for one
 * import; the caller's source gets the merged model.
 */
#include "io/import_perf_script.h"
#include "common/alloc.h"
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

struct part {
	const char *start, *end; /* its bytes in the mapping */
	struct hs_stack_source src;
	struct ps ps;
	struct hs_diag diag;
	int err;
	int done; /* parsed (err and diag say how), under parts.lock */
};

struct parts {
	struct part *part;
	size_t nr;
	size_t next; /* the next part nobody parses yet, under lock */
	int stop;    /* an error: parse no more parts */
	pthread_mutex_t lock;
	pthread_cond_t done;
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
	size_t part_bytes;
	const char **at; /* owned */
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
		if (c->part_bytes > (size_t)(end - start) / k)
			break; /* the target is past the end */
		nl = start + k * c->part_bytes - 1;
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

/* Parse part @k into its own source (a worker, or the merger helping). */
static void parse_part(struct parts *pp, size_t k)
{
	struct part *pt = &pp->part[k];
	struct ps *ps = &pt->ps;

	ps->mapped = 1;
	ps->mem = pt->start;
	ps->mem_end = pt->end;
	ps->mem_kept = ps->mem_clean = pt->start;
	ps->first_part = 0;
	ps->proc_placeholders = 1;
	pt->err = read_mapped(ps);
	pthread_mutex_lock(&pp->lock);
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

/* The frames of part @pt as frames of the merged source, into @fmap. */
static int merge_frames(struct ps *g, struct part *pt, uint32_t *fmap)
{
	struct hs_stack_source *src = &pt->src;
	const struct ps *lp = &pt->ps;
	size_t nf = hs_source_nr_frames(src), i;
	uint32_t *proc_of = hs_calloc(nf ? nf : 1, sizeof(*proc_of));
	int err = 0;

	if (!proc_of)
		return hs__ps_nomem(g);
	for (i = 0; i < lp->nr_procs; i++)
		proc_of[lp->procs[i].frame] = (uint32_t)i + 1;
	for (i = 0; i < nf && !err; i++) {
		const struct proc *pr;
		uint32_t id;

		if (!proc_of[i]) {
			err = hs_source_intern_frame(
			    g->out, hs_source_frame_name(src, (uint32_t)i),
			    hs_strtab_len(&src->frames, (uint32_t)i), &fmap[i]);
			if (err)
				err = err == -ENOMEM ? hs__ps_nomem(g) : err;
			continue;
		}
		/* the pid's names in this part, in order: "PID:COMM" each */
		pr = &lp->procs[proc_of[i] - 1];
		for (id = pr->first; id != NO_ID && !err; id = lp->comm_next[id]) {
			const char *s = hs_strtab_get(&lp->comms, id);
			const char *comm = strchr(s, ':') + 1;

			err = hs__ps_process_frame(
			    g, pr->pid, comm,
			    hs_strtab_len(&lp->comms, id) - (size_t)(comm - s), &fmap[i]);
		}
	}
	hs_free(proc_of);
	return err;
}

/* Append part @pt's stacks and samples to the merged source. */
static int merge_part(struct ps *g, struct part *pt)
{
	struct hs_stack_source *src = &pt->src;
	const struct ps *lp = &pt->ps;
	size_t nf = hs_source_nr_frames(src), i;
	uint32_t *fmap = hs_malloc((nf ? nf : 1) * sizeof(*fmap));
	uint32_t *smap = hs_malloc((src->nr_stacks ? src->nr_stacks : 1) * sizeof(*smap));
	int64_t delta;
	int err;

	if (!fmap || !smap) {
		err = hs__ps_nomem(g);
		goto out;
	}
	err = merge_frames(g, pt, fmap);
	for (i = 0; !err && i < src->nr_stacks; i++) {
		uint32_t caller = src->stack_caller[i];

		err = hs_source_intern_stack(
		    g->out, fmap[src->stack_frame[i]],
		    caller == HS_NO_STACK ? HS_NO_STACK : smap[caller], &smap[i]);
		if (err)
			err = err == -ENOMEM ? hs__ps_nomem(g) : err;
	}
	if (err)
		goto out;
	if (lp->have_base && !g->have_base) {
		g->have_base = 1;
		g->base = lp->base;
	}
	delta = lp->base - g->base;
	for (i = 0; !err && i < src->nr_samples; i++) {
		uint32_t s = src->stack[i];

		err = hs__ps_add_cpu_sample(g, src->time[i] + delta,
					    (int64_t)lp->sample_cpu[i] - 1,
					    s == HS_NO_STACK ? s : smap[s]);
	}
out:
	hs_free(fmap);
	hs_free(smap);
	return err;
}

/* Wait until part @k is parsed, parsing it here if nobody took it. */
static void wait_part(struct parts *pp, size_t k)
{
	pthread_mutex_lock(&pp->lock);
	if (pp->next == k) {
		pp->next++;
		pthread_mutex_unlock(&pp->lock);
		parse_part(pp, k);
		return;
	}
	while (!pp->part[k].done)
		pthread_cond_wait(&pp->done, &pp->lock);
	pthread_mutex_unlock(&pp->lock);
}

/*
 * The CPU view of [@start, @end) cut at @cuts (@nr parts) into @g's
 * source: the first part here, the rest on up to @threads - 1 workers,
 * merged in order.
 */
static int import_parts(struct ps *g, const char **cuts, size_t nr, size_t threads)
{
	struct parts pp = {.nr = nr, .next = 1};
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
	if (err) {
		pthread_mutex_lock(&pp.lock);
		pp.stop = 1;
		pthread_mutex_unlock(&pp.lock);
	}
	line0 = g->lr.lineno;
	for (k = 1; !err && k < nr; k++) {
		struct part *pt = &pp.part[k];

		wait_part(&pp, k);
		if (pt->err) {
			err = pt->err;
			hs_diag_set(g->diag, pt->diag.line ? pt->diag.line + line0 : 0,
				    "%s", pt->diag.msg);
			break;
		}
		err = merge_part(g, pt);
		line0 += pt->ps.lr.lineno;
		hs__ps_release(&pt->ps);
		hs_source_release(&pt->src);
		pt->done = 2; /* released */
	}
	if (err) {
		pthread_mutex_lock(&pp.lock);
		pp.stop = 1;
		pthread_mutex_unlock(&pp.lock);
	}
	for (k = 0; k < nr_tid; k++)
		pthread_join(tid[k], NULL);
	for (k = 1; k < nr; k++) {
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
		cuts->part_bytes =
		    env_size("HEAPSCOPE_PARSE_PART_BYTES", cuts->part_bytes);
		err = read_guarded(ps, start, end, cut_parts, cuts);
		if (err) {
			if (err == -ENOMEM)
				hs__ps_nomem(ps);
			goto release;
		}
	}
	if (cuts->nr > 1) {
		ps->mem_end = cuts->at[1];
		err = import_parts(ps, cuts->at, cuts->nr, threads);
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
