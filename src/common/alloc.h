#ifndef HS_COMMON_ALLOC_H
#define HS_COMMON_ALLOC_H
#include <stddef.h>

/*
 * alloc - the one door through which heapscope's libraries get memory.
 *
 * Every library allocation goes through hs_malloc() and friends so that
 * tests can make the Nth allocation fail (hs_alloc_fail_after()) and check
 * that each caller cleans up and reports -ENOMEM. The functions behave as
 * their libc namesakes; hs_free(NULL) is a no-op.
 *
 * Not used by the collector, whose hooks must never allocate.
 */
void *hs_malloc(size_t size);
void *hs_calloc(size_t nmemb, size_t size);
/* Like realloc(3); on failure the old block is left untouched. */
void *hs_realloc(void *ptr, size_t size);
/*
 * Grow an array of @elem-byte items so that it holds at least @need items.
 * *@alloc is the current capacity (in items) and is updated on success.
 * Growth is geometric (×1.5, at least 16). Returns the new pointer, or NULL
 * on overflow or out of memory, in which case *@ptr is still valid.
 */
void *hs_grow(void *ptr, size_t elem, size_t need, size_t *alloc);
char *hs_strdup(const char *s);
char *hs_strndup(const char *s, size_t n);
void hs_free(void *ptr);

/*
 * Ask that the @bytes at @p, fresh memory not touched yet, be mapped in
 * huge pages where whole 2 MiB pages fit: a hint the kernel may not
 * take. For arrays of millions of entries read at random (the filter's,
 * the call tree's, the live blocks' table), where with 4 KiB pages the
 * faults that map them and the TLB misses cost a tenth of a pass.
 */
#define HS_HUGE_PAGE ((size_t)2 << 20)
void hs_hint_huge(void *p, size_t bytes);

/*
 * Large zeroed memory mapped from the kernel, for a table that grows by
 * doubling (the memory views' live blocks): hs_map_grow() extends it in
 * place where it can, else moves its pages without copying them, and
 * the new bytes are zero pages had only when first written. So growing
 * never holds the old and the new table at once, and no page is cleared
 * twice. Both count as allocations for hs_alloc_fail_after() and ask
 * for huge pages (hs_hint_huge()). NULL on failure (hs_map_grow(): @p is
 * left as it was). Freed with hs_map_free() and the same @bytes.
 */
void *hs_map_zeroed(size_t bytes);
void *hs_map_grow(void *p, size_t old_bytes, size_t bytes);
/*
 * The bytes of mapping @p past @bytes (a multiple of the page size) go
 * back to the kernel; it stays where it is. Returns its size now: @bytes,
 * or @old_bytes when it could not be cut, its tail then zero again.
 */
size_t hs_map_shrink(void *p, size_t old_bytes, size_t bytes);
void hs_map_free(void *p, size_t bytes);

/*
 * From now on, blocks of HS_MAP_LARGE bytes or more get a mapping of
 * their own, which free() hands back to the system: for a command that
 * reads a trace once with buffers of megabytes on several threads. glibc
 * starts at 128 KiB but raises its threshold to the size of every mapped
 * block freed (up to 32 MiB), after which a reading thread's grown and
 * freed buffers stay in its arena, resident and reusable by it alone
 * (`stats` of a 5.6M-event python3 trace: 10 MiB of its highest point).
 * Fixing the threshold also stops glibc from moving it. 0, or -EINVAL
 * when the C library refused (nothing changed then).
 */
#define HS_MAP_LARGE ((size_t)1 << 20)
int hs_alloc_map_large(void);

/*
 * Testing aid: after @n further successful allocations, every allocation
 * fails until hs_alloc_fail_after(-1) is called. The countdown is atomic:
 * threads a pass starts count down with it.
 */
void hs_alloc_fail_after(long n);
/* Testing aid: while @on, hs_map_shrink() keeps every mapping whole (its
 * tail zeroed), as when mremap() cannot cut it. */
void hs_map_shrink_fail(int on);

/* Grow @arr (a typed pointer) with capacity @alloc to hold @need items. */
#define HS_GROW(arr, need, alloc)                                                        \
	((need) <= (alloc)                                                               \
	     ? 0                                                                         \
	     : hs__grow_typed((void **)&(arr), sizeof(*(arr)), (need), &(alloc)))
int hs__grow_typed(void **arr, size_t elem, size_t need, size_t *alloc);
#endif
