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

/*
 * Open @path with @oflags (O_CLOEXEC is added) and hold an exclusive
 * flock() on it: the lock of a trace's rewriters, held until the
 * descriptor is closed. A rewrite renames a new file over the path while
 * it holds the old file's lock, so after locking, this checks that @path
 * still names the file it locked, and opens it again if not. @wait: block
 * until the lock is free; else fail at once with -EWOULDBLOCK when another
 * holds it; -ESTALE when the path kept changing. Returns the descriptor
 * (the caller closes it) or -errno.
 */
int hs_open_locked(const char *path, int oflags, int wait);

/* 1 when @path names the file open as @fd (same device and inode), else
 * 0 (also when either cannot be stat()ed). @follow: through a symbolic
 * link at @path; else a link is not the file. */
int hs_path_is_fd(const char *path, int fd, int follow);
#endif
