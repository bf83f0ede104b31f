/*
 * overweight - the Overweight report (see overweight.h).
 */
#include "analysis/overweight.h"
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_RESPONSIBILITY_PCT 2.0

/* By-name inclusive sums of one side. */
struct side {
	struct hs_calltree ct;
	struct hs_node_exc *exc;
	struct hs_node_inc *inc;
	size_t nr_frames; /* rows: one per output frame, then ROOT */
};

static void side_release(struct side *s)
{
	hs_free(s->exc);
	hs_free(s->inc);
	hs_calltree_release(&s->ct);
}

static int side_build(struct side *s, const struct hs_stack_source *src,
		      const struct hs_view_params *vp, struct hs_diag *diag)
{
	struct hs_view_params p = *vp;
	int err;

	memset(s, 0, sizeof(*s));
	p.fold_pct = NAN;
	p.node_hist = -1; /* no When column here */
	err = hs_calltree_build(&s->ct, src, &p, diag);
	if (err)
		return err;
	s->nr_frames = hs_source_nr_frames(&s->ct.f.out);
	err = hs_calltree_byname(&s->ct, &s->exc, &s->inc);
	if (err)
		side_release(s);
	return err;
}

/* Inclusive value of row @i, or NAN when the name has no (non-zero) cost. */
static double side_value(const struct side *s, size_t i)
{
	if (s->inc[i].first == INT64_MAX || s->inc[i].metric == 0)
		return NAN;
	return s->inc[i].metric;
}

static const char *side_name(const struct side *s, size_t i)
{
	return i == s->nr_frames ? "ROOT"
				 : hs_source_frame_name(&s->ct.f.out, (uint32_t)i);
}

/* Row index in @s of the name @name, or (size_t)-1. */
static size_t side_find(const struct side *s, const char *name)
{
	uint32_t id;

	if (!strcmp(name, "ROOT"))
		return s->nr_frames;
	if (hs_strtab_find(&s->ct.f.out.frames, name, strlen(name), &id))
		return (size_t)-1;
	return id;
}

static double finite_or_zero(double v)
{
	return isfinite(v) ? v : 0;
}

static int interest_level(double ow, double resp, double v2, double t2)
{
	int n = 0;

	n += fabs(ow) > 110;
	n += fabs(resp) > 5;
	n += fabs(resp) > 20;
	n += fabs(resp) > 100;
	n += v2 / t2 < 0.95;
	n += v2 / t2 < 0.75;
	return n;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct hs_overweight_row *a = pa, *b = pb;

	if (a->interest != b->interest)
		return a->interest > b->interest ? -1 : 1;
	if (a->overweight_pct != b->overweight_pct)
		return a->overweight_pct > b->overweight_pct ? -1 : 1;
	if (a->delta != b->delta)
		return a->delta < b->delta ? -1 : 1;
	return strcmp(a->name, b->name);
}

void hs_overweight_release(struct hs_overweight *ow)
{
	size_t i;

	for (i = 0; i < ow->nr; i++)
		hs_free(ow->rows[i].name);
	hs_free(ow->rows);
	memset(ow, 0, sizeof(*ow));
}

static int add_rows(struct hs_overweight *ow, const struct side *b, const struct side *t)
{
	double t1 = ow->base_total, t2 = ow->test_total;
	double growth = t2 / t1, total_delta = t2 - t1;
	size_t alloc = 0, i;

	for (i = 0; i <= t->nr_frames; i++) {
		struct hs_overweight_row *r;
		double v1, v2 = side_value(t, i), resp;
		size_t j;

		if (isnan(v2))
			continue;
		j = side_find(b, side_name(t, i));
		if (j == (size_t)-1 || isnan(v1 = side_value(b, j)))
			continue;
		resp = finite_or_zero(100 * (v2 - v1) / total_delta);
		if (fabs(resp) < MIN_RESPONSIBILITY_PCT)
			continue;
		if (HS_GROW(ow->rows, ow->nr + 1, alloc))
			return -ENOMEM;
		r = &ow->rows[ow->nr];
		r->name = hs_strdup(side_name(t, i));
		if (!r->name)
			return -ENOMEM;
		ow->nr++;
		r->base = v1;
		r->test = v2;
		r->delta = v2 - v1;
		r->responsibility_pct = resp;
		r->overweight_pct = finite_or_zero(100 * r->delta / (v1 * (growth - 1)));
		r->interest = interest_level(r->overweight_pct, resp, v2, t2);
	}
	if (ow->nr)
		qsort(ow->rows, ow->nr, sizeof(*ow->rows), row_cmp);
	return 0;
}

int hs_overweight_compute(const struct hs_stack_source *base,
			  const struct hs_view_params *bp,
			  const struct hs_stack_source *test,
			  const struct hs_view_params *tp, struct hs_overweight *out,
			  struct hs_diag *diag)
{
	struct side b, t;
	int err;

	memset(out, 0, sizeof(*out));
	err = side_build(&b, base, bp, diag);
	if (err)
		return err;
	err = side_build(&t, test, tp, diag);
	if (err) {
		side_release(&b);
		return err;
	}
	out->base_total = b.ct.t.inc[0].metric;
	out->test_total = t.ct.t.inc[0].metric;
	if (out->test_total != out->base_total)
		err = add_rows(out, &b, &t);
	side_release(&b);
	side_release(&t);
	if (err)
		hs_overweight_release(out);
	return err;
}

