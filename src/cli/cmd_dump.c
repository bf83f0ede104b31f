/*
 * cmd_dump - `heapscope dump`: a trace's records as text, for debugging
 * and tests; or its events in time order with their stacks; or totals.
 */
#include "analysis/totals.h"
#include "cli/cli.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const unwind_names[] = {"libunwind", "fp", "slow"};
static const char *const end_names[] = {"exit", "signal", "exec", "_exit", "stopped"};
static const char *const footer_names[HS_FC__COUNT] = {
    "allocs", "frees",	 "reallocs", "mmaps", "munmaps", "mremaps",
    "nodes",  "modules", "threads",  "bytes", "lost",
};

static void print_str(const char *key, const uint8_t *s, size_t n)
{
	size_t i;

	printf(" %s=\"", key);
	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			printf("\\%c", s[i]);
		else if (s[i] < 0x20 || s[i] >= 0x7f)
			printf("\\x%02x", s[i]);
		else
			putchar(s[i]);
	}
	putchar('"');
}

static void print_process(const struct hs_rec *rec)
{
	struct hs_trace_info info;
	const char *why = "";
	size_t i;

	if (hs_trace_info_decode(rec->body, rec->body_len, &info, &why)) {
		printf("process (malformed: %s)\n", why);
		return;
	}
	printf("process pid=%" PRIu64 " ppid=%" PRIu64 " page_size=%" PRIu64
	       " sample_bytes=%" PRIu64 " max_depth=%" PRIu64 " unwind=%s clock=%s"
	       " start=%" PRIu64 " flags=0x%x parent_pid=%" PRIu64,
	       info.pid, info.ppid, info.page_size, info.sample_bytes, info.max_depth,
	       info.unwind < 3 ? unwind_names[info.unwind] : "?",
	       info.clock ? "tsc" : "ns", info.start_realtime_ns, info.flags,
	       info.parent_pid);
	print_str("exe", (const uint8_t *)info.exe, strlen(info.exe));
	print_str("comm", (const uint8_t *)info.comm, strlen(info.comm));
	print_str("cwd", (const uint8_t *)info.cwd, strlen(info.cwd));
	printf("\nargv");
	for (i = 0; i < info.argc; i++)
		print_str("", (const uint8_t *)info.argv[i], strlen(info.argv[i]));
	putchar('\n');
	hs_trace_info_release(&info);
}

static void print_footer(const struct hs_rec *rec)
{
	const uint8_t *q = rec->body, *end = rec->body + rec->body_len;
	uint64_t counts[HS_FC__COUNT], n, i, at;
	struct hs_chunk_index e;

	printf("footer");
	if (hs_footer_counts(&q, end, counts)) {
		printf(" (malformed)\n");
		return;
	}
	for (i = 0; i < HS_FC__COUNT; i++)
		printf(" %s=%" PRIu64, footer_names[i], counts[i]);
	if (hs_footer_index_len(&q, end, &n)) {
		printf(" (malformed)\n");
		return;
	}
	printf(" index=%" PRIu64 "\n", n);
	for (i = 0; i < n; i++) {
		if (hs_footer_index_next(&q, end, &e)) {
			printf("  (malformed index)\n");
			return;
		}
		printf("  chunk at %" PRIu64 " ticks %" PRIu64 "..%" PRIu64 "\n",
		       e.offset, e.first_ticks, e.last_ticks);
	}
	if (hs_footer_marks_len(&q, end, &n))
		return; /* before 1.4, or malformed */
	printf("  chunks with records other than events (by index entry):");
	for (i = 0, at = 0; i < n; i++) {
		if (hs_footer_mark_next(&q, end, i, &at)) {
			printf(" (malformed)\n");
			return;
		}
		printf(" %" PRIu64, at);
	}
	putchar('\n');
}

