/*
 * fileio - whole writes and the rewriters' lock (see fileio.h).
 */
#include "common/fileio.h"
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

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
