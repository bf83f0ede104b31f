/*
 * symbolizer - modules opened through libdwfl, the cache of resolved
 * addresses, and the frame and string storage results point into.
 *
 * Each module gets its own Dwfl session with the module reported at bias
 * 0, so Dwfl addresses are the ELF virtual addresses callers pass. libdwfl
 * reads .symtab (or .dynsym and .gnu_debugdata), finds separate debug files
 * through the debuginfo path built from the debug directories, and
 * decompresses compressed sections. Frames are stored in blocks that never
 * move and strings in a strtab arena, so results stay valid until the
 * symbolizer is freed.
 *
 * The vDSO (a module named linux-vdso.so.1, with no file) is read from
 * this process's own vDSO when its build id is the recorded one (the same
 * kernel): CPU samples often land in its clock_gettime.
 */
#include "symbols/symbols_internal.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define STRTAB_CAP ((size_t)1 << 34) /* names: far above any real need */
#define FRAME_BLOCK 4096	     /* frames per storage block */
#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

static const struct hs_sym_frame unknown_frame;

static void set_unknown(struct hs_sym_result *out, enum hs_sym_status status,
			const char *module)
{
	out->status = status;
	out->module = module;
	out->frame = &unknown_frame;
	out->nr_frame = 1;
}

/* ---- strings ---------------------------------------------------------- */

const char *hs__sym_intern(struct hs_symbolizer *s, const char *str, size_t len)
{
	uint32_t id;

	if (hs_strtab_intern(&s->str, str, len, &id))
		return NULL;
	return hs_strtab_get(&s->str, id);
}

const char *hs__sym_intern_buf(struct hs_symbolizer *s, const struct hs_buf *b)
{
	return hs__sym_intern(s, b->s, b->len);
}

const char *hs__sym_function_name(struct hs_symbolizer *s, const char *raw)
{
	size_t len = strlen(raw);
	uint32_t rid, did;
	int r;

	if (s->flags & HS_SYM_NO_DEMANGLE || raw[0] != '_' ||
	    (raw[1] != 'Z' && raw[1] != 'R'))
		return hs__sym_intern(s, raw, len);
	if (hs_strtab_intern(&s->str, raw, len, &rid))
		return NULL;
	if (rid < s->alloc_demangled && s->demangled[rid])
		return hs_strtab_get(&s->str, s->demangled[rid] - 1);
	if (rid >= s->alloc_demangled) {
		size_t old = s->alloc_demangled;

		if (HS_GROW(s->demangled, (size_t)rid + 1, s->alloc_demangled))
			return NULL;
		memset(s->demangled + old, 0,
		       (s->alloc_demangled - old) * sizeof(*s->demangled));
	}
	hs_buf_reset(&s->tmp);
	r = hs_sym_demangle(raw, &s->tmp);
	if (r < 0)
		return NULL;
	did = rid;
	if (r > 0 && hs_strtab_intern(&s->str, s->tmp.s, s->tmp.len, &did))
		return NULL;
	s->demangled[rid] = did + 1;
	return hs_strtab_get(&s->str, did);
}

/* ---- frame storage ---------------------------------------------------- */

/* @n contiguous frames that never move, or NULL when out of memory. */
static struct hs_sym_frame *alloc_frames(struct hs_symbolizer *s, size_t n)
{
	struct hs_sym_frame *b;
	size_t size;

	if (s->nr_block && s->block_used + n <= s->block_size) {
		b = s->block[s->nr_block - 1] + s->block_used;
		s->block_used += n;
		return b;
	}
	if (HS_GROW(s->block, s->nr_block + 1, s->alloc_block))
		return NULL;
	size = n > FRAME_BLOCK ? n : FRAME_BLOCK;
	b = hs_calloc(size, sizeof(*b));
	if (!b)
		return NULL;
	s->block[s->nr_block++] = b;
	s->block_size = size;
	s->block_used = n;
	return b;
}

/* ---- the symbolizer --------------------------------------------------- */

struct hs_symbolizer *hs_symbolizer_new(unsigned flags)
{
	struct hs_symbolizer *s = hs_calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->flags = flags;
	hs_strtab_init(&s->str, STRTAB_CAP);
	hs_buf_init(&s->tmp);
	hs_sym_modmap_init(&s->jit);
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	return s;
}

