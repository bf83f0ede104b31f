/*
 * modules - the module map: which file holds which addresses, with build
 * ids, as MODULE and MODULE_UNLOAD records.
 *
 * The map is rescanned with dl_iterate_phdr(): at start-up, when a stack
 * holds an address outside every known module (a library loaded since;
 * its constructor may be allocating right now), and after dlclose(). So a
 * loaded module is recorded before its first frame is needed; a module in
 * no stack is never recorded (it names nothing). dlopen() itself is not
 * interposed: glibc resolves a dlopen'ed name with the caller's RUNPATH,
 * which a wrapper would change. The writer thread never scans: waiting on
 * the loader's lock could stall the rings of the thread holding it.
 *
 * The table is mmap'd, protected by hs_unwind_lock, and entries are never
 * moved, so the unwinder can keep pointers to them under the lock.
 */
#include "collector/collector.h"
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_MODULES 4096

void hs_module_close_cfi(struct hs_module *m) HS_HIDDEN;

static struct hs_module *mods;
static size_t nr_mods;
static uint64_t next_id = 1;
static unsigned long long last_adds, last_subs;
static unsigned char *seen; /* per module: seen in this scan */
static char exe_path[1024];

struct scan_ctx {
	struct hs_thread *t;
	int full; /* scan everything (else stop if counters are unchanged) */
	int changed;
};

static void emit(struct hs_thread *t, unsigned tag, const uint8_t *body, size_t n)
{
	if (t)
		hs_emit_sized(t, tag, body, n);
}

static void emit_module(struct hs_thread *t, struct hs_module *m)
{
	uint8_t body[1200], *q = body;
	size_t plen = strnlen(m->path, sizeof(m->path));

	q = hs_enc_module_body(q, hs_now_ticks(), m->id, m->bias, m->start, m->end,
			       m->path, plen, m->build_id, m->build_id_len);
	emit(t, HS_TAG_MODULE, body, (size_t)(q - body));
	m->emitted = 1;
}

static void emit_unload(struct hs_thread *t, struct hs_module *m, uint32_t next_node)
{
	uint8_t body[3 * HS_VARINT_MAX], *q = body;

	q = hs_enc_module_unload_body(q, hs_now_ticks(), m->id, next_node);
	emit(t, HS_TAG_MODULE_UNLOAD, body, (size_t)(q - body));
}

static void read_build_id(const struct dl_phdr_info *info, struct hs_module *m)
{
	int i;

	m->build_id_len = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			size_t name = (nh->n_namesz + 3) & ~3u;
			size_t desc = (nh->n_descsz + 3) & ~3u;
			const uint8_t *d = p + sizeof(*nh) + name;

			if (d + desc > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4) &&
			    nh->n_descsz <= sizeof(m->build_id)) {
				memcpy(m->build_id, d, nh->n_descsz);
				m->build_id_len = nh->n_descsz;
				return;
			}
			p = d + desc;
		}
	}
}

static int scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan_ctx *ctx = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const char *name = info->dlpi_name;
	struct hs_module *m;
	size_t i;
	int k;

	if (ctx->full == 0) {
		/* the first object tells whether anything changed at all */
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
				sizeof(info->dlpi_subs) &&
		    info->dlpi_adds == last_adds && info->dlpi_subs == last_subs)
			return 1;
		ctx->full = 1;
	}
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		last_adds = info->dlpi_adds;
		last_subs = info->dlpi_subs;
	}
	for (k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	if (!name || !name[0])
		name = exe_path;
	for (i = 0; i < nr_mods; i++) {
		m = &mods[i];
		if (m->live && m->bias == info->dlpi_addr && m->start == lo &&
		    !strncmp(m->path, name, sizeof(m->path) - 1)) {
			seen[i] = 1;
			return 0;
		}
	}
	if (nr_mods >= MAX_MODULES)
		return 0;
	m = &mods[nr_mods];
	memset(m, 0, sizeof(*m));
	m->id = next_id++;
	m->bias = info->dlpi_addr;
	m->start = lo;
	m->end = hi;
	m->live = 1;
	memcpy(m->path, name, strnlen(name, sizeof(m->path) - 1));
	read_build_id(info, m);
	seen[nr_mods] = 1;
	nr_mods++;
	emit_module(ctx->t, m);
	ctx->changed = 1;
	return 0;
}

static int ensure_table(void)
{
	size_t bytes = MAX_MODULES * (sizeof(struct hs_module) + 1);
	void *p;

	if (mods)
		return 0;
	p = (void *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((long)p < 0 && (long)p > -4096)
		return -1;
	mods = p;
	seen = (unsigned char *)(mods + MAX_MODULES);
	if (readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1) < 0)
		strcpy(exe_path, "[exe]");
	return 0;
}

static void scan(struct hs_thread *t, int full)
{
	struct scan_ctx ctx = {.t = t, .full = full};
	size_t i;
	uint32_t next_node;
	int unloaded = 0;

	if (ensure_table())
		return;
	memset(seen, 0, nr_mods);
	dl_iterate_phdr(scan_cb, &ctx);
	if (!ctx.full)
		return; /* nothing changed */
	for (i = 0; i < nr_mods; i++)
		if (mods[i].live && !seen[i])
			unloaded = 1;
	if (!unloaded)
		return;
	/* new stacks get new nodes: old ones may name the unloaded code */
	next_node = hs_stacks_reset();
	hs_unwind_global_flush();
	for (i = 0; i < nr_mods; i++) {
		if (!mods[i].live || seen[i])
			continue;
		mods[i].live = 0;
		if (mods[i].emitted)
			emit_unload(t, &mods[i], next_node);
		hs_module_close_cfi(&mods[i]);
	}
}

void hs_modules_scan_locked(struct hs_thread *t)
{
	scan(t, 1);
}

void hs_modules_scan(struct hs_thread *t)
{
	pthread_mutex_lock(&hs_unwind_lock);
	scan(t, 1);
	pthread_mutex_unlock(&hs_unwind_lock);
}

void hs_module_notice(struct hs_thread *t, uintptr_t addr)
{
	pthread_mutex_lock(&hs_unwind_lock);
	if (!hs_module_find(addr))
		scan(t, 1);
	pthread_mutex_unlock(&hs_unwind_lock);
}

void hs_modules_reemit(struct hs_thread *t)
{
	size_t i;

	pthread_mutex_lock(&hs_unwind_lock);
	for (i = 0; i < nr_mods; i++)
		if (mods[i].live)
			emit_module(t, &mods[i]);
	pthread_mutex_unlock(&hs_unwind_lock);
}

struct hs_module *hs_module_find(uintptr_t addr)
{
	size_t i;

	for (i = nr_mods; i-- > 0;)
		if (mods[i].live && addr >= mods[i].start && addr < mods[i].end)
			return &mods[i];
	return NULL;
}
