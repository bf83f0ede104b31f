#ifndef HS_COMMON_FILEIO_H
#define HS_COMMON_FILEIO_H
#include <stddef.h>

/*
 * fileio - small file helpers shared by the commands that rewrite a trace
 * or a cache file: a write that writes everything, the lock that keeps
 * two rewrites of one trace (repack, symbolize) from crossing, and the
 * temporary file of a name of its own that a new file is written to
 * before it is renamed into place.
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

/*
 * Create a file of a name nobody else has, as mkostemp() does, but in the
 * directory open as @dirfd (AT_FDCWD: relative to the working directory),
 * so that a caller that holds a directory open with O_NOFOLLOW never goes
 * through a path again. @tmpl is the name, or a path under @dirfd, ending
 * in "XXXXXX"; those six characters are replaced in place by letters and
 * digits drawn at random, and the file is created, mode 0600 less the
 * umask, with O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC and
 * @flags (O_APPEND, O_SYNC...): never a file or a link that was there
 * already. A name that is taken is drawn again, up to HS_MKOSTEMP_TRIES
 * times. Returns the descriptor (the caller closes it, and removes the
 * file under the name left in @tmpl) or -errno: -EINVAL when @tmpl does
 * not end in XXXXXX, -EEXIST when every name drawn was taken, else
 * openat()'s error (-ENOENT: a directory of the path is missing). On an
 * error @tmpl holds the last name tried.
 */
#define HS_MKOSTEMP_TRIES 100
int hs_mkostempat(int dirfd, char *tmpl, int flags);

/* Testing aid: when set, the random numbers hs_mkostempat() draws names
 * from (one call a name). */
extern unsigned long long (*hs__mkostempat_random)(void);
#endif
