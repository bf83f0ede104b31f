/*
 * test_perf_script_parse - the `perf script` line parser alone
 * (src/io/import_perf_script_parse.c): header lines, event kinds, frame
 * text, srcline lines and tracepoint fields, without a stack source. The
 * importer as a whole is tested in test_perf_script and
 * test_perf_threadtime.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "io/import_perf_script.h"

/* A span as a NUL-terminated copy (tests only: one buffer per call site). */
static const char *span(char *buf, size_t n, const char *p, const char *end)
{
	snprintf(buf, n, "%.*s", (int)(end - p), p);
	return buf;
}

static int header(struct ps *ps, const char *line, struct header *h)
{
	return hs__ps_parse_header(ps, line, line + strlen(line), h);
}

static void header_fields(void **state)
{
	static struct ps ps;
	struct header h;
	char b[64];

	(void)state;
	assert_int_equal(header(&ps, "rs:main Q:Reg   640/641  [001]  5000.000001:     "
				     "250000 cpu-clock:ppp: ", &h), 0);
	assert_string_equal(span(b, sizeof(b), h.comm, h.comm_end), "rs:main Q:Reg");
	assert_int_equal(h.pid, 640);
	assert_int_equal(h.tid, 641);
	assert_int_equal(h.cpu, 1);
	assert_int_equal(h.time, 5000000001000ll);
	assert_string_equal(span(b, sizeof(b), h.event, h.event_end), "cpu-clock");
	/* a COMM of digits, no CPU, a -1 pid, an event with /.../ */
	assert_int_equal(header(&ps, "123 456 -1/-1 7.5: cpu/cycles/: x", &h), 0);
	assert_string_equal(span(b, sizeof(b), h.comm, h.comm_end), "123 456");
	assert_int_equal(h.pid, UINT32_MAX);
	assert_int_equal(h.cpu, -1);
	assert_int_equal(h.time, 7500000000ll);
	assert_string_equal(span(b, sizeof(b), h.event, h.event_end), "cpu");
	assert_string_equal(span(b, sizeof(b), h.details, h.details_end), "x");
	/* nine decimals exactly; the tenth is ignored */
	assert_int_equal(header(&ps, "a 1 0.1234567891: x:", &h), 0);
	assert_int_equal(h.time, 123456789);
}

static void header_errors(void **state)
{
	static struct ps ps;
	struct header h;

	(void)state;
	assert_int_equal(header(&ps, "a 1 [x] 1.0: x:", &h), -1);
	assert_string_equal(ps.msg, "bad CPU '[x]' (expected [N])");
	assert_int_equal(header(&ps, "a 1 [0] 1.0 x:", &h), -1);
	assert_string_equal(ps.msg, "bad time '1.0' (expected SECONDS:)");
	assert_int_equal(header(&ps, "a 1 9000000001.0: x:", &h), -1);
	assert_string_equal(ps.msg, "bad time '9000000001.0:' (out of range: perf "
				    "times are seconds, at most 9000000000)");
	assert_int_equal(header(&ps, "a 1 9000000000.0: x:", &h), 0);
	assert_int_equal(header(&ps, "no pid here", &h), -1);
	assert_non_null(strstr(ps.msg, "expected 'PID[/TID]'"));
}

static void event_kinds(void **state)
{
	static struct ps ps;
	struct header h;

	(void)state;
	assert_int_equal(header(&ps, "a 1 1.0: sched:sched_switch: prev_comm=a", &h), 0);
	assert_int_equal(hs__ps_event_kind(&h), PS_SCHED_SWITCH);
	assert_int_equal(header(&ps, "a 1 1.0: sched_wakeup_new: comm=a", &h), 0);
	assert_int_equal(hs__ps_event_kind(&h), PS_SCHED_WAKEUP);
	assert_int_equal(header(&ps, "a 1 1.0: sched:sched_waking: comm=a", &h), 0);
	assert_int_equal(hs__ps_event_kind(&h), PS_SCHED_WAKING);
	/* a whole word only */
	assert_int_equal(header(&ps, "a 1 1.0: sched:sched_switchy: x", &h), 0);
	assert_int_equal(hs__ps_event_kind(&h), PS_CPU);
	assert_int_equal(header(&ps, "a 1 1.0: cpu-clock:", &h), 0);
	assert_int_equal(hs__ps_event_kind(&h), PS_CPU);
}

