/*
 * Tests of src/symbols/debug_cache.c: where the cache is, and the
 * decompressed copy of a debug file with a compressed section, made
 * here with libelf (a relocatable ELF with one .debug_info section);
 * eviction: copies marked used, and the daily sweep by age and budget,
 * on fixture files whose times are set with utimensat().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>
#include "common/alloc.h"
#include "symbols/symbols_internal.h"

static const unsigned char BUILD_ID[] = {0xab, 0xcd, 0xef, 0x01, 0x23};

/* A payload zlib shrinks by about half: 16 symbols, drawn at random. */
static unsigned char *payload(size_t n)
{
	unsigned char *p = malloc(n);
	uint32_t x = 12345;
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)('a' + (x >> 16) % 16);
	}
	return p;
}

/* A new section of @e named at @name in the names, holding @n bytes at @buf. */
static Elf64_Shdr *add_section(Elf *e, Elf_Scn **scn, void *buf, size_t n, Elf_Type type,
			       size_t align, unsigned name, unsigned sh_type)
{
	Elf_Data *d;
	Elf64_Shdr *sh;

	*scn = elf_newscn(e);
	assert_non_null(*scn);
	d = elf_newdata(*scn);
	assert_non_null(d);
	d->d_buf = buf;
	d->d_size = n;
	d->d_type = type;
	d->d_align = align;
	sh = elf64_getshdr(*scn);
	assert_non_null(sh);
	sh->sh_name = name;
	sh->sh_type = sh_type;
	return sh;
}

/* Write @path: an ELF whose .debug_info holds @data (@n bytes), compressed. */
static void write_elf(const char *path, const unsigned char *data, size_t n)
{
	static char names[] = "\0.shstrtab\0.debug_info\0.note.gnu.build-id";
	/* the note: name size, descriptor size, NT_GNU_BUILD_ID, "GNU", the id */
	static uint32_t note[6] = {4, sizeof(BUILD_ID), 3, 0x00554e47};
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf_Scn *str, *dbg, *scn;
	Elf *e;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(e);
	eh = elf64_newehdr(e);
	assert_non_null(eh);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	add_section(e, &str, names, sizeof(names), ELF_T_BYTE, 1, 1, SHT_STRTAB);
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(str);
	sh = add_section(e, &dbg, (void *)data, n, ELF_T_BYTE, 1, 11, SHT_PROGBITS);
	sh->sh_addralign = 1;
	memcpy(&note[4], BUILD_ID, sizeof(BUILD_ID));
	sh = add_section(e, &scn, note, sizeof(note), ELF_T_NHDR, 4, 23, SHT_NOTE);
	sh->sh_flags = SHF_ALLOC;
	sh->sh_addralign = 4;
	assert_true(elf_update(e, ELF_C_NULL) >= 0);
	assert_int_equal(elf_compress(dbg, ELFCOMPRESS_ZLIB, 0), 1);
	assert_true(elf_update(e, ELF_C_WRITE) >= 0);
	elf_end(e);
	close(fd);
}

/* The .debug_info of the ELF at @path: its flags and bytes (malloc'd). */
static unsigned char *read_debug_info(const char *path, size_t *n, uint64_t *flags)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	unsigned char *out = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *e;

	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(e, shstrndx, sh.sh_name), ".debug_info"))
			continue;
		*flags = sh.sh_flags;
		d = elf_rawdata(scn, NULL);
		assert_non_null(d);
		out = malloc(d->d_size);
		assert_non_null(out);
		memcpy(out, d->d_buf, d->d_size);
		*n = d->d_size;
	}
	elf_end(e);
	close(fd);
	assert_non_null(out);
	return out;
}

struct dirs {
	char root[64], from[96], cache[96], file[160];
};

