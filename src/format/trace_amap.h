#ifndef HS_FORMAT_TRACE_AMAP_H
#define HS_FORMAT_TRACE_AMAP_H
#include <stddef.h>
#include <stdint.h>

/*
 * trace_amap - an address -> u64 map for the readers of heap traces: which
 * blocks are live and their sizes (tie ordering, totals). Key 0 is never
 * stored (address 0 is never live); UINT64_MAX says "absent".
 *
 * Memory comes from hs_malloc and is owned by the map
 * (hs_amap_release()). Zero-initialise a map before use. Not thread-safe.
 * (To be replaced by the shared u64 map of src/common.)
 */
struct hs_amap {
	uint64_t *key;		/* 0 = empty (address 0 is never live) */
	uint64_t *val;
	size_t n, cap;
};

/*
 * Set @a to @v; *@old gets the value it had, or UINT64_MAX if it was
 * absent. Returns 0 or -ENOMEM (the map is then unchanged).
 */
int hs_amap_put(struct hs_amap *m, uint64_t a, uint64_t v, uint64_t *old);
/* Remove @a; returns its value or UINT64_MAX. */
uint64_t hs_amap_del(struct hs_amap *m, uint64_t a);
/* Whether @a is in the map. */
int hs_amap_has(const struct hs_amap *m, uint64_t a);
/* Free the map's memory; it is empty (and reusable) afterwards. */
void hs_amap_release(struct hs_amap *m);
#endif
