#ifndef HS_CLI_RUN_GCDUMP_H
#define HS_CLI_RUN_GCDUMP_H
#include <limits.h>
#include <signal.h>
#include <sys/types.h>

/*
 * run_gcdump - heap snapshots of the .NET program `run` runs
 * (`--gcdump-on SIG`, `--gcdump-at-exit`), taken by `heapscope gcdump PID`
 * started as a child of `run` (run_gcdump.c).
 *
 * Use: cli_run_gcdump_arm() once the program runs (it installs the
 * handlers), cli_run_gcdump_waitpid() to wait for it, and
 * cli_run_gcdump_disarm() after it exited. The handlers only set flags;
 * the snapshots are taken in cli_run_gcdump_waitpid() (through
 * cli_run_gcdump_poll()).
 */
struct cli_run_gcdump {
	int signo;	      /* --gcdump-on; 0: none */
	int at_exit;	      /* --gcdump-at-exit */
	int quiet;	      /* run -q: gcdump -q */
	pid_t pid;	      /* the program */
	char base[PATH_MAX];  /* "NAME.PID": the files are BASE.N.gcdump */
	unsigned taken;	      /* snapshots written */
	char types[PATH_MAX]; /* gcdump --types: ours, removed by disarm; "" */
	struct sigaction old_on, old_term, old_hup;
	int armed;
	/*
	 * --gcdump-at-exit: a socket pair whose [1] the program inherits
	 * (the collector's word when Main returned, dotnet_exit.c); -1 when
	 * closed. cli_run_gcdump_prepare() opens it, run closes [1] after
	 * the fork and [0] at disarm.
	 */
	int exit_sock[2];
};

/*
 * Before the fork, with --gcdump-at-exit: the socket the program will tell
 * run on that its Main returned. Without it, or when it cannot be made,
 * the sockets stay -1 (the snapshot then is only taken on SIGTERM/SIGHUP).
 */
void cli_run_gcdump_prepare(struct cli_run_gcdump *g);
/*
 * In the child, before exec: pass the program its end of the socket
 * (HEAPSCOPE_DOTNET_EXIT=FD:PID, for the collector).
 */
void cli_run_gcdump_child(const struct cli_run_gcdump *g);
/* In run after the fork: close the program's end of the socket. */
void cli_run_gcdump_forked(struct cli_run_gcdump *g);

/*
 * --gcdump-on's argument ("SIGUSR2", "USR2" or a number) into *@signo: 0,
 * or the usage status after saying why. Signals run uses otherwise (INT,
 * QUIT, TERM, HUP, CHLD) and those that cannot be caught are refused.
 */
int cli_run_gcdump_signal(const char *cmd, const char *arg, int *signo);
/*
 * Install the handlers for process @pid whose heap trace is @trace (the
 * snapshots go beside it): @g->signo takes a snapshot each time; with
 * @g->at_exit, SIGTERM and SIGHUP to heapscope take one before they are
 * forwarded to the program (run forwards them otherwise).
 */
void cli_run_gcdump_arm(struct cli_run_gcdump *g, pid_t pid, const char *trace);
/*
 * Take the snapshots asked for since the last call; forward a SIGTERM or
 * SIGHUP held for --gcdump-at-exit to the program after its snapshot.
 * When the program said its Main returned, take the at-exit snapshot
 * and answer it, so that its runtime shuts down.
 */
void cli_run_gcdump_poll(struct cli_run_gcdump *g);
/*
 * waitpid(@pid, @status, 0), taking the snapshots asked for while it
 * waits (when armed): the child's pid, or -1 with errno.
 */
pid_t cli_run_gcdump_waitpid(struct cli_run_gcdump *g, pid_t pid, int *status);
/*
 * Restore the handlers and close the socket. With --gcdump-at-exit and no
 * snapshot taken, say that none could be (the program ended without its
 * Main returning to the host: Environment.Exit, a signal, a crash).
 */
void cli_run_gcdump_disarm(struct cli_run_gcdump *g);
#endif
