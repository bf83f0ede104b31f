/*
 * import_perf_script_parse - the line parser of `perf script` text
 * (import_perf_script.h maps the importer's files).
 *
 * A header line `COMM PID[/TID] [CPU] SECONDS: [PERIOD] EVENT: details`
 * becomes a struct header, a frame line's text `SYMBOL[+0xOFF] (MODULE)`
 * a struct frame_text, a tracepoint's `key=value` a span. Everything here
 * reads text in place and fills spans into it: no allocation, no stack
 * source, no state but the caller's. Errors are told in ps->msg (header
 * lines, which the driver may still take for a srcline) or through
 * hs__ps_fail() (frame lines).
 */
#include "io/import_perf_script.h"
#include <stdio.h>
#include <string.h>

/* Decimal digits at *@pp (at least one) into *@v, at most @max. */
int hs__ps_parse_uint(const char **pp, const char *end, uint64_t max, uint64_t *v)
{
	const char *p = *pp;
	uint64_t n = 0;

	if (p == end || !is_digit(*p))
		return -1;
	while (p < end && is_digit(*p)) {
		uint64_t d = (uint64_t)(*p++ - '0');

		if (n > (max - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*pp = p;
	*v = n;
	return 0;
}

/* Tracepoint names that select a kind (matched as whole words). */
static const struct {
	const char *name;
	enum ps_kind kind;
} kind_names[] = {
    {"sched_switch", PS_SCHED_SWITCH},	   {"sched_process_exec", PS_SCHED_EXEC},
    {"sched_process_exit", PS_SCHED_EXIT}, {"sched_waking", PS_SCHED_WAKING},
    {"sched_wakeup", PS_SCHED_WAKEUP},	   {"sched_wakeup_new", PS_SCHED_WAKEUP},
    {"block_rq_issue", PS_BLOCK_ISSUE},	   {"block_rq_complete", PS_BLOCK_COMPLETE},
    {"irq_handler_entry", PS_IRQ_ENTRY},   {"softirq_entry", PS_IRQ_ENTRY},
    {"irq_handler_exit", PS_IRQ_EXIT},	   {"softirq_exit", PS_IRQ_EXIT},
};

#define MAX_SECONDS 9000000000ull /* in ns, it still fits an int64_t */

/*
 * SECONDS: digits, optionally '.' and digits, then ':'. Nanoseconds are
 * computed exactly; digits beyond the ninth decimal are ignored. Seconds
 * past MAX_SECONDS are refused as out of range.
 */
static int parse_time(struct ps *ps, const char **pp, const char *end, int64_t *ns)
{
	const char *p = *pp;
	uint64_t sec, frac = 0;
	int digits = 0;

	if (hs__ps_parse_uint(&p, end, MAX_SECONDS, &sec)) {
		if (p < end && is_digit(*p)) {
			snprintf(ps->msg, sizeof(ps->msg),
				 "bad time '%.*s' (out of range: perf times are seconds, "
				 "at most %llu)",
				 quote_len(*pp, end), *pp, MAX_SECONDS);
			return -1;
		}
		goto bad;
	}
	if (p < end && *p == '.') {
		for (p++; p < end && is_digit(*p); p++)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				digits++;
			}
	}
	for (; digits < 9; digits++)
		frac *= 10;
	if (p == end || *p != ':')
		goto bad;
	*ns = (int64_t)(sec * 1000000000ull + frac);
	*pp = p + 1;
	return 0;
bad:
	snprintf(ps->msg, sizeof(ps->msg), "bad time '%.*s' (expected SECONDS:)",
		 quote_len(*pp, end), *pp);
	return -1;
}

/* "-1": perf's PID or TID of a task it no longer knows (one exiting). */
static int is_minus_one(const char *p, const char *end)
{
	return end - p >= 2 && p[0] == '-' && p[1] == '1' &&
	       (end - p == 2 || !is_digit(p[2]));
}

/* A PID or TID: digits, or -1 (kept as UINT32_MAX, shown as -1). */
static int parse_id(const char **pp, const char *end, uint64_t *v)
{
	if (is_minus_one(*pp, end)) {
		*pp += 2;
		*v = UINT32_MAX;
		return 0;
	}
	return hs__ps_parse_uint(pp, end, INT32_MAX, v);
}

/*
 * Parse `PID[/TID] [CPU] SECONDS: [PERIOD] EVENT: details` at @p. Returns
 * 0, or -1 with the reason in ps->msg.
 */
static int parse_after_comm(struct ps *ps, const char *p, const char *end,
			    struct header *h)
{
	const char *q;
	uint64_t v;

	if (parse_id(&p, end, &h->pid))
		goto bad_pid;
	h->tid = h->pid;
	if (p < end && *p == '/') {
		p++;
		if (parse_id(&p, end, &h->tid))
			goto bad_pid;
	}
	if (p == end) {
		snprintf(ps->msg, sizeof(ps->msg), "header ends after the PID (no time)");
		return -1;
	}
	if (!is_space(*p))
		goto bad_pid;
	p = skip_space(p, end);
	h->cpu = -1;
	if (p < end && *p == '[') {
		q = p + 1;
		if (hs__ps_parse_uint(&q, end, INT32_MAX, &v) || q == end || *q != ']') {
			snprintf(ps->msg, sizeof(ps->msg),
				 "bad CPU '%.*s' (expected [N])", quote_len(p, end), p);
			return -1;
		}
		h->cpu = (int64_t)v;
		p = skip_space(q + 1, end);
	}
	if (p == end) {
		snprintf(ps->msg, sizeof(ps->msg), "header ends before the time");
		return -1;
	}
	if (parse_time(ps, &p, end, &h->time))
		return -1;
	p = skip_space(p, end);
	h->event = h->event_end = h->details = h->details_end = p;
	if (p == end)
		return 0; /* perf script -F without 'event' */
	/* PERIOD: a number before the event name */
	q = p;
	if (!hs__ps_parse_uint(&q, end, UINT64_MAX, &v) && q < end && is_space(*q))
		p = skip_space(q, end);
	q = memchr(p, ':', (size_t)(end - p));
	if (!q) {
		snprintf(ps->msg, sizeof(ps->msg),
			 "expected 'EVENT:' after the time, found '%.*s'",
			 quote_len(p, end), p);
		return -1;
	}
	h->event = p;
	h->event_end = q;
	/* cpu/cycles/ -> cpu */
	p = memchr(h->event, '/', (size_t)(q - h->event));
	if (p)
		h->event_end = p;
	h->details = skip_space(q + 1, end);
	h->details_end = end;
	return 0;
bad_pid:
	snprintf(ps->msg, sizeof(ps->msg),
		 "expected 'PID[/TID]' after the command name, found '%.*s'",
		 quote_len(p, end), p);
	return -1;
}

/*
 * Does the token at @p look like the PID that ends COMM: `digits/digits`,
 * or `digits` followed by ` [` or by ` SECONDS:`?
 */
static int looks_like_pid(const char *p, const char *end)
{
	if (is_minus_one(p, end))
		p += 2;
	while (p < end && is_digit(*p))
		p++;
	if (p < end && *p == '/')
		return p + 1 < end && (is_digit(p[1]) || is_minus_one(p + 1, end));
	if (p == end || !is_space(*p))
		return 0;
	p = skip_space(p, end);
	if (p < end && *p == '[')
		return 1;
	if (p == end || !is_digit(*p))
		return 0;
	while (p < end && (is_digit(*p) || *p == '.'))
		p++;
	return p < end && *p == ':';
}

/*
 * COMM is free-form (spaces, digits, slashes, or empty), so try each
 * whitespace-separated token that looks like a PID, left to right; the
 * first one after which the rest of the header parses ends COMM.
 */
int hs__ps_parse_header(struct ps *ps, const char *line, const char *end,
			struct header *h)
{
	const char *p = skip_space(line, end);
	char first[sizeof(ps->msg)];
	int tried = 0;

	for (; p < end; p++) {
		if ((!is_digit(*p) && !is_minus_one(p, end)) ||
		    (p > line && !is_space(p[-1])))
			continue;
		if (!looks_like_pid(p, end))
			continue;
		if (!parse_after_comm(ps, p, end, h)) {
			h->comm = skip_space(line, end);
			h->comm_end = trim_end(h->comm, p);
			return 0;
		}
		if (!tried++) /* report the first problem */
			memcpy(first, ps->msg, sizeof(first));
	}
	if (tried)
		memcpy(ps->msg, first, sizeof(first));
	else
		snprintf(ps->msg, sizeof(ps->msg),
			 "expected 'PID[/TID]' after the command name "
			 "(a header is 'COMM PID[/TID] [CPU] SECONDS: EVENT:')");
	return -1;
}

/*
 * Kind of an event from its name and the start of its details
 * ("sched:sched_switch: prev_comm=..." has name "sched" and details
 * "sched_switch: ...").
 */
enum ps_kind hs__ps_event_kind(const struct header *h)
{
	size_t i, n, dn = (size_t)(h->details_end - h->details);
	size_t en = (size_t)(h->event_end - h->event);

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		n = strlen(kind_names[i].name);
		if (dn >= n && !memcmp(h->details, kind_names[i].name, n) &&
		    (dn == n || h->details[n] == ':' || is_space(h->details[n])))
			return kind_names[i].kind;
		if (en == n && !memcmp(h->event, kind_names[i].name, n))
			return kind_names[i].kind;
	}
	return PS_CPU;
}

/* Strip outer () and [] pairs repeatedly: "([unknown])" -> "unknown". */
static void strip_brackets(const char **p, const char **end)
{
	while (*end - *p >= 2 &&
	       ((**p == '(' && (*end)[-1] == ')') || (**p == '[' && (*end)[-1] == ']'))) {
		(*p)++;
		(*end)--;
	}
}

/* Remove the last "+0x..." from @p..*@end unless it starts or ends it. */
static void strip_offset(const char *p, const char **end)
{
	const char *q, *lim;

	if (*end - p < 4)
		return;
	/* a '+' at p + 1 ... *end - 3, the last one first */
	for (lim = *end - 2; (q = memrchr(p + 1, '+', (size_t)(lim - p - 1))); lim = q)
		if (q[1] == '0' && q[2] == 'x') {
			if (q + 3 < *end)
				*end = q;
			return;
		}
}

static int equals(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) == n && !memcmp(p, s, n);
}

