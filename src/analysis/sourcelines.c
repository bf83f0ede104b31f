/*
 * sourcelines - a function's cost per source line (see sourcelines.h).
 *
 * Per input stack (computed once, from its caller's result): the distinct
 * locations of the function's frames on it, and the location of the
 * innermost one. Per sample: one lookup, then its cost added to those
 * locations. Locations are then grouped by file.
 */
#include "analysis/sourcelines.h"
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/strtab.h"
#include "model/frame_name.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOT_YET UINT32_MAX
#define NO_LOC UINT32_MAX

/* @len bytes at @s without a trailing " (inline)". */
static size_t strip_inline(const char *s, size_t len)
{
	return hs_frame_name_strip_inline(s, len);
}

/* @n without trailing " [clone .xxx]" suffixes (GCC's copies of a function). */
static size_t strip_clones(const char *s, size_t n)
{
	while (n && s[n - 1] == ']') {
		size_t i = n - 1;

		while (i && s[i] != '[')
			i--;
		if (i < 1 || s[i - 1] != ' ' || strncmp(s + i, "[clone ", 7))
			break;
		n = i - 1;
	}
	return n;
}

/* Equal, a trailing " (inline)" and " [clone ...]" on either side ignored. */
static int same(const char *s, size_t len, const char *want)
{
	size_t n = strip_clones(s, strip_inline(s, len));
	size_t m = strip_clones(want, strip_inline(want, strlen(want)));

	return n == m && !memcmp(s, want, n);
}

/* The '!' that ends the module in @name, or NULL (frame_name.h). */
static const char *module_bang(const char *name)
{
	return hs_frame_name_bang(name, strlen(name));
}

