/*
 * dotnet_session - what `attach` and `run --dotnet` share: the providers
 * (the defaults plus --providers), the CollectTracing request, and
 * streaming a session into a .nettrace file until it ends, with the
 * messages that say why it ended.
 *
 * The library (dotnet/diag_ipc.c) speaks the protocol; this file prints.
 */
#include "cli/dotnet_session.h"
#include "cli/cli.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
	c->buffer_mb = 256;	/* dotnet-trace's default */
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
			 r->hresult, name ? name : "an HRESULT the protocol does not list");
		break;
	case -ENODATA:
		snprintf(buf, n, "the runtime closed the connection before it answered");
		break;
	case -ETIMEDOUT:
		snprintf(buf, n, "the runtime did not answer in time");
		break;
	case -EBADMSG:
		snprintf(buf, n, "the answer is not the diagnostic protocol's (bad magic "
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
