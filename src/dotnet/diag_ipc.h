#ifndef HS_DOTNET_DIAG_IPC_H
#define HS_DOTNET_DIAG_IPC_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/log.h"

/*
 * diag_ipc - a client of the .NET runtime's diagnostic IPC protocol
 * (dotnet/diagnostics documentation/design-docs/ipc-protocol.md), enough
 * to record EventPipe sessions: CollectTracing2, StopTracing,
 * ResumeRuntime, and the "ADVR_V1" advertisement a runtime started with
 * DOTNET_DiagnosticPorts=PATH,suspend,connect sends to our socket.
 *
 * Each connection carries one command: a 20-byte header ("DOTNET_IPC_V1\0",
 * uint16 total size, uint8 command set, uint8 command, uint16 reserved),
 * then the payload, all little-endian. The reply has the same header with
 * command set 0xFF: command 0x00 is OK (a command-specific payload
 * follows), 0xFF an error (a uint32 HRESULT follows). After an OK to
 * CollectTracing the same connection carries the .nettrace stream until the
 * session stops.
 *
 * Two layers: encoders and decoders on byte arrays (no I/O, unit-tested
 * against the spec's bytes), and blocking calls on a socket whose every
 * read and write is bounded by a timeout, so that a runtime that goes away
 * or hangs never hangs heapscope. Functions return 0 or a negative errno:
 *   -EBADMSG   bad magic, or a reply that is not a reply;
 *   -EPROTO    a size field that contradicts the bytes;
 *   -ENODATA   the peer closed the connection before a whole message;
 *   -ETIMEDOUT nothing came in time;
 *   -EREMOTEIO the runtime answered with an error (its HRESULT is stored);
 *   -E2BIG     a request larger than the protocol's uint16 size;
 *   -ENOMEM    out of memory; other errnos from the system calls.
 * Nothing here prints.
 */

#define HS_DIPC_MAGIC "DOTNET_IPC_V1" /* 13 bytes plus its NUL: 14 */
#define HS_DIPC_MAGIC_SIZE 14
#define HS_DIPC_HEADER_SIZE 20
#define HS_DIPC_ADVERT_MAGIC "ADVR_V1" /* 7 bytes plus its NUL: 8 */
#define HS_DIPC_ADVERT_SIZE 34	       /* magic, GUID, uint64 pid, uint16 */
#define HS_DIPC_MAX_REPLY 4096	       /* reply payloads kept (more is skipped) */

enum hs_dipc_command_set {
	HS_DIPC_SET_EVENTPIPE = 0x02,
	HS_DIPC_SET_PROCESS = 0x04,
	HS_DIPC_SET_SERVER = 0xFF, /* replies */
};

enum hs_dipc_command {
	HS_DIPC_EP_STOP_TRACING = 0x01,
	HS_DIPC_EP_COLLECT_TRACING = 0x02,
	HS_DIPC_EP_COLLECT_TRACING2 = 0x03,
	HS_DIPC_PROCESS_INFO = 0x00,
	HS_DIPC_PROCESS_RESUME_RUNTIME = 0x01,
	HS_DIPC_SERVER_OK = 0x00,
	HS_DIPC_SERVER_ERROR = 0xFF,
};

enum { HS_DIPC_FORMAT_NETTRACE = 1 };

struct hs_dipc_header {
	uint16_t size;	     /* header plus payload */
	uint8_t command_set; /* enum hs_dipc_command_set */
	uint8_t command;     /* enum hs_dipc_command */
	uint16_t reserved;
};

/* One provider of a session: what `--providers` and the defaults give. */
struct hs_dipc_provider {
	const char *name; /* "Microsoft-Windows-DotNETRuntime" (UTF-8) */
	uint64_t keywords;
	uint32_t level;	    /* 0 LogAlways .. 5 Verbose */
	const char *filter; /* "key=value;..." or NULL for none */
};

/* A CollectTracing2 request. */
struct hs_dipc_collect {
	uint32_t buffer_mb; /* the runtime's circular buffer */
	uint32_t format;    /* HS_DIPC_FORMAT_NETTRACE */
	int rundown;	    /* whether the runtime writes the rundown at stop */
	const struct hs_dipc_provider *providers;
	size_t nr_providers;
};