/*
 * In map-file symbol text, the first space-separated "[Assembly]" token
 * names the module and what follows it the symbol
 * ("instance void [System.Private.CoreLib] System.X::Y()"). Returns 1 and
 * the two spans, or 0 when there is no such token (or nothing after it).
 */
int hs__ps_assembly_token(const char *p, const char *end, const char **mod,
			  const char **mod_end, const char **sym, const char **sym_end)
{
	const char *t = p, *te;

	while (t < end) {
		te = memchr(t, ' ', (size_t)(end - t));
		if (!te)
			te = end;
		if (te - t >= 3 && *t == '[' && te[-1] == ']') {
			*sym = skip_space(te, end);
			*sym_end = trim_end(*sym, end);
			if (*sym == *sym_end)
				return 0;
			*mod = t + 1;
			*mod_end = te - 1;
			return 1;
		}
		t = te + 1;
	}
	return 0;
}

/*
 * jitted-<pid>.so (perf's jitdump): "[ret] [Assembly] Ns.Type::Method(args)"
 * becomes module "Assembly", symbol "Ns.Type::Method(args)". Left as is
 * when the text does not have that shape.
 */
void hs__ps_jitted_rule(const char **mod, const char **mod_end, const char **sym,
			const char **sym_end)
{
	const char *p = *sym;
	ptrdiff_t i = *sym_end - p - 1, name, close;
	int depth = 0;

	if (*mod_end - *mod < 10 || memcmp(*mod, "jitted-", 7) ||
	    memcmp(*mod_end - 3, ".so", 3) || i < 0 || p[i] != ')')
		return;
	/* the '(' matching the final ')' */
	for (; i >= 0; i--) {
		if (p[i] == ')')
			depth++;
		else if (p[i] == '(' && --depth == 0)
			break;
	}
	while (i >= 0 && p[i] != ' ')
		i--;
	if (i < 0)
		return;
	name = i + 1;
	while (i >= 0 && p[i] != ']')
		i--;
	if (i < 0)
		return;
	close = i;
	while (i >= 0 && p[i] != '[')
		i--;
	if (i < 0)
		return;
	*mod = p + i + 1;
	*mod_end = p + close;
	*sym = p + name;
}

