/*
 * Tests of the symbol section: the writer's chunks read back through the
 * reader, node -> entry resolution (module-relative addresses, no
 * module), the last section winning, and malformed or damaged sections.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "format/trace_reader.h"
#include "format/trace_symbols.h"
#include "trace_builder.h"

/*
 * Two modules: /bin/app at bias 0x1000 (0x1000-0x2000), /lib/libc.so.6 at
 * bias 0x9000; nodes 1 (libc 0x9020), 2 (app 0x1010, parent 1), 3 (an
 * address in no module, parent 2); one malloc on node 3.
 */
static void build_events(struct tb *b)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process(p);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_module(p, 0, 2, 0x9000, 0x9000, 0xa000, "/lib/libc.so.6");
	p = put_span(p, 10, 0, 0);
	p = put_node(p, 1, 0, 0x9020);
	p = put_node(p, 2, 1, 0x1010);
	p = put_node(p, 3, 2, 0x7f0000);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000, 0x500, 100, 3);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
	tb_end(b, put_end(tb_p(b), 2000, HS_END_EXIT, 0));
	tb_chunk(b, HS_CHUNK_END, 0);
}

/* One more chunk of events: a malloc at 5000 ns on node 2. */
static void add_event_chunk(struct tb *b)
{
	uint8_t *p = tb_p(b);

	p = put_span(p, 10, 5000, 0);
	p = put_alloc(b, p, HS_TAG_MALLOC, 0, 0x900, 8, 2);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 0);
}

/* A section naming app!0x10 (two frames: inline + function), libc!0x20. */
static void add_section(struct tb *b, const char *fn_name)
{
	struct hs_symw w;
	struct hs_symw_frame app[2] = {
		{ "inner", "/src/inner.h", 7, HS_TSYM_INLINE },
		{ fn_name, "/src/app.c", 42, 0 },
	};
	struct hs_symw_frame libc = { "__libc_start_main", NULL, 0, 0 };
	struct hs_symw_frame jit = { "js_function", NULL, 0, 0 };

	assert_int_equal(hs_symw_init(&w, b->seq, tb_emit, b), 0);
	assert_int_equal(hs_symw_add(&w, 1, 0x10, HS_TSYM_FOUND, NULL, app, 2), 0);
	assert_int_equal(hs_symw_add(&w, 2, 0x20, HS_TSYM_FOUND, NULL, &libc, 1), 0);
	assert_int_equal(hs_symw_add(&w, 0, 0x7f0000, HS_TSYM_FOUND, "/tmp/perf-1.map",
				     &jit, 1), 0);
	/* bad arguments add nothing */
	assert_int_equal(hs_symw_add(&w, 1, 0x99, HS_TSYM__COUNT, NULL, &libc, 1), -EINVAL);
	assert_int_equal(hs_symw_add(&w, 1, 0x99, HS_TSYM_FOUND, NULL, &libc, 0), -EINVAL);
	assert_int_equal(hs_symw_finish(&w), 0);
	assert_int_equal(w.nr_entries, 3);
	hs_symw_release(&w);
}

static void section_round_trip(void **state)
{
	const struct hs_trace_sym *sym;
	const struct hs_trace_sym_frame *f;
	struct hs_trace t;
	struct tb b;
	size_t data_len;

	(void)state;
	build_events(&b);
	data_len = b.len;
	add_section(&b, "main");
	tb_load(&b, &t);
	assert_true(t.syms.present);
	assert_false(t.cut_off);	/* the section does not hide the END */
	assert_int_equal(t.data_end, data_len);
	assert_int_equal(t.data_chunks, 2);
	assert_int_equal(t.nr_nodes, 3);
	/* node 2: app 0x1010 - bias 0x1000 */
	assert_int_equal(hs_trace_node_syms(&t, 1, &sym, &f), 2);
	assert_int_equal(sym->status, HS_TSYM_FOUND);
	assert_string_equal(hs_trace_sym_module(&t, sym), "/bin/app");
	assert_string_equal(hs_trace_sym_str(&t, f[0].function), "inner");
	assert_string_equal(hs_trace_sym_str(&t, f[0].file), "/src/inner.h");
	assert_int_equal(f[0].line, 7);
	assert_int_equal(f[0].flags, HS_TSYM_INLINE);
	assert_string_equal(hs_trace_sym_str(&t, f[1].function), "main");
	assert_int_equal(f[1].line, 42);
	assert_int_equal(f[1].flags, 0);
	/* node 1: libc, no file */
	assert_int_equal(hs_trace_node_syms(&t, 0, &sym, &f), 1);
	assert_string_equal(hs_trace_sym_module(&t, sym), "/lib/libc.so.6");
	assert_null(hs_trace_sym_str(&t, f[0].file));
	/* node 3: no module, named from a perf map */
	assert_int_equal(hs_trace_node_syms(&t, 2, &sym, &f), 1);
	assert_int_equal(sym->module, 0);
	assert_string_equal(hs_trace_sym_module(&t, sym), "/tmp/perf-1.map");
	assert_string_equal(hs_trace_sym_str(&t, f[0].function), "js_function");
	assert_null(hs_trace_sym_str(&t, 0));
	assert_null(hs_trace_sym_str(&t, 1000));
	hs_trace_release(&t);
	free(b.buf);
}

