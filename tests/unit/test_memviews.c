/*
 * Tests of the memory views built from small hand-made traces: each
 * view's samples, times and stacks, sampling weights on frees, reused
 * addresses and unmatched frees, mappings cut in pieces, ranges, and
 * frames named from the symbol section with their source locations; the
 * CPU and wall-clock sample views.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "analysis/calltree.h"
#include "analysis/filter.h"
#include "analysis/memviews.h"
#include "analysis/presets.h"
#include "analysis/stats.h"
#include "analysis/views.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include "format/trace_symbols.h"
#include "trace_builder.h"

#define MS 1000000	/* ticks (ns) per ms */

static uint8_t *put_mmap(struct tb *b, uint8_t *p, int64_t dt, int64_t da, uint64_t len,
			 uint64_t stack)
{
	b->events++;
	return hs_enc_mmap(p, dt, da, len, 3, 0x22, stack);
}

static uint8_t *put_munmap(struct tb *b, uint8_t *p, int64_t dt, int64_t da, uint64_t len)
{
	b->events++;
	return hs_enc_munmap(p, dt, da, len);
}

/*
 * Begin @b as /bin/app's trace, unsampled: its module, its main thread
 * (span 10) and stack 1 at app 0x1010; the records go on at the return.
 */
static uint8_t *start_app(struct tb *b)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process_sampled(p, 0);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 10, 0, 0);
	p = put_thread_start(p, 0, "main");
	p = put_node(p, 1, 0, 0x1010);
	return p;
}

/* put_heap_program() (trace_builder.h), traced with --sample-bytes @sample_bytes. */
static void build_heap(struct tb *b, uint64_t sample_bytes)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process_sampled(p, sample_bytes);
	p = put_heap_program(b, p);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

/* Symbols: f at app 0x10 (with an inlined helper), g at 0x40, libc's entry. */
static void add_symbols(struct tb *b)
{
	struct hs_symw w;
	struct hs_symw_frame f[2] = {
		{ "helper", "/src/h.h", 3, HS_TSYM_INLINE },
		{ "f", "/src/app.c", 10, 0 },
	};
	struct hs_symw_frame g = { "g", "/src/app.c", 20, 0 };
	struct hs_symw_frame entry = { NULL, NULL, 0, 0 };

	assert_int_equal(hs_symw_init(&w, b->seq, tb_emit, b), 0);
	assert_int_equal(hs_symw_add(&w, 1, 0x10, HS_TSYM_FOUND, NULL, f, 2), 0);
	assert_int_equal(hs_symw_add(&w, 1, 0x40, HS_TSYM_FOUND, NULL, &g, 1), 0);
	assert_int_equal(hs_symw_add(&w, 2, 0x20, HS_TSYM_NO_SYMBOL, NULL, &entry, 1), 0);
	assert_int_equal(hs_symw_finish(&w), 0);
	hs_symw_release(&w);
}

static void build(const struct hs_trace *t, enum hs_memview_kind kind, double start_ms,
		  double end_ms, struct hs_stack_source *src, struct hs_memview_info *info)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");

	o.kind = kind;
	o.start_ms = start_ms;
	o.end_ms = end_ms;
	assert_int_equal(hs_memview_build(t, &o, src, info, &diag), 0);
}

/* The stack of sample @i, frames joined by ';'. */
static const char *stack_of(const struct hs_stack_source *src, size_t i)
{
	static char out[1024];
	uint32_t frames[32];
	size_t d = hs_source_stack_frames(src, src->stack[i], frames, 32), k;

	out[0] = '\0';
	for (k = 0; k < d; k++) {
		if (k)
			strcat(out, ";");
		strcat(out, hs_source_frame_name(src, frames[k]));
	}
	return out;
}

#define ROOT "Process app (77);Thread (10) main;"
#define F ROOT "/lib/libc.so.6!0x20;/bin/app!0x10;"
#define G ROOT "/lib/libc.so.6!0x20;/bin/app!0x40;"

static void sample_is(const struct hs_stack_source *src, size_t i, double ms, double bytes,
		      double count, const char *stack)
{
	assert_true(i < src->nr_samples);
	assert_true(fabs((double)src->time[i] - ms * MS) < 1);
	assert_true(fabs(src->metric[i] - bytes) < 1e-6);
	assert_true(fabs(src->count[i] - count) < 1e-9);
	assert_string_equal(stack_of(src, i), stack);
}

