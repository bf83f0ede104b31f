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

#define CLI_DOTNET_REPLY_TIMEOUT_MS 10000	/* for the runtime to answer a command */
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
#endif