/* A symbol record: strings with their number, addresses with their frames. */
static void print_sym(const struct hs_rec *rec)
{
	const uint8_t *q = rec->body, *end = rec->body + rec->body_len;
	uint64_t v[5], f[4], i;

	if (rec->tag == HS_TAG_SYM_STRING) {
		printf("sym-string");
		print_str("s", rec->body, rec->body_len);
		putchar('\n');
		return;
	}
	for (i = 0; i < 5; i++)
		if (hs_get_varint(&q, end, &v[i])) {
			printf("sym-addr (malformed)\n");
			return;
		}
	printf("sym-addr module=%" PRIu64 " addr=0x%" PRIx64 " status=%" PRIu64
	       " modname=%" PRIu64 " frames=%" PRIu64,
	       v[0], v[1], v[2], v[3], v[4]);
	for (i = 0; i < v[4] && i < HS_SYM_FRAMES_MAX; i++) {
		if (hs_get_varint(&q, end, &f[0]) || hs_get_varint(&q, end, &f[1]) ||
		    hs_get_varint(&q, end, &f[2]) || hs_get_varint(&q, end, &f[3])) {
			printf(" (malformed)");
			break;
		}
		printf(" [fn=%" PRIu64 " file=%" PRIu64 " line=%" PRIu64 "%s]", f[0],
		       f[1], f[2], f[3] & HS_TSYM_INLINE ? " inline" : "");
	}
	putchar('\n');
}

static void print_record(const struct hs_rec *rec)
{
	const char *name = hs_tag_name(rec->tag);
	unsigned tag = rec->tag;

	if (tag == HS_TAG_PROCESS) {
		print_process(rec);
		return;
	}
	if (tag == HS_TAG_FOOTER) {
		print_footer(rec);
		return;
	}
	if (!name) {
		printf("unknown tag=0x%02x bytes=%zu\n", tag, rec->body_len);
		return;
	}
	if (tag == HS_TAG_SYM_STRING || tag == HS_TAG_SYM_ADDR) {
		print_sym(rec);
		return;
	}
	if (tag == HS_TAG_SPAN) {
		printf("span tid=%" PRIu64 " ticks=%" PRIu64 " addr=0x%" PRIx64 "\n",
		       rec->tid, rec->ticks, rec->addr);
		return;
	}
	if (tag == HS_TAG_NODE) {
		printf("node id=%" PRIu64 " parent=%" PRIu64 " addr=0x%" PRIx64 "\n",
		       rec->id, rec->parent, rec->addr);
		return;
	}
	printf("%s", name);
	if (tag < HS_TAG_SIZED_FIRST)
		printf(" tid=%" PRIu64, rec->tid);
	printf(" t=%" PRIu64, rec->ticks);
	if (hs_tag_is_alloc(tag)) {
		printf(" addr=0x%" PRIx64 " size=%" PRIu64 " stack=%" PRIu64, rec->addr,
		       rec->size, rec->stack);
		if (hs_tag_is_realloc(tag))
			printf(" old=0x%" PRIx64 " lead=%" PRIu64, rec->old_addr,
			       rec->lead);
		if (hs_tag_has_align(tag))
			printf(" align=%" PRIu64, rec->align);
	}
	switch (tag) {
	case HS_TAG_FREE:
	case HS_TAG_REALLOC_FREE:
	case HS_TAG_FREE_TEMPORARY:
		printf(" addr=0x%" PRIx64, rec->addr);
		break;
	case HS_TAG_MMAP:
		printf(" addr=0x%" PRIx64 " length=%" PRIu64 " prot=0x%" PRIx64
		       " flags=0x%" PRIx64 " stack=%" PRIu64,
		       rec->addr, rec->size, rec->prot, rec->flags, rec->stack);
		break;
	case HS_TAG_MUNMAP:
		printf(" addr=0x%" PRIx64 " length=%" PRIu64, rec->addr, rec->size);
		break;
	case HS_TAG_MREMAP:
		printf(" addr=0x%" PRIx64 " length=%" PRIu64 " stack=%" PRIu64
		       " old=0x%" PRIx64 " old_length=%" PRIu64,
		       rec->addr, rec->size, rec->stack, rec->old_addr, rec->old_size);
		break;
	case HS_TAG_CLOCK:
		printf(" ns=%" PRIu64, rec->value);
		break;
	case HS_TAG_RSS:
		printf(" bytes=%" PRIu64, rec->value);
		break;
	case HS_TAG_MODULE: {
		size_t i;

		printf(" id=%" PRIu64 " bias=0x%" PRIx64 " start=0x%" PRIx64
		       " end=0x%" PRIx64,
		       rec->id, rec->bias, rec->start, rec->end);
		print_str("path", rec->str, rec->str_len);
		printf(" build_id=");
		for (i = 0; i < rec->bytes_len; i++)
			printf("%02x", rec->bytes[i]);
		break;
	}
	case HS_TAG_MODULE_UNLOAD:
		printf(" id=%" PRIu64 " next_node=%" PRIu64, rec->id, rec->parent);
		break;
	case HS_TAG_THREAD_NAME:
		if (rec->id)
			printf(" of=%" PRIu64, rec->id);
		/* fall through */
	case HS_TAG_THREAD_START:
		print_str("name", rec->str, rec->str_len);
		break;
	case HS_TAG_FORK:
		printf(" child=%" PRIu64 " followed=%" PRIu64, rec->id, rec->parent);
		break;
	case HS_TAG_EXEC:
		print_str("path", rec->str, rec->str_len);
		break;
	case HS_TAG_END:
		printf(" reason=%s detail=%" PRIu64,
		       rec->value < 5 ? end_names[rec->value] : "?", rec->detail);
		break;
	case HS_TAG_SAMPLE:
		printf(" tid=%" PRIu64 " kind=%s duration=%" PRIu64 " stack=%" PRIu64,
		       rec->id,
		       rec->value == HS_SAMPLE_CPU	      ? "cpu"
		       : rec->value == HS_SAMPLE_WALL_CPU     ? "cpu-time"
		       : rec->value == HS_SAMPLE_WALL_BLOCKED ? "blocked-time"
		       : rec->value == HS_SAMPLE_WALL_READY   ? "readied-time"
							      : "?",
		       rec->size, rec->stack);
		break;
	case HS_TAG_SAMPLING:
		printf(" cpu_hz=%" PRIu64 " wall_hz=%" PRIu64 " signal=%" PRIu64
		       " flags=%" PRIu64,
		       rec->value, rec->detail, rec->id, rec->flags);
		break;
	case HS_TAG_SAMPLING_END:
		printf(" cpu=%" PRIu64 " wall=%" PRIu64 " dropped=%" PRIu64
		       " signals=%" PRIu64,
		       rec->value, rec->detail, rec->size, rec->old_size);
		break;
	}
	putchar('\n');
}