static void last_section_counts(void **state)
{
	const struct hs_trace_sym *sym;
	const struct hs_trace_sym_frame *f;
	struct hs_trace t;
	struct tb b;

	(void)state;
	/* a section, more events, a new section: only the new one is kept */
	build_events(&b);
	add_section(&b, "old");
	add_event_chunk(&b);
	add_section(&b, "new");
	tb_load(&b, &t);
	assert_int_equal(hs_trace_node_syms(&t, 1, &sym, &f), 2);
	assert_string_equal(hs_trace_sym_str(&t, f[1].function), "new");
	assert_int_equal(t.syms.nr_str, 7);	/* the old section's strings are gone */
	assert_true(t.cut_off);		/* the last data chunk is not END */
	hs_trace_release(&t);
	free(b.buf);
}

static void no_section_no_symbols(void **state)
{
	const struct hs_trace_sym *sym;
	const struct hs_trace_sym_frame *f;
	struct hs_trace t;
	struct tb b;

	(void)state;
	build_events(&b);
	tb_load(&b, &t);
	assert_false(t.syms.present);
	assert_int_equal(hs_trace_node_syms(&t, 1, &sym, &f), 0);
	assert_int_equal(t.data_end, b.len);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * A SYMBOLS chunk holding the records at @rec (@n bytes) after
 * build_events(): what is wrong with the section (NULL: nothing).
 */
static const char *load_bad(const uint8_t *rec, size_t n)
{
	struct hs_trace t;
	struct tb b;
	const char *what;

	build_events(&b);
	memcpy(b.payload, rec, n);
	b.plen = n;
	tb_chunk(&b, HS_CHUNK_SYMBOLS, 1);
	tb_load(&b, &t);
	what = t.sym_damage.what;
	/* the events are whole; the damaged section gives no names */
	assert_int_equal(t.nr_events, 1);
	assert_false(t.cut_off);
	if (what) {
		assert_false(t.syms.present);
		assert_int_equal(t.sym_damage.offset, t.data_end);
	}
	hs_trace_release(&t);
	free(b.buf);
	return what;
}

/* Malformed records: the section is dropped, saying what is wrong. */
static void malformed_sections(void **state)
{
	uint8_t rec[64], body[32], *p, *q;

	(void)state;
	/* an address naming string 1 before any string */
	q = body;
	q = hs_put_varint(q, 1);
	q = hs_put_varint(q, 0x10);
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 1);
	q = hs_put_varint(q, 1);	/* function: string 1, unknown */
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 0);
	p = hs_tw_sized(rec, HS_TAG_SYM_ADDR, body, (size_t)(q - body));
	assert_string_equal(load_bad(rec, (size_t)(p - rec)), "malformed symbol record");
	/* a module that does not exist */
	body[0] = 9;
	p = hs_tw_sized(rec, HS_TAG_SYM_ADDR, body, (size_t)(q - body));
	assert_non_null(load_bad(rec, (size_t)(p - rec)));
	/* no frames */
	q = body;
	q = hs_put_varint(q, 1);
	q = hs_put_varint(q, 0x10);
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 0);
	p = hs_tw_sized(rec, HS_TAG_SYM_ADDR, body, (size_t)(q - body));
	assert_non_null(load_bad(rec, (size_t)(p - rec)));
	/* a record cut short */
	p = hs_tw_sized(rec, HS_TAG_SYM_ADDR, body, 3);
	assert_non_null(load_bad(rec, (size_t)(p - rec)));
	/* an event record, which has no place there */
	p = put_span(rec, 10, 0, 0);
	assert_non_null(load_bad(rec, (size_t)(p - rec)));
	/* strings alone are fine */
	p = hs_tw_sized(rec, HS_TAG_SYM_STRING, (const uint8_t *)"abc", 3);
	assert_null(load_bad(rec, (size_t)(p - rec)));
}

/*
 * A symbol section cut off or with any byte changed (but its chunk's
 * kind) is dropped, saying where: the trace is read whole, without names.
 */
