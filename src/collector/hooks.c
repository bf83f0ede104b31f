/*
 * hooks - the interposed allocation functions: the malloc family, mmap,
 * munmap, mremap and dlclose.
 *
 * Each hook calls the real function, then (if tracing, and not inside
 * another hook of this thread) records the event: an allocation's time is
 * taken after the real call returned, a free's before the block is
 * released, so time order is also the order of address reuse between
 * threads. errno is what the real function left.
 *
 * Before the real functions are known (dlsym's own calloc), allocations
 * come from a static bootstrap pool; freeing them is a no-op.
 */
#include "collector/collector.h"
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* --- the bootstrap pool -------------------------------------------------- */

#define POOL_SIZE (256u << 10)
static char pool[POOL_SIZE] __attribute__((aligned(64)));
static _Atomic size_t pool_used;

static inline int in_pool(const void *p)
{
	return (const char *)p >= pool && (const char *)p < pool + POOL_SIZE;
}

/* Pool block: [size_t size][pad to 16][data], aligned to @align. */
static void *pool_alloc(size_t size, size_t align)
{
	size_t at, start, need;

	if (align < 16)
		align = 16;
	for (;;) {
		at = atomic_load(&pool_used);
		start = (at + 16 + align - 1) & ~(align - 1);
		need = start + size;
		if (need > POOL_SIZE || need < start)
			return NULL;
		if (atomic_compare_exchange_weak(&pool_used, &at, need))
			break;
	}
	*(size_t *)(pool + start - 16) = size;
	return pool + start; /* zeroed: the pool is never reused */
}

static size_t pool_size(const void *p)
{
	return *(const size_t *)((const char *)p - 16);
}

/* Make sure the real functions are known; 0 if we must use the pool. */
static inline int real_ready(void)
{
	if (HS_LIKELY(hs_real.malloc))
		return 1;
	if (hs_resolving())
		return 0;
	hs_resolve_real();
	return hs_real.malloc != NULL;
}

static inline int tracing(void)
{
	return atomic_load_explicit(&hs_on, memory_order_relaxed) == 1 && !hs_tls.guard;
}

/* --- recording -------------------------------------------------------------- */

/* The state to record an event in; NULL (the event counted lost) if none. */
static inline struct hs_thread *self(void)
{
	struct hs_thread *t = hs_tls.t;

	if (HS_LIKELY(t))
		return t;
	t = hs_thread_get();
	if (HS_UNLIKELY(!t))
		hs_thread_lost();
	return t;
}

static inline uint64_t last_ticks(const struct hs_thread *t)
{
	return atomic_load_explicit(&t->st_ticks, memory_order_relaxed);
}

static inline uint64_t last_addr(const struct hs_thread *t)
{
	return atomic_load_explicit(&t->st_addr, memory_order_relaxed);
}

/* Encode an allocation record at @q; returns its end. */
static inline uint8_t *put_alloc(uint8_t *q, const struct hs_thread *t, unsigned tag,
				 uint64_t ticks, uint64_t addr, size_t size,
				 uint32_t stack, uintptr_t old, size_t align)
{
	int64_t dt = (int64_t)(ticks - last_ticks(t)),
		da = (int64_t)(addr - last_addr(t));

	/* lead 0: the clock does not resolve it */
	if (hs_tag_is_realloc(tag))
		return hs_enc_realloc(q, tag, dt, da, size, stack, (int64_t)(old - addr),
				      0);
	return hs_enc_alloc(q, tag, dt, da, size, stack, align);
}

/* Encode a FREE or REALLOC_FREE of @addr and commit it. */
static inline void put_free(struct hs_thread *t, unsigned tag, uint64_t addr)
{
	uint64_t ticks = hs_now_ticks();
	uint8_t *s = hs_rec_begin(t), *q = s;

	q = hs_enc_free(q, tag, (int64_t)(ticks - last_ticks(t)),
			(int64_t)(addr - last_addr(t)));
	t->n_free++;
	hs_rec_commit(t, s, q, ticks, addr);
}

/*
 * With --sample-bytes: record the allocation only if it is sampled. A
 * realloc of the thread's latest allocation, none made since, ends a
 * temporary block: its free is a FREE_TEMPORARY of its own, before the
 * new block's record (which then has no old block).
 */