static int dump_records(const char *path)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_trace_reader r;
	struct hs_rec rec;
	uint64_t chunks = 0;
	int ret, err;

	err = hs_trace_reader_open(&r, path, &diag);
	if (err)
		goto fail;
	printf("# %s: heapscope trace format %u.%u, %" PRIu64 " bytes\n", path, r.major,
	       r.minor, r.size);
	while ((ret = hs_trace_reader_next(&r, &rec, &diag)) == 1) {
		if (r.nr_chunks != chunks) {
			chunks = r.nr_chunks;
			printf("chunk %" PRIu64 " at %" PRIu64 ": %s, %s%s %" PRIu32
			       " -> %" PRIu32 " bytes\n",
			       chunks - 1, r.chunk_offset,
			       r.chunk.kind == HS_CHUNK_END	  ? "end"
			       : r.chunk.kind == HS_CHUNK_SYMBOLS ? "symbols"
								  : "events",
			       r.chunk.flags & HS_CHUNK_ZSTD ? "zstd" : "stored",
			       r.chunk.flags & HS_CHUNK_COLUMNS	  ? " columns"
			       : r.chunk.flags & HS_CHUNK_COMPACT ? " compact"
								  : "",
			       r.chunk.stored, r.chunk.raw);
		}
		print_record(&rec);
	}
	if (ret < 0) {
		err = ret;
		printf("# error after %" PRIu64 " records\n", r.nr_records);
		hs_trace_reader_close(&r);
		goto fail;
	}
	if (r.sym_damage.what)
		printf("# the symbol section is damaged at offset %" PRIu64 " (%s): "
		       "names are missing\n",
		       r.sym_damage.offset, r.sym_damage.what);
	if (r.cut_off)
		printf("# cut off at offset %" PRIu64 ": %" PRIu64
		       " complete chunks, %" PRIu64 " events recovered\n",
		       r.cut_offset, r.nr_chunks, r.nr_events);
	else if (!r.end_seen)
		printf("# no end chunk (the program did not finish): %" PRIu64
		       " chunks, %" PRIu64 " events recovered\n",
		       r.nr_chunks, r.nr_events);
	else
		printf("# complete: %" PRIu64 " chunks, %" PRIu64 " records, %" PRIu64
		       " events\n",
		       r.nr_chunks, r.nr_records, r.nr_events);
	hs_trace_reader_close(&r);
	return HS_EXIT_OK;
