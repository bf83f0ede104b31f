/*
 * diag_ipc - the .NET diagnostic IPC client (see diag_ipc.h for the
 * protocol and the error contract). The encoders build whole messages in
 * memory; the socket calls wait with poll() so every wait is bounded.
 */
#include "dotnet/diag_ipc.h"
#include "common/alloc.h"
#include "common/utf8.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

int hs_dipc_header_encode(uint8_t out[HS_DIPC_HEADER_SIZE], size_t total,
			  uint8_t command_set, uint8_t command)
{
	if (total < HS_DIPC_HEADER_SIZE || total > UINT16_MAX)
		return -E2BIG;
	memcpy(out, HS_DIPC_MAGIC, HS_DIPC_MAGIC_SIZE); /* with its NUL */
	put16(out + 14, (uint16_t)total);
	out[16] = command_set;
	out[17] = command;
	put16(out + 18, 0);
	return 0;
}

int hs_dipc_header_decode(const uint8_t *p, size_t n, struct hs_dipc_header *h)
{
	if (n < HS_DIPC_HEADER_SIZE)
		return -ENODATA;
	if (memcmp(p, HS_DIPC_MAGIC, HS_DIPC_MAGIC_SIZE))
		return -EBADMSG;
	h->size = get16(p + 14);
	h->command_set = p[16];
	h->command = p[17];
	h->reserved = get16(p + 18);
	if (h->size < HS_DIPC_HEADER_SIZE)
		return -EPROTO;
	return 0;
}

/*
 * The UTF-16 code units of UTF-8 @s, plus the NUL; -EINVAL for invalid
 * UTF-8. With @out, they are stored there too, little-endian.
 */
static long utf16_units(const char *s, uint8_t *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	long units = 0;

	while (left) {
		unsigned long cp;
		size_t k = hs_utf8_seq_len(p, left, &cp);

		if (!k)
			return -EINVAL;
		if (cp >= 0x10000) {
			if (out) {
				cp -= 0x10000;
				put16(out + 2 * units, (uint16_t)(0xD800 | cp >> 10));
				put16(out + 2 * units + 2,
				      (uint16_t)(0xDC00 | (cp & 0x3FF)));
			}
			units += 2;
		} else {
			if (out)
				put16(out + 2 * units, (uint16_t)cp);
			units++;
		}
		p += k;
		left -= k;
	}
	if (out)
		put16(out + 2 * units, 0);
	return units + 1;
}

/* A protocol string's size: uint32 length (NUL counted), the units; NULL: 4. */
static long string_size(const char *s)
{
	long units;

	if (!s)
		return 4;
	units = utf16_units(s, NULL);
	return units < 0 ? units : 4 + 2 * units;
}

static size_t put_string(uint8_t *p, const char *s)
{
	long units;

	if (!s) {
		put32(p, 0);
		return 4;
	}
	units = utf16_units(s, p + 4);
	put32(p, (uint32_t)units);
	return 4 + 2 * (size_t)units;
}

int hs_dipc_collect_encode(const struct hs_dipc_collect *c, uint8_t **out, size_t *size)
{
	size_t total = HS_DIPC_HEADER_SIZE + 4 + 4 + 1 + 4, i, at;
	uint8_t *msg;

	if (!c->nr_providers)
		return -EINVAL;
	for (i = 0; i < c->nr_providers; i++) {
		const struct hs_dipc_provider *p = &c->providers[i];
		long a, b;

		if (!p->name || !*p->name)
			return -EINVAL;
		a = string_size(p->name);
		b = string_size(p->filter);
		if (a < 0 || b < 0)
			return -EINVAL;
		total += 8 + 4 + (size_t)a + (size_t)b;
		if (total > UINT16_MAX)
			return -E2BIG;
	}
	msg = hs_malloc(total);
	if (!msg)
		return -ENOMEM;
	/* total was checked against UINT16_MAX above: the header cannot fail */
	HS_BUG_ON(hs_dipc_header_encode(msg, total, HS_DIPC_SET_EVENTPIPE,
					HS_DIPC_EP_COLLECT_TRACING2) != 0);
	at = HS_DIPC_HEADER_SIZE;
	put32(msg + at, c->buffer_mb);
	put32(msg + at + 4, c->format);
	msg[at + 8] = c->rundown ? 1 : 0;
	put32(msg + at + 9, (uint32_t)c->nr_providers);
	at += 13;
	for (i = 0; i < c->nr_providers; i++) {
		const struct hs_dipc_provider *p = &c->providers[i];

		put64(msg + at, p->keywords);
		put32(msg + at + 8, p->level);
		at += 12;
		at += put_string(msg + at, p->name);
		at += put_string(msg + at, p->filter);
	}
	*out = msg;
	*size = total;
	return 0;
}

