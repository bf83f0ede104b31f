/*
 * debug_cache - decompressed copies of the system's debug files, kept by
 * build id so that a symbolizer does not inflate them again on every run,
 * and swept so that the copies nobody uses any more do not pile up.
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
 * Copies are written to a temporary name of their own (hs_mkostempat()) and
 * renamed, so concurrent symbolizers never see half a file (temporaries
 * a killed writer left are removed after an hour); a copy that is no longer an ELF file
 * of its build id with nothing compressed is removed and made again. Every failure here
 * only means the symbolizer reads the original. The caller owns the strings it gets.
 *
 * Eviction (the idea of ccache's and debuginfod's client caches): a
 * copy's mtime means "last used". A symbolizer that takes a copy whose
 * mtime is a day old or more sets it to now (one utimensat(), so at most
 * once a day per copy) before it checks the copy. At most once a day, the
 * first symbolizer to start after the last sweep sweeps: it removes the
 * copies unused for longer than the maximum age, then the least recently
 * used ones while the copies take more than the size budget. "Once a day"
 * is the mtime of the directory .last-sweep in the cache (a directory, so
 * that no file of the debug directory is anything but a debug file), and
 * sweepers take turns under its flock() (fileio.h), without waiting: a run
 * that is not the day's sweep costs one lstat(), never a directory walk.
 *
 * Why a sweep never removes a copy that a symbolizer is about to map:
 * libdwfl opens the copy in the same lookup that checked it, and
 *  - a copy used in the last SWEEP_GRACE_SECONDS (a day and an hour) is
 *    never removed, whatever the budget: a copy a symbolizer took without
 *    touching it was used within the last day;
 *  - a copy the sweep chose is first renamed to a temporary name of the
 *    sweep's own, and its mtime is read again there: when a symbolizer
 *    touched it before the rename, it is renamed back; when after, the
 *    symbolizer's utimensat() failed (ENOENT) and it did not take the copy.
 * So a symbolizer may at worst miss a copy while it is renamed away, and
 * read the original then. The sweep opens every directory below the cache
 * with O_NOFOLLOW, looks at entries with lstat() semantics, removes only
 * regular files named as copies or temporaries (anything else there is
 * left alone), and any failure only means that the cache is not swept.
 */
#include "symbols/symbols_internal.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/log.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <limits.h>
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

/* What an entry of a .build-id/xx directory is to the cache, by name. */
enum cache_name { NAME_FOREIGN, NAME_COPY, NAME_TEMP };

/*
 * The copy of a build id is named by its hex digits after the first byte
 * and ".debug" ("cdef0123.debug"). A temporary is the copy's name, a dot
 * and hs_mkostempat()'s six letters or digits, or, as heapscope 1.1 named
 * them, the copy's name, a dot, a pid and ".tmp". Nothing else is ours.
 */
static enum cache_name cache_name(const char *name)
{
	size_t hex = strspn(name, "0123456789abcdef"), n;
	const char *tail = name + hex;

