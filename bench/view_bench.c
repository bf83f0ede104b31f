/*
 * view_bench - time the GUI's actions through the HTTP API of `heapscope
 * view` on a generated source of 1M samples (gen_source.h).
 *
 *   view_bench [SAMPLES [STACKS]]   (default 1000000 200000)
 *
 * The server runs in this process on 127.0.0.1 (a libmicrohttpd thread);
 * a minimal HTTP/1.1 client sends each request over a new connection and
 * times it from connect to the last byte. Every action is what the GUI
 * sends for it (docs/json-api.md), with parameters no earlier request
 * used, so the first answer ("cold") computes everything: the filter,
 * the call tree, the view, the JSON. "warm" is the same request again
 * (from the cache: moving between tabs, scrolling back). The sequence
 * runs three times, each from an empty cache, and the best time of each
 * action is printed (the machine may be busy), as wall time and as the
 * CPU time of the process (the server's thread; closer to an idle
 * machine's wall time when others compete for the cores). Budget: every
 * action within 300 ms.
 */
#include "gen_source.h"
#include "server/app.h"
#include "server/server.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REPEAT 3
#define MAX_ACTIONS 64

static unsigned port;
static char cookie[128];
static int run;			/* which repetition */
static size_t nr_actions;
static struct {
	const char *what;
	double cold, warm, cold_cpu;
	size_t len;
} res[MAX_ACTIONS];

/* CPU seconds of this process (the server's thread does the work). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "view_bench: %s\n", what);
	exit(1);
}

/* POST @body to @path; returns the seconds taken, the status and size. */
static double post(const char *path, const char *body, int *status, size_t *len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static char buf[1 << 16];
	char head[512];
	double t0 = bench_now();
	size_t got = 0;
	ssize_t n;
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("cannot connect");
	snprintf(head, sizeof(head), "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: %s\r\n"
		 "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n", path, cookie, strlen(body));
	if (write(fd, head, strlen(head)) < 0 || write(fd, body, strlen(body)) < 0)
		die("cannot send");
	*status = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (!got)
			sscanf(buf, "HTTP/1.%*d %d", status);
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return bench_now() - t0;
}

/* One action: the request cold, then again (warm); the best of the runs. */
static void action(const char *what, const char *path, const char *body)
{
	int st, st2;
	size_t len, len2, i = nr_actions++;
	double c0 = cpu_now();
	double cold = post(path, body, &st, &len);
	double cold_cpu = cpu_now() - c0;
	double warm = post(path, body, &st2, &len2);

	if (st != 200 || st2 != 200) {
		fprintf(stderr, "view_bench: %s: HTTP %d\n", what, st);
		exit(1);
	}
	if (i >= MAX_ACTIONS)
		die("too many actions");
	if (!run || cold < res[i].cold)
		res[i].cold = cold;
	if (!run || cold_cpu < res[i].cold_cpu)
		res[i].cold_cpu = cold_cpu;
	if (!run || warm < res[i].warm)
		res[i].warm = warm;
	res[i].what = what;
	res[i].len = len;
}

