/*
 * lifecycle - ways a program's life ends or forks that do not go through
 * main's return or the fork() function:
 *
 *   lifecycle pthread-exit   main calls pthread_exit() while a worker
 *                            thread still allocates; the process ends
 *                            when the worker does (exit status 0)
 *   lifecycle alone-exit     main calls pthread_exit() with no other
 *                            thread
 *   lifecycle daemon         daemon() forks inside glibc; the child
 *                            allocates at site_child, writes its pid to
 *                            the file named by $LIFECYCLE_PID and ends
 *   lifecycle close-loop|close-range|closefrom
 *                            closes every descriptor above 2 (close() in a
 *                            loop, close_range(), closefrom()), then
 *                            allocates at site_main and spins 200 ms of
 *                            CPU in site_spin (for --cpu)
 *   lifecycle raw-close [reuse|fill]
 *                            allocates, then closes every descriptor above 2
 *                            with the close system call itself (which no
 *                            hook sees), then allocates again; with "reuse",
 *                            it then gives every number a file of its own
 *                            (/dev/null), allocates once more and closes
 *                            them, failing (status 6) if one cannot be
 *                            (the collector must not keep a number that is
 *                            the program's); "fill" does the same, but
 *                            sleeps 150 ms while every number is taken and
 *                            bears with a collector that keeps its files in
 *                            the program's table (dup2()'s EBUSY is tried
 *                            again, a number the collector kept is not the
 *                            program's to close)
 *
 * Output without a newline at the end tests that exit()'s flush of stdio
 * still happens.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
#include "target.h"

static void *volatile sink;

SITE void *site_worker(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_main(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_child(size_t n) { void *p = malloc(n); sink = p; return p; }

/* Spin @ms milliseconds of this thread's CPU time. */
SITE void site_spin(long ms)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

void *worker(void *arg)
{
	struct timespec ts = { 0, 30 * 1000000 };
	int i;

	(void)arg;
	nanosleep(&ts, NULL);	/* main has gone by now */
	for (i = 0; i < 4; i++)
		free(site_worker(900));
	site_worker(123);	/* leaked */
	return NULL;
}

int main(int argc, char **argv);

static void symbols(void)
{
	SYM(main);
	SYM(worker);
	SYM(site_worker);
	SYM(site_main);
	SYM(site_child);
	SYM(site_spin);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_t th;

	symbols();
	free(site_main(50));
	if (!strcmp(mode, "pthread-exit") || !strcmp(mode, "alone-exit")) {
		if (!strcmp(mode, "pthread-exit")) {
			printf("expect alloc malloc 900 4 worker;site_worker\n");
			printf("expect free malloc 900 4 worker;site_worker\n");
			printf("expect alloc malloc 123 1 worker;site_worker\n");
			if (pthread_create(&th, NULL, worker, NULL))
				return 3;
		}
		printf("expect alloc malloc 50 1 main;site_main\n");
		printf("expect free malloc 50 1 main;site_main\n");
		printf("main gone");	/* no newline: exit() flushes it */
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "daemon")) {
		const char *pidfile = getenv("LIFECYCLE_PID");
		FILE *f;
		int i;

		fflush(stdout);
		if (daemon(1, 1))
			return 4;
		for (i = 0; i < 3; i++)
			free(site_child(700));
		printf("expect alloc malloc 700 3 main;site_child\n");
		printf("expect free malloc 700 3 main;site_child\n");
		fflush(stdout);
		f = pidfile ? fopen(pidfile, "w") : NULL;
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		return 0;
	}
	if (!strncmp(mode, "close", 5)) {
		struct rlimit rl;
		int fd, i;

		fflush(stdout);
		if (!strcmp(mode, "close-loop")) {
			getrlimit(RLIMIT_NOFILE, &rl);
			for (fd = 3; fd < (int)rl.rlim_cur; fd++)
				close(fd);
		} else if (!strcmp(mode, "close-range")) {
			if (close_range(3, ~0u, 0))
				return 5;
		} else {
			closefrom(3);
		}
		for (i = 0; i < 20; i++)
			free(site_main(333));
		site_spin(200);
		printf("expect alloc malloc 50 1 main;site_main\n");
		printf("expect free malloc 50 1 main;site_main\n");
		printf("expect alloc malloc 333 20 main;site_main\n");
		printf("expect free malloc 333 20 main;site_main\n");
		return 0;
	}
	if (!strcmp(mode, "raw-close")) {
		int fill = argc > 2 && !strcmp(argv[2], "fill");
		int reuse = fill || (argc > 2 && !strcmp(argv[2], "reuse"));
		struct timespec taken = { 0, 150 * 1000000 };
		struct rlimit rl;
		int fd, i, null;

		for (i = 0; i < 30; i++)
			free(site_main(444));
		fflush(stdout);
		getrlimit(RLIMIT_NOFILE, &rl);
		for (fd = 3; fd < (int)rl.rlim_cur; fd++)
			syscall(SYS_close, fd);
		for (i = 0; i < 20; i++)
			free(site_child(555));
		printf("expect alloc malloc 50 1 main;site_main\n");
		printf("expect free malloc 50 1 main;site_main\n");
		printf("expect alloc malloc 444 30 main;site_main\n");
		printf("expect free malloc 444 30 main;site_main\n");
		printf("expect alloc malloc 555 20 main;site_child\n");
		printf("expect free malloc 555 20 main;site_child\n");
		if (!reuse)
			return 0;
		null = open("/dev/null", O_WRONLY);
		if (null < 0)
			return 6;
		for (fd = 3; fd < (int)rl.rlim_cur; fd++)
			while (fd != null && dup2(null, fd) != fd)
				if (!fill || errno != EBUSY)
					return 6;
		for (i = 0; i < 10; i++)
			free(site_worker(666));
		printf("expect alloc malloc 666 10 main;site_worker\n");
		printf("expect free malloc 666 10 main;site_worker\n");
		fflush(stdout);
		if (fill)
			nanosleep(&taken, NULL); /* the collector's flushes find no number */
		/* the numbers are the program's: every close must succeed */
		for (fd = 3; fd < (int)rl.rlim_cur; fd++)
			if (close(fd) && !fill)
				return 6;
		return 0;
	}
	fprintf(stderr, "usage: lifecycle pthread-exit|alone-exit|daemon|close-loop|"
		"close-range|closefrom|raw-close [reuse|fill]\n");
	return 2;
}