static void free_module(struct hs__sym_mod *m)
{
	hs__sym_elf_release(m);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	hs_free(m->build_id);
	hs_free(m);
}

void hs_symbolizer_free(struct hs_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_mod; i++)
		free_module(s->mod[i]);
	hs_free(s->mod);
	hs_idindex_release(&s->mod_index);
	hs_free(s->cache);
	hs_idindex_release(&s->cache_index);
	hs__sym_dwarf_release(s);
	for (i = 0; i < s->nr_block; i++)
		hs_free(s->block[i]);
	hs_free(s->block);
	hs_free(s->scratch);
	for (i = 0; i < s->nr_debug_dir; i++)
		hs_free(s->debug_dir[i]);
	hs_free(s->debug_dir);
	hs_free(s->debuginfo_path);
	hs_free(s->debug_cache);
	hs_strtab_release(&s->str);
	hs_free(s->demangled);
	hs_buf_release(&s->tmp);
	hs_sym_modmap_release(&s->jit);
	for (i = 0; i < s->nr_jit_arr; i++)
		hs_free(s->jit_arr[i]);
	hs_free(s->jit_arr);
	if (s->dbgd.client)
		s->dbgd.end(s->dbgd.client);
	if (s->dbgd.so)
		dlclose(s->dbgd.so);
	hs_free(s);
}

int hs_symbolizer_add_debug_dir(struct hs_symbolizer *s, const char *dir)
{
	char *copy, *abs = NULL;

	if (s->started)
		return -EBUSY;
	if (!dir || !*dir)
		return -EINVAL;
	if (dir[0] != '/') {
		abs = realpath(dir, NULL);
		if (!abs)
			return errno == ENOMEM ? -ENOMEM : -errno;
		dir = abs;
	}
	if (strchr(dir, ':')) {
		free(abs);
		return -EINVAL;
	}
	copy = hs_strdup(dir);
	free(abs);
	if (!copy || HS_GROW(s->debug_dir, s->nr_debug_dir + 1, s->alloc_debug_dir)) {
		hs_free(copy);
		return -ENOMEM;
	}
	s->debug_dir[s->nr_debug_dir++] = copy;
	return 0;
}

/* The daily sweep of the debug cache, when it is due (one lstat() when
 * not): its failures only leave the cache as it is. */
static void sweep_debug_cache(const char *cache)
{
	struct hs__debug_cache_limits lim;
	struct hs__debug_cache_swept out;
	int n;

	hs__debug_cache_limits_from_env(&lim);
	n = hs__debug_cache_sweep(cache, &lim, time(NULL), &out);
	if (n < 0)
		pr_debug("symbols: debug cache %s not swept: %s", cache, strerror(-n));
	else if (n > 0)
		pr_debug("symbols: debug cache %s swept: %u copies (%llu KiB) removed, "
			 "%llu KiB kept",
			 cache, out.removed, out.removed_bytes >> 10,
			 out.kept_bytes >> 10);
}

/*
 * The string libdwfl's standard callbacks search (see libdwfl.h): the
 * file's own directory, its .debug subdirectory, the caller's directories,
 * the decompressed copies of /usr/lib/debug's files (debug_cache.c), then
 * /usr/lib/debug. Build-id lookups use the absolute entries in that
 * order, debuglink lookups all of them.
 */
static int build_debuginfo_path(struct hs_symbolizer *s)
{
	struct hs_buf b = HS_BUF_INIT;
	size_t i;
	int err = hs_buf_adds(&b, ":.debug");

	for (i = 0; !err && i < s->nr_debug_dir; i++)
		err = hs_buf_addf(&b, ":%s", s->debug_dir[i]);
	if (!err && !(s->flags & HS_SYM_NO_SYSTEM_DEBUG)) {
		s->debug_cache = hs__debug_cache_dir();
		if (s->debug_cache) {
			sweep_debug_cache(s->debug_cache);
			err = hs_buf_addf(&b, ":%s", s->debug_cache);
		}
	}
	if (!err && !(s->flags & HS_SYM_NO_SYSTEM_DEBUG))
		err = hs_buf_adds(&b, ":" SYSTEM_DEBUG_DIR);
	if (err) {
		hs_buf_release(&b);
		return err;
	}
	s->debuginfo_path = hs_buf_detach(&b);
	return s->debuginfo_path ? 0 : -ENOMEM;
}

