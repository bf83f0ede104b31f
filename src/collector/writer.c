/*
 * writer - the writer thread: drains the threads' rings into chunks,
 * compresses them with zstd and appends them to the trace file; stamps
 * the event clock; samples RSS every 10 ms; writes the END chunk with the
 * footer; ends the process when the program's last thread went without
 * exit() (program_gone()).
 *
 * It wakes every millisecond (every 10 ms with --sample-bytes or
 * --no-heap, whose events read the clock themselves), or sooner when a
 * ring is half full, and writes a chunk when 512 KiB of records are
 * waiting or 50 ms after the last write, so that a killed program loses at
 * most the last 100 ms.
 *
 * It allocates nothing once started (its buffers and zstd's workspace are
 * mmap'd up front) and takes no lock that a hook could hold, except a
 * try-lock for the module scan. So it can finish the trace for a thread
 * that crashed anywhere, even inside malloc.
 */
#include "collector/collector.h"
#include "collector/fdkeep.h"
#include "format/trace_writer.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <dirent.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#define CHUNK_CAP (1u << 20) /* raw bytes per chunk */
#define SPAN_MAX (1 + 3 * HS_VARINT_MAX)
#define CLOCK_NS 1000000ull  /* the event clock's resolution */
#define RSS_NS 10000000ull   /* RSS every 10 ms */
#define FLUSH_NS 50000000ull /* write at least every 50 ms */
#define ZSTD_LEVEL 1	     /* (and trace_writer.h's HS_ZSTD_LEVEL_REPEATS) */
#define COL_TRIAL 16	     /* every 16th EVENTS chunk is compressed both ways */
/* a smaller EVENTS chunk is no trial: too few events to tell (a chunk of
 * RSS records alone came out smaller plain, and sent 16 chunks of a
 * program whose chunks were a fifth of that compact into the plain way) */
#define COL_TRIAL_MIN (64u << 10)
/* after a trial that chose plain chunks, the next trial comes sooner:
 * compact chunks are the rule (a fifth of plain on python3 and sqlite3),
 * plain ones a phase (a program's start, python3 freeing its heap at
 * exit) */
#define COL_TRIAL_PLAIN 4
/* a chunk that finds every descriptor number taken (EMFILE) waits for one
 * (write_chunk()); it is retried every RETRY_NS, for PENDING_NS at most */
#define RETRY_NS 50000000ull
#define PENDING_NS 10000000000ull
/* when finishing, a chunk built already waits this long more for its
 * descriptor (reattach_patiently()) */
#define REATTACH_WAIT_MS 200

_Atomic int hs_writer_alive;
pid_t hs_writer_tid;
_Atomic pid_t hs_sampler_tid;
_Atomic int hs_main_exited;
_Atomic uint64_t hs_coarse_ticks __attribute__((aligned(64)));
int hs_precise_clock;
_Atomic uint64_t hs_count_nodes, hs_count_modules, hs_count_threads;
_Atomic uint64_t hs_count_lost;

static struct {
	int fd, statm_fd;
	int statm_lost; /* statm_fd is -1 after a reopen failed: try again */
	dev_t dev;
	ino_t ino;
	char path[4096]; /* the trace's absolute path, to reopen it (reattach()) */
	uint64_t offset; /* file size so far */
	uint32_t seq;
	int failed; /* a write failed: stop */
	/* the chunk being built waits for a descriptor (every number taken):
	 * since when, and the next try */
	uint64_t pending_ns, retry_ns;
	int pending;

	uint8_t *raw; /* chunk being built */
	size_t len;
	int span_process; /* the chunk's current span is thread 0 */
	uint64_t first_ticks, last_ticks;
	uint8_t *zbuf;
	size_t zcap;
	ZSTD_CCtx *cctx;
	/*
	 * Compact EVENTS chunks: hs_chunk_compact_5_0()'s tables, scratch and
	 * output, and the second compressed copy of a trial chunk. A trial
	 * every COL_TRIAL chunks (of COL_TRIAL_MIN bytes or more; every
	 * COL_TRIAL_PLAIN after one that chose plain) compresses the
	 * payload both ways; the chunks up to the next one are compact if
	 * those came out an eighth smaller (they cost the reader a pass).
	 * The first chunk (the program's start: PROCESS, modules, the
	 * first stacks) is compact and no trial.
	 */
	struct hs_compact_enc *enc;
	uint8_t *col_scratch, *zcol, *compact;
	size_t zcol_cap, compact_cap;
	unsigned col_trial; /* chunks to the next trial */
	int col_use;	    /* the last trial chose columns */
	int zlevel;	    /* compress_compact()'s: the last payload's ratio's */

	struct hs_chunk_index *index; /* mmap'd, grown with mremap */
	uint8_t *has_records;	      /* per index entry: the chunk holds records
				       * other than events (the same) */
	size_t nr_index, alloc_index;
	int chunk_records; /* the chunk being built holds some */

	pthread_t thread;
	_Atomic int finish_req; /* 1: finish; 2: pause for exec */
	_Atomic int done;	/* the thread finished its last chunk */
	_Atomic int finishing;
	unsigned reason;
	uint64_t detail;
	uint64_t last_flush_ns, next_rss_ns;
} w = {.fd = -1, .statm_fd = -1, .col_trial = 1, .col_use = 1, .zlevel = ZSTD_LEVEL};

static _Atomic int wake_word, sleeping;