/* Is the frame named @full the function @want? */
int hs_function_is(const char *full, const char *want)
{
	const char *disp = hs_frame_display(full), *bang = module_bang(full);
	size_t n = strlen(full);

	if (same(full, n, want) || same(disp, strlen(disp), want))
		return 1;
	return bang && same(bang + 1, n - (size_t)(bang + 1 - full), want);
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* Does @s[0..@n) end with an operator's name ("operator>>", "operator->")? */
static int ends_in_operator(const char *s, size_t n)
{
	size_t i = n;

	while (i && strchr("<>=-!+*/%^&|~,[]()", s[i - 1]))
		i--;
	return i < n && i >= 8 && !memcmp(s + i - 8, "operator", 8);
}

/*
 * The qualified name of function text @s (@n bytes, no module): without a
 * trailing " (inline)", clone suffixes, cv and ref qualifiers, parameters,
 * ABI tags, a return type and, unless @targs, the function's own template
 * arguments: "ns::fill" for "std::vector<long>* ns::fill<long>(int)"
 * ("ns::fill<long>" with @targs). Sets *@start and returns the length.
 */
static size_t qualified_name(const char *s, size_t n, int targs, size_t *start)
{
	static const char *const quals[] = {
	    " const", " volatile", " &&", " &", " noexcept",
	};
	size_t i, k, begin = 0;
	int depth = 0, again = 1;

	n = strip_clones(s, strip_inline(s, n));
	while (again) {
		again = 0;
		for (k = 0; k < sizeof(quals) / sizeof(quals[0]); k++)
			if (ends_with(s, n, quals[k])) {
				n -= strlen(quals[k]);
				again = 1;
			}
	}
	if (n && s[n - 1] == ')' && (i = hs_view_group_start(s, n, '(', ')')) < n &&
	    i > 0 && !ends_with(s, i, "operator"))
		n = i; /* the parameters, not "operator()" */
	while (n && s[n - 1] == ']' && (i = hs_view_group_start(s, n, '[', ']')) < n &&
	       !strncmp(s + i, "[abi:", 5))
		n = i; /* ABI tags */
	if (!targs && n && s[n - 1] == '>' && !ends_in_operator(s, n) &&
	    (i = hs_view_group_start(s, n, '<', '>')) < n && i > 0)
		n = i; /* its template arguments */
	while (n && s[n - 1] == ' ')
		n--;
	/* a return type ends at the last space outside brackets */
	for (i = 0; i < n; i++) {
		if (strchr("<([{", s[i]))
			depth++;
		else if (strchr(">)]}", s[i]) && depth > 0)
			depth--;
		else if (!depth && s[i] == ' ')
			begin = i + 1;
		else if (!depth && !strncmp(s + i, "operator", 8) &&
			 (!i || s[i - 1] == ':' || s[i - 1] == ' '))
			break; /* "operator new", "operator<" */
	}
	*start = begin;
	return n - begin;
}

/*
 * Is the frame named @full the function @want by its qualified name: is
 * @want's qualified name the frame's, or its last components ("fill" and
 * "ns::fill" for "ns::fill<long>(int)"; "fill<long>" when @want gives
 * template arguments)? A module before '!' in @want must be the frame's
 * (its path or its file name).
 */
int hs_function_named(const char *full, const char *want)
{
	const char *bang = module_bang(full), *fn = bang ? bang + 1 : full;
	const char *wbang = module_bang(want), *wfn = wbang ? wbang + 1 : want;
	size_t fs, ws, fl, wl = qualified_name(wfn, strlen(wfn), 1, &ws);
	int targs = wl && wfn[ws + wl - 1] == '>' && !ends_in_operator(wfn + ws, wl);

	fl = qualified_name(fn, strlen(fn), targs, &fs);
	if (!targs)
		wl = qualified_name(wfn, strlen(wfn), 0, &ws);

	if (wbang) {
		const char *disp = hs_frame_display(full);
		size_t ml = (size_t)(wbang - want);
		int path, file;

		if (!bang)
			return 0;
		path = (size_t)(bang - full) == ml && !memcmp(full, want, ml);
		file = (size_t)(bang - disp) == ml && !memcmp(disp, want, ml);
		if (!path && !file)
			return 0;
	}
	if (!wl || wl > fl || memcmp(fn + fs + fl - wl, wfn + ws, wl))
		return 0;
	return wl == fl || (fl - wl >= 2 && !memcmp(fn + fs + fl - wl - 2, "::", 2));
}

struct acc {
	double inc, inc_count, exc, exc_count;
};

struct work {
	const struct hs_stack_source *src;
	uint8_t *matched;    /* input frame -> the function's */
	uint32_t *first, *n; /* input stack -> its locations in @locs */
	uint32_t *inner;     /* input stack -> innermost location, NO_LOC */
	uint32_t *locs;
	size_t nr_locs, alloc_locs;
	uint32_t *path;
	size_t alloc_path;
};

/* Fill the memo of @stack (and of its callers not done yet). */
static int stack_locs(struct work *w, uint32_t stack)
{
	const struct hs_stack_source *src = w->src;
	size_t depth = 0;
	uint32_t s = stack;

	while (s != HS_NO_STACK && w->first[s] == NOT_YET) {
		if (HS_GROW(w->path, depth + 1, w->alloc_path))
			return -ENOMEM;
		w->path[depth++] = s;
		s = src->stack_caller[s];
	}
	while (depth-- > 0) {
		uint32_t c, cn = 0, cfirst = 0, loc, k;
		int add;

		s = w->path[depth];
		c = src->stack_caller[s];
		if (c != HS_NO_STACK) {
			cn = w->n[c];
			cfirst = w->first[c];
		}
		w->inner[s] = c != HS_NO_STACK ? w->inner[c] : NO_LOC;
		if (!w->matched[src->stack_frame[s]]) {
			w->first[s] = cfirst; /* the caller's list, shared */
			w->n[s] = cn;
			continue;
		}
		loc = hs_source_stack_loc(src, s);
		w->inner[s] = loc;
		add = 1;
		for (k = 0; k < cn; k++)
			if (w->locs[cfirst + k] == loc)
				add = 0;
		if (!add) {
			w->first[s] = cfirst;
			w->n[s] = cn;
			continue;
		}
		if (w->nr_locs + cn + 1 > UINT32_MAX ||
		    HS_GROW(w->locs, w->nr_locs + cn + 1, w->alloc_locs))
			return -ENOMEM;
		memcpy(w->locs + w->nr_locs, w->locs + cfirst, cn * sizeof(uint32_t));
		w->locs[w->nr_locs + cn] = loc;
		w->first[s] = (uint32_t)w->nr_locs;
		w->n[s] = cn + 1;
		w->nr_locs += cn + 1;
	}
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct hs_line_cost *x = a, *y = b;

	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_file(const void *a, const void *b)
{
	const struct hs_source_file *x = a, *y = b;

	if (x->inc != y->inc)
		return x->inc > y->inc ? -1 : 1;
	if (!x->path || !y->path)
		return !x->path - !y->path;
	return strcmp(x->path, y->path);
}

/* Group the locations' costs by file into @out. */
static int by_file(const struct hs_stack_source *src, const struct acc *acc,
		   struct hs_source_lines *out)
{
	size_t nr_files = hs_strtab_count(&src->files), f, l;
	uint32_t *file_of = hs_malloc((nr_files + 1) * sizeof(uint32_t));
	int err = 0;

	if (!file_of)
		return -ENOMEM;
	for (f = 0; f <= nr_files; f++)
		file_of[f] = NOT_YET;
	for (l = 0; l <= src->nr_locs && !err; l++) {
		const struct acc *a = &acc[l];
		struct hs_source_file *sf;
		struct hs_line_cost *lc;
		size_t k = l ? src->loc_file[l - 1] : nr_files; /* nr_files: none */

		if (a->inc_count == 0 && a->inc == 0)
			continue;
		if (file_of[k] == NOT_YET) {
			sf = hs_realloc(out->files, (out->nr_files + 1) * sizeof(*sf));
			if (!sf) {
				err = -ENOMEM;
				break;
			}
			out->files = sf;
			sf = &out->files[out->nr_files];
			memset(sf, 0, sizeof(*sf));
			if (l && !(sf->path = hs_strdup(
				       hs_strtab_get(&src->files, (uint32_t)k)))) {
				err = -ENOMEM;
				break;
			}
			file_of[k] = (uint32_t)out->nr_files++;
		}
		sf = &out->files[file_of[k]];
		lc = hs_realloc(sf->lines, (sf->nr + 1) * sizeof(*lc));
		if (!lc) {
			err = -ENOMEM;
			break;
		}
		sf->lines = lc;
		lc = &sf->lines[sf->nr++];
		lc->line = l ? src->loc_line[l - 1] : 0;
		lc->inc = a->inc;
		lc->inc_count = a->inc_count;
		lc->exc = a->exc;
		lc->exc_count = a->exc_count;
		if (a->inc > sf->inc)
			sf->inc = a->inc;
	}
	hs_free(file_of);
	if (err)
		return err;
	for (f = 0; f < out->nr_files; f++)
		if (out->files[f].nr > 1)
			qsort(out->files[f].lines, out->files[f].nr,
			      sizeof(struct hs_line_cost), cmp_line);
	if (out->nr_files > 1)
		qsort(out->files, out->nr_files, sizeof(*out->files), cmp_file);
	return 0;
}

/* Up to this many candidates are named when a name is ambiguous. */
#define MAX_SHOWN 8

/*
 * "'NAME' is ambiguous" with the functions @cands names (without module
 * and " (inline)"), as many as fit the message.
 */
static void ambiguous(struct hs_diag *diag, const char *function,
		      const struct hs_strtab *cands)
{
	size_t i, n = hs_strtab_count(cands);
	struct hs_buf b = HS_BUF_INIT;

	for (i = 0; i < n && i < MAX_SHOWN; i++) {
		const char *c = hs_strtab_get(cands, (uint32_t)i);

		if (i && b.len + strlen(c) > 360)
			break;
		hs_buf_addf(&b, "%s%s", i ? "; " : "", c);
	}
	if (i < n)
		hs_buf_addf(&b, "; and %zu more", n - i);
	hs_diag_set(diag, 0,
		    "'%s' is ambiguous, it names %zu functions: %s (give one as "
		    "shown)",
		    function, n, b.s ? b.s : "");
	hs_buf_release(&b);
}

/*
 * Mark the function's frames in @w->matched; their display names in @names
 * and @out. Frames that are the function by name (is_function()) first;
 * when none is, those that are it by qualified name (is_function_named()),
 * which must all be one function (in one module or several, as by name):
 * otherwise -EINVAL, the candidates named in @diag.
 */
static int match_frames(const struct hs_stack_source *src, const char *function,
			struct work *w, struct hs_strtab *names,
			struct hs_source_lines *out, struct hs_diag *diag)
{
	struct hs_strtab cands = HS_STRTAB_INIT((size_t)1 << 30);
	size_t cap = 0, k, nr = hs_source_nr_frames(src);
	int by_name, err = 0;
	uint32_t id;

	for (by_name = 0; by_name < 2 && !out->nr_names && !err; by_name++)
		for (k = 0; k < nr && !err; k++) {
			const char *full = hs_source_frame_name(src, (uint32_t)k), *disp;

			if (!(by_name ? hs_function_named : hs_function_is)(full,
									    function))
				continue;
			if (by_name) {
				/* the candidate: the function without module, inline or
				 * clone suffixes (in any module, as by name) */
				const char *bang = module_bang(full),
					   *fn = bang ? bang + 1 : full;
				size_t n = strip_clones(fn, strip_inline(fn, strlen(fn)));

				err = hs_strtab_intern(&cands, fn, n, &id);
				if (err)
					break;
			}
			w->matched[k] = 1;
			disp = hs_frame_display(full);
			if (!hs_strtab_find(names, disp, strlen(disp), &id))
				continue;
			err = hs_strtab_intern(names, disp, strlen(disp), &id);
			if (!err && HS_GROW(out->names, out->nr_names + 1, cap))
				err = -ENOMEM;
			if (!err && !(out->names[out->nr_names] = hs_strdup(disp)))
				err = -ENOMEM;
			if (!err)
				out->nr_names++;
		}
	if (!err && hs_strtab_count(&cands) > 1) {
		ambiguous(diag, function, &cands);
		err = -EINVAL;
	}
	hs_strtab_release(&cands);
	return err;
}

int hs_source_lines_filtered(const struct hs_filtered *f, const char *function,
			     struct hs_source_lines *out, struct hs_diag *diag)
{
	const struct hs_stack_source *src = f->in;
	struct hs_strtab names = HS_STRTAB_INIT((size_t)1 << 30);
	struct work w = {.src = src};
	struct acc *acc = NULL;
	uint8_t *out_match = NULL;
	size_t i, nr_out;
	int err = 0;

	memset(out, 0, sizeof(*out));
	w.matched = hs_calloc(hs_source_nr_frames(src) + 1, 1);
	if (!w.matched) {
		err = -ENOMEM;
		goto out;
	}
	err = match_frames(src, function, &w, &names, out, diag);
	if (err)
		goto out;
	if (!out->nr_names) {
		hs_diag_set(diag, 0, "no frame is the function '%s'", function);
		err = -ENOENT;
		goto out;
	}
	if (!src->stack_loc) {
		hs_diag_set(diag, 0,
			    "no source lines: the file has no line information "
			    "(a heapscope trace made with symbols has them)");
		err = -ENODATA;
		goto out;
	}
	nr_out = hs_source_nr_frames(&f->out);
	out_match = hs_calloc(nr_out + 1, 1);
	acc = hs_calloc(src->nr_locs + 1, sizeof(*acc));
	w.first = hs_malloc((src->nr_stacks + 1) * sizeof(uint32_t));
	w.n = hs_malloc((src->nr_stacks + 1) * sizeof(uint32_t));
	w.inner = hs_malloc((src->nr_stacks + 1) * sizeof(uint32_t));
	if (!out_match || !acc || !w.first || !w.n || !w.inner) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr_out; i++) {
		const char *name = hs_source_frame_name(&f->out, (uint32_t)i);
		uint32_t id;

		out_match[i] = !hs_strtab_find(&names, name, strlen(name), &id);
	}
	for (i = 0; i < src->nr_stacks; i++)
		w.first[i] = NOT_YET;
	for (i = 0; i < src->nr_samples && !err; i++) {
		uint32_t in = src->stack[i], os, k;
		double m, c;

		if (!hs_filtered_sample(f, i, &os, &m, &c))
			continue;
		out->total += m;
		if (in == HS_NO_STACK)
			continue;
		if (w.first[in] == NOT_YET && (err = stack_locs(&w, in)))
			break;
		if (!w.n[in])
			continue;
		out->inc += m;
		out->inc_count += c;
		for (k = 0; k < w.n[in]; k++) {
			struct acc *a = &acc[w.locs[w.first[in] + k]];

			a->inc += m;
			a->inc_count += c;
		}
		if (os != HS_NO_STACK && out_match[f->out.stack_frame[os]] &&
		    w.inner[in] != NO_LOC) {
			acc[w.inner[in]].exc += m;
			acc[w.inner[in]].exc_count += c;
			out->exc += m;
			out->exc_count += c;
		}
	}
	if (!err)
		err = by_file(src, acc, out);
out:
	if (err == -ENOMEM)
		hs_diag_set(diag, 0, "out of memory");
	hs_strtab_release(&names);
	hs_free(w.matched);
	hs_free(w.first);
	hs_free(w.n);
	hs_free(w.inner);
	hs_free(w.locs);
	hs_free(w.path);
	hs_free(acc);
	hs_free(out_match);
	if (err)
		hs_source_lines_release(out);
	return err;
}

int hs_source_lines_build(const struct hs_stack_source *src,
			  const struct hs_filter_params *p, const char *function,
			  struct hs_source_lines *out, struct hs_diag *diag)
{
	struct hs_filtered f;
	int err;

	memset(out, 0, sizeof(*out));
	err = hs_filter_apply(src, p, &f, diag);
	if (err == -ENOMEM)
		hs_diag_set(diag, 0, "out of memory");
	if (err)
		return err;
	err = hs_source_lines_filtered(&f, function, out, diag);
	hs_filtered_release(&f);
	return err;
}

void hs_source_lines_release(struct hs_source_lines *sl)
{
	size_t i;

	for (i = 0; i < sl->nr_names; i++)
		hs_free(sl->names[i]);
	hs_free(sl->names);
	for (i = 0; i < sl->nr_files; i++) {
		hs_free(sl->files[i].path);
		hs_free(sl->files[i].lines);
	}
	hs_free(sl->files);
	memset(sl, 0, sizeof(*sl));
}

/* --- source text ------------------------------------------------------------ */

static int read_file(const char *path, size_t max_bytes, struct hs_source_text *out)
{
	struct stat sb;
	size_t done = 0, n;
	char *p, *end;
	/* O_NONBLOCK: opening a FIFO does not wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if ((uint64_t)sb.st_size > max_bytes) {
		close(fd);
		return -EFBIG;
	}
	n = (size_t)sb.st_size;
	out->data = hs_malloc(n + 1);
	if (!out->data) {
		close(fd);
		return -ENOMEM;
	}
	while (done < n) {
		ssize_t k = read(fd, out->data + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			err = k < 0 ? -errno : 0;
			break;
		}
		done += (size_t)k;
	}
	close(fd);
	if (err)
		return err;
	out->data[done] = '\0';
	/* one pointer per line; '\n' and a '\r' before it become NULs */
	out->line = hs_malloc((done + 2) * sizeof(char *));
	if (!out->line)
		return -ENOMEM;
	for (p = out->data, end = out->data + done; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;

		if (e > p && e[-1] == '\r')
			e[-1] = '\0';
		*e = '\0';
		out->line[out->nr++] = p;
		p = e + 1;
	}
	out->path = hs_strdup(path);
	return out->path ? 0 : -ENOMEM;
}

int hs_source_text_load(const char *path, const char *const *dirs, size_t nr_dirs,
			size_t max_bytes, struct hs_source_text *out)
{
	size_t d;
	int err;

	memset(out, 0, sizeof(*out));
	err = read_file(path, max_bytes, out);
	if (err != -ENOENT && err != -ENOTDIR && err != -EACCES)
		goto done;
	hs_source_text_release(out);
	for (d = 0; d < nr_dirs; d++) {
		const char *p = path;

		while (*p == '/')
			p++;
		for (;;) {
			size_t n = strlen(dirs[d]) + strlen(p) + 2;
			char *try = hs_malloc(n);
			const char *slash;

			if (!try)
				return -ENOMEM;
			snprintf(try, n, "%s/%s", dirs[d], p);
			err = read_file(try, max_bytes, out);
			hs_free(try);
			if (err != -ENOENT && err != -ENOTDIR && err != -EACCES)
				goto done;
			hs_source_text_release(out);
			slash = strchr(p, '/');
			if (!slash)
				break;
			p = slash + 1;
		}
	}
	err = -ENOENT;
done:
	if (err)
		hs_source_text_release(out);
	return err;
}

void hs_source_text_release(struct hs_source_text *t)
{
	hs_free(t->path);
	hs_free(t->data);
	hs_free(t->line);
	memset(t, 0, sizeof(*t));
}

/* --- JSON ------------------------------------------------------------------- */

static json_t *num(double x)
{
	return json_real(x == 0 ? 0 : x);
}

/* All the lines of @t, as a JSON array of strings. */
static json_t *text_json(const struct hs_source_text *t)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < t->nr; i++)
		if (json_array_append_new(a, hs_view_json_text(t->line[i]))) {
			json_decref(a);
			a = NULL;
		}
	return a;
}