static void make_dirs(struct dirs *d)
{
	strcpy(d->root, "/tmp/hs-debug-cache-XXXXXX");
	assert_non_null(mkdtemp(d->root));
	snprintf(d->from, sizeof(d->from), "%s/system", d->root);
	snprintf(d->cache, sizeof(d->cache), "%s/cache", d->root);
	assert_int_equal(mkdir(d->from, 0755), 0);
	snprintf(d->file, sizeof(d->file), "%s/.build-id", d->from);
	assert_int_equal(mkdir(d->file, 0755), 0);
	snprintf(d->file, sizeof(d->file), "%s/.build-id/ab", d->from);
	assert_int_equal(mkdir(d->file, 0755), 0);
	snprintf(d->file, sizeof(d->file), "%s/.build-id/ab/cdef0123.debug", d->from);
}

/* The cache's copy of the system's debug file of BUILD_ID: 1 with its
 * path in *@copy, else 0 (hs__debug_cache_fill()). */
static int fill(const struct dirs *d, char **copy)
{
	return hs__debug_cache_fill(d->cache, d->from, BUILD_ID, sizeof(BUILD_ID), copy);
}

/* The ELF at @path holds @data (@n bytes) in .debug_info, uncompressed. */
static void expect_decompressed(const char *path, const unsigned char *data, size_t n)
{
	uint64_t flags = 0;
	size_t got_n = 0;
	unsigned char *got = read_debug_info(path, &got_n, &flags);

	assert_false(flags & SHF_COMPRESSED);
	assert_int_equal(got_n, n);
	assert_memory_equal(got, data, n);
	free(got);
}

static void remove_dirs(struct dirs *d)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->root);
	assert_int_equal(system(cmd), 0);
}

/* A big compressed section: copied once, decompressed, then found as it is. */
static void test_copy_decompressed(void **state)
{
	const size_t n = 256 << 10;
	unsigned char *data = payload(n), *got;
	char *copy = NULL, want[200], tmp_left[220];
	struct dirs d;
	uint64_t flags = 0;
	size_t got_n = 0;
	struct stat st;

	(void)state;
	make_dirs(&d);
	write_elf(d.file, data, n);
	got = read_debug_info(d.file, &got_n, &flags);
	assert_true(flags & SHF_COMPRESSED); /* the test's own file */
	assert_true(got_n >= 64 << 10 && got_n < n);
	free(got);

	assert_int_equal(fill(&d, &copy), 1);
	snprintf(want, sizeof(want), "%s/.build-id/ab/cdef0123.debug", d.cache);
	assert_non_null(copy);
	assert_string_equal(copy, want);
	hs_free(copy);
	expect_decompressed(want, data, n);
	snprintf(tmp_left, sizeof(tmp_left), "%s.%ld.tmp", want, (long)getpid());
	assert_int_not_equal(stat(tmp_left, &st), 0);

	/* a damaged copy is made again */
	assert_int_equal(truncate(want, 100), 0);
	assert_int_equal(fill(&d, &copy), 1);
	hs_free(copy);
	expect_decompressed(want, data, n);

	/* the next run finds the copy: the original is not read again */
	assert_int_equal(unlink(d.file), 0);
	assert_int_equal(fill(&d, &copy), 1);
	assert_string_equal(copy, want);
	hs_free(copy);

	/* nor a damaged copy without the original: it is removed */
	assert_int_equal(truncate(want, 100), 0);
	assert_int_equal(fill(&d, &copy), 0);
	assert_null(copy);
	assert_int_not_equal(stat(want, &st), 0);
	free(data);
	remove_dirs(&d);
}

/* The temporary copy gets a name of its own: a link planted at the name
 * of an older heapscope's temporary (ID.debug.PID.tmp) is not written
 * through, and temporaries left by killed writers more than an hour ago
 * are removed, younger ones not. */