static __attribute__((noinline)) void record_sampled(struct hs_thread *t, unsigned tag,
						     void *p, size_t size, uintptr_t old,
						     size_t align, void *fp)
{
	int old_temp = old && old == t->temp_last;
	int old_sampled = old && hs_sampled_remove(old);
	uint64_t ticks, addr = (uintptr_t)p;
	uint32_t stack;
	uint8_t *s, *q;

	t->temp_last = 0;
	if (old_sampled && old_temp) {
		put_free(t, HS_TAG_FREE_TEMPORARY, old);
		old_sampled = 0;
	}
	if (!hs_sample(t, size)) {
		/* the sampled old block went away; the new one is not kept */
		if (old_sampled)
			put_free(t, HS_TAG_REALLOC_FREE, old);
		return;
	}
	if (hs_sampled_add(addr))
		return;
	ticks = hs_now_ticks();
	stack = hs_stack_here(t, fp);
	s = hs_rec_begin(t);
	q = put_alloc(s, t, tag, ticks, addr, size, stack, old_sampled ? old : 0, align);
	t->n_alloc++;
	t->bytes += size;
	if (hs_tag_is_realloc(tag))
		t->n_realloc++;
	hs_rec_commit(t, s, q, ticks, addr);
	t->temp_last = addr;
}

/*
 * Record an allocation of @size bytes at @p. @old (realloc's old block, or
 * 0) and @align complete the record for the tags that have them. @fp is
 * the hook's frame.
 */
static inline __attribute__((always_inline)) void
record_alloc(unsigned tag, void *p, size_t size, uintptr_t old, size_t align, void *fp)
{
	struct hs_thread *t = self();
	uint64_t ticks, addr = (uintptr_t)p;
	uint32_t stack;
	uint8_t *s, *q;

	if (HS_UNLIKELY(!t))
		return;
	if (HS_UNLIKELY(hs_cfg.sample_bytes)) {
		/* the common case inline: not sampled, no sampled old block */
		if (!old || !hs_maybe_sampled(old)) {
			t->temp_last = 0;
			t->sample_left -= (int64_t)size;
			if (HS_LIKELY(t->sample_left > 0))
				return;
			t->sample_left += (int64_t)size;
		}
		record_sampled(t, tag, p, size, old, align, fp);
		return;
	}
	ticks = hs_now_ticks();
	stack = hs_stack_here(t, fp);
	s = hs_rec_begin(t);
	q = put_alloc(s, t, tag, ticks, addr, size, stack, old, align);
	t->n_alloc++;
	t->bytes += size;
	if (hs_tag_is_realloc(tag))
		t->n_realloc++;
	hs_rec_commit(t, s, q, ticks, addr);
}

/* Record that @p is about to be released (FREE or REALLOC_FREE). */
static inline void record_free(unsigned tag, void *p)
{
	struct hs_thread *t = self();

	if (HS_UNLIKELY(!t))
		return;
	if (HS_UNLIKELY(hs_cfg.sample_bytes)) {
		if (!hs_maybe_sampled((uintptr_t)p) || !hs_sampled_remove((uintptr_t)p))
			return;
		/* the thread's latest allocation, none made since */
		if ((uintptr_t)p == t->temp_last) {
			tag = HS_TAG_FREE_TEMPORARY;
			t->temp_last = 0;
		}
	}
	put_free(t, tag, (uintptr_t)p);
}

/*
 * Whether heap events are not recorded at all (--no-heap, tracing stopped
 * or not started) while the real functions are known: the hooks then call
 * them straight away.
 */
#define UNTRACED()                                                                       \
	(atomic_load_explicit(&hs_on, memory_order_relaxed) != 1 &&                      \
	 atomic_load_explicit(&hs_real_ready, memory_order_acquire))

/*
 * The common cases that record nothing, decided before anything else (no
 * guard, no record): heap events not recorded, or with --sample-bytes an
 * allocation the sampler skips. Returns 1 to skip; else the countdown is
 * as it was and the record path decides. Inside a hook (the guard set)
 * the countdown is left alone: only the program's allocations count.
 */
