/*
 * dwarf - one address to frames: the inline chain from DWARF's scope DIEs,
 * lines from the line table, names from the symbol table, linkage names
 * or qualified DWARF names.
 *
 * Finding the scopes around an address: libdw's dwarf_getscopes() walks
 * every top-level DIE of the unit on each call (a millisecond per address
 * in a big C++ unit), leaks on corrupt DWARF, and follows an inlined
 * instance into its abstract definition instead of out to its callers.
 * Instead each unit is walked once into an index: the address ranges of
 * its top-level scopes (functions, also inside namespaces and classes,
 * where Rust and C++ put them) and, for every subprogram DIE met on the
 * way, the "ns::cls::" prefix its name needs. A lookup then finds the
 * function through the index and descends only inside it.
 */
#include "symbols/symbols_internal.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIE_DEPTH 512 /* deeper DWARF nesting is corrupt */
#define MAX_NAME_HOPS 16  /* abstract_origin/specification chain */

/* A unit's index; items of @pc point into @die. */
struct hs__unit {
	struct hs_sym_modmap pc; /* top-level scopes by address */
	Dwarf_Die *die;		 /* owned */
	size_t nr_die;
};

/* ---- DIE maps ----------------------------------------------------------- */

static uint64_t die_hash(const void *dw, uint64_t off)
{
	return hs_hash_u64(off ^ (uint64_t)(uintptr_t)dw);
}

static int die_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hs__die_map *m = ctx;
	const struct hs__die_ent *k = key;

	return m->ent[id].dw == k->dw && m->ent[id].off == k->off;
}

static void *die_map_get(const struct hs__die_map *m, const void *dw, uint64_t off)
{
	struct hs__die_ent k = {dw, off, NULL};
	uint32_t id = hs_idindex_find(&m->index, die_hash(dw, off), die_eq, m, &k);

	return id == HS_IDINDEX_NONE ? NULL : m->ent[id].val;
}

/* Set the value for (@dw, @off); 0 or -ENOMEM (map unchanged). */
static int die_map_put(struct hs__die_map *m, const void *dw, uint64_t off, void *val)
{
	struct hs__die_ent k = {dw, off, val};
	uint64_t h = die_hash(dw, off);
	uint32_t id;
	size_t pos;

	if (m->nr >= UINT32_MAX - 1 || hs_idindex_reserve(&m->index, m->nr + 1) ||
	    HS_GROW(m->ent, m->nr + 1, m->alloc))
		return -ENOMEM;
	pos = hs_idindex_slot(&m->index, h, die_eq, m, &k);
	id = hs_idindex_at(&m->index, pos);
	if (id != HS_IDINDEX_NONE) {
		m->ent[id].val = val;
		return 0;
	}
	m->ent[m->nr] = k;
	hs_idindex_set(&m->index, pos, h, (uint32_t)m->nr);
	m->nr++;
	return 0;
}

static void die_map_release(struct hs__die_map *m)
{
	hs_free(m->ent);
	hs_idindex_release(&m->index);
	memset(m, 0, sizeof(*m));
}

static void free_unit(struct hs__unit *u)
{
	if (!u)
		return;
	hs_sym_modmap_release(&u->pc);
	hs_free(u->die);
	hs_free(u);
}

void hs__sym_dwarf_release(struct hs_symbolizer *s)
{
	size_t i;

	for (i = 0; i < s->units.nr; i++)
		free_unit(s->units.ent[i].val);
	die_map_release(&s->units);
	die_map_release(&s->prefixes);
	hs_free(s->path);
	hs_free(s->uranges);
}

/* ---- unit index ---------------------------------------------------------- */

/* The DIE after @die on its level; 0 at the end or when a corrupt
 * DW_AT_sibling points backwards (which would loop for ever). */
static int next_sibling(Dwarf_Die *die, Dwarf_Die *next)
{
	return dwarf_siblingof(die, next) == 0 &&
	       dwarf_dieoffset(next) > dwarf_dieoffset(die);
}

static int is_scope_tag(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_entry_point:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_module:
		return 1;
	}
	return 0;
}

/* DIEs without addresses that can hold functions or name them. */
static int is_name_scope(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_interface_type;
}