/* ---- opening modules -------------------------------------------------- */

static uint64_t module_hash(const char *path, const unsigned char *id, size_t n)
{
	uint64_t h = hs_hash_bytes(path, strlen(path));

	return h ^ hs_hash_u64(hs_hash_bytes(id, n) + n);
}

/* Say in s->tmp why @file cannot serve; returns 1, or -ENOMEM. */
static int unusable(struct hs_symbolizer *s, const char *file, const char *why)
{
	hs_buf_reset(&s->tmp);
	return hs_buf_addf(&s->tmp, "'%s': %s", file, why) ? -ENOMEM : 1;
}

/*
 * Report @file as @m's ELF in a new Dwfl session and check its build id.
 * Returns 0 (m->dwfl set), 1 when the file is unusable (reason in s->tmp)
 * or -ENOMEM.
 */
static int try_file(struct hs_symbolizer *s, struct hs__sym_mod *m, const char *file)
{
	const unsigned char *bits;
	GElf_Addr bias, where;
	Dwfl_Module *dm;
	struct stat st;
	Dwfl *dwfl;
	int n;

	if (stat(file, &st))
		return unusable(s, file, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return unusable(s, file, "not a regular file");
	if (!s->nofile_raised) {
		/* libdwfl keeps each module's files open */
		struct rlimit rl;

		s->nofile_raised = 1;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	dwfl = dwfl_begin(&s->callbacks);
	if (!dwfl)
		return -ENOMEM;
	dm = dwfl_report_elf(dwfl, m->path, file, -1, 0, true);
	if (!dm || dwfl_report_end(dwfl, NULL, NULL) || !dwfl_module_getelf(dm, &bias)) {
		n = unusable(s, file, dwfl_errmsg(-1));
		dwfl_end(dwfl);
		return n;
	}
	if (m->build_id_len) {
		n = dwfl_module_build_id(dm, &bits, &where);
		if (n != (int)m->build_id_len || memcmp(bits, m->build_id, n)) {
			const char *why =
			    n > 0 ? "another build (build id differs)" : "no build id";

			dwfl_end(dwfl);
			return unusable(s, file, why);
		}
	}
	m->main_file = hs__sym_intern(s, file, strlen(file));
	if (!m->main_file) {
		dwfl_end(dwfl);
		return -ENOMEM;
	}
	m->dwfl = dwfl;
	m->dm = dm;
	return 0;
}

static int load_debuginfod(struct hs__debuginfod *d)
{
	if (d->tried)
		return d->client != NULL;
	d->tried = 1;
	d->so = dlopen("libdebuginfod.so.1", RTLD_LAZY);
	if (!d->so)
		return 0;
	d->begin = (__typeof__(d->begin))dlsym(d->so, "debuginfod_begin");
	d->end = (__typeof__(d->end))dlsym(d->so, "debuginfod_end");
	d->find_debuginfo =
	    (__typeof__(d->find_debuginfo))dlsym(d->so, "debuginfod_find_debuginfo");
	if (d->begin && d->end && d->find_debuginfo)
		d->client = d->begin();
	return d->client != NULL;
}

/* The build id's debug file from debuginfod, or 1 when there is none. */
static int try_debuginfod(struct hs_symbolizer *s, struct hs__sym_mod *m)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	int fd, err;

	if (s->flags & HS_SYM_NO_DEBUGINFOD || !urls || !*urls ||
	    !load_debuginfod(&s->dbgd))
		return 1;
	fd = s->dbgd.find_debuginfo(s->dbgd.client, m->build_id, (int)m->build_id_len,
				    &path);
	if (fd < 0)
		return 1;
	close(fd);
	err = try_file(s, m, path);
	free(path);
	return err;
}

/*
 * Find a usable file for @m: the recorded path if its build id matches,
 * else DIR/.build-id/xx/rest and DIR/.build-id/xx/rest.debug in the debug
 * directories, else debuginfod. Returns 0 (usable or not, see m->dm) or
 * -ENOMEM.
 */
/*
 * A copy of this process's vDSO in a memory file: its descriptor, or -1.
 * The image is the [vdso] mapping of /proc/self/maps.
 */
static int own_vdso(void)
{
	unsigned long lo, hi;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "re");
	int fd = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[vdso]") || sscanf(line, "%lx-%lx", &lo, &hi) != 2 ||
		    hi <= lo)
			continue;
		fd = memfd_create("vdso", MFD_CLOEXEC);
		if (fd >= 0 &&
		    write(fd, (const void *)lo, hi - lo) != (ssize_t)(hi - lo)) {
			close(fd);
			fd = -1;
		}
		break;
	}
	fclose(f);
	return fd;
}