static void test_temp_name_of_its_own(void **state)
{
	const size_t n = 256 << 10;
	unsigned char *data = payload(n);
	char *copy = NULL, dir[160], want[200], planted[220], victim[160];
	char old_tmp[220], old_x[220], young[220];
	const char *leftovers[] = {old_tmp, old_x, young};
	struct timeval two_hours_ago[2];
	struct dirs d;
	struct stat st;
	size_t i;
	FILE *f;

	(void)state;
	make_dirs(&d);
	write_elf(d.file, data, n);
	snprintf(dir, sizeof(dir), "%s/.build-id/ab", d.cache);
	assert_int_equal(mkdir(d.cache, 0755), 0);
	snprintf(want, sizeof(want), "%s/.build-id", d.cache);
	assert_int_equal(mkdir(want, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(want, sizeof(want), "%s/cdef0123.debug", dir);
	snprintf(victim, sizeof(victim), "%s/victim", d.root);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("keep", f);
	fclose(f);
	snprintf(planted, sizeof(planted), "%s.%ld.tmp", want, (long)getpid());
	assert_int_equal(symlink(victim, planted), 0);
	snprintf(old_tmp, sizeof(old_tmp), "%s/0099.debug.4242.tmp", dir);
	snprintf(old_x, sizeof(old_x), "%s/0099.debug.Ab3xYz", dir);
	snprintf(young, sizeof(young), "%s/0077.debug.Zz9Qq1", dir);
	for (i = 0; i < sizeof(leftovers) / sizeof(leftovers[0]); i++) {
		f = fopen(leftovers[i], "w");
		assert_non_null(f);
		fclose(f);
	}
	gettimeofday(&two_hours_ago[0], NULL);
	two_hours_ago[0].tv_sec -= 7200;
	two_hours_ago[1] = two_hours_ago[0];
	assert_int_equal(utimes(old_tmp, two_hours_ago), 0);
	assert_int_equal(utimes(old_x, two_hours_ago), 0);

	assert_int_equal(fill(&d, &copy), 1);
	assert_string_equal(copy, want);
	hs_free(copy);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_not_equal(lstat(old_tmp, &st), 0);
	assert_int_not_equal(lstat(old_x, &st), 0);
	assert_int_equal(lstat(young, &st), 0);
	/* the planted link is young: left, and never followed */
	assert_int_equal(lstat(planted, &st), 0);
	free(data);
	remove_dirs(&d);
}

/* Little compressed, or no file: no copy, and nothing written. */
static void test_no_copy(void **state)
{
	unsigned char *data = payload(16 << 10);
	char *copy = (char *)"set";
	struct dirs d;
	struct stat st;

	(void)state;
	make_dirs(&d);
	assert_int_equal(fill(&d, &copy), 0);
	assert_null(copy);
	write_elf(d.file, data, 16 << 10);
	assert_int_equal(fill(&d, &copy), 0);
	assert_null(copy);
	assert_int_not_equal(stat(d.cache, &st), 0);
	/* not an ELF file */
	assert_int_equal(truncate(d.file, 0), 0);
	assert_int_equal(fill(&d, &copy), 0);
	assert_null(copy);
	/* a build id too short to name a file */
	assert_int_equal(hs__debug_cache_fill(d.cache, d.from, BUILD_ID, 1, &copy), 0);
	free(data);
	remove_dirs(&d);
}

static void expect_dir(const char *want)
{
	char *got = hs__debug_cache_dir();

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	hs_free(got);
}

static void test_where(void **state)
{
	(void)state;
	setenv("HEAPSCOPE_DEBUG_CACHE", "/srv/dbg", 1);
	setenv("XDG_CACHE_HOME", "/x", 1);
	expect_dir("/srv/dbg");
	setenv("HEAPSCOPE_DEBUG_CACHE", "", 1);
	expect_dir(NULL); /* turned off */
	setenv("HEAPSCOPE_DEBUG_CACHE", "relative", 1);
	expect_dir(NULL);
	unsetenv("HEAPSCOPE_DEBUG_CACHE");
	expect_dir("/x/heapscope/debug");
	setenv("XDG_CACHE_HOME", "not/absolute", 1);
	setenv("HOME", "/home/u", 1);
	expect_dir("/home/u/.cache/heapscope/debug");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/a:b", 1);
	expect_dir(NULL); /* a ':' would split libdwfl's search path */
	unsetenv("HOME");
	expect_dir(NULL);
}

/* Date the entry @dir/@name (not followed) @age seconds back. */
static void age_entry(const char *dir, const char *name, long age)
{
	struct timespec t[2];
	char path[320];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	t[0].tv_sec = t[1].tv_sec = time(NULL) - age;
	t[0].tv_nsec = t[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

/* Write @size bytes at @dir/@name and date them @age seconds back. */
static void make_file(const char *dir, const char *name, size_t size, long age)
{
	char path[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	while (size--)
		fputc('x', f);
	assert_int_equal(fclose(f), 0);
	age_entry(dir, name, age);
}

static int exists(const char *dir, const char *name)
{
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

#define DAY (24L * 3600)

/* The entries of directory @dir but . and .. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* A cache directory with .build-id/ab and .build-id/cd in it. */
static void make_cache(struct dirs *d, char *ab, char *cd, size_t n)
{
	make_dirs(d);
	assert_int_equal(mkdir(d->cache, 0755), 0);
	snprintf(ab, n, "%s/.build-id", d->cache);
	assert_int_equal(mkdir(ab, 0755), 0);
	snprintf(ab, n, "%s/.build-id/ab", d->cache);
	snprintf(cd, n, "%s/.build-id/cd", d->cache);
	assert_int_equal(mkdir(ab, 0755), 0);
	assert_int_equal(mkdir(cd, 0755), 0);
}

/* Copies unused past the maximum age go, then the least recently used
 * while over budget; none used in the last day and an hour. */
static void test_sweep_age_then_budget(void **state)
{
	struct hs__debug_cache_limits lim = {.max_age = 10 * DAY, .max_size = 20000};
	struct hs__debug_cache_swept out;
	char ab[160], cd[160];
	struct dirs d;

	(void)state;
	make_cache(&d, ab, cd, sizeof(ab));
	make_file(ab, "0001.debug", 4096, 40 * DAY); /* too old */
	make_file(cd, "0002.debug", 8192, 5 * DAY);  /* oldest of the rest */
	make_file(ab, "0003.debug", 8192, 3 * DAY);
	make_file(cd, "0004.debug", 8192, 2 * DAY);
	make_file(ab, "0005.debug", 8192, 3600);
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	assert_false(exists(ab, "0001.debug"));
	assert_false(exists(cd, "0002.debug"));
	assert_false(exists(ab, "0003.debug"));
	assert_true(exists(cd, "0004.debug"));
	assert_true(exists(ab, "0005.debug"));
	assert_int_equal(out.removed, 3);
	assert_int_equal(out.removed_bytes, 4096 + 8192 + 8192);
	assert_int_equal(out.kept_bytes, 2 * 8192);
	/* nothing of the sweep's own (its temporary names) is left behind */
	assert_int_equal(count_entries(ab), 1);
	assert_int_equal(count_entries(cd), 1);

	/* a budget no copy fits: still none used in the last 25 hours goes */
	make_file(cd, "0006.debug", 100, 24 * 3600 + 1800);
	age_entry(d.cache, ".last-sweep", 2 * DAY);
	lim.max_size = 1;
	lim.max_age = 0;
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	assert_false(exists(cd, "0004.debug"));
	assert_true(exists(cd, "0006.debug"));
	assert_true(exists(ab, "0005.debug"));
	assert_int_equal(out.removed, 1);
	assert_int_equal(out.kept_bytes, 8192 + 100);

	/* no limits: nothing goes, however old */
	make_file(ab, "0007.debug", 10, 400 * DAY);
	age_entry(d.cache, ".last-sweep", 2 * DAY);
	lim.max_size = 0;
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	assert_true(exists(ab, "0007.debug"));
	assert_int_equal(out.removed, 0);
	remove_dirs(&d);
}

/* Over budget, ties of last use are broken by name, the oldest first. */
static void test_sweep_budget_order(void **state)
{
	struct hs__debug_cache_limits lim = {.max_age = 0, .max_size = 3000};
	struct hs__debug_cache_swept out;
	char ab[160], cd[160];
	struct dirs d;

	(void)state;
	make_cache(&d, ab, cd, sizeof(ab));
	make_file(ab, "00a2.debug", 1000, 4 * DAY);
	make_file(ab, "00a1.debug", 1000, 4 * DAY);
	make_file(cd, "00c1.debug", 1000, 9 * DAY);
	make_file(cd, "00c2.debug", 1000, 2 * DAY);
	make_file(ab, "00a3.debug", 1000, 3 * DAY);
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	assert_false(exists(cd, "00c1.debug"));
	assert_false(exists(ab, "00a1.debug"));
	assert_true(exists(ab, "00a2.debug"));
	assert_true(exists(ab, "00a3.debug"));
	assert_true(exists(cd, "00c2.debug"));
	assert_int_equal(out.kept_bytes, 3000);
	remove_dirs(&d);
}

/* Only regular files named as copies or temporaries are removed: never
 * through a symbolic link, never anything else in the cache. */
static void test_sweep_only_its_own(void **state)
{
	struct hs__debug_cache_limits lim = {.max_age = DAY, .max_size = 1};
	struct hs__debug_cache_swept out;
	char ab[160], cd[160], outside[160], path[300], link_to[300];
	struct dirs d;
	const char *foreign_ab[] = {"notes.txt",      "ABCD.debug",	   "abc.debug",
				    "0011.debug.old", "0011.debug.1x.tmp", "0011.debugx"};
	size_t i;

	(void)state;
	make_cache(&d, ab, cd, sizeof(ab));
	snprintf(outside, sizeof(outside), "%s/outside", d.root);
	assert_int_equal(mkdir(outside, 0755), 0);
	make_file(outside, "0022.debug", 10, 40 * DAY);
	make_file(d.cache, "README", 10, 40 * DAY);
	make_file(d.cache, "0033.debug", 10, 40 * DAY); /* not under .build-id */
	for (i = 0; i < sizeof(foreign_ab) / sizeof(foreign_ab[0]); i++)
		make_file(ab, foreign_ab[i], 10, 40 * DAY);
	/* a link named as a copy, to a file named as one */
	snprintf(path, sizeof(path), "%s/0044.debug", ab);
	snprintf(link_to, sizeof(link_to), "%s/0022.debug", outside);
	assert_int_equal(symlink(link_to, path), 0);
	age_entry(ab, "0044.debug", 40 * DAY);
	/* a directory named as a copy */
	snprintf(path, sizeof(path), "%s/0055.debug", ab);
	assert_int_equal(mkdir(path, 0755), 0);
	age_entry(ab, "0055.debug", 40 * DAY);
	/* a linked directory named as a .build-id/xx */
	snprintf(path, sizeof(path), "%s/.build-id/ef", d.cache);
	assert_int_equal(symlink(outside, path), 0);
	/* a directory not named as one */
	snprintf(path, sizeof(path), "%s/.build-id/zz", d.cache);
	assert_int_equal(mkdir(path, 0755), 0);
	make_file(path, "0066.debug", 10, 40 * DAY);
	/* temporaries: a killed writer's (two hours old) go, a young one stays */
	make_file(cd, "0077.debug.Ab3xYz", 10, 7200);
	make_file(cd, "0078.debug.4242.tmp", 10, 7200);
	make_file(cd, "0079.debug.Zz9Qq1", 10, 60);
	make_file(cd, "0080.debug", 10, 40 * DAY); /* the one copy */

	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	assert_int_equal(out.removed, 1);
	assert_false(exists(cd, "0080.debug"));
	assert_false(exists(cd, "0077.debug.Ab3xYz"));
	assert_false(exists(cd, "0078.debug.4242.tmp"));
	assert_true(exists(cd, "0079.debug.Zz9Qq1"));
	assert_true(exists(outside, "0022.debug"));
	assert_true(exists(d.cache, "README"));
	assert_true(exists(d.cache, "0033.debug"));
	for (i = 0; i < sizeof(foreign_ab) / sizeof(foreign_ab[0]); i++)
		assert_true(exists(ab, foreign_ab[i]));
	assert_true(exists(ab, "0044.debug"));
	assert_true(exists(ab, "0055.debug"));
	assert_true(exists(d.cache, ".build-id/ef"));
	assert_true(exists(d.cache, ".build-id/zz/0066.debug"));
	/* .build-id/cd still holds a temporary; .build-id/ab its foreign files */
	assert_true(exists(d.cache, ".build-id/cd"));
	remove_dirs(&d);
}

/* A sweep at most once a day: the stamp's mtime says when the last was. */
static void test_sweep_stamp(void **state)
{
	struct hs__debug_cache_limits lim = {.max_age = 10 * DAY, .max_size = 0};
	struct hs__debug_cache_swept out;
	char ab[160], cd[160];
	struct dirs d;
	struct stat st;
	time_t now = time(NULL);

	(void)state;
	make_dirs(&d);
	/* no cache: nothing to sweep, and nothing made */
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, now, &out), 0);
	assert_int_not_equal(stat(d.cache, &st), 0);
	remove_dirs(&d);

	make_cache(&d, ab, cd, sizeof(ab));
	make_file(ab, "0001.debug", 10, 20 * DAY);
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, now, &out), 1);
	assert_false(exists(ab, "0001.debug"));
	assert_true(exists(d.cache, ".last-sweep"));
	/* the directory the sweep emptied is removed (and made again) */
	assert_false(exists(d.cache, ".build-id/ab"));
	assert_true(exists(d.cache, ".build-id/cd"));
	assert_int_equal(mkdir(ab, 0755), 0);
	/* swept within the day: not again, whatever is old */
	make_file(ab, "0002.debug", 10, 20 * DAY);
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, now, &out), 0);
	age_entry(d.cache, ".last-sweep", DAY - 60);
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 0);
	assert_true(exists(ab, "0002.debug"));
	/* a day later it is due */
	age_entry(d.cache, ".last-sweep", DAY + 60);
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	assert_false(exists(ab, "0002.debug"));
	assert_int_equal(stat(d.cache, &st), 0);
	snprintf(ab, sizeof(ab), "%s/.last-sweep", d.cache);
	assert_int_equal(stat(ab, &st), 0);
	assert_true(st.st_mtime >= now);
	/* a stamp from the future (a clock set back) does not stop sweeps */
	age_entry(d.cache, ".last-sweep", -30 * DAY);
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	remove_dirs(&d);
}

