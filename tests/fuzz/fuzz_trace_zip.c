/*
 * fuzz_trace_zip - libFuzzer target for perfcollect's .trace.zip importer
 * (io/import_trace_zip.c: the perf script entry, the perf-PID.map and
 * perfinfo-PID.map side files, the modules' own maps) and the zip layer
 * every zipped format goes through (io/zipfile.c, libzip underneath).
 *
 * An input is read one of two ways:
 *  - as a zip file as it is: imported as a .trace.zip (both sources), and
 *    through hs_import_path() with the format guessed, as `heapscope
 *    report FILE` would (a .perfView.xml.zip or .json.zip then);
 *  - when it starts with "@@ ", as the entries of a zip that this target
 *    builds (stored, not compressed), so that mutations reach the map
 *    parsers instead of breaking the deflate stream: each line that starts
 *    with "@@ " names an entry and the bytes up to the next such line are
 *    its content.
 * Either way the zip is given to the importer as a memory file's
 * /proc/self/fd path. A stack source that is made must hold up
 * (fuzz_util.h); nothing may crash, leak or hang. Seeds:
 * tests/fuzz/corpus/fuzz_trace_zip/ (both kinds). The maps' memory bound
 * is lowered to 64 KiB (HEAPSCOPE_MAP_MAX), so that inputs of fuzzing's
 * size reach the path that leaves a map out.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include "fuzz_util.h"
#include "io/io.h"

#define ENTRY_MARK "@@ "
#define MAX_ENTRIES 16

static void import_zip(const uint8_t *zip, size_t size, int guess_format)
{
	enum hs_perf_view views[] = { HS_PERF_CPU, HS_PERF_THREAD_TIME };
	struct hs_stack_source src;
	char path[64];
	int fd = fuzz_memfd(zip, size, path, sizeof(path));
	size_t k;

	for (k = 0; k < sizeof(views) / sizeof(views[0]); k++) {
		struct hs_diag diag = HS_DIAG_INIT("fuzz");

		hs_source_init(&src);
		if (!hs_import_trace_zip_view(path, views[k], &src, &diag))
			fuzz_check_source(&src);
		hs_source_release(&src);
	}
	if (guess_format) {
		struct hs_diag diag = HS_DIAG_INIT("fuzz");

		hs_source_init(&src);
		if (!hs_import_path(path, HS_FORMAT_UNKNOWN, &src, &diag))
			fuzz_check_source(&src);
		hs_source_release(&src);
	}
	close(fd);
}

/* Where the next "\n@@ " starts after @from (its '\n'), or @end. */
static const uint8_t *next_mark(const uint8_t *from, const uint8_t *end)
{
	const uint8_t *p;

	for (p = from; p + 4 <= end; p++)
		if (p[0] == '\n' && !memcmp(p + 1, ENTRY_MARK, 3))
			return p;
	return end;
}

/* Build a stored zip of the "@@ NAME" entries of @data; 0 or -1. */
static int build_zip(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size)
{
	const uint8_t *p = data, *end = data + size;
	zip_source_t *mem;
	zip_stat_t st;
	zip_error_t zerr;
	zip_t *za;
	char *names[MAX_ENTRIES];
	size_t nr = 0, k;
	int ret = -1;

	zip_error_init(&zerr);
	mem = zip_source_buffer_create(NULL, 0, 0, &zerr);
	if (!mem)
		abort();
	za = zip_open_from_source(mem, ZIP_TRUNCATE, &zerr);
	if (!za)
		abort();
	zip_source_keep(mem);
	while (p < end && nr < MAX_ENTRIES) {
		const uint8_t *name = p + 3, *name_end, *body, *body_end;
		zip_source_t *s;
		zip_int64_t idx;

		name_end = memchr(name, '\n', (size_t)(end - name));
		if (!name_end)
			name_end = end;
		body = name_end < end ? name_end + 1 : end;
		body_end = next_mark(name_end, end);
		p = body_end < end ? body_end + 1 : end;
		names[nr] = strndup((const char *)name, (size_t)(name_end - name));
		if (!names[nr])
			abort();
		s = zip_source_buffer(za, body, (zip_uint64_t)(body_end > body ? body_end - body : 0), 0);
		if (!s)
			abort();
		idx = zip_file_add(za, names[nr++], s, ZIP_FL_ENC_GUESS);
		if (idx < 0) {
			zip_source_free(s);	/* a name libzip refuses: no entry */
			continue;
		}
		zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
	}
	if (zip_close(za)) {
		zip_discard(za);
		goto out;
	}
	if (zip_source_stat(mem, &st) || !(st.valid & ZIP_STAT_SIZE) ||
	    zip_source_open(mem))
		goto out;
	*out = malloc(st.size ? st.size : 1);
	if (!*out)
		abort();
	if (zip_source_read(mem, *out, st.size) == (zip_int64_t)st.size) {
		*out_size = st.size;
		ret = 0;
	} else {
		free(*out);
	}
	zip_source_close(mem);
out:
	zip_source_free(mem);
	for (k = 0; k < nr; k++)
		free(names[k]);
	return ret;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("HEAPSCOPE_MAP_MAX", "64K", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *zip;
	size_t zip_size;

	if (size >= 3 && !memcmp(data, ENTRY_MARK, 3)) {
		if (!build_zip(data, size, &zip, &zip_size)) {
			import_zip(zip, zip_size, 0);
			free(zip);
		}
		return 0;
	}
	import_zip(data, size, size >= 2 && data[0] == 'P' && data[1] == 'K');
	return 0;
}
