/*
 * debug_cache - decompressed copies of the system's debug files, kept by
 * build id so that a symbolizer does not inflate them again on every run.
 *
 * Distributions ship debug files with compressed sections (Debian's
 * libc6-dbg: 2.3 MB of zlib in the C library's .debug_info alone), and
 * libdw inflates every compressed debug section of a file when it opens
 * its DWARF: 70 ms of CPU in each `heapscope run` of a program that
 * calls the C library, whatever the program. A file is the same for
 * every run of the same build, so the first symbolizer to need it writes
 * a copy with its sections decompressed under the cache directory, laid
 * out as a debug directory (.build-id/xx/yyyy.debug); the symbolizer
 * searches that directory just before /usr/lib/debug, and libdw maps the
 * copy as it is. A build id names one build, so a copy never goes stale.
 *
 * The directory is $HEAPSCOPE_DEBUG_CACHE when set (empty: no cache),
 * else $XDG_CACHE_HOME/heapscope/debug, else ~/.cache/heapscope/debug.
 * Copies are written to a temporary name of their own (mkostemp()) and
 * renamed, so concurrent symbolizers never see half a file (temporaries
 * a killed writer left are removed after an hour); a copy that is no longer an ELF file
 * of its build id with nothing compressed is removed and made again. Every failure here
 * only means the symbolizer reads the original. The caller owns the strings it gets.
 */
#include "symbols/symbols_internal.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/fileio.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Files with fewer compressed bytes are read as they are: the copy would
 * save less than its own open costs. */
#define DEBUG_CACHE_MIN_COMPRESSED (64u << 10)

char *hs__debug_cache_dir(void)
{
	const char *env = getenv("HEAPSCOPE_DEBUG_CACHE");
	struct hs_buf b = HS_BUF_INIT;
	int err;

	if (env)
		return env[0] == '/' && !strchr(env, ':') ? hs_strdup(env) : NULL;
	env = getenv("XDG_CACHE_HOME");
	if (env && env[0] == '/') {
		err = hs_buf_addf(&b, "%s/heapscope/debug", env);
	} else {
		env = getenv("HOME");
		if (!env || env[0] != '/')
			return NULL;
		err = hs_buf_addf(&b, "%s/.cache/heapscope/debug", env);
	}
	if (err || strchr(b.s, ':')) {
		/* (a ':' would split libdwfl's search path) */
		hs_buf_release(&b);
		return NULL;
	}
	return hs_buf_detach(&b);
}

/* mkdir -p of @path's directory part (@path is modified and restored). */
static int make_parents(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = -errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	return 0;
}

/* Copy the bytes of @in to @out. 0 or -errno. */
static int copy_fd(int in, int out)
{
	char buf[1 << 16];
	ssize_t n;
	int err = 0;

	while (!err && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		err = hs_write_all(out, buf, (size_t)n);
	}
	return err;
}

/* A temporary copy is this old when its writer was killed: no copy takes
 * that long to write. */
#define DEBUG_CACHE_STALE_SECONDS 3600

/* 1 when @name is a temporary copy's: "ID.debug." and mkostemp()'s six
 * characters, or "ID.debug.PID.tmp" (as heapscope 1.1 named them). */
static int temp_name(const char *name)
{
	const char *tail = strstr(name, ".debug."), *end;

	if (!tail)
		return 0;
	tail += strlen(".debug.");
	end = tail + strlen(tail);
	if (end - tail == 6)
		return 1;
	if (end - tail < 5 || strcmp(end - 4, ".tmp"))
		return 0;
	return strspn(tail, "0123456789") == (size_t)(end - 4 - tail);
}

/* Remove the temporary copies older than an hour in the directory of
 * @path (a killed writer's; the writer's own is younger), so that kills
 * do not fill the cache. */
static void remove_stale_temps(char *path)
{
	char *slash = strrchr(path, '/');
	struct hs_buf old = HS_BUF_INIT;
	struct dirent *de;
	struct stat st;
	DIR *d;

	*slash = '\0';
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (!temp_name(de->d_name))
			continue;
		hs_buf_reset(&old);
		if (hs_buf_addf(&old, "%s/%s", path, de->d_name))
			break;
		if (!lstat(old.s, &st) && !S_ISDIR(st.st_mode) &&
		    st.st_mtime + DEBUG_CACHE_STALE_SECONDS < time(NULL))
			unlink(old.s);
	}
	if (d)
		closedir(d);
	*slash = '/';
	hs_buf_release(&old);
}

