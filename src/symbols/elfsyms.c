/*
 * elfsyms - an address index over a module's ELF symbols.
 *
 * libdwfl's dwfl_module_addrinfo() scans the whole symbol table on every
 * call (100 us per address in libstdc++), so each module's function
 * symbols are read once through dwfl_module_getsym_info() (which merges
 * .symtab, .dynsym, the debug file's table and .gnu_debugdata) into a
 * range index. Rules:
 *   - functions (STT_FUNC, STT_GNU_IFUNC) and untyped symbols in code
 *     sections (assembler labels) count; data, sections and files do not;
 *   - of symbols at one address, the sized one wins, then global over weak
 *     over local, then the shorter name (malloc over __libc_malloc,
 *     foo over foo.localalias);
 *   - a symbol without size covers up to the next symbol or the end of
 *     its section;
 *   - a symbol version ("memcpy@@GLIBC_2.14") is not part of the name;
 *   - where ranges nest, the smaller one wins.
 */
#include "symbols/symbols_internal.h"
#include "common/alloc.h"
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct cand {
	uint64_t addr, size, sec_end;
	const char *name; /* libdw's or interned: valid while open */
	int rank;	  /* binding: higher is better */
};

static int bind_rank(int bind)
{
	return bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
}

/* By address, the preferred symbol of an address first. */
static int cmp_cand(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	size_t la, lb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	if (a->rank != b->rank)
		return b->rank - a->rank;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Larger ranges first, so that nested smaller ones are added later. */
static int cmp_size_desc(const void *pa, const void *pb)
{
	const struct hs__elf_sym *a = pa, *b = pb;
	uint64_t sa = a->end - a->start, sb = b->end - b->start;

	if (sa != sb)
		return sa > sb ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* End of the section @shndx of @elf in module addresses, or 0. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, Dwarf_Addr bias, int *exec)
{
	GElf_Shdr mem, *sh;

	*exec = 0;
	if (!elf || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return 0;
	sh = gelf_getshdr(elf_getscn(elf, shndx), &mem);
	if (!sh || !(sh->sh_flags & SHF_ALLOC))
		return 0;
	*exec = !!(sh->sh_flags & SHF_EXECINSTR);
	return sh->sh_addr + sh->sh_size + bias;
}

static int build(struct hs_symbolizer *s, struct hs__sym_mod *m)
{
	struct cand *c = NULL;
	struct hs__elf_sym *e = NULL;
	size_t nr = 0, alloc = 0, nr_e = 0, i;
	int n = dwfl_module_getsymtab(m->dm), k, err = -ENOMEM;

	for (k = 1; k < n; k++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Dwarf_Addr bias;
		Elf *elf = NULL;
		uint64_t end;
		int type, exec;
		const char *name =
		    dwfl_module_getsym_info(m->dm, k, &sym, &addr, &shndx, &elf, &bias);

		if (!name || !*name)
			continue;
		if (strchr(name, '@')) {
			name = hs__sym_intern(s, name, strcspn(name, "@"));
			if (!name)
				goto out;
		}
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		end = section_end(elf, shndx, bias, &exec);
		if (!end || (type == STT_NOTYPE && !exec) || addr >= end)
			continue;
		if (HS_GROW(c, nr + 1, alloc))
			goto out;
		c[nr].addr = addr;
		c[nr].size = sym.st_size;
		c[nr].sec_end = end;
		c[nr].name = name;
		c[nr].rank = bind_rank(GELF_ST_BIND(sym.st_info));
		nr++;
	}
	if (nr) /* no candidate: no array to sort (qsort's NULL is UB) */
		qsort(c, nr, sizeof(*c), cmp_cand);
	e = hs_calloc(nr ? nr : 1, sizeof(*e));
	if (!e)
		goto out;
	for (i = 0; i < nr; i++) {
		uint64_t end;
		size_t j;

		if (i && c[i].addr == c[i - 1].addr)
			continue; /* an alias that lost to c[i - 1] */
		if (c[i].size) {
			end = c[i].addr + c[i].size;
			if (end < c[i].addr)
				continue;
		} else {
			end = c[i].sec_end;
			for (j = i + 1; j < nr; j++)
				if (c[j].addr > c[i].addr) {
					if (c[j].addr < end)
						end = c[j].addr;
					break;
				}
		}
		e[nr_e].start = c[i].addr;
		e[nr_e].end = end;
		e[nr_e].name = c[i].name;
		e[nr_e].sized = c[i].size != 0;
		nr_e++;
	}
	qsort(e, nr_e, sizeof(*e), cmp_size_desc);
	if (HS_GROW(m->syms.range, nr_e, m->syms.alloc))
		goto out;
	/* room was made, so only an empty range fails: it is skipped */
	for (i = 0; i < nr_e; i++)
		if (hs__ranges_add(&m->syms, &e[i], e[i].start, e[i].end))
			continue;
	m->symv = e;
	e = NULL;
	err = 0;
out:
	hs_free(c);
	hs_free(e);
	return err;
}

int hs__sym_elf_lookup(struct hs_symbolizer *s, struct hs__sym_mod *m, uint64_t vaddr,
		       const struct hs__elf_sym **out)
{
	int err;

	*out = NULL;
	if (!m->symv) {
		err = build(s, m);
		if (err)
			return err;
	}
	*out = hs__ranges_find(&m->syms, vaddr);
	return 0;
}

void hs__sym_elf_release(struct hs__sym_mod *m)
{
	hs_sym_modmap_release(&m->syms);
	hs_free(m->symv);
	m->symv = NULL;
}
