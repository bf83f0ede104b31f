#ifndef HS_CLI_DOTNET_SESSION_H
#define HS_CLI_DOTNET_SESSION_H
#include "cli/parse_options.h"
#include "dotnet/diag_ipc.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/log.h"

/*
 * dotnet_session - the EventPipe session `attach` and `run --dotnet`
 * request, and their messages (dotnet_session.c).
 */

/*
 * The default providers with each --providers value in @specs parsed
 * over them (a provider of the same name replaces the default) into
 * @out (initialised here; hs_dipc_providers_release()). Returns 0, or
 * the exit status after printing why.
 */
HS_MUST_CHECK
int cli_dotnet_providers(const char *cmd, const struct cli_string_list *specs,
			 struct hs_dipc_providers *out);
/* The CollectTracing2 request for @p (borrowed by @c): nettrace, 256 MB, rundown. */
void cli_dotnet_request(const struct hs_dipc_providers *p, struct hs_dipc_collect *c);
/* A diag_ipc error @err (with reply @r for -EREMOTEIO) in words, into @buf. */
const char *cli_dotnet_strerror(int err, const struct hs_dipc_reply *r, char *buf,
				size_t n);

#define CLI_DOTNET_REPLY_TIMEOUT_MS 10000 /* for the runtime to answer a command */
/* The process's command name (/proc/PID/comm), or "dotnet", into @buf. */
void cli_dotnet_comm(pid_t pid, char *buf, size_t n);
/* Connect to @pid's diagnostic socket: a descriptor, or -1 after printing why. */
HS_MUST_CHECK int cli_dotnet_connect(pid_t pid, const char *comm);
/*
 * Send StopTracing of @session on a second connection: the connection,
 * whose reply is read while the stream goes on, or -1 when the process
 * is gone.
 */
HS_MUST_CHECK int cli_dotnet_send_stop(pid_t pid, uint64_t session);
/* Read StopTracing's reply on @fd and close it; say what failed unless @quiet. */
void cli_dotnet_read_stop_reply(int fd, int quiet);
/*
 * The .nettrace `run --dotnet` writes beside the heap trace @heap_trace:
 * NAME.PID.heapscope -> NAME.PID.nettrace; any other name gets
 * .nettrace added (run -o FILE).
 */
void cli_dotnet_trace_name(const char *heap_trace, char *out, size_t n);
/*
 * The .nettrace recorded beside @path into @out (cli_dotnet_trace_name):
 * 1 when @path is a heapscope trace and that file exists, else 0.
 */
int cli_dotnet_sibling(const char *path, char *out, size_t n);
/*
 * After `--list-sources` of @path: the sources of the .nettrace beside
 * it, if there is one, and the command that reads them.
 */
void cli_dotnet_list_sibling(const char *path);
/*
 * For --source @source that the heap trace @path lacks: "; the .NET
 * events recorded beside it have it: heapscope report SIBLING --source
 * SOURCE" (in @buf) when the .nettrace beside it has that source, else "".
 */
const char *cli_dotnet_sibling_hint(const char *path, const char *source, char *buf,
				    size_t n);
#endif