/*
 * The thread whose descriptor table holds w.fd and w.statm_fd (fdkeep.h):
 * everything that opens, reads, writes or closes them runs there, through
 * hs_fdkeep_call(). Without it (unshare() refused), they are in the
 * program's table, moved high and protected (fds.c), and reopened when the
 * program closes them with the raw system call or dup2()s over them.
 */
static struct hs_fdkeep keep = HS_FDKEEP_INIT;

static void *map(size_t n)
{
	void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return (long)p < 0 && (long)p > -4096 ? NULL : p;
}

uint64_t hs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - hs_start_ns;
}

void hs_writer_wake(void)
{
	if (atomic_load_explicit(&sleeping, memory_order_relaxed)) {
		atomic_fetch_add(&wake_word, 1);
		syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void force_wake(void)
{
	atomic_fetch_add(&wake_word, 1);
	syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* @fd, just opened where the writer's files are, as the writer keeps it. */
static int adopt(int fd)
{
	if (fd < 0 || hs_fdkeep_private(&keep))
		return fd;
	return hs_fd_move_high(fd); /* above the program's numbers, protected */
}

/* Close a descriptor of adopt()'s. */
static void release(int fd)
{
	if (fd < 0)
		return;
	if (hs_fdkeep_private(&keep))
		syscall(SYS_close, fd);
	else
		hs_fd_close(fd);
}

/* Stop keeping number @fd, which is no longer the writer's file. */
static void forget(int fd)
{
	if (!hs_fdkeep_private(&keep))
		hs_fd_forget(fd);
}

/* The file behind our descriptor is still ours (not closed and reused). */
static int fd_is_ours(void)
{
	struct stat sb;

	return w.fd >= 0 && !fstat(w.fd, &sb) && sb.st_dev == w.dev && sb.st_ino == w.ino;
}

/* Whether @sb is the trace's file, of a size from @from to w.offset. */
static int same_trace(const struct stat *sb, uint64_t from)
{
	return sb->st_dev == w.dev && sb->st_ino == w.ino &&
	       (uint64_t)sb->st_size >= from && (uint64_t)sb->st_size <= w.offset;
}

/*
 * The program closed the trace's descriptor behind the close() hook's back
 * (a raw close system call), or closed it and got its number back for a
 * file of its own (only possible without the keeper): open the trace again
 * by its path, in append mode, if that is still the file written so far
 * (same inode, a size from @from to w.offset: the bytes from @from on that
 * the file does not have went to the program's file, and w.offset goes
 * back to its size). The old number is the program's now, and no longer
 * protected. 0, or -1 with errno (EMFILE: every number is taken; EAGAIN:
 * the program took each number we opened it at; ESTALE: the path leads
 * to another file, or the file has bytes not ours).
 */
static int reattach(uint64_t from)
{
	struct stat sb;
	int fd, tries;

	if (!w.path[0]) {
		errno = ESTALE;
		return -1;
	}
	forget(w.fd);
	w.fd = -1;
	/* in the program's table, the program may dup2() over the number
	 * we open it at, any time until it is moved: then again */
	for (tries = 0; tries < 3; tries++) {
		/* the path, first, without a descriptor: still the trace? */
		if (stat(w.path, &sb) || !same_trace(&sb, from)) {
			errno = ESTALE;
			return -1;
		}
		fd = open(w.path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			return -1;
		if (fstat(fd, &sb) || !same_trace(&sb, from)) {
			/* another file at the number: the program's if it has
			 * no close-on-exec (dup2()'d over), not ours to close */
			int flags = fcntl(fd, F_GETFD);

			if (hs_fdkeep_private(&keep) ||
			    (flags >= 0 && (flags & FD_CLOEXEC)))
				syscall(SYS_close, fd);
			continue;
		}
		w.offset = (uint64_t)sb.st_size;
		w.fd = adopt(fd);
		if (fd_is_ours())
			return 0;
		forget(w.fd);
		w.fd = -1;
	}
	errno = EAGAIN;
	return -1;
}

/* Whether reattach()'s failure may pass: no number free, or a race lost. */
static int transient(int err)
{
	return err == EMFILE || err == ENFILE || err == EAGAIN;
}

/*
 * reattach(), tried again every millisecond while it fails for a while
 * only (transient()): for a chunk already built, which cannot wait as a
 * chunk still open can (write_chunk()), as long as that one would
 * (PENDING_NS; REATTACH_WAIT_MS once the trace is finishing).
 */
static int reattach_patiently(uint64_t from)
{
	struct timespec ms = {0, 1000000};
	uint64_t start = hs_now_ns(), finishing = 0, now;

	while (reattach(from)) {
		int err = errno;

		if (!transient(err))
			return -1;
		now = hs_now_ns();
		if (!finishing && atomic_load(&w.finish_req))
			finishing = now;
		if (now - start >= PENDING_NS ||
		    (finishing && now - finishing >= REATTACH_WAIT_MS * 1000000ull)) {
			errno = err;
			return -1;
		}
		nanosleep(&ms, NULL);
	}
	return 0;
}

/*
 * Write @n buffers (@total bytes), whose first ones up to w.offset - @at
 * are in the file already (@at: the file's size before them). 0 or -1
 * (errno; EBADF: the descriptor was closed under us).
 */
static int write_all(const struct iovec *iov, int n, size_t total, uint64_t at)
{
	while (w.offset - at < total) {
		struct iovec v[2];
		size_t skip = (size_t)(w.offset - at);
		int i, nv = 0;
		ssize_t k;

		for (i = 0; i < n; i++) {
			if (skip >= iov[i].iov_len) {
				skip -= iov[i].iov_len;
				continue;
			}
			v[nv].iov_base = (char *)iov[i].iov_base + skip;
			v[nv++].iov_len = iov[i].iov_len - skip;
			skip = 0;
		}
		k = writev(w.fd, v, nv);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		w.offset += (uint64_t)k;
	}
	return 0;
}

/* A write of the trace, run where its descriptor is (hs_fdkeep_call()). */
struct write_req {
	const struct iovec *iov;
	int n;
	int lost; /* the trace's descriptor is gone and cannot be opened again */
};

/*
 * Append @arg's buffers to the trace whole; reopens the trace if its
 * descriptor was closed or replaced before or during the write. 0 or -1
 * with errno.
 */
static int write_trace(void *arg)
{
	struct write_req *r = arg;
	uint64_t at = w.offset;
	size_t total = 0;
	int i, tries;

	for (i = 0; i < r->n; i++)
		total += r->iov[i].iov_len;
	/* (each time, the program took the number over since) */
	for (tries = 0; tries < 8; tries++) {
		if (!fd_is_ours() && reattach_patiently(at)) {
			r->lost = 1;
			return -1;
		}
		if (write_all(r->iov, r->n, total, at)) {
			if (errno == EBADF)
				continue; /* closed under the write */
			return -1;
		}
		/* still the trace after the write: it was the trace during it
		 * (the number is not made ours again but by us) */
		if (hs_fdkeep_private(&keep) || fd_is_ours())
			return 0;
		/* replaced under the write: the bytes the file lacks are
		 * written again (reattach() finds which) */
	}
	r->lost = 1;
	errno = EAGAIN;
	return -1;
}

/* Whether the trace's descriptor is there, reopened if need be (0), or -1 (errno). */
static int check_trace(void *arg)
{
	(void)arg;
	return fd_is_ours() ? 0 : reattach(w.offset);
}

/* Close the trace's descriptor. */
static int close_trace(void *arg)
{
	(void)arg;
	release(w.fd);
	w.fd = -1;
	return 0;
}

static void write_failed(const char *what)
{
	if (!w.failed)
		hs_msg("cannot write the trace (%s); tracing stopped", what);
	w.failed = 1;
	atomic_store(&hs_on, 0);
}

/* @old (@n bytes, or NULL) grown to @m bytes; NULL if it cannot be. */
static void *grow_map(void *old, size_t n, size_t m)
{
	void *p;

	if (!old)
		return map(m);
	p = (void *)syscall(SYS_mremap, old, n, m, MREMAP_MAYMOVE);
	return !p || ((long)p < 0 && (long)p > -4096) ? NULL : p;
}

static int add_index(uint64_t offset)
{
	if (w.nr_index == w.alloc_index) {
		size_t n = w.alloc_index ? 2 * w.alloc_index : 4096;
		void *p = grow_map(w.index, w.alloc_index * sizeof(*w.index),
				   n * sizeof(*w.index));
		void *q = p ? grow_map(w.has_records, w.alloc_index, n) : NULL;

		if (p)
			w.index = p;
		if (!q)
			return -1;
		w.has_records = q;
		w.alloc_index = n;
	}
	w.has_records[w.nr_index] = (uint8_t)w.chunk_records;
	w.index[w.nr_index].offset = offset;
	w.index[w.nr_index].first_ticks = w.first_ticks;
	w.index[w.nr_index].last_ticks = w.last_ticks;
	w.nr_index++;
	return 0;
}

/*
 * hs_tw_zstd_compact() of the compact payload of @n bytes at @c into @out
 * (@cap bytes) at HS_ZSTD_LEVEL_REPEATS after a payload that came out
 * HS_ZSTD_REPEATS_RATIO times smaller or more, else ZSTD_LEVEL. Returns
 * its size, or 0 (the caller then writes the chunk another way).
 */
static size_t compress_compact(uint8_t *out, size_t cap, const uint8_t *c, size_t n)
{
	size_t z = hs_tw_zstd_compact(w.cctx, w.zlevel, out, cap, c, n, HS_CC__COUNT);

	if (z)
		w.zlevel =
		    z * HS_ZSTD_REPEATS_RATIO <= n ? HS_ZSTD_LEVEL_REPEATS : ZSTD_LEVEL;
	return z;
}

/*
 * Compress the EVENTS payload of @n bytes at @raw to @zbuf (@zcap bytes),
 * compact (hs_chunk_compact_5_0(), into w.compact) when that is an eighth
 * smaller or more, as the last trial found or this one finds. A trial
 * also picks how the compact chunks write heap sizes (split, which
 * suits random sizes, or whole, which suits sizes that repeat). Returns the
 * payload to write (NULL: @raw as it is) with its *@stored size, its
 * *@raw_n size after decompression and its chunk *@flags.
 */
static const uint8_t *compress_events(uint8_t *raw, size_t n, uint8_t *zbuf, size_t zcap,
				      size_t *stored, size_t *raw_n, unsigned *flags)
{
	int trial = w.col_trial == 0 && n >= COL_TRIAL_MIN && w.compact;
	int use = w.col_use && w.compact;
	size_t z = 0, zc = 0, c = 0;
	int held = 1; /* w.compact holds the payload of c bytes */
	uint8_t *zout = trial ? w.zcol : zbuf; /* a trial keeps both */

	if (trial || use)
		c = hs_chunk_compact_5_0(raw, n, w.enc, w.col_scratch, w.compact,
					 w.compact_cap);
	if (c) {
		zc = compress_compact(zout, trial ? w.zcol_cap : zcap, w.compact, c);
	}
	if (trial && zc) {
		/* heap sizes the other way too (split or whole), through zbuf */
		size_t c2, zc2 = 0;

		w.enc->split_sizes = !w.enc->split_sizes;
		c2 = hs_chunk_compact_5_0(raw, n, w.enc, w.col_scratch, w.compact,
					  w.compact_cap);
		if (c2)
			zc2 = compress_compact(zbuf, zcap, w.compact, c2);
		if (zc2 && zc2 < zc) {
			memcpy(zout, zbuf, zc2);
			zc = zc2;
			c = c2;
		} else {
			w.enc->split_sizes = !w.enc->split_sizes;
			held = 0; /* w.compact holds the other payload */
		}
	}
	/* plain: on a trial, or where compact did not come out (a record
	 * the encoder has no layout for) */
	if (trial || !zc) {
		z = ZSTD_compressCCtx(w.cctx, zbuf, zcap, raw, n, ZSTD_LEVEL);
		if (ZSTD_isError(z))
			z = 0;
	}
	if (trial) {
		/* compact chunks cost the reader a pass: worth it if an eighth smaller */
		w.col_use = zc && (!z || zc < z - z / 8);
		w.col_trial = w.col_use ? COL_TRIAL : COL_TRIAL_PLAIN;
	}
	if (w.col_trial)
		w.col_trial--; /* a small chunk leaves the trial to the next */
	if (zc && (!z || zc < z - z / 8) && zc < c) {
		*stored = zc;
		*raw_n = c;
		*flags = HS_CHUNK_ZSTD | HS_CHUNK_COMPACT | HS_CHUNK_CLASSES |
			 HS_CHUNK_PREDICT;
		return zout;
	}
	if (z && z < n) {
		*stored = z;
		*raw_n = n;
		*flags = HS_CHUNK_ZSTD;
		return zbuf;
	}
	if (c && held && c < n) {
		/* the compact payload, as it is */
		*stored = *raw_n = c;
		*flags = HS_CHUNK_COMPACT | HS_CHUNK_CLASSES | HS_CHUNK_PREDICT;
		return w.compact;
	}
	return NULL;
}

/* Why the trace's descriptor is lost for good, after reattach()'s @err. */
static const char *lost_why(int err)
{
	if (err == EMFILE || err == ENFILE)
		return "the program closed its file descriptor, and every number is "
		       "taken";
	if (err == EAGAIN)
		return "the program keeps taking the numbers of its file descriptor";
	return "the program closed or replaced its file descriptor, and its path no "
	       "longer leads to the trace";
}

/*
 * Whether the chunk being built may wait for a descriptor number (every
 * one is taken, by a program that gave each a file of its own): not when
 * finishing, nor after PENDING_NS of waiting. Sets the next try.
 */
static int may_wait(void)
{
	uint64_t now = hs_now_ns();

	if (atomic_load(&w.finish_req))
		return 0;
	if (!w.pending) {
		w.pending = 1;
		w.pending_ns = now;
	}
	if (now - w.pending_ns >= PENDING_NS)
		return 0;
	w.retry_ns = now + RETRY_NS;
	return 1;
}

/*
 * Compress and write @n bytes at @raw as one chunk of @kind. An EVENTS
 * payload is w.raw, which compress_events() may rearrange. Returns 1 when
 * the chunk in w.raw waits, untouched, for a descriptor (may_wait()), else
 * 0 (written, or w.failed).
 */
static int write_chunk(enum hs_chunk_kind kind, uint8_t *raw, size_t n, uint8_t *zbuf,
		       size_t zcap)
{
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	struct iovec iov[2];
	const uint8_t *payload = raw;
	size_t stored = n, raw_n = n;
	unsigned flags = 0;
	uint64_t at;
	struct write_req req = {iov, 2, 0};

	if (w.failed || !n)
		return 0;
	/* the trace's descriptor, before the payload is built (which may
	 * rearrange w.raw): a chunk that finds no free number can wait */
	if (hs_fdkeep_call(&keep, check_trace, NULL)) {
		int err = errno;

		if (transient(err) && kind == HS_CHUNK_EVENTS && raw == w.raw &&
		    may_wait())
			return 1;
		write_failed(lost_why(err));
		return 0;
	}
	if (w.cctx && zbuf && kind == HS_CHUNK_EVENTS && raw == w.raw) {
		const uint8_t *z =
		    compress_events(raw, n, zbuf, zcap, &stored, &raw_n, &flags);

		if (z)
			payload = z;
	} else if (w.cctx && zbuf) {
		size_t z = ZSTD_compressCCtx(w.cctx, zbuf, zcap, raw, n, ZSTD_LEVEL);

		if (!ZSTD_isError(z) && z < n) {
			payload = zbuf;
			stored = z;
			flags = HS_CHUNK_ZSTD;
		}
	}
	hs_tw_chunk_header(h, kind, flags, (uint32_t)stored, (uint32_t)raw_n, w.seq,
			   payload);
	iov[0].iov_base = h;
	iov[0].iov_len = sizeof(h);
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = stored;
	at = w.offset;
	if (hs_fdkeep_call(&keep, write_trace, &req)) {
		write_failed(req.lost ? lost_why(errno) : strerror(errno));
		return 0;
	}
	w.seq++;
	if (kind == HS_CHUNK_EVENTS)
		add_index(at);
	return 0;
}

static void flush_chunk(void)
{
	if (write_chunk(HS_CHUNK_EVENTS, w.raw, w.len, w.zbuf, w.zcap))
		return; /* waits for a descriptor: the chunk stays, and grows */
	w.pending = 0;
	w.len = 0;
	w.span_process = 0;
	w.chunk_records = 0;
	w.first_ticks = UINT64_MAX;
	w.last_ticks = 0;
	w.last_flush_ns = hs_now_ns();
}

/*
 * Whether the chunk waits for a descriptor, and its next try is later
 * (when finishing, every flush is a last try).
 */
static int waiting(uint64_t now)
{
	return w.pending && now < w.retry_ns && !atomic_load(&w.finish_req);
}

/*
 * Make room for @n more bytes in the chunk; 0 when there is none (a full
 * chunk that waits for a descriptor).
 */
static int ensure_room(size_t n)
{
	if (CHUNK_CAP - w.len < n && !waiting(hs_now_ns()))
		flush_chunk();
	return CHUNK_CAP - w.len >= n;
}

void hs_writer_emit_sized(unsigned tag, const uint8_t *body, size_t n)
{
	uint8_t *p;

	if (n > 8192 || !ensure_room(n + 64))
		return; /* (RSS samples: the next ones tell the same) */
	p = w.raw + w.len;
	if (!w.span_process) {
		p = hs_enc_span(p, 0, 0, 0);
		w.span_process = 1;
	}
	p = hs_tw_sized_prefix(p, tag, n);
	memcpy(p, body, n);
	w.len = (size_t)(p + n - w.raw);
	if (tag != HS_TAG_RSS)
		w.chunk_records = 1;
}

/*
 * The head of @t's ring and the encoding state there, read consistently.
 * Returns -1 when finishing and @t stays inside hs_publish(): a thread
 * stopped there for good (a fatal signal, whose handler waits for us).
 */
static int read_head(struct hs_thread *t, uint64_t *head, uint64_t *ticks, uint64_t *addr)
{
	unsigned spins = 0;

	for (;;) {
		unsigned s1 = atomic_load_explicit(&t->seq, memory_order_acquire), s2;

		if (s1 & 1) {
			if (++spins > 10000 && atomic_load(&w.finish_req))
				return -1;
			sched_yield();
			continue;
		}
		*head = atomic_load_explicit(&t->head, memory_order_relaxed);
		*ticks = atomic_load_explicit(&t->st_ticks, memory_order_relaxed);
		*addr = atomic_load_explicit(&t->st_addr, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&t->seq, memory_order_relaxed);
		if (s1 == s2)
			return 0;
	}
}

/* Move what @t's ring holds into the chunk as one SPAN. */
static void drain(struct hs_thread *t)
{
	uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
	uint64_t head, ticks, addr;
	size_t n, off, first;
	uint8_t *p;

	if (read_head(t, &head, &ticks, &addr) || head == tail || w.failed)
		return;
	n = (size_t)(head - tail);
	if (!ensure_room(n + SPAN_MAX))
		return; /* the events wait in the ring */
	/* (read after the head: a record up to it stored its mark before) */
	if (atomic_load_explicit(&t->rec_end, memory_order_relaxed) > tail)
		w.chunk_records = 1;
	p = w.raw + w.len;
	p = hs_enc_span(p, (uint64_t)t->tid, t->w_ticks, t->w_addr);
	off = tail & (HS_RING_SIZE - 1);
	first = HS_RING_SIZE - off;
	if (n <= first) {
		memcpy(p, t->ring + off, n);
	} else {
		memcpy(p, t->ring + off, first);
		memcpy(p + first, t->ring, n - first);
	}
	w.len = (size_t)(p + n - w.raw);
	w.span_process = 0;
	if (t->w_ticks < w.first_ticks)
		w.first_ticks = t->w_ticks;
	if (ticks > w.last_ticks)
		w.last_ticks = ticks;
	t->w_ticks = ticks;
	t->w_addr = addr;
	atomic_store_explicit(&t->tail, head, memory_order_release);
}

static void drain_all(void)
{
	struct hs_thread *t;

	for (t = atomic_load(&hs_threads); t; t = t->next)
		if (atomic_load(&t->state) != HS_T_FREE)
			drain(t);
}

/* A read of /proc/self/statm, run where its descriptor is (hs_fdkeep_call()). */
struct statm_req {
	char *buf;
	size_t size;
	ssize_t n;
};

static int read_statm(void *arg)
{
	struct statm_req *r = arg;

	r->n = w.statm_fd < 0 ? -1 : pread(w.statm_fd, r->buf, r->size, 0);
	/* closed by a raw system call, or another file now (statm is never
	 * empty), or lost in a reopen: open it again (the next sample reads
	 * it) */
	if ((r->n < 0 && (w.statm_fd < 0 || errno == EBADF)) || r->n == 0) {
		forget(w.statm_fd);
		w.statm_fd = adopt(open("/proc/self/statm", O_RDONLY | O_CLOEXEC));
		w.statm_lost = w.statm_fd < 0;
		r->n = -1;
	}
	return 0;
}

static void sample_rss(void)
{
	uint8_t body[2 * HS_VARINT_MAX], *q;
	char buf[128];
	struct statm_req req = {buf, sizeof(buf) - 1, -1};
	ssize_t n;

	if (w.statm_fd < 0 && !w.statm_lost)
		return; /* none at start (no /proc) */
	hs_fdkeep_call(&keep, read_statm, &req);
	n = req.n;
	if (n > 0) {
		const char *s = buf;
		uint64_t pages = 0;

		buf[n] = '\0';
		while (*s && *s != ' ')
			s++;
		while (*s == ' ')
			s++;
		while (*s >= '0' && *s <= '9')
			pages = pages * 10 + (uint64_t)(*s++ - '0');
		if (!pages)
			return; /* the main thread exited: statm reads zeros */
		q = hs_enc_rss_body(body, hs_now_ticks(), pages * hs_page_size);
		hs_writer_emit_sized(HS_TAG_RSS, body, (size_t)(q - body));
	}
}

/* The footer's totals: the threads' counters and the global ones. */
static void totals(uint64_t c[HS_FC__COUNT])
{
	struct hs_thread *t;

	memset(c, 0, HS_FC__COUNT * sizeof(c[0]));
	for (t = atomic_load(&hs_threads); t; t = t->next) {
		c[HS_FC_ALLOCS] += t->n_alloc;
		c[HS_FC_FREES] += t->n_free;
		c[HS_FC_REALLOCS] += t->n_realloc;
		c[HS_FC_MMAPS] += t->n_mmap;
		c[HS_FC_MUNMAPS] += t->n_munmap;
		c[HS_FC_MREMAPS] += t->n_mremap;
		c[HS_FC_BYTES] += t->bytes;
		c[HS_FC_LOST] += t->lost;
	}
	c[HS_FC_NODES] = atomic_load(&hs_count_nodes);
	c[HS_FC_MODULES] = atomic_load(&hs_count_modules);
	c[HS_FC_THREADS] = atomic_load(&hs_count_threads);
	c[HS_FC_LOST] += atomic_load(&hs_count_lost);
}

/*
 * The END chunk with the footer, built in the chunk buffers (empty now:
 * called after the last flush), which were mapped at start, so that the
 * footer does not depend on memory being left at the end; only a chunk
 * index too large for them needs a mapping of its own.
 */
static void write_end(void)
{
	uint8_t body[3 * HS_VARINT_MAX], *q, *buf, *zbuf, *p;
	uint64_t counts[HS_FC__COUNT];
	size_t size, zsize;
	int own = 0;

	totals(counts);
	size = hs_tw_footer_size(w.nr_index) + 256;
	zsize = ZSTD_compressBound(size);
	if (size <= CHUNK_CAP && zsize <= w.zcap) {
		buf = w.raw;
		zbuf = w.zbuf;
	} else {
		buf = map(size + zsize);
		if (!buf) {
			write_failed("out of memory for the footer");
			return;
		}
		zbuf = buf + size;
		own = 1;
	}
	p = hs_enc_span(buf, 0, 0, 0);
	q = hs_enc_end_body(body, hs_now_ticks(), w.reason, w.detail);
	p = hs_tw_sized(p, HS_TAG_END, body, (size_t)(q - body));
	p = hs_tw_footer_marked(p, counts, w.index, w.nr_index, w.has_records);
	write_chunk(HS_CHUNK_END, buf, (size_t)(p - buf), zbuf, zsize);
	if (own)
		syscall(SYS_munmap, buf, size + zsize);
}

/* Sleep until the next clock tick, or until a producer wakes us. */
static void wait_tick(void)
{
	int word = atomic_load(&wake_word);
	struct timespec ts = {0, (long)(hs_precise_clock ? RSS_NS : CLOCK_NS)};

	if (atomic_load(&w.finish_req))
		return;
	atomic_store(&sleeping, 1);
	if (!atomic_load(&w.finish_req))
		syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, word, &ts, NULL, 0);
	atomic_store(&sleeping, 0);
}

/* Whether thread @tid of this process is alive (not a zombie). */
static int task_alive(const char *tid)
{
	char path[300], buf[256];
	const char *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%.255s/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/*
 * Whether the program has no thread left: its main thread called
 * pthread_exit() and every other thread but the collector's has ended.
 * glibc ends the process with exit(0) when its last thread exits, but the
 * collector's threads keep its count of threads above zero, so that is
 * done here (writer_main). Reads /proc/self/task with system calls only.
 */
static int program_gone(void)
{
	char buf[2048];
	int fd, alive = 0;
	long n;

	if (!atomic_load_explicit(&hs_main_exited, memory_order_relaxed))
		return 0;
	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (!alive && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n && !alive) {
			const struct dirent64 *d = (const void *)(buf + off);
			pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);

			off += d->d_reclen;
			if (tid <= 0 || tid == hs_writer_tid ||
			    tid == atomic_load(&hs_sampler_tid) ||
			    tid == hs_fdkeep_tid(&keep))
				continue;
			alive = task_alive(d->d_name);
		}
	}
	close(fd);
	return !alive && n == 0;
}

static void finish_here(void);

static void *writer_main(void *arg)
{
	unsigned rounds = 0;

	(void)arg;
	hs_tls.guard = 1;
	hs_writer_tid = (pid_t)syscall(SYS_gettid);
	syscall(SYS_prctl, PR_SET_NAME, "heapscope", 0, 0, 0);
	w.last_flush_ns = hs_now_ns();
	w.next_rss_ns = w.last_flush_ns;
	while (!atomic_load(&w.finish_req) && !w.failed) {
		uint64_t now;

		wait_tick();
		now = hs_now_ns();
		atomic_store_explicit(&hs_coarse_ticks, now, memory_order_relaxed);
		if (now >= w.next_rss_ns) {
			sample_rss();
			if (!(rounds++ % 10))
				hs_thread_reap();
			if (program_gone())
				exit(0); /* as glibc would: atexit handlers, then hs_fini
					  */
			w.next_rss_ns += RSS_NS;
			if (w.next_rss_ns < now)
				w.next_rss_ns = now + RSS_NS;
		}
		drain_all();
		if ((w.len >= CHUNK_CAP / 2 ||
		     (w.len && now - w.last_flush_ns >= FLUSH_NS)) &&
		    !waiting(now))
			flush_chunk();
	}
	finish_here();
	return NULL;
}

/* The writer's last steps, on the writer thread: drain, END, footer. */
static void finish_here(void)
{
	/* the last drain: every event committed before now */
	atomic_store_explicit(&hs_coarse_ticks, hs_now_ns(), memory_order_relaxed);
	drain_all();
	sample_rss();
	flush_chunk();
	write_end();
	if (atomic_load(&w.finish_req) == 1 && w.fd >= 0)
		hs_fdkeep_call(&keep, close_trace, NULL);
	atomic_store(&hs_writer_alive, 0);
	atomic_store(&w.done, 1);
}

static int start_thread(void)
{
	sigset_t all, old;
	int err;

	atomic_store(&w.finish_req, 0);
	atomic_store(&w.done, 0);
	atomic_store(&w.finishing, 0);
	atomic_store(&hs_writer_alive, 1);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		atomic_store(&hs_writer_alive, 0);
		hs_msg("cannot start the writer thread (%s); not tracing", strerror(err));
		return -1;
	}
	return 0;
}

static int setup_buffers(void)
{
	size_t ws;
	void *wsp;

	if (w.raw)
		return 0;
	/* room for a compact chunk (compress_events()): as large as its
	 * records or it is not used */
	w.compact_cap = CHUNK_CAP + HS_CC_HEADER_MAX;
	w.zcap = ZSTD_compressBound(w.compact_cap);
	w.raw = map(CHUNK_CAP + HS_CC_HEADER_MAX + w.zcap);
	if (!w.raw)
		return -1;
	w.zbuf = w.raw + CHUNK_CAP + HS_CC_HEADER_MAX;
	/* without these, chunks are written as they are (not compact);
	 * the pages are touched as chunks need them */
	w.zcol_cap = w.zcap;
	w.zcol = map(w.zcol_cap + HS_CC_SCRATCH(CHUNK_CAP) + w.compact_cap);
	w.enc = map(sizeof(*w.enc));
	if (w.zcol && w.enc) {
		w.col_scratch = w.zcol + w.zcol_cap;
		w.compact = w.col_scratch + HS_CC_SCRATCH(CHUNK_CAP);
		w.enc->scratch_room = CHUNK_CAP + HS_CS_SLACK;
		/* the address table is looked up at random: huge pages spare
		 * the TLB (a hint; without them it works the same) */
		syscall(SYS_madvise, w.enc, sizeof(*w.enc), MADV_HUGEPAGE);
	} else {
		w.compact = NULL;
	}
	/* room to stream too (compress_compact()), at either level */
	ws = ZSTD_estimateCStreamSize(HS_ZSTD_LEVEL_REPEATS);
	if (ws < ZSTD_estimateCStreamSize(ZSTD_LEVEL))
		ws = ZSTD_estimateCStreamSize(ZSTD_LEVEL);
	if (ws < ZSTD_estimateCCtxSize(ZSTD_LEVEL))
		ws = ZSTD_estimateCCtxSize(ZSTD_LEVEL);
	wsp = map(ws);
	if (wsp)
		w.cctx = ZSTD_initStaticCCtx(wsp, ws);
	if (w.cctx && ZSTD_isError(ZSTD_CCtx_setParameter(w.cctx, ZSTD_c_compressionLevel,
							  ZSTD_LEVEL)))
		w.compact = NULL; /* no streaming: chunks are written plain */
	return 0;
}

/* The trace's creation, run where the writer's descriptors are (hs_fdkeep_call()). */
struct open_req {
	const char *path;
	int precreated;
	int not_empty; /* the precreated file is not empty */
};

/* Open (or create) the trace and /proc/self/statm. 0, or -1 with errno. */
static int open_trace(void *arg)
{
	struct open_req *r = arg;
	struct stat sb;
	int fd;

	if (r->precreated)
		fd = open(r->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	else
		fd = open(r->path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC,
			  0644);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || (r->precreated && sb.st_size != 0)) {
		r->not_empty = 1;
		syscall(SYS_close, fd);
		return -1;
	}
	w.dev = sb.st_dev;
	w.ino = sb.st_ino;
	w.fd = adopt(fd);
	if (w.statm_fd < 0)
		w.statm_fd = adopt(open("/proc/self/statm", O_RDONLY | O_CLOEXEC));
	return 0;
}

/* The keeper (fdkeep.h), started once: the collector's guard keeps its
 * creation out of the pthread_create() hook. */
static void start_keeper(void)
{
	int guard = hs_tls.guard;

	hs_tls.guard = 1;
	hs_fdkeep_start(&keep); /* or the program's table (fds.c) */
	hs_tls.guard = guard;
}

int hs_writer_start(const char *path, int precreated, unsigned flags, uint64_t parent_pid,
		    int argc, char **argv)
{
	uint8_t header[HS_FILE_HEADER_SIZE];
	struct hs_process_info info;
	struct open_req open_req = {path, precreated, 0};
	char exe[1024] = "", comm[17] = "", cwd[1024] = "";
	struct timespec rt;
	ssize_t n;

	start_keeper();
	if (hs_fdkeep_call(&keep, open_trace, &open_req)) {
		if (open_req.not_empty)
			hs_msg("'%s' is not empty; not overwriting it, not tracing",
			       path);
		else
			hs_msg("cannot create '%s': %s; not tracing", path,
			       strerror(errno));
		return -1;
	}
	w.path[0] = '\0';
	if (path[0] == '/')
		snprintf(w.path, sizeof(w.path), "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(w.path, sizeof(w.path), "%s/%s", cwd, path);
	w.offset = 0;
	w.seq = 0;
	w.failed = 0;
	w.nr_index = 0;
	atomic_store(&hs_count_nodes, 0);
	atomic_store(&hs_count_modules, 0);
	atomic_store(&hs_count_threads, 0);
	atomic_store(&hs_count_lost, 0);
	w.pending = 0;
	if (setup_buffers()) {
		hs_msg("out of memory; not tracing");
		hs_fdkeep_call(&keep, close_trace, NULL);
		return -1;
	}
	w.len = 0;
	w.span_process = 0;
	w.first_ticks = UINT64_MAX;
	w.last_ticks = 0;

	hs_tw_file_header(header);
	{
		struct iovec iov = {header, sizeof(header)};
		struct write_req req = {&iov, 1, 0};

		if (hs_fdkeep_call(&keep, write_trace, &req)) {
			hs_msg("cannot write '%s': %s; not tracing", path,
			       strerror(errno));
			hs_fdkeep_call(&keep, close_trace, NULL);
			return -1;
		}
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	syscall(SYS_prctl, PR_GET_NAME, comm, 0, 0, 0);
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	clock_gettime(CLOCK_REALTIME, &rt);
	memset(&info, 0, sizeof(info));
	info.pid = (uint64_t)hs_pid;
	info.ppid = (uint64_t)getppid();
	info.page_size = hs_page_size;
	info.sample_bytes = hs_cfg.sample_bytes;
	info.max_depth = hs_cfg.max_depth;
	info.unwind = hs_cfg.unwind;
	info.clock = HS_CLOCK_NS;
	/* the wall time of tick 0 (the collector's start), not of this
	 * moment, which a loaded machine can put milliseconds later: an exec
	 * chain lays its images out on one time line by these */
	info.start_realtime_ns =
	    (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec - hs_now_ns();
	/* with sampling, the hooks mark temporary blocks' frees (FREE_TEMPORARY) */
	info.flags = flags | (hs_cfg.sample_bytes ? HS_PROC_TEMPORARY_MARKS : 0);
	info.parent_pid = parent_pid;
	info.exe = exe;
	info.comm = comm;
	info.cwd = cwd;
	info.argc = argc;
	info.argv = (const char *const *)argv;
	if (hs_tw_process_size(&info) + 64 < CHUNK_CAP) {
		uint8_t *p = hs_enc_span(w.raw, 0, 0, 0);

		p = hs_tw_process(p, &info);
		w.len = (size_t)(p - w.raw);
		w.span_process = 1;
		w.chunk_records = 1;
	}
	return start_thread();
}

void hs_writer_finish(unsigned reason, uint64_t detail, int from_signal)
{
	int expect = 0;

	if (!atomic_load(&hs_writer_alive))
		return;
	if (!atomic_compare_exchange_strong(&w.finishing, &expect, 1)) {
		/* someone else is finishing: wait for it */
		if (from_signal) {
			int i;

			for (i = 0; i < 2000 && !atomic_load(&w.done); i++) {
				struct timespec ts = {0, 1000000};

				nanosleep(&ts, NULL);
			}
		}
		return;
	}
	w.reason = reason;
	w.detail = detail;
	atomic_store(&w.finish_req, reason == HS_END_EXEC ? 2 : 1);
	if (pthread_equal(pthread_self(), w.thread)) {
		/* exit() called on the writer thread (program_gone) */
		finish_here();
		return;
	}
	force_wake();
	if (from_signal) {
		int i;

		for (i = 0; i < 2000 && !atomic_load(&w.done); i++) {
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
		return;
	}
	pthread_join(w.thread, NULL);
}

void hs_writer_pause_for_exec(void)
{
	hs_writer_finish(HS_END_EXEC, 0, 0);
}

void hs_writer_resume(void)
{
	if (w.fd < 0 || w.failed || atomic_load(&hs_writer_alive))
		return;
	start_thread();
}

void hs_writer_forget(void)
{
	if (hs_fdkeep_private(&keep)) {
		/* the keeper and its table stayed in the parent: the numbers
		 * are none of the child's */
		hs_fdkeep_forget(&keep);
	} else {
		if (w.fd >= 0)
			hs_fd_close(w.fd);
		/* /proc/self/statm was the parent's: a followed child opens its own */
		if (w.statm_fd >= 0)
			hs_fd_close(w.statm_fd);
	}
	w.fd = -1;
	w.statm_fd = -1;
	w.statm_lost = 0;
	atomic_store(&hs_writer_alive, 0);
}