/* Record the address ranges of scope @die (added to the unit at the end). */
static int index_scope(struct hs_symbolizer *s, struct hs__unit *u, Dwarf_Die **die,
		       size_t *alloc_die, Dwarf_Die *scope)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;
	int any = 0;

	while ((off = dwarf_ranges(scope, off, &base, &low, &high)) > 0) {
		struct hs__unit_range *r;

		if (high <= low)
			continue;
		if (!any) {
			if (HS_GROW(*die, u->nr_die + 1, *alloc_die))
				return -ENOMEM;
			(*die)[u->nr_die++] = *scope;
			any = 1;
		}
		if (HS_GROW(s->uranges, s->nr_uranges + 1, s->alloc_uranges))
			return -ENOMEM;
		r = &s->uranges[s->nr_uranges++];
		r->low = low;
		r->high = high;
		r->die = u->nr_die - 1;
	}
	return 0;
}

/* "@prefix@name::" for a namespace or type DIE, interned; NULL on -ENOMEM. */
static const char *inner_prefix(struct hs_symbolizer *s, const char *prefix,
				Dwarf_Die *die, int tag)
{
	const char *name = dwarf_diename(die);

	if (!name)
		name = tag == DW_TAG_namespace ? "(anonymous namespace)" : "(anonymous)";
	hs_buf_reset(&s->tmp);
	if (hs_buf_addf(&s->tmp, "%s%s::", prefix ? prefix : "", name))
		return NULL;
	return hs__sym_intern_buf(s, &s->tmp);
}

