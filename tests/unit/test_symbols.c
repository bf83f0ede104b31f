/*
 * Tests of src/symbols against the libraries tests/targets/build-symtest.sh
 * builds (libsymtest*.so). The test dlopen()s libsymtest.so, calls into it
 * so that hs_symtest_leaf() records a return address inside inlined code,
 * and checks every frame the symbolizer reports for that address against
 * the MARK comments of the sources. The stripped, compressed, rebuilt and
 * C++ variants share the same code addresses or their own return address.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include "common/alloc.h"
#include "common/buf.h"
#include "common/diag.h"
#include "symbols/symbols.h"

#define TARGETS HS_TEST_TARGETS
#define SOURCES HS_TEST_TARGETS_SRC

/* ---- helpers ----------------------------------------------------------- */

/* snprintf() that fails the test instead of truncating. */
static __attribute__((format(printf, 3, 4))) char *pathf(char *buf, size_t n,
							   const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	assert_true(len >= 0 && (size_t)len < n);
	return buf;
}

/* Line of "MARK:@name" in source file @file of tests/targets. */
static unsigned mark_line(const char *file, const char *name)
{
	char path[4096], line[1024];
	size_t n = strlen(name);
	unsigned lineno = 0;
	FILE *f;

	pathf(path, sizeof(path), "%s/%s", SOURCES, file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "MARK:");

		lineno++;
		if (p && !strncmp(p + 5, name, n) && p[5 + n] != '_' &&
		    (p[5 + n] < 'a' || p[5 + n] > 'z')) {
			fclose(f);
			return lineno;
		}
	}
	fclose(f);
	fail_msg("no MARK:%s in %s", name, file);
	return 0;
}

/* 1-based column of @callee's first occurrence on the MARK:@name line. */
static unsigned mark_column(const char *file, const char *name, const char *callee)
{
	unsigned want = mark_line(file, name), lineno = 0;
	char path[4096], line[1024];
	FILE *f;

	pathf(path, sizeof(path), "%s/%s", SOURCES, file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (++lineno == want)
			break;
	fclose(f);
	assert_non_null(strstr(line, callee));
	return (unsigned)(strstr(line, callee) - line) + 1;
}

static const char *base(const char *path)
{
	const char *s;

	assert_non_null(path);
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The GNU build id of @path, read with libelf, into @id; its length. */
static size_t file_build_id(const char *path, unsigned char *id, size_t max)
{
	const void *bits;
	ssize_t n;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	n = dwelf_elf_gnu_build_id(elf, &bits);
	assert_true(n > 0 && (size_t)n <= max);
	memcpy(id, bits, (size_t)n);
	elf_end(elf);
	close(fd);
	return (size_t)n;
}

struct lib {
	char path[4096];
	void *handle;
	uint64_t bias;			/* link_map l_addr */
	unsigned char id[64];
	size_t id_len;
	struct hs_sym_module mod;
};

static void open_lib(struct lib *l, const char *name)
{
	struct link_map *lm;

	pathf(l->path, sizeof(l->path), "%s/%s", TARGETS, name);
	l->handle = dlopen(l->path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(l->handle);
	assert_int_equal(dlinfo(l->handle, RTLD_DI_LINKMAP, &lm), 0);
	l->bias = lm->l_addr;
	l->id_len = file_build_id(l->path, l->id, sizeof(l->id));
	l->mod.path = l->path;
	l->mod.build_id = l->id;
	l->mod.build_id_len = l->id_len;
	l->mod.bias = l->bias;
}

static void close_lib(struct lib *l)
{
	dlclose(l->handle);
}

static void *sym(struct lib *l, const char *name)
{
	void *p = dlsym(l->handle, name);

	assert_non_null(p);
	return p;
}

/* ELF vaddr of the call instruction whose return address the leaf kept
 * after @fn(@arg) ran (return address - bias - 1). */
static uint64_t call_vaddr(struct lib *l, const char *fn, const char *ra_var,
			   long arg)
{
	void **ra = sym(l, ra_var);
	long (*f)(long) = (long (*)(long))sym(l, fn);

	*ra = NULL;
	f(arg);
	assert_non_null(*ra);
	return (uint64_t)(uintptr_t)*ra - l->bias - 1;
}

static uint64_t outer_vaddr(struct lib *l)
{
	return call_vaddr(l, "hs_symtest_outer", "hs_symtest_last_return", 4);
}

static void assert_frame(const struct hs_sym_frame *f, const char *function,
			 const char *file_base, unsigned line, int inlined)
{
	assert_non_null(f->function);
	assert_string_equal(f->function, function);
	assert_string_equal(base(f->file), file_base);
	assert_int_equal(f->line, line);
	assert_int_equal(!!(f->flags & HS_SYM_INLINE), inlined);
}

/* The three frames of the call inside hs_symtest_outer(). */
static void assert_outer_frames(const struct hs_sym_result *r)
{
	assert_int_equal(r->status, HS_SYM_FOUND);
	assert_int_equal(r->nr_frame, 3);
	assert_frame(&r->frame[0], "symtest_deep", "symtest_inline.h",
		     mark_line("symtest_inline.h", "deep_call"), 1);
	assert_frame(&r->frame[1], "symtest_middle", "symtest_inline.h",
		     mark_line("symtest_inline.h", "middle_call"), 1);
	assert_frame(&r->frame[2], "hs_symtest_outer", "symtest.c",
		     mark_line("symtest.c", "outer_call"), 0);
	assert_int_equal(r->frame[0].column,
			 mark_column("symtest_inline.h", "deep_call", "hs_symtest_leaf"));
	assert_int_equal(r->frame[1].column,
			 mark_column("symtest_inline.h", "middle_call", "symtest_deep"));
	assert_int_equal(r->frame[2].column,
			 mark_column("symtest.c", "outer_call", "symtest_middle"));
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out;

	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

static void write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
}

static void mkdir_p(const char *path)
{
	char tmp[4096], *p;

	pathf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(tmp, 0755);
		*p = '/';
	}
	assert_true(mkdir(tmp, 0755) == 0 || errno == EEXIST);
}

static void remove_tree(const char *path)
{
	char sub[4096];
	struct dirent *e;
	DIR *d = opendir(path);

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		pathf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		remove_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

static char *make_tmpdir(char *buf, size_t n)
{
	const char *t = getenv("TMPDIR");

	pathf(buf, n, "%s/hs-symbols-XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(buf));
	return buf;
}

static char *join(char *buf, size_t n, const char *a, const char *b)
{
	pathf(buf, n, "%s/%s", a, b);
	return buf;
}

/* ".build-id/xx/rest" for @l's build id, into @buf. */
static char *build_id_path(const struct lib *l, char *buf, size_t n)
{
	size_t k, off;

	off = (size_t)snprintf(buf, n, ".build-id/%02x/", l->id[0]);
	for (k = 1; k < l->id_len; k++)
		off += (size_t)snprintf(buf + off, n - off, "%02x", l->id[k]);
	return buf;
}

static struct hs_symbolizer *new_sym(void)
{
	struct hs_symbolizer *s = hs_symbolizer_new(HS_SYM_NO_SYSTEM_DEBUG |
						    HS_SYM_NO_DEBUGINFOD);

	assert_non_null(s);
	return s;
}

/* ---- the unstripped library ---------------------------------------------- */

static void inline_frames_innermost_first(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_result r;
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, outer_vaddr(&l), &r), 0);
	assert_string_equal(r.module, l.path);
	assert_outer_frames(&r);
	hs_symbolizer_free(s);
	close_lib(&l);
}

static void static_function_and_entry_line(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_result r;
	void *(*hidden_addr)(void);
	uint64_t v;
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	v = call_vaddr(&l, "hs_symtest_direct", "hs_symtest_last_return", 9);
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v, &r), 0);
	assert_int_equal(r.nr_frame, 1);
	assert_frame(&r.frame[0], "symtest_hidden", "symtest.c",
		     mark_line("symtest.c", "hidden_call"), 0);
	assert_int_equal(r.frame[0].column,
			 mark_column("symtest.c", "hidden_call", "hs_symtest_leaf"));

	/* the first instruction (no -1: not a return address) */
	hidden_addr = (void *(*)(void))sym(&l, "hs_symtest_hidden_addr");
	v = (uint64_t)(uintptr_t)hidden_addr() - l.bias;
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v, &r), 0);
	assert_int_equal(r.nr_frame, 1);
	assert_frame(&r.frame[0], "symtest_hidden", "symtest.c",
		     mark_line("symtest.c", "hidden_entry"), 0);
	hs_symbolizer_free(s);
	close_lib(&l);
}