fail:
	return cli_fail_diag(&diag, err);
}

static const char *const op_names[] = {"alloc",	 "free", "mmap", "munmap",
				       "sample", "?",	 "?",	 "?"};

static int load(const char *path, struct hs_trace *t)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	int err = hs_trace_load(path, t, &diag);

	if (err) {
		return cli_fail_diag(&diag, err);
	}
	return 0;
}

static int dump_events(const char *path)
{
	struct hs_trace t;
	uint32_t *frames;
	char name[1200];
	size_t i, j, n;

	if (load(path, &t))
		return HS_EXIT_FAIL;
	frames = malloc((HS_DEPTH_LIMIT + 2) * sizeof(*frames));
	if (!frames) {
		hs_trace_release(&t);
		return cli_fail("out of memory");
	}
	for (i = 0; i < t.nr_events; i++) {
		printf("%" PRId64 " %" PRIu64 " %s %s 0x%" PRIx64 " %" PRIu64 " ",
		       t.time[i], t.threads[t.thread[i]].tid, op_names[t.op[i] & 7],
		       hs_tag_name(t.fn[i]) ? hs_tag_name(t.fn[i]) : "?", t.addr[i],
		       t.size[i]);
		if (t.stack[i] == HS_TRACE_NONE) {
			puts("-");
			continue;
		}
		n = hs_trace_stack(&t, t.stack[i], frames, HS_DEPTH_LIMIT + 2);
		for (j = n; j-- > 0;) {
			fputs(
			    frames[j] == HS_TRACE_NONE
				? "BROKEN"
				: hs_trace_frame_name(&t, frames[j], name, sizeof(name)),
			    stdout);
			putchar(j ? ';' : '\n');
		}
	}
	free(frames);
	hs_trace_release(&t);
	return HS_EXIT_OK;
}

/*
 * The totals in one streamed pass (hs_heap_totals_path()): memory bounded
 * by the live blocks, however many events the trace has.
 */