static void alloc_and_net(void **state)
{
	struct hs_stack_source src;
	struct hs_trace t;
	struct tb b;

	(void)state;
	build_heap(&b, 0);
	tb_load(&b, &t);
	build(&t, HS_MEM_ALLOC, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, 6);
	sample_is(&src, 0, 1, 100, 1, F "/lib/libc.so.6!malloc");
	sample_is(&src, 1, 2, 40, 1, G "/lib/libc.so.6!malloc");
	sample_is(&src, 2, 4, 300000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x40;/lib/libc.so.6!malloc");
	sample_is(&src, 3, 5, 500000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!realloc");
	sample_is(&src, 4, 7, 8, 1, F "/lib/libc.so.6!malloc");
	sample_is(&src, 5, 8, 16, 1, G "/lib/libc.so.6!calloc");
	assert_string_equal(src.metric_unit, "bytes");
	assert_non_null(src.defaults.fold);
	assert_null(src.defaults.exc);
	hs_source_release(&src);

	build(&t, HS_MEM_NET, NAN, NAN, &src, NULL);
	/* frees are charged to the allocating stack at their own time */
	assert_int_equal(src.nr_samples, 10);
	sample_is(&src, 0, 1, 100, 1, F "/lib/libc.so.6!malloc");
	sample_is(&src, 1, 2, 40, 1, G "/lib/libc.so.6!malloc");
	sample_is(&src, 2, 3, -40, -1, G "/lib/libc.so.6!malloc");
	sample_is(&src, 3, 4, 300000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x40;/lib/libc.so.6!malloc");
	sample_is(&src, 4, 4, -100, -1, F "/lib/libc.so.6!malloc");
	/* the realloc: its free of the old block first */
	sample_is(&src, 5, 5, -300000, -1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x40;/lib/libc.so.6!malloc");
	sample_is(&src, 6, 5, 500000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!realloc");
	/* the unmatched free is ignored; the block at 0x5000 is replaced:
	 * its free was missed */
	sample_is(&src, 7, 7, 8, 1, F "/lib/libc.so.6!malloc");
	sample_is(&src, 8, 8, -8, -1, F "/lib/libc.so.6!malloc");
	sample_is(&src, 9, 8, 16, 1, G "/lib/libc.so.6!calloc");
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * peak over ranges that hold no heap event: the heap as the range starts,
 * whether the range lies between two events, before the first one or
 * after the last one (put_heap_program()'s events are at 1 to 8 ms).
 */
static void peak_ranges_without_events(const struct hs_trace *t)
{
	struct hs_memview_info info;
	struct hs_stack_source src;

	/* between 1 and 2 ms: f's 100 bytes */
	build(t, HS_MEM_PEAK, 1.2, 1.8, &src, &info);
	assert_int_equal(info.peak_ns, 1200000);
	assert_true(info.peak_bytes == 100);
	assert_int_equal(src.nr_samples, 1);
	sample_is(&src, 0, 1, 100, 1, F "/lib/libc.so.6!malloc");
	hs_source_release(&src);
	/* between 6 ms (a free of an unknown block) and 7 ms: the realloc'ed block */
	build(t, HS_MEM_PEAK, 6.2, 6.8, &src, &info);
	assert_int_equal(info.peak_ns, 6200000);
	assert_true(info.peak_bytes == 500000);
	assert_int_equal(src.nr_samples, 1);
	sample_is(&src, 0, 5, 500000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!realloc");
	hs_source_release(&src);
	/* before the first event: the heap is empty */
	build(t, HS_MEM_PEAK, 0, 0.5, &src, &info);
	assert_int_equal(info.peak_ns, 0);
	assert_true(info.peak_bytes == 0);
	assert_int_equal(src.nr_samples, 0);
	hs_source_release(&src);
	/* starting before the first event and holding some: as without a start */
	build(t, HS_MEM_PEAK, 0, 1.5, &src, &info);
	assert_int_equal(info.peak_ns, 1 * MS);
	assert_true(info.peak_bytes == 100);
	assert_int_equal(src.nr_samples, 1);
	hs_source_release(&src);
	/* after the last event, with and without an end: the heap as it was left */
	build(t, HS_MEM_PEAK, 9, NAN, &src, &info);
	assert_int_equal(info.peak_ns, 9 * MS);
	assert_true(info.peak_bytes == 500016);
	assert_int_equal(src.nr_samples, 2);
	sample_is(&src, 0, 5, 500000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!realloc");
	sample_is(&src, 1, 8, 16, 1, G "/lib/libc.so.6!calloc");
	hs_source_release(&src);
	build(t, HS_MEM_PEAK, 9, 20, &src, &info);
	assert_int_equal(info.peak_ns, 9 * MS);
	assert_true(info.peak_bytes == 500016);
	assert_int_equal(src.nr_samples, 2);
	hs_source_release(&src);
	/* no start, an end before the first event: the heap is empty */
	build(t, HS_MEM_PEAK, NAN, 0.5, &src, &info);
	assert_true(info.peak_bytes == 0);
	assert_int_equal(src.nr_samples, 0);
	hs_source_release(&src);
}

static void leaks_peak_temporary(void **state)
{
	struct hs_memview_info info;
	struct hs_stack_source src;
	struct hs_trace t;
	struct tb b;

	(void)state;
	build_heap(&b, 0);
	tb_load(&b, &t);
	build(&t, HS_MEM_LEAKS, NAN, NAN, &src, &info);
	assert_true(info.uses_range);
	/* live at the end: the realloc'ed block and the block allocated last
	 * at 0x5000 (the one before it there counts as freed) */
	assert_int_equal(src.nr_samples, 2);
	sample_is(&src, 0, 5, 500000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!realloc");
	sample_is(&src, 1, 8, 16, 1, G "/lib/libc.so.6!calloc");
	assert_non_null(src.defaults.exc);
	hs_source_release(&src);
	/* up to 4.5 ms: 0x3000 (300000) allocated at 4 ms, freed at 5 */
	build(&t, HS_MEM_LEAKS, NAN, 4.5, &src, NULL);
	assert_int_equal(src.nr_samples, 1);
	sample_is(&src, 0, 4, 300000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x40;/lib/libc.so.6!malloc");
	hs_source_release(&src);
	/* from 1.5 ms to 2.5 ms: the 40 bytes, freed after the range */
	build(&t, HS_MEM_LEAKS, 1.5, 2.5, &src, NULL);
	assert_int_equal(src.nr_samples, 1);
	sample_is(&src, 0, 2, 40, 1, G "/lib/libc.so.6!malloc");
	hs_source_release(&src);

	/* heap in use: 100, 140, 100, 300100, 300000, 500000 (the peak, at
	 * 5 ms), 500008, then 500016 at 8 ms (the replaced block counted once) */
	build(&t, HS_MEM_PEAK, NAN, NAN, &src, &info);
	assert_int_equal(info.peak_ns, 8 * MS);
	assert_true(info.peak_bytes == 500016);
	assert_int_equal(src.nr_samples, 2);
	hs_source_release(&src);
	build(&t, HS_MEM_PEAK, 0, 6, &src, &info);
	assert_int_equal(info.peak_ns, 5 * MS);
	assert_true(info.peak_bytes == 500000);
	assert_int_equal(src.nr_samples, 1);
	sample_is(&src, 0, 5, 500000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!realloc");
	hs_source_release(&src);
	/* a range in which the heap only shrinks: the heap as it starts */
	build(&t, HS_MEM_PEAK, 2.5, 3.5, &src, &info);
	assert_int_equal(info.peak_ns, 2500000);
	assert_true(info.peak_bytes == 140);
	assert_int_equal(src.nr_samples, 2);
	sample_is(&src, 0, 1, 100, 1, F "/lib/libc.so.6!malloc");
	sample_is(&src, 1, 2, 40, 1, G "/lib/libc.so.6!malloc");
	hs_source_release(&src);
	peak_ranges_without_events(&t);

	/* temporary: the 40 bytes (freed next), the 300000 (realloc'ed next) */
	build(&t, HS_MEM_TEMPORARY, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, 2);
	sample_is(&src, 0, 2, 40, 1, G "/lib/libc.so.6!malloc");
	sample_is(&src, 1, 4, 300000, 1,
		  ROOT "LargeAlloc;/lib/libc.so.6!0x20;/bin/app!0x40;/lib/libc.so.6!malloc");
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);
}

static void sampled_frees_carry_their_weight(void **state)
{
	struct hs_stack_source src;
	struct hs_trace t;
	struct tb b;
	double w100 = 1.0 / (1.0 - exp(-100.0 / 1000)), w40 = 1.0 / (1.0 - exp(-0.04));

	(void)state;
	build_heap(&b, 1000);
	tb_load(&b, &t);
	build(&t, HS_MEM_NET, NAN, NAN, &src, NULL);
	sample_is(&src, 0, 1, 100 * w100, w100, F "/lib/libc.so.6!malloc");
	sample_is(&src, 2, 3, -40 * w40, -w40, G "/lib/libc.so.6!malloc");
	sample_is(&src, 4, 4, -100 * w100, -w100, F "/lib/libc.so.6!malloc");
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);
}

static void symbols_name_frames_with_locations(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source src;
	struct hs_memview_info info;
	struct hs_trace t;
	const char *file;
	uint32_t line, s;
	struct tb b;

	(void)state;
	build_heap(&b, 0);
	add_symbols(&b);
	tb_load(&b, &t);
	o.large_threshold = 0;
	o.size_classes = 1;
	assert_int_equal(hs_memview_build(&t, &o, &src, &info, &diag), 0);
	assert_true(info.symbolized);
	assert_string_equal(stack_of(&src, 0), ROOT "Alloc < 128;/lib/libc.so.6!?;/bin/app!f;"
				"/bin/app!helper (inline);/lib/libc.so.6!malloc");
	assert_string_equal(stack_of(&src, 1), ROOT "Alloc < 64;/lib/libc.so.6!?;/bin/app!g;"
				"/lib/libc.so.6!malloc");
	assert_string_equal(stack_of(&src, 2), ROOT "Alloc < 524288;/lib/libc.so.6!?;/bin/app!g;"
				"/lib/libc.so.6!malloc");
	/* each frame's line: the leaf's caller chain, innermost first */
	s = src.stack_caller[src.stack[0]];	/* helper (inline) */
	file = hs_source_loc(&src, hs_source_stack_loc(&src, s), &line);
	assert_string_equal(file, "/src/h.h");
	assert_int_equal(line, 3);
	s = src.stack_caller[s];		/* f */
	file = hs_source_loc(&src, hs_source_stack_loc(&src, s), &line);
	assert_string_equal(file, "/src/app.c");
	assert_int_equal(line, 10);
	s = src.stack_caller[s];		/* libc!? has no location */
	assert_int_equal(hs_source_stack_loc(&src, s), 0);
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * Known exit-time allocations of the leaks view: recognised by the frames
 * that allocate (the first frames above the allocator's own, in one
 * module), not by any frame of the stack. Modules: a plugin (1), libc (2),
 * the dynamic linker (3); every block is leaked.
 *   plugin_setup under _dl_init            777  the plugin's
 *   __strdup under plugin_setup             10  the plugin's (strdup is the allocator's)
 *   fopen under main                        20  the program's
 *   _IO_file_doallocate under main        4096  exit-time
 *   _dl_new_object under _dl_init          100  exit-time
 *   _dlfo_alloc (inline) in _dl_find_object_update under _dl_init
 *                                          200  exit-time
 */
static void exit_time_allocations(void **state)
{
	static const struct {
		unsigned mod;
		uint64_t off;
		const char *fn, *inl;
	} sym[] = {
		{ 3, 0x20, "_dl_init", NULL }, { 1, 0x10, "plugin_setup", NULL },
		{ 1, 0x50, "main", NULL }, { 2, 0x30, "_IO_file_doallocate", NULL },
		{ 2, 0x40, "__strdup", NULL }, { 3, 0x60, "_dl_new_object", NULL },
		{ 2, 0x50, "fopen", NULL },
		{ 3, 0x70, "_dl_find_object_update", "_dlfo_alloc" },
	};
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_leak_totals lt;
	struct hs_stack_source src;
	struct hs_symw w;
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	size_t i;

	(void)state;
	tb_init(&b);
	p = tb_p(&b);
	p = put_process_sampled(p, 0);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/opt/plug.so");
	p = put_module(p, 0, 2, 0x9000, 0x9000, 0xa000, "/lib/libc.so.6");
	p = put_module(p, 0, 3, 0x5000, 0x5000, 0x6000, "/lib/ld-linux-x86-64.so.2");
	p = put_span(p, 10, 0, 0);
	p = put_thread_start(p, 0, "main");
	p = put_node(p, 1, 0, 0x1050);		/* main */
	p = put_node(p, 2, 1, 0x5020);		/* _dl_init */
	p = put_node(p, 3, 2, 0x1010);		/* plugin_setup */
	p = put_node(p, 4, 3, 0x9040);		/* __strdup */
	p = put_node(p, 5, 1, 0x9050);		/* fopen */
	p = put_node(p, 6, 1, 0x9030);		/* _IO_file_doallocate */
	p = put_node(p, 7, 2, 0x5060);		/* _dl_new_object */
	p = put_node(p, 8, 2, 0x5070);		/* _dlfo_alloc (inline) */
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1 * MS, 0x1000, 777, 3);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x1000, 10, 4);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x1000, 20, 5);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x1000, 4096, 6);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x2000, 100, 7);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x1000, 200, 8);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 1);
	assert_int_equal(hs_symw_init(&w, b.seq, tb_emit, &b), 0);
	for (i = 0; i < sizeof(sym) / sizeof(sym[0]); i++) {
		struct hs_symw_frame f[2] = {
			{ sym[i].inl, "/src/x.c", 1, HS_TSYM_INLINE },
			{ sym[i].fn, "/src/x.c", 2, 0 },
		};

		int n = sym[i].inl ? 2 : 1;

		assert_int_equal(hs_symw_add(&w, sym[i].mod, sym[i].off, HS_TSYM_FOUND, NULL,
					     f + 2 - n, (unsigned)n), 0);
	}
	assert_int_equal(hs_symw_finish(&w), 0);
	hs_symw_release(&w);
	tb_load(&b, &t);

	build(&t, HS_MEM_LEAKS, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, 6);
#define R "Process app (77);Thread (10) main;"
#define KNOWN R HS_EXIT_TIME_FRAME ";"
#define M "/opt/plug.so!main;"
#define DL M "/lib/ld-linux-x86-64.so.2!_dl_init;"
#define LEAF ";/lib/libc.so.6!malloc"
	assert_string_equal(stack_of(&src, 0), R DL "/opt/plug.so!plugin_setup" LEAF);
	assert_string_equal(stack_of(&src, 1), R DL "/opt/plug.so!plugin_setup;"
			    "/lib/libc.so.6!__strdup" LEAF);
	assert_string_equal(stack_of(&src, 2), R M "/lib/libc.so.6!fopen" LEAF);
	assert_string_equal(stack_of(&src, 3),
			    KNOWN M "/lib/libc.so.6!_IO_file_doallocate" LEAF);
	assert_string_equal(stack_of(&src, 4), KNOWN DL "/lib/ld-linux-x86-64.so.2!"
			    "_dl_new_object" LEAF);
	assert_string_equal(stack_of(&src, 5), KNOWN DL "/lib/ld-linux-x86-64.so.2!"
			    "_dl_find_object_update;"
			    "/lib/ld-linux-x86-64.so.2!_dlfo_alloc (inline)" LEAF);
#undef R
#undef KNOWN
#undef M
#undef DL
#undef LEAF
	/* the default ExcPats leave out those, and stats counts them apart */
	assert_string_equal(src.defaults.exc, HS_PRESET_LEAK_SUPPRESS);
	assert_int_equal(hs_heap_leaks(&src, 0, NULL, &lt, &diag), 0);
	assert_true(lt.bytes == 807 && lt.blocks == 3);
	assert_true(lt.suppressed_bytes == 4396 && lt.suppressed_blocks == 3);
	hs_source_release(&src);
	/* the other views have no such frame */
	build(&t, HS_MEM_ALLOC, NAN, NAN, &src, NULL);
	for (i = 0; i < src.nr_samples; i++)
		assert_null(strstr(stack_of(&src, i), HS_EXIT_TIME_FRAME));
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * Mappings: 0x100000 + 3 pages at 1 ms; the middle page unmapped at 2 ms
 * (a split); 0x200000 + 1 page at 3 ms, mapped over at 4 ms by 0x200000
 * + 2 pages; at 5 ms everything from 0x100000 to 0x202000 unmapped, holes
 * included.
 */
static void mappings(void **state)
{
	struct hs_stack_source src;
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	double sum = 0;
	size_t i;

	(void)state;
	p = start_app(&b);
	p = put_mmap(&b, p, 1 * MS, 0x100000, 3 * 4096, 1);
	p = put_munmap(&b, p, 1 * MS, 4096, 4096);
	p = put_mmap(&b, p, 1 * MS, 0x200000 - 0x101000, 4096, 1);
	p = put_mmap(&b, p, 1 * MS, 0, 2 * 4096, 1);
	p = put_munmap(&b, p, 1 * MS, 0x100000 - 0x200000, 0x102000);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	tb_load(&b, &t);
	assert_true(hs_memview_offered(&t, HS_MEM_MMAP));
	build(&t, HS_MEM_MMAP, NAN, NAN, &src, NULL);
	for (i = 0; i < src.nr_samples; i++)
		sum += src.metric[i];
	assert_true(sum == 0);
	/* one sample per stack and time: what happens in one tick adds up */
	assert_int_equal(src.nr_samples, 5);
	sample_is(&src, 0, 1, 3 * 4096, 1, ROOT "/bin/app!0x10;mmap");
	/* a hole in the middle: the mapping stays one block */
	sample_is(&src, 1, 2, -4096, 0, ROOT "/bin/app!0x10;mmap");
	sample_is(&src, 2, 3, 4096, 1, ROOT "/bin/app!0x10;mmap");
	/* the remap replaces the page mapped there: -1 page, +2 pages */
	sample_is(&src, 3, 4, 4096, 0, ROOT "/bin/app!0x10;mmap");
	/* the last munmap: the two pieces of the first mapping (one block,
	 * gone with its last piece), then the second mapping */
	sample_is(&src, 4, 5, -4 * 4096, -2, ROOT "/bin/app!0x10;mmap");
	for (i = 0, sum = 0; i < src.nr_samples; i++)
		sum += src.count[i];
	assert_true(sum == 0);
	hs_source_release(&src);
	/* no heap events: every heap view is empty, and allowed */
	build(&t, HS_MEM_PEAK, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, 0);
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);
}

static void names_and_list(void **state)
{
	enum hs_memview_kind k;
	struct hs_trace t;
	struct tb b;
	json_t *list;
	char *s;

	(void)state;
	assert_int_equal(hs_memview_parse("temporary", &k), 0);
	assert_int_equal(k, HS_MEM_TEMPORARY);
	assert_string_equal(hs_memview_name(HS_MEM_PEAK), "peak");
	assert_int_equal(hs_memview_parse("Peak", &k), -EINVAL);
	assert_null(hs_memview_name(HS_MEM__COUNT));
	build_heap(&b, 0);
	tb_load(&b, &t);
	assert_false(hs_memview_offered(&t, HS_MEM_MMAP));
	list = hs_memview_list_json(&t);
	assert_non_null(list);
	assert_int_equal(json_array_size(list), 5);
	s = json_dumps(json_array_get(list, 0), JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(s, "{\"default\":true,\"description\":\"every allocation, frees "
			       "ignored\",\"name\":\"alloc\"}");
	free(s);
	json_decref(list);
	hs_trace_release(&t);
	free(b.buf);
}

/* Write @b to a temporary file; its name in @path (room for 32). */
static void to_file(const struct tb *b, char *path)
{
	int fd;

	strcpy(path, "/tmp/hs-memviews-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->buf, b->len), (ssize_t)b->len);
	close(fd);
}

/* The view of @path streamed equals the view of the loaded trace. */
static void same_both_ways(const char *path, const struct tb *b, enum hs_memview_kind kind,
			   size_t nr_samples)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source a, c;
	struct hs_trace t;
	size_t i;

	o.kind = kind;
	assert_int_equal(hs_memview_build_path(path, &o, &a, NULL, &diag), 0);
	assert_int_equal(hs_trace_load_mem(b->buf, b->len, "t", &t, &diag), 0);
	assert_int_equal(hs_memview_build(&t, &o, &c, NULL, &diag), 0);
	assert_int_equal(a.nr_samples, nr_samples);
	assert_int_equal(c.nr_samples, nr_samples);
	for (i = 0; i < a.nr_samples; i++) {
		char sa[1024];

		strcpy(sa, stack_of(&a, i));
		assert_string_equal(sa, stack_of(&c, i));
		assert_true(a.time[i] == c.time[i]);
		assert_true(a.metric[i] == c.metric[i]);
		assert_true(a.count[i] == c.count[i]);
	}
	hs_source_release(&a);
	hs_source_release(&c);
	hs_trace_release(&t);
}

/*
 * A malloc() of @size bytes at @addr from stack 1, or its free(), a
 * microsecond after the record before; *@at, the address that record
 * named (what the next one's delta is from), moves to @addr.
 */
static uint8_t *alloc_at(struct tb *b, uint8_t *p, uint64_t *at, uint64_t addr,
			 uint64_t size)
{
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000, (int64_t)(addr - *at), size, 1);
	*at = addr;
	return p;
}

static uint8_t *free_at(struct tb *b, uint8_t *p, uint64_t *at, uint64_t addr)
{
	p = put_free(b, p, 1000, (int64_t)(addr - *at));
	*at = addr;
	return p;
}

/*
 * Many blocks (the live table grows, the blocks are placed in order),
 * some of 4 GiB or more (kept beside the table's 32-bit sizes): 1000
 * blocks of 16 + i bytes at 0x100000 + 64 i, a microsecond apart, but
 * block 500 of 5 GiB + 3, 700 of 2^32 - 1 and 701 of 2^32 - 2; the even
 * ones freed; then at block 1 (live) 6 GiB, then 9 bytes over it, and at
 * block 3 (live) 7 GiB: allocations over live blocks, so their frees
 * were missed.
 */
#define MANY 1000
static uint64_t many_size(size_t i)
{
	return i == 500 ? (5ull << 30) + 3 : i == 700 ? 0xffffffffull
			: i == 701 ? 0xfffffffeull : 16 + i;
}

static void build_many(struct tb *b)
{
	uint64_t at = 0;
	uint8_t *p;
	size_t i;

	p = start_app(b);
	for (i = 0; i < MANY; i++)
		p = alloc_at(b, p, &at, 0x100000 + 64 * i, many_size(i));
	for (i = 0; i < MANY; i += 2)
		p = free_at(b, p, &at, 0x100000 + 64 * i);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000, (int64_t)(0x100040 - at), 6ull << 30, 1);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000, 0, 9, 1);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000, 0x80, 7ull << 30, 1);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void many_blocks_and_huge_sizes(void **state)
{
	struct hs_memview_info info;
	struct hs_stack_source src;
	struct hs_trace t;
	double all = 0, odd = 0, bytes, count;
	char path[64];
	struct tb b;
	size_t i;

	(void)state;
	for (i = 0; i < MANY; i++) {
		all += (double)many_size(i);
		if (i & 1)
			odd += (double)many_size(i);
	}
	odd += 9 - (double)many_size(1) + (double)(7ull << 30) - (double)many_size(3);
	build_many(&b);
	tb_load(&b, &t);
	/* the peak: every block, after the last first allocation, in order */
	build(&t, HS_MEM_PEAK, NAN, NAN, &src, &info);
	assert_true(info.peak_bytes == all);
	assert_int_equal(info.peak_ns, (int64_t)MANY * 1000);
	assert_int_equal(src.nr_samples, MANY);
	for (i = 0; i < MANY; i++) {
		assert_true(src.time[i] == (int64_t)(i + 1) * 1000);
		assert_true(src.metric[i] == (double)many_size(i));
	}
	hs_source_release(&src);
	/* leaks: the odd blocks, 1 and 3 as reallocated, in time order */
	build(&t, HS_MEM_LEAKS, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, MANY / 2);
	hs_source_totals(&src, &bytes, &count);
	assert_true(bytes == odd);
	assert_true(count == MANY / 2);
	for (i = 1; i < src.nr_samples; i++)
		assert_true(src.time[i] > src.time[i - 1]);
	assert_true(src.metric[src.nr_samples - 1] == (double)(7ull << 30));
	hs_source_release(&src);
	/* net: the same bytes, the missed frees taken back */
	build(&t, HS_MEM_NET, NAN, NAN, &src, &info);
	hs_source_totals(&src, &bytes, &count);
	assert_true(bytes == odd);
	assert_true(count == MANY / 2);
	assert_int_equal(info.missed_frees, 3);
	hs_source_release(&src);
	hs_trace_release(&t);
	to_file(&b, path);
	same_both_ways(path, &b, HS_MEM_PEAK, MANY);
	same_both_ways(path, &b, HS_MEM_LEAKS, MANY / 2);
	unlink(path);
	free(b.buf);
}

/*
 * The peak's blocks, most of them gone since ("ghosts"): 200 blocks of
 * 32 + i bytes at 0x200000 + 64 i, a microsecond apart, block 150 of
 * 5 GiB; then all but every tenth freed in a shuffled order (7 i mod
 * 200), block 150 among them; then 50 blocks of 8 bytes that come too
 * late for the peak. The peak view has the 200 in order: the table's 20
 * and the 180 ghosts, placed together in the table's memory.
 */
#define GHOSTS 200
static uint64_t ghost_size(size_t i)
{
	return i == 150 ? (5ull << 30) : 32 + i;
}

static void build_ghosts(struct tb *b)
{
	uint64_t at = 0;
	uint8_t *p;
	size_t i;

	p = start_app(b);
	for (i = 0; i < GHOSTS; i++)
		p = alloc_at(b, p, &at, 0x200000 + 64 * i, ghost_size(i));
	for (i = 0; i < GHOSTS; i++) {
		size_t k = 7 * i % GHOSTS;

		if (k % 10)
			p = free_at(b, p, &at, 0x200000 + 64 * k);
	}
	for (i = 0; i < 50; i++)
		p = alloc_at(b, p, &at, 0x400000 + 64 * i, 8);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void peak_with_ghosts(void **state)
{
	struct hs_memview_info info;
	struct hs_stack_source src;
	struct hs_trace t;
	double all = 0;
	char path[64];
	struct tb b;
	size_t i;

	(void)state;
	for (i = 0; i < GHOSTS; i++)
		all += (double)ghost_size(i);
	build_ghosts(&b);
	tb_load(&b, &t);
	build(&t, HS_MEM_PEAK, NAN, NAN, &src, &info);
	assert_true(info.peak_bytes == all);
	assert_int_equal(info.peak_ns, (int64_t)GHOSTS * 1000);
	assert_int_equal(src.nr_samples, GHOSTS);
	for (i = 0; i < GHOSTS; i++) {
		assert_true(src.time[i] == (int64_t)(i + 1) * 1000);
		assert_true(src.metric[i] == (double)ghost_size(i));
		assert_true(src.count[i] == 1);
	}
	hs_source_release(&src);
	/* leaks: the 20 left and the 50 late ones, in time order */
	build(&t, HS_MEM_LEAKS, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, GHOSTS / 10 + 50);
	for (i = 1; i < src.nr_samples; i++)
		assert_true(src.time[i] > src.time[i - 1]);
	hs_source_release(&src);
	hs_trace_release(&t);
	to_file(&b, path);
	same_both_ways(path, &b, HS_MEM_PEAK, GHOSTS);
	same_both_ways(path, &b, HS_MEM_LEAKS, GHOSTS / 10 + 50);
	unlink(path);
	free(b.buf);
}

/*
 * A trace that ended by exec: the exec freed the image's heap, so its
 * live blocks are no leaks (loaded and streamed); its other views keep
 * them.
 */
static void no_leaks_after_exec(void **state)
{
	struct hs_stack_source src;
	struct hs_trace t;
	char path[32];
	struct tb b;
	uint8_t *p;

	(void)state;
	build_heap(&b, 0);
	p = put_end(tb_p(&b), 9 * MS, HS_END_EXEC, 0);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_END, 0);
	tb_load(&b, &t);
	assert_true(t.has_end && t.end_reason == HS_END_EXEC);
	build(&t, HS_MEM_LEAKS, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, 0);
	hs_source_release(&src);
	/* the same blocks were live at its peak */
	build(&t, HS_MEM_PEAK, NAN, NAN, &src, NULL);
	assert_true(src.nr_samples > 0);
	hs_source_release(&src);
	hs_trace_release(&t);
	to_file(&b, path);
	same_both_ways(path, &b, HS_MEM_LEAKS, 0);
	unlink(path);
	free(b.buf);
}

static uint8_t *put_sample(struct tb *b, uint8_t *p, uint64_t ticks, uint64_t tid,
			   unsigned kind, uint64_t dur, uint64_t stack)
{
	uint8_t body[64], *q = hs_enc_sample_body(body, ticks, tid, kind, dur, stack);

	b->events++;
	return hs_tw_sized(p, HS_TAG_SAMPLE, body, (size_t)(q - body));
}

/*
 * Samples of thread 10 ("main"), written by the sampler thread 11:
 *   cpu   at 20 ms, 10 ms of CPU, in f (node 2: libc 0x20 -> app 0x10)
 *   cpu   at 30 ms, 4 ms, no stack
 *   wall  at 25 ms, 1 ms CPU_TIME in f; at 26 ms, 1 ms BLOCKED_TIME in f;
 *         at 28 ms, 2 ms READIED_TIME in f (format 1.3)
 *   a kind from a newer version (skipped)
 */
static void build_samples(struct tb *b, int no_heap)
{
	uint8_t *p, body[64], *q = body;

	tb_init(b);
	p = tb_p(b);
	p = put_process_sampled(p, 0);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_module(p, 0, 2, 0x9000, 0x9000, 0xa000, "/lib/libc.so.6");
	p = put_span(p, 10, 0, 0);
	p = put_thread_start(p, 0, "main");
	p = put_span(p, 11, 0, 0);
	p = put_thread_start(p, 0, "heapscope");
	q = hs_enc_sampling_body(q, 0, 999, 999, 64, (uint64_t)no_heap);
	p = hs_tw_sized(p, HS_TAG_SAMPLING, body, (size_t)(q - body));
	p = put_node(p, 1, 0, 0x9020);
	p = put_node(p, 2, 1, 0x1010);
	p = put_sample(b, p, 20 * MS, 10, HS_SAMPLE_CPU, 10 * MS, 2);
	p = put_sample(b, p, 25 * MS, 10, HS_SAMPLE_WALL_CPU, 1 * MS, 2);
	p = put_sample(b, p, 26 * MS, 10, HS_SAMPLE_WALL_BLOCKED, 1 * MS, 2);
	p = put_sample(b, p, 28 * MS, 10, HS_SAMPLE_WALL_READY, 2 * MS, 2);
	p = put_sample(b, p, 30 * MS, 10, HS_SAMPLE_CPU, 4 * MS, 0);
	p = put_sample(b, p, 31 * MS, 10, 7, 4 * MS, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void cpu_and_wall_samples(void **state)
{
	struct hs_stack_source src;
	struct hs_filter_params fp = HS_FILTER_PARAMS_INIT;
	struct hs_filtered f;
	struct hs_trace t;
	struct tb b;
	uint32_t s;
	double m, c;
	json_t *list;
	char *js;

	(void)state;
	build_samples(&b, 0);
	tb_load(&b, &t);
	assert_true(t.sampling.present);
	assert_int_equal(t.sampling.cpu_hz, 999);
	assert_int_equal(t.sampling.cpu_samples, 2);
	assert_int_equal(t.sampling.wall_samples, 3);
	assert_true(hs_memview_offered(&t, HS_MEM_CPU));
	assert_true(hs_memview_offered(&t, HS_MEM_WALL));
	assert_true(hs_memview_offered(&t, HS_MEM_ALLOC));

	/* cpu: over [ticks - duration, ticks], metric in ms, TimeMetric */
	build(&t, HS_MEM_CPU, NAN, NAN, &src, NULL);
	assert_int_equal(src.kind, HS_METRIC_TIME);
	assert_string_equal(src.metric_unit, "ms");
	assert_int_equal(src.nr_samples, 2);
	sample_is(&src, 0, 10, 10, 1, ROOT "/lib/libc.so.6!0x20;/bin/app!0x10");
	sample_is(&src, 1, 26, 4, 1, "Process app (77);Thread (10) main");
	/* a range prorates them: [15, 28] ms keeps 5 of the first, 2 of the second */
	fp.start_ms = 15;
	fp.end_ms = 28;
	assert_int_equal(hs_filter_apply(&src, &fp, &f, NULL), 0);
	assert_int_equal(hs_filtered_sample(&f, 0, &s, &m, &c), 1);
	assert_true(fabs(m - 5.0006) < 1e-9);
	assert_true(c == 1);
	assert_int_equal(hs_filtered_sample(&f, 1, &s, &m, &c), 1);
	assert_true(fabs(m - 2.0006) < 1e-9);
	hs_filtered_release(&f);
	hs_source_release(&src);

	/* wall: the leaf says whether the thread ran, was blocked or waited */
	build(&t, HS_MEM_WALL, NAN, NAN, &src, NULL);
	assert_int_equal(src.kind, HS_METRIC_TIME);
	assert_int_equal(src.nr_samples, 3);
	sample_is(&src, 0, 24, 1, 1, F "CPU_TIME");
	sample_is(&src, 1, 25, 1, 1, F "BLOCKED_TIME");
	sample_is(&src, 2, 26, 2, 1, F "READIED_TIME (waiting for cpu)");
	hs_source_release(&src);

	/* the heap views have no samples */
	build(&t, HS_MEM_ALLOC, NAN, NAN, &src, NULL);
	assert_int_equal(src.nr_samples, 0);
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);

	/* --no-heap: only the sample views are offered, cpu first by default */
	build_samples(&b, 1);
	tb_load(&b, &t);
	assert_false(hs_memview_offered(&t, HS_MEM_ALLOC));
	list = hs_memview_list_json(&t);
	assert_non_null(list);
	assert_int_equal(json_array_size(list), 2);
	js = json_dumps(list, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(strstr(js, "\"default\":true,\"description\":\"CPU samples"));
	assert_non_null(strstr(js, "\"default\":false,\"description\":\"wall-clock"));
	free(js);
	json_decref(list);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * When: a thread busy all the time (ten CPU samples of 10 ms back to back,
 * [0, 100] ms) is 100% of one CPU in every bucket ('A'), because each
 * sample is spread over the buckets its interval covers, and two such
 * threads are 200% ('K'). The first bucket starts 0.0006 ms before 0, so
 * it is a hair under ('9', 'J').
 */
static void cpu_when_is_percent_of_one_cpu(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_view_opts vo = { .kind = HS_VIEW_BYNAME };
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	struct hs_trace t;
	struct tb b;
	uint8_t *q;
	size_t i;
	int k;

	(void)state;
	tb_init(&b);
	q = tb_p(&b);
	q = put_process_sampled(q, 0);
	q = put_span(q, 10, 0, 0);
	q = put_thread_start(q, 0, "busy");
	q = put_span(q, 12, 0, 0);
	q = put_thread_start(q, 0, "also");
	q = put_span(q, 11, 0, 0);
	for (k = 1; k <= 10; k++) {
		q = put_sample(&b, q, (uint64_t)k * 10 * MS, 10, HS_SAMPLE_CPU, 10 * MS, 0);
		q = put_sample(&b, q, (uint64_t)k * 10 * MS, 12, HS_SAMPLE_CPU, 10 * MS, 0);
	}
	tb_end(&b, q);
	tb_chunk(&b, HS_CHUNK_EVENTS, 1);
	tb_load(&b, &t);
	build(&t, HS_MEM_CPU, NAN, NAN, &src, NULL);
	assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
	assert_int_equal(hs_view_build(&v, &ct, &vo), 0);
	for (i = 0; i < v.nr_rows; i++) {
		if (!strcmp(v.rows[i].name, "Thread (10) busy"))
			assert_string_equal(v.rows[i].when, "9AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
		if (!strcmp(v.rows[i].name, "ROOT"))
			assert_string_equal(v.rows[i].when, "JKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK");
	}
	assert_int_equal(v.nr_rows, 4);	/* ROOT, Process and the two threads */
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
	hs_trace_release(&t);
	free(b.buf);
}

/* The same views streamed from a file. */
static void cpu_samples_streamed(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source src;
	char path[32];
	struct tb b;

	(void)state;
	build_samples(&b, 0);
	to_file(&b, path);
	o.kind = HS_MEM_CPU;
	assert_int_equal(hs_memview_build_path(path, &o, &src, NULL, &diag), 0);
	assert_int_equal(src.nr_samples, 2);
	sample_is(&src, 0, 10, 10, 1, ROOT "/lib/libc.so.6!0x20;/bin/app!0x10");
	hs_source_release(&src);
	unlink(path);
	free(b.buf);
}

static int count_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	(void)ev;
	*(size_t *)ctx += n;
	return 0;
}

static void streamed_like_loaded(void **state)
{
	static const enum hs_memview_kind kinds[] = {
		HS_MEM_ALLOC, HS_MEM_NET, HS_MEM_LEAKS, HS_MEM_TEMPORARY, HS_MEM_PEAK,
	};
	static const size_t samples[] = { 6, 10, 2, 2, 2 };
	struct hs_trace_sink sink = { .events = count_events };
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace t;
	char path[32];
	size_t i, n = 0;
	struct tb b;

	(void)state;
	build_heap(&b, 0);
	add_symbols(&b);
	to_file(&b, path);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		same_both_ways(path, &b, kinds[i], samples[i]);
	/* the stream itself: every event, a realloc counted twice */
	sink.ctx = &n;
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	assert_int_equal(n, 10);
	assert_int_equal(t.nr_events, 0);
	assert_int_equal(t.nr_nodes, 3);
	assert_true(t.syms.present);
	hs_trace_release(&t);
	unlink(path);
	free(b.buf);
}

/*
 * Two threads in one tick: thread 11 frees 0x1000 and allocates 0x2000,
 * but its records come after thread 10's, which allocates 0x1000 again
 * in the same tick (it got the block back); a node defined after the
 * event that uses it; then thread 10 at an earlier time (out of order).
 */
static void build_ties(struct tb *b, int out_of_order)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process_sampled(p, 0);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 11, 0, 0);
	p = put_node(p, 2, 0, 0x1020);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1 * MS, 0x1000, 10, 2);	/* 1 ms: 0x1000 */
	p = put_span(p, 10, 2 * MS, 0x1000);
	p = put_alloc(b, p, HS_TAG_MALLOC, 0, 0, 30, 1);	/* 2 ms: 0x1000 again */
	p = put_node(p, 1, 0, 0x1010);				/* defined after its use */
	p = put_span(p, 11, 2 * MS, 0x1000);
	p = put_free(b, p, 0, 0);				/* 2 ms: frees 0x1000 */
	p = put_alloc(b, p, HS_TAG_MALLOC, 0, 0x1000, 20, 2);	/* 2 ms: 0x2000 */
	if (out_of_order) {
		p = put_span(p, 10, 1 * MS, 0x9000);
		p = put_alloc(b, p, HS_TAG_MALLOC, 0, 0, 5, 1);
	}
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

/*
 * Two threads: 10 allocates 40 bytes at 0x1000 (1 ms), 11 allocates 50 at
 * 0x8000 (2 ms), 10 frees its block (3 ms), 11 its own (4 ms). Each was
 * its thread's latest allocation when it was freed: both are temporary,
 * though 11's allocation came between 10's allocation and free.
 */
static void build_two_threads(struct tb *b)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process_sampled(p, 0);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 10, 0, 0);
	p = put_node(p, 1, 0, 0x1010);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1 * MS, 0x1000, 40, 1);
	p = put_span(p, 11, 1 * MS, 0);
	p = put_node(p, 2, 0, 0x1020);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1 * MS, 0x8000, 50, 2);
	p = put_span(p, 10, 1 * MS, 0x1000);
	p = put_free(b, p, 2 * MS, 0);
	p = put_span(p, 11, 2 * MS, 0x8000);
	p = put_free(b, p, 2 * MS, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

/*
 * A sampled trace of thread 10 (N = 1000): 100 bytes at 0x1000 freed by
 * a FREE (the collector saw an unsampled allocation in between), then 200
 * bytes at 0x2000 freed by a FREE_TEMPORARY. @flags: the PROCESS flags.
 */
static void build_marked(struct tb *b, unsigned flags)
{
	static const char *const argv[] = { "./app" };
	struct hs_process_info info = {
		.pid = 77, .ppid = 1, .page_size = 4096, .sample_bytes = 1000,
		.max_depth = 128, .clock = HS_CLOCK_NS, .flags = flags,
		.exe = "/bin/app", .comm = "app", .cwd = "/", .argc = 1, .argv = argv,
	};
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = hs_tw_process(p, &info);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 10, 0, 0);
	p = put_node(p, 1, 0, 0x1010);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1 * MS, 0x1000, 100, 1);
	p = put_free(b, p, 1 * MS, 0);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1 * MS, 0x1000, 200, 1);
	b->events++;
	p = hs_enc_free(p, HS_TAG_FREE_TEMPORARY, 1 * MS, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void temporary_per_thread_and_marked(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	double w100 = 1.0 / (1.0 - exp(-0.1)), w200 = 1.0 / (1.0 - exp(-0.2));
	struct hs_stack_source src;
	char path[32];
	struct tb b;

	(void)state;
	o.kind = HS_MEM_TEMPORARY;
	build_two_threads(&b);
	to_file(&b, path);
	same_both_ways(path, &b, HS_MEM_TEMPORARY, 2);
	assert_int_equal(hs_memview_build_path(path, &o, &src, NULL, &diag), 0);
	sample_is(&src, 0, 1, 40, 1, "Process app (77);Thread (10);/bin/app!0x10;malloc");
	sample_is(&src, 1, 2, 50, 1, "Process app (77);Thread (11);/bin/app!0x20;malloc");
	hs_source_release(&src);
	unlink(path);
	free(b.buf);

	/* the marks say which sampled blocks were temporary */
	build_marked(&b, HS_PROC_TEMPORARY_MARKS);
	to_file(&b, path);
	same_both_ways(path, &b, HS_MEM_TEMPORARY, 1);
	assert_int_equal(hs_memview_build_path(path, &o, &src, NULL, &diag), 0);
	sample_is(&src, 0, 3, 200 * w200, w200,
		  "Process app (77);Thread (10);/bin/app!0x10;malloc");
	hs_source_release(&src);
	unlink(path);
	free(b.buf);

	/* a trace without them (before 1.5): the recorded allocations decide */
	build_marked(&b, 0);
	to_file(&b, path);
	same_both_ways(path, &b, HS_MEM_TEMPORARY, 2);
	assert_int_equal(hs_memview_build_path(path, &o, &src, NULL, &diag), 0);
	sample_is(&src, 0, 1, 100 * w100, w100,
		  "Process app (77);Thread (10);/bin/app!0x10;malloc");
	hs_source_release(&src);
	unlink(path);
	free(b.buf);
}

static void streamed_ties_and_order(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace_sink sink = { .events = count_events };
	struct hs_stack_source src;
	struct hs_trace t;
	char path[32];
	size_t n = 0;
	struct tb b;

	(void)state;
	build_ties(&b, 0);
	to_file(&b, path);
	/* the free of thread 11 goes before the allocation of thread 10 */
	same_both_ways(path, &b, HS_MEM_NET, 3);
	o.kind = HS_MEM_NET;
	assert_int_equal(hs_memview_build_path(path, &o, &src, NULL, &diag), 0);
	sample_is(&src, 0, 1, 10, 1, "Process app (77);Thread (11);/bin/app!0x20;malloc");
	/* at 2 ms: -10 and +20 on thread 11's stack, +30 on thread 10's */
	sample_is(&src, 1, 2, 10, 0, "Process app (77);Thread (11);/bin/app!0x20;malloc");
	sample_is(&src, 2, 2, 30, 1, "Process app (77);Thread (10);/bin/app!0x10;malloc");
	hs_source_release(&src);
	same_both_ways(path, &b, HS_MEM_LEAKS, 2);
	/* thread 11's first block: freed before any other allocation */
	same_both_ways(path, &b, HS_MEM_TEMPORARY, 1);
	unlink(path);
	free(b.buf);

	/* an event written after later ones of another thread: put back in
	 * its place */
	build_ties(&b, 1);
	to_file(&b, path);
	sink.ctx = &n;
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	assert_int_equal(n, 5);
	hs_trace_release(&t);
	same_both_ways(path, &b, HS_MEM_NET, 4);
	same_both_ways(path, &b, HS_MEM_ALLOC, 4);
	unlink(path);
	free(b.buf);
}

/*
 * A complete trace whose footer indexes its chunks: thread 10 allocates
 * and frees at 1..5 ms in chunk 0, thread 11 at 2 and 3 ms in chunk 1
 * (written late), reusing addresses thread 10 freed in the same tick.
 */
static void indexed_late_thread(void **state)
{
	struct hs_trace_sink sink = { .events = count_events };
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_chunk_index idx[2];
	uint64_t counts[HS_FC__COUNT] = { 0 };
	uint8_t *p;
	struct hs_trace t;
	char path[32];
	size_t n = 0;
	int i;
	struct tb b;

	(void)state;
	tb_init(&b);
	p = tb_p(&b);
	p = put_process_sampled(p, 0);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 10, 0, 0x1000);
	p = put_node(p, 1, 0, 0x1010);
	p = put_node(p, 2, 0, 0x1020);
	for (i = 1; i <= 5; i++) {
		p = put_alloc(&b, p, HS_TAG_MALLOC, 1 * MS, 0, 100, 1);
		p = put_free(&b, p, 0, 0);
	}
	tb_end(&b, p);
	idx[0].offset = b.len;
	tb_chunk(&b, HS_CHUNK_EVENTS, 1);
	idx[0].first_ticks = 0;
	idx[0].last_ticks = 5 * MS;
	p = tb_p(&b);
	p = put_span(p, 11, 2 * MS, 0x1000);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0, 7, 2);	/* 2 ms at 0x1000 */
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1 * MS, 0x100, 9, 2);	/* 3 ms */
	tb_end(&b, p);
	idx[1].offset = b.len;
	tb_chunk(&b, HS_CHUNK_EVENTS, 1);
	idx[1].first_ticks = 2 * MS;
	idx[1].last_ticks = 3 * MS;
	p = tb_p(&b);
	p = put_end(p, 6 * MS, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, idx, 2);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_END, 1);
	to_file(&b, path);
	sink.ctx = &n;
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	assert_int_equal(n, 12);
	assert_false(t.cut_off);
	hs_trace_release(&t);
	/* one sample per tick of thread 10 (its malloc and free add up),
	 * one per block of thread 11 */
	same_both_ways(path, &b, HS_MEM_NET, 7);
	same_both_ways(path, &b, HS_MEM_ALLOC, 7);
	same_both_ways(path, &b, HS_MEM_TEMPORARY, 5);
	/* thread 10's block at 3 ms takes 0x1000 from thread 11's (whose
	 * free was missed): the 9 bytes are left */
	same_both_ways(path, &b, HS_MEM_LEAKS, 1);
	unlink(path);
	free(b.buf);
}

