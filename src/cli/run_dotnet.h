#ifndef HS_CLI_RUN_DOTNET_H
#define HS_CLI_RUN_DOTNET_H
#include "dotnet/diag_ipc.h"
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/log.h"

/*
 * run_dotnet - `run --dotnet`: a diagnostic port of heapscope's own and
 * the thread that records the program's runtime events (run_dotnet.c).
 *
 * Use: cli_dotnet_run_listen() before the fork (the child puts ->env in
 * DOTNET_DiagnosticPorts), cli_dotnet_run_start() once the child's pid
 * and heap trace name are known, cli_dotnet_run_finish() after it exited.
 */
struct cli_dotnet_run {
	char dir[PATH_MAX];		   /* private directory of the socket */
	char sock[PATH_MAX];		   /* the socket we listen on */
	char env[PATH_MAX + 32];	   /* "SOCKET,suspend,connect" */
	char out[PATH_MAX];		   /* the .nettrace file; "" when none */
	char error[512];		   /* what went wrong, for the end */
	const struct hs_dipc_collect *req; /* borrowed */
	int lfd, ofd, stream_fd, spare_fd;
	pid_t pid;	       /* the program */
	uint64_t recorded_pid; /* the runtime recorded; 0 until one connects */
	uint64_t session, bytes;
	int resumed, refused, cut, started;
	int program_exited; /* set by finish(), read by the thread */
	pthread_t thread;
};

/*
 * Whether @cmd is a .NET program: the `dotnet` host, or an apphost (an
 * executable beside its NAME.runtimeconfig.json, or one that holds the
 * .NET host's bundle marker, as every apphost does).
 */
int cli_dotnet_program(const char *cmd);
/* Listen on a new socket in a private directory: 0, or the exit status after printing
 * why. */
HS_MUST_CHECK
int cli_dotnet_run_listen(struct cli_dotnet_run *r, const struct hs_dipc_collect *req);
/*
 * Create the .nettrace file beside @heap_trace and start the recorder for
 * process @pid: 0, or -1 after saying that the events are not recorded.
 */
int cli_dotnet_run_start(struct cli_dotnet_run *r, pid_t pid, const char *heap_trace);
/*
 * The program has exited: wait for the stream's end, release everything,
 * say what was recorded (unless @quiet) or why nothing was. Returns 1
 * when r->out holds a .nettrace file, else 0.
 */
int cli_dotnet_run_finish(struct cli_dotnet_run *r, int quiet);
#endif
