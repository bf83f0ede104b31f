/*
 * test_when - the When characters at each boundary, bucketing, spreading
 * TimeMetric samples and the two scales.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "analysis/when.h"
#include "views_helpers.h"

/* `_ . o 0-9 A-Y *`; negatives `a-y @` (perfview-semantics.md §5). */
static void characters_at_boundaries(void **state)
{
	(void)state;
	assert_int_equal(hs_when_char(0, 1), '_');
	assert_int_equal(hs_when_char(5, 0), '_');	/* no scale */
	assert_int_equal(hs_when_char(0.0009, 1), '.');
	assert_int_equal(hs_when_char(0.001, 1), 'o');
	assert_int_equal(hs_when_char(0.0099, 1), 'o');
	assert_int_equal(hs_when_char(0.01, 1), '0');
	assert_int_equal(hs_when_char(0.0999, 1), '0');
	assert_int_equal(hs_when_char(0.1, 1), '1');
	assert_int_equal(hs_when_char(0.25, 1), '2');
	assert_int_equal(hs_when_char(0.5, 1), '5');
	assert_int_equal(hs_when_char(0.999, 1), '9');
	assert_int_equal(hs_when_char(1, 1), 'A');
	assert_int_equal(hs_when_char(1.5, 1), 'F');
	assert_int_equal(hs_when_char(2, 1), 'K');
	assert_int_equal(hs_when_char(3.25, 1), 'W');
	assert_int_equal(hs_when_char(3.499, 1), 'Y');
	assert_int_equal(hs_when_char(3.5, 1), '*');
	assert_int_equal(hs_when_char(1000, 1), '*');
	/* scale applies: 8 of 4 is 200% */
	assert_int_equal(hs_when_char(8, 4), 'K');
	/* negatives: a = 0 to -10%, then one letter per 10% */
	assert_int_equal(hs_when_char(-0.00001, 1), 'a');
	assert_int_equal(hs_when_char(-0.0999, 1), 'a');
	assert_int_equal(hs_when_char(-0.1, 1), 'b');
	assert_int_equal(hs_when_char(-0.25, 1), 'c');
	assert_int_equal(hs_when_char(-1, 1), 'k');
	assert_int_equal(hs_when_char(-2.375, 1), 'x');
	assert_int_equal(hs_when_char(-2.499, 1), 'y');
	assert_int_equal(hs_when_char(-2.5, 1), '@');
	assert_int_equal(hs_when_char(-100, 1), '@');
}

static void format_string(void **state)
{
	double hist[HS_WHEN_BUCKETS] = { 0 };
	char out[HS_WHEN_BUCKETS + 1];

	(void)state;
	hist[0] = 4;
	hist[1] = -1;
	hist[31] = 0.001;
	hs_when_format(hist, 2, out);
	assert_string_equal(out, "Kf_____________________________.");
}

/*
 * A plain source: 32 buckets over [Start - 0.0006, End + 0.0006]; a sample
 * goes whole into floor((t - Start') / width), the last bucket included.
 */
static void plain_buckets(void **state)
{
	struct hs_stack_source src;
	struct hs_when_range r;
	uint8_t b[HS_WHEN_BUCKETS];
	double v[HS_WHEN_BUCKETS];

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 4, 1, "x");
	add(&src, 1000, 2, 1, "x");
	hs_when_range_init(&r, &src, NAN, NAN);
	assert_true(r.start == 0 && r.end == 1000000000);
	assert_true(fabs(r.bucket - 1000001200.0 / 32) < 1e-6);
	assert_int_equal(hs_when_spread(&r, 0, 4, 4, b, v), 1);
	assert_true(b[0] == 0 && v[0] == 4);
	/* 400 ms: 400.0006 / 31.2500375 = 12.8 */
	hs_when_spread(&r, 400000000, 2, 2, b, v);
	assert_int_equal(b[0], 12);
	/* 1000 ms is in the last bucket; later samples are clamped to it */
	hs_when_spread(&r, 1000000000, 1, 1, b, v);
	assert_int_equal(b[0], 31);
	hs_when_spread(&r, 5000000000, 1, 1, b, v);
	assert_int_equal(b[0], 31);
	hs_when_spread(&r, -5000000000, 1, 1, b, v);
	assert_int_equal(b[0], 0);
	/* ScaleToData: half the largest |bucket| */
	{
		double root[HS_WHEN_BUCKETS] = { 0 };

		root[3] = -6;
		root[7] = 5;
		assert_true(hs_when_scale(&r, root) == 3);
	}
	/* negative first time: the histogram starts there */
	add(&src, -20, 1, 1, "x");
	hs_when_range_init(&r, &src, NAN, NAN);
	assert_true(r.start == -20000000);
	/* explicit bounds win */
	hs_when_range_init(&r, &src, 100, 420);
	assert_true(r.start == 100000000 && r.end == 420000000);
	hs_source_release(&src);
}

