/*
 * gc_stats_load - a .nettrace file (plain or zipped) into GCStats; see
 * gc_stats_load.h.
 */
#include "io/gc_stats_load.h"
#include "dotnet/nettrace.h"
#include "io/zipfile.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

struct load {
	struct hs_gc_stats *s;
	struct hs_gc_load_info *info;
	int have_header;
};

static int on_header(void *ctx, const struct hs_nettrace_header *h)
{
	struct load *l = ctx;

	l->info->pid = h->pid;
	l->have_header = 1;
	hs_gc_stats_header(l->s, h);
	return 0;
}

static int on_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct load *l = ctx;

	return hs_gc_stats_event(l->s, ev);
}

/* Whether @path starts as a zip ('z') or a nettrace stream ('n'); 0: neither; -errno. */
static int sniff(const char *path)
{
	unsigned char head[8];
	size_t n;
	FILE *f = fopen(path, "rb");
	int err;

	if (!f)
		return -errno;
	n = fread(head, 1, sizeof(head), f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err)
		return err;
	if (n >= 4 && !memcmp(head, "PK\3\4", 4))
		return 'z';
	return hs_nettrace_sniff(head, n) ? 'n' : 0;
}

int hs_gc_stats_load(const char *path, struct hs_gc_stats *s,
		     struct hs_gc_load_info *info, struct hs_diag *diag)
{
	struct load l = {.s = s, .info = info};
	struct hs_nettrace_ops ops = {.ctx = &l, .header = on_header, .event = on_event};
	struct hs_nettrace_stats ns;
	int kind, err;
	FILE *f;

	memset(info, 0, sizeof(*info));
	hs_gc_stats_init(s);
	kind = sniff(path);
	if (kind < 0) {
		hs_diag_set(diag, 0, "%s", strerror(-kind));
		return kind;
	}
	if (!kind) {
		info->not_nettrace = 1;
		hs_diag_set(diag, 0,
			    "not a .nettrace (an EventPipe trace of a .NET program, "
			    "plain or zipped)");
		return -EINVAL;
	}
	f = kind == 'z' ? hs_zip_open_entry(path, ".nettrace", NULL, diag)
			: fopen(path, "rb");
	if (!f) {
		if (kind == 'z')
			info->not_nettrace = 1;
		else
			hs_diag_set(diag, 0, "%s", strerror(errno));
		return kind == 'z' ? -EINVAL : -errno;
	}
	err = hs_nettrace_read(f, &ops, &ns, diag);
	fclose(f);
	if (!err && !l.have_header) {
		hs_diag_set_offset(diag, ns.bytes,
				   "the trace ends before its Trace object");
		err = -EINVAL;
	}
	if (err)
		return err;
	info->truncated = ns.truncated;
	info->truncated_at = ns.truncated_at;
	info->nr_lost = ns.nr_lost;
	hs_gc_stats_finish(s);
	return 0;
}