static int add_segments(struct dl_phdr_info *info, size_t size, void *data)
{
	void **arg = data;
	struct lib *l = arg[0];
	struct hs_sym_modmap *map = arg[1];
	int i;

	(void)size;
	if (strcmp(info->dlpi_name, l->path))
		return 0;
	assert_int_equal(info->dlpi_addr, l->bias);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD)
			assert_int_equal(hs_sym_modmap_add(map, &l->mod,
					 info->dlpi_addr + ph->p_vaddr,
					 info->dlpi_addr + ph->p_vaddr + ph->p_memsz), 0);
	}
	return 1;
}

static void runtime_addresses_through_modmap(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_modmap map = HS_SYM_MODMAP_INIT;
	struct hs_buf b = HS_BUF_INIT;
	struct hs_sym_result r;
	struct lib l;
	void *arg[2] = { &l, &map };
	void **ra;
	uint64_t addr;

	(void)state;
	open_lib(&l, "libsymtest.so");
	assert_int_equal(dl_iterate_phdr(add_segments, arg), 1);
	ra = sym(&l, "hs_symtest_last_return");
	outer_vaddr(&l);
	addr = (uint64_t)(uintptr_t)*ra;
	assert_ptr_equal(hs_sym_modmap_find(&map, addr), &l.mod);
	assert_int_equal(hs_symbolizer_lookup_addr(s, &map, addr,
						   HS_SYM_RETURN_ADDRESS, &r), 0);
	assert_outer_frames(&r);
	assert_int_equal(hs_sym_format_frame(&r, 2, &b), 0);
	assert_string_equal(strchr(b.s, '!'), "!hs_symtest_outer");
	assert_memory_equal(b.s, l.path, strlen(l.path));

	/* without the -1 the address is the instruction after the call */
	assert_int_equal(hs_symbolizer_lookup_addr(s, &map, addr, 0, &r), 0);
	assert_int_equal(r.status, HS_SYM_FOUND);
	assert_string_equal(r.frame[r.nr_frame - 1].function, "hs_symtest_outer");

	/* outside every module and no perf map: ?!? */
	assert_int_equal(hs_symbolizer_lookup_addr(s, &map, 0x1000, 0, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_MODULE);
	assert_null(r.module);
	assert_int_equal(r.nr_frame, 1);
	hs_buf_reset(&b);
	assert_int_equal(hs_sym_format_frame(&r, 0, &b), 0);
	assert_string_equal(b.s, "?!?");
	assert_int_equal(hs_symbolizer_lookup_addr(s, NULL, addr, 0, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_MODULE);

	hs_buf_release(&b);
	hs_sym_modmap_release(&map);
	hs_symbolizer_free(s);
	close_lib(&l);
}

static void cached_results_are_the_same_memory(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_symbolizer_stats st;
	struct hs_sym_result a, b;
	struct hs_sym_module copy;
	unsigned char id[64];
	char path[4096];
	struct lib l;
	uint64_t v;

	(void)state;
	open_lib(&l, "libsymtest.so");
	v = outer_vaddr(&l);
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v, &a), 0);
	/* equal module given through other memory: same cache entry */
	pathf(path, sizeof(path), "%s", l.path);
	memcpy(id, l.id, l.id_len);
	copy = l.mod;
	copy.path = path;
	copy.build_id = id;
	assert_int_equal(hs_symbolizer_lookup(s, &copy, v, &b), 0);
	assert_ptr_equal(a.frame, b.frame);
	assert_ptr_equal(a.module, b.module);
	assert_int_equal(a.nr_frame, b.nr_frame);
	hs_symbolizer_stats(s, &st);
	assert_int_equal(st.modules, 1);
	assert_int_equal(st.lookups, 2);
	assert_int_equal(st.cache_hits, 1);
	assert_int_equal(st.frames, 3);
	/* frames stay put while more results are added */
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v - 1, &b), 0);
	assert_outer_frames(&a);
	hs_symbolizer_free(s);
	close_lib(&l);
}

