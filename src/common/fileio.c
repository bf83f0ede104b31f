/*
 * fileio - whole writes and the rewriters' lock (see fileio.h).
 */
#include "common/fileio.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Times the lock is taken again when a rewrite renamed a new file over
 * the path meanwhile: each one means another rewrite finished. */
#define LOCK_TRIES 8

int hs_write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int hs_path_is_fd(const char *path, int fd, int follow)
{
	struct stat a, b;

	if ((follow ? stat(path, &a) : lstat(path, &a)) || fstat(fd, &b))
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int hs_open_locked(const char *path, int oflags, int wait)
{
	int tries, fd, err;

	for (tries = 0; tries < LOCK_TRIES; tries++) {
		fd = open(path, oflags | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)))
			if (errno != EINTR) {
				err = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
				close(fd);
				return err;
			}
		if (hs_path_is_fd(path, fd, 1))
			return fd;
		close(fd); /* renamed over meanwhile: the new file's lock */
	}
	return -ESTALE;
}
