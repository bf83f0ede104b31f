/*
 * unwind - the call stack of a hook's caller, as call sites.
 *
 * Three unwinders:
 *  - libunwind (default): DWARF CFI, made fast by caching one rule per
 *    return address: where the caller's frame (CFA) is, relative to rsp
 *    or rbp, and where rbp was saved. The rules are read once from the
 *    module's .eh_frame with libdw; then each frame costs one table
 *    lookup and two loads. Frames the cache cannot describe (signal
 *    trampolines, DWARF expressions, code without CFI) make the walk start
 *    over with libunwind's unw_step, which handles everything.
 *  - fp: follow the rbp chain; needs code built with frame pointers.
 *  - slow: libunwind's unw_step for every frame (for comparisons).
 *
 * Every load from the stack is first checked against the thread's stack
 * bounds, so a wrong rule can give a wrong stack but never a crash.
 *
 * Rules are cached per thread (no lock) and, behind hs_unwind_lock, in
 * one global table that threads fill their caches from. A module unload
 * empties both (hs_gen).
 */
#define UNW_LOCAL_ONLY
#include "collector/collector.h"
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libelf.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOW_WALK UINT_MAX
#define GLOBAL_RULES (1u << 16)
#define MAX_FRAME (64u << 20) /* no frame is larger than this */

pthread_mutex_t hs_unwind_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hs_rule *global_rules; /* under hs_unwind_lock */
static size_t nr_global_rules;

