/*
 * fileio - whole writes, the rewriters' lock and temporary files of a
 * name of their own (see fileio.h).
 */
#include "common/fileio.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

unsigned long long (*hs__mkostempat_random)(void);

/*
 * 64 random bits for a temporary name: from getrandom(), else (no entropy
 * yet at boot, or a seccomp filter) from the clock, the pid and a count,
 * mixed by splitmix64's finaliser. The names need not be secret: O_EXCL
 * makes a guessed one cost a draw, not a file.
 */
static unsigned long long random_bits(void)
{
	static unsigned long long count;
	unsigned long long x;
	struct timespec ts;

	if (hs__mkostempat_random)
		return hs__mkostempat_random();
	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) == (ssize_t)sizeof(x))
		return x;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (unsigned long long)ts.tv_sec * 1000000000u + (unsigned long long)ts.tv_nsec;
	x ^= (unsigned long long)getpid() << 32;
	x += __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int hs_mkostempat(int dirfd, char *tmpl, int flags)
{
	/* mkostemp()'s alphabet: debug_cache.c tells its temporaries by it */
	static const char letters[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(tmpl);
	char *x = tmpl + n - 6;
	unsigned long long r;
	int tries, k, fd;

	if (n < 6 || strcmp(x, "XXXXXX"))
		return -EINVAL;
	for (tries = 0; tries < HS_MKOSTEMP_TRIES; tries++) {
		r = random_bits();
		for (k = 0; k < 6; k++, r /= sizeof(letters) - 1)
			x[k] = letters[r % (sizeof(letters) - 1)];
		fd = openat(dirfd, tmpl,
			    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags,
			    0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}