/* Frame a stored chunk of @n bytes at @payload onto @b. */
static void raw_chunk(struct tb *b, const uint8_t *payload, size_t n, uint32_t seq)
{
	uint8_t h[HS_CHUNK_HEADER_SIZE];

	hs_tw_chunk_header(h, HS_CHUNK_EVENTS, 0, (uint32_t)n, (uint32_t)n, seq, payload);
	tb_put(b, h, sizeof(h));
	tb_put(b, payload, n);
}

/*
 * 400000 events of thread 10 (one malloc and free per ms), then one of
 * thread 11 at 1 ms: far later in the file than a window of events kept
 * back would reach, in a file cut off before its footer. The stream
 * rebuilds the chunk index from the chunks, so it knows where the late
 * event is and streams the file (without it, it gave up and the view
 * was built from the loaded trace: all of its events in memory).
 */
static void streamed_too_late(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace_sink sink = { .events = count_events };
	static uint8_t payload[1 << 16];
	struct hs_stack_source src;
	struct hs_trace t;
	uint8_t *p = payload;
	size_t i, n = 0;
	uint32_t seq = 0;
	char path[32];
	struct tb b;

	(void)state;
	tb_init(&b);
	p = put_process_sampled(p, 0);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_node(p, 1, 0, 0x1010);
	for (i = 0; i < 200000; i++) {
		int first = 0;

		if (p - payload > (1 << 16) - 64) {
			raw_chunk(&b, payload, (size_t)(p - payload), seq++);
			p = payload;
		}
		if (p == payload || i == 0) {
			p = put_span(p, 10, i * MS, 0x1000);
			first = 1;
		}
		p = put_alloc(&b, p, HS_TAG_MALLOC, first ? 0 : 1 * MS, 0, 16, 1);
		p = put_free(&b, p, 0, 0);
	}
	p = put_span(p, 11, 1 * MS, 0x5000);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0, 8, 1);
	raw_chunk(&b, payload, (size_t)(p - payload), seq++);
	to_file(&b, path);
	sink.ctx = &n;
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	assert_true(t.stream_index_rebuilt);
	assert_int_equal(n, 400001);
	hs_trace_release(&t);
	o.kind = HS_MEM_NET;
	assert_int_equal(hs_memview_build_path(path, &o, &src, NULL, &diag), 0);
	/* one sample per tick (the thread's malloc and free add up), the
	 * other thread's block in its place, at 1 ms */
	assert_int_equal(src.nr_samples, 200001);
	assert_true(src.time[0] == 0 && src.metric[0] == 0);
	assert_true(src.time[1] == 1 * MS && src.time[2] == 1 * MS);
	assert_true(src.metric[1] + src.metric[2] == 8);
	hs_source_release(&src);
	unlink(path);
	free(b.buf);
}