/* The bytes of @e's SHF_COMPRESSED sections, or -1 if @e is no ELF. */
static long long compressed_bytes(Elf *e)
{
	Elf_Scn *scn = NULL;
	long long total = 0;
	GElf_Shdr sh;

	if (elf_kind(e) != ELF_K_ELF)
		return -1;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			total += (long long)sh.sh_size;
	return total;
}

/*
 * Whether the file at @path is a usable copy: an ELF file with build id
 * @id and nothing compressed (a copy damaged by hand would otherwise
 * shadow the original: libdwfl takes the first file of the right name).
 */
static int copy_ok(const char *path, const unsigned char *id, size_t idlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = 0;
	const void *bits;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && compressed_bytes(e) == 0 &&
	    dwelf_elf_gnu_build_id(e, &bits) == (ssize_t)idlen &&
	    !memcmp(bits, id, idlen))
		ok = 1;
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

/* Decompress every compressed section of the ELF file open at @fd in place. */
static int decompress_in_place(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = 0;

	if (!e)
		return -EINVAL;
	while (!err && (scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			err = -EINVAL;
	if (!err && elf_update(e, ELF_C_WRITE) < 0)
		err = -EIO;
	elf_end(e);
	return err;
}

int hs__debug_cache_fill(const char *cache, const char *from, const unsigned char *id,
			 size_t idlen, char **out)
{
	struct hs_buf rel = HS_BUF_INIT, src = HS_BUF_INIT, dst = HS_BUF_INIT,
		      tmp = HS_BUF_INIT;
	int err, in = -1, fd = -1;
	struct stat st;
	long long packed;
	Elf *e = NULL;
	size_t k;

	*out = NULL;
	if (idlen < 2)
		return 0;
	err = hs_buf_addf(&rel, "/.build-id/%02x/", id[0]);
	for (k = 1; !err && k < idlen; k++)
		err = hs_buf_addf(&rel, "%02x", id[k]);
	if (!err)
		err = hs_buf_adds(&rel, ".debug");
	if (!err)
		err = hs_buf_addf(&dst, "%s%s", cache, rel.s);
	if (!err)
		err = hs_buf_addf(&src, "%s%s", from, rel.s);
	if (err)
		goto out;
	if (!stat(dst.s, &st)) {
		if (S_ISREG(st.st_mode) && copy_ok(dst.s, id, idlen)) {
			err = 1; /* an earlier run's copy */
			goto out;
		}
		unlink(dst.s); /* damaged: made again below, or left to the original */
	}
	in = open(src.s, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) || !S_ISREG(st.st_mode))
		goto out; /* nothing to copy: err is 0 */
	elf_version(EV_CURRENT);
	e = elf_begin(in, ELF_C_READ_MMAP, NULL);
	packed = e ? compressed_bytes(e) : -1;
	if (e)
		elf_end(e);
	if (packed < (long long)DEBUG_CACHE_MIN_COMPRESSED)
		goto out;
	/* a name of its own, made here (never a file or link planted there,
	 * never another symbolizer's, whatever its pid) */
	err = hs_buf_addf(&tmp, "%s.XXXXXX", dst.s);
	if (!err)
		err = make_parents(tmp.s);
	if (err)
		goto out;
	remove_stale_temps(tmp.s);
	fd = mkostemp(tmp.s, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fchmod(fd, 0644))
		err = -errno;
	if (!err && lseek(in, 0, SEEK_SET) < 0)
		err = -errno;
	if (!err)
		err = copy_fd(in, fd);
	if (!err)
		err = decompress_in_place(fd);
	if (close(fd) && !err)
		err = -errno;
	fd = -1;
	if (!err && rename(tmp.s, dst.s))
		err = -errno;
	if (err)
		unlink(tmp.s);
	else
		err = 1;
out:
	if (in >= 0)
		close(in);
	if (err == 1) {
		*out = hs_buf_detach(&dst);
		if (!*out)
			err = -ENOMEM;
	}
	hs_buf_release(&rel);
	hs_buf_release(&src);
	hs_buf_release(&dst);
	hs_buf_release(&tmp);
	return err;
}
