/*
 * export - write a stack source as folded stacks, .perfView.xml (advanced
 * form) or .perfView.json. The formats, and what each keeps, are in
 * docs/formats.md.
 *
 * XML and JSON output is always valid UTF-8: a byte that is not part of a
 * valid UTF-8 sequence, and a control character XML 1.0 cannot carry, is
 * written as U+FFFD.
 */
#include "io/io.h"
#include "io/numtext.h"
#include "common/alloc.h"
#include "common/u64map.h"
#include "common/utf8.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char replacement[] = HS_UTF8_REPLACEMENT;

/* Write @len bytes at @s as XML text or attribute content. */
static void xml_text(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	while (i < len) {
		const char *esc = NULL;
		unsigned char c = s[i];
		size_t n = 1;

		switch (c) {
		case '&':
			esc = "&amp;";
			break;
		case '<':
			esc = "&lt;";
			break;
		case '>':
			esc = "&gt;";
			break;
		case '"':
			esc = "&quot;";
			break;
		case '\t':
			esc = "&#9;";
			break;
		case '\n':
			esc = "&#10;";
			break;
		case '\r':
			esc = "&#13;";
			break;
		default:
			if (c < 0x20) {
				esc = replacement;
			} else {
				unsigned long cp;

				n = hs_utf8_seq_len(s + i, len - i, &cp);
				if (!n || cp == 0xfffe || cp == 0xffff) {
					esc = replacement; /* not an XML character */
					n = n ? n : 1;
				}
			}
		}
		if (esc) {
			fwrite(s + run, 1, i - run, f);
			fputs(esc, f);
			run = i + n;
		}
		i += n;
	}
	fwrite(s + run, 1, len - run, f);
}

static void xml_str(FILE *f, const char *s)
{
	xml_text(f, s, strlen(s));
}

/* Write @len bytes at @s as a JSON string, quotes included. */
static void json_string(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;
	char tmp[8];

	fputc('"', f);
	while (i < len) {
		const char *esc = NULL;
		unsigned char c = s[i];
		size_t n = 1;

		if (c == '"') {
			esc = "\\\"";
		} else if (c == '\\') {
			esc = "\\\\";
		} else if (c == '\n') {
			esc = "\\n";
		} else if (c == '\t') {
			esc = "\\t";
		} else if (c == '\r') {
			esc = "\\r";
		} else if (c < 0x20) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			esc = tmp;
		} else {
			unsigned long cp;

			n = hs_utf8_seq_len(s + i, len - i, &cp);
			if (!n) {
				esc = "\\ufffd";
				n = 1;
			}
		}
		if (esc) {
			fwrite(s + run, 1, i - run, f);
			fputs(esc, f);
			run = i + n;
		}
		i += n;
	}
	fwrite(s + run, 1, len - run, f);
	fputc('"', f);
}

static void json_str(FILE *f, const char *s)
{
	json_string(f, s, strlen(s));
}

static int finish(FILE *f)
{
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

/* ---- folded ---- */

/*
 * A frame name as one folded field: ';' would split it and a newline
 * would end the line, so they become ':' and ' ' (as stackcollapse does).
 */
static void folded_frame(FILE *f, const char *s, size_t len)
{
	size_t i, run = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == ';' || c == '\n' || c == '\r') {
			fwrite(s + run, 1, i - run, f);
			fputc(c == ';' ? ':' : ' ', f);
			run = i + 1;
		}
	}
	fwrite(s + run, 1, len - run, f);
}

int hs_export_folded(const struct hs_stack_source *src, FILE *f)
{
	struct hs_stack_sums sums;
	size_t i, alloc_frames = 0;
	uint32_t *frames = NULL;
	char num[HS_NUMTEXT_MAX];
	int err = hs_source_sum_by_stack(src, &sums);

	if (err)
		return err;
	for (i = 0; i < sums.nr; i++) {
		uint32_t k = sums.order[i], stack = hs_stack_sums_stack(k);
		size_t depth = hs_source_depth(src, stack), d;

		if (HS_GROW(frames, depth, alloc_frames)) {
			err = -ENOMEM;
			goto out;
		}
		hs_source_stack_frames(src, stack, frames, depth);
		for (d = 0; d < depth; d++) {
			if (d)
				fputc(';', f);
			folded_frame(f, hs_source_frame_name(src, frames[d]),
				     hs_strtab_len(&src->frames, frames[d]));
		}
		hs_numtext_double(num, sums.metric[k]);
		fputc(' ', f);
		fputs(num, f);
		fputc('\n', f);
		if (ferror(f))
			break;
	}
	err = finish(f);
out:
	hs_stack_sums_release(&sums);
	hs_free(frames);
	return err;
}