static int open_module(struct hs_symbolizer *s, struct hs__sym_mod *m)
{
	struct hs_buf name = HS_BUF_INIT;
	size_t i, nr_dir = s->nr_debug_dir;
	int err;

	if (!strncmp(m->path, "linux-vdso", 10) || !strncmp(m->path, "linux-gate", 10)) {
		int fd = m->build_id_len ? own_vdso() : -1;
		char file[64];

		if (fd >= 0) {
			snprintf(file, sizeof(file), "/proc/self/fd/%d", fd);
			err = try_file(s, m, file);
			close(fd);
			if (err <= 0)
				return err;
		}
	}
	if (s->debug_cache && m->build_id_len) {
		/* libdwfl finds the copy by build id, before /usr/lib/debug */
		char *copy;

		err = hs__debug_cache_fill(s->debug_cache, SYSTEM_DEBUG_DIR, m->build_id,
					   m->build_id_len, &copy);
		if (err < 0 && err != -ENOMEM)
			hs_log(HS_LOG_DEBUG,
			       "symbols: no decompressed copy of %s's debug file "
			       "in %s: %s",
			       m->path, s->debug_cache, strerror(-err));
		hs_free(copy);
	}
	err = try_file(s, m, m->path);
	if (err <= 0)
		return err;
	m->why = hs__sym_intern_buf(s, &s->tmp);
	if (!m->why)
		return -ENOMEM;
	if (!m->build_id_len)
		return 0;
	if (!(s->flags & HS_SYM_NO_SYSTEM_DEBUG))
		nr_dir++;
	for (i = 0; i < nr_dir; i++) {
		const char *dir =
		    i < s->nr_debug_dir ? s->debug_dir[i] : SYSTEM_DEBUG_DIR;
		size_t k;

		hs_buf_reset(&name);
		err = hs_buf_addf(&name, "%s/.build-id/%02x/", dir, m->build_id[0]);
		for (k = 1; !err && k < m->build_id_len; k++)
			err = hs_buf_addf(&name, "%02x", m->build_id[k]);
		if (!err)
			err = try_file(s, m, name.s);
		if (err > 0 && !hs_buf_adds(&name, ".debug"))
			err = try_file(s, m, name.s);
		if (err <= 0)
			goto out;
	}
	err = try_debuginfod(s, m);
out:
	hs_buf_release(&name);
	return err < 0 ? err : 0;
}

/* A module to look up: its path ("" for none) and build id. */
struct mod_key {
	const char *path;
	const unsigned char *build_id;
	size_t idlen;
	uint64_t hash; /* module_hash() of the above */
};

static int mod_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hs_symbolizer *s = ctx;
	const struct hs__sym_mod *m = s->mod[id];
	const struct mod_key *k = key;

	return m->hash == k->hash && m->build_id_len == k->idlen &&
	       !strcmp(m->path, k->path) &&
	       (!k->idlen || !memcmp(m->build_id, k->build_id, k->idlen));
}

/* The cache entry for @mod, opened on first sight. 0 or -ENOMEM. */
static int get_module(struct hs_symbolizer *s, const struct hs_sym_module *mod,
		      struct hs__sym_mod **out)
{
	struct mod_key k;
	struct hs__sym_mod *m;
	uint32_t id;
	size_t pos;
	int err;