/* The system's debug file holding @data (@n bytes), and the cache's
 * copy of it, in the cache directory @dir (@dir_n bytes) names. */
static void make_copy(struct dirs *d, const unsigned char *data, size_t n, char *dir,
		      size_t dir_n)
{
	char *copy = NULL;

	make_dirs(d);
	write_elf(d->file, data, n);
	assert_int_equal(fill(d, &copy), 1);
	hs_free(copy);
	snprintf(dir, dir_n, "%s/.build-id/ab", d->cache);
}

/* A copy taken is marked used (mtime now) when its mark is a day old,
 * and left untouched when it is younger. */
static void test_copy_marked_used(void **state)
{
	const size_t n = 256 << 10;
	unsigned char *data = payload(n);
	char *copy = NULL, dir[200];
	struct dirs d;
	struct stat st;
	time_t was;

	(void)state;
	make_copy(&d, data, n, dir, sizeof(dir));
	age_entry(dir, "cdef0123.debug", 3 * DAY);
	assert_int_equal(fill(&d, &copy), 1);
	assert_int_equal(stat(copy, &st), 0);
	assert_true(st.st_mtime >= time(NULL) - 60);
	age_entry(dir, "cdef0123.debug", 3600);
	assert_int_equal(stat(copy, &st), 0);
	hs_free(copy);
	was = st.st_mtime;
	assert_int_equal(fill(&d, &copy), 1);
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(st.st_mtime, was);
	hs_free(copy);
	free(data);
	remove_dirs(&d);
}