static int index_walk(struct hs_symbolizer *s, struct hs__unit *u, Dwarf_Die **die,
		      size_t *alloc_die, Dwarf_Die *parent, const char *prefix,
		      unsigned nest)
{
	const void *dw = dwarf_cu_getdwarf(parent->cu);
	Dwarf_Die child, next;
	const char *inner;
	int tag, err = 0;

	if (nest > MAX_DIE_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	for (;;) {
		tag = dwarf_tag(&child);
		if (is_scope_tag(tag)) {
			if (tag == DW_TAG_subprogram && prefix)
				err =
				    die_map_put(&s->prefixes, dw, dwarf_dieoffset(&child),
						(void *)prefix);
			if (!err)
				err = index_scope(s, u, die, alloc_die, &child);
		} else if (is_name_scope(tag) && dwarf_haschildren(&child)) {
			inner = inner_prefix(s, prefix, &child, tag);
			err = inner ? index_walk(s, u, die, alloc_die, &child, inner,
						 nest + 1)
				    : -ENOMEM;
		}
		if (err)
			return err;
		if (!next_sibling(&child, &next))
			return 0;
		child = next;
	}
}

/* The index of the unit whose DIE is @unit, built on first use; NULL on
 * -ENOMEM. */
static struct hs__unit *get_unit(struct hs_symbolizer *s, Dwarf_Die *unit)
{
	const void *dw = dwarf_cu_getdwarf(unit->cu);
	uint64_t off = dwarf_dieoffset(unit);
	struct hs__unit *u = die_map_get(&s->units, dw, off);
	Dwarf_Die *die = NULL;
	size_t alloc_die = 0, i;

	if (u)
		return u;
	u = hs_calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	s->nr_uranges = 0;
	if (index_walk(s, u, &die, &alloc_die, unit, NULL, 0))
		goto fail;
	u->die = die; /* final: the ranges may point into it now */
	if (HS_GROW(u->pc.range, s->nr_uranges, u->pc.alloc))
		goto fail;
	/* room was made, so only an empty range fails: it is skipped */
	for (i = 0; i < s->nr_uranges; i++)
		if (hs__ranges_add(&u->pc, &u->die[s->uranges[i].die], s->uranges[i].low,
				   s->uranges[i].high))
			continue;
	if (die_map_put(&s->units, dw, off, u))
		goto fail;
	return u;
fail:
	if (!u->die)
		hs_free(die);
	free_unit(u);
	return NULL;
}

/* ---- scopes and names ---------------------------------------------------- */

static int push_die(struct hs_symbolizer *s, size_t depth, const Dwarf_Die *die)
{
	if (depth >= MAX_DIE_DEPTH)
		return -ELOOP;
	if (HS_GROW(s->path, depth + 1, s->alloc_path))
		return -ENOMEM;
	s->path[depth] = *die;
	return 0;
}

/*
 * Search the children of @parent for the scope that contains @pc and go
 * on inside it: s->path[*@depth...] gets every subprogram, inlined
 * subroutine and block on the way, outermost first. Namespaces and types
 * are searched through but not recorded (libdw's rules). Returns 0 or
 * -ENOMEM; corrupt nesting just ends the path.
 */
static int pc_scopes(struct hs_symbolizer *s, Dwarf_Die *parent, Dwarf_Addr pc,
		     size_t *depth, unsigned nest)
{
	Dwarf_Die child, next;
	int tag, r;

	if (nest > MAX_DIE_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	for (;;) {
		tag = dwarf_tag(&child);
		if (is_scope_tag(tag) && dwarf_haspc(&child, pc) == 1) {
			r = push_die(s, *depth, &child);
			if (r)
				return r == -ENOMEM ? r : 0;
			++*depth;
			return pc_scopes(s, &child, pc, depth, nest + 1);
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		     tag == DW_TAG_structure_type) &&
		    dwarf_haschildren(&child)) {
			size_t before = *depth;

			r = pc_scopes(s, &child, pc, depth, nest + 1);
			if (r || *depth != before)
				return r;
		}
		if (!next_sibling(&child, &next))
			return 0;
		child = next;
	}
}

/*
 * Name of a subprogram or inlined-subroutine DIE: its linkage name
 * demangled, else its DW_AT_name with the "ns::cls::" prefix the unit
 * index recorded. Follows DW_AT_abstract_origin and DW_AT_specification.
 * *@name is NULL when DWARF gives none. 0 or -ENOMEM.
 */
static int die_function(struct hs_symbolizer *s, Dwarf_Die *die, const char **name)
{
	Dwarf_Die cur = *die, next, unit;
	const char *n, *prefix = NULL;
	Dwarf_Attribute a;
	int hops;

	*name = NULL;
	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(
		    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (n && *n) {
		*name = hs__sym_function_name(s, n);
		return *name ? 0 : -ENOMEM;
	}
	/* the DIE that carries the name (bounded: DWARF may loop) */
	for (hops = 0; hops < MAX_NAME_HOPS && !dwarf_hasattr(&cur, DW_AT_name); hops++) {
		if (!dwarf_attr(&cur, DW_AT_abstract_origin, &a) &&
		    !dwarf_attr(&cur, DW_AT_specification, &a))
			break;
		if (!dwarf_formref_die(&a, &next))
			break;
		cur = next;
	}
	n = dwarf_diename(&cur);
	if (!n || !*n)
		return 0;
	if (dwarf_diecu(&cur, &unit, NULL, NULL)) {
		if (!get_unit(s, &unit))
			return -ENOMEM;
		prefix = die_map_get(&s->prefixes, dwarf_cu_getdwarf(cur.cu),
				     dwarf_dieoffset(&cur));
	}
	if (!prefix) {
		*name = hs__sym_intern(s, n, strlen(n));
	} else {
		hs_buf_reset(&s->tmp);
		*name = hs_buf_adds(&s->tmp, prefix) || hs_buf_adds(&s->tmp, n)
			    ? NULL
			    : hs__sym_intern_buf(s, &s->tmp);
	}
	return *name ? 0 : -ENOMEM;
}

/*
 * Intern source file @f of compilation unit @cu: a relative name (DWARF 5
 * tables name files relative to the unit's directory) is joined to the
 * unit's DW_AT_comp_dir when that is absolute, and "." and ".." segments
 * are resolved, so that "../src/a.c" compiled in /b/build becomes
 * "/b/src/a.c". NULL when out of memory.
 */
static const char *intern_file(struct hs_symbolizer *s, Dwarf_Die *cu, const char *f)
{
	Dwarf_Attribute a;
	const char *dir = NULL, *p;
	size_t keep;

	if (f[0] != '/' && cu)
		dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	if (!dir || dir[0] != '/')
		return hs__sym_intern(s, f, strlen(f));
	hs_buf_reset(&s->tmp);
	if (hs_buf_adds(&s->tmp, dir))
		return NULL;
	for (p = f; *p;) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			/* drop the last segment (never the leading '/') */
			keep = s->tmp.len;
			while (keep > 1 && s->tmp.s[keep - 1] == '/')
				keep--;
			while (keep > 1 && s->tmp.s[keep - 1] != '/')
				keep--;
			s->tmp.len = keep;
			s->tmp.s[keep] = '\0';
		} else if (n && !(n == 1 && p[0] == '.')) {
			if ((s->tmp.len == 0 || s->tmp.s[s->tmp.len - 1] != '/') &&
			    hs_buf_addc(&s->tmp, '/'))
				return NULL;
			if (hs_buf_add(&s->tmp, p, n))
				return NULL;
		}
		p = *e ? e + 1 : e;
	}
	return hs__sym_intern_buf(s, &s->tmp);
}