size_t hs_dipc_stop_encode(uint8_t out[28], uint64_t session)
{
	HS_BUG_ON(hs_dipc_header_encode(out, 28, HS_DIPC_SET_EVENTPIPE,
					HS_DIPC_EP_STOP_TRACING) != 0);
	put64(out + HS_DIPC_HEADER_SIZE, session);
	return 28;
}

size_t hs_dipc_resume_encode(uint8_t out[HS_DIPC_HEADER_SIZE])
{
	HS_BUG_ON(hs_dipc_header_encode(out, HS_DIPC_HEADER_SIZE, HS_DIPC_SET_PROCESS,
					HS_DIPC_PROCESS_RESUME_RUNTIME) != 0);
	return HS_DIPC_HEADER_SIZE;
}

int hs_dipc_advert_decode(const uint8_t *p, size_t n, struct hs_dipc_advert *a)
{
	if (n < HS_DIPC_ADVERT_SIZE)
		return -ENODATA;
	if (memcmp(p, HS_DIPC_ADVERT_MAGIC, 8)) /* with its NUL */
		return -EBADMSG;
	memcpy(a->cookie, p + 8, 16);
	a->pid = get64(p + 24);
	a->future = get16(p + 32);
	return 0;
}

/* Check a reply's header and fill @r's fields but the payload. */
static int reply_header(const uint8_t *p, size_t n, struct hs_dipc_reply *r)
{
	int err = hs_dipc_header_decode(p, n, &r->header);

	if (err)
		return err;
	if (r->header.command_set != HS_DIPC_SET_SERVER ||
	    (r->header.command != HS_DIPC_SERVER_OK &&
	     r->header.command != HS_DIPC_SERVER_ERROR))
		return -EBADMSG;
	r->payload_size = r->header.size - HS_DIPC_HEADER_SIZE;
	r->hresult = 0;
	r->kept = 0;
	return 0;
}

/* Finish @r once its payload is in: the error reply's HRESULT. */
static int reply_status(struct hs_dipc_reply *r)
{
	if (r->header.command == HS_DIPC_SERVER_OK)
		return 0;
	if (r->kept < 4)
		return -EPROTO;
	r->hresult = get32(r->payload);
	return -EREMOTEIO;
}

int hs_dipc_reply_decode(const uint8_t *p, size_t n, struct hs_dipc_reply *r)
{
	int err = reply_header(p, n, r);

	if (err)
		return err;
	if (n < r->header.size)
		return -ENODATA;
	r->kept =
	    r->payload_size < sizeof(r->payload) ? r->payload_size : sizeof(r->payload);
	memcpy(r->payload, p + HS_DIPC_HEADER_SIZE, r->kept);
	return reply_status(r);
}

int hs_dipc_reply_u64(const struct hs_dipc_reply *r, uint64_t *v)
{
	if (r->header.command != HS_DIPC_SERVER_OK || r->kept < 8)
		return -EPROTO;
	*v = get64(r->payload);
	return 0;
}