static inline size_t rule_slot(uintptr_t ra, size_t mask)
{
	return (size_t)((ra * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

/* Open the module's CFI (under hs_unwind_lock). */
static void open_cfi(struct hs_module *m)
{
	Elf *elf = NULL;

	m->cfi_tried = 1;
	elf_version(EV_CURRENT);
	if (m->path[0] == '/') {
		/* the whole file is mapped: the descriptor is not kept */
		int fd = open(m->path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			if (elf)
				elf_cntl(elf, ELF_C_FDDONE);
			close(fd);
		}
	} else if (!strncmp(m->path, "linux-vdso", 10) ||
		   !strncmp(m->path, "linux-gate", 10)) {
		/* the vDSO is a whole ELF image in memory */
		elf = elf_memory((char *)m->start, m->end - m->start);
	}
	if (!elf)
		return;
	m->elf = elf;
	m->cfi = dwarf_getcfi_elf(elf);
}

void hs_module_close_cfi(struct hs_module *m) HS_HIDDEN;
void hs_module_close_cfi(struct hs_module *m)
{
	if (m->cfi)
		dwarf_cfi_end(m->cfi);
	if (m->elf)
		elf_end(m->elf);
	m->cfi = m->elf = NULL;
	m->cfi_tried = 0;
}

static int is_offset_from_cfa(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return 1;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

/*
 * Work out the rule for return address @ra (under hs_unwind_lock). With
 * @lo and @hi (set by the caller to [ra - 1, ra)), also the range libdw
 * gives for its CFI row (see hs_unwind_rule_range()).
 */
static void compute_rule(struct hs_thread *t, uintptr_t ra, struct hs_rule *r,
			 uintptr_t *lo, uintptr_t *hi)
{
	Dwarf_Addr start = 0, end = 0;
	struct hs_module *m;
	Dwarf_Frame *f = NULL;
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;
	uint64_t base;
	bool sig = false;

	memset(r, 0, sizeof(*r));
	r->ra = ra;
	r->kind = HS_RULE_SLOW;
	m = hs_module_find(ra - 1);
	if (!m) {
		/* a module loaded since the last scan (dlopen in progress)? */
		hs_modules_scan_locked(t);
		m = hs_module_find(ra - 1);
		if (!m) {
			r->kind = HS_RULE_STOP;
			return;
		}
	}
	if (!m->cfi_tried)
		open_cfi(m);
	if (!m->cfi)
		return;
	if (dwarf_cfi_addrframe(m->cfi, ra - 1 - m->bias, &f) || !f)
		return;
	if (dwarf_frame_info(f, &start, &end, &sig) < 0 || sig)
		goto out;
	if (lo && start <= ra - 1 - m->bias && ra - 1 - m->bias < end) {
		*lo = (uintptr_t)start + m->bias;
		*hi = (uintptr_t)end + m->bias;
	}
	/* the return address: undefined marks the outermost frame */
	if (dwarf_frame_register(f, 16, mem, &ops, &n))
		goto out;
	if (n == 0 && ops == mem) {
		r->kind = HS_RULE_END;
		goto out;
	}
	if (!is_offset_from_cfa(ops, n, &off) || off != -8)
		goto out;
	/* the CFA: rsp or rbp plus a constant */
	if (dwarf_frame_cfa(f, &ops, &n) || n != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != 6 && ops[0].number != 7))
		goto out;
	base = ops[0].number;
	off = (int64_t)ops[0].number2;
	if (off <= 0 || off > (int64_t)MAX_FRAME)
		goto out;
	r->cfa_off = (int32_t)off;
	/* rbp: unchanged, or saved near the CFA */
	if (dwarf_frame_register(f, 6, mem, &ops, &n))
		goto out;
	if (n == 0 && ops == NULL) {
		r->bp_off = 0;
	} else if (is_offset_from_cfa(ops, n, &off) && off < 0 && off >= -32768) {
		r->bp_off = (int16_t)off;
	} else {
		goto out;
	}
	r->kind = base == 7 ? HS_RULE_RSP : HS_RULE_RBP;
out:
	free(f);
}

/* Fill the thread's cache slot @r for @ra from the global table or CFI. */
static void fill_rule(struct hs_thread *t, struct hs_rule *r, uintptr_t ra)
{
	size_t mask = GLOBAL_RULES - 1, i;
	int e = errno;
	pthread_mutex_lock(&hs_unwind_lock);
	if (!global_rules) {
		global_rules = (void *)syscall(
		    SYS_mmap, NULL, GLOBAL_RULES * sizeof(struct hs_rule),
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if ((long)global_rules < 0 && (long)global_rules > -4096)
			global_rules = NULL;
	}
	if (global_rules) {
		for (i = rule_slot(ra, mask); global_rules[i].ra; i = (i + 1) & mask)
			if (global_rules[i].ra == ra) {
				*r = global_rules[i];
				pthread_mutex_unlock(&hs_unwind_lock);
				errno = e;
				return;
			}
	}
	compute_rule(t, ra, r, NULL, NULL);
	if (global_rules && 4 * (nr_global_rules + 1) < 3 * GLOBAL_RULES) {
		for (i = rule_slot(ra, mask); global_rules[i].ra; i = (i + 1) & mask)
			;
		global_rules[i] = *r;
		nr_global_rules++;
	}
	pthread_mutex_unlock(&hs_unwind_lock);
	errno = e;
}

void hs_unwind_rule_range(struct hs_thread *t, uintptr_t addr, struct hs_rule *r,
			  uintptr_t *lo, uintptr_t *hi)
{
	int e = errno;

	*lo = addr;
	*hi = addr + 1;
	pthread_mutex_lock(&hs_unwind_lock);
	compute_rule(t, addr + 1, r, lo, hi);
	/*
	 * libdw's start of a row can be too low (after DW_CFA_restore_state it
	 * gives the start of an earlier row): it is kept only if the row found
	 * there is the same rule and ends at the same place.
	 */
	if (*lo < addr) {
		struct hs_rule r2;
		uintptr_t lo2 = *lo, hi2 = *lo + 1;

		compute_rule(t, *lo + 1, &r2, &lo2, &hi2);
		if (r2.kind != r->kind || r2.cfa_off != r->cfa_off ||
		    r2.bp_off != r->bp_off || hi2 != *hi)
			*lo = addr;
	} else {
		*lo = addr;
	}
	pthread_mutex_unlock(&hs_unwind_lock);
	errno = e;
}

void hs_unwind_flush(struct hs_thread *t)
{
	memset(t->rules, 0, sizeof(t->rules));
}

void hs_unwind_global_flush(void)
{
	if (global_rules)
		memset(global_rules, 0, GLOBAL_RULES * sizeof(struct hs_rule));
	nr_global_rules = 0;
}

static inline int in_stack(const struct hs_thread *t, uintptr_t a)
{
	return a >= t->stack_lo && a <= t->stack_hi - sizeof(uintptr_t);
}

/* Read the stack word at @a, logging it. */
static inline uintptr_t rd(struct hs_walk *w, uintptr_t a)
{
	uintptr_t v = *(const uintptr_t *)a;

	if (HS_LIKELY(w->nlog < 2 * HS_SPLICE_DEPTH)) {
		w->addr[w->nlog] = a;
		w->val[w->nlog] = v;
		w->nlog++;
	} else {
		w->overflow = 1;
	}
	return v;
}

/*
 * Whether the reads of walk @p from frame @j on still hold: the words its
 * frames from @j on depend on. A frame's saved rbp is left out unless the
 * frames above it use it (HS_WF_NEED_BP on the next frame), as the memo
 * leaves it out (memo_reads() in stacks.c): code built without frame
 * pointers keeps data in rbp, which changes between walks without
 * changing the stack, and a splice refused for it made the walk go on
 * frame by frame, checking the words above again at each.
 */
static int reads_hold(const struct hs_walk *p, unsigned j)
{
	unsigned k, i, end;

	for (k = j; k < p->n; k++) {
		i = p->logpos[k];
		end = k + 1 < p->n ? p->logpos[k + 1] : p->nlog;
		/* a restoring frame reads the saved rbp first, then the return address */
		if ((p->flags[k] & HS_WF_RESTORE) && i < end &&
		    !(k + 1 < p->n && (p->flags[k + 1] & HS_WF_NEED_BP)))
			i++;
		for (; i < end; i++)
			if (*(const uintptr_t *)p->addr[i] != p->val[i])
				return 0;
	}
	return 1;
}

/*
 * Take the frames of walk @p from its frame @j on as the rest of walk @w,
 * whose frame @n is the same. Returns the new depth.
 */
static unsigned splice_walk(struct hs_walk *w, const struct hs_walk *p, unsigned j,
			    unsigned n, uintptr_t *ips, unsigned max, int *complete)
{
	unsigned k, base = w->nlog - p->logpos[j];

	for (k = j; k < p->n; k++) {
		if (n == max) {
			*complete = 0;
			w->truncated = 1;
			goto out;
		}
		ips[n] = p->ra[k] - 1;
		if (n < HS_SPLICE_DEPTH) {
			w->sp[n] = p->sp[k];
			w->bp[n] = p->bp[k];
			w->ra[n] = p->ra[k];
			w->flags[n] = p->flags[k];
			w->logpos[n] = p->logpos[k] + base;
		}
		n++;
	}
	*complete = p->complete;
	w->truncated = p->truncated;
out:
	if (w->nlog + (p->nlog - p->logpos[j]) <= 2 * HS_SPLICE_DEPTH) {
		memcpy(w->addr + w->nlog, p->addr + p->logpos[j],
		       (p->nlog - p->logpos[j]) * sizeof(uintptr_t));
		memcpy(w->val + w->nlog, p->val + p->logpos[j],
		       (p->nlog - p->logpos[j]) * sizeof(uintptr_t));
		w->nlog += p->nlog - p->logpos[j];
	} else {
		w->overflow = 1;
	}
	return n;
}

static unsigned fast_walk(struct hs_thread *t, uintptr_t fp, uintptr_t *ips, unsigned max,
			  int *complete, struct hs_walk *w)
{
	const struct hs_walk *p = &t->walks[t->cur_walk ^ 1];
	uintptr_t sp = fp + 16, bp = ((uintptr_t *)fp)[0], ra = ((uintptr_t *)fp)[1];
	unsigned n = 0, j = 0, k;
	int can_splice = p->valid;

	for (;;) {
		struct hs_rule *r;
		uintptr_t cfa;
		uint8_t f = 0;

		if (!ra) {
			*complete = 1;
			break;
		}
		if (n == max) {
			*complete = 0;
			w->truncated = 1;
			break;
		}
		if (n < HS_SPLICE_DEPTH) {
			w->sp[n] = sp;
			w->bp[n] = bp;
			w->ra[n] = ra;
			w->logpos[n] = w->nlog;
		}
		/* the rest of the previous walk, if this frame is one of it */
		if (can_splice && n > 0) {
			while (j < p->n && p->sp[j] < sp)
				j++;
			if (j < p->n && p->sp[j] == sp && p->ra[j] == ra &&
			    (!(p->flags[j] & HS_WF_NEED_BP) || p->bp[j] == bp) &&
			    (!p->truncated || n >= j) && reads_hold(p, j)) {
				unsigned at = n;

				n = splice_walk(w, p, j, n, ips, max, complete);
				/* the frames before the splice need their own flags */
				for (k = at; k-- > 0;)
					if (k < HS_SPLICE_DEPTH) {
						uint8_t next = k + 1 < HS_SPLICE_DEPTH
								   ? w->flags[k + 1]
								   : 0;

						if ((w->flags[k] & HS_WF_RBP) ||
						    (!(w->flags[k] & HS_WF_RESTORE) &&
						     (next & HS_WF_NEED_BP)))
							w->flags[k] |= HS_WF_NEED_BP;
					}
				goto done;
			}
		}
		ips[n++] = ra - 1;
		r = &t->rules[rule_slot(ra, HS_RULE_CACHE - 1)];
		if (HS_UNLIKELY(r->ra != ra))
			fill_rule(t, r, ra);
		switch (r->kind) {
		case HS_RULE_RSP:
			cfa = sp + (uintptr_t)r->cfa_off;
			break;
		case HS_RULE_RBP:
			cfa = bp + (uintptr_t)r->cfa_off;
			f |= HS_WF_RBP;
			break;
		case HS_RULE_END:
			*complete = 1;
			goto flags;
		case HS_RULE_STOP:
			*complete = 0;
			goto flags;
		default:
			return SLOW_WALK;
		}
		if (HS_UNLIKELY(cfa <= sp || cfa - sp > MAX_FRAME ||
				!in_stack(t, cfa - 8)))
			return SLOW_WALK;
		if (r->bp_off) {
			if (HS_UNLIKELY(
				!in_stack(t, cfa + (uintptr_t)(intptr_t)r->bp_off)))
				return SLOW_WALK;
			bp = rd(w, cfa + (uintptr_t)(intptr_t)r->bp_off);
			f |= HS_WF_RESTORE;
		}
		ra = rd(w, cfa - 8);
		sp = cfa;
		if (n - 1 < HS_SPLICE_DEPTH)
			w->flags[n - 1] = f;
		continue;
	flags:
		if (n - 1 < HS_SPLICE_DEPTH)
			w->flags[n - 1] = f;
		break;
	}
	/* which frames' rbp the rest of the walk uses, from the top down */
	for (k = n < HS_SPLICE_DEPTH ? n : HS_SPLICE_DEPTH; k-- > 0;) {
		uint8_t next = k + 1 < n && k + 1 < HS_SPLICE_DEPTH ? w->flags[k + 1] : 0;

		if ((w->flags[k] & HS_WF_RBP) ||
		    (!(w->flags[k] & HS_WF_RESTORE) && (next & HS_WF_NEED_BP)))
			w->flags[k] |= HS_WF_NEED_BP;
	}
done:
	w->n = n;
	w->complete = *complete;
	w->valid = n <= HS_SPLICE_DEPTH && !w->overflow;
	return n;
}

static unsigned fp_walk(struct hs_thread *t, uintptr_t fp, uintptr_t *ips, unsigned max,
			int *complete, struct hs_walk *log)
{
	uintptr_t ra = ((uintptr_t *)fp)[1], next = ((uintptr_t *)fp)[0];
	unsigned n = 0;

	/* the chain starts at the caller's rbp; no splicing */
	log->flags[0] = HS_WF_NEED_BP;
	for (;;) {
		if (!ra) {
			*complete = 1;
			return n;
		}
		if (n == max) {
			*complete = 0;
			return n;
		}
		ips[n++] = ra - 1;
		if (!next) {
			*complete = 1;
			return n;
		}
		if (next <= fp || (next & 7) || !in_stack(t, next + 8)) {
			*complete = 0;
			return n;
		}
		fp = next;
		ra = rd(log, fp + 8);
		next = rd(log, fp);
	}
}

/* libunwind from here, skipping our own frames up to the hook's caller. */
static unsigned slow_walk(uintptr_t caller_sp, uintptr_t *ips, unsigned max,
			  int *complete)
{
	unw_context_t uc;
	unw_cursor_t c;
	unsigned n = 0;
	int started = 0, after_signal = 0;

	*complete = 0;
	if (unw_getcontext(&uc) || unw_init_local(&c, &uc))
		return 0;
	for (;;) {
		unw_word_t ip = 0, sp = 0;
		int r;

		unw_get_reg(&c, UNW_REG_IP, &ip);
		unw_get_reg(&c, UNW_REG_SP, &sp);
		if (!started && sp >= caller_sp)
			started = 1;
		if (started) {
			if (!ip) {
				*complete = 1;
				return n;
			}
			if (n == max)
				return n;
			ips[n++] = after_signal ? ip : ip - 1;
		}
		after_signal = unw_is_signal_frame(&c) > 0;
		r = unw_step(&c);
		if (r == 0) {
			*complete = started;
			return n;
		}
		if (r < 0)
			return n;
	}
}

static _Atomic uint64_t checked, differed;

void hs_unwind_report(void)
{
	hs_msg("unwind check: %llu stacks, %llu differ from libunwind's",
	       (unsigned long long)atomic_load(&checked),
	       (unsigned long long)atomic_load(&differed));
}

void hs_unwind_memo_checked(uint32_t remembered, uint32_t walked)
{
	atomic_fetch_add(&checked, 1);
	if (remembered == walked)
		return;
	if (atomic_fetch_add(&differed, 1) < 5)
		hs_msg("unwind check: a remembered walk gave stack %u, walking gives %u",
		       remembered, walked);
}

/* With check_unwind: walk again with libunwind alone and compare. */
static void check_walk(struct hs_thread *t, uintptr_t f, const uintptr_t *ips, unsigned n,
		       unsigned max, int complete)
{
	uintptr_t *other = t->check;
	int c2, e = errno;
	unsigned n2 = slow_walk(f + 16, other, max, &c2), i;

	errno = e;
	atomic_fetch_add(&checked, 1);
	if (n2 == n && c2 == complete && !memcmp(ips, other, n * sizeof(*ips)))
		return;
	if (atomic_fetch_add(&differed, 1) < 5) {
		for (i = 0; i < n && i < n2 && ips[i] == other[i]; i++)
			;
		hs_msg("unwind check: %u frames (complete %d) against libunwind's %u "
		       "(complete %d), first difference at frame %u: %#lx against %#lx",
		       n, complete, n2, c2, i, i < n ? (unsigned long)ips[i] : 0ul,
		       i < n2 ? (unsigned long)other[i] : 0ul);
	}
}

unsigned hs_unwind(struct hs_thread *t, void *fp, uintptr_t *ips, unsigned max,
		   int *complete, struct hs_walk *log)
{
	uintptr_t f = (uintptr_t)fp;
	unsigned n;

	if (max > HS_DEPTH_LIMIT)
		max = HS_DEPTH_LIMIT;
	switch (hs_cfg.unwind) {
	case HS_UNWIND_FP:
		return fp_walk(t, f, ips, max, complete, log);
	case HS_UNWIND_SLOW:
		break;
	default:
		n = fast_walk(t, f, ips, max, complete, log);
		if (HS_LIKELY(n != SLOW_WALK)) {
			if (HS_UNLIKELY(hs_cfg.check_unwind))
				check_walk(t, f, ips, n, max, *complete);
			return n;
		}
		break;
	}
	log->overflow = 1;
	log->valid = 0;
	{
		int e = errno;

		n = slow_walk(f + 16, ips, max, complete);
		errno = e;
	}
	return n;
}
