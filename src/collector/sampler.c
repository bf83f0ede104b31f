/*
 * sampler - `--sample-bytes N`: a Poisson process over allocated bytes.
 *
 * Each thread counts down an exponentially distributed number of bytes
 * (mean N, drawn from its own xorshift generator: no lock, no shared
 * state) and records the allocation during which the count runs out; an
 * allocation of s bytes is thus recorded with probability 1 - exp(-s/N).
 *
 * Frees are recorded only for recorded blocks, so every free asks whether
 * its block was sampled. The sampled live blocks are kept in one hash set
 * that frees read without a lock: a sequence counter (seqlock) tells a
 * reader that the set changed under it, and it looks again. Changes
 * (a sampled allocation or its free: rare by design) take a spinlock.
 * Deletion shifts entries back (no tombstones); a full set is replaced by
 * a larger one, and old sets stay mapped so a late reader never faults.
 */
#include "collector/collector.h"
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct set {
	size_t mask;
	size_t count;
	_Atomic uintptr_t slot[];
};

_Atomic uint64_t hs_sample_filter[(1u << HS_FILTER_BITS) / 64];
/* live sampled blocks per filter bucket, under the lock (255 sticks) */
static uint8_t filter_count[1u << HS_FILTER_BITS];
static _Atomic(struct set *) cur;
static _Atomic unsigned seq; /* odd while the set changes */
static atomic_flag lock = ATOMIC_FLAG_INIT;

static inline size_t home(uintptr_t a, size_t mask)
{
	return (size_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

int64_t hs_sample_next(struct hs_thread *t) HS_HIDDEN;
int64_t hs_sample_next(struct hs_thread *t)
{
	/* u in (0, 1]: 53 random bits */
	double u = ((double)(xorshift(&t->rng) >> 11) + 1.0) / 9007199254740992.0;
	double gap = -log(u) * (double)hs_cfg.sample_bytes;

	if (gap < 1)
		gap = 1;
	if (gap > 9e18)
		gap = 9e18;
	return (int64_t)gap;
}

void hs_sampler_seed(struct hs_thread *t)
{
	t->rng = ((uint64_t)t->tid * 0x9E3779B97F4A7C15ull) ^ (hs_now_ticks() | 1) ^
		 (uint64_t)(uintptr_t)t;
	if (!t->rng)
		t->rng = 1;
	t->sample_left = hs_cfg.sample_bytes ? hs_sample_next(t) : 0;
}

static struct set *set_new(size_t n)
{
	size_t bytes = sizeof(struct set) + n * sizeof(uintptr_t);
	struct set *s = (void *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if ((long)s < 0 && (long)s > -4096)
		return NULL;
	s->mask = n - 1;
	return s;
}

static void set_put(struct set *s, uintptr_t a)
{
	size_t i = home(a, s->mask);

	while (atomic_load_explicit(&s->slot[i], memory_order_relaxed))
		i = (i + 1) & s->mask;
	atomic_store_explicit(&s->slot[i], a, memory_order_relaxed);
	s->count++;
}

/*
 * Under the lock: count a sampled block in or out of @a's filter bucket
 * (@d = 1 or -1), setting the bucket's bit while the count is not 0.
 */
static void filter_count_add(uintptr_t a, int d)
{
	size_t slot = hs_filter_slot(a);
	uint8_t c = filter_count[slot];
	_Atomic uint64_t *w = &hs_sample_filter[slot / 64];
	uint64_t bit = 1ull << (slot % 64), v;

	if (c == 255 || (d < 0 && c == 0))
		return;
	filter_count[slot] = c = (uint8_t)(c + d);
	v = atomic_load_explicit(w, memory_order_relaxed);
	atomic_store_explicit(w, c ? v | bit : v & ~bit, memory_order_release);
}

static void lock_acquire(void)
{
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
}

static void lock_release(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

int hs_sampled_add(uintptr_t a)
{
	struct set *s;
	int ret = 0;

	lock_acquire();
	s = atomic_load_explicit(&cur, memory_order_relaxed);
	if (!s || 2 * (s->count + 1) > s->mask + 1) {
		struct set *ns = set_new(s ? 2 * (s->mask + 1) : 4096);
		size_t i;

		if (!ns) {
			ret = -1;
			goto out;
		}
		if (s)
			for (i = 0; i <= s->mask; i++) {
				uintptr_t v = atomic_load_explicit(&s->slot[i],
								   memory_order_relaxed);
				if (v)
					set_put(ns, v);
			}
		atomic_store_explicit(&cur, ns, memory_order_release);
		s = ns;
	}
	atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel);
	set_put(s, a);
	filter_count_add(a, 1);
	atomic_fetch_add_explicit(&seq, 1, memory_order_release);
out:
	lock_release();
	return ret;
}

/* Under the lock: delete the entry at @i, shifting its cluster back. */
static void set_delete(struct set *s, size_t i)
{
	size_t j = i;

	for (;;) {
		uintptr_t v;
		size_t h;

		j = (j + 1) & s->mask;
		v = atomic_load_explicit(&s->slot[j], memory_order_relaxed);
		if (!v)
			break;
		h = home(v, s->mask);
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			atomic_store_explicit(&s->slot[i], v, memory_order_relaxed);
			i = j;
		}
	}
	atomic_store_explicit(&s->slot[i], 0, memory_order_relaxed);
	s->count--;
}

static int find(const struct set *s, uintptr_t a, size_t *at)
{
	size_t i = home(a, s->mask);

	for (;;) {
		uintptr_t v = atomic_load_explicit(&s->slot[i], memory_order_relaxed);

		if (!v)
			return 0;
		if (v == a) {
			*at = i;
			return 1;
		}
		i = (i + 1) & s->mask;
	}
}

int hs_sampled_remove(uintptr_t a)
{
	struct set *s;
	unsigned before;
	size_t i;
	int found;

	if (!hs_maybe_sampled(a))
		return 0;
	/* lock-free: is it there at all? */
	for (;;) {
		before = atomic_load_explicit(&seq, memory_order_acquire);
		s = atomic_load_explicit(&cur, memory_order_acquire);
		if (!s)
			return 0;
		if (before & 1)
			continue;
		found = find(s, a, &i);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&seq, memory_order_relaxed) == before)
			break;
	}
	if (!found)
		return 0;
	lock_acquire();
	s = atomic_load_explicit(&cur, memory_order_relaxed);
	found = find(s, a, &i);
	if (found) {
		atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel);
		set_delete(s, i);
		filter_count_add(a, -1);
		atomic_fetch_add_explicit(&seq, 1, memory_order_release);
	}
	lock_release();
	return found;
}

void hs_sampler_after_fork(void)
{
	atomic_flag_clear(&lock);
	if (atomic_load(&seq) & 1)
		atomic_fetch_add(&seq, 1);
}
