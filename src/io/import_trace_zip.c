/*
 * import_trace_zip - perfcollect's .trace.zip: the first entry whose name
 * ends in ".data.txt" is read as `perf script` text, and the map files
 * the zip carries name the frames perf left unknown
 * (perfview-semantics.md §9):
 *
 *  - perf-<pid>.map ("hexStart hexSize symbol" per line, written by JITs)
 *    for frames whose module is unknown (JIT code);
 *  - perfinfo-<pid>.map ("ImageLoad;/path/x.dll;{guid}[;hexBase]") for
 *    frames in a known module with an unknown symbol: the address, or the
 *    address minus the base, is looked up in the module's
 *    "x.{guid}.map" or "x.ni.{guid}.map".
 *
 * Map files are read lazily, once, the first time a pid (or module) needs
 * one, streamed line by line and kept sorted by start address for binary
 * search. What they hold in memory (ranges and symbols) is bounded, all
 * maps together, by HS_TRACE_ZIP_MAP_MAX (HEAPSCOPE_MAP_MAX). A map that
 * would pass it (a few MB of zip can hold a 1 GiB map) is read again,
 * keeping only what the profile needs: for each frame address of the
 * .data.txt entry, the symbol of the range that holds it (filter_map()),
 * in memory bounded by the profile's distinct addresses. Only if that
 * fails too is the map left out, with a warning.
 */
#include "io/io.h"
#include "io/perf_script.h"
#include "io/zipfile.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/linereader.h"
#include "common/log.h"
#include "common/strtab.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAP_MAX_LINE ((size_t)1 << 16)
#define HS_TRACE_ZIP_MAP_MAX (256ULL << 20) /* bytes of maps held, in all */

struct sym_range {
	uint64_t start, size;
	size_t sym, sym_len; /* offset and length in symmap.text */
	size_t order;	     /* line order: later lines win on ties */
};

/*
 * One map file: ranges sorted by start; or, for a map filtered by the
 * profile's addresses, r[i] the range holding addr[i] (size 0: none).
 */
struct symmap {
	struct sym_range *r;
	size_t nr, alloc;
	struct hs_buf text; /* the symbols, back to back */
	uint64_t *addr;	    /* filtered: the addresses looked up, sorted */
};

/* What perfinfo-<pid>.map says about one module of one process. */
struct module_info {
	uint32_t map; /* id in tz.maps */
	uint64_t base;
	int has_base;
};

struct tz {
	const char *path; /* the zip, borrowed */
	/* "<pid>" -> per-pid state */
	struct hs_strtab pids;
	struct tz_pid {
		uint32_t perf_map; /* id in maps, or UINT32_MAX if none */
		int perfinfo_read;
	} * pid;
	size_t alloc_pid;
	/* "<pid>:<module file name>" -> module_info */
	struct hs_strtab modules;
	struct module_info *module;
	size_t alloc_module;
	/* map entry name -> loaded map (NULL: the zip has none) */
	struct hs_strtab maps;
	struct symmap **map;
	size_t alloc_map;
	struct hs_buf key, out;	     /* scratch */
	uint64_t map_bytes, map_max; /* held by the maps read, and the bound */
	uint64_t *addrs;	     /* its frame addresses, sorted, once read */
	size_t nr_addrs;
	int addrs_read;
};

static void symmap_free(struct symmap *m)
{
	if (!m)
		return;
	hs_free(m->r);
	hs_free(m->addr);
	hs_buf_release(&m->text);
	hs_free(m);
}