/* "module!symbol[tier]" of a frame text, or the error message. */
static const char *frame(const char *text)
{
	static struct ps ps;
	static char out[600];
	struct hs_diag d = HS_DIAG_INIT("t");
	struct frame_text ft;

	ps.diag = &d;
	ps.lr.last_had_newline = 1;	/* a whole line, not a file cut off */
	if (hs__ps_split_frame(&ps, text, text + strlen(text), &ft)) {
		snprintf(out, sizeof(out), "error: %s", d.msg);
		return out;
	}
	snprintf(out, sizeof(out), "%.*s!%.*s%s%.*s%s%s", (int)(ft.mod_end - ft.mod), ft.mod,
		 (int)(ft.sym_end - ft.sym), ft.sym, ft.tier ? "[" : "",
		 ft.tier ? (int)(ft.tier_end - ft.tier) : 0, ft.tier ? ft.tier : "",
		 ft.tier ? "]" : "", ft.unknown ? " unknown" : "");
	return out;
}

static void frame_text(void **state)
{
	(void)state;
	assert_string_equal(frame("main+0x20 (/usr/sbin/rsyslogd)"), "rsyslogd!main");
	assert_string_equal(frame("[unknown] ([unknown])"), "unknown!unknown unknown");
	assert_string_equal(frame("schedule+0x5 ([kernel.kallsyms])"),
			    "kernel.kallsyms!schedule");
	assert_string_equal(frame("Foo()[OptimizedTier1] (/tmp/x.so)"),
			    "x.so!Foo()[OptimizedTier1]");
	assert_string_equal(frame("Foo()[Unknown] (C:\\app\\x.dll)"), "x.dll!Foo()");
	assert_string_equal(frame("instance void [System.Private.CoreLib] System.X::Y() "
				  "(/tmp/perf-12.map)"),
			    "System.Private.CoreLib!System.X::Y()");
	assert_string_equal(frame("void [App] Ns.T::M(int) (/tmp/jitted-12-3.so)"),
			    "App!Ns.T::M(int)");
	assert_string_equal(frame("f (/a) (inlined)"), "a!f");
	assert_string_equal(frame("no module"), "error: frame line has no '(MODULE)' after "
						"'no' (perf script -F needs 'dso')");
	assert_string_equal(frame("f (/a"),
			    "error: frame line does not end with ')' after '(MODULE'");
}

static int srcline(const char *s)
{
	return hs__ps_is_srcline(s, s + strlen(s));
}

static void srcline_lines(void **state)
{
	(void)state;
	assert_true(srcline("  file.c:12"));
	assert_true(srcline("  ??:0"));
	assert_true(srcline("  f.c:7 (discriminator 2)"));
	assert_true(srcline("  libc.so.6[7f00ab]"));
	assert_false(srcline("file.c:12"));
	assert_false(srcline("  file.c"));
	assert_false(srcline("  f.c:7 (other 2)"));
	assert_false(srcline("  libc.so.6[xyz]"));
}

static void fields_and_numbers(void **state)
{
	static const char d[] = "prev_comm=a b prev_pid=12 ==> next_comm=x next_pid=3 "
				"next_pid=4";
	const char *v, *ve, *p;
	char b[32];
	uint64_t n;

	(void)state;
	assert_int_equal(hs__ps_find_field(d, d + strlen(d), "prev_pid=", 0, &v, &ve), 0);
	assert_string_equal(span(b, sizeof(b), v, ve), "12");
	assert_int_equal(hs__ps_find_field(d, d + strlen(d), "next_pid=", 1, &v, &ve), 0);
	assert_string_equal(span(b, sizeof(b), v, ve), "4");
	/* "comm=" inside "prev_comm=" does not count */
	assert_int_equal(hs__ps_find_field(d, d + strlen(d), "comm=", 0, &v, &ve), -1);
	p = "18446744073709551615x";
	assert_int_equal(hs__ps_parse_uint(&p, p + strlen(p), UINT64_MAX, &n), 0);
	assert_true(n == UINT64_MAX);
	assert_string_equal(p, "x");
	p = "18446744073709551616";
	assert_int_equal(hs__ps_parse_uint(&p, p + strlen(p), UINT64_MAX, &n), -1);
	p = "x1";
	assert_int_equal(hs__ps_parse_uint(&p, p + 2, 10, &n), -1);
}

/* The byte-at-a-time definitions that the word scanners must agree with. */
static const char *bytes_skip_space(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p;
}

