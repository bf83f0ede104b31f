#ifndef HS_COLLECTOR_DOTNET_EXIT_H
#define HS_COLLECTOR_DOTNET_EXIT_H
#include <sys/types.h>

/*
 * dotnet_exit - `heapscope run --gcdump-at-exit` inside the program: a
 * word to run between the end of a .NET program's Main and the runtime's
 * shutdown (dotnet_exit.c).
 *
 * run passes HS_DOTNET_EXIT_ENV="FD:PID": FD is one end of a socket pair
 * whose other end run keeps, PID the program's own pid (a process the
 * program starts inherits the variable, and must not answer for it).
 */
#define HS_DOTNET_EXIT_ENV "HEAPSCOPE_DOTNET_EXIT"
/* How long the program waits for run's answer, at most. */
#define HS_DOTNET_EXIT_WAIT_MS (300 * 1000)

/*
 * What the collector's dlsym() returns for @name, whose real address is
 * @real: for coreclr_shutdown_2 and coreclr_shutdown, when the variable
 * names a socket of this process, a wrapper that first waits for run's
 * snapshot; else @real itself. Allocates nothing.
 */
void *hs_dotnet_exit_wrap(const char *name, void *real)
    __attribute__((visibility("hidden")));
/*
 * The descriptor that @env ("FD:PID") gives process @self: FD when PID is
 * @self and FD is an open socket; else -1.
 */
int hs_dotnet_exit_parse(const char *env, pid_t self)
    __attribute__((visibility("hidden")));
/*
 * Tell run on socket @fd that Main has returned, and wait up to
 * @timeout_ms for its answer: 0 when it answered, -1 when it is gone, did
 * not answer in time or the socket failed. Never raises SIGPIPE.
 */
int hs_dotnet_exit_tell(int fd, int timeout_ms) __attribute__((visibility("hidden")));
#endif