/*
 * .NET runtimes append the JIT's optimization tier to symbols
 * ("Foo()[OptimizedTier1]"); it moves to the front of the frame's symbol
 * ("module![OptimizedTier1]Foo()"). An "[Unknown]" tier is dropped.
 */
void hs__ps_take_tier(struct frame_text *ft)
{
	static const char *const tiers[] = {
	    "MinOptJitted",
	    "Optimized",
	    "QuickJitted",
	    "OptimizedTier1",
	    "OptimizedTier1OSR",
	    "ReadyToRun",
	    "PreJIT",
	    "QuickJittedInstrumented",
	    "OptimizedTier1Instrumented",
	    "Unknown",
	};
	const char *open = ft->sym_end - 2;
	size_t i;

	ft->tier = ft->tier_end = NULL;
	if (ft->sym_end - ft->sym < 3 || ft->sym_end[-1] != ']')
		return;
	while (open > ft->sym && *open != '[')
		open--;
	if (*open != '[' || ft->sym_end - open <= 2)
		return;
	for (i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++) {
		if (!equals(open + 1, ft->sym_end - 1, tiers[i]))
			continue;
		if (strcmp(tiers[i], "Unknown")) {
			ft->tier = open + 1;
			ft->tier_end = ft->sym_end - 1;
		}
		ft->sym_end = open;
		return;
	}
}

/*
 * Split the text after a frame's address, "SYMBOL[+0xOFF] (MODULE)", into
 * module file name and symbol (the spans point into @p..@end).
 */