static const char *bytes_skip_hex(const char *p, const char *end)
{
	while (p < end && hex_value(*p) >= 0)
		p++;
	return p;
}

static const char *bytes_skip_hex_back(const char *begin, const char *p)
{
	while (p > begin && hex_value(p[-1]) >= 0)
		p--;
	return p;
}

static const char *bytes_after_last_slash(const char *begin, const char *p)
{
	while (p > begin && p[-1] != '/' && p[-1] != '\\')
		p--;
	return p;
}

static const char *bytes_last_paren(const char *begin, const char *p)
{
	while (p > begin)
		if (*--p == '(')
			return p;
	return NULL;
}

/*
 * copy_short() of the @n bytes at @src (readable up to @lim) copies them
 * and returns their end, writing at most 15 bytes past it.
 */
static void copy_matches(const char *src, size_t n, const char *lim)
{
	char dst[64 + 32];
	char *end;

	memset(dst, '#', sizeof(dst));
	end = copy_short(dst, src, n, lim);
	assert_ptr_equal(end, dst + n);
	assert_memory_equal(dst, src, n);
	assert_int_equal(dst[n + 15], '#');
}

/*
 * skip_space(), skip_hex(), skip_hex_back(), after_last_slash() and
 * last_paren() read
 * words where they can, find_nl() and copy_short() 16 bytes at a time:
 * every start and end in texts made of runs of each byte class (and of
 * every byte value, high bit included) must give what a byte loop gives.
 */
static void word_scanners_match_bytes(void **state)
{
	static const char cls[] = " \t\v\f\r09afAFgGxX+:(/\\\n\x80\xb0\xe6\xff\xaf\xdc\x00";
	char text[64];
	unsigned seed = 12345, round, c;
	size_t i, j;

	(void)state;
	for (round = 0; round < 4000; round++) {
		for (i = 0; i < sizeof(text); i++) {
			seed = seed * 1103515245u + 12345u;
			/* runs: mostly the byte before, sometimes a new class */
			if (i && (seed >> 16) % 4)
				text[i] = text[i - 1];
			else
				text[i] = round < 256 && (seed >> 20) % 8 == 0
					      ? (char)(round + i)
					      : cls[(seed >> 8) % (sizeof(cls) - 1)];
		}
		for (i = 0; i <= sizeof(text); i++)
			for (j = i; j <= sizeof(text); j++) {
				assert_ptr_equal(skip_space(text + i, text + j),
						 bytes_skip_space(text + i, text + j));
				assert_ptr_equal(skip_hex(text + i, text + j),
						 bytes_skip_hex(text + i, text + j));
				assert_ptr_equal(skip_hex_back(text + i, text + j),
						 bytes_skip_hex_back(text + i, text + j));
				assert_ptr_equal(after_last_slash(text + i, text + j),
						 bytes_after_last_slash(text + i, text + j));
				assert_ptr_equal(last_paren(text + i, text + j),
						 bytes_last_paren(text + i, text + j));
				assert_ptr_equal(find_nl(text + i, text + j),
						 memchr(text + i, '\n', j - i));
				copy_matches(text + i, j - i, text + sizeof(text));
			}
	}
	/* every byte value as a hex digit or not, at every place in a word */
	for (c = 0; c < 256; c++)
		for (i = 0; i < 8; i++) {
			memset(text, '7', 16);
			text[i] = (char)c;
			assert_ptr_equal(skip_hex(text, text + 16),
					 bytes_skip_hex(text, text + 16));
			assert_ptr_equal(skip_hex_back(text, text + 16),
					 bytes_skip_hex_back(text, text + 16));
			memset(text, ' ', 16);
			text[i] = (char)c;
			assert_ptr_equal(skip_space(text, text + 16),
					 bytes_skip_space(text, text + 16));
			assert_ptr_equal(after_last_slash(text, text + 16),
					 bytes_after_last_slash(text, text + 16));
			assert_ptr_equal(last_paren(text, text + 16),
					 bytes_last_paren(text, text + 16));
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_fields),
		cmocka_unit_test(header_errors),
		cmocka_unit_test(event_kinds),
		cmocka_unit_test(frame_text),
		cmocka_unit_test(srcline_lines),
		cmocka_unit_test(fields_and_numbers),
		cmocka_unit_test(word_scanners_match_bytes),
	};
	return cmocka_run_group_tests_name("perf_script_parse", tests, NULL, NULL);
}
