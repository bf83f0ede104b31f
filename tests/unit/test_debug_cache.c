/*
 * Tests of src/symbols/debug_cache.c: where the cache is, and the
 * decompressed copy of a debug file with a compressed section, made
 * here with libelf (a relocatable ELF with one .debug_info section).
 */
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

	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy), 1);
	snprintf(want, sizeof(want), "%s/.build-id/ab/cdef0123.debug", d.cache);
	assert_non_null(copy);
	assert_string_equal(copy, want);
	hs_free(copy);
	expect_decompressed(want, data, n);
	snprintf(tmp_left, sizeof(tmp_left), "%s.%ld.tmp", want, (long)getpid());
	assert_int_not_equal(stat(tmp_left, &st), 0);

	/* a damaged copy is made again */
	assert_int_equal(truncate(want, 100), 0);
	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy), 1);
	hs_free(copy);
	expect_decompressed(want, data, n);

	/* the next run finds the copy: the original is not read again */
	assert_int_equal(unlink(d.file), 0);
	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy), 1);
	assert_string_equal(copy, want);
	hs_free(copy);

	/* nor a damaged copy without the original: it is removed */
	assert_int_equal(truncate(want, 100), 0);
	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy), 0);
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

	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy),
	    1);
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
	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy), 0);
	assert_null(copy);
	write_elf(d.file, data, 16 << 10);
	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy), 0);
	assert_null(copy);
	assert_int_not_equal(stat(d.cache, &st), 0);
	/* not an ELF file */
	assert_int_equal(truncate(d.file, 0), 0);
	assert_int_equal(
	    hs__debug_cache_fill(d.cache, d.from, BUILD_ID, sizeof(BUILD_ID), &copy), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_copy_decompressed),
	    cmocka_unit_test(test_temp_name_of_its_own),
	    cmocka_unit_test(test_no_copy),
	    cmocka_unit_test(test_where),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
