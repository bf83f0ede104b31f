/*
 * test_diag_ipc - the diagnostic IPC client against bytes built by hand
 * from dotnet/diagnostics' ipc-protocol.md, and its error paths over real
 * socket pairs: short reads, bad magic, error replies, a peer that closes
 * or never answers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "dotnet/diag_ipc.h"

static const uint8_t magic[14] = "DOTNET_IPC_V1";

static void header_is_magic_size_set_command_reserved(void **state)
{
	uint8_t h[20];
	const uint8_t want[20] = {
		'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		0x1C, 0x00, 0x02, 0x01, 0x00, 0x00,
	};
	struct hs_dipc_header d;

	(void)state;
	assert_int_equal(hs_dipc_header_encode(h, 28, 0x02, 0x01), 0);
	assert_memory_equal(h, want, 20);
	assert_int_equal(hs_dipc_header_decode(h, 20, &d), 0);
	assert_int_equal(d.size, 28);
	assert_int_equal(d.command_set, 2);
	assert_int_equal(d.command, 1);
	assert_int_equal(hs_dipc_header_encode(h, 19, 2, 1), -E2BIG);
	assert_int_equal(hs_dipc_header_encode(h, 65536, 2, 1), -E2BIG);
}

static void header_errors(void **state)
{
	uint8_t h[20];
	struct hs_dipc_header d;

	(void)state;
	assert_int_equal(hs_dipc_header_encode(h, 20, 0xFF, 0), 0);
	assert_int_equal(hs_dipc_header_decode(h, 19, &d), -ENODATA);
	h[12] = '2';	/* DOTNET_IPC_V2 */
	assert_int_equal(hs_dipc_header_decode(h, 20, &d), -EBADMSG);
	assert_int_equal(hs_dipc_header_encode(h, 20, 0xFF, 0), 0);
	h[13] = ' ';	/* the NUL is part of the magic */
	assert_int_equal(hs_dipc_header_decode(h, 20, &d), -EBADMSG);
	assert_int_equal(hs_dipc_header_encode(h, 20, 0xFF, 0), 0);
	h[14] = 19;	/* smaller than the header itself */
	assert_int_equal(hs_dipc_header_decode(h, 20, &d), -EPROTO);
}

static void collect_tracing2_payload(void **state)
{
	const struct hs_dipc_provider p[] = {
		{ "AB", 0x4000C019, 5, NULL },
		{ "C", UINT64_MAX, 4, "k=v" },
	};
	const struct hs_dipc_collect c = { 256, 1, 1, p, 2 };
	/* header, buffer MB, format, rundown, count, then each provider:
	 * keywords, level, name (length with NUL, UTF-16), filter */
	const uint8_t want[] = {
		'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		91, 0, 0x02, 0x03, 0, 0,
		0x00, 0x01, 0, 0,	/* 256 */
		1, 0, 0, 0,		/* nettrace */
		1,			/* rundown */
		2, 0, 0, 0,
		0x19, 0xC0, 0x00, 0x40, 0, 0, 0, 0,
		5, 0, 0, 0,
		3, 0, 0, 0, 'A', 0, 'B', 0, 0, 0,
		0, 0, 0, 0,		/* no filter */
		0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
		4, 0, 0, 0,
		2, 0, 0, 0, 'C', 0, 0, 0,
		4, 0, 0, 0, 'k', 0, '=', 0, 'v', 0, 0, 0,
	};
	uint8_t *msg;
	size_t size;

	(void)state;
	assert_int_equal(sizeof(want), 91);
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), 0);
	assert_int_equal(size, sizeof(want));
	assert_memory_equal(msg, want, sizeof(want));
	hs_free(msg);
}

static void collect_utf16_and_refusals(void **state)
{
	struct hs_dipc_provider p = { "\xc3\xa9\xf0\x9f\x98\x80", 0, 0, "" };
	struct hs_dipc_collect c = { 1, 1, 0, &p, 1 };
	/* é is one unit, U+1F600 a surrogate pair; "" is a lone NUL */
	const uint8_t name[] = { 4, 0, 0, 0, 0xE9, 0, 0x3D, 0xD8, 0x00, 0xDE, 0, 0,
				 1, 0, 0, 0, 0, 0 };
	char big[40000];
	uint8_t *msg;
	size_t size;

	(void)state;
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), 0);
	assert_int_equal(size, 20 + 13 + 12 + sizeof(name));
	assert_memory_equal(msg + 20 + 13 + 12, name, sizeof(name));
	assert_int_equal(msg[32], 0);	/* no rundown */
	hs_free(msg);
	c.nr_providers = 0;
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), -EINVAL);
	c.nr_providers = 1;
	p.name = "\xff";
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), -EINVAL);
	p.name = "";
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	p.name = big;	/* 80 KB of UTF-16: more than the uint16 size */
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), -E2BIG);
	hs_alloc_fail_after(0);
	p.name = "x";
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), -ENOMEM);
	hs_alloc_fail_after(-1);
}