static void address_without_symbol(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_buf b = HS_BUF_INIT;
	struct hs_sym_result r;
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	/* vaddr 0x10 is in the ELF header: mapped, but no function */
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, 0x10, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_SYMBOL);
	assert_int_equal(r.nr_frame, 1);
	assert_null(r.frame[0].function);
	assert_int_equal(hs_sym_format_frame(&r, 0, &b), 0);
	assert_string_equal(strchr(b.s, '!'), "!?");
	assert_int_equal(b.len, strlen(l.path) + 2);
	hs_buf_release(&b);
	hs_symbolizer_free(s);
	close_lib(&l);
}

static void symbol_table_rules(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_result r;
	struct lib l;
	uint64_t label, after;

	(void)state;
	open_lib(&l, "libsymtest.so");
	/* three names at the leaf: global hs_symtest_leaf and
	 * hs_symtest_leaf_alias, weak hs_leaf */
	assert_ptr_equal(sym(&l, "hs_leaf"), sym(&l, "hs_symtest_leaf"));
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod,
		(uint64_t)(uintptr_t)sym(&l, "hs_symtest_leaf_alias") - l.bias, &r), 0);
	assert_string_equal(r.frame[r.nr_frame - 1].function, "hs_symtest_leaf");

	label = (uint64_t)(uintptr_t)sym(&l, "hs_symtest_asm_label") - l.bias;
	after = (uint64_t)(uintptr_t)sym(&l, "hs_symtest_asm_after") - l.bias;
	assert_int_equal(after - label, 4);
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, label, &r), 0);
	assert_string_equal(r.frame[r.nr_frame - 1].function, "hs_symtest_asm_label");
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, after - 1, &r), 0);
	assert_string_equal(r.frame[r.nr_frame - 1].function, "hs_symtest_asm_label");
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, after, &r), 0);
	assert_string_equal(r.frame[r.nr_frame - 1].function, "hs_symtest_asm_after");
	/* past the sized symbol's one byte: nothing until the next symbol */
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, after + 1, &r), 0);
	assert_true(!r.frame[r.nr_frame - 1].function ||
		    strcmp(r.frame[r.nr_frame - 1].function, "hs_symtest_asm_after"));
	hs_symbolizer_free(s);
	close_lib(&l);
}

static void many_modules_open_at_once(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct rlimit old, low;
	char dir[4096], path[4096];
	struct hs_sym_result r;
	struct hs_sym_module m;
	struct lib l;
	uint64_t v;
	int i;

	(void)state;
	open_lib(&l, "libsymtest.so");
	v = outer_vaddr(&l);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < 200) {
		hs_symbolizer_free(s);
		close_lib(&l);
		skip();
	}
	/* 60 modules, each holding a file open, under a soft limit of 40 */
	low = old;
	low.rlim_cur = 40;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	make_tmpdir(dir, sizeof(dir));
	for (i = 0; i < 60; i++) {
		pathf(path, sizeof(path), "%s/lib%d.so", dir, i);
		copy_file(l.path, path);
		m = l.mod;
		m.path = path;
		assert_int_equal(hs_symbolizer_lookup(s, &m, v, &r), 0);
		assert_int_equal(r.status, HS_SYM_FOUND);
		assert_int_equal(r.nr_frame, 3);
	}
	hs_symbolizer_free(s);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	remove_tree(dir);
	close_lib(&l);
}

/* ---- modules that cannot be used ------------------------------------------ */

static void assert_bad_module(struct hs_symbolizer *s, const struct hs_sym_module *m,
			      uint64_t v, const char *why)
{
	struct hs_sym_module_info info;
	struct hs_sym_result r;
	struct hs_buf b = HS_BUF_INIT;

	assert_int_equal(hs_symbolizer_lookup(s, m, v, &r), 0);
	assert_int_equal(r.status, HS_SYM_BAD_MODULE);
	assert_string_equal(r.module, m->path ? m->path : "");
	assert_int_equal(r.nr_frame, 1);
	assert_null(r.frame[0].function);
	assert_int_equal(hs_sym_format_frame(&r, 0, &b), 0);
	assert_string_equal(strchr(b.s, '!'), "!?");
	hs_buf_release(&b);
	assert_int_equal(hs_symbolizer_module_info(s, m, &info), 0);
	assert_false(info.usable);
	assert_non_null(info.why);
	if (!strstr(info.why, why))
		fail_msg("reason '%s' lacks '%s'", info.why, why);
}