static void damaged_section_is_dropped(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace t;
	struct tb b;
	size_t data_len, i;
	uint8_t *copy;

	(void)state;
	build_events(&b);
	data_len = b.len;
	add_section(&b, "main");
	copy = malloc(b.len);
	assert_non_null(copy);
	for (i = data_len; i <= b.len; i++) {
		/* cut at @i */
		assert_int_equal(hs_trace_load_mem(b.buf, i, "t", &t, &diag), 0);
		assert_false(t.cut_off);
		assert_int_equal(t.nr_events, 1);
		assert_int_equal(t.syms.present, i == b.len);
		if (i == data_len || i == b.len) {
			assert_null(t.sym_damage.what);
		} else {
			assert_string_equal(t.sym_damage.what, "cut off");
			assert_int_equal(t.sym_damage.offset, data_len);
		}
		hs_trace_release(&t);
		/* byte @i changed */
		if (i == b.len || i == data_len + 4)
			continue;
		memcpy(copy, b.buf, b.len);
		copy[i] ^= 0x21;
		assert_int_equal(hs_trace_load_mem(copy, b.len, "t", &t, &diag), 0);
		assert_false(t.cut_off);
		assert_int_equal(t.nr_events, 1);
		assert_false(t.syms.present);
		assert_non_null(t.sym_damage.what);
		assert_int_equal(t.sym_damage.offset, data_len);
		hs_trace_release(&t);
	}
	free(copy);
	free(b.buf);
}

/*
 * A section in several chunks, the second damaged: the rest of it is
 * skipped and all of it dropped; a later section is read.
 */
static void damage_drops_the_whole_section(void **state)
{
	struct hs_symw_frame f = { "f", NULL, 0, 0 };
	struct hs_trace t;
	struct hs_symw w;
	struct tb b;
	size_t second;

	(void)state;
	build_events(&b);
	assert_int_equal(hs_symw_init(&w, b.seq, tb_emit, &b), 0);
	w.chunk_bytes = 1;	/* a chunk per entry */
	assert_int_equal(hs_symw_add(&w, 1, 0x10, HS_TSYM_FOUND, NULL, &f, 1), 0);
	second = b.len;
	assert_int_equal(hs_symw_add(&w, 2, 0x20, HS_TSYM_FOUND, NULL, &f, 1), 0);
	assert_int_equal(hs_symw_add(&w, 0, 0x7f0000, HS_TSYM_FOUND, NULL, &f, 1), 0);
	assert_int_equal(hs_symw_finish(&w), 0);
	assert_int_equal(w.nr_chunks, 3);
	hs_symw_release(&w);
	b.buf[second + HS_CHUNK_HEADER_SIZE] ^= 1;
	tb_load(&b, &t);
	assert_false(t.syms.present);
	assert_int_equal(t.sym_damage.offset, second);
	assert_string_equal(t.sym_damage.what, "chunk check does not match its content");
	assert_int_equal(t.nr_chunks, 5);
	hs_trace_release(&t);

	/* more events, then a new section: read, the damage forgotten */
	add_event_chunk(&b);
	add_section(&b, "new");
	tb_load(&b, &t);
	assert_true(t.syms.present);
	assert_null(t.sym_damage.what);
	assert_int_equal(t.nr_events, 2);
	hs_trace_release(&t);
	free(b.buf);
}

/* Every allocation failure while reading a section is reported cleanly. */
static void out_of_memory(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace t;
	struct tb b;
	long n;
	int err;

	(void)state;
	build_events(&b);
	add_section(&b, "main");
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_trace_load_mem(b.buf, b.len, "t", &t, &diag);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	assert_true(t.syms.present);
	hs_trace_release(&t);
	free(b.buf);
}

/* tb_load() of the first @n bytes of @b. */
static void tb_load_n(struct tb *b, size_t n, struct hs_trace *t)
{
	struct hs_diag diag = HS_DIAG_INIT("t");

	assert_int_equal(hs_trace_load_mem(b->buf, n, "t", t, &diag), 0);
}