static void stop_and_resume(void **state)
{
	uint8_t m[28];

	(void)state;
	assert_int_equal(hs_dipc_stop_encode(m, 0x1122334455667788ull), 28);
	assert_memory_equal(m, magic, 14);
	assert_int_equal(m[14], 28);
	assert_int_equal(m[16], 0x02);
	assert_int_equal(m[17], 0x01);
	assert_int_equal(m[20], 0x88);
	assert_int_equal(m[27], 0x11);
	assert_int_equal(hs_dipc_resume_encode(m), 20);
	assert_int_equal(m[14], 20);
	assert_int_equal(m[16], 0x04);
	assert_int_equal(m[17], 0x01);
}

static void advertisement(void **state)
{
	uint8_t a[34] = { 'A', 'D', 'V', 'R', '_', 'V', '1', 0 };
	struct hs_dipc_advert d;
	int i;

	(void)state;
	for (i = 0; i < 16; i++)
		a[8 + i] = (uint8_t)(0xA0 + i);
	a[24] = 0x39;	/* pid 12345 */
	a[25] = 0x30;
	assert_int_equal(hs_dipc_advert_decode(a, 34, &d), 0);
	assert_int_equal(d.pid, 12345);
	assert_int_equal(d.cookie[0], 0xA0);
	assert_int_equal(d.cookie[15], 0xAF);
	assert_int_equal(hs_dipc_advert_decode(a, 33, &d), -ENODATA);
	a[6] = '2';
	assert_int_equal(hs_dipc_advert_decode(a, 34, &d), -EBADMSG);
}

/* A reply: header with command set 0xFF, @command, then @payload. */
static size_t reply(uint8_t *out, uint8_t command, const uint8_t *payload, size_t n)
{
	assert_int_equal(hs_dipc_header_encode(out, 20 + n, 0xFF, command), 0);
	memcpy(out + 20, payload, n);
	return 20 + n;
}