static void wrong_build_id_gives_no_names(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_module m;
	unsigned char id[64];
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	m = l.mod;
	memcpy(id, l.id, l.id_len);
	id[3] ^= 0x5a;
	m.build_id = id;
	assert_bad_module(s, &m, outer_vaddr(&l), "build id differs");

	/* the same path with its true build id is a separate, usable module */
	{
		struct hs_sym_result r;

		assert_int_equal(hs_symbolizer_lookup(s, &l.mod, outer_vaddr(&l), &r), 0);
		assert_outer_frames(&r);
	}
	hs_symbolizer_free(s);
	close_lib(&l);
}

static void missing_file(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_module m = { .path = "/nonexistent/libgone.so" };
	static const unsigned char id[] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)state;
	assert_bad_module(s, &m, 0x1234, "No such file");
	m.build_id = id;
	m.build_id_len = sizeof(id);
	assert_bad_module(s, &m, 0x1234, "No such file");
	m.path = NULL;		/* anonymous: no file at all */
	assert_bad_module(s, &m, 0x1234, "No such file");
	m.path = "/dev/null";	/* not a regular file */
	assert_bad_module(s, &m, 0x1234, "not a regular file");
	hs_symbolizer_free(s);
}

static void corrupt_elf_never_crashes(void **state)
{
	struct hs_symbolizer *s = new_sym();
	char dir[4096], path[4096];
	unsigned char *data;
	struct hs_sym_result r;
	struct hs_sym_module m;
	struct stat st;
	struct lib l;
	uint64_t v;
	size_t n, cut, k;
	FILE *f;
	unsigned seed = 12345;

	(void)state;
	open_lib(&l, "libsymtest.so");
	v = outer_vaddr(&l);
	make_tmpdir(dir, sizeof(dir));

	/* garbage that is not ELF at all */
	join(path, sizeof(path), dir, "garbage.so");
	write_file(path, "this is not an ELF file\n", 24);
	m = (struct hs_sym_module){ .path = path };
	assert_bad_module(s, &m, v, "garbage.so");

	/* a valid ELF header followed by nothing */
	assert_int_equal(stat(l.path, &st), 0);
	n = (size_t)st.st_size;
	data = malloc(n);
	assert_non_null(data);
	f = fopen(l.path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(data, 1, n, f), n);
	fclose(f);
	join(path, sizeof(path), dir, "header.so");
	write_file(path, data, 64);
	m = (struct hs_sym_module){ .path = path };
	assert_bad_module(s, &m, v, "header.so");

	/* cut at many points, then with bytes flipped all over: whatever
	 * comes out, no crash and no name the real file would not give */
	for (cut = 128; cut < n; cut += n / 7) {
		pathf(path, sizeof(path), "%s/cut-%zu.so", dir, cut);
		write_file(path, data, cut);
		m = (struct hs_sym_module){ .path = path };
		assert_int_equal(hs_symbolizer_lookup(s, &m, v, &r), 0);
		assert_true(r.nr_frame >= 1);
	}
	for (k = 0; k < 40; k++) {
		unsigned char *bad = malloc(n);
		size_t i;

		assert_non_null(bad);
		memcpy(bad, data, n);
		for (i = 0; i < 16; i++) {
			seed = seed * 1103515245u + 12345u;
			bad[64 + (seed >> 8) % (n - 64)] ^=
				(unsigned char)(seed >> 24 | 1);
		}
		pathf(path, sizeof(path), "%s/flip-%zu.so", dir, k);
		write_file(path, bad, n);
		free(bad);
		m = (struct hs_sym_module){ .path = path };
		assert_int_equal(hs_symbolizer_lookup(s, &m, v, &r), 0);
		assert_true(r.nr_frame >= 1);
		assert_int_equal(hs_symbolizer_lookup(s, &m, 0x10, &r), 0);
	}
	free(data);
	hs_symbolizer_free(s);
	remove_tree(dir);
	close_lib(&l);
}

/* ---- stripped files and separate debug info -------------------------------- */

/* A fresh directory holding only a copy of libsymtest-stripped.so, whose
 * .gnu_debuglink names libsymtest.debug. */
static void stripped_in(char *dir, size_t n, char *file, size_t fn)
{
	char from[4096];

	make_tmpdir(dir, n);
	join(from, sizeof(from), TARGETS, "libsymtest-stripped.so");
	join(file, fn, dir, "libsymtest-stripped.so");
	copy_file(from, file);
}

static void install_debug(const char *dir, const char *rel)
{
	char from[4096], to[4096], parent[4096], *slash;

	join(from, sizeof(from), TARGETS, "libsymtest.debug");
	join(to, sizeof(to), dir, rel);
	pathf(parent, sizeof(parent), "%s", to);
	slash = strrchr(parent, '/');
	*slash = '\0';
	mkdir_p(parent);
	copy_file(from, to);
}

