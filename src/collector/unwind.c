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
#define MAX_FRAME (64u << 20)	/* no frame is larger than this */

pthread_mutex_t hs_unwind_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hs_rule *global_rules;	/* under hs_unwind_lock */
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
	} else if (!strncmp(m->path, "linux-vdso", 10) || !strncmp(m->path, "linux-gate", 10)) {
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

/* Work out the rule for return address @ra (under hs_unwind_lock). */
static void compute_rule(struct hs_thread *t, uintptr_t ra, struct hs_rule *r)
{
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
	if (dwarf_frame_info(f, NULL, NULL, &sig) < 0 || sig)
		goto out;
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
		global_rules = (void *)syscall(SYS_mmap, NULL,
					       GLOBAL_RULES * sizeof(struct hs_rule),
					       PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
	compute_rule(t, ra, r);
	if (global_rules && 4 * (nr_global_rules + 1) < 3 * GLOBAL_RULES) {
		for (i = rule_slot(ra, mask); global_rules[i].ra; i = (i + 1) & mask)
			;
		global_rules[i] = *r;
		nr_global_rules++;
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

/* Read the stack word at @a, logging it for the memo. */
static inline uintptr_t rd(struct hs_reads *log, uintptr_t a)
{
	uintptr_t v = *(const uintptr_t *)a;

	if (log) {
		if (HS_LIKELY(log->n < HS_MEMO_READS)) {
			log->addr[log->n] = a;
			log->val[log->n] = v;
			log->n++;
		} else {
			log->overflow = 1;
		}
	}
	return v;
}

static unsigned fast_walk(struct hs_thread *t, uintptr_t fp, uintptr_t *ips,
			  unsigned max, int *complete, struct hs_reads *log)
{
	uintptr_t sp = fp + 16, bp = ((uintptr_t *)fp)[0], ra = ((uintptr_t *)fp)[1];
	unsigned n = 0;
	int bp_initial = 1;	/* bp is still the caller's rbp */

	for (;;) {
		struct hs_rule *r;
		uintptr_t cfa;

		if (!ra) {
			*complete = 1;
			return n;
		}
		if (n == max) {
			*complete = 0;
			return n;
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
			if (bp_initial && log)
				log->uses_bp0 = 1;
			break;
		case HS_RULE_END:
			*complete = 1;
			return n;
		case HS_RULE_STOP:
			*complete = 0;
			return n;
		default:
			return SLOW_WALK;
		}
		if (HS_UNLIKELY(cfa <= sp || cfa - sp > MAX_FRAME || !in_stack(t, cfa - 8)))
			return SLOW_WALK;
		if (r->bp_off) {
			if (HS_UNLIKELY(!in_stack(t, cfa + (uintptr_t)(intptr_t)r->bp_off)))
				return SLOW_WALK;
			bp = rd(log, cfa + (uintptr_t)(intptr_t)r->bp_off);
			bp_initial = 0;
		}
		ra = rd(log, cfa - 8);
		sp = cfa;
	}
}

static unsigned fp_walk(struct hs_thread *t, uintptr_t fp, uintptr_t *ips,
			unsigned max, int *complete, struct hs_reads *log)
{
	uintptr_t ra = ((uintptr_t *)fp)[1], next = ((uintptr_t *)fp)[0];
	unsigned n = 0;

	if (log)
		log->uses_bp0 = 1;	/* the chain starts at the caller's rbp */
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

unsigned hs_unwind(struct hs_thread *t, void *fp, uintptr_t *ips, unsigned max,
		   int *complete, struct hs_reads *log)
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
		if (HS_LIKELY(n != SLOW_WALK))
			return n;
		break;
	}
	if (log)
		log->overflow = 1;
	{
		int e = errno;

		n = slow_walk(f + 16, ips, max, complete);
		errno = e;
	}
	return n;
}