static int dump_summary(const char *path)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_heap_totals s;
	struct hs_trace t;
	uint64_t lost;
	size_t i;
	int err;

	err = hs_heap_totals_path(path, &t, &s, &diag);
	if (err) {
		if (err == -ENOMEM && !diag.set)
			return cli_fail("out of memory");
		return cli_fail_diag(&diag, err);
	}
	lost = t.has_footer ? t.footer[HS_FC_LOST] : 0;
	printf("events: %" PRIu64 "\n", s.events);
	printf("allocations: %" PRIu64 "\n", s.allocs);
	printf("bytes allocated: %" PRIu64 "\n", s.bytes_allocated);
	printf("frees: %" PRIu64 "\n", s.frees);
	printf("reallocs: %" PRIu64 "\n", s.reallocs);
	printf("mmaps: %" PRIu64 "\n", s.mmaps);
	printf("munmaps: %" PRIu64 "\n", s.munmaps);
	printf("peak heap: %" PRIu64 "\n", s.peak_heap);
	printf("leaked bytes: %" PRIu64 "\n", s.leaked_bytes);
	printf("leaked blocks: %" PRIu64 "\n", s.leaked_blocks);
	printf("unmatched frees: %" PRIu64 "\n", s.unmatched_frees);
	printf("peak rss: %" PRIu64 "\n", s.peak_rss);
	printf("nodes: %zu\n", t.nr_nodes);
	printf("missing nodes: %" PRIu64 "\n", t.missing_nodes);
	printf("modules: %zu\n", t.nr_modules);
	printf("chunks: %" PRIu64 "\n", t.nr_chunks);
	printf("sample bytes: %" PRIu64 "\n", t.info.sample_bytes);
	if (t.has_footer)
		printf("lost: %" PRIu64 "\n", lost);
	if (t.cut_off)
		printf("status: cut off at offset %" PRIu64 "\n", t.cut_offset);
	else if (lost)
		printf("status: complete, %" PRIu64 " event%s lost\n", lost,
		       cli_s((double)lost));
	else
		printf("status: complete\n");
	if (t.sym_damage.what)
		printf("symbols: damaged at offset %" PRIu64 " (%s)\n",
		       t.sym_damage.offset, t.sym_damage.what);
	if (t.has_end)
		printf("end: %s %" PRIu64 "\n",
		       t.end_reason < 5 ? end_names[t.end_reason] : "?", t.end_detail);
	printf("threads: %zu\n", t.nr_threads);
	for (i = 0; i < t.nr_threads; i++)
		printf("thread %" PRIu64 " %s allocs=%" PRIu64 " frees=%" PRIu64
		       " bytes=%" PRIu64 "\n",
		       t.threads[i].tid, t.threads[i].name ? t.threads[i].name : "-",
		       t.threads[i].allocs, t.threads[i].frees, t.threads[i].bytes);
	hs_trace_release(&t);
	return HS_EXIT_OK;
}

enum dump_mode { DUMP_RECORDS, DUMP_EVENTS, DUMP_SUMMARY };

/* --events and --summary: one of them at most */
static int mode_cb(const char *cmd, const struct cli_option *opt, void *field,
		   const char *arg)
{
	int *mode = field;

	if (*mode != DUMP_RECORDS && *mode != opt->value)
		return cli_usage_error(cmd, "--events and --summary exclude each other");
	*mode = (int)opt->value;
	return 0;
}

struct dump_opts {
	int mode; /* enum dump_mode */
};

static const struct cli_option dump_options[] = {
    OPT_CALLBACK_F(0, "events", struct dump_opts, mode, NULL,
		   "one line per event in time order: time (ns), thread,\n"
		   "operation, function, address, size and the stack, root\n"
		   "first, as module!0xOFFSET frames joined by ';'",
		   mode_cb, DUMP_EVENTS, CLI_OPTION_NO_VALUE),
    OPT_CALLBACK_F(0, "summary", struct dump_opts, mode, NULL,
		   "totals: allocations, frees, peak heap, leaks, threads", mode_cb,
		   DUMP_SUMMARY, CLI_OPTION_NO_VALUE),
    OPT_END(),
};

const struct cli_syntax cli_dump_syntax = {
    .cmd = "dump",
    .usage = "usage: heapscope dump [--events | --summary] TRACE\n",
    .intro = "Print every record of TRACE (a .heapscope file) in file order, for\n"
	     "debugging: chunks, the process record, modules, threads, stack nodes,\n"
	     "allocations and frees with their raw tick times. A trace that was cut\n"
	     "off (the program was killed) is read up to where it ends, and the last\n"
	     "line says how much was recovered; a damaged symbol section is skipped\n"
	     "and named. Events are counted as --summary counts them: a realloc of a\n"
	     "block is a free and an allocation.\n",
    .options = dump_options,
    .help_column = 14,
};

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = {DUMP_RECORDS};
	int n, status;

	n = cli_parse_options(&cli_dump_syntax, &o, argc, argv, &status);
	if (n < 0)
		return status;
	if (n > 1)
		return cli_usage_error("dump", "too many arguments");
	if (n == 0)
		return cli_usage_error("dump", "no trace file given");
	if (!strcmp(argv[0], "-"))
		return cli_usage_error("dump", "reads a trace file, not standard input");
	if (o.mode == DUMP_EVENTS)
		return dump_events(argv[0]);
	if (o.mode == DUMP_SUMMARY)
		return dump_summary(argv[0]);
	return dump_records(argv[0]);
}
