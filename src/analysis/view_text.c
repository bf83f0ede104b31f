/*
 * view_text - a view as aligned text, CSV or folded stacks (see views.h).
 */
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double pct(const struct hs_view *v, double x)
{
	double r;

	if (!(v->basis > 0))
		return 0;
	r = 100 * x / v->basis;
	return isfinite(r) ? r : x / v->basis * 100;	/* 100 * x overflowed */
}

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
		x = 0;	/* no "-0" */
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
	C_NAME, C_EXC_PCT, C_EXC, C_EXC_CT, C_INC_PCT, C_INC, C_INC_CT, C_FOLD,
	C_WHEN, C_FIRST, C_LAST, C__COUNT
};
static const char *const col_title[C__COUNT] = {
	"Name", "Exc %", "Exc", "Exc Ct", "Inc %", "Inc", "Inc Ct", "Fold",
	"When", "First", "Last",
};

struct table {
	char **cell;		/* (nr_rows + 1) * C__COUNT; row 0 = titles */
	size_t nr_rows;
	size_t width[C__COUNT];	/* in characters (UTF-8 code points) */
};

#define ELLIPSIS "\xe2\x80\xa6"	/* U+2026, one column */
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
		if (depth) {	/* unbalanced: the rest as it is */
			err = hs_buf_add(b, name + i, len - i);
			break;
		}
		err = hs_buf_adds(b, "<" ELLIPSIS ">");
		i = j;
	}
	return err;
}