static void check_debug_found(struct hs_symbolizer *s, struct lib *l,
			      const char *file, const char *want_debug)
{
	struct hs_sym_module m = l->mod;	/* stripped: same build id */
	struct hs_sym_module_info info;
	struct hs_sym_result r;

	m.path = file;
	assert_int_equal(hs_symbolizer_lookup(s, &m, outer_vaddr(l), &r), 0);
	assert_outer_frames(&r);
	assert_string_equal(r.module, file);
	assert_int_equal(hs_symbolizer_module_info(s, &m, &info), 0);
	assert_true(info.usable);
	assert_null(info.why);
	assert_string_equal(info.main_file, file);
	assert_non_null(info.debug_file);
	assert_string_equal(info.debug_file, want_debug);
}

static void stripped_without_debug_uses_dynsym(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_module_info info;
	char dir[4096], file[4096];
	struct hs_sym_result r;
	struct hs_sym_module m;
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	stripped_in(dir, sizeof(dir), file, sizeof(file));
	m = l.mod;
	m.path = file;
	assert_int_equal(hs_symbolizer_lookup(s, &m, outer_vaddr(&l), &r), 0);
	assert_int_equal(r.status, HS_SYM_FOUND);
	assert_int_equal(r.nr_frame, 1);
	assert_string_equal(r.frame[0].function, "hs_symtest_outer");
	assert_null(r.frame[0].file);
	assert_int_equal(r.frame[0].line, 0);
	assert_int_equal(r.frame[0].flags, 0);
	/* the static function is only in .symtab, which strip removed */
	assert_int_equal(hs_symbolizer_lookup(s, &m,
		call_vaddr(&l, "hs_symtest_direct", "hs_symtest_last_return", 1),
		&r), 0);
	assert_int_equal(r.status, HS_SYM_NO_SYMBOL);
	assert_int_equal(hs_symbolizer_module_info(s, &m, &info), 0);
	assert_true(info.usable);
	assert_null(info.debug_file);
	hs_symbolizer_free(s);
	remove_tree(dir);
	close_lib(&l);
}

static void debuglink_next_to_file(void **state)
{
	struct hs_symbolizer *s = new_sym();
	char dir[4096], file[4096], want[4096];
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	stripped_in(dir, sizeof(dir), file, sizeof(file));
	install_debug(dir, "libsymtest.debug");
	check_debug_found(s, &l, file, join(want, sizeof(want), dir,
					    "libsymtest.debug"));
	hs_symbolizer_free(s);
	remove_tree(dir);
	close_lib(&l);
}

static void debuglink_in_dot_debug(void **state)
{
	struct hs_symbolizer *s = new_sym();
	char dir[4096], file[4096], want[4096];
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	stripped_in(dir, sizeof(dir), file, sizeof(file));
	install_debug(dir, ".debug/libsymtest.debug");
	check_debug_found(s, &l, file, join(want, sizeof(want), dir,
					    ".debug/libsymtest.debug"));
	hs_symbolizer_free(s);
	remove_tree(dir);
	close_lib(&l);
}

static void debuglink_under_debug_dir(void **state)
{
	struct hs_symbolizer *s = new_sym();
	char dir[4096], file[4096], dbg[4096], rel[8192], want[8192];
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	stripped_in(dir, sizeof(dir), file, sizeof(file));
	make_tmpdir(dbg, sizeof(dbg));
	/* like /usr/lib/debug/usr/lib/libx.so.debug: DIR + the file's dir */
	pathf(rel, sizeof(rel), "%s/libsymtest.debug", dir + 1);
	install_debug(dbg, rel);
	assert_int_equal(hs_symbolizer_add_debug_dir(s, dbg), 0);
	pathf(want, sizeof(want), "%s/%s", dbg, rel);
	check_debug_found(s, &l, file, want);
	hs_symbolizer_free(s);
	remove_tree(dbg);

	/* and right in DIR */
	s = new_sym();
	make_tmpdir(dbg, sizeof(dbg));
	install_debug(dbg, "libsymtest.debug");
	assert_int_equal(hs_symbolizer_add_debug_dir(s, dbg), 0);
	check_debug_found(s, &l, file, join(want, sizeof(want), dbg,
					    "libsymtest.debug"));
	hs_symbolizer_free(s);
	remove_tree(dir);
	remove_tree(dbg);
	close_lib(&l);
}

static void build_id_in_debug_dir(void **state)
{
	struct hs_symbolizer *s = new_sym();
	char dir[4096], file[4096], dbg[4096], other[4096], rel[256], want[8192];
	char from[4096];
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	stripped_in(dir, sizeof(dir), file, sizeof(file));
	/* rename so that the debuglink name leads nowhere */
	make_tmpdir(dbg, sizeof(dbg));
	make_tmpdir(other, sizeof(other));
	assert_int_equal(hs_symbolizer_add_debug_dir(s, other), 0);
	assert_int_equal(hs_symbolizer_add_debug_dir(s, dbg), 0);
	build_id_path(&l, rel, sizeof(rel));
	strcat(rel, ".debug");
	install_debug(dbg, rel);
	pathf(want, sizeof(want), "%s/%s", dbg, rel);
	check_debug_found(s, &l, file, want);

	/* a relative debug directory is taken from the current directory */
	assert_int_equal(hs_symbolizer_add_debug_dir(s, "rel"), -EBUSY);
	hs_symbolizer_free(s);
	s = new_sym();
	assert_int_equal(hs_symbolizer_add_debug_dir(s, "/a:b"), -EINVAL);
	assert_int_equal(hs_symbolizer_add_debug_dir(s, ""), -EINVAL);
	assert_int_equal(hs_symbolizer_add_debug_dir(s, "no/such/dir"), -ENOENT);
	{
		char cwd[4096];

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		assert_int_equal(chdir(dbg), 0);
		assert_int_equal(hs_symbolizer_add_debug_dir(s, "."), 0);
		assert_int_equal(chdir(cwd), 0);
		pathf(want, sizeof(want), "%s/%s", dbg, rel);
		check_debug_found(s, &l, file, want);
	}
	(void)from;
	hs_symbolizer_free(s);
	remove_tree(dir);
	remove_tree(dbg);
	remove_tree(other);
	close_lib(&l);
}

