#ifndef HS_COMMON_HASH_H
#define HS_COMMON_HASH_H
#include <stddef.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

/*
 * hash - strong, fast 64-bit hashes (XXH3) for every hash table in
 * heapscope. Interning untrusted names and stacks needs a hash that does
 * not degrade on crafted input; XXH3 is seeded per process where that
 * matters (see hs_hash_seed()).
 */
static inline uint64_t hs_hash_bytes(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

/* Hash two 32-bit keys, e.g. (frame, caller) of an interned stack. */
static inline uint64_t hs_hash_pair(uint32_t a, uint32_t b)
{
	uint64_t k = ((uint64_t)a << 32) | b;

	return XXH3_64bits(&k, sizeof(k));
}

/* Hash one 64-bit key (addresses, ids). */
static inline uint64_t hs_hash_u64(uint64_t k)
{
	return XXH3_64bits(&k, sizeof(k));
}
#endif
