/*
 * signal_floor.c - the cost of being sampled at all, for bench/cpu/run.sh.
 *
 * Preloaded into a single-threaded program with HS_FLOOR_HZ=N set, it
 * does for the main thread what heapscope's --cpu sampler does before it
 * looks at a stack: a task-clock perf event (kernel time included) of
 * period 1/N s that sends a real-time signal on every overflow, caught
 * with SA_RESTART. The handler is empty. What this adds to the program's
 * time is the floor under any sampler of that design on this machine
 * (the timer interrupt, the signal's delivery and return); the bench
 * gives heapscope's overhead above it. Without HS_FLOOR_HZ it does
 * nothing. Owns no memory; the event's descriptor lives until exit.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void on_sample(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)info;
	(void)uc;
}

__attribute__((constructor)) static void floor_start(void)
{
	const char *hz = getenv("HS_FLOOR_HZ");
	struct perf_event_attr a;
	struct sigaction sa;
	struct f_owner_ex owner;
	int sig = SIGRTMIN + 3;
	int fd;

	if (!hz || atol(hz) <= 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000000ull / (unsigned long long)atol(hz);
	a.wakeup_events = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	owner.type = F_OWNER_TID;
	owner.pid = (pid_t)syscall(SYS_gettid);
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || sigaction(sig, &sa, NULL) || fcntl(fd, F_SETOWN_EX, &owner) ||
	    fcntl(fd, F_SETSIG, sig) || fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		perror("signal_floor");
		exit(1);
	}
}