static void missing_or_rebuilt_file_found_by_build_id(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_module_info info;
	char dbg[4096], rel[256], want[8192], other[4096];
	struct hs_sym_result r;
	struct hs_sym_module m;
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest.so");
	make_tmpdir(dbg, sizeof(dbg));
	build_id_path(&l, rel, sizeof(rel));
	strcat(rel, ".debug");
	install_debug(dbg, rel);
	assert_int_equal(hs_symbolizer_add_debug_dir(s, dbg), 0);
	pathf(want, sizeof(want), "%s/%s", dbg, rel);

	/* the file is gone: the .debug file alone has symbols and DWARF */
	m = l.mod;
	m.path = "/nonexistent/libsymtest.so";
	assert_int_equal(hs_symbolizer_lookup(s, &m, outer_vaddr(&l), &r), 0);
	assert_outer_frames(&r);
	assert_string_equal(r.module, "/nonexistent/libsymtest.so");
	assert_int_equal(hs_symbolizer_module_info(s, &m, &info), 0);
	assert_true(info.usable);
	assert_string_equal(info.main_file, want);
	assert_string_equal(info.debug_file, want);
	assert_string_equal(info.why,
			    "'/nonexistent/libsymtest.so': No such file or directory");

	/* another build at the recorded path is passed over for the id */
	m.path = join(other, sizeof(other), TARGETS, "libsymtest-other.so");
	assert_int_equal(hs_symbolizer_lookup(s, &m, outer_vaddr(&l), &r), 0);
	assert_outer_frames(&r);
	assert_int_equal(hs_symbolizer_module_info(s, &m, &info), 0);
	assert_string_equal(info.main_file, want);
	assert_non_null(strstr(info.why, "libsymtest-other.so': another build"));

	/* ... but without the debug directory it gives no names */
	hs_symbolizer_free(s);
	s = new_sym();
	assert_bad_module(s, &m, outer_vaddr(&l), "build id differs");
	hs_symbolizer_free(s);
	remove_tree(dbg);
	close_lib(&l);
}

static void compressed_debug_sections(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_result r;
	struct lib l;

	(void)state;
	open_lib(&l, "libsymtest-gz.so");
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, outer_vaddr(&l), &r), 0);
	assert_outer_frames(&r);
	hs_symbolizer_free(s);
	close_lib(&l);
}

/* ---- names ------------------------------------------------------------------- */

static void cxx_names_are_demangled(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_result r;
	struct stat st;
	struct lib l;
	uint64_t v;
	char path[4096];

	(void)state;
	join(path, sizeof(path), TARGETS, "libsymtest-cxx.so");
	if (stat(path, &st) || !st.st_size) {
		hs_symbolizer_free(s);
		skip();		/* built without a C++ compiler */
	}
	open_lib(&l, "libsymtest-cxx.so");
	v = call_vaddr(&l, "hs_symtest_cxx_twice", "hs_symtest_cxx_last_return", 5);
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v, &r), 0);
	assert_int_equal(r.nr_frame, 2);
	assert_frame(&r.frame[0], "hs::detail::scale<int>",
		     "symtest_cxx.cc", mark_line("symtest_cxx.cc", "cxx_scale_call"), 1);
	assert_frame(&r.frame[1], "int hs::twice<int>(int)", "symtest_cxx.cc",
		     mark_line("symtest_cxx.cc", "cxx_twice_call"), 0);

	v = call_vaddr(&l, "hs_symtest_cxx_grow", "hs_symtest_cxx_last_return", 5);
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v, &r), 0);
	assert_int_equal(r.nr_frame, 1);
	assert_frame(&r.frame[0], "hs::widget::grow(unsigned long)",
		     "symtest_cxx.cc", mark_line("symtest_cxx.cc", "cxx_grow_call"), 0);
	hs_symbolizer_free(s);

	/* HS_SYM_NO_DEMANGLE keeps the linkage names */
	s = hs_symbolizer_new(HS_SYM_NO_SYSTEM_DEBUG | HS_SYM_NO_DEMANGLE);
	assert_non_null(s);
	assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v, &r), 0);
	assert_string_equal(r.frame[0].function, "_ZN2hs6widget4growEm");
	hs_symbolizer_free(s);
	close_lib(&l);
}

static void demangles_cxx_and_rust(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "_ZN2hs5twiceIiEET_S1_", "int hs::twice<int>(int)" },
		{ "_ZNK3foo3barEv", "foo::bar() const" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		/* Rust legacy: the hash is dropped */
		{ "_ZN7mycrate6module4func17h0123456789abcdefE",
		  "mycrate::module::func" },
		/* Rust v0 */
		{ "_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example" },
		{ "_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar" },
	};
	struct hs_buf b = HS_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hs_buf_reset(&b);
		assert_int_equal(hs_sym_demangle(cases[i].in, &b), 1);
		assert_string_equal(b.s, cases[i].out);
	}
	hs_buf_reset(&b);
	assert_int_equal(hs_sym_demangle("main", &b), 0);
	assert_int_equal(hs_sym_demangle("_Zgarbage", &b), 0);
	assert_int_equal(hs_sym_demangle("_R", &b), 0);
	assert_int_equal(hs_sym_demangle("", &b), 0);
	assert_int_equal(b.len, 0);
	hs_buf_release(&b);
}