/*
 * A sample's Metric and Count where they are not 1 (PerfView's default),
 * as JSON members if @json, else as XML attributes.
 */
static void put_weights(FILE *f, int json, double metric, double count)
{
	const char *names[] = {"Metric", "Count"};
	const double vals[] = {metric, count};
	char num[HS_NUMTEXT_MAX];
	size_t k;

	for (k = 0; k < 2; k++) {
		if (vals[k] == 1)
			continue;
		hs_numtext_double(num, vals[k]);
		if (json)
			fprintf(f, ",\"%s\":%s", names[k], num);
		else
			fprintf(f, " %s=\"%s\"", names[k], num);
	}
}

/* ---- PerfView XML ---- */

static const char *const pseudo_frames[4] = {"ROOT", "BROKEN", "?!?", "OVERHEAD"};

static int has_defaults(const struct hs_stack_source *src)
{
	const struct hs_source_defaults *d = &src->defaults;

	return d->start || d->end || d->group || d->fold || d->fold_pct || d->inc ||
	       d->exc || d->notes || src->kind == HS_METRIC_TIME;
}

static const struct {
	const char *name;
	size_t offset;
} fields[] = {
    {"Start", offsetof(struct hs_source_defaults, start)},
    {"End", offsetof(struct hs_source_defaults, end)},
    {"GroupRegEx", offsetof(struct hs_source_defaults, group)},
    {"FoldPercent", offsetof(struct hs_source_defaults, fold_pct)},
    {"FoldRegEx", offsetof(struct hs_source_defaults, fold)},
    {"IncludeRegEx", offsetof(struct hs_source_defaults, inc)},
    {"ExcludeRegEx", offsetof(struct hs_source_defaults, exc)},
};

static const char *field(const struct hs_source_defaults *d, size_t i)
{
	return *(char *const *)((const char *)d + fields[i].offset);
}

static void xml_gui_state(const struct hs_stack_source *src, FILE *f)
{
	const struct hs_source_defaults *d = &src->defaults;
	size_t i;

	fputs(" <StackWindowGuiState>\n  <FilterGuiState>\n", f);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (!field(d, i))
			continue;
		fprintf(f, "   <%s><Value>", fields[i].name);
		xml_str(f, field(d, i));
		fprintf(f, "</Value></%s>\n", fields[i].name);
	}
	fputs("  </FilterGuiState>\n", f);
	if (d->notes) {
		fputs("  <Notes>", f);
		xml_str(f, d->notes);
		fputs("</Notes>\n", f);
	}
	fprintf(f, "  <ScalingPolicy>%s</ScalingPolicy>\n",
		src->kind == HS_METRIC_TIME ? "TimeMetric" : "ScaleToData");
	fputs(" </StackWindowGuiState>\n", f);
}