static inline int skip_unsampled(size_t size)
{
	struct hs_thread *t;

	if (HS_LIKELY(!hs_cfg.sample_bytes))
		return UNTRACED();
	t = hs_tls.t;
	if (HS_UNLIKELY(!t || hs_tls.guard))
		return 0;
	t->temp_last = 0; /* another allocation: the latest one is not temporary */
	t->sample_left -= (int64_t)size;
	if (HS_LIKELY(t->sample_left > 0))
		return 1;
	t->sample_left += (int64_t)size;
	return 0;
}

/* Whether a free records nothing: not recording, or an unsampled block. */
static inline int skip_unsampled_free(const void *p)
{
	if (HS_LIKELY(!hs_cfg.sample_bytes))
		return UNTRACED();
	return !hs_maybe_sampled((uintptr_t)p);
}

/*
 * The exported hooks of the malloc family are small: the cases that record
 * nothing (most allocations with --sample-bytes) return from them without
 * saving registers; the rest is in the *_slow() functions, which get the
 * hook's frame (the stack walk starts there). A slow call is never made a
 * tail call, since the hook's frame must still be there: HS_KEEP_FRAME()
 * on its result after the call says so.
 */
#define HS_KEEP_FRAME(x) __asm__ volatile("" : "+r"(x))

/* --- the malloc family ------------------------------------------------------ */

static __attribute__((noinline)) void *malloc_slow(size_t size, void *fp)
{
	void *p;

	if (HS_UNLIKELY(!real_ready()))
		return pool_alloc(size, 16);
	if (HS_UNLIKELY(!tracing()))
		return hs_real.malloc(size);
	hs_tls.guard = 1;
	p = hs_real.malloc(size);
	if (HS_LIKELY(p))
		record_alloc(HS_TAG_MALLOC, p, size, 0, 0, fp);
	hs_tls.guard = 0;
	return p;
}

HS_EXPORT void *malloc(size_t size)
{
	void *p;

	if (skip_unsampled(size))
		return hs_real.malloc(size);
	p = malloc_slow(size, __builtin_frame_address(0));
	HS_KEEP_FRAME(p);
	return p;
}

static __attribute__((noinline)) void free_slow(void *p)
{
	if (HS_UNLIKELY(!p || in_pool(p)))
		return;
	if (HS_UNLIKELY(!tracing()) || skip_unsampled_free(p)) {
		hs_real.free(p);
		return;
	}
	hs_tls.guard = 1;
	record_free(HS_TAG_FREE, p);
	hs_real.free(p);
	hs_tls.guard = 0;
}

HS_EXPORT void free(void *p)
{
	/* an unsampled block (the pool's never are, but may share a bucket) */
	if (skip_unsampled_free(p) && !in_pool(p)) {
		hs_real.free(p);
		return;
	}
	free_slow(p);
}

static __attribute__((noinline)) void *calloc_slow(size_t n, size_t size, void *fp)
{
	void *p;

	if (HS_UNLIKELY(!real_ready())) {
		if (size && n > SIZE_MAX / size)
			return NULL;
		return pool_alloc(n * size, 16);
	}
	if (HS_UNLIKELY(!tracing()))
		return hs_real.calloc(n, size);
	hs_tls.guard = 1;
	p = hs_real.calloc(n, size);
	if (HS_LIKELY(p))
		record_alloc(HS_TAG_CALLOC, p, n * size, 0, 0, fp);
	hs_tls.guard = 0;
	return p;
}

HS_EXPORT void *calloc(size_t n, size_t size)
{
	void *p;

	if ((!size || n <= SIZE_MAX / size) && skip_unsampled(n * size))
		return hs_real.calloc(n, size);
	p = calloc_slow(n, size, __builtin_frame_address(0));
	HS_KEEP_FRAME(p);
	return p;
}