/*
 * TimeMetric: a sample covers [t, t + |metric| ms] and is spread over the
 * buckets it overlaps. Window [0, 320] ms: buckets of 10.0000375 ms from
 * -0.0006 ms; the scale is one bucket, so a bucket fully busy prints 9/A.
 */
static void time_metric_spreading(void **state)
{
	struct hs_stack_source src;
	struct hs_when_range r;
	uint8_t b[HS_WHEN_BUCKETS];
	double v[HS_WHEN_BUCKETS], hist[HS_WHEN_BUCKETS] = { 0 };
	char out[HS_WHEN_BUCKETS + 1];
	unsigned n, i;

	(void)state;
	hs_source_init(&src);
	src.kind = HS_METRIC_TIME;
	add(&src, 0, 10, 1, "x");
	hs_when_range_init(&r, &src, 0, 320);
	assert_true(fabs(r.bucket - 10000037.5) < 1e-6);
	assert_true(fabs(hs_when_scale(&r, hist) - 10.0000375) < 1e-12);

	/* [0, 10] ms: bucket 0 ends at 9.9994375 ms, the rest is in bucket 1 */
	n = hs_when_spread(&r, 0, 10, 10, b, v);
	assert_int_equal(n, 2);
	assert_true(b[0] == 0 && fabs(v[0] - 9.9994375) < 1e-9);
	assert_true(b[1] == 1 && fabs(v[1] - 0.0005625) < 1e-9);
	for (i = 0; i < n; i++)
		hist[b[i]] += v[i];

	/* a negative (diff) sample over [100, 110] ms: bucket 10 starts at 99.999775 */
	n = hs_when_spread(&r, 100000000, -10, -10, b, v);
	assert_int_equal(n, 2);
	assert_true(b[0] == 10 && fabs(v[0] + 9.9998125) < 1e-9);
	assert_true(b[1] == 11 && fabs(v[1] + 0.0001875) < 1e-9);
	for (i = 0; i < n; i++)
		hist[b[i]] += v[i];

	/* a long sample, [200, 245] ms, spreads over buckets 19 (to 200.00015) to 24 */
	n = hs_when_spread(&r, 200000000, 45, 45, b, v);
	assert_int_equal(n, 6);
	assert_true(b[0] == 19 && b[5] == 24);
	assert_true(fabs(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] - 45) < 1e-9);
	/* the part past the histogram's end is not in any bucket */
	n = hs_when_spread(&r, 315000000, 50, 50, b, v);
	assert_int_equal(n, 1);
	assert_true(b[0] == 31 && fabs(v[0] - 5.0006) < 1e-9);

	hs_when_format(hist, hs_when_scale(&r, hist), out);
	assert_string_equal(out, "9.________ja____________________");

	/* Last: t + |metric| capped at End, never before t */
	assert_true(hs_when_sample_end(&r, 0, 10) == 10000000);
	assert_true(hs_when_sample_end(&r, 315000000, 50) == 320000000);
	assert_true(hs_when_sample_end(&r, 320000500, 50) == 320000500);
	r.time_metric = 0;
	assert_true(hs_when_sample_end(&r, 5, 50) == 5);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(characters_at_boundaries),
		cmocka_unit_test(format_string),
		cmocka_unit_test(plain_buckets),
		cmocka_unit_test(time_metric_spreading),
	};
	return cmocka_run_group_tests_name("when", tests, NULL, NULL);
}