static int parse_hex(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t n = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return -1;
		n = n << 4 | (uint64_t)d;
	}
	if (!digits)
		return -1;
	*pp = p;
	*v = n;
	return 0;
}

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static int range_cmp(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * One "hexStart hexSize symbol" line into @r (start, size) and the symbol
 * [*@sym, *@sym_end); 0, or -1 for a malformed line.
 */
static int map_line(const char *line, size_t len, struct sym_range *r, const char **sym,
		    const char **sym_end)
{
	const char *p = skip_blank(line, line + len), *end = line + len;

	if (parse_hex(&p, end, &r->start) || p == end || (*p != ' ' && *p != '\t'))
		return -1;
	p = skip_blank(p, end);
	if (parse_hex(&p, end, &r->size) || (p < end && *p != ' ' && *p != '\t'))
		return -1;
	p = skip_blank(p, end);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*sym = p;
	*sym_end = end;
	return 0;
}

/* What @m holds in memory (its arrays as allocated). */
static uint64_t symmap_bytes(const struct symmap *m)
{
	return (uint64_t)m->alloc * sizeof(*m->r) + m->text.alloc;
}

/*
 * Read "hexStart hexSize symbol" lines; malformed lines are skipped.
 * -EFBIG when what the map holds would pass @room bytes.
 */
static int symmap_read(FILE *f, uint64_t room, struct symmap **out)
{
	struct symmap *m = hs_calloc(1, sizeof(*m));
	struct hs_linereader lr;
	char *line;
	size_t len;
	int ret;

	if (!m)
		return -ENOMEM;
	hs_buf_init(&m->text);
	ret = hs_linereader_init(&lr, f, MAP_MAX_LINE);
	while (!ret) {
		const char *p, *end;
		struct sym_range r;

		ret = hs_linereader_next(&lr, &line, &len);
		if (ret <= 0)
			break;
		ret = 0;
		if (map_line(line, len, &r, &p, &end))
			continue;
		r.sym = m->text.len;
		r.sym_len = (size_t)(end - p);
		r.order = m->nr;
		if (hs_buf_add(&m->text, p, r.sym_len) ||
		    HS_GROW(m->r, m->nr + 1, m->alloc)) {
			ret = -ENOMEM;
			break;
		}
		m->r[m->nr++] = r;
		if (symmap_bytes(m) > room) {
			ret = -EFBIG;
			break;
		}
	}
	if (ret == -E2BIG) /* an overlong line ends what is usable */
		ret = 0;
	hs_linereader_release(&lr);
	if (ret < 0) {
		symmap_free(m);
		return ret;
	}
	if (m->nr) /* a map of no usable line has no array to sort */
		qsort(m->r, m->nr, sizeof(*m->r), range_cmp);
	*out = m;
	return 0;
}

/* The first index of sorted @a (@n) whose value is not below @v. */
static size_t lower_bound(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort @a (*@n) and drop repeats. */
static void sort_unique(uint64_t *a, size_t *n)
{
	size_t i, k = 0;

	if (!*n)
		return;
	qsort(a, *n, sizeof(*a), u64_cmp);
	for (i = 1; i < *n; i++)
		if (a[i] != a[k])
			a[++k] = a[i];
	*n = k + 1;
}

/*
 * Every frame address of the .data.txt entry (lines that start with a
 * blank, then a hex address and a blank), sorted and unique, into
 * tz->addrs: the addresses a lookup can be asked for. Kept deduplicated
 * as it grows, so it holds what the profile has, not its frame count.
 */
static int read_profile_addrs(struct tz *tz)
{
	struct hs_diag diag = HS_DIAG_INIT(tz->path);
	struct hs_linereader lr;
	size_t alloc = 0, n = 0, dedup_at = 1u << 16;
	uint64_t *a = NULL;
	char *line;
	size_t len;
	FILE *f;
	int ret;

	tz->addrs_read = 1;
	f = hs_zip_open_entry(tz->path, ".data.txt", NULL, &diag);
	if (!f)
		return -EIO;
	ret = hs_linereader_init(&lr, f, MAP_MAX_LINE);
	while (!ret) {
		const char *p, *end;
		uint64_t v;

		ret = hs_linereader_next(&lr, &line, &len);
		if (ret <= 0)
			break;
		ret = 0;
		end = line + len;
		if (!len || (line[0] != ' ' && line[0] != '\t'))
			continue;
		p = skip_blank(line, end);
		if (parse_hex(&p, end, &v) || (p < end && *p != ' ' && *p != '\t'))
			continue;
		if (n == dedup_at) {
			sort_unique(a, &n);
			dedup_at = 2 * n > (1u << 16) ? 2 * n : 1u << 16;
		}
		if (HS_GROW(a, n + 1, alloc)) {
			ret = -ENOMEM;
			break;
		}
		a[n++] = v;
	}
	if (ret == -E2BIG) /* as the importer, which refuses it with its line */
		ret = 0;
	hs_linereader_release(&lr);
	fclose(f);
	if (ret < 0) {
		hs_free(a);
		return ret;
	}
	sort_unique(a, &n);
	tz->addrs = a;
	tz->nr_addrs = n;
	return 0;
}

/* The key a range wins by: the latest start, then the latest line. */
struct win {
	uint64_t start, order; /* order: line number + 1; 0 for none */
};

static int win_less(const struct win *a, const struct win *b)
{
	return a->start != b->start ? a->start < b->start : a->order < b->order;
}

/*
 * Read the map entry @name keeping, for each address of sorted @want
 * (@n), the range that holds it and would win symmap_find() (the latest
 * start, the latest line on ties): a first pass finds the winners with a
 * segment tree over @want (each range raises the key of the addresses it
 * holds, in O(log n)), a second keeps their symbols. Memory is bounded by
 * @n, whatever the map's size. The result is a filtered symmap.
 */
static int filter_map(struct tz *tz, const char *name, const uint64_t *want, size_t n,
		      struct symmap **out)
{
	struct win *tree = hs_calloc(2 * n + 1, sizeof(*tree));
	uint64_t *orders = hs_calloc(n + 1, sizeof(*orders));
	struct symmap *m = hs_calloc(1, sizeof(*m));
	struct hs_linereader lr;
	size_t i, nr_orders = 0, *slot = NULL;
	int pass, ret = 0;

	if (!tree || !orders || !m) {
		ret = -ENOMEM;
		goto out;
	}
	hs_buf_init(&m->text);
	m->addr = hs_malloc((n + 1) * sizeof(*m->addr));
	m->r = hs_calloc(n + 1, sizeof(*m->r));
	slot = hs_malloc((n + 1) * sizeof(*slot));
	if (!m->addr || !m->r || !slot) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(m->addr, want, n * sizeof(*want));
	m->nr = m->alloc = n;
	for (pass = 0; pass < 2 && !ret; pass++) {
		FILE *f = hs_zip_open_named(tz->path, name);
		uint64_t order = 0;
		char *line;
		size_t len;

		if (!f) {
			ret = -EIO;
			break;
		}
		ret = hs_linereader_init(&lr, f, MAP_MAX_LINE);
		while (!ret) {
			const char *sym, *sym_end;
			struct sym_range r;
			size_t lo, hi;

			ret = hs_linereader_next(&lr, &line, &len);
			if (ret <= 0)
				break;
			ret = 0;
			if (map_line(line, len, &r, &sym, &sym_end) || !r.size)
				continue;
			order++;
			if (pass == 0) {
				/* raise the key of want[lo, hi): the addresses it holds
				 */
				struct win key = {r.start, order};

				lo = lower_bound(want, n, r.start) + n;
				hi = (r.start + r.size < r.start
					  ? n
					  : lower_bound(want, n, r.start + r.size)) +
				     n;
				for (; lo < hi; lo >>= 1, hi >>= 1) {
					if ((lo & 1) && win_less(&tree[lo], &key))
						tree[lo] = key;
					if (lo & 1)
						lo++;
					if ((hi & 1) && win_less(&tree[hi - 1], &key))
						tree[hi - 1] = key;
					if (hi & 1)
						hi--;
				}
				continue;
			}
			/* pass 1: the symbols of the winning lines */
			lo = lower_bound(orders, nr_orders, order);
			if (lo == nr_orders || orders[lo] != order)
				continue;
			slot[lo] = m->text.len;
			if (hs_buf_add(&m->text, sym, (size_t)(sym_end - sym)) ||
			    hs_buf_add(&m->text, "", 1))
				ret = -ENOMEM;
		}
		if (ret == -E2BIG) /* an overlong line ends what is usable */
			ret = 0;
		hs_linereader_release(&lr);
		fclose(f);
		if (ret < 0 || pass)
			break;
		/* each address's winner: the highest key on its leaf's path */
		for (i = 0; i < n; i++) {
			struct win best = {0, 0};
			size_t k;

			for (k = i + n; k >= 1; k >>= 1)
				if (win_less(&best, &tree[k]))
					best = tree[k];
			m->r[i].start = best.start;
			m->r[i].order = best.order; /* the line, for now */
			if (best.order)
				orders[nr_orders++] = best.order;
		}
		sort_unique(orders, &nr_orders);
	}
	if (ret < 0)
		goto out;
	/* pass 0 kept the start and line; the lines' sizes and symbols now */
	for (i = 0; i < n; i++) {
		size_t k;

		if (!m->r[i].order)
			continue;
		k = lower_bound(orders, nr_orders, m->r[i].order);
		m->r[i].sym = slot[k];
		m->r[i].sym_len = strlen(m->text.s + slot[k]);
		/* any size: the range holds the address (it won for it) */
		m->r[i].size = 1 + (want[i] - m->r[i].start);
	}
out:
	hs_free(tree);
	hs_free(orders);
	hs_free(slot);
	if (ret < 0) {
		symmap_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

/* The range holding @addr: the last one starting at or below it. */
static const struct sym_range *symmap_find(const struct symmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr, i, n;

	if (m->addr) {
		i = lower_bound(m->addr, m->nr, addr);
		return i < m->nr && m->addr[i] == addr && m->r[i].size ? &m->r[i] : NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo ranges start at or below addr; nested ranges: look back a little */
	for (i = lo, n = 0; i > 0 && n < 16; i--, n++)
		if (addr - m->r[i - 1].start < m->r[i - 1].size)
			return &m->r[i - 1];
	return NULL;
}

/*
 * The map entry @name filtered by the profile's addresses (with @base
 * taken off each too, when not 0: a module map's lookups try both).
 */
static int load_filtered(struct tz *tz, const char *name, uint64_t base,
			 struct symmap **m)
{
	uint64_t *want;
	size_t i, n;
	int err;

	if (!tz->addrs_read) {
		err = read_profile_addrs(tz);
		if (err)
			return err;
	}
	want = hs_malloc((2 * tz->nr_addrs + 1) * sizeof(*want));
	if (!want)
		return -ENOMEM;
	memcpy(want, tz->addrs, tz->nr_addrs * sizeof(*want));
	n = tz->nr_addrs;
	for (i = 0; base && i < tz->nr_addrs; i++)
		if (tz->addrs[i] >= base)
			want[n++] = tz->addrs[i] - base;
	sort_unique(want, &n);
	err = filter_map(tz, name, want, n, m);
	hs_free(want);
	return err;
}

/*
 * Id in tz->maps of the zip entry @name, loading it on first use (@base:
 * the module's base, or 0).
 */
static int load_map(struct tz *tz, const char *name, uint64_t base, uint32_t *id)
{
	size_t before = hs_strtab_count(&tz->maps);
	struct symmap *m = NULL;
	FILE *f;
	int err;

	if (hs_strtab_intern(&tz->maps, name, strlen(name), id))
		return -ENOMEM;
	if (*id < before)
		return 0;
	if (HS_GROW(tz->map, (size_t)*id + 1, tz->alloc_map))
		return -ENOMEM;
	tz->map[*id] = NULL;
	f = hs_zip_open_named(tz->path, name);
	if (!f)
		return 0;
	err = symmap_read(
	    f, tz->map_bytes < tz->map_max ? tz->map_max - tz->map_bytes : 0, &m);
	fclose(f);
	if (err == -EFBIG) {
		/* too big to hold: what the profile needs of it */
		err = load_filtered(tz, name, base, &m);
		if (err && err != -ENOMEM) {
			pr_warn("%s: the map '%s' holds more than heapscope keeps of "
				"maps (%" PRIu64 " KiB in all; HEAPSCOPE_MAP_MAX sets "
				"it), and reading what the profile needs of it failed "
				"(%s): it is left out, and the frames it would name "
				"stay unknown",
				tz->path, name, tz->map_max >> 10, strerror(-err));
			return 0;
		}
	}
	if (err)
		return err;
	tz->map_bytes += symmap_bytes(m);
	tz->map[*id] = m;
	return 0;
}

/* load_map() of "@stem@sep@guid.map" */
static int load_guid_map(struct tz *tz, const char *stem, size_t stem_len,
			 const char *sep, const char *guid, size_t guid_len,
			 uint64_t base, uint32_t *id)
{
	hs_buf_reset(&tz->key);
	if (hs_buf_add(&tz->key, stem, stem_len) || hs_buf_adds(&tz->key, sep) ||
	    hs_buf_add(&tz->key, guid, guid_len) || hs_buf_adds(&tz->key, ".map"))
		return -ENOMEM;
	return load_map(tz, tz->key.s, base, id);
}

/* Per-pid state, created on first use. */
static int get_pid(struct tz *tz, uint32_t pid, struct tz_pid **out)
{
	size_t before = hs_strtab_count(&tz->pids);
	uint32_t id;

	hs_buf_reset(&tz->key);
	if (hs_buf_addf(&tz->key, "%u", pid) ||
	    hs_strtab_intern(&tz->pids, tz->key.s, tz->key.len, &id))
		return -ENOMEM;
	if (id >= before) {
		int err;

		if (HS_GROW(tz->pid, (size_t)id + 1, tz->alloc_pid))
			return -ENOMEM;
		tz->pid[id].perfinfo_read = 0;
		hs_buf_reset(&tz->key);
		if (hs_buf_addf(&tz->key, "perf-%u.map", pid))
			return -ENOMEM;
		err = load_map(tz, tz->key.s, 0, &tz->pid[id].perf_map);
		if (err)
			return err;
	}
	*out = &tz->pid[id];
	return 0;
}

static const char *file_name(const char *p, const char *end)
{
	const char *s = end;

	while (s > p && s[-1] != '/' && s[-1] != '\\')
		s--;
	return s;
}

/* One "ImageLoad;/path/x.dll;{guid}[;hexBase]" line of perfinfo-<pid>.map. */
static int perfinfo_line(struct tz *tz, uint32_t pid, const char *p, const char *end)
{
	const char *path, *path_end, *guid, *guid_end, *name, *dot, *b;
	struct module_info mi = {0};
	uint32_t id;
	int err;

	if (end - p < 10 || memcmp(p, "ImageLoad;", 10))
		return 0;
	path = p + 10;
	path_end = memchr(path, ';', (size_t)(end - path));
	if (!path_end)
		return 0;
	guid = path_end + 1;
	guid_end = memchr(guid, ';', (size_t)(end - guid));
	if (!guid_end)
		guid_end = end;
	while (guid_end > guid && (guid_end[-1] == ' ' || guid_end[-1] == '\t'))
		guid_end--;
	if (guid_end < end) {
		b = skip_blank(guid_end + 1, end);
		if (b < end && *b != ';' && !parse_hex(&b, end, &mi.base))
			mi.has_base = 1;
	}
	name = file_name(path, path_end);
	/* the map: the module's name with its extension replaced by the guid */
	for (dot = path_end; dot > name && dot[-1] != '.'; dot--)
		;
	dot = dot > name ? dot - 1 : path_end;
	err =
	    load_guid_map(tz, name, (size_t)(dot - name), ".", guid,
			  (size_t)(guid_end - guid), mi.has_base ? mi.base : 0, &mi.map);
	if (err)
		return err;
	if (!tz->map[mi.map]) {
		/* older runtimes: x.ni.{guid}.map */
		err = load_guid_map(tz, name, (size_t)(dot - name), ".ni.", guid,
				    (size_t)(guid_end - guid), mi.has_base ? mi.base : 0,
				    &mi.map);
		if (err)
			return err;
	}
	hs_buf_reset(&tz->key);
	if (hs_buf_addf(&tz->key, "%u:", pid) ||
	    hs_buf_add(&tz->key, name, (size_t)(path_end - name)) ||
	    hs_strtab_intern(&tz->modules, tz->key.s, tz->key.len, &id) ||
	    HS_GROW(tz->module, (size_t)id + 1, tz->alloc_module))
		return -ENOMEM;
	tz->module[id] = mi; /* a later ImageLoad of the same name wins */
	return 0;
}

static int read_perfinfo(struct tz *tz, uint32_t pid)
{
	struct hs_linereader lr;
	char name[64], *line;
	size_t len;
	FILE *f;
	int ret;

	snprintf(name, sizeof(name), "perfinfo-%u.map", pid);
	f = hs_zip_open_named(tz->path, name);
	if (!f)
		return 0;
	ret = hs_linereader_init(&lr, f, MAP_MAX_LINE);
	while (!ret) {
		ret = hs_linereader_next(&lr, &line, &len);
		if (ret <= 0)
			break;
		ret = perfinfo_line(tz, pid, line, line + len);
	}
	if (ret == -E2BIG)
		ret = 0;
	hs_linereader_release(&lr);
	fclose(f);
	return ret < 0 ? ret : 0;
}

static int lookup(void *ctx, uint32_t pid, uint64_t addr, const char *module,
		  size_t module_len, const char **sym, size_t *sym_len,
		  const char **module_out, size_t *module_out_len)
{
	struct tz *tz = ctx;
	const struct sym_range *r = NULL;
	struct tz_pid *tp;
	uint32_t id;
	int err;

	err = get_pid(tz, pid, &tp);
	if (err)
		return err;
	if (module_len == 7 && !memcmp(module, "unknown", 7)) {
		/* JIT code: perf-<pid>.map */
		if (!tz->map[tp->perf_map])
			return 0;
		r = symmap_find(tz->map[tp->perf_map], addr);
		if (!r)
			return 0;
		*sym = tz->map[tp->perf_map]->text.s + r->sym;
		*sym_len = r->sym_len;
		hs_buf_reset(&tz->out);
		if (hs_buf_addf(&tz->out, "perf-%u.map", pid))
			return -ENOMEM;
		*module_out = tz->out.s;
		*module_out_len = tz->out.len;
		return 1;
	}
	if (!tp->perfinfo_read) {
		tp->perfinfo_read = 1;
		err = read_perfinfo(tz, pid);
		if (err)
			return err;
		err = get_pid(tz, pid, &tp); /* tz->pid may have moved */
		if (err)
			return err;
	}
	hs_buf_reset(&tz->key);
	if (hs_buf_addf(&tz->key, "%u:", pid) || hs_buf_add(&tz->key, module, module_len))
		return -ENOMEM;
	if (hs_strtab_find(&tz->modules, tz->key.s, tz->key.len, &id) == 0) {
		const struct module_info *mi = &tz->module[id];
		const struct symmap *m = tz->map[mi->map];

		if (m) {
			r = symmap_find(m, addr);
			if (!r && mi->has_base && addr >= mi->base)
				r = symmap_find(m, addr - mi->base);
		}
		if (r) {
			*sym = m->text.s + r->sym;
			*sym_len = r->sym_len;
			*module_out = module;
			*module_out_len = module_len;
			return 1;
		}
	}
	return 0;
}

static void tz_release(struct tz *tz)
{
	size_t i;

	for (i = 0; i < hs_strtab_count(&tz->maps); i++)
		symmap_free(tz->map[i]);
	hs_free(tz->map);
	hs_strtab_release(&tz->maps);
	hs_strtab_release(&tz->pids);
	hs_free(tz->pid);
	hs_strtab_release(&tz->modules);
	hs_free(tz->module);
	hs_buf_release(&tz->key);
	hs_buf_release(&tz->out);
	hs_free(tz->addrs);
}

int hs_import_trace_zip_view(const char *path, enum hs_perf_view view,
			     struct hs_stack_source *out, struct hs_diag *diag)
{
	struct tz tz = {.path = path,
			.map_max =
			    hs_env_size("HEAPSCOPE_MAP_MAX", HS_TRACE_ZIP_MAP_MAX)};
	struct hs__perf_symbols syms = {.lookup = lookup, .ctx = &tz};
	char *entry = NULL;
	FILE *f;
	int err;

	f = hs_zip_open_entry(path, ".data.txt", &entry, diag);
	if (!f)
		return -EINVAL;
	hs_strtab_init(&tz.pids, 0);
	hs_strtab_init(&tz.modules, 0);
	hs_strtab_init(&tz.maps, 0);
	hs_buf_init(&tz.key);
	hs_buf_init(&tz.out);
	err = hs__import_perf_script(f, view, out, diag, &syms);
	if (err && diag && diag->set) {
		char msg[sizeof(diag->msg) + 256];
		size_t n;

		snprintf(msg, sizeof(msg), "in '%.200s': %s", entry, diag->msg);
		n = strlen(msg);
		if (n >= sizeof(diag->msg))
			n = sizeof(diag->msg) - 1;
		memcpy(diag->msg, msg, n);
		diag->msg[n] = '\0';
	}
	tz_release(&tz);
	fclose(f);
	hs_free(entry);
	return err;
}

int hs_import_trace_zip(const char *path, struct hs_stack_source *out,
			struct hs_diag *diag)
{
	return hs_import_trace_zip_view(path, HS_PERF_CPU, out, diag);
}