/* realloc and reallocarray: @tag says which. */
static __attribute__((noinline)) void *realloc_slow(unsigned tag, void *old, size_t n,
						    size_t size, void *fp)
{
	void *p;
	size_t bytes = n * size;

	if (HS_UNLIKELY(!real_ready())) {
		if (tag == HS_TAG_REALLOCARRAY && size && n > SIZE_MAX / size)
			return NULL;
		p = pool_alloc(bytes, 16);
		if (p && old && in_pool(old))
			memcpy(p, old, pool_size(old) < bytes ? pool_size(old) : bytes);
		return p;
	}
	if (HS_UNLIKELY(in_pool(old))) {
		/* a bootstrap block grows into a real one */
		size_t keep = pool_size(old);

		if (tag == HS_TAG_REALLOCARRAY && size && n > SIZE_MAX / size) {
			errno = ENOMEM;
			return NULL;
		}
		p = malloc(bytes);
		if (p)
			memcpy(p, old, keep < bytes ? keep : bytes);
		return p;
	}
	if (HS_UNLIKELY(!tracing()) ||
	    ((!old || skip_unsampled_free(old)) && bytes &&
	     (!size || n <= SIZE_MAX / size) && skip_unsampled(bytes)))
		return tag == HS_TAG_REALLOC ? hs_real.realloc(old, size)
					     : hs_real.reallocarray(old, n, size);
	hs_tls.guard = 1;
	p = tag == HS_TAG_REALLOC ? hs_real.realloc(old, size)
				  : hs_real.reallocarray(old, n, size);
	if (p)
		record_alloc(tag, p, bytes, (uintptr_t)old, 0, fp);
	else if (old && bytes == 0 && !(size && n > SIZE_MAX / size))
		record_free(HS_TAG_REALLOC_FREE, old); /* realloc(p, 0) freed p */
	hs_tls.guard = 0;
	return p;
}

/*
 * With --sample-bytes: a realloc that records nothing (an unsampled or no
 * old block, a new one not sampled). Returns 1 to skip.
 */
static inline int skip_unsampled_realloc(const void *old, size_t n, size_t size)
{
	return (!old || skip_unsampled_free(old)) && size && n &&
	       (n == 1 || n <= SIZE_MAX / size) && !in_pool(old) &&
	       skip_unsampled(n * size);
}

HS_EXPORT void *realloc(void *old, size_t size)
{
	void *p;

	if (skip_unsampled_realloc(old, 1, size))
		return hs_real.realloc(old, size);
	p = realloc_slow(HS_TAG_REALLOC, old, 1, size, __builtin_frame_address(0));
	HS_KEEP_FRAME(p);
	return p;
}

HS_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	void *p;

	if (skip_unsampled_realloc(old, n, size))
		return hs_real.reallocarray(old, n, size);
	p = realloc_slow(HS_TAG_REALLOCARRAY, old, n, size, __builtin_frame_address(0));
	HS_KEEP_FRAME(p);
	return p;
}

HS_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int r;

	if (HS_UNLIKELY(!real_ready())) {
		void *p = pool_alloc(size, align);

		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (HS_UNLIKELY(!tracing()))
		return hs_real.posix_memalign(out, align, size);
	hs_tls.guard = 1;
	r = hs_real.posix_memalign(out, align, size);
	if (!r)
		record_alloc(HS_TAG_POSIX_MEMALIGN, *out, size, 0, align,
			     __builtin_frame_address(0));
	hs_tls.guard = 0;
	return r;
}

/* aligned_alloc, memalign, valloc, pvalloc */
#define ALIGNED_HOOK(name, tag, params, call, size_expr, align_expr)                     \
	HS_EXPORT void *name params                                                      \
	{                                                                                \
		void *p;                                                                 \
		if (HS_UNLIKELY(!real_ready()))                                          \
			return pool_alloc(size_expr, align_expr);                        \
		if (HS_UNLIKELY(!tracing()))                                             \
			return hs_real.call;                                             \
		hs_tls.guard = 1;                                                        \
		p = hs_real.call;                                                        \
		if (HS_LIKELY(p))                                                        \
			record_alloc(tag, p, size_expr, 0, align_expr,                   \
				     __builtin_frame_address(0));                        \
		hs_tls.guard = 0;                                                        \
		return p;                                                                \
	}

ALIGNED_HOOK(aligned_alloc, HS_TAG_ALIGNED_ALLOC, (size_t align, size_t size),
	     aligned_alloc(align, size), size, align)
ALIGNED_HOOK(memalign, HS_TAG_MEMALIGN, (size_t align, size_t size),
	     memalign(align, size), size, align)
ALIGNED_HOOK(valloc, HS_TAG_VALLOC, (size_t size), valloc(size), size, hs_page_size)
ALIGNED_HOOK(pvalloc, HS_TAG_PVALLOC, (size_t size), pvalloc(size), size, hs_page_size)

