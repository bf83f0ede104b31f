/*
 * alloc - allocation wrappers with fault injection for tests.
 */
#include "common/alloc.h"
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* allocations left before they fail; -1: never. Atomic: passes that
 * run on helper threads allocate while a test counts down. */
static _Atomic long fail_countdown = -1;

static int should_fail(void)
{
	long n = atomic_load_explicit(&fail_countdown, memory_order_relaxed);

	for (;;) {
		if (n < 0)
			return 0;
		if (n == 0)
			return 1;
		if (atomic_compare_exchange_weak_explicit(&fail_countdown, &n, n - 1,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return 0;
	}
}

void hs_alloc_fail_after(long n)
{
	atomic_store_explicit(&fail_countdown, n, memory_order_relaxed);
}

/* hs_map_shrink() behaves as when mremap() cannot cut the mapping */
static _Atomic int shrink_fails;

void hs_map_shrink_fail(int on)
{
	atomic_store_explicit(&shrink_fails, on, memory_order_relaxed);
}

int hs_alloc_map_large(void)
{
	return mallopt(M_MMAP_THRESHOLD, (int)HS_MAP_LARGE) ? 0 : -EINVAL;
}

void *hs_malloc(size_t size)
{
	return should_fail() ? NULL : malloc(size ? size : 1);
}

void *hs_calloc(size_t nmemb, size_t size)
{
	return should_fail() ? NULL : calloc(nmemb ? nmemb : 1, size ? size : 1);
}

void *hs_realloc(void *ptr, size_t size)
{
	return should_fail() ? NULL : realloc(ptr, size ? size : 1);
}

void *hs_grow(void *ptr, size_t elem, size_t need, size_t *alloc)
{
	size_t n = *alloc;
	void *p;

	if (need <= n)
		return ptr;
	if (n < 16)
		n = 16;
	while (n < need) {
		if (n > SIZE_MAX / 3)
			return NULL;
		n += n / 2;
	}
	if (n > SIZE_MAX / elem)
		return NULL;
	p = hs_realloc(ptr, n * elem);
	if (!p)
		return NULL;
	*alloc = n;
	return p;
}

int hs__grow_typed(void **arr, size_t elem, size_t need, size_t *alloc)
{
	void *p = hs_grow(*arr, elem, need, alloc);

	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

char *hs_strndup(const char *s, size_t n)
{
	char *d = hs_malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *hs_strdup(const char *s)
{
	return hs_strndup(s, strlen(s));
}

void hs_free(void *ptr)
{
	free(ptr);
}

void hs_hint_huge(void *p, size_t bytes)
{
	uintptr_t lo = ((uintptr_t)p + HS_HUGE_PAGE - 1) & ~(uintptr_t)(HS_HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(HS_HUGE_PAGE - 1);

	if (p && hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

void *hs_map_zeroed(size_t bytes)
{
	void *p;

	if (!bytes || should_fail())
		return NULL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	hs_hint_huge(p, bytes);
	return p;
}

void *hs_map_grow(void *p, size_t old_bytes, size_t bytes)
{
	void *q;

	if (bytes < old_bytes || should_fail())
		return NULL;
	q = mremap(p, old_bytes, bytes, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return NULL;
	hs_hint_huge(q, bytes);
	return q;
}

size_t hs_map_shrink(void *p, size_t old_bytes, size_t bytes)
{
	if (bytes >= old_bytes)
		return old_bytes;
	if (!atomic_load_explicit(&shrink_fails, memory_order_relaxed) &&
	    mremap(p, old_bytes, bytes, 0) != MAP_FAILED)
		return bytes;
	madvise((char *)p + bytes, old_bytes - bytes, MADV_DONTNEED);
	return old_bytes;
}

void hs_map_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}
