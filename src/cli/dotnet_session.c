/*
 * dotnet_session - what `attach` and `run --dotnet` share: the providers
 * (the defaults plus --providers), the CollectTracing request, and
 * streaming a session into a .nettrace file until it ends, with the
 * messages that say why it ended.
 *
 * Also the connection to a process's diagnostic socket and StopTracing,
 * which `gcdump` shares with `attach`.
 *
 * The library (dotnet/diag_ipc.c) speaks the protocol; this file prints.
 * It also finds the .nettrace recorded beside a heap trace, for `view`
 * and `report` of the heap trace.
 */
#include "cli/dotnet_session.h"
#include "cli/cli.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cli_dotnet_providers(const char *cmd, const struct cli_string_list *specs,
			 struct hs_dipc_providers *out)
{
	char err[512];
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	if (hs_dipc_providers_default(out))
		goto oom;
	for (i = 0; i < specs->nr; i++) {
		r = hs_dipc_providers_parse(out, specs->v[i], err, sizeof(err));
		if (r == -ENOMEM)
			goto oom;
		if (r) {
			hs_dipc_providers_release(out);
			return cli_usage_error(cmd, "--providers: %s", err);
		}
	}
	return 0;
oom:
	hs_dipc_providers_release(out);
	return cli_fail("out of memory");
}

void cli_dotnet_request(const struct hs_dipc_providers *p, struct hs_dipc_collect *c)
{
	memset(c, 0, sizeof(*c));
	c->buffer_mb = 256; /* dotnet-trace's default */
	c->format = HS_DIPC_FORMAT_NETTRACE;
	c->rundown = 1;
	c->providers = p->v;
	c->nr_providers = p->nr;
}

const char *cli_dotnet_strerror(int err, const struct hs_dipc_reply *r, char *buf,
				size_t n)
{
	const char *name;

	switch (err) {
	case -EREMOTEIO:
		name = hs_dipc_hresult_name(r->hresult);
		snprintf(buf, n, "the runtime answered with error 0x%08" PRIx32 " (%s)",
			 r->hresult,
			 name ? name : "an HRESULT the protocol does not list");
		break;
	case -ENODATA:
		snprintf(buf, n, "the runtime closed the connection before it answered");
		break;
	case -ETIMEDOUT:
		snprintf(buf, n, "the runtime did not answer in time");
		break;
	case -EBADMSG:
		snprintf(buf, n,
			 "the answer is not the diagnostic protocol's (bad magic "
			 "or command set)");
		break;
	case -EPROTO:
		snprintf(buf, n, "the answer's size contradicts its contents");
		break;
	default:
		snprintf(buf, n, "%s", strerror(-err));
		break;
	}
	return buf;
}

/* The process's command name, or "dotnet". */
void cli_dotnet_comm(pid_t pid, char *buf, size_t n)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(buf, n, "dotnet");
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)n, f))
		snprintf(buf, n, "dotnet");
	buf[strcspn(buf, "\n/")] = '\0';
	if (!buf[0])
		snprintf(buf, n, "dotnet");
	fclose(f);
}

/* Connect to @pid's diagnostic socket: a descriptor, or -1 after printing why. */
int cli_dotnet_connect(pid_t pid, const char *comm)
{
	char path[PATH_MAX];
	const char *dir = getenv("TMPDIR");
	int r = hs_dipc_find_socket(pid, path, sizeof(path));

	if (!dir || !*dir)
		dir = "/tmp";
	if (r == -ESRCH) {
		cli_fail("no process %d", (int)pid);
		return -1;
	}
	if (r) {
		cli_fail(
		    "process %d (%s) is not a .NET process: it has no diagnostic socket "
		    "(%s/dotnet-diagnostic-%d-*-socket), or it runs with "
		    "DOTNET_EnableDiagnostics=0",
		    (int)pid, comm, dir, (int)pid);
		return -1;
	}
	r = hs_dipc_connect(path);
	if (r < 0) {
		if (r == -EACCES || r == -EPERM)
			cli_fail("cannot connect to %s: %s (the process belongs to "
				 "another user; "
				 "attach as that user)",
				 path, strerror(-r));
		else
			cli_fail("cannot connect to %s: %s", path, strerror(-r));
		return -1;
	}
	return r;
}