const char *hs_dipc_hresult_name(uint32_t hresult)
{
	static const struct {
		uint32_t hresult;
		const char *name;
	} names[] = {
	    {0x80004005, "Fail"},	  {0x80070057, "InvalidArgument"},
	    {0x80131515, "NotSupported"}, {0x8013136A, "ProfilerAlreadyActive"},
	    {0x80131384, "BadEncoding"},  {0x80131385, "UnknownCommand"},
	    {0x80131386, "UnknownMagic"}, {0x80131387, "UnknownError"},
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].hresult == hresult)
			return names[i].name;
	return NULL;
}

/* --- providers --------------------------------------------------------------- */

void hs_dipc_providers_release(struct hs_dipc_providers *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++) {
		hs_free((char *)l->v[i].name);
		hs_free((char *)l->v[i].filter);
	}
	hs_free(l->v);
	l->v = NULL;
	l->nr = l->alloc = 0;
}

int hs_dipc_providers_set(struct hs_dipc_providers *l, const struct hs_dipc_provider *p)
{
	struct hs_dipc_provider copy = *p;
	size_t i;

	copy.name = hs_strdup(p->name);
	copy.filter = p->filter ? hs_strdup(p->filter) : NULL;
	if (!copy.name || (p->filter && !copy.filter))
		goto fail;
	for (i = 0; i < l->nr; i++)
		if (!strcasecmp(l->v[i].name, p->name))
			break;
	if (i == l->nr) {
		struct hs_dipc_provider *v =
		    hs_grow(l->v, sizeof(*v), l->nr + 1, &l->alloc);

		if (!v)
			goto fail;
		l->v = v;
		l->nr++;
	} else {
		hs_free((char *)l->v[i].name);
		hs_free((char *)l->v[i].filter);
	}
	l->v[i] = copy;
	return 0;
fail:
	hs_free((char *)copy.name);
	hs_free((char *)copy.filter);
	return -ENOMEM;
}

