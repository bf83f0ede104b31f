#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/fileio.h"

/* A fresh directory and a file "t" in it holding "old". */
static void make_file(char *dir, char *path, size_t n)
{
	int fd;

	strcpy(dir, "/tmp/hs-fileio-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, n, "%s/t", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(hs_write_all(fd, "old", 3), 0);
	close(fd);
}

static void write_all_writes_everything(void **state)
{
	static uint8_t big[1 << 20];
	char dir[64], path[96];
	struct stat st;
	int fd;

	(void)state;
	memset(big, 0x5a, sizeof(big));
	make_file(dir, path, sizeof(path));
	fd = open(path, O_WRONLY | O_APPEND);
	assert_int_equal(hs_write_all(fd, big, sizeof(big)), 0);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 3 + sizeof(big));
	fd = open(path, O_RDONLY);
	assert_int_equal(hs_write_all(fd, "x", 1), -EBADF);
	close(fd);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_all_writes_everything),
	};
	return cmocka_run_group_tests_name("fileio", tests, NULL, NULL);
}