/* --- anonymous memory ------------------------------------------------------- */

static void record_mmap(void *p, size_t len, int prot, int flags, void *fp)
{
	struct hs_thread *t = self();
	uint8_t rec[HS_REC_MAX], *q = rec;
	uint64_t ticks, addr = (uintptr_t)p;
	uint32_t stack;

	if (!t)
		return;
	ticks = hs_now_ticks();
	stack = hs_stack_here(t, fp);
	q = hs_enc_mmap(q, (int64_t)(ticks - last_ticks(t)),
			(int64_t)(addr - last_addr(t)), len, (uint64_t)(unsigned)prot,
			(uint64_t)(unsigned)flags, stack);
	t->n_mmap++;
	hs_ring_write(t, rec, (size_t)(q - rec), ticks, addr);
}

static inline void *do_mmap(void *(*real)(void *, size_t, int, int, int, off_t),
			    void *addr, size_t len, int prot, int flags, int fd,
			    off_t off, void *fp)
{
	void *p;

	if (HS_UNLIKELY(!real)) {
		hs_resolve_real();
		real = hs_real.mmap;
		if (!real) {
			errno = ENOSYS;
			return MAP_FAILED;
		}
	}
	if (!(flags & MAP_ANONYMOUS) || !tracing())
		return real(addr, len, prot, flags, fd, off);
	hs_tls.guard = 1;
	p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		int e = errno;

		record_mmap(p, len, prot, flags, fp);
		errno = e;
	}
	hs_tls.guard = 0;
	return p;
}

HS_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(hs_real.mmap, addr, len, prot, flags, fd, off,
		       __builtin_frame_address(0));
}

HS_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(hs_real.mmap64 ? hs_real.mmap64 : hs_real.mmap, addr, len, prot,
		       flags, fd, off, __builtin_frame_address(0));
}

HS_EXPORT int munmap(void *addr, size_t len)
{
	struct hs_thread *t;
	uint64_t ticks;
	int r, e;

	hs_resolve_real();
	if (!tracing())
		return hs_real.munmap(addr, len);
	hs_tls.guard = 1;
	ticks = hs_now_ticks();
	r = hs_real.munmap(addr, len);
	e = errno;
	t = r ? NULL : self();
	if (t) {
		uint8_t rec[HS_REC_MAX], *q = rec;
		uint64_t a = (uintptr_t)addr;

		q = hs_enc_munmap(q, (int64_t)(ticks - last_ticks(t)),
				  (int64_t)(a - last_addr(t)), len);
		t->n_munmap++;
		hs_ring_write(t, rec, (size_t)(q - rec), ticks, a);
	}
	errno = e;
	hs_tls.guard = 0;
	return r;
}

HS_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *target = NULL, *p;
	struct hs_thread *t;
	va_list ap;
	int e;

	hs_resolve_real();
	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		target = va_arg(ap, void *);
		va_end(ap);
	}
	if (!tracing())
		return hs_real.mremap(old, old_len, new_len, flags, target);
	hs_tls.guard = 1;
	p = hs_real.mremap(old, old_len, new_len, flags, target);
	e = errno;
	t = p == MAP_FAILED ? NULL : self();
	if (t) {
		uint8_t rec[HS_REC_MAX], *q = rec;
		uint64_t ticks = hs_now_ticks(), addr = (uintptr_t)p;
		uint32_t stack = hs_stack_here(t, __builtin_frame_address(0));

		q = hs_enc_mremap(q, (int64_t)(ticks - last_ticks(t)),
				  (int64_t)(addr - last_addr(t)), new_len, stack,
				  (int64_t)((uintptr_t)old - addr), old_len);
		t->n_mremap++;
		hs_ring_write(t, rec, (size_t)(q - rec), ticks, addr);
	}
	errno = e;
	hs_tls.guard = 0;
	return p;
}

/* --- modules ---------------------------------------------------------------- */

HS_EXPORT int dlclose(void *handle)
{
	int r, e;

	hs_resolve_real();
	r = hs_real.dlclose(handle);
	if (tracing()) {
		struct hs_thread *t;

		e = errno;
		hs_tls.guard = 1;
		t = hs_thread_get();
		if (t)
			hs_modules_scan(t);
		hs_tls.guard = 0;
		errno = e;
	}
	return r;
}