/* The advertisement of a reverse-connecting runtime. */
struct hs_dipc_advert {
	uint8_t cookie[16]; /* the runtime instance's GUID, as sent */
	uint64_t pid;
	uint16_t future;
};

/* A reply, decoded by hs_dipc_read_reply(). */
struct hs_dipc_reply {
	struct hs_dipc_header header;
	uint32_t hresult;    /* of an error reply; 0 for OK */
	size_t payload_size; /* as the header says */
	size_t kept;	     /* bytes of payload[] filled (payload_size capped) */
	uint8_t payload[HS_DIPC_MAX_REPLY];
};

/* --- encoding and decoding (no I/O) ---------------------------------------- */

/*
 * Write a header for a message of @total bytes (header included) into @out.
 * Returns 0, or -E2BIG when @total does not fit the uint16 size field or
 * is less than the header.
 */
HS_MUST_CHECK
int hs_dipc_header_encode(uint8_t out[HS_DIPC_HEADER_SIZE], size_t total,
			  uint8_t command_set, uint8_t command);
/* Decode the header at @p (@n bytes): 0, -ENODATA, -EBADMSG or -EPROTO. */
HS_MUST_CHECK int hs_dipc_header_decode(const uint8_t *p, size_t n,
					struct hs_dipc_header *h);

/*
 * The whole CollectTracing2 message (header included) for @c, into *@out
 * (returned owned: hs_free()) of *@size bytes. Names are converted from
 * UTF-8 to UTF-16. Returns 0, -EINVAL (no provider, a provider without a
 * name, or invalid UTF-8), -E2BIG or -ENOMEM.
 */
HS_MUST_CHECK
int hs_dipc_collect_encode(const struct hs_dipc_collect *c, uint8_t **out, size_t *size);
/* The StopTracing message for @session into @out: its size (28). */
size_t hs_dipc_stop_encode(uint8_t out[28], uint64_t session);
/* The ResumeRuntime message into @out: its size (20). */
size_t hs_dipc_resume_encode(uint8_t out[HS_DIPC_HEADER_SIZE]);
/* Decode an advertisement: 0, -ENODATA (fewer than 34 bytes) or -EBADMSG. */
HS_MUST_CHECK int hs_dipc_advert_decode(const uint8_t *p, size_t n,
					struct hs_dipc_advert *a);
/*
 * Decode a whole reply held in @p (@n bytes) into @r: 0 for OK, -EREMOTEIO
 * for an error reply (@r->hresult set), -ENODATA, -EBADMSG (not a reply)
 * or -EPROTO (an error reply without its HRESULT).
 */
HS_MUST_CHECK int hs_dipc_reply_decode(const uint8_t *p, size_t n,
				       struct hs_dipc_reply *r);
/* The uint64 at the start of an OK reply's payload (a session id): 0 or -EPROTO. */
HS_MUST_CHECK int hs_dipc_reply_u64(const struct hs_dipc_reply *r, uint64_t *v);

/* The name of a diagnostic server HRESULT ("UnknownCommand"), or NULL. */
const char *hs_dipc_hresult_name(uint32_t hresult);

/* --- providers --------------------------------------------------------------- */

/* A list of providers that owns its strings. */
struct hs_dipc_providers {
	struct hs_dipc_provider *v;
	size_t nr, alloc;
};
void hs_dipc_providers_release(struct hs_dipc_providers *l);
/*
 * Add @p (its strings copied) to @l, replacing the provider of the same
 * name (case-insensitive, as the runtime compares them). 0 or -ENOMEM.
 */