static double delta_pct(const struct hs_overweight *ow)
{
	return finite_or_zero(100 * (ow->test_total - ow->base_total) / ow->base_total);
}

int hs_overweight_write_text(const struct hs_overweight *ow, FILE *f)
{
	size_t i, w = 4;

	fprintf(f, "Base: %.3f  Test: %.3f  Delta: %.3f  Delta %%: %.1f\n\n",
		ow->base_total, ow->test_total, ow->test_total - ow->base_total,
		delta_pct(ow));
	if (!ow->nr) {
		fprintf(f, "%s\n",
			ow->base_total == ow->test_total
			    ? "(equal totals: nothing is overweight)"
			    : "(no name is responsible for 2% or more of the change)");
		return ferror(f) ? -EIO : 0;
	}
	for (i = 0; i < ow->nr; i++)
		if (strlen(ow->rows[i].name) > w)
			w = strlen(ow->rows[i].name);
	if (w > 80)
		w = 80;
	fprintf(f, "%-*s %12s %12s %12s %8s %10s %8s\n", (int)w, "Name", "Base", "Test",
		"Delta", "Resp %", "Overwt %", "Interest");
	for (i = 0; i < ow->nr; i++) {
		const struct hs_overweight_row *r = &ow->rows[i];

		fprintf(f, "%-*.*s %12.3f %12.3f %12.3f %8.1f %10.1f %8d\n", (int)w,
			(int)w, r->name, r->base, r->test, r->delta,
			r->responsibility_pct, r->overweight_pct, r->interest);
	}
	return ferror(f) ? -EIO : 0;
}

int hs_overweight_write_json(const struct hs_overweight *ow, FILE *f)
{
	json_t *root = json_object(), *rows = json_array();
	size_t i;
	int err = -ENOMEM;

	if (!root || !rows)
		goto out;
	json_object_set_new(root, "base_total", json_real(ow->base_total));
	json_object_set_new(root, "test_total", json_real(ow->test_total));
	json_object_set_new(root, "delta", json_real(ow->test_total - ow->base_total));
	json_object_set_new(root, "delta_pct", json_real(delta_pct(ow)));
	for (i = 0; i < ow->nr; i++) {
		const struct hs_overweight_row *r = &ow->rows[i];
		json_t *row = json_pack(
		    "{s:o, s:f, s:f, s:f, s:f, s:f, s:i}", "name",
		    hs_view_json_text(r->name), "base", r->base, "test", r->test, "delta",
		    r->delta, "responsibility_pct", r->responsibility_pct,
		    "overweight_pct", r->overweight_pct, "interest", r->interest);

		if (!row || json_array_append_new(rows, row))
			goto out;
	}
	json_object_set(root, "rows", rows);
	err = json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) ? -EIO : 0;
	if (!err && fputc('\n', f) == EOF)
		err = -EIO;
out:
	json_decref(rows);
	json_decref(root);
	return err;
}

static void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

int hs_overweight_write_html(const struct hs_overweight *ow, const char *base_name,
			     const char *test_name, FILE *f)
{
	size_t i;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>heapscope overweight report</title>\n<style>\n"
	      "body{font:14px system-ui,sans-serif;margin:1.5em}\n"
	      "table{border-collapse:collapse;margin-bottom:1.5em}\n"
	      "th,td{border:1px solid #ccc;padding:2px 8px}\n"
	      "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	      "th{background:#eee}tr:nth-child(even) td{background:#fafafa}\n"
	      "</style></head><body>\n<h1>Overweight report</h1>\n<p>Base: ",
	      f);
	html_text(f, base_name);
	fputs(" &mdash; Test: ", f);
	html_text(f, test_name);
	fprintf(f,
		"</p>\n<table>\n<tr><th>Base (old) Time</th><th>Test (new) Time</th>"
		"<th>Delta</th><th>Delta %%</th></tr>\n"
		"<tr><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
		"<td class=\"n\">%.3f</td><td class=\"n\">%.1f</td></tr>\n</table>\n",
		ow->base_total, ow->test_total, ow->test_total - ow->base_total,
		delta_pct(ow));
	fputs("<p>A name is overweight when it grew more than the whole run did: "
	      "Overweight % is its growth over the growth expected from its base "
	      "value (100% = in proportion); Responsibility % is its share of the "
	      "total change. Names under 2% responsibility are not shown.</p>\n",
	      f);
	fputs("<table>\n<tr><th>Name</th><th>Base</th><th>Test</th><th>Delta</th>"
	      "<th>Responsibility %</th><th>Overweight %</th><th>Interest "
	      "Level</th></tr>\n",
	      f);
	for (i = 0; i < ow->nr; i++) {
		const struct hs_overweight_row *r = &ow->rows[i];

		fputs("<tr><td>", f);
		html_text(f, r->name);
		fprintf(f,
			"</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%.3f</td><td class=\"n\">%.1f</td>"
			"<td class=\"n\">%.1f</td><td class=\"n\">%d</td></tr>\n",
			r->base, r->test, r->delta, r->responsibility_pct,
			r->overweight_pct, r->interest);
	}
	if (!ow->nr)
		fputs("<tr><td colspan=\"7\">No name is responsible for 2% or more of "
		      "the change.</td></tr>\n",
		      f);
	fputs("</table>\n</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