/*
 * A main thread that allocates at the start and frees at exit, while
 * thread 10 allocates and frees IDLE_PAIRS times per chunk in IDLE_CHUNKS
 * chunks; thread 11's one allocation, made at 3.5 chunks' time, is
 * written only in chunk 6 (the thread was stopped). The chunk index says
 * what the collector's writer says: each chunk's first ticks are its
 * threads' times before it, so the last chunk's are 0 (the main thread's).
 * The stream keeps a few chunks' events back, not the whole trace (it
 * reads ahead what the last chunk and chunk 6 really hold), and puts
 * thread 11's allocation in its place.
 */
#define IDLE_CHUNKS 24
#define IDLE_PAIRS 500
#define IDLE_TICK 10000

static void streamed_idle_main_thread(void **state)
{
	struct hs_trace_sink sink = { .events = count_events };
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_chunk_index idx[IDLE_CHUNKS];
	uint64_t counts[HS_FC__COUNT] = { 0 };
	uint64_t last10 = 0, late = (3 * IDLE_PAIRS + IDLE_PAIRS / 2) * IDLE_TICK;
	static uint8_t payload[1 << 16];
	uint8_t h[HS_CHUNK_HEADER_SIZE], *p;
	struct hs_trace t;
	uint32_t seq = 0;
	char path[32];
	size_t i, k, n = 0;
	struct tb b;

	(void)state;
	tb_init(&b);
	for (k = 0; k < IDLE_CHUNKS; k++) {
		uint64_t first = last10;

		p = payload;
		if (k == 0) {
			p = put_process_sampled(p, 0);
			p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
			p = put_node(p, 1, 0, 0x1010);
			p = put_span(p, 1, 0, 0);
			p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x9000, 64, 1);
		}
		if (k == 6) {
			p = put_span(p, 11, late, 0);
			p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x7000, 8, 1);
			first = late;
		}
		p = put_span(p, 10, last10, 0x1000);
		for (i = 0; i < IDLE_PAIRS; i++) {
			p = put_alloc(&b, p, HS_TAG_MALLOC, IDLE_TICK, 0, 100, 1);
			p = put_free(&b, p, 0, 0);
			last10 += IDLE_TICK;
		}
		idx[k].last_ticks = last10;
		if (k == IDLE_CHUNKS - 1) {
			p = put_span(p, 1, 0, 0x9000);
			p = put_free(&b, p, (int64_t)(last10 + IDLE_TICK), 0);
			first = 0;
			idx[k].last_ticks = last10 + IDLE_TICK;
		}
		idx[k].offset = b.len;
		idx[k].first_ticks = first;
		raw_chunk(&b, payload, (size_t)(p - payload), seq++);
	}
	p = put_end(payload, last10 + IDLE_TICK, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, idx, IDLE_CHUNKS);
	hs_tw_chunk_header(h, HS_CHUNK_END, 0, (uint32_t)(p - payload),
			   (uint32_t)(p - payload), seq, payload);
	tb_put(&b, h, sizeof(h));
	tb_put(&b, payload, (size_t)(p - payload));
	to_file(&b, path);
	sink.ctx = &n;
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	assert_int_equal(n, 2 * IDLE_PAIRS * IDLE_CHUNKS + 3);
	/* the events from thread 11's time on, until chunk 6 is read
	 * (waiting for the main thread, it kept all 24003 back) */
	assert_true(t.stream_staged_max > 0);
	assert_true(t.stream_staged_max <= 4 * 2 * IDLE_PAIRS);
	hs_trace_release(&t);
	/* one sample per tick of thread 10 (its malloc and free add up),
	 * the main thread's two, thread 11's one */
	same_both_ways(path, &b, HS_MEM_NET, IDLE_PAIRS * IDLE_CHUNKS + 3);
	/* thread 11's 8 bytes */
	same_both_ways(path, &b, HS_MEM_LEAKS, 1);
	unlink(path);
	free(b.buf);
}