/* ---- perf maps ---------------------------------------------------------------- */

static void perf_map_names_jit_code(void **state)
{
	static const char map[] =
		"7f0000001000 100 LazyCompile:*fib /app/fib.js:3\n"
		"0x7f0000001100 0x40 stub with  spaces  \n"
		"7f0000002000 1000 big\n"
		"7f0000002800 10 later overlap\n"
		"7f0000003000 0 empty\n"
		"\n"
		"7f0000004000 20 _ZN2hs5twiceIiEET_S1_\n"
		"7f00000050";	/* cut off: ignored */
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_modmap map_none = HS_SYM_MODMAP_INIT;
	struct hs_diag d = HS_DIAG_INIT("perf.map");
	struct hs_buf b = HS_BUF_INIT;
	char dir[4096], path[4096];
	struct hs_sym_result r;

	(void)state;
	make_tmpdir(dir, sizeof(dir));
	join(path, sizeof(path), dir, "perf-4242.map");
	write_file(path, map, sizeof(map) - 1);
	assert_int_equal(hs_symbolizer_add_perf_map(s, path, &d), 0);
	assert_false(d.set);

	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000001000, &r), 0);
	assert_int_equal(r.status, HS_SYM_FOUND);
	assert_string_equal(r.module, path);
	assert_int_equal(r.nr_frame, 1);
	assert_string_equal(r.frame[0].function, "LazyCompile:*fib /app/fib.js:3");
	assert_null(r.frame[0].file);
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f00000010ff, &r), 0);
	assert_string_equal(r.frame[0].function, "LazyCompile:*fib /app/fib.js:3");
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000001100, &r), 0);
	assert_string_equal(r.frame[0].function, "stub with  spaces");
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000001140, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_MODULE);
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000000fff, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_MODULE);
	/* overlapping entries: the later line wins where they overlap */
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f00000027ff, &r), 0);
	assert_string_equal(r.frame[0].function, "big");
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000002805, &r), 0);
	assert_string_equal(r.frame[0].function, "later overlap");
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000002810, &r), 0);
	assert_string_equal(r.frame[0].function, "big");
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000002fff, &r), 0);
	assert_string_equal(r.frame[0].function, "big");
	/* "empty" has size 0: nothing */
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000003000, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_MODULE);
	assert_null(r.frame[0].function);
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000004010, &r), 0);
	assert_string_equal(r.frame[0].function, "int hs::twice<int>(int)");
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x7f0000005000, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_MODULE);

	/* run-time lookups fall back on the perf maps, with the -1 */
	assert_int_equal(hs_symbolizer_lookup_addr(s, &map_none, 0x7f0000001100,
						   HS_SYM_RETURN_ADDRESS, &r), 0);
	assert_string_equal(r.frame[0].function, "LazyCompile:*fib /app/fib.js:3");
	assert_int_equal(hs_sym_format_frame(&r, 0, &b), 0);
	assert_memory_equal(b.s, path, strlen(path));
	assert_string_equal(b.s + strlen(path), "!LazyCompile:*fib /app/fib.js:3");
	hs_buf_release(&b);
	hs_symbolizer_free(s);
	remove_tree(dir);
}

static void perf_map_errors(void **state)
{
	static const char bad[] =
		"1000 10 fine\n"
		"2000 zz broken size\n"
		"3000 10 never read\n";
	struct hs_symbolizer *s = new_sym();
	struct hs_diag d = HS_DIAG_INIT("perf.map");
	char dir[4096], path[4096], msg[600];
	struct hs_sym_result r;
	const char *lines[] = { "1000\n", "1000 10\n", "1000 10 \n", "-1000 10 x\n",
				"1000 -10 x\n", "ffffffffffffffff 2 wrap\n",
				"10000000000000000 1 big\n", "g000 10 x\n" };
	size_t i;

	(void)state;
	make_tmpdir(dir, sizeof(dir));
	join(path, sizeof(path), dir, "bad.map");
	write_file(path, bad, sizeof(bad) - 1);
	assert_int_equal(hs_symbolizer_add_perf_map(s, path, &d), -EINVAL);
	assert_true(d.set);
	assert_string_equal(hs_diag_format(&d, msg, sizeof(msg)),
			    "perf.map:2: expected 'START SIZE name' in hex");
	/* nothing of a bad file is kept */
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0x1000, &r), 0);
	assert_int_equal(r.status, HS_SYM_NO_MODULE);

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct hs_diag d2 = HS_DIAG_INIT("x");

		write_file(path, lines[i], strlen(lines[i]));
		assert_int_equal(hs_symbolizer_add_perf_map(s, path, &d2), -EINVAL);
		assert_int_equal(d2.line, 1);
	}
	assert_int_equal(hs_symbolizer_add_perf_map(s, "/nonexistent.map", NULL),
			 -ENOENT);
	/* no perf map for a process that wrote none */
	assert_int_equal(hs_symbolizer_add_perf_map_pid(s, 0x7ffffffe, NULL), -ENOENT);
	hs_symbolizer_free(s);
	remove_tree(dir);
}

static void perf_map_of_pid(void **state)
{
	struct hs_symbolizer *s = new_sym();
	struct hs_sym_result r;
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)getpid());
	write_file(path, "abc000 100 jitted\n", 18);
	assert_int_equal(hs_symbolizer_add_perf_map_pid(s, getpid(), NULL), 0);
	unlink(path);
	assert_int_equal(hs_symbolizer_lookup_jit(s, 0xabc0ff, &r), 0);
	assert_string_equal(r.frame[0].function, "jitted");
	assert_string_equal(r.module, path);
	hs_symbolizer_free(s);
}