static void actions(void)
{
	action("open: ByName, first page (Fold% 1)", "/api/rows",
	       "{\"params\":{\"fold_pct\":1},\"count\":200}");
	action("open: the timeline (600 buckets)", "/api/timeline",
	       "{\"params\":{\"fold_pct\":1},\"buckets\":600}");
	action("GroupPats: group module entries", "/api/rows",
	       "{\"params\":{\"fold_pct\":1,\"group\":\"{%}!=>module $1\"},\"count\":200}");
	action("GroupPats: group modules (regex)", "/api/rows",
	       "{\"params\":{\"fold_pct\":1,\"group\":\"[group modules] {%}!->module $1\"},"
	       "\"count\":200}");
	action("F7: Fold% 1.6", "/api/rows", "{\"params\":{\"fold_pct\":1.6},\"count\":200}");
	action("Fold% blank (every name)", "/api/rows", "{\"params\":{},\"count\":200}");
	action("FoldPats + IncPats + ExcPats", "/api/rows",
	       "{\"params\":{\"fold_pct\":1,\"fold\":\"libmod1.so!\",\"inc\":\"Thread\","
	       "\"exc\":\"libmod7.so!\"},\"count\":200}");
	action("Start/End: a time window", "/api/rows",
	       "{\"params\":{\"fold_pct\":1,\"start\":100000,\"end\":600000},\"count\":200}");
	action("the timeline of that window's filter", "/api/timeline",
	       "{\"params\":{\"fold_pct\":1,\"start\":100000,\"end\":600000},\"buckets\":600}");
	action("ByName sorted by Inc", "/api/rows",
	       "{\"params\":{\"fold_pct\":1},\"count\":200,\"sort\":\"inc\"}");
	action("ByName scrolled to row 10000 (no Fold%)", "/api/rows",
	       "{\"params\":{},\"offset\":10000,\"count\":200}");
	action("CallTree tab: ROOT and one level", "/api/tree",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"calltree\",\"skeleton\":true}");
	action("CallTree: open a node", "/api/tree",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"calltree\",\"of\":[1],"
	       "\"skeleton\":true}");
	action("CallTree: Expand All (Fold% 1)", "/api/tree",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"calltree\",\"of\":[0],\"levels\":0,"
	       "\"skeleton\":true}");
	action("CallTree (no Fold%): open ROOT", "/api/tree",
	       "{\"params\":{},\"view\":\"calltree\",\"skeleton\":true}");
	action("CallTree (no Fold%): Expand All, 200k rows", "/api/tree",
	       "{\"params\":{},\"view\":\"calltree\",\"of\":[0],\"levels\":0,"
	       "\"max_rows\":200000,\"skeleton\":true,\"detail\":300}");
	action("... the rows of a screen after a jump", "/api/rows",
	       "{\"params\":{},\"view\":\"calltree\",\"ids\":[150000,150001,150002,150003,"
	       "150004,150005,150006,150007,150008,150009,150010,150011,150012,150013,150014,"
	       "150015,150016,150017,150018,150019,150020,150021,150022,150023,150024,150025,"
	       "150026,150027,150028,150029,150030,150031,150032,150033,150034,150035,150036,"
	       "150037,150038,150039]}");
	action("CallTree (no Fold%) sorted by Inc Ct", "/api/tree",
	       "{\"params\":{},\"view\":\"calltree\",\"of\":[0],\"levels\":0,"
	       "\"max_rows\":200000,\"skeleton\":true,\"sort\":\"inc_count\"}");
	action("Callers of the process", "/api/tree",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"callers\",\"focus\":\"Process app (4242)\","
	       "\"skeleton\":true}");
	action("Callees of a thread", "/api/tree",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"callees\",\"focus\":\"Thread (4243) worker\","
	       "\"skeleton\":true}");
	action("Caller-Callee of a thread", "/api/view",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"caller-callee\",\"focus\":\"Thread (4243) worker\","
	       "\"limit\":20000}");
	action("Flame Graph (min width 1/2000)", "/api/flame",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"flame\",\"min_width\":0.0005}");
	action("Flame Graph, no Fold%", "/api/flame",
	       "{\"params\":{},\"view\":\"flame\",\"min_width\":0.0005}");
	action("Find in the call tree", "/api/find",
	       "{\"params\":{\"fold_pct\":1},\"view\":\"calltree\",\"pattern\":\"step7\"}");
	action("Events: a page of a thread's samples", "/api/samples",
	       "{\"params\":{\"fold_pct\":1},\"name\":\"Thread (4243) worker\",\"count\":200}");
	action("Drill Into a thread, then ByName", "/api/rows",
	       "{\"steps\":[{\"kind\":\"drill\",\"name\":\"Thread (4243) worker\",\"params\":"
	       "{\"fold_pct\":1}}],\"params\":{\"fold_pct\":1},\"count\":200}");
	action("Diff with the base trace, then ByName", "/api/rows",
	       "{\"diff\":{\"test\":{\"trace\":0},\"base\":{\"trace\":1}},"
	       "\"params\":{\"group\":\"^Process% {%}->$1;^Thread->Thread;\"},\"count\":200}");
	action("Overweight against the base trace", "/api/overweight",
	       "{\"base\":{\"trace\":1},\"params\":{}}");
	action("Stats", "/api/stats", "{\"params\":{\"fold_pct\":1}}");
}

int main(int argc, char **argv)
{
	size_t nr_samples = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	size_t nr_stacks = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	struct hs_server_opts so = { .bind = "127.0.0.1" };
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_stack_source src, base;
	struct hs_server *srv;
	struct hs_app app;
	double t0 = bench_now(), worst = 0, worst_cpu = 0;
	size_t i;

	hs_source_init(&src);
	hs_source_init(&base);
	bench_generate(&src, nr_samples, nr_stacks, 100);
	bench_generate(&base, nr_samples * 9 / 10, nr_stacks, 100);
	printf("source: %zu samples, %zu stacks, %zu frames (generated in %.1f s)\n",
	       src.nr_samples, src.nr_stacks, hs_source_nr_frames(&src), bench_now() - t0);
	if (hs_app_init(&app, NULL) || hs_app_add_trace(&app, "test", "bench", &src) ||
	    hs_app_add_trace(&app, "base", "bench", &base))
		die("cannot set up the app");
	if (hs_server_start(&srv, &app, &so, &d))
		die(d.msg);
	port = hs_server_port(srv);
	snprintf(cookie, sizeof(cookie), "hs_token_%u=%s", port, app.token);

	for (run = 0; run < REPEAT; run++) {
		/* an empty cache: nothing computed yet */
		pthread_mutex_lock(&app.lock);
		hs_cache_release(&app.cache);
		hs_cache_init(&app.cache);
		pthread_mutex_unlock(&app.lock);
		nr_actions = 0;
		actions();
	}
	printf("\n| action | cold ms | cold CPU ms | warm ms | answer KiB |\n"
	       "|---|---:|---:|---:|---:|\n");
	for (i = 0; i < nr_actions; i++) {
		printf("| %-44s | %8.1f | %8.1f | %8.1f | %9.1f |\n", res[i].what,
		       res[i].cold * 1e3, res[i].cold_cpu * 1e3, res[i].warm * 1e3,
		       (double)res[i].len / 1024);
		if (res[i].cold > worst)
			worst = res[i].cold;
		if (res[i].cold_cpu > worst_cpu)
			worst_cpu = res[i].cold_cpu;
	}
	printf("\nslowest cold action: %.1f ms wall, %.1f ms CPU (budget 300 ms)\n",
	       worst * 1e3, worst_cpu * 1e3);
	hs_server_stop(srv);
	hs_app_release(&app);
	return 0;
}