int hs_dipc_providers_default(struct hs_dipc_providers *l)
{
	static const struct hs_dipc_provider defaults[] = {
	    /* GC 0x1, Loader 0x8, Jit 0x10, Contention 0x4000, Exception
	     * 0x8000, Stack 0x40000000; verbose for AllocationTick and
	     * MethodLoadVerbose */
	    {"Microsoft-Windows-DotNETRuntime", 0x4000C019, 5, NULL},
	    {"Microsoft-DotNETCore-SampleProfiler", 0, 5, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (hs_dipc_providers_set(l, &defaults[i]))
			return -ENOMEM;
	return 0;
}

static int level_of(const char *s, size_t n, uint32_t *level)
{
	static const char *const names[] = {
	    "logalways", "critical", "error", "warning", "informational", "verbose",
	};
	uint32_t i;

	if (n == 1 && s[0] >= '0' && s[0] <= '5') {
		*level = (uint32_t)(s[0] - '0');
		return 0;
	}
	for (i = 0; i < 6; i++)
		if (strlen(names[i]) == n && !strncasecmp(s, names[i], n)) {
			*level = i;
			return 0;
		}
	return -EINVAL;
}

static int keywords_of(const char *s, size_t n, uint64_t *kw)
{
	uint64_t v = 0;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	if (i == n || n - i > 16)
		return -EINVAL;
	for (; i < n; i++) {
		int d;

		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = s[i] - 'A' + 10;
		else
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	*kw = v;
	return 0;
}

/* One entry "Provider[:keywords[:level[:args]]]" of @n bytes at @s. */
static int parse_one(struct hs_dipc_providers *l, const char *s, size_t n, char *err,
		     size_t errlen)
{
	struct hs_dipc_provider p = {.keywords = UINT64_MAX, .level = 5};
	const char *field[4] = {s, NULL, NULL, NULL};
	size_t len[4] = {n, 0, 0, 0};
	char *name, *filter = NULL;
	int k = 0, r;
	size_t i;

	/* the args (the 4th field) keep their colons */
	for (i = 0; i < n && k < 3; i++)
		if (s[i] == ':') {
			len[k] = (size_t)(s + i - field[k]);
			field[++k] = s + i + 1;
			len[k] = (size_t)(s + n - field[k]);
		}
	if (!len[0]) {
		snprintf(err, errlen, "a provider without a name in '%.*s'", (int)n, s);
		return -EINVAL;
	}
	if (len[1] && keywords_of(field[1], len[1], &p.keywords)) {
		snprintf(err, errlen,
			 "keywords '%.*s' are not a hexadecimal number of "
			 "at most 64 bits",
			 (int)len[1], field[1]);
		return -EINVAL;
	}
	if (len[2] && level_of(field[2], len[2], &p.level)) {
		snprintf(err, errlen,
			 "level '%.*s' is not 0-5 or a level's name (critical, "
			 "error, warning, informational, verbose)",
			 (int)len[2], field[2]);
		return -EINVAL;
	}
	name = hs_strndup(field[0], len[0]);
	if (len[3])
		filter = hs_strndup(field[3], len[3]);
	if (!name || (len[3] && !filter)) {
		hs_free(name);
		hs_free(filter);
		return -ENOMEM;
	}
	p.name = name;
	p.filter = filter;
	r = hs_dipc_providers_set(l, &p);
	hs_free(name);
	hs_free(filter);
	return r;
}

int hs_dipc_providers_parse(struct hs_dipc_providers *l, const char *spec, char *err,
			    size_t errlen)
{
	const char *start = spec, *p;
	int quoted = 0, r;

	for (p = spec;; p++) {
		if (*p == '"')
			quoted = !quoted;
		if (*p && (quoted || *p != ','))
			continue;
		if (p == start) {
			snprintf(err, errlen, "an empty provider in '%s'", spec);
			return -EINVAL;
		}
		r = parse_one(l, start, (size_t)(p - start), err, errlen);
		if (r)
			return r;
		if (!*p)
			break;
		start = p + 1;
	}
	if (quoted) {
		snprintf(err, errlen, "an unclosed '\"' in '%s'", spec);
		return -EINVAL;
	}
	return 0;
}

/* --- sockets ----------------------------------------------------------------- */

/* Wait until @fd is ready for @events: 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int k;

	do
		k = poll(&pfd, 1, timeout_ms);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	return k ? 0 : -ETIMEDOUT;
}

int hs_dipc_read_full(int fd, void *buf, size_t n, int timeout_ms)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t k;
		int err = wait_fd(fd, POLLIN, timeout_ms);

		if (err)
			return err;
		k = read(fd, p, n);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno == ECONNRESET ? -ENODATA : -errno;
		}
		if (!k)
			return -ENODATA;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int hs_dipc_write_full(int fd, const void *buf, size_t n, int timeout_ms)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t k;
		int err = wait_fd(fd, POLLOUT, timeout_ms);

		if (err)
			return err;
		k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int hs_dipc_read_reply(int fd, struct hs_dipc_reply *r, int timeout_ms)
{
	uint8_t head[HS_DIPC_HEADER_SIZE], skip[256];
	size_t left;
	int err;

	err = hs_dipc_read_full(fd, head, sizeof(head), timeout_ms);
	if (!err)
		err = reply_header(head, sizeof(head), r);
	if (err)
		return err;
	r->kept =
	    r->payload_size < sizeof(r->payload) ? r->payload_size : sizeof(r->payload);
	err = hs_dipc_read_full(fd, r->payload, r->kept, timeout_ms);
	for (left = r->payload_size - r->kept; !err && left;) {
		size_t k = left < sizeof(skip) ? left : sizeof(skip);

		err = hs_dipc_read_full(fd, skip, k, timeout_ms);
		left -= k;
	}
	return err ? err : reply_status(r);
}

unsigned long long hs_dipc_socket_key(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start;
	const char *p;
	size_t len;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* the command name is in parentheses and may hold anything but ')' last */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

int hs_dipc_find_socket(pid_t pid, char *path, size_t n)
{
	const char *dir = getenv("TMPDIR");
	unsigned long long key, start;
	char prefix[64];
	struct dirent *de;
	time_t newest = 0;
	size_t plen;
	DIR *d;
	int found = 0;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return -ESRCH;
	start = hs_dipc_socket_key(pid);
	if (!dir || !*dir)
		dir = "/tmp";
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	plen =
	    (size_t)snprintf(prefix, sizeof(prefix), "dotnet-diagnostic-%d-", (int)pid);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char cand[4096];
		struct stat sb;

		if (strncmp(de->d_name, prefix, plen) || len < plen + 7 ||
		    strcmp(de->d_name + len - 7, "-socket"))
			continue;
		/*
		 * A runtime killed before it could remove its socket leaves it
		 * behind, and its pid comes back to another process: only the
		 * socket whose key is this process's start time is its own.
		 */
		if (start &&
		    (sscanf(de->d_name + plen, "%llu", &key) != 1 || key != start))
			continue;
		if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", dir, de->d_name) >=
			sizeof(cand) ||
		    stat(cand, &sb) || !S_ISSOCK(sb.st_mode))
			continue;
		if (found && sb.st_mtime < newest)
			continue;
		if ((size_t)snprintf(path, n, "%s", cand) >= n)
			continue;
		newest = sb.st_mtime;
		found = 1;
	}
	closedir(d);
	return found ? 0 : -ENOENT;
}

static int unix_address(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

int hs_dipc_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, err = unix_address(path, &sa);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int hs_dipc_listen(const char *path)
{
	struct sockaddr_un sa;
	int fd, err = unix_address(path, &sa);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int hs_dipc_accept_advert(int lfd, struct hs_dipc_advert *a, int timeout_ms)
{
	uint8_t buf[HS_DIPC_ADVERT_SIZE];
	int fd, err = wait_fd(lfd, POLLIN, timeout_ms);

	if (err)
		return err;
	do
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	err = hs_dipc_read_full(fd, buf, sizeof(buf), timeout_ms);
	if (!err)
		err = hs_dipc_advert_decode(buf, sizeof(buf), a);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int hs_dipc_collect(int fd, const struct hs_dipc_collect *c, uint64_t *session,
		    struct hs_dipc_reply *r, int timeout_ms)
{
	struct hs_dipc_reply own;
	uint8_t *msg;
	size_t size;
	int err = hs_dipc_collect_encode(c, &msg, &size);

	if (err)
		return err;
	if (!r)
		r = &own;
	err = hs_dipc_write_full(fd, msg, size, timeout_ms);
	hs_free(msg);
	if (!err)
		err = hs_dipc_read_reply(fd, r, timeout_ms);
	if (!err)
		err = hs_dipc_reply_u64(r, session);
	return err;
}

int hs_dipc_stop(int fd, uint64_t session, struct hs_dipc_reply *r, int timeout_ms)
{
	struct hs_dipc_reply own;
	uint8_t msg[28];
	int err =
	    hs_dipc_write_full(fd, msg, hs_dipc_stop_encode(msg, session), timeout_ms);

	return err ? err : hs_dipc_read_reply(fd, r ? r : &own, timeout_ms);
}

int hs_dipc_resume(int fd, struct hs_dipc_reply *r, int timeout_ms)
{
	struct hs_dipc_reply own;
	uint8_t msg[HS_DIPC_HEADER_SIZE];
	int err = hs_dipc_write_full(fd, msg, hs_dipc_resume_encode(msg), timeout_ms);

	return err ? err : hs_dipc_read_reply(fd, r ? r : &own, timeout_ms);
}

int hs_dipc_pump(int in, int out, int timeout_ms, uint64_t *bytes)
{
	uint8_t buf[65536];
	size_t done = 0;
	ssize_t k;
	int err = wait_fd(in, POLLIN, timeout_ms);

	if (err)
		return err;
	do
		k = read(in, buf, sizeof(buf));
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return errno == ECONNRESET ? 0 : -errno;
	if (!k)
		return 0;
	while (done < (size_t)k) {
		ssize_t w = write(out, buf + done, (size_t)k - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)w;
	}
	*bytes += (uint64_t)k;
	return 1;
}
