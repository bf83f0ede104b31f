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

/* Whether @name is "t." and six of mkostemp()'s letters or digits. */
static int temp_name_ok(const char *name)
{
	return strlen(name) == 8 && !strncmp(name, "t.", 2) &&
	       strspn(name + 2, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"abcdefghijklmnopqrstuvwxyz0123456789") == 6;
}

static void mkostempat_makes_a_new_file_in_the_directory(void **state)
{
	char dir[64], path[96], a[16], b[16];
	struct stat st;
	mode_t mask;
	int dfd, fa, fb;

	(void)state;
	make_file(dir, path, sizeof(path));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	assert_true(dfd >= 0);
	snprintf(a, sizeof(a), "t.XXXXXX");
	fa = hs_mkostempat(dfd, a, 0);
	assert_true(fa >= 0);
	assert_true(temp_name_ok(a));
	snprintf(b, sizeof(b), "t.XXXXXX");
	fb = hs_mkostempat(dfd, b, O_APPEND);
	assert_true(fb >= 0);
	assert_true(temp_name_ok(b));
	assert_string_not_equal(a, b);
	/* a new empty regular file, 0600 less the umask, read-write,
	 * close-on-exec, with the flags asked for */
	assert_int_equal(fstatat(dfd, a, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0);
	mask = umask(0);
	umask(mask);
	assert_int_equal(st.st_mode & 07777, 0600 & ~mask);
	assert_int_equal(fcntl(fa, F_GETFL) & O_ACCMODE, O_RDWR);
	assert_int_equal(fcntl(fa, F_GETFL) & O_APPEND, 0);
	assert_int_equal(fcntl(fb, F_GETFL) & O_APPEND, O_APPEND);
	assert_true(fcntl(fa, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(hs_write_all(fa, "new", 3), 0);
	close(fa);
	close(fb);
	assert_int_equal(unlinkat(dfd, a, 0), 0);
	assert_int_equal(unlinkat(dfd, b, 0), 0);
	/* AT_FDCWD and a path, as mkostemp() */
	snprintf(path, sizeof(path), "%s/t.XXXXXX", dir);
	fa = hs_mkostempat(AT_FDCWD, path, 0);
	assert_true(fa >= 0);
	assert_true(temp_name_ok(strrchr(path, '/') + 1));
	assert_int_equal(hs_path_is_fd(path, fa, 0), 1);
	close(fa);
	unlink(path);
	snprintf(path, sizeof(path), "%s/t", dir);
	unlink(path);
	close(dfd);
	rmdir(dir);
}

static void mkostempat_refuses_a_bad_template_and_a_missing_directory(void **state)
{
	char dir[64], path[96], name[32];

	(void)state;
	make_file(dir, path, sizeof(path));
	snprintf(name, sizeof(name), "t.XXXXX");
	assert_int_equal(hs_mkostempat(AT_FDCWD, name, 0), -EINVAL);
	snprintf(name, sizeof(name), "XXXXXX.t");
	assert_int_equal(hs_mkostempat(AT_FDCWD, name, 0), -EINVAL);
	snprintf(name, sizeof(name), "XXXX");
	assert_int_equal(hs_mkostempat(AT_FDCWD, name, 0), -EINVAL);
	/* the error of openat(), not a retry */
	snprintf(path, sizeof(path), "%s/gone/t.XXXXXX", dir);
	assert_int_equal(hs_mkostempat(AT_FDCWD, path, 0), -ENOENT);
	snprintf(path, sizeof(path), "%s/t", dir);
	unlink(path);
	rmdir(dir);
}

/* The names drawn: 0 (all "A") while @draws_left_same, then a count. */
static int draws_left_same;
static unsigned long long next_draw;

static unsigned long long scripted_random(void)
{
	if (draws_left_same > 0) {
		draws_left_same--;
		return 0;
	}
	return ++next_draw;
}

static void mkostempat_draws_again_past_taken_names_and_links(void **state)
{
	char dir[64], path[96], name[16], taken[16];
	struct stat st;
	int dfd, fd;

	(void)state;
	make_file(dir, path, sizeof(path));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	hs__mkostempat_random = scripted_random;
	/* "t.AAAAAA" is taken by a link to "t": drawn again, the link and
	 * what it points to left as they were */
	snprintf(taken, sizeof(taken), "t.AAAAAA");
	assert_int_equal(symlinkat("t", dfd, taken), 0);
	draws_left_same = 3;
	next_draw = 0;
	snprintf(name, sizeof(name), "t.XXXXXX");
	fd = hs_mkostempat(dfd, name, 0);
	assert_true(fd >= 0);
	assert_int_equal(draws_left_same, 0);
	assert_string_equal(name, "t.BAAAAA"); /* the draw 1 */
	assert_int_equal(hs_write_all(fd, "x", 1), 0);
	close(fd);
	assert_int_equal(fstatat(dfd, taken, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(fstatat(dfd, "t", &st, 0), 0);
	assert_int_equal(st.st_size, 3);
	/* every draw taken: -EEXIST after HS_MKOSTEMP_TRIES of them */
	draws_left_same = HS_MKOSTEMP_TRIES;
	snprintf(name, sizeof(name), "t.XXXXXX");
	assert_int_equal(hs_mkostempat(dfd, name, 0), -EEXIST);
	assert_int_equal(draws_left_same, 0);
	assert_string_equal(name, taken);
	hs__mkostempat_random = NULL;
	assert_int_equal(unlinkat(dfd, "t.BAAAAA", 0), 0);
	assert_int_equal(unlinkat(dfd, taken, 0), 0);
	assert_int_equal(unlinkat(dfd, "t", 0), 0);
	close(dfd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(write_all_writes_everything),
	    cmocka_unit_test(lock_is_exclusive),
	    cmocka_unit_test(lock_follows_a_rename_over_the_path),
	    cmocka_unit_test(mkostempat_makes_a_new_file_in_the_directory),
	    cmocka_unit_test(mkostempat_refuses_a_bad_template_and_a_missing_directory),
	    cmocka_unit_test(mkostempat_draws_again_past_taken_names_and_links),
	};
	return cmocka_run_group_tests_name("fileio", tests, NULL, NULL);
}