int hs__ps_split_frame(struct ps *ps, const char *p, const char *end,
		       struct frame_text *ft)
{
	const char *lp, *raw_sym, *raw_sym_end, *s;

	lp = last_paren(p, end);
	if (!lp)
		return hs__ps_fail(
		    ps, "frame line has no '(MODULE)' after '%.*s'%s", quote_len(p, end),
		    p, ps->lr.last_had_newline ? " (perf script -F needs 'dso')" : "");
	if (end[-1] != ')')
		return hs__ps_fail(ps,
				   "frame line does not end with ')' after '(MODULE'");
	/* perf marks inline frames "SYMBOL (MODULE) (inlined)" */
	ft->inlined = 0;
	if (equals(lp, end, "(inlined)") && lp > p) {
		const char *e = trim_end(p, lp);
		const char *lp2 = NULL;

		if (e > p && e[-1] == ')')
			lp2 = memrchr(p, '(', (size_t)(e - p));

		if (lp2) {
			lp = lp2;
			end = e;
		} else {
			ft->inlined = 1;
		}
	}
	ft->mod = lp;
	ft->mod_end = end;
	strip_brackets(&ft->mod, &ft->mod_end);
	ft->mod = skip_space(ft->mod, ft->mod_end);
	ft->mod_end = trim_end(ft->mod, ft->mod_end);
	strip_brackets(&ft->mod, &ft->mod_end);

	raw_sym = p;
	raw_sym_end = trim_end(p, lp);
	ft->sym = raw_sym;
	ft->sym_end = raw_sym_end;
	strip_brackets(&ft->sym, &ft->sym_end);

	if (ft->mod_end - ft->mod >= 4 && !memcmp(ft->mod_end - 4, ".map", 4)) {
		/* perf-<pid>.map text may carry "[Assembly] symbol" */
		const char *m, *me, *y, *ye;

		if (hs__ps_assembly_token(raw_sym, raw_sym_end, &m, &me, &y, &ye)) {
			ft->mod = m;
			ft->mod_end = me;
			ft->sym = y;
			ft->sym_end = ye;
		}
	}
	/* module file name, without a "+0x..." offset perf -F dsoff adds */
	for (s = ft->mod_end; s > ft->mod; s--)
		if (s[-1] == '/' || s[-1] == '\\')
			break;
	ft->mod = s;
	strip_offset(ft->mod, &ft->mod_end);
	strip_offset(ft->sym, &ft->sym_end);
	hs__ps_take_tier(ft);
	ft->unknown = equals(ft->mod, ft->mod_end, "unknown") ||
		      equals(ft->sym, ft->sym_end, "unknown");
	hs__ps_jitted_rule(&ft->mod, &ft->mod_end, &ft->sym, &ft->sym_end);
	return 0;
}

/*
 * `perf script -F +srcline` prints "  file.c:12" (or "  ??:0", or
 * "  f.c:7 (discriminator 2)", or "  module[hexaddr]" when it knows no
 * line) on a line of its own under a frame.
 */
int hs__ps_is_srcline(const char *line, const char *end)
{
	const char *p = trim_end(line, end), *d;

	if (end - line < 3 || line[0] != ' ' || line[1] != ' ' || is_space(line[2]))
		return 0;
	if (p[-1] == ']') {
		for (d = p - 1; d > line && hex_value(d[-1]) >= 0; d--)
			;
		return d < p - 1 && d - 1 > line + 2 && d[-1] == '[';
	}
	if (p > line && p[-1] == ')') {
		const char *open = p - 1;

		while (open > line && *open != '(')
			open--;
		if (p - open < 16 || memcmp(open, "(discriminator ", 15))
			return 0;
		p = trim_end(line, open);
	}
	for (d = p; d > line && is_digit(d[-1]); d--)
		;
	return d < p && d > line && d[-1] == ':';
}

/*
 * The value of the field "@key=" in @p..@end: the first (@last = 0) or
 * last occurrence that starts the text or follows a blank. The value runs
 * to the next blank. Returns 0, or -1 when there is no such field or its
 * value is empty.
 */
int hs__ps_find_field(const char *p, const char *end, const char *key, int last,
		      const char **val, const char **val_end)
{
	size_t kl = strlen(key);
	const char *q = p, *hit = NULL;

	while ((size_t)(end - q) >= kl) {
		const char *k = memmem(q, (size_t)(end - q), key, kl);

		if (!k)
			break;
		if (k == p || is_space(k[-1])) {
			hit = k;
			if (!last)
				break;
		}
		q = k + 1;
	}
	if (!hit)
		return -1;
	*val = hit + kl;
	for (*val_end = *val; *val_end < end && !is_space(**val_end); (*val_end)++)
		;
	return *val_end > *val ? 0 : -1;
}