	k.path = mod->path ? mod->path : "";
	k.build_id = mod->build_id;
	k.idlen = mod->build_id ? mod->build_id_len : 0;
	k.hash = module_hash(k.path, k.build_id, k.idlen);
	if (!s->debuginfo_path) {
		err = build_debuginfo_path(s);
		if (err)
			return err;
	}
	s->started = 1;
	if (hs_idindex_reserve(&s->mod_index, s->nr_mod + 1))
		return -ENOMEM;
	pos = hs_idindex_slot(&s->mod_index, k.hash, mod_eq, s, &k);
	id = hs_idindex_at(&s->mod_index, pos);
	if (id != HS_IDINDEX_NONE) {
		/* s->mod is by id (symbols_internal.h) */
		HS_BUG_ON(s->mod[id]->id != id);
		*out = s->mod[id];
		return 0;
	}
	if (s->nr_mod >= UINT32_MAX - 1 || HS_GROW(s->mod, s->nr_mod + 1, s->alloc_mod))
		return -ENOMEM;
	m = hs_calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->hash = k.hash;
	m->id = (uint32_t)s->nr_mod;
	m->path = hs__sym_intern(s, k.path, strlen(k.path));
	if (k.idlen) {
		m->build_id = hs_malloc(k.idlen);
		if (m->build_id)
			memcpy(m->build_id, k.build_id, k.idlen);
		m->build_id_len = k.idlen;
	}
	if (!m->path || (k.idlen && !m->build_id) || open_module(s, m)) {
		free_module(m);
		return -ENOMEM;
	}
	s->mod[s->nr_mod++] = m;
	hs_idindex_set(&s->mod_index, pos, k.hash, m->id);
	*out = m;
	return 0;
}

/* ---- the address cache ---------------------------------------------- */

static uint64_t cache_hash(uint32_t mod, uint64_t vaddr)
{
	uint64_t k[2] = {vaddr, mod};

	return hs_hash_bytes(k, sizeof(k));
}

/* An address to look up: (module id, vaddr). */
struct cache_key {
	uint32_t mod;
	uint64_t vaddr;
};

static int cache_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hs_symbolizer *s = ctx;
	const struct cache_key *k = key;

	return s->cache[id].mod == k->mod && s->cache[id].vaddr == k->vaddr;
}

static void from_cache(const struct hs__cache_ent *c, const struct hs__sym_mod *m,
		       struct hs_sym_result *out)
{
	out->status = c->status;
	out->module = m->path;
	out->frame = c->frame;
	out->nr_frame = c->nr_frame;
}

int hs_symbolizer_lookup(struct hs_symbolizer *s, const struct hs_sym_module *mod,
			 uint64_t vaddr, struct hs_sym_result *out)
{
	struct hs_sym_frame *f;
	struct hs__cache_ent *c;
	struct hs__sym_mod *m;
	struct cache_key k;
	uint64_t h;
	uint32_t id;
	size_t pos, i;
	int err, found = 0;

	s->lookups++;
	err = get_module(s, mod, &m);
	if (err) {
		set_unknown(out, HS_SYM_BAD_MODULE, NULL);
		return err;
	}
	if (!m->dm) {
		set_unknown(out, HS_SYM_BAD_MODULE, m->path);
		return 0;
	}
	if (hs_idindex_reserve(&s->cache_index, s->nr_cache + 1) ||
	    HS_GROW(s->cache, s->nr_cache + 1, s->alloc_cache))
		goto nomem;
	k.mod = m->id;
	k.vaddr = vaddr;
	h = cache_hash(m->id + 1, vaddr);
	pos = hs_idindex_slot(&s->cache_index, h, cache_eq, s, &k);
	id = hs_idindex_at(&s->cache_index, pos);
	if (id != HS_IDINDEX_NONE) {
		s->hits++;
		from_cache(&s->cache[id], m, out);
		return 0;
	}
	if (hs__sym_resolve(s, m, vaddr))
		goto nomem;
	f = alloc_frames(s, s->nr_scratch);
	if (!f)
		goto nomem;
	memcpy(f, s->scratch, s->nr_scratch * sizeof(*f));
	for (i = 0; i < s->nr_scratch; i++)
		found |= f[i].function != NULL;
	c = &s->cache[s->nr_cache];
	c->vaddr = vaddr;
	c->mod = m->id;
	c->status = found ? HS_SYM_FOUND : HS_SYM_NO_SYMBOL;
	c->nr_frame = (uint32_t)s->nr_scratch;
	c->frame = f;
	hs_idindex_set(&s->cache_index, pos, h, (uint32_t)s->nr_cache);
	s->nr_cache++;
	s->frames += s->nr_scratch;
	from_cache(c, m, out);
	return 0;
nomem:
	set_unknown(out, HS_SYM_BAD_MODULE, m->path);
	return -ENOMEM;
}