	if (hex < 2 || hex % 2 || strncmp(tail, ".debug", 6))
		return NAME_FOREIGN;
	tail += 6;
	if (!*tail)
		return NAME_COPY;
	if (*tail++ != '.')
		return NAME_FOREIGN;
	n = strlen(tail);
	if (n == 6 && strspn(tail, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789") == 6)
		return NAME_TEMP;
	if (n >= 5 && !strcmp(tail + n - 4, ".tmp") &&
	    strspn(tail, "0123456789") == n - 4)
		return NAME_TEMP;
	return NAME_FOREIGN;
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
		if (cache_name(de->d_name) != NAME_TEMP)
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

/* A copy is marked used again (its mtime set to now) once it is this old. */
#define DEBUG_CACHE_MARK_SECONDS (24 * 3600)

/*
 * Mark the copy at @path (stat()ed as *@st) used now, unless it was within
 * the last day. 0 when it is gone (a sweep took it away: the caller must
 * not take it), else 1, also when its mtime cannot be set (a cache of
 * someone else's, or read-only): it is used all the same.
 */
static int mark_used(const char *path, const struct stat *st)
{
	time_t now = time(NULL);

	if (st->st_mtime > now - DEBUG_CACHE_MARK_SECONDS)
		return 1;
	if (!utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW))
		return 1;
	return errno != ENOENT;
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
	if (!stat(dst.s, &st) && mark_used(dst.s, &st)) {
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
	fd = hs_mkostempat(AT_FDCWD, tmp.s, 0);
	if (fd == -ENOENT && !make_parents(tmp.s)) {
		/* a sweep removed the directory, empty, meanwhile */
		memcpy(tmp.s + tmp.len - 6, "XXXXXX", 6);
		fd = hs_mkostempat(AT_FDCWD, tmp.s, 0);
	}
	if (fd < 0) {
		err = fd;
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

/* ---- eviction ---------------------------------------------------------- */

/* Sweeps are this far apart (debuginfod's client cleans daily too). */
#define SWEEP_INTERVAL_SECONDS (24 * 3600)
/* A copy used this recently is never removed: longer than the day a copy
 * goes without being marked used again, with an hour to spare. */
#define SWEEP_GRACE_SECONDS (DEBUG_CACHE_MARK_SECONDS + 3600)
/* The directory whose mtime is the last sweep's time. */
#define SWEEP_STAMP ".last-sweep"

/*
 * An unsigned decimal @s with an optional unit out of @units (letters,
 * each scaling by the matching entry of @scale). 0 with *@out set, or
 * -EINVAL (*@out unchanged).
 */
static int parse_amount(const char *s, const char *units, const unsigned long long *scale,
			unsigned long long dflt_scale, unsigned long long *out)
{
	unsigned long long v, unit = dflt_scale;
	const char *u;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end);
		if (!u || end[1])
			return -EINVAL;
		unit = scale[u - units];
	}
	if (v > ULLONG_MAX / unit)
		return -EINVAL;
	*out = v * unit;
	return 0;
}

void hs__debug_cache_limits_from_env(struct hs__debug_cache_limits *l)
{
	static const unsigned long long age_scale[] = {1, 60, 3600, 86400};
	static const unsigned long long size_scale[] = {
	    1ull << 10, 1ull << 10, 1ull << 20, 1ull << 20, 1ull << 30, 1ull << 30};
	const char *age = getenv("HEAPSCOPE_DEBUG_CACHE_MAX_AGE");
	const char *size = getenv("HEAPSCOPE_DEBUG_CACHE_MAX_SIZE");
	unsigned long long v;

	l->max_age = HS_DEBUG_CACHE_MAX_AGE;
	l->max_size = HS_DEBUG_CACHE_MAX_SIZE;
	if (age && *age) {
		if (!parse_amount(age, "smhd", age_scale, 86400, &v) && v <= (1ull << 40))
			l->max_age = (long long)v;
		else
			pr_debug("symbols: HEAPSCOPE_DEBUG_CACHE_MAX_AGE '%s' is not "
				 "N[smhd]: using %lld days",
				 age, (long long)HS_DEBUG_CACHE_MAX_AGE / 86400);
	}
	if (size && *size) {
		if (!parse_amount(size, "kKmMgG", size_scale, 1, &v))
			l->max_size = v;
		else
			pr_debug("symbols: HEAPSCOPE_DEBUG_CACHE_MAX_SIZE '%s' is not "
				 "N[KMG]: using %llu MiB",
				 size, (unsigned long long)HS_DEBUG_CACHE_MAX_SIZE >> 20);
	}
}

void (*hs__debug_cache_sweep_race)(int dir_fd, const char *name, const char *tmp);

/* A copy the sweep found: where, and when it was last used. */
struct sweep_copy {
	char *name; /* owned */
	int dir;    /* index in struct sweep's dir_fd */
	time_t mtime;
	unsigned long long size;
};

struct sweep {
	time_t now, keep_after; /* copies with an mtime from keep_after on stay */
	int dir_fd[256];	/* .build-id/xx, open with O_NOFOLLOW, or -1 */
	struct sweep_copy *copy;
	size_t nr_copy, alloc_copy;
	struct hs__debug_cache_swept *out;
};

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* List the copies of the directory open at @fd (.build-id/@xx), removing
 * its temporaries a killed writer left. 0 or -ENOMEM. */
static int sweep_list(struct sweep *w, int fd, int xx)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	struct stat st;
	int err = 0, kept = 0;

	if (!d) {
		close(fd);
		return 0; /* not swept */
	}
	while (!err && (de = readdir(d))) {
		enum cache_name kind = cache_name(de->d_name);

		if (kind == NAME_FOREIGN ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (kind == NAME_TEMP) {
			if (st.st_mtime + DEBUG_CACHE_STALE_SECONDS < w->now)
				unlinkat(fd, de->d_name, 0);
			continue;
		}
		if (HS_GROW(w->copy, w->nr_copy + 1, w->alloc_copy)) {
			err = -ENOMEM;
			break;
		}
		w->copy[w->nr_copy].name = hs_strdup(de->d_name);
		if (!w->copy[w->nr_copy].name) {
			err = -ENOMEM;
			break;
		}
		w->copy[w->nr_copy].dir = xx;
		w->copy[w->nr_copy].mtime = st.st_mtime;
		w->copy[w->nr_copy].size = (unsigned long long)st.st_size;
		w->nr_copy++;
		kept = 1;
	}
	/* keep the directory open for the removals, without the stream */
	w->dir_fd[xx] = kept ? dup(fd) : -1;
	closedir(d);
	return err;
}

/* Oldest use first; the name breaks ties, so that sweeps are repeatable. */
static int by_last_use(const void *a, const void *b)
{
	const struct sweep_copy *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Remove copy @c unless it was used since the sweep looked: renamed to a
 * temporary name of the sweep's own first, its mtime read there, and
 * renamed back if a symbolizer marked it meanwhile (see the top of the
 * file). 1 when removed, else 0.
 */
static int sweep_remove(struct sweep *w, const struct sweep_copy *c)
{
	int fd = w->dir_fd[c->dir], made, k;
	struct hs_buf tmp = HS_BUF_INIT;
	struct stat st;

	/* a name no one else has: reserved in the directory the sweep holds
	 * open, then renamed over */
	k = hs_buf_addf(&tmp, "%s.XXXXXX", c->name);
	if (!k)
		k = hs_mkostempat(fd, tmp.s, 0);
	if (k < 0) {
		hs_buf_release(&tmp);
		return 0;
	}
	close(k);
	if (renameat(fd, c->name, fd, tmp.s)) {
		unlinkat(fd, tmp.s, 0); /* gone already, or not ours to move */
		hs_buf_release(&tmp);
		return 0;
	}
	if (hs__debug_cache_sweep_race)
		hs__debug_cache_sweep_race(fd, c->name, tmp.s);
	made = 0;
	if (!fstatat(fd, tmp.s, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISREG(st.st_mode) && st.st_mtime < w->keep_after) {
			made = !unlinkat(fd, tmp.s, 0);
		} else if (renameat(fd, tmp.s, fd, c->name)) {
			unlinkat(fd, tmp.s, 0); /* cannot go back: one copy made again */
		}
	}
	hs_buf_release(&tmp);
	return made;
}

/* The copies of the cache open at @root: listed, then swept. */
static int sweep_copies(struct sweep *w, int root, const struct hs__debug_cache_limits *l)
{
	unsigned long long total = 0;
	struct dirent *de;
	size_t i;
	int bid, fd, err = 0;
	DIR *d;

	bid = openat(root, ".build-id", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bid < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(bid);
	if (!d) {
		err = -errno;
		close(bid);
		return err;
	}
	while (!err && (de = readdir(d))) {
		int hi = hexval(de->d_name[0]), lo = hi < 0 ? -1 : hexval(de->d_name[1]);

		if (lo < 0 || de->d_name[2])
			continue;
		fd = openat(bid, de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			err = sweep_list(w, fd, hi * 16 + lo);
	}
	if (!err) {
		if (w->nr_copy) /* (qsort() wants an array, even of nothing) */
			qsort(w->copy, w->nr_copy, sizeof(*w->copy), by_last_use);
		for (i = 0; i < w->nr_copy; i++)
			total += w->copy[i].size;
		for (i = 0; i < w->nr_copy; i++) {
			const struct sweep_copy *c = &w->copy[i];
			int too_old = l->max_age && c->mtime < w->now - l->max_age;
			int too_big = l->max_size && total > l->max_size;

			if (c->mtime >= w->keep_after)
				break; /* this one and the newer ones stay */
			if (!too_old && !too_big)
				break; /* newer ones are younger still, and fit */
			if (sweep_remove(w, c)) {
				total -= c->size;
				w->out->removed++;
				w->out->removed_bytes += c->size;
			}
		}
		w->out->kept_bytes = total;
		/* the directories emptied: a writer makes its own again */
		for (i = 0; i < 256; i++)
			if (w->dir_fd[i] >= 0) {
				char xx[3] = {"0123456789abcdef"[i / 16],
					      "0123456789abcdef"[i % 16], 0};

				unlinkat(bid, xx, AT_REMOVEDIR);
			}
	}
	closedir(d);
	return err;
}

/* 1 when the stamp's time @t says a sweep is due at @now. */
static int sweep_due(time_t t, time_t now)
{
	return t > now || t + SWEEP_INTERVAL_SECONDS <= now;
}

int hs__debug_cache_sweep(const char *cache, const struct hs__debug_cache_limits *l,
			  time_t now, struct hs__debug_cache_swept *out)
{
	struct hs_buf stamp = HS_BUF_INIT;
	struct sweep w = {
	    .now = now, .keep_after = now - SWEEP_GRACE_SECONDS, .out = out};
	struct timespec times[2];
	struct stat st;
	int err = 0, lock = -1, root = -1;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (hs_buf_addf(&stamp, "%s/" SWEEP_STAMP, cache))
		return -ENOMEM;
	if (!lstat(stamp.s, &st) && !sweep_due(st.st_mtime, now))
		goto out; /* every run but the day's first stops here */
	if (!mkdir(stamp.s, 0755)) {
		/* never swept: a sweep is due (a run that lstat()s the new
		 * directory before this only skips a sweep) */
		times[0].tv_sec = times[1].tv_sec = 0;
		times[0].tv_nsec = times[1].tv_nsec = 0;
		if (utimensat(AT_FDCWD, stamp.s, times, AT_SYMLINK_NOFOLLOW))
			err = -errno;
	} else if (errno != EEXIST) {
		if (errno != ENOENT) /* no cache yet: nothing to sweep */
			err = -errno;
		goto out;
	}
	if (!err) {
		lock = hs_open_locked(stamp.s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
		if (lock == -EWOULDBLOCK)
			goto out; /* another run is sweeping */
		if (lock < 0)
			err = lock;
	}
	if (err)
		goto out;
	/* the stamp again, under the lock: another run may have swept since */
	if (fstat(lock, &st)) {
		err = -errno;
		goto out;
	}
	if (!sweep_due(st.st_mtime, now))
		goto out;
	root = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < 256; i++)
		w.dir_fd[i] = -1;
	err = sweep_copies(&w, root, l);
	for (i = 0; i < 256; i++)
		if (w.dir_fd[i] >= 0)
			close(w.dir_fd[i]);
	for (i = 0; i < w.nr_copy; i++)
		hs_free(w.copy[i].name);
	hs_free(w.copy);
	/* stamped even after a failure: a cache that cannot be swept is tried
	 * again tomorrow, not on every run */
	times[0].tv_sec = times[1].tv_sec = now;
	times[0].tv_nsec = times[1].tv_nsec = 0;
	if (futimens(lock, times) && !err)
		err = -errno;
	if (!err)
		err = 1;
out:
	if (root >= 0)
		close(root);
	if (lock >= 0)
		close(lock);
	hs_buf_release(&stamp);
	return err;
}