/* Write @n bytes of @data to a new temporary file; its path into @path. */
static void write_file(char *path, size_t size, const uint8_t *data, size_t n)
{
	FILE *f;
	int fd;

	snprintf(path, size, "%s/test_trace_symbols.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/*
 * A trace ends with its data when it is whole chunks up to END and no
 * section: not cut inside a chunk or before END, not symbolized. Its END
 * record (hs_trace_peek_end()) is read with or without the section.
 */
static void ends_with_data(void **state)
{
	char path[256];
	struct tb b;
	size_t data_len, events_end, cut;
	unsigned reason;

	(void)state;
	build_events(&b);
	data_len = b.len;
	events_end = b.chunk_end[0];
	add_section(&b, "main");
	write_file(path, sizeof(path), b.buf, data_len);
	assert_int_equal(hs_trace_ends_with_data(path), 1);
	reason = 99;
	assert_int_equal(hs_trace_peek_end(path, &reason), 1);
	assert_int_equal(reason, HS_END_EXIT);
	unlink(path);
	/* symbolized, or cut anywhere: no (the END record is still there
	 * after a section, gone from a cut) */
	write_file(path, sizeof(path), b.buf, b.len);
	assert_int_equal(hs_trace_ends_with_data(path), 0);
	reason = 99;
	assert_int_equal(hs_trace_peek_end(path, &reason), 1);
	assert_int_equal(reason, HS_END_EXIT);
	unlink(path);
	for (cut = 0; cut < data_len; cut += cut < events_end ? 7 : 1) {
		write_file(path, sizeof(path), b.buf, cut);
		assert_int_equal(hs_trace_ends_with_data(path), 0);
		assert_int_equal(hs_trace_peek_end(path, &reason), 0);
		unlink(path);
	}
	assert_int_equal(hs_trace_ends_with_data(path), 0);	/* no file */
	assert_int_equal(hs_trace_peek_end(path, &reason), 0);
	free(b.buf);
}

/*
 * The section a symbolizer appended, read after the data: the trace read
 * before it gets the names it would have read itself, or the damage; a
 * file with more data, or a trace cut off, gives nothing.
 */
static void section_read_after_the_data(void **state)
{
	const struct hs_trace_sym *sym;
	const struct hs_trace_sym_frame *f;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace t, whole;
	char path[256];
	struct tb b;
	size_t data_len, i;

	(void)state;
	build_events(&b);
	data_len = b.len;
	add_section(&b, "main");
	assert_int_equal(hs_trace_load_mem(b.buf, data_len, "t", &t, &diag), 0);
	assert_false(t.syms.present);
	write_file(path, sizeof(path), b.buf, b.len);
	assert_int_equal(hs_trace_syms_read(&t, path, &diag), 0);
	unlink(path);
	/* what a reader of the whole file has */
	tb_load(&b, &whole);
	assert_true(t.syms.present);
	assert_int_equal(t.syms.offset, whole.syms.offset);
	assert_int_equal(t.syms.nr_sym, whole.syms.nr_sym);
	assert_int_equal(t.syms.nr_str, whole.syms.nr_str);
	for (i = 0; i < t.nr_nodes; i++)
		assert_int_equal(t.syms.node_sym[i], whole.syms.node_sym[i]);
	assert_int_equal(hs_trace_node_syms(&t, 1, &sym, &f), 2);
	assert_string_equal(hs_trace_sym_module(&t, sym), "/bin/app");
	assert_string_equal(hs_trace_sym_str(&t, f[1].function), "main");
	assert_null(t.sym_damage.what);
	hs_trace_release(&whole);
	/* no section: none (read again: the one read before goes) */
	write_file(path, sizeof(path), b.buf, data_len);
	assert_int_equal(hs_trace_syms_read(&t, path, &diag), 0);
	unlink(path);
	assert_false(t.syms.present);
	assert_int_equal(hs_trace_node_syms(&t, 1, &sym, &f), 0);
	/* a section cut short: dropped, and the damage said as a reader says it */
	for (i = data_len + 1; i < b.len; i += 5) {
		write_file(path, sizeof(path), b.buf, i);
		tb_load_n(&b, i, &whole);
		assert_int_equal(hs_trace_syms_read(&t, path, &diag), 0);
		unlink(path);
		assert_int_equal(t.syms.present, whole.syms.present);
		assert_int_equal(t.syms.nr_sym, whole.syms.nr_sym);
		assert_string_equal(t.sym_damage.what, whole.sym_damage.what);
		assert_int_equal(t.sym_damage.offset, whole.sym_damage.offset);
		hs_trace_release(&whole);
	}
	hs_trace_release(&t);
	/* more data after @t's (one more chunk of events): refused */
	assert_int_equal(hs_trace_load_mem(b.buf, data_len, "t", &t, &diag), 0);
	add_event_chunk(&b);
	add_section(&b, "other");
	write_file(path, sizeof(path), b.buf, b.len);
	assert_int_equal(hs_trace_syms_read(&t, path, &diag), -EINVAL);
	assert_false(t.syms.present);
	hs_trace_release(&t);
	/* a trace cut off has no END to read the section after */
	assert_int_equal(hs_trace_load_mem(b.buf, data_len - 1, "t", &t, &diag), 0);
	assert_true(t.cut_off);
	assert_int_equal(hs_trace_syms_read(&t, path, &diag), -EINVAL);
	assert_false(t.syms.present);
	unlink(path);
	hs_trace_release(&t);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(section_round_trip),
		cmocka_unit_test(last_section_counts),
		cmocka_unit_test(no_section_no_symbols),
		cmocka_unit_test(malformed_sections),
		cmocka_unit_test(damaged_section_is_dropped),
		cmocka_unit_test(damage_drops_the_whole_section),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(ends_with_data),
		cmocka_unit_test(section_read_after_the_data),
	};
	return cmocka_run_group_tests_name("trace_symbols", tests, NULL, NULL);
}