/* Cut @s (owned, reallocated) to @max characters, the last one "…". */
static int cut_name(char **s, size_t max)
{
	size_t i = 0, chars = 0;
	char *cut;

	if (text_width(*s) <= max)
		return 0;
	while ((*s)[i] && chars < max - 1) {
		i++;
		while (((unsigned char)(*s)[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	cut = hs_malloc(i + sizeof(ELLIPSIS));
	if (!cut)
		return -ENOMEM;
	memcpy(cut, *s, i);
	memcpy(cut + i, ELLIPSIS, sizeof(ELLIPSIS));
	hs_free(*s);
	*s = cut;
	return 0;
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

static void table_free(struct table *t)
{
	size_t i;

	if (t->cell)
		for (i = 0; i < (t->nr_rows + 1) * C__COUNT; i++)
			hs_free(t->cell[i]);
	hs_free(t->cell);
}

static int table_build(struct table *t, const struct hs_view *v,
		       const struct hs_text_opts *o)
{
	int dec_exc = column_decimals(v, offsetof(struct hs_view_row, exc));
	int dec_exc_ct = column_decimals(v, offsetof(struct hs_view_row, exc_count));
	int dec_inc = column_decimals(v, offsetof(struct hs_view_row, inc));
	int dec_inc_ct = column_decimals(v, offsetof(struct hs_view_row, inc_count));
	int dec_fold = column_decimals(v, offsetof(struct hs_view_row, fold));
	struct hs_buf b = HS_BUF_INIT;
	size_t i, c;
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->nr_rows = v->nr_rows;
	t->cell = hs_calloc((v->nr_rows + 1) * C__COUNT, sizeof(*t->cell));
	if (!t->cell)
		return -ENOMEM;
	for (c = 0; c < C__COUNT; c++) {
		t->cell[c] = hs_strdup(col_title[c]);
		if (!t->cell[c])
			return -ENOMEM;
	}
	for (i = 0; i < v->nr_rows && !err; i++) {
		const struct hs_view_row *r = &v->rows[i];
		char **row = &t->cell[(i + 1) * C__COUNT];
		unsigned d;

		for (c = 0; c < C__COUNT && !err; c++) {
			hs_buf_reset(&b);
			switch (c) {
			case C_NAME:
				for (d = 0; d < r->depth && !err; d++)
					err = hs_buf_adds(&b, "  ");
				if (!err && o->short_templates)
					err = hs_view_short_templates(&b, r->name,
								      hs_view_display_len(r->name));
				else if (!err)
					err = hs_buf_add(&b, r->name, hs_view_display_len(r->name));
				break;
			case C_EXC_PCT:
				err = add_num(&b, pct(v, r->exc), 1);
				break;
			case C_EXC:
				err = add_num(&b, r->exc, dec_exc);
				break;
			case C_EXC_CT:
				err = add_num(&b, r->exc_count, dec_exc_ct);
				break;
			case C_INC_PCT:
				err = add_num(&b, pct(v, r->inc), 1);
				break;
			case C_INC:
				err = add_num(&b, r->inc, dec_inc);
				break;
			case C_INC_CT:
				err = add_num(&b, r->inc_count, dec_inc_ct);
				break;
			case C_FOLD:
				err = add_num(&b, r->fold, dec_fold);
				break;
			case C_WHEN:
				err = hs_buf_adds(&b, r->when);
				break;
			case C_FIRST:
				err = row_empty(r) ? hs_buf_adds(&b, "-") :
						     hs_buf_addf(&b, "%.3f", ms(r->first));
				break;
			case C_LAST:
				err = row_empty(r) ? hs_buf_adds(&b, "-") :
						     hs_buf_addf(&b, "%.3f", ms(r->last));
				break;
			}
			if (!err) {
				row[c] = hs_buf_detach(&b);
				if (!row[c])
					err = -ENOMEM;
			}
		}
	}
	hs_buf_release(&b);
	if (err)
		return err;
	for (i = 0; i <= t->nr_rows; i++)
		for (c = 0; c < C__COUNT; c++) {
			size_t len = text_width(t->cell[i * C__COUNT + c]);

			if (len > t->width[c])
				t->width[c] = len;
		}
	if (o->width) {
		/* the other columns and their two-blank gaps take the rest */
		size_t others = 0, max;

		for (c = 1; c < C__COUNT; c++)
			others += 2 + t->width[c];
		max = o->width > others + MIN_NAME_WIDTH ? o->width - others : MIN_NAME_WIDTH;
		if (t->width[C_NAME] > max) {
			for (i = 1; i <= t->nr_rows && !err; i++)
				err = cut_name(&t->cell[i * C__COUNT + C_NAME], max);
			t->width[C_NAME] = max;
		}
	}
	return err;
}

static void table_line(const struct table *t, size_t i, FILE *f)
{
	size_t c;

	for (c = 0; c < C__COUNT; c++) {
		const char *s = t->cell[i * C__COUNT + c];
		int w = (int)t->width[c];

		if (c == C_NAME)	/* padded by characters: names may hold "…" */
			fprintf(f, "%s%*s", s, (int)(t->width[c] - text_width(s)), "");
		else if (c == C_WHEN)
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
	fprintf(f, "Totals Metric: %s%s%s", b.s, s->unit ? " " : "", s->unit ? s->unit : "");
	hs_buf_reset(&b);
	add_num(&b, s->count, integral(s->count) ? 0 : 3);
	fprintf(f, "  Count: %s  Samples: %zu  First: %.3f  Last: %.3f  Last-First: %.3f"
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

int hs_view_write_text_opts(const struct hs_view *v, const struct hs_text_opts *o, FILE *f)
{
	enum hs_row_section section = HS_ROW_PLAIN;
	struct table t;
	size_t i;
	int err;

	if (v->kind == HS_VIEW_FLAME)
		return hs_view_write_folded(v, f);
	err = table_build(&t, v, o);
	if (err) {
		table_free(&t);
		return err;
	}
	summary_text(v, f);
	if (v->focus)
		fprintf(f, "Focus: %s\n", v->focus);
	fputc('\n', f);
	table_line(&t, 0, f);
	for (i = 0; i < v->nr_rows; i++) {
		if (v->rows[i].section != section) {
			section = v->rows[i].section;
			fprintf(f, "%s\n", section == HS_ROW_CALLER ? "Callers:" :
					   section == HS_ROW_FOCUS ? "Focus:" : "Callees:");
		}
		table_line(&t, i + 1, f);
	}
	if (v->nr_rows < v->nr_total)
		fprintf(f, "(%zu of %zu rows shown)\n", v->nr_rows, v->nr_total);
	table_free(&t);
	return ferror(f) ? -EIO : 0;
}

/* CSV -------------------------------------------------------------------- */

static int csv_field(struct hs_buf *b, const char *s, size_t len)
{
	size_t i;
	int err;

	if (!memchr(s, ',', len) && !memchr(s, '"', len) && !memchr(s, '\n', len) &&
	    !memchr(s, '\r', len))
		return hs_buf_add(b, s, len);
	err = hs_buf_addc(b, '"');
	for (i = 0; i < len && !err; i++)
		err = s[i] == '"' ? hs_buf_adds(b, "\"\"") : hs_buf_addc(b, s[i]);
	return err ? err : hs_buf_addc(b, '"');
}

static int csv_row(struct hs_buf *b, const struct hs_view *v, const struct hs_view_row *r)
{
	static const char *const section_name[] = { "", "caller", "focus", "callee" };
	int err = 0;

	if (hs_view_kind_is_tree(v->kind))
		err = hs_buf_addf(b, "%u,", r->depth);
	else if (v->kind == HS_VIEW_CALLER_CALLEE)
		err = hs_buf_addf(b, "%s,", section_name[r->section]);
	if (!err)
		err = csv_field(b, r->name, hs_view_display_len(r->name));
	if (v->kind == HS_VIEW_FLAME) {
		const double cols[] = { r->x, r->width, r->inc, r->exc };
		size_t i;

		for (i = 0; i < 4 && !err; i++)
			if (!(err = hs_buf_addc(b, ',')))
				err = add_exact(b, cols[i]);
		return err ? err : hs_buf_addc(b, '\n');
	}
	{
		const double cols[] = {
			pct(v, r->exc), r->exc, r->exc_count, pct(v, r->inc), r->inc,
			r->inc_count, r->fold, r->fold_count,
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
		      "First,Last\n", f);
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

		if (rest[i] == 0 || fabs(rest[i]) < 1e-9 * (fabs(v->rows[i].inc) + 1e-300))
			continue;
		for (x = (uint32_t)i; v->rows[x].parent != HS_NO_NODE; x = v->rows[x].parent)
			path[n++] = x;
		hs_buf_reset(&b);
		if (!n)
			err = hs_buf_adds(&b, v->rows[i].name);
		for (k = n; k-- > 0 && !err;) {
			const char *s = v->rows[path[k]].name;

			for (; *s && !err; s++)
				err = hs_buf_addc(&b, *s == ';' ? ':' : *s);
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
