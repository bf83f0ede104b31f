#ifndef HS_COMMON_STRTAB_H
#define HS_COMMON_STRTAB_H
#include "common/idindex.h"
#include "common/log.h"
#include <stddef.h>
#include <stdint.h>

/*
 * strtab - intern strings (frame names, paths) as dense 32-bit ids.
 *
 * Ownership: the table copies every string into its own arena. Pointers
 * returned by hs_strtab_get() are borrowed and stay valid until
 * hs_strtab_release() (the arena never moves a string once written).
 * Not thread-safe: callers serialise access.
 */
struct hs_strtab {
	struct hs_strtab_entry {
		const char *str; /* NUL-terminated copy in an arena block */
		size_t len;
	} * ent; /* id -> entry */
	size_t nr, alloc;
	struct hs_idindex index; /* of the ids, by content */
	char **block;		 /* arena blocks, each owned */
	size_t nr_block, alloc_block;
	size_t block_used, block_size; /* fill of the newest block */
	size_t arena_bytes;	       /* sum of block sizes */
	size_t bytes, max_bytes;       /* cap: input may be untrusted */
};
#define HS_STRTAB_INIT(cap)                                                              \
	{                                                                                \
		.max_bytes = (cap)                                                       \
	}

void hs_strtab_init(struct hs_strtab *t, size_t max_bytes);
/* Free all strings; @t can be reused after hs_strtab_init(). */
void hs_strtab_release(struct hs_strtab *t);
/*
 * Intern @len bytes at @s; store the id in *@id. The bytes may contain
 * anything but NUL. Returns 0, -ENOMEM or -E2BIG (over max_bytes or 2^32
 * strings). On error nothing is added and *@id is untouched.
 */
HS_MUST_CHECK int hs_strtab_intern(struct hs_strtab *t, const char *s, size_t len,
				   uint32_t *id);
/*
 * hs_strtab_intern() for a string whose hs_hash_bytes() the caller has
 * already computed (@hash): the same contract, without hashing again.
 */
HS_MUST_CHECK int hs_strtab_intern_hashed(struct hs_strtab *t, const char *s, size_t len,
					  uint64_t hash, uint32_t *id);
/*
 * A hint for a coming lookup of a string that hashes to @hash: fetch into
 * the CPU caches what that lookup will read, without waiting for it, so
 * that the lookups of a batch of strings overlap their memory accesses.
 * Call it for every string of the batch with @stage 0 (the index slot),
 * then 1 (the entry the slot names), then 2 (the entry's bytes), then
 * intern them. It never changes the table; any result is still right
 * without it.
 */
void hs_strtab_prefetch(const struct hs_strtab *t, uint64_t hash, int stage);
/* Look up without adding: 0 and *@id, or -ENOENT. */
HS_MUST_CHECK int hs_strtab_find(const struct hs_strtab *t, const char *s, size_t len,
				 uint32_t *id);
/*
 * Give the string @id the new content @len bytes at @s, keeping its id.
 * Returns 0, -EEXIST if another id already holds that content (nothing
 * changes), -EINVAL for an unknown id, -ENOMEM or -E2BIG. The old bytes
 * stay in the arena, so pointers to them remain valid.
 */
HS_MUST_CHECK int hs_strtab_rename(struct hs_strtab *t, uint32_t id, const char *s,
				   size_t len);
/* Borrowed string for @id, or NULL if @id is unknown. */
const char *hs_strtab_get(const struct hs_strtab *t, uint32_t id);
static inline size_t hs_strtab_len(const struct hs_strtab *t, uint32_t id)
{
	return id < t->nr ? t->ent[id].len : 0;
}
static inline size_t hs_strtab_count(const struct hs_strtab *t)
{
	return t->nr;
}
/* Bytes held by the table (strings, arrays and index). */
size_t hs_strtab_memory(const struct hs_strtab *t);
#endif