/* The race a sweep guards against, played at its one window (after the
 * rename, before the mtime is read again): a symbolizer that marked the
 * copy just before the rename keeps it; one that comes after the rename
 * does not find it, and makes its own copy, which the sweep leaves. */
static struct dirs *race_dirs;
static int race_calls;

static void mark_before_rename(int dir_fd, const char *name, const char *tmp)
{
	(void)name;
	race_calls++;
	/* what the symbolizer's utimensat() did to the file, now at @tmp */
	assert_int_equal(utimensat(dir_fd, tmp, NULL, AT_SYMLINK_NOFOLLOW), 0);
}

static void fill_after_rename(int dir_fd, const char *name, const char *tmp)
{
	char *copy = NULL;

	(void)dir_fd;
	(void)name;
	(void)tmp;
	race_calls++;
	assert_int_equal(fill(race_dirs, &copy), 1);
	hs_free(copy);
}

static void test_sweep_race(void **state)
{
	struct hs__debug_cache_limits lim = {.max_age = DAY, .max_size = 0};
	struct hs__debug_cache_swept out;
	const size_t n = 256 << 10;
	unsigned char *data = payload(n);
	char dir[200], path[220];
	struct dirs d;

	(void)state;
	race_dirs = &d;
	make_copy(&d, data, n, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/cdef0123.debug", dir);

	age_entry(dir, "cdef0123.debug", 10 * DAY);
	hs__debug_cache_sweep_race = mark_before_rename;
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	assert_int_equal(race_calls, 1);
	assert_int_equal(out.removed, 0);
	assert_int_equal(count_entries(dir), 1);
	expect_decompressed(path, data, n);

	age_entry(dir, "cdef0123.debug", 10 * DAY);
	age_entry(d.cache, ".last-sweep", 2 * DAY);
	hs__debug_cache_sweep_race = fill_after_rename;
	assert_int_equal(hs__debug_cache_sweep(d.cache, &lim, time(NULL), &out), 1);
	hs__debug_cache_sweep_race = NULL;
	assert_int_equal(race_calls, 2);
	/* the old copy is gone (removed by the sweep, or as a stale temporary
	 * by the writer), the new one is there, and nothing else */
	assert_int_equal(count_entries(dir), 1);
	expect_decompressed(path, data, n);
	free(data);
	remove_dirs(&d);
}

static void expect_limits(const char *age, const char *size, long long want_age,
			  unsigned long long want_size)
{
	struct hs__debug_cache_limits l;

	if (age)
		setenv("HEAPSCOPE_DEBUG_CACHE_MAX_AGE", age, 1);
	else
		unsetenv("HEAPSCOPE_DEBUG_CACHE_MAX_AGE");
	if (size)
		setenv("HEAPSCOPE_DEBUG_CACHE_MAX_SIZE", size, 1);
	else
		unsetenv("HEAPSCOPE_DEBUG_CACHE_MAX_SIZE");
	hs__debug_cache_limits_from_env(&l);
	assert_int_equal(l.max_age, want_age);
	assert_int_equal(l.max_size, want_size);
}

static void test_limits(void **state)
{
	(void)state;
	expect_limits(NULL, NULL, 7 * DAY, 1ull << 30);
	expect_limits("", "", 7 * DAY, 1ull << 30);
	expect_limits("30", "500M", 30 * DAY, 500ull << 20);
	expect_limits("12h", "2G", 12 * 3600, 2ull << 30);
	expect_limits("90m", "64k", 90 * 60, 64 << 10);
	expect_limits("45s", "123", 45, 123);
	expect_limits("0", "0", 0, 0); /* no limits */
	expect_limits("-1", "-5", 7 * DAY, 1ull << 30);
	expect_limits("3 days", "1T", 7 * DAY, 1ull << 30);
	expect_limits("d", "99999999999999999999", 7 * DAY, 1ull << 30);
	expect_limits(NULL, NULL, 7 * DAY, 1ull << 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_copy_decompressed),
	    cmocka_unit_test(test_temp_name_of_its_own),
	    cmocka_unit_test(test_no_copy),
	    cmocka_unit_test(test_where),
	    cmocka_unit_test(test_sweep_age_then_budget),
	    cmocka_unit_test(test_sweep_budget_order),
	    cmocka_unit_test(test_sweep_only_its_own),
	    cmocka_unit_test(test_sweep_stamp),
	    cmocka_unit_test(test_copy_marked_used),
	    cmocka_unit_test(test_sweep_race),
	    cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