int hs_symbolizer_module_info(struct hs_symbolizer *s, const struct hs_sym_module *mod,
			      struct hs_sym_module_info *info)
{
	const char *mainfile = NULL, *debugfile = NULL;
	struct hs__sym_mod *m;
	Dwarf_Addr bias;
	Dwarf *dw;
	int err;

	memset(info, 0, sizeof(*info));
	err = get_module(s, mod, &m);
	if (err)
		return err;
	info->why = m->why;
	if (!m->dm)
		return 0;
	info->usable = 1;
	info->main_file = m->main_file;
	dw = dwfl_module_getdwarf(m->dm, &bias);
	if (!dw)
		return 0;
	dwfl_module_info(m->dm, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (!debugfile) {
		/* DWARF in the main file, or a file libdw did not name */
		info->debug_file = dwarf_getelf(dw) == dwfl_module_getelf(m->dm, &bias)
				       ? m->main_file
				       : "(no name)";
		return 0;
	}
	info->debug_file = hs__sym_intern(s, debugfile, strlen(debugfile));
	return info->debug_file ? 0 : -ENOMEM;
}

/* ---- JIT, run-time addresses, formatting ------------------------------ */

int hs__sym_add_jit(struct hs_symbolizer *s, struct hs__jit_sym *jit, size_t nr)
{
	size_t i;

	if (HS_GROW(s->jit_arr, s->nr_jit_arr + 1, s->alloc_jit_arr) ||
	    HS_GROW(s->jit.range, s->jit.nr + nr, s->jit.alloc)) {
		hs_free(jit);
		return -ENOMEM;
	}
	s->jit_arr[s->nr_jit_arr++] = jit;
	/* room was made above, so only an empty range fails: it is skipped */
	for (i = 0; i < nr; i++)
		if (hs__ranges_add(&s->jit, &jit[i], jit[i].start, jit[i].end))
			continue;
	return 0;
}

int hs_symbolizer_lookup_jit(struct hs_symbolizer *s, uint64_t addr,
			     struct hs_sym_result *out)
{
	const struct hs__jit_sym *j = hs__ranges_find(&s->jit, addr);

	if (!j) {
		set_unknown(out, HS_SYM_NO_MODULE, NULL);
		return 0;
	}
	out->status = HS_SYM_FOUND;
	out->module = j->module;
	out->frame = &j->frame;
	out->nr_frame = 1;
	return 0;
}

int hs_symbolizer_lookup_addr(struct hs_symbolizer *s, struct hs_sym_modmap *map,
			      uint64_t addr, unsigned flags, struct hs_sym_result *out)
{
	const struct hs_sym_module *mod = map ? hs_sym_modmap_find(map, addr) : NULL;
	uint64_t pc = addr - (flags & HS_SYM_RETURN_ADDRESS ? 1 : 0);

	if (mod)
		return hs_symbolizer_lookup(s, mod, pc - mod->bias, out);
	return hs_symbolizer_lookup_jit(s, pc, out);
}

int hs_sym_format_frame(const struct hs_sym_result *r, unsigned i, struct hs_buf *out)
{
	const char *fn = i < r->nr_frame ? r->frame[i].function : NULL;

	return hs_buf_addf(out, "%s!%s", r->module && *r->module ? r->module : "?",
			   fn ? fn : "?");
}

void hs_symbolizer_stats(const struct hs_symbolizer *s, struct hs_symbolizer_stats *st)
{
	st->modules = s->nr_mod;
	st->lookups = s->lookups;
	st->cache_hits = s->hits;
	st->frames = s->frames;
	st->strings = hs_strtab_count(&s->str);
}