HS_MUST_CHECK
int hs_dipc_providers_set(struct hs_dipc_providers *l, const struct hs_dipc_provider *p);
/*
 * The providers heapscope records by default: the runtime's GC (at verbose,
 * for AllocationTick), loader, JIT, exception, contention and stack
 * keywords, and the SampleProfiler. 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_dipc_providers_default(struct hs_dipc_providers *l);
/*
 * Parse dotnet-trace's provider syntax, "Provider[:keywords[:level[:args]]]"
 * entries separated by commas (keywords hex, with or without 0x, default
 * all; level a number 0-5 or a name such as "verbose", default verbose;
 * args "key=value;..." passed on as the filter, with a '"'-quoted value
 * free to hold commas), and set each into @l. Returns 0, -ENOMEM, or
 * -EINVAL with the reason in @err (@errlen bytes).
 */
HS_MUST_CHECK
int hs_dipc_providers_parse(struct hs_dipc_providers *l, const char *spec, char *err,
			    size_t errlen);

/* --- sockets ----------------------------------------------------------------- */

/*
 * Read exactly @n bytes from @fd, waiting at most @timeout_ms for each
 * piece (-1: forever). 0, -ENODATA when the peer closed first, -ETIMEDOUT.
 */
HS_MUST_CHECK int hs_dipc_read_full(int fd, void *buf, size_t n, int timeout_ms);
/* Write all @n bytes (no SIGPIPE): 0, -ETIMEDOUT or -errno (-EPIPE). */
HS_MUST_CHECK int hs_dipc_write_full(int fd, const void *buf, size_t n, int timeout_ms);
/* Read a reply (hs_dipc_reply_decode()'s results, and the read errors). */
HS_MUST_CHECK int hs_dipc_read_reply(int fd, struct hs_dipc_reply *r, int timeout_ms);

/*
 * The diagnostic socket of process @pid: "$TMPDIR/dotnet-diagnostic-PID-KEY-socket"
 * ($TMPDIR or /tmp) whose KEY is the process's start time (a socket left
 * by an earlier process with the same pid has another), the newest when
 * there are several, into @path (@n bytes). 0, -ESRCH when there is no such process,
 * -ENOENT when it has no socket (not a .NET process, or one with the diagnostics
 * disabled).
 */
HS_MUST_CHECK int hs_dipc_find_socket(pid_t pid, char *path, size_t n);
/*
 * The start time of @pid in clock ticks since boot (field 22 of
 * /proc/PID/stat): the runtime's "disambiguation key", the KEY of its
 * socket's name. 0 when it cannot be read.
 */
unsigned long long hs_dipc_socket_key(pid_t pid);
/* Connect to the Unix socket @path: a file descriptor or -errno. */
HS_MUST_CHECK int hs_dipc_connect(const char *path);
/* Listen on a new Unix socket @path: a file descriptor or -errno. */
HS_MUST_CHECK int hs_dipc_listen(const char *path);
/*
 * Accept a connection on @lfd within @timeout_ms and read its
 * advertisement into @a: the connection's descriptor, or -ETIMEDOUT,
 * -ENODATA, -EBADMSG, -errno.
 */
HS_MUST_CHECK int hs_dipc_accept_advert(int lfd, struct hs_dipc_advert *a,
					int timeout_ms);

/*
 * Send CollectTracing2 @c on @fd and read the reply: 0 with *@session
 * set (the stream follows on @fd), -EREMOTEIO with @r->hresult, or the
 * errors above. @r may be NULL.
 */
HS_MUST_CHECK
int hs_dipc_collect(int fd, const struct hs_dipc_collect *c, uint64_t *session,
		    struct hs_dipc_reply *r, int timeout_ms);
/* Send StopTracing of @session on @fd (a second connection) and read the reply. */
HS_MUST_CHECK int hs_dipc_stop(int fd, uint64_t session, struct hs_dipc_reply *r,
			       int timeout_ms);
/* Send ResumeRuntime on @fd and read the reply. */
HS_MUST_CHECK int hs_dipc_resume(int fd, struct hs_dipc_reply *r, int timeout_ms);
/*
 * Copy what the stream @in has (waiting at most @timeout_ms) to @out,
 * adding the count to *@bytes: 1 when bytes were copied, 0 at the end of
 * the stream (the session stopped, or the process went away), -ETIMEDOUT,
 * or -errno of a failed write.
 */
HS_MUST_CHECK int hs_dipc_pump(int in, int out, int timeout_ms, uint64_t *bytes);
#endif