int hs_export_perfview_xml(const struct hs_stack_source *src, FILE *f)
{
	size_t nr_frames = hs_source_nr_frames(src), i;
	char t[HS_NUMTEXT_MAX];

	fputs("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<StackWindow>\n <StackSource",
	      f);
	if (src->metric_unit) {
		fputs(" MetricUnit=\"", f);
		xml_str(f, src->metric_unit);
		fputc('"', f);
	}
	fprintf(f, ">\n  <Frames Count=\"%zu\">\n", nr_frames + 4);
	for (i = 0; i < 4; i++)
		fprintf(f, "   <Frame ID=\"%zu\">%s</Frame>\n", i, pseudo_frames[i]);
	for (i = 0; i < nr_frames; i++) {
		fprintf(f, "   <Frame ID=\"%zu\">", i + 4);
		xml_text(f, hs_source_frame_name(src, (uint32_t)i),
			 hs_strtab_len(&src->frames, (uint32_t)i));
		fputs("</Frame>\n", f);
		if (ferror(f))
			return -EIO;
	}
	fprintf(f, "  </Frames>\n  <Stacks Count=\"%zu\">\n", src->nr_stacks);
	for (i = 0; i < src->nr_stacks; i++) {
		uint32_t caller = src->stack_caller[i];

		fprintf(f, "   <Stack ID=\"%zu\" CallerID=\"%lld\" FrameID=\"%lu\"/>\n",
			i, caller == HS_NO_STACK ? -1LL : (long long)caller,
			(unsigned long)src->stack_frame[i] + 4);
		if (ferror(f))
			return -EIO;
	}
	fprintf(f, "  </Stacks>\n  <Samples Count=\"%zu\">\n", src->nr_samples);
	for (i = 0; i < src->nr_samples; i++) {
		uint32_t stack = src->stack[i];

		hs_numtext_ms(t, src->time[i]);
		fprintf(f, "   <Sample ID=\"%zu\" Time=\"%s\" StackID=\"%lld\"", i, t,
			stack == HS_NO_STACK ? -1LL : (long long)stack);
		put_weights(f, 0, src->metric[i], src->count[i]);
		fputs("/>\n", f);
		if (ferror(f))
			return -EIO;
	}
	fputs("  </Samples>\n </StackSource>\n", f);
	if (has_defaults(src))
		xml_gui_state(src, f);
	fputs("</StackWindow>\n", f);
	return finish(f);
}

/* ---- PerfView JSON ---- */

int hs_export_perfview_json(const struct hs_stack_source *src, FILE *f)
{
	const struct hs_source_defaults *d = &src->defaults;
	char t[HS_NUMTEXT_MAX];
	uint32_t *frames = NULL;
	size_t alloc_frames = 0, i;
	int first;

	fputs("{\"StackSource\":{", f);
	if (src->metric_unit) {
		fputs("\"MetricUnit\":", f);
		json_str(f, src->metric_unit);
		fputc(',', f);
	}
	fputs("\"Samples\":[\n", f);
	for (i = 0; i < src->nr_samples; i++) {
		uint32_t stack = src->stack[i];
		size_t depth = hs_source_depth(src, stack), k;

		if (HS_GROW(frames, depth, alloc_frames)) {
			hs_free(frames);
			return -ENOMEM;
		}
		hs_source_stack_frames(src, stack, frames, depth);
		hs_numtext_ms(t, src->time[i]);
		fprintf(f, "{\"Time\":%s", t);
		put_weights(f, 1, src->metric[i], src->count[i]);
		fputs(",\"Stack\":[", f);
		/* leaf first, as PerfView's simple form */
		for (k = depth; k-- > 0;) {
			json_string(f, hs_source_frame_name(src, frames[k]),
				    hs_strtab_len(&src->frames, frames[k]));
			if (k)
				fputc(',', f);
		}
		fputs(i + 1 < src->nr_samples ? "]},\n" : "]}\n", f);
		if (ferror(f)) {
			hs_free(frames);
			return -EIO;
		}
	}
	hs_free(frames);
	fputs("]}", f);
	if (has_defaults(src)) {
		fputs(",\n\"StackWindowGuiState\":{\"FilterGuiState\":{", f);
		for (i = 0, first = 1; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if (!field(d, i))
				continue;
			fprintf(f, "%s\"%s\":", first ? "" : ",", fields[i].name);
			json_str(f, field(d, i));
			first = 0;
		}
		fputc('}', f);
		if (d->notes) {
			fputs(",\"Notes\":", f);
			json_str(f, d->notes);
		}
		fprintf(f, ",\"ScalingPolicy\":\"%s\"}",
			src->kind == HS_METRIC_TIME ? "TimeMetric" : "ScaleToData");
	}
	fputs("}\n", f);
	return finish(f);
}

/* ---- speedscope ---- */

/*
 * speedscope's unit for @src: its file format names "bytes",
 * "milliseconds", ... and "none" for anything else.
 */
static const char *speedscope_unit(const struct hs_stack_source *src)
{
	if (src->kind == HS_METRIC_TIME)
		return "milliseconds";
	if (src->metric_unit && !strcmp(src->metric_unit, "bytes"))
		return "bytes";
	return "none";
}

/*
 * The "sampled" form: one sample per distinct stack (root first, indices
 * into shared.frames) weighted by its summed metric, in the order stacks
 * first appear. A shared frame is a (frame, source line) pair, so a
 * symbolized trace's file and line show in speedscope.
 */