/* DW_AT_call_file/line/column of an inlined subroutine. 0 or -ENOMEM. */
static int call_site(struct hs_symbolizer *s, Dwarf_Die *die, const char **file,
		     int *line, int *column)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nfiles;
	const char *f = NULL;

	*file = NULL;
	*line = *column = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &v) == 0 &&
	    dwarf_diecu(die, &cu, NULL, NULL) &&
	    dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && v < nfiles)
		f = dwarf_filesrc(files, v, NULL, NULL);
	if (f) {
		*file = intern_file(s, &cu, f);
		if (!*file)
			return -ENOMEM;
	}
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v) == 0 &&
	    v <= INT32_MAX)
		*line = (int)v;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_column, &a), &v) == 0 &&
	    v <= INT32_MAX)
		*column = (int)v;
	return 0;
}

static int push_frame(struct hs_symbolizer *s, const char *function, const char *file,
		      int line, int column, unsigned flags)
{
	struct hs_sym_frame *f;

	if (HS_GROW(s->scratch, s->nr_scratch + 1, s->alloc_scratch))
		return -ENOMEM;
	f = &s->scratch[s->nr_scratch++];
	f->function = function;
	f->file = file;
	f->line = line > 0 ? (uint32_t)line : 0;
	f->column = column > 0 ? (uint32_t)column : 0;
	f->flags = flags;
	return 0;
}

/* The scopes around @pc into s->path (outermost first); their number in
 * *@n. 0 or -ENOMEM. */
static int scopes_at(struct hs_symbolizer *s, Dwarf_Die *cu, Dwarf_Addr pc, size_t *n)
{
	struct hs__unit *u = get_unit(s, cu);
	const Dwarf_Die *top;
	Dwarf_Die d;
	int err;

	*n = 0;
	if (!u)
		return -ENOMEM;
	top = hs__ranges_find(&u->pc, pc);
	if (!top)
		return 0;
	d = *top;
	err = push_die(s, 0, &d);
	if (err)
		return err;
	*n = 1;
	return pc_scopes(s, &d, pc, n, 1);
}

/*
 * The frames of @vaddr, innermost first: the inline chain around it, each
 * frame with the line of the frame inside it, and last the real function,
 * named from the symbol table when a sized symbol covers the address,
 * else from DWARF.
 */
int hs__sym_resolve(struct hs_symbolizer *s, struct hs__sym_mod *m, uint64_t vaddr)
{
	const char *symname, *file = NULL, *name;
	const struct hs__elf_sym *sym;
	Dwarf_Addr dwbias = 0;
	size_t nscopes = 0;
	Dwfl_Line *ln;
	Dwarf_Die *cu;
	int line = 0, column = 0, i, err = 0, done = 0;

	s->nr_scratch = 0;
	if (hs__sym_elf_lookup(s, m, vaddr, &sym))
		return -ENOMEM;
	symname = sym ? sym->name : NULL;
	cu = dwfl_module_addrdie(m->dm, vaddr, &dwbias);
	ln = dwfl_module_getsrc(m->dm, vaddr);
	if (ln) {
		const char *f = dwfl_lineinfo(ln, NULL, &line, &column, NULL, NULL);

		if (f && !(file = intern_file(s, cu, f)))
			return -ENOMEM;
	}
	if (cu && scopes_at(s, cu, vaddr - dwbias, &nscopes))
		return -ENOMEM;
	for (i = (int)nscopes - 1; i >= 0 && !err && !done; i--) {
		Dwarf_Die die = s->path[i];
		int tag = dwarf_tag(&die);

		if (tag == DW_TAG_inlined_subroutine) {
			err = die_function(s, &die, &name);
			if (!err)
				err = push_frame(s, name, file, line, column,
						 HS_SYM_INLINE);
			if (!err)
				err = call_site(s, &die, &file, &line, &column);
		} else if (tag == DW_TAG_subprogram) {
			name = NULL;
			if (!sym || !sym->sized)
				err = die_function(s, &die, &name);
			if (!err && !name && symname &&
			    !(name = hs__sym_function_name(s, symname)))
				err = -ENOMEM;
			if (!err)
				err = push_frame(s, name, file, line, column, 0);
			done = 1;
		}
	}
	if (!err && !done) {
		name = NULL;
		if (symname && !(name = hs__sym_function_name(s, symname)))
			return -ENOMEM;
		err = push_frame(s, name, file, line, column, 0);
	}
	return err;
}
