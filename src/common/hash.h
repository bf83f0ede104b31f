#ifndef HS_COMMON_HASH_H
#define HS_COMMON_HASH_H
#include <stddef.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

/*
 * hash - fast 64-bit hashes (XXH3) with good avalanche, for the hash
 * tables of the read side: u64map and idindex (common/) and their users.
 * The hashes are unseeded, so a file crafted against them can still make
 * keys collide; the tables stay correct then, only slower. Tables that
 * hash otherwise: the collector's lock-free ones (sampler.c and unwind.c
 * multiply by the golden ratio; stacks.c calls XXH3 itself), the live
 * blocks of analysis/memviews.c and the seen-address set of
 * format/trace_reader.c's tie ordering.
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
