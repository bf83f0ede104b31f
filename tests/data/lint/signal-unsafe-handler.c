/*
 * Input of the signal_safety_refuses test: a signal handler that makes
 * the calls scripts/check-signal-safe.py must refuse (an allocation,
 * stdio, a lock, a call through the collector's table of the real libc
 * functions, and a call on no list). The test passes only if the check
 * fails on this file. It is never compiled.
 */
static void unsafe_handler(int sig, siginfo_t *si, void *uc)
{
	char *copy = malloc(64);

	pthread_mutex_lock(&table_lock);
	fprintf(stderr, "signal %d\n", sig);
	hs_real.free(copy);
	getpid();
	pthread_mutex_unlock(&table_lock);
}