static void out_of_memory(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source src;
	struct hs_trace t;
	struct tb b;
	long n;
	int k, err;

	(void)state;
	build_heap(&b, 0);
	add_symbols(&b);
	tb_load(&b, &t);
	o.size_classes = 1;
	for (k = 0; k < HS_MEM__COUNT; k++) {
		o.kind = (enum hs_memview_kind)k;
		for (n = 0;; n++) {
			hs_alloc_fail_after(n);
			err = hs_memview_build(&t, &o, &src, NULL, &diag);
			hs_alloc_fail_after(-1);
			hs_source_release(&src);
			if (!err)
				break;
			assert_int_equal(err, -ENOMEM);
		}
	}
	hs_trace_release(&t);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alloc_and_net),
		cmocka_unit_test(leaks_peak_temporary),
		cmocka_unit_test(many_blocks_and_huge_sizes),
		cmocka_unit_test(peak_with_ghosts),
		cmocka_unit_test(no_leaks_after_exec),
		cmocka_unit_test(exit_time_allocations),
		cmocka_unit_test(sampled_frees_carry_their_weight),
		cmocka_unit_test(symbols_name_frames_with_locations),
		cmocka_unit_test(mappings),
		cmocka_unit_test(names_and_list),
		cmocka_unit_test(streamed_like_loaded),
		cmocka_unit_test(streamed_ties_and_order),
		cmocka_unit_test(temporary_per_thread_and_marked),
		cmocka_unit_test(streamed_too_late),
		cmocka_unit_test(indexed_late_thread),
		cmocka_unit_test(streamed_idle_main_thread),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(cpu_and_wall_samples),
		cmocka_unit_test(cpu_samples_streamed),
		cmocka_unit_test(cpu_when_is_percent_of_one_cpu),
	};
	return cmocka_run_group_tests_name("memviews", tests, NULL, NULL);
}