static void replies(void **state)
{
	const uint8_t session[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const uint8_t hr[4] = { 0x85, 0x13, 0x13, 0x80 };	/* 0x80131385 */
	struct hs_dipc_reply r;
	uint8_t buf[64];
	uint64_t id;
	size_t n;

	(void)state;
	n = reply(buf, 0x00, session, 8);
	assert_int_equal(hs_dipc_reply_decode(buf, n, &r), 0);
	assert_int_equal(hs_dipc_reply_u64(&r, &id), 0);
	assert_true(id == 0x0807060504030201ull);
	assert_int_equal(hs_dipc_reply_decode(buf, n - 1, &r), -ENODATA);
	n = reply(buf, 0xFF, hr, 4);
	assert_int_equal(hs_dipc_reply_decode(buf, n, &r), -EREMOTEIO);
	assert_int_equal(r.hresult, 0x80131385);
	assert_string_equal(hs_dipc_hresult_name(r.hresult), "UnknownCommand");
	assert_int_equal(hs_dipc_reply_u64(&r, &id), -EPROTO);
	n = reply(buf, 0xFF, hr, 2);	/* an error without its HRESULT */
	assert_int_equal(hs_dipc_reply_decode(buf, n, &r), -EPROTO);
	n = reply(buf, 0x00, session, 4);	/* OK, but no session id */
	assert_int_equal(hs_dipc_reply_decode(buf, n, &r), 0);
	assert_int_equal(hs_dipc_reply_u64(&r, &id), -EPROTO);
	n = reply(buf, 0x01, session, 8);	/* neither OK nor error */
	assert_int_equal(hs_dipc_reply_decode(buf, n, &r), -EBADMSG);
	assert_int_equal(hs_dipc_header_encode(buf, 28, 0x02, 0x00), 0);	/* a request, not a reply */
	assert_int_equal(hs_dipc_reply_decode(buf, 28, &r), -EBADMSG);
	assert_string_equal(hs_dipc_hresult_name(0x80131384), "BadEncoding");
	assert_string_equal(hs_dipc_hresult_name(0x80131386), "UnknownMagic");
	assert_string_equal(hs_dipc_hresult_name(0x80131515), "NotSupported");
	assert_null(hs_dipc_hresult_name(0x12345678));
}

static void providers_parse(void **state)
{
	struct hs_dipc_providers l = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(hs_dipc_providers_default(&l), 0);
	assert_int_equal(l.nr, 2);
	assert_string_equal(l.v[0].name, "Microsoft-Windows-DotNETRuntime");
	assert_true(l.v[0].keywords == 0x4000C019);
	assert_int_equal(l.v[0].level, 5);
	/* the same name (any case) replaces; a new one is added */
	assert_int_equal(hs_dipc_providers_parse(&l, "microsoft-windows-dotnetruntime:0x1:4,"
		"My-Source,Other:ff:informational:a=1;b=\"x,y\"", err, sizeof(err)), 0);
	assert_int_equal(l.nr, 4);
	assert_true(l.v[0].keywords == 1);
	assert_int_equal(l.v[0].level, 4);
	assert_string_equal(l.v[2].name, "My-Source");
	assert_true(l.v[2].keywords == UINT64_MAX);
	assert_int_equal(l.v[2].level, 5);
	assert_null(l.v[2].filter);
	assert_true(l.v[3].keywords == 0xff);
	assert_int_equal(l.v[3].level, 4);
	assert_string_equal(l.v[3].filter, "a=1;b=\"x,y\"");
	assert_int_equal(hs_dipc_providers_parse(&l, "P::2", err, sizeof(err)), 0);
	assert_true(l.v[4].keywords == UINT64_MAX);
	assert_int_equal(l.v[4].level, 2);
	assert_int_equal(hs_dipc_providers_parse(&l, "P:xyz", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'xyz'"));
	assert_int_equal(hs_dipc_providers_parse(&l, "P:1:9", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "level '9'"));
	assert_int_equal(hs_dipc_providers_parse(&l, "P:11112222333344445", err,
						 sizeof(err)), -EINVAL);
	assert_int_equal(hs_dipc_providers_parse(&l, "A,,B", err, sizeof(err)), -EINVAL);
	assert_int_equal(hs_dipc_providers_parse(&l, ":1", err, sizeof(err)), -EINVAL);
	assert_int_equal(hs_dipc_providers_parse(&l, "A:1:5:k=\"v", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unclosed"));
	hs_dipc_providers_release(&l);
	assert_int_equal(l.nr, 0);
}

/* Every allocation of the provider list failing in turn: -ENOMEM, nothing leaked. */
static void providers_out_of_memory(void **state)
{
	char err[256];
	long n;
	int r;

	(void)state;
	for (n = 0;; n++) {
		struct hs_dipc_providers l = { 0 };

		hs_alloc_fail_after(n);
		r = hs_dipc_providers_default(&l);
		if (!r)
			r = hs_dipc_providers_parse(&l, "Microsoft-Windows-DotNETRuntime:1:5:a=b,"
						    "Other::4:k=v", err, sizeof(err));
		hs_alloc_fail_after(-1);
		if (!r) {
			assert_int_equal(l.nr, 3);
			assert_string_equal(l.v[0].filter, "a=b");
			hs_dipc_providers_release(&l);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		hs_dipc_providers_release(&l);
	}
	assert_true(n > 4);
}

/* --- over sockets ------------------------------------------------------------ */

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void short_reads_and_timeouts(void **state)
{
	struct hs_dipc_reply r;
	uint8_t buf[64];
	int sv[2];
	size_t n;

	(void)state;
	/* nothing comes: a timeout, not a hang */
	pair(sv);
	assert_int_equal(hs_dipc_read_reply(sv[0], &r, 50), -ETIMEDOUT);
	/* half a header, then the peer goes away */
	assert_int_equal(write(sv[1], magic, 10), 10);
	close(sv[1]);
	assert_int_equal(hs_dipc_read_reply(sv[0], &r, 1000), -ENODATA);
	close(sv[0]);
	/* a whole header, then a payload cut short */
	pair(sv);
	n = reply(buf, 0x00, (const uint8_t *)"12345678", 8);
	assert_int_equal(write(sv[1], buf, n - 3), (ssize_t)(n - 3));
	close(sv[1]);
	assert_int_equal(hs_dipc_read_reply(sv[0], &r, 1000), -ENODATA);
	close(sv[0]);
	/* garbage where the magic should be */
	pair(sv);
	memset(buf, 'x', 20);
	assert_int_equal(write(sv[1], buf, 20), 20);
	assert_int_equal(hs_dipc_read_reply(sv[0], &r, 1000), -EBADMSG);
	close(sv[0]);
	/* writing to a peer that went away: an error, not SIGPIPE */
	assert_int_equal(hs_dipc_write_full(sv[1], buf, 20, 1000), -EPIPE);
	close(sv[1]);
}

static void a_long_reply_is_skipped_past(void **state)
{
	static uint8_t buf[20 + 5000];
	struct hs_dipc_reply r;
	int sv[2];

	(void)state;
	pair(sv);
	memset(buf + 20, 7, 5000);
	assert_int_equal(hs_dipc_header_encode(buf, sizeof(buf), 0xFF, 0x00), 0);
	assert_int_equal(write(sv[1], buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(write(sv[1], "next", 4), 4);
	assert_int_equal(hs_dipc_read_reply(sv[0], &r, 1000), 0);
	assert_int_equal(r.payload_size, 5000);
	assert_int_equal(r.kept, HS_DIPC_MAX_REPLY);
	assert_int_equal(hs_dipc_read_full(sv[0], buf, 4, 1000), 0);
	assert_memory_equal(buf, "next", 4);
	close(sv[0]);
	close(sv[1]);
}

static void collect_over_a_socket(void **state)
{
	const struct hs_dipc_provider p = { "P", 1, 5, NULL };
	const struct hs_dipc_collect c = { 64, 1, 1, &p, 1 };
	const uint8_t id[8] = { 42 };
	const uint8_t hr[4] = { 0x15, 0x15, 0x13, 0x80 };
	struct hs_dipc_reply r;
	uint8_t buf[128], *msg;
	uint64_t session = 0, bytes = 0;
	size_t n, size;
	int sv[2], out[2];

	(void)state;
	pair(sv);
	n = reply(buf, 0x00, id, 8);
	assert_int_equal(write(sv[1], buf, n), (ssize_t)n);
	assert_int_equal(write(sv[1], "Nettrace", 8), 8);
	assert_int_equal(hs_dipc_collect(sv[0], &c, &session, &r, 1000), 0);
	assert_true(session == 42);
	/* the runtime got exactly the encoded request */
	assert_int_equal(hs_dipc_collect_encode(&c, &msg, &size), 0);
	assert_int_equal(hs_dipc_read_full(sv[1], buf, size, 1000), 0);
	assert_memory_equal(buf, msg, size);
	hs_free(msg);
	/* then the stream follows on the same connection, to its end */
	pair(out);
	assert_int_equal(hs_dipc_pump(sv[0], out[1], 1000, &bytes), 1);
	assert_true(bytes == 8);
	assert_int_equal(hs_dipc_read_full(out[0], buf, 8, 1000), 0);
	assert_memory_equal(buf, "Nettrace", 8);
	assert_int_equal(hs_dipc_pump(sv[0], out[1], 50, &bytes), -ETIMEDOUT);
	close(sv[1]);
	assert_int_equal(hs_dipc_pump(sv[0], out[1], 1000, &bytes), 0);
	close(sv[0]);
	close(out[0]);
	close(out[1]);
	/* an error reply: its HRESULT */
	pair(sv);
	n = reply(buf, 0xFF, hr, 4);
	assert_int_equal(write(sv[1], buf, n), (ssize_t)n);
	assert_int_equal(hs_dipc_collect(sv[0], &c, &session, &r, 1000), -EREMOTEIO);
	assert_int_equal(r.hresult, 0x80131515);
	close(sv[0]);
	close(sv[1]);
	/* the runtime goes away without answering */
	pair(sv);
	close(sv[1]);
	assert_int_equal(hs_dipc_stop(sv[0], 1, &r, 1000), -EPIPE);
	close(sv[0]);
}

static void listen_accept_and_find(void **state)
{
	char dir[] = "/tmp/test_diag_ipc.XXXXXX", path[256], stale[256], found[256];
	unsigned long long key;
	uint8_t adv[34] = { 'A', 'D', 'V', 'R', '_', 'V', '1', 0 };
	struct hs_dipc_advert a;
	struct hs_dipc_reply r;
	uint8_t buf[20];
	int lfd, cfd, sfd;
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	key = hs_dipc_socket_key(getpid());
	assert_true(key > 0);
	snprintf(path, sizeof(path), "%s/dotnet-diagnostic-%d-%llu-socket", dir, (int)getpid(),
		 key);
	/* a socket an earlier process of the same pid left behind, newer */
	snprintf(stale, sizeof(stale), "%s/dotnet-diagnostic-%d-%llu-socket", dir,
		 (int)getpid(), key + 1);
	lfd = hs_dipc_listen(path);
	sfd = hs_dipc_listen(stale);
	assert_true(sfd >= 0);
	close(sfd);
	assert_true(lfd >= 0);
	/* nobody connects: a timeout */
	assert_int_equal(hs_dipc_accept_advert(lfd, &a, 50), -ETIMEDOUT);
	/* the runtime's side: connect and advertise pid 77 */
	cfd = hs_dipc_connect(path);
	assert_true(cfd >= 0);
	adv[24] = 77;
	assert_int_equal(write(cfd, adv, 34), 34);
	sfd = hs_dipc_accept_advert(lfd, &a, 1000);
	assert_true(sfd >= 0);
	assert_int_equal(a.pid, 77);
	/* ResumeRuntime goes to it; an OK comes back */
	assert_int_equal(hs_dipc_header_encode(buf, 20, 0xFF, 0x00), 0);
	assert_int_equal(write(cfd, buf, 20), 20);
	assert_int_equal(hs_dipc_resume(sfd, &r, 1000), 0);
	assert_int_equal(hs_dipc_read_full(cfd, buf, 20, 1000), 0);
	assert_int_equal(buf[16], 0x04);
	assert_int_equal(buf[17], 0x01);
	close(sfd);
	close(cfd);
	/* an advertisement with a bad magic */
	cfd = hs_dipc_connect(path);
	assert_int_equal(write(cfd, "ADVR_V2", 8), 8);
	assert_int_equal(write(cfd, adv + 8, 26), 26);
	assert_int_equal(hs_dipc_accept_advert(lfd, &a, 1000), -EBADMSG);
	close(cfd);
	/* one that stops short */
	cfd = hs_dipc_connect(path);
	assert_int_equal(write(cfd, adv, 10), 10);
	close(cfd);
	assert_int_equal(hs_dipc_accept_advert(lfd, &a, 1000), -ENODATA);
	/* the socket of a process is found in $TMPDIR, not the stale one */
	setenv("TMPDIR", dir, 1);
	assert_int_equal(hs_dipc_find_socket(getpid(), found, sizeof(found)), 0);
	assert_string_equal(found, path);
	unlink(path);
	assert_int_equal(hs_dipc_find_socket(getpid(), found, sizeof(found)), -ENOENT);
	unlink(stale);
	assert_int_equal(hs_dipc_find_socket(getppid(), found, sizeof(found)), -ENOENT);
	assert_int_equal(hs_dipc_find_socket(0, found, sizeof(found)), -ESRCH);
	assert_int_equal(hs_dipc_find_socket(0x7ffffff0, found, sizeof(found)), -ESRCH);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	close(lfd);
	unlink(path);
	rmdir(dir);
	assert_true(hs_dipc_connect(path) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_is_magic_size_set_command_reserved),
		cmocka_unit_test(header_errors),
		cmocka_unit_test(collect_tracing2_payload),
		cmocka_unit_test(collect_utf16_and_refusals),
		cmocka_unit_test(stop_and_resume),
		cmocka_unit_test(advertisement),
		cmocka_unit_test(replies),
		cmocka_unit_test(providers_parse),
		cmocka_unit_test(providers_out_of_memory),
		cmocka_unit_test(short_reads_and_timeouts),
		cmocka_unit_test(a_long_reply_is_skipped_past),
		cmocka_unit_test(collect_over_a_socket),
		cmocka_unit_test(listen_accept_and_find),
	};
	return cmocka_run_group_tests_name("diag_ipc", tests, NULL, NULL);
}