int hs_export_speedscope(const struct hs_stack_source *src, FILE *f)
{
	size_t n = src->nr_stacks + 1, nr_keys = 0, alloc_keys = 0, i;
	struct hs_stack_sums sums = {0};
	uint32_t *index_of_stack = hs_malloc(n * sizeof(*index_of_stack));
	uint64_t *keys = NULL;	   /* shared frame index -> (frame << 32 | loc) */
	struct hs_u64map index_of; /* (frame << 32 | loc) -> shared frame index */
	char num[HS_NUMTEXT_MAX];
	double total = 0;
	int err = 0;

	hs_u64map_init(&index_of);
	if (!index_of_stack) {
		err = -ENOMEM;
		goto out;
	}
	err = hs_source_sum_by_stack(src, &sums);
	if (err)
		goto out;
	for (i = 0; i < src->nr_samples; i++)
		total += src->metric[i];
	/* a shared frame index for each stack on the way to a sampled one */
	for (i = 0; i < n; i++)
		index_of_stack[i] = UINT32_MAX;
	for (i = 0; i < sums.nr; i++) {
		uint32_t stack;

		for (stack = hs_stack_sums_stack(sums.order[i]);
		     stack != HS_NO_STACK && index_of_stack[stack + 1] == UINT32_MAX;
		     stack = src->stack_caller[stack]) {
			uint64_t key = (uint64_t)src->stack_frame[stack] << 32 |
				       hs_source_stack_loc(src, stack);
			uint64_t *slot;
			int added;

			slot = hs_u64map_ref(&index_of, key, nr_keys, &added);
			if (!slot || HS_GROW(keys, nr_keys + 1, alloc_keys)) {
				err = -ENOMEM;
				goto out;
			}
			if (added)
				keys[nr_keys++] = key;
			index_of_stack[stack + 1] = (uint32_t)*slot;
		}
	}
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"heapscope\",\"name\":",
	      f);
	json_str(f, src->view_name ? src->view_name : "heapscope");
	fputs(",\"activeProfileIndex\":0,\n\"profiles\":[{\"type\":\"sampled\",\"name\":",
	      f);
	json_str(f, src->view_name ? src->view_name : "heapscope");
	fprintf(f,
		",\"unit\":\"%s\",\"startValue\":0,\"endValue\":", speedscope_unit(src));
	hs_numtext_double(num, total);
	fputs(num, f);
	fputs(",\n\"samples\":[", f);
	for (i = 0; i < sums.nr; i++) {
		uint32_t stack = hs_stack_sums_stack(sums.order[i]);
		size_t depth = hs_source_depth(src, stack), d;

		fputs(i ? ",\n[" : "\n[", f);
		err = HS_GROW(keys, nr_keys + depth, alloc_keys) ? -ENOMEM : 0;
		if (err)
			goto out;
		/* the spare tail of keys holds this stack's indices, leaf first;
		 * they are written root first */
		for (d = 0; d < depth; d++, stack = src->stack_caller[stack])
			keys[nr_keys + d] = index_of_stack[stack + 1];
		for (d = depth; d-- > 0;)
			fprintf(f, "%s%u", d + 1 < depth ? "," : "",
				(unsigned)keys[nr_keys + d]);
		fputc(']', f);
	}
	fputs("],\n\"weights\":[", f);
	for (i = 0; i < sums.nr; i++) {
		hs_numtext_double(num, sums.metric[sums.order[i]]);
		fprintf(f, "%s%s", i ? "," : "", num);
	}
	fputs("]}],\n\"shared\":{\"frames\":[", f);
	for (i = 0; i < nr_keys; i++) {
		uint32_t frame = (uint32_t)(keys[i] >> 32), line;
		const char *file = hs_source_loc(src, (uint32_t)keys[i], &line);

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		json_str(f, hs_frame_display(hs_source_frame_name(src, frame)));
		if (file) {
			fputs(",\"file\":", f);
			json_str(f, file);
			fprintf(f, ",\"line\":%u", (unsigned)line);
		}
		fputc('}', f);
		if (ferror(f)) {
			err = -EIO;
			goto out;
		}
	}
	fputs("]}}\n", f);
	err = finish(f);
out:
	hs_u64map_release(&index_of);
	hs_free(keys);
	hs_free(index_of_stack);
	hs_stack_sums_release(&sums);
	return err;
}