/*
 * Send StopTracing on a second connection: the connection, whose reply
 * is read while the stream goes on (the runtime writes the rundown into
 * the stream before it answers, so the stream must be drained meanwhile),
 * or -1 when the process is gone.
 */
int cli_dotnet_send_stop(pid_t pid, uint64_t session)
{
	char path[PATH_MAX];
	uint8_t msg[28];
	int fd;

	if (hs_dipc_find_socket(pid, path, sizeof(path)))
		return -1;
	fd = hs_dipc_connect(path);
	if (fd < 0)
		return -1;
	if (hs_dipc_write_full(fd, msg, hs_dipc_stop_encode(msg, session),
			       CLI_DOTNET_REPLY_TIMEOUT_MS)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read StopTracing's reply on @fd and close it; say what failed. */
void cli_dotnet_read_stop_reply(int fd, int quiet)
{
	struct hs_dipc_reply reply;
	char why[256];
	int r = hs_dipc_read_reply(fd, &reply, CLI_DOTNET_REPLY_TIMEOUT_MS);

	close(fd);
	if (r && !quiet)
		fprintf(stderr, "heapscope: StopTracing: %s\n",
			cli_dotnet_strerror(r, &reply, why, sizeof(why)));
}

void cli_dotnet_trace_name(const char *heap_trace, char *out, size_t n)
{
	size_t len = strlen(heap_trace);

	if (len > 10 && !strcmp(heap_trace + len - 10, ".heapscope"))
		snprintf(out, n, "%.*s.nettrace", (int)(len - 10), heap_trace);
	else
		snprintf(out, n, "%s.nettrace", heap_trace);
}

int cli_dotnet_sibling(const char *path, char *out, size_t n)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	enum hs_format fmt;
	struct stat st;

	if (!strcmp(path, "-") || hs_path_format(path, HS_FORMAT_UNKNOWN, &fmt, &diag) ||
	    fmt != HS_FORMAT_HEAPSCOPE)
		return 0;
	cli_dotnet_trace_name(path, out, n);
	return !stat(out, &st) && S_ISREG(st.st_mode);
}

/* The sources of the .nettrace @path into @list: how many (0 when unreadable). */
static size_t nettrace_sources(const char *path, struct hs_source_info *list)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	enum hs_format fmt;

	if (hs_path_format(path, HS_FORMAT_UNKNOWN, &fmt, &diag) ||
	    fmt != HS_FORMAT_NETTRACE)
		return 0;
	return hs_path_sources(path, fmt, list);
}

void cli_dotnet_list_sibling(const char *path)
{
	struct hs_source_info list[HS_SOURCES_MAX];
	char sibling[4096];
	size_t i, n;

	if (!cli_dotnet_sibling(path, sibling, sizeof(sibling)))
		return;
	n = nettrace_sources(sibling, list);
	if (!n)
		return;
	printf("(the .NET runtime's events recorded beside it, in %s:)\n", sibling);
	for (i = 0; i < n; i++)
		printf("%-12s %s\n", list[i].name, list[i].summary);
	printf("(read them with: heapscope report %s --source %s)\n", sibling,
	       list[0].name);
}

const char *cli_dotnet_sibling_hint(const char *path, const char *source, char *buf,
				    size_t n)
{
	struct hs_source_info list[HS_SOURCES_MAX];
	char sibling[4096];
	size_t i, nr;

	if (!cli_dotnet_sibling(path, sibling, sizeof(sibling)))
		return "";
	nr = nettrace_sources(sibling, list);
	for (i = 0; i < nr; i++) {
		size_t len = strlen(list[i].name);

		/* "events:PROVIDER/EVENT" is one of a file's "events" */
		if (!strcmp(list[i].name, source) ||
		    (!strncmp(list[i].name, source, len) && source[len] == ':')) {
			snprintf(buf, n,
				 "; the .NET events recorded beside it have it: "
				 "heapscope report %s --source %s",
				 sibling, source);
			return buf;
		}
	}
	return "";
}
