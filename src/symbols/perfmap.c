/*
 * perfmap - read the perf maps JIT compilers write (/tmp/perf-<pid>.map).
 *
 * Format, one entry per line: "START SIZE name", START and SIZE in hex
 * (with or without 0x), separated by spaces or tabs; the name is the rest
 * of the line and may contain spaces. A whole file is parsed before any
 * entry is added, so a bad file leaves the symbolizer unchanged.
 */
#include "symbols/symbols_internal.h"
#include "common/alloc.h"
#include "common/diag.h"
#include "common/linereader.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (64 * 1024)

/* Parse one hex field ending in a blank; *@p moves past the blanks. */
static int hex_field(char **p, uint64_t *v)
{
	char *end;

	if (!isxdigit((unsigned char)**p))
		return -1;
	errno = 0;
	*v = strtoull(*p, &end, 16);
	if (errno || (*end != ' ' && *end != '\t'))
		return -1;
	while (*end == ' ' || *end == '\t')
		end++;
	*p = end;
	return 0;
}

static int parse_line(char *line, size_t len, uint64_t *start, uint64_t *size,
		      char **name, size_t *name_len)
{
	char *p = line;

	if (hex_field(&p, start) || hex_field(&p, size))
		return -1;
	while (len > (size_t)(p - line) &&
	       (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len <= (size_t)(p - line) || *size > UINT64_MAX - *start)
		return -1;
	*name = p;
	*name_len = len - (size_t)(p - line);
	return 0;
}

int hs_symbolizer_add_perf_map(struct hs_symbolizer *s, const char *path,
			       struct hs_diag *diag)
{
	struct hs__jit_sym *jit = NULL;
	size_t nr = 0, alloc = 0, len, name_len;
	struct hs_linereader r;
	const char *module, *fn;
	uint64_t start, size;
	char *line, *name;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		hs_diag_set(diag, 0, "cannot open: %s", strerror(errno));
		return err;
	}
	err = hs_linereader_init(&r, f, MAX_LINE);
	module = err ? NULL : hs__sym_intern(s, path, strlen(path));
	if (!module)
		err = -ENOMEM;
	while (!err && (err = hs_linereader_next(&r, &line, &len)) == 1) {
		err = 0;
		if (!len)
			continue;
		if (parse_line(line, len, &start, &size, &name, &name_len)) {
			if (!r.last_had_newline)
				break; /* cut off while being written */
			hs_diag_set(diag, r.lineno, "expected 'START SIZE name' in hex");
			err = -EINVAL;
			break;
		}
		if (!size)
			continue;
		name[name_len] = '\0';
		fn = hs__sym_function_name(s, name);
		if (!fn || HS_GROW(jit, nr + 1, alloc)) {
			err = -ENOMEM;
			break;
		}
		memset(&jit[nr], 0, sizeof(jit[nr]));
		jit[nr].start = start;
		jit[nr].end = start + size;
		jit[nr].module = module;
		jit[nr].frame.function = fn;
		nr++;
	}
	if (err == -E2BIG) {
		hs_diag_set(diag, r.lineno + 1, "line longer than %d bytes", MAX_LINE);
		err = -EINVAL;
	} else if (err == -EIO) {
		hs_diag_set(diag, 0, "read error");
	}
	hs_linereader_release(&r);
	fclose(f);
	if (err) {
		hs_free(jit);
		return err;
	}
	return nr ? hs__sym_add_jit(s, jit, nr) : 0;
}

int hs_symbolizer_add_perf_map_pid(struct hs_symbolizer *s, pid_t pid,
				   struct hs_diag *diag)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)pid);
	return hs_symbolizer_add_perf_map(s, path, diag);
}