json_t *hs_source_lines_json(const struct hs_source_lines *sl,
			     const struct hs_source_text *const *texts, unsigned flags)
{
	json_t *o = json_object(), *names = json_array(), *files = json_array();
	size_t i, k;
	int err = !o || !names || !files;

	for (i = 0; !err && i < sl->nr_names; i++)
		err = json_array_append_new(names, hs_view_json_text(sl->names[i]));
	for (i = 0; !err && i < sl->nr_files; i++) {
		const struct hs_source_file *f = &sl->files[i];
		const struct hs_source_text *t = texts ? texts[i] : NULL;
		json_t *fo, *lines = json_array();

		fo = json_pack("{s:o, s:o, s:b, s:o}", "path", hs_view_json_text(f->path),
			       "read_from", hs_view_json_text(t ? t->path : NULL),
			       "found", t != NULL, "lines", lines);
		err = !fo || json_array_append_new(files, fo);
		if (!err && t && (flags & HS_SOURCE_JSON_WHOLE_TEXT))
			err = json_object_set_new(fo, "text", text_json(t));
		for (k = 0; !err && k < f->nr; k++) {
			const struct hs_line_cost *l = &f->lines[k];
			json_t *lo = json_pack(
			    "{s:I, s:o, s:o, s:o, s:o}", "line", (json_int_t)l->line,
			    "inc", num(l->inc), "inc_count", num(l->inc_count), "exc",
			    num(l->exc), "exc_count", num(l->exc_count));

			if (lo && t && l->line && l->line <= t->nr)
				err = json_object_set_new(
				    lo, "text", hs_view_json_text(t->line[l->line - 1]));
			err = err || !lo || json_array_append_new(lines, lo);
		}
	}
	if (!err)
		err = json_object_set_new(o, "names", names) ||
		      json_object_set_new(o, "inc", num(sl->inc)) ||
		      json_object_set_new(o, "inc_count", num(sl->inc_count)) ||
		      json_object_set_new(o, "exc", num(sl->exc)) ||
		      json_object_set_new(o, "exc_count", num(sl->exc_count)) ||
		      json_object_set_new(o, "total", num(sl->total)) ||
		      json_object_set_new(o, "files", files);
	else {
		json_decref(names);
		json_decref(files);
	}
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}
