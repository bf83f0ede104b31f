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

static void lock_is_exclusive(void **state)
{
	char dir[64], path[96];
	int a, b;

	(void)state;
	make_file(dir, path, sizeof(path));
	a = hs_open_locked(path, O_RDONLY, 1);
	assert_true(a >= 0);
	assert_int_equal(hs_open_locked(path, O_RDWR, 0), -EWOULDBLOCK);
	close(a);
	b = hs_open_locked(path, O_RDWR, 0);
	assert_true(b >= 0);
	close(b);
	assert_int_equal(hs_open_locked(path, O_RDONLY, 0) < 0, 0);
	unlink(path);
	assert_int_equal(hs_open_locked(path, O_RDONLY, 0), -ENOENT);
	rmdir(dir);
}

static void lock_follows_a_rename_over_the_path(void **state)
{
	char dir[64], path[96], other[112];
	int a, b, fd;

	(void)state;
	make_file(dir, path, sizeof(path));
	a = hs_open_locked(path, O_RDONLY, 1);
	assert_true(a >= 0);
	assert_int_equal(hs_path_is_fd(path, a, 0), 1);
	/* a rewrite renames its new file over the path while it holds the lock */
	snprintf(other, sizeof(other), "%s.new", path);
	fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(hs_path_is_fd(path, a, 0), 0);
	/* the new file is not locked: taken at once, and it is the new one */
	b = hs_open_locked(path, O_RDONLY, 0);
	assert_true(b >= 0);
	assert_int_equal(hs_path_is_fd(path, b, 0), 1);
	close(b);
	close(a);
	/* a symbolic link is followed to lock, but is not the file itself */
	snprintf(other, sizeof(other), "%s/link", dir);
	assert_int_equal(symlink("t", other), 0);
	b = hs_open_locked(other, O_RDONLY, 0);
	assert_true(b >= 0);
	assert_int_equal(hs_path_is_fd(other, b, 0), 0);
	assert_int_equal(hs_path_is_fd(path, b, 0), 1);
	close(b);
	unlink(other);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_all_writes_everything),
		cmocka_unit_test(lock_is_exclusive),
		cmocka_unit_test(lock_follows_a_rename_over_the_path),
	};
	return cmocka_run_group_tests_name("fileio", tests, NULL, NULL);
}
