#ifndef HS_COMMON_FILEIO_H
#define HS_COMMON_FILEIO_H
#include <stddef.h>

/*
 * fileio - small file helpers shared by the commands that rewrite a trace
 * or a cache file: a write that writes everything, and the lock that keeps
 * two rewrites of one trace (repack, symbolize) from crossing.
 *
 * Nothing here allocates or prints; errors are returned as -errno.
 */

/*
 * Write the @n bytes at @buf to @fd at its current offset, again after a
 * short write or EINTR. Returns 0 or -errno (some bytes may have been
 * written then). Borrows @buf.
 */
int hs_write_all(int fd, const void *buf, size_t n);
#endif
