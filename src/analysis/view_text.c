/*
 * view_text - a view as aligned text, CSV or folded stacks (see views.h).
 */
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/escape.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static int row_empty(const struct hs_view_row *r)
{
	return r->first > r->last;
}

/* A number with @dec decimals; integral columns print with none. */
static int add_num(struct hs_buf *b, double x, int dec)
{
	if (x == 0)
		x = 0; /* no "-0" */
	return hs_buf_addf(b, "%.*f", dec, x);
}

/* The shortest "%g" form that reads back as @x (for CSV). */
static int add_exact(struct hs_buf *b, double x)
{
	char tmp[64];
	int prec;

	if (x == 0)
		x = 0;
	for (prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	return hs_buf_adds(b, tmp);
}

/* Text ------------------------------------------------------------------- */

enum col {
	C_NAME,
	C_EXC_PCT,
	C_EXC,
	C_EXC_CT,
	C_INC_PCT,
	C_INC,
	C_INC_CT,
	C_FOLD,
	C_WHEN,
	C_FIRST,
	C_LAST,
	C__COUNT
};
static const char *const col_title[C__COUNT] = {
    "Name",   "Exc %", "Exc",  "Exc Ct", "Inc %", "Inc",
    "Inc Ct", "Fold",  "When", "First",	 "Last",
};

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */
#define MIN_NAME_WIDTH 16

/* Characters (UTF-8 code points) in @s. */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Whether the '<' at @s[@i] is part of an operator's name ("operator<<"). */
static int operator_bracket(const char *s, size_t i)
{
	size_t start = i;

	while (start && s[start - 1] == '<')
		start--;
	/* "operator<" and "operator<<" name at most two */
	return i - start < 2 && start >= 8 && !memcmp(s + start - 8, "operator", 8);
}

int hs_view_short_templates(struct hs_buf *b, const char *name, size_t len)
{
	size_t i = 0;
	int err = 0;

	while (i < len && !err) {
		size_t j, depth, parens;

		if (name[i] != '<' || operator_bracket(name, i)) {
			err = hs_buf_addc(b, name[i++]);
			continue;
		}
		/* find the matching '>'; brackets inside parentheses are not
		 * the template's ("f<(a<b)>") */
		for (j = i + 1, depth = 1, parens = 0; j < len && depth; j++) {
			if (name[j] == '(')
				parens++;
			else if (name[j] == ')' && parens)
				parens--;
			else if (parens)
				continue;
			else if (name[j] == '<' && !operator_bracket(name, j))
				depth++;
			else if (name[j] == '>' && !(j && name[j - 1] == '-'))
				depth--;
		}
		if (depth) { /* unbalanced: the rest as it is */
			err = hs_buf_add(b, name + i, len - i);
			break;
		}
		err = hs_buf_adds(b, "<" ELLIPSIS ">");
		i = j;
	}
	return err;
}

/*
 * Cut the text of @b from byte @start on to @max characters, the last one
 * "…" (a UTF-8 sequence is never split).
 */
static int cut_tail(struct hs_buf *b, size_t start, size_t max)
{
	size_t i = start, chars = 0;

	if (text_width(b->s + start) <= max)
		return 0;
	while (b->s[i] && chars < max - 1) {
		i++;
		while (((unsigned char)b->s[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	b->len = i;
	b->s[i] = '\0';
	return hs_buf_adds(b, ELLIPSIS);
}

static int integral(double x)
{
	return x == floor(x) && fabs(x) < 1e15;
}

/* Decimals for a column: none when every value is whole, else one. */
static int column_decimals(const struct hs_view *v, size_t off)
{
	size_t i;

	for (i = 0; i < v->nr_rows; i++)
		if (!integral(*(const double *)((const char *)&v->rows[i] + off)))
			return 1;
	return 0;
}

/*
 * Deep trees. Indenting every row by its depth made a 100,000-frame stack
 * cost time and memory quadratic in its depth (5.2 GB, killed after 30 s),
 * and padding every name to the widest one does the same for one long
 * name. So a name is indented at most HS_VIEW_TEXT_MAX_INDENT levels, a
 * deeper row says its depth in brackets ("[1234] name"), and the Name
 * column is at most HS_VIEW_TEXT_MAX_NAME_WIDTH wide: a longer name pushes
 * the rest of its line to the right. Rows are formatted twice (once for
 * the widths, once to print), one at a time: memory does not grow with
 * the rows.
 */
struct text_layout {
	const struct hs_text_opts *o;
	int dec_exc, dec_exc_ct, dec_inc, dec_inc_ct, dec_fold;
	size_t width[C__COUNT]; /* in characters (UTF-8 code points) */
	size_t name_max;	/* names cut to this many characters; 0: not cut */
};

/*
 * One row's cells, NUL-separated in @b, starting at @at[c]; @name is
 * scratch for a name with its template arguments shortened.
 */
struct text_row {
	struct hs_buf b;
	struct hs_buf name;
	size_t at[C__COUNT];
};

static int text_row_titles(struct text_row *t)
{
	size_t c;
	int err = 0;

	hs_buf_reset(&t->b);
	for (c = 0; c < C__COUNT && !err; c++) {
		t->at[c] = t->b.len;
		err = hs_buf_add(&t->b, col_title[c], strlen(col_title[c]) + 1);
	}
	return err;
}

/*
 * The Name cell as it prints: indentation, the name (its template
 * arguments shortened when asked), control characters escaped, then cut
 * to the layout's @name_max when --width set one.
 */
static int add_name_cell(struct text_row *t, const struct text_layout *lay,
			 const struct hs_view_row *r)
{
	unsigned d, shown = r->depth < HS_VIEW_TEXT_MAX_INDENT ? r->depth
							       : HS_VIEW_TEXT_MAX_INDENT;
	struct hs_buf *b = &t->b;
	size_t start = b->len;
	int err = 0;

	for (d = 0; d < shown && !err; d++)
		err = hs_buf_adds(b, "  ");
	if (!err && r->depth > HS_VIEW_TEXT_MAX_INDENT)
		err = hs_buf_addf(b, "[%u] ", r->depth);
	if (!err && lay->o->short_templates) {
		hs_buf_reset(&t->name);
		err = hs_view_short_templates(&t->name, r->name,
					      hs_view_display_len(r->name));
		if (!err)
			err = hs_escape_add(b, t->name.s ? t->name.s : "", t->name.len);
	} else if (!err) {
		err = hs_escape_add(b, r->name, hs_view_display_len(r->name));
	}
	if (!err && lay->name_max)
		err = cut_tail(b, start, lay->name_max);
	return err;
}

static int text_row_fill(struct text_row *t, const struct hs_view *v,
			 const struct text_layout *lay, const struct hs_view_row *r)
{
	size_t c;
	int err = 0;

	hs_buf_reset(&t->b);
	for (c = 0; c < C__COUNT && !err; c++) {
		t->at[c] = t->b.len;
		switch (c) {
		case C_NAME:
			err = add_name_cell(t, lay, r);
			break;
		case C_EXC_PCT:
			err = add_num(&t->b, hs_view_pct(v, r->exc), 1);
			break;
		case C_EXC:
			err = add_num(&t->b, r->exc, lay->dec_exc);
			break;
		case C_EXC_CT:
			err = add_num(&t->b, r->exc_count, lay->dec_exc_ct);
			break;
		case C_INC_PCT:
			err = add_num(&t->b, hs_view_pct(v, r->inc), 1);
			break;
		case C_INC:
			err = add_num(&t->b, r->inc, lay->dec_inc);
			break;
		case C_INC_CT:
			err = add_num(&t->b, r->inc_count, lay->dec_inc_ct);
			break;
		case C_FOLD:
			err = add_num(&t->b, r->fold, lay->dec_fold);
			break;
		case C_WHEN:
			err = hs_buf_adds(&t->b, r->when);
			break;
		case C_FIRST:
			err = row_empty(r) ? hs_buf_adds(&t->b, "-")
					   : hs_buf_addf(&t->b, "%.3f", ms(r->first));
			break;
		case C_LAST:
			err = row_empty(r) ? hs_buf_adds(&t->b, "-")
					   : hs_buf_addf(&t->b, "%.3f", ms(r->last));
			break;
		}
		if (!err)
			err = hs_buf_addc(&t->b, '\0');
	}
	return err;
}

static void text_row_widen(const struct text_row *t, struct text_layout *lay)
{
	size_t c;

	for (c = 0; c < C__COUNT; c++) {
		size_t len = text_width(t->b.s + t->at[c]);

		if (c == C_NAME && len > HS_VIEW_TEXT_MAX_NAME_WIDTH)
			len = HS_VIEW_TEXT_MAX_NAME_WIDTH;
		if (len > lay->width[c])
			lay->width[c] = len;
	}
}

static int text_layout_init(struct text_layout *lay, const struct hs_view *v,
			    const struct hs_text_opts *o, struct text_row *t)
{
	size_t i;
	int err;

	memset(lay, 0, sizeof(*lay));
	lay->o = o;
	lay->dec_exc = column_decimals(v, offsetof(struct hs_view_row, exc));
	lay->dec_exc_ct = column_decimals(v, offsetof(struct hs_view_row, exc_count));
	lay->dec_inc = column_decimals(v, offsetof(struct hs_view_row, inc));
	lay->dec_inc_ct = column_decimals(v, offsetof(struct hs_view_row, inc_count));
	lay->dec_fold = column_decimals(v, offsetof(struct hs_view_row, fold));
	err = text_row_titles(t);
	if (!err)
		text_row_widen(t, lay);
	for (i = 0; i < v->nr_rows && !err; i++) {
		err = text_row_fill(t, v, lay, &v->rows[i]);
		if (!err)
			text_row_widen(t, lay);
	}
	if (!err && o->width) {
		/* the other columns and their two-blank gaps take the rest */
		size_t others = 0, c, max;

		for (c = 1; c < C__COUNT; c++)
			others += 2 + lay->width[c];
		max = o->width > others + MIN_NAME_WIDTH ? o->width - others
							 : MIN_NAME_WIDTH;
		if (lay->width[C_NAME] > max) {
			lay->width[C_NAME] = max;
			lay->name_max = max;
		}
	}
	return err;
}

static void text_row_print(const struct text_row *t, const struct text_layout *lay,
			   FILE *f)
{
	size_t c;

	for (c = 0; c < C__COUNT; c++) {
		const char *s = t->b.s + t->at[c];
		int w = (int)lay->width[c];

		if (c == C_NAME) { /* padded by characters: names may hold "…" */
			size_t chars = text_width(s);

			fprintf(f, "%s%*s", s,
				chars < lay->width[c] ? (int)(lay->width[c] - chars) : 0,
				"");
		} else if (c == C_WHEN)
			fprintf(f, "  %-*s", w, s);
		else if (c == C_LAST)
			fprintf(f, "  %*s\n", w, s);
		else
			fprintf(f, "  %*s", w, s);
	}
}

static void summary_text(const struct hs_view *v, FILE *f)
{
	const struct hs_view_summary *s = &v->sum;
	struct hs_buf b = HS_BUF_INIT;

	add_num(&b, s->metric, integral(s->metric) ? 0 : 3);
	fprintf(f, "Totals Metric: %s%s", b.s, s->unit ? " " : "");
	if (s->unit)
		hs_escape_write(f, s->unit, strlen(s->unit));
	hs_buf_reset(&b);
	add_num(&b, s->count, integral(s->count) ? 0 : 3);
	fprintf(f,
		"  Count: %s  Samples: %zu  First: %.3f  Last: %.3f  Last-First: %.3f"
		"  Metric/Interval: %.2f  TimeBucket: %.3f\n",
		b.s, s->samples, ms(s->first), ms(s->last), ms(s->last - s->first),
		s->metric_per_interval, s->bucket_ms);
	hs_buf_release(&b);
}

int hs_view_write_text(const struct hs_view *v, FILE *f)
{
	static const struct hs_text_opts plain;

	return hs_view_write_text_opts(v, &plain, f);
}

int hs_view_write_text_opts(const struct hs_view *v, const struct hs_text_opts *o,
			    FILE *f)
{
	enum hs_row_section section = HS_ROW_PLAIN;
	struct text_row t = {.b = HS_BUF_INIT, .name = HS_BUF_INIT};
	struct text_layout lay;
	size_t i;
	int err;

	if (v->kind == HS_VIEW_FLAME)
		return hs_view_write_folded(v, f);
	err = text_layout_init(&lay, v, o, &t);
	if (!err)
		err = text_row_titles(&t);
	if (err) {
		hs_buf_release(&t.b);
		hs_buf_release(&t.name);
		return err;
	}
	summary_text(v, f);
	if (v->focus) {
		fputs("Focus: ", f);
		hs_escape_write(f, v->focus, strlen(v->focus));
		fputc('\n', f);
	}
	fputc('\n', f);
	text_row_print(&t, &lay, f);
	for (i = 0; i < v->nr_rows && !err && !ferror(f); i++) {
		if (v->rows[i].section != section) {
			section = v->rows[i].section;
			fprintf(f, "%s\n",
				section == HS_ROW_CALLER  ? "Callers:"
				: section == HS_ROW_FOCUS ? "Focus:"
							  : "Callees:");
		}
		err = text_row_fill(&t, v, &lay, &v->rows[i]);
		if (!err)
			text_row_print(&t, &lay, f);
	}
	hs_buf_release(&t.b);
	hs_buf_release(&t.name);
	if (err)
		return err;
	if (v->nr_rows < v->nr_total)
		fprintf(f, "(%zu of %zu rows shown)\n", v->nr_rows, v->nr_total);
	return ferror(f) ? -EIO : 0;
}

/* CSV -------------------------------------------------------------------- */

/* A name, control characters escaped (so no line breaks), then quoted. */
static int csv_field(struct hs_buf *b, const char *s, size_t len)
{
	size_t i, start = b->len;
	int err = hs_escape_add(b, s, len);
	char *copy;

	if (err || (!memchr(b->s + start, ',', b->len - start) &&
		    !memchr(b->s + start, '"', b->len - start)))
		return err;
	copy = hs_strdup(b->s + start);
	if (!copy)
		return -ENOMEM;
	b->len = start;
	b->s[start] = '\0';
	err = hs_buf_addc(b, '"');
	for (i = 0; copy[i] && !err; i++)
		err = copy[i] == '"' ? hs_buf_adds(b, "\"\"") : hs_buf_addc(b, copy[i]);
	hs_free(copy);
	return err ? err : hs_buf_addc(b, '"');
}

static int csv_row(struct hs_buf *b, const struct hs_view *v, const struct hs_view_row *r)
{
	static const char *const section_name[] = {"", "caller", "focus", "callee"};
	int err = 0;

	if (hs_view_kind_is_tree(v->kind))
		err = hs_buf_addf(b, "%u,", r->depth);
	else if (v->kind == HS_VIEW_CALLER_CALLEE)
		err = hs_buf_addf(b, "%s,", section_name[r->section]);
	if (!err)
		err = csv_field(b, r->name, hs_view_display_len(r->name));
	if (v->kind == HS_VIEW_FLAME) {
		const double cols[] = {r->x, r->width, r->inc, r->exc};
		size_t i;

		for (i = 0; i < 4 && !err; i++)
			if (!(err = hs_buf_addc(b, ',')))
				err = add_exact(b, cols[i]);
		return err ? err : hs_buf_addc(b, '\n');
	}
	{
		const double cols[] = {
		    hs_view_pct(v, r->exc),
		    r->exc,
		    r->exc_count,
		    hs_view_pct(v, r->inc),
		    r->inc,
		    r->inc_count,
		    r->fold,
		    r->fold_count,
		    r->inc_count != 0 ? r->inc / r->inc_count : 0,
		};
		size_t i;

		for (i = 0; i < sizeof(cols) / sizeof(cols[0]) && !err; i++)
			if (!(err = hs_buf_addc(b, ',')))
				err = add_exact(b, cols[i]);
	}
	if (!err)
		err = hs_buf_addf(b, ",%s,", r->when);
	if (!err && !row_empty(r))
		err = hs_buf_addf(b, "%.6f,%.6f", ms(r->first), ms(r->last));
	else if (!err)
		err = hs_buf_addc(b, ',');
	return err ? err : hs_buf_addc(b, '\n');
}

int hs_view_write_csv(const struct hs_view *v, FILE *f)
{
	struct hs_buf b = HS_BUF_INIT;
	size_t i;
	int err = 0;

	if (hs_view_kind_is_tree(v->kind))
		fputs("Depth,", f);
	else if (v->kind == HS_VIEW_CALLER_CALLEE)
		fputs("Section,", f);
	if (v->kind == HS_VIEW_FLAME)
		fputs("Name,X,Width,Inc,Exc\n", f);
	else
		fputs("Name,Exc %,Exc,Exc Ct,Inc %,Inc,Inc Ct,Fold,Fold Ct,Inc Avg,When,"
		      "First,Last\n",
		      f);
	for (i = 0; i < v->nr_rows && !err; i++) {
		hs_buf_reset(&b);
		err = csv_row(&b, v, &v->rows[i]);
		if (!err)
			fwrite(b.s, 1, b.len, f);
	}
	hs_buf_release(&b);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

/* Folded stacks ------------------------------------------------------------ */

/*
 * One line per row: its path from the tree's first level (ROOT itself is
 * left out; cost charged to ROOT prints as "ROOT"), ';' in names replaced
 * by ':', then the cost not shown in a child row (its exclusive cost plus
 * the children --limit or --depth left out), when not zero.
 */
int hs_view_write_folded(const struct hs_view *v, FILE *f)
{
	double *rest = hs_malloc((v->nr_rows + 1) * sizeof(*rest));
	uint32_t *path = hs_malloc((v->nr_rows + 1) * sizeof(*path));
	struct hs_buf b = HS_BUF_INIT;
	size_t i;
	int err = 0;

	if (!rest || !path) {
		hs_free(rest);
		hs_free(path);
		return -ENOMEM;
	}
	for (i = 0; i < v->nr_rows; i++)
		rest[i] = v->rows[i].inc;
	for (i = 0; i < v->nr_rows; i++)
		if (v->rows[i].parent != HS_NO_NODE)
			rest[v->rows[i].parent] -= v->rows[i].inc;
	for (i = 0; i < v->nr_rows && !err; i++) {
		size_t n = 0, k;
		uint32_t x;

		if (rest[i] == 0 ||
		    fabs(rest[i]) < 1e-9 * (fabs(v->rows[i].inc) + 1e-300))
			continue;
		for (x = (uint32_t)i; v->rows[x].parent != HS_NO_NODE;
		     x = v->rows[x].parent)
			path[n++] = x;
		hs_buf_reset(&b);
		if (!n)
			err = hs_escape_add(&b, v->rows[i].name, strlen(v->rows[i].name));
		for (k = n; k-- > 0 && !err;) {
			size_t start = b.len, j;

			err = hs_escape_add(&b, v->rows[path[k]].name,
					    strlen(v->rows[path[k]].name));
			for (j = start; j < b.len; j++)
				if (b.s[j] == ';')
					b.s[j] = ':';
			if (k && !err)
				err = hs_buf_addc(&b, ';');
		}
		if (!err)
			err = hs_buf_addc(&b, ' ');
		if (!err)
			err = add_exact(&b, rest[i]);
		if (!err)
			err = hs_buf_addc(&b, '\n');
		if (!err)
			fwrite(b.s, 1, b.len, f);
	}
	hs_buf_release(&b);
	hs_free(rest);
	hs_free(path);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}