/* ---- module membership ---------------------------------------------------------- */

static void modmap_later_ranges_win(void **state)
{
	struct hs_sym_modmap map = HS_SYM_MODMAP_INIT;
	struct hs_sym_module a = { .path = "a" }, b = { .path = "b" },
			     c = { .path = "c" };

	(void)state;
	assert_null(hs_sym_modmap_find(&map, 0));
	assert_int_equal(hs_sym_modmap_add(&map, &a, 0x1000, 0x9000), 0);
	assert_int_equal(hs_sym_modmap_add(&map, &b, 0x20000, 0x21000), 0);
	assert_int_equal(hs_sym_modmap_add(&map, &c, 0x2000, 0x3000), 0);
	assert_int_equal(hs_sym_modmap_add(&map, &c, 0x5000, 0x5000), -EINVAL);
	assert_null(hs_sym_modmap_find(&map, 0xfff));
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x1000), &a);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x1fff), &a);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x2000), &c);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x2fff), &c);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x3000), &a);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x8fff), &a);
	assert_null(hs_sym_modmap_find(&map, 0x9000));
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x20500), &b);
	assert_null(hs_sym_modmap_find(&map, 0x21000));
	/* added after a query: still wins over the older range */
	assert_int_equal(hs_sym_modmap_add(&map, &b, 0x1000, 0x2800), 0);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x1000), &b);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x27ff), &b);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x2800), &c);
	assert_ptr_equal(hs_sym_modmap_find(&map, 0x3000), &a);
	hs_sym_modmap_release(&map);
}

/* ---- out of memory ---------------------------------------------------------------- */

static void survives_every_allocation_failure(void **state)
{
	struct lib l;
	uint64_t v;
	long n;
	char dir[4096], path[4096];

	(void)state;
	open_lib(&l, "libsymtest.so");
	v = outer_vaddr(&l);
	make_tmpdir(dir, sizeof(dir));
	join(path, sizeof(path), dir, "perf.map");
	write_file(path, "1000 10 a\n2000 10 _ZN2hs5twiceIiEET_S1_\n", 41);
	for (n = 0;; n++) {
		struct hs_symbolizer *s;
		struct hs_sym_result r;
		int err = 0;

		hs_alloc_fail_after(n);
		s = hs_symbolizer_new(HS_SYM_NO_SYSTEM_DEBUG | HS_SYM_NO_DEBUGINFOD);
		if (s) {
			err = hs_symbolizer_add_debug_dir(s, dir);
			if (!err)
				err = hs_symbolizer_lookup(s, &l.mod, v, &r);
			if (!err)
				err = hs_symbolizer_lookup(s, &l.mod, v - 1, &r);
			if (!err)
				err = hs_symbolizer_add_perf_map(s, path, NULL);
			assert_true(err == 0 || err == -ENOMEM);
		}
		hs_alloc_fail_after(-1);
		if (s && !err) {
			assert_int_equal(hs_symbolizer_lookup(s, &l.mod, v, &r), 0);
			assert_outer_frames(&r);
			assert_int_equal(hs_symbolizer_lookup_jit(s, 0x2000, &r), 0);
			assert_string_equal(r.frame[0].function,
					    "int hs::twice<int>(int)");
			hs_symbolizer_free(s);
			break;
		}
		hs_symbolizer_free(s);
		assert_true(n < 1000);
	}
	remove_tree(dir);
	close_lib(&l);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inline_frames_innermost_first),
		cmocka_unit_test(static_function_and_entry_line),
		cmocka_unit_test(runtime_addresses_through_modmap),
		cmocka_unit_test(cached_results_are_the_same_memory),
		cmocka_unit_test(address_without_symbol),
		cmocka_unit_test(symbol_table_rules),
		cmocka_unit_test(many_modules_open_at_once),
		cmocka_unit_test(wrong_build_id_gives_no_names),
		cmocka_unit_test(missing_file),
		cmocka_unit_test(corrupt_elf_never_crashes),
		cmocka_unit_test(stripped_without_debug_uses_dynsym),
		cmocka_unit_test(debuglink_next_to_file),
		cmocka_unit_test(debuglink_in_dot_debug),
		cmocka_unit_test(debuglink_under_debug_dir),
		cmocka_unit_test(build_id_in_debug_dir),
		cmocka_unit_test(missing_or_rebuilt_file_found_by_build_id),
		cmocka_unit_test(compressed_debug_sections),
		cmocka_unit_test(cxx_names_are_demangled),
		cmocka_unit_test(demangles_cxx_and_rust),
		cmocka_unit_test(perf_map_names_jit_code),
		cmocka_unit_test(perf_map_errors),
		cmocka_unit_test(perf_map_of_pid),
		cmocka_unit_test(modmap_later_ranges_win),
		cmocka_unit_test(survives_every_allocation_failure),
	};

	/* never reach for the network, whatever the environment says; libdw
	 * may read the variable when it is loaded, so start afresh */
	(void)argc;
	if (getenv("DEBUGINFOD_URLS")) {
		unsetenv("DEBUGINFOD_URLS");
		execv("/proc/self/exe", argv);
		return 1;
	}
	if (getenv("HS_TEST_FILTER"))	/* e.g. HS_TEST_FILTER='perf_map*' */
		cmocka_set_test_filter(getenv("HS_TEST_FILTER"));
	return cmocka_run_group_tests_name("symbols", tests, NULL, NULL);
}
