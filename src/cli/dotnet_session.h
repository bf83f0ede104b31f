#ifndef HS_CLI_DOTNET_SESSION_H
#define HS_CLI_DOTNET_SESSION_H
#include "cli/parse_options.h"
#include "dotnet/diag_ipc.h"
#include <stddef.h>

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
int cli_dotnet_providers(const char *cmd, const struct cli_string_list *specs,
			 struct hs_dipc_providers *out);
/* The CollectTracing2 request for @p (borrowed by @c): nettrace, 256 MB, rundown. */
void cli_dotnet_request(const struct hs_dipc_providers *p, struct hs_dipc_collect *c);
/* A diag_ipc error @err (with reply @r for -EREMOTEIO) in words, into @buf. */
const char *cli_dotnet_strerror(int err, const struct hs_dipc_reply *r, char *buf,
				size_t n);
#endif
