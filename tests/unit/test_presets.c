#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/group.h"
#include "analysis/pattern.h"
#include "analysis/presets.h"
#include "common/alloc.h"
#include "testutil.h"

/* "[name] group" of the preset called @name (owned by the caller). */
static char *text_of(const char *name, const char *exe_dir)
{
	const struct hs_preset *p = hs_preset_find(name);
	char *t = NULL;

	assert_non_null(p);
	assert_int_equal(hs_preset_group_text(p, exe_dir, &t), 0);
	return t;
}

static void listing(void **state)
{
	size_t i, n = hs_presets_count();

	(void)state;
	assert_int_equal(n, 12);
	assert_string_equal(hs_presets_get(0)->name, "no grouping");
	assert_string_equal(hs_presets_get(1)->name, "group modules");
	assert_string_equal(hs_presets_get(1)->group, "{%}!->module $1");
	assert_null(hs_presets_get(n));
	for (i = 0; i < n; i++) {
		const struct hs_preset *p = hs_presets_get(i);
		struct hs_groups g = HS_GROUPS_INIT;
		char *t = NULL;

		assert_non_null(p->fold);
		assert_non_null(p->fold_pct);
		assert_true(strlen(p->comment) > 0);
		assert_ptr_equal(hs_preset_find(p->name), p);
		/* every preset's text is valid GroupPats */
		assert_int_equal(hs_preset_group_text(p, "/opt/app", &t), 0);
		assert_int_equal(hs_groups_parse(&g, t, NULL), 0);
		hs_groups_release(&g);
		hs_free(t);
	}
}

static void lookup(void **state)
{
	(void)state;
	assert_string_equal(hs_preset_find("group modules")->name, "group modules");
	assert_string_equal(hs_preset_find("[Group Modules]")->name, "group modules");
	assert_string_equal(hs_preset_find("group-modules")->name, "group modules");
	assert_string_equal(hs_preset_find(" fold_threads ")->name, "fold threads");
	assert_string_equal(hs_preset_find("just-my-app")->name, "Just My App");
	assert_string_equal(hs_preset_find("ignore pid/tid")->name, "Ignore PID/TID");
	assert_null(hs_preset_find("group"));
	assert_null(hs_preset_find("group modules x"));
	assert_null(hs_preset_find(""));
}

static void group_texts(void **state)
{
	char *t;

	(void)state;
	t = text_of("group modules", NULL);
	assert_string_equal(t, "[group modules] {%}!->module $1");
	hs_free(t);
	t = text_of("group module entries", NULL);
	assert_string_equal(t, "[group module entries] {%}!=>module $1");
	hs_free(t);
	t = text_of("Ignore PID/TID", NULL);
	assert_string_equal(t, "[Ignore PID/TID] ^Process% {%}->$1;^Thread->Thread;");
	hs_free(t);
	t = text_of("no grouping", NULL);
	assert_string_equal(t, "[no grouping] ");
	hs_free(t);
}

static void linux_names(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6!malloc";
	const struct hs_preset *p;
	char *t;

	(void)state;
	assert_group(HS_PRESET_DEFAULT_GROUP, libc, HS_GROUP_ENTRY, "module libc.so.6");
	t = text_of("group modules", NULL);
	assert_group(t, libc, HS_GROUP_PLAIN, "module libc.so.6");
	hs_free(t);
	t = text_of("group full path module entries", NULL);
	assert_group(t, libc, HS_GROUP_ENTRY,
		     "module /usr/lib/x86_64-linux-gnu/libc.so.6");
	hs_free(t);
	p = hs_preset_find("group class entries");
	assert_group(p->group, "/lib/libfoo.so!ns::Klass::method(int)", HS_GROUP_ENTRY,
		     "class libfoo.so!ns::Klass");
	assert_group(p->group, "mod!Ns.Klass.Method(x)", HS_GROUP_ENTRY,
		     "class mod!Ns.Klass");
	assert_group(p->group, libc, HS_GROUP_NONE, "");
	p = hs_preset_find("group classes");
	assert_group(p->group, "/lib/libfoo.so!ns::Klass::method(int)", HS_GROUP_PLAIN,
		     "class libfoo.so!ns::Klass");
	p = hs_preset_find("fold threads");
	assert_group(p->group, "Thread (12) worker", HS_GROUP_PLAIN, "AllThreads");
	assert_group(p->group, "Process app (11)", HS_GROUP_NONE, "");
	p = hs_preset_find("Ignore PID/TID");
	assert_group(p->group, "Process app (11)", HS_GROUP_PLAIN, "app");
	assert_group(p->group, "Thread (12) worker", HS_GROUP_PLAIN, "Thread");
	assert_group(p->group, libc, HS_GROUP_NONE, "");
	p = hs_preset_find("Ignore Paths");
	assert_group(p->group, libc, HS_GROUP_PLAIN, "libc.so.6!malloc");
	assert_group(p->group, "Process app (11)", HS_GROUP_PLAIN, "app");
}

static void just_my_app(void **state)
{
	const struct hs_preset *p = hs_preset_find("Just My App");
	const char *weird = "/tmp/a;b->c {x}*%^|=>@";
	char *t = NULL;
	char own[256];

	(void)state;
	assert_true(p->needs_exe_dir);
	assert_int_equal(hs_preset_group_text(p, NULL, &t), -EINVAL);
	assert_int_equal(hs_preset_group_text(p, "relative/dir", &t), -EINVAL);
	assert_null(t);

	t = text_of("Just My App", "/home/u/app/bin/");
	assert_string_equal(t, "[Just My App] ^/home/u/app/bin/*!->;!=>OTHER");
	assert_group(t, "/home/u/app/bin/app!main", HS_GROUP_NONE, "");
	assert_group(t, "/home/u/app/bin/lib/libx.so!f", HS_GROUP_NONE, "");
	assert_group(t, "/home/u/app/binary/x!f", HS_GROUP_ENTRY, "OTHER");
	assert_group(t, "/usr/lib/libc.so.6!malloc", HS_GROUP_ENTRY, "OTHER");
	assert_group(t, "Thread (1) main", HS_GROUP_NONE, "");
	hs_free(t);

	/* a directory full of pattern specials becomes a raw regex */
	t = text_of("Just My App", weird);
	assert_non_null(strstr(t, "[Just My App] @^"));
	snprintf(own, sizeof(own), "%s/app!main", weird);
	assert_group(t, own, HS_GROUP_NONE, "");
	assert_group(t, "/tmp/a!f", HS_GROUP_ENTRY, "OTHER");
	assert_group(t, "/usr/lib/libc.so.6!malloc", HS_GROUP_ENTRY, "OTHER");
	hs_free(t);

	/* the root directory holds everything */
	t = text_of("Just My App", "/");
	assert_string_equal(t, "[Just My App] ^/*!->;!=>OTHER");
	hs_free(t);
}

/* Does an entry of FoldPats @l match @name as @want says (1: folded)? */
static int folds_as(const struct hs_patlist *l, const char *name, int want)
{
	size_t which;
	int r = hs_patlist_match_any(l, name, strlen(name), &which);

	assert_true(r >= 0);
	if (r != want)
		print_error("%s: %s\n", r ? "folded" : "not folded", name);
	return r == want;
}

/*
 * The heap views' FoldPats fold the frames between a user's function and
 * the allocator (C++ and Rust names as the demangler writes them, with
 * return types, inline suffixes and v0 Rust paths) and keep the user's
 * functions and the library's frames above them.
 */
static void heap_fold(void **state)
{
	static const char *const folded[] = {
		"/lib/libc.so.6!malloc",
		"/lib/libc.so.6!__strdup",
		"/lib/ld-linux-x86-64.so.2!calloc (inline)",
		"/usr/lib/libstdc++.so.6!operator new(unsigned long)",
		"/usr/lib/libstdc++.so.6!operator new[](unsigned long, std::align_val_t)",
		"/bin/app!std::__cxx11::basic_string<char, std::char_traits<char>, "
		"std::allocator<char> >::basic_string<std::allocator<char> >(unsigned long, "
		"char, std::allocator<char> const&) (inline)",
		"/usr/lib/libstdc++.so.6!std::__cxx11::basic_string<char, "
		"std::char_traits<char>, std::allocator<char> >::_M_create(unsigned long&, "
		"unsigned long)",
		"/bin/app!void std::vector<int, std::allocator<int> >::_M_realloc_insert<int "
		"const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, "
		"std::allocator<int> > >, int const&)",
		"/bin/app!std::vector<int, std::allocator<int> >::_M_default_append(unsigned "
		"long)",
		"/bin/app!std::vector<int, std::allocator<int> >::push_back(int const&) (inline)",
		"/bin/app!std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned "
		"long) (inline)",
		"/bin/app!std::_Rb_tree_node<std::pair<int const, int> >* std::_Rb_tree<int, "
		"std::pair<int const, int>, std::_Select1st<std::pair<int const, int> >, "
		"std::less<int>, std::allocator<std::pair<int const, int> > "
		">::_M_create_node<int&&>(int&&) (inline)",
		"/bin/app!std::_Rb_tree<int, int, std::_Identity<int>, std::less<int>, "
		"std::allocator<int> >::_M_get_node() (inline)",
		"/bin/app!std::map<int, int, std::less<int>, std::allocator<std::pair<int "
		"const, int> > >::operator[](int&&) (inline)",
		"/bin/app!std::__detail::_Hashtable_alloc<std::allocator<std::__detail::"
		"_Hash_node<std::pair<int const, int>, false> > >::_M_allocate_buckets("
		"unsigned long) (inline)",
		"/bin/app!std::__detail::_Hash_node<std::pair<int const, int>, false>* "
		"std::__detail::_Hashtable_alloc<std::allocator<std::__detail::_Hash_node<"
		"std::pair<int const, int>, false> > >::_M_allocate_node<std::piecewise_"
		"construct_t const&, std::tuple<int&&>, std::tuple<> >(std::piecewise_"
		"construct_t const&, std::tuple<int&&>&&, std::tuple<>&&)",
		"/bin/app!std::_Hashtable<int, std::pair<int const, int>, std::allocator<std::"
		"pair<int const, int> >, std::__detail::_Select1st, std::equal_to<int>, "
		"std::hash<int>, std::__detail::_Mod_range_hashing, std::__detail::_Default_"
		"ranged_hash, std::__detail::_Prime_rehash_policy, std::__detail::_Hashtable_"
		"traits<false, false, true> >::_Scoped_node::_Scoped_node<std::piecewise_"
		"construct_t const&>(std::piecewise_construct_t const&) (inline)",
		"/bin/app!__gnu_cxx::new_allocator<int>::allocate(unsigned long, void const*)",
		"/bin/app!std::__new_allocator<int>::allocate(unsigned long, void const*) (inline)",
		"/bin/app!std::deque<int, std::allocator<int> >::_M_push_back_aux<int "
		"const&>(int const&)",
		"/bin/app!std::__cxx11::list<int, std::allocator<int> >::_M_insert<int>("
		"std::_List_iterator<int>, int&&) (inline)",
		"/bin/app!std::shared_ptr<std::enable_if<!std::is_array<long>::value, "
		"long>::type> std::make_shared<long, int>(int&&) (inline)",
		"/bin/app!std::__shared_count<(__gnu_cxx::_Lock_policy)2>::__shared_count<long,"
		" std::allocator<void>, int>(long*&, std::_Sp_alloc_shared_tag<std::allocator"
		"<void> >, int&&) (inline)",
		"/bin/app!std::__detail::_MakeUniq<long []>::__array std::make_unique<long "
		"[]>(unsigned long) (inline)",
		"/bin/app!std::__cxx11::to_string(int) (inline)",
		"/bin/r!<alloc::raw_vec::RawVecInner>::try_allocate_in",
		"/bin/r!alloc::raw_vec::RawVec<T,A>::grow_one",
		"/bin/r!alloc::raw_vec::finish_grow",
		"/bin/r!alloc::alloc::alloc (inline)",
		"/bin/r!<alloc::alloc::Global as core::alloc::Allocator>::allocate",
		"/bin/r!alloc::vec::Vec<T,A>::push",
		"/bin/r!<alloc::vec::Vec<u8>>::with_capacity",
		"/bin/r!<alloc::vec::Vec<T> as core::clone::Clone>::clone",
		"/bin/r!<alloc::string::String as core::convert::From<&str>>::from",
		"/bin/r!alloc::boxed::Box<T>::new",
		"/bin/r!<alloc::boxed::Box<[u64; 16]>>::new",
		"/bin/r!<str as alloc::string::ToString>::to_string",
		"/bin/r!alloc::fmt::format::format_inner",
		"/bin/r!hashbrown::raw::RawTable<T,A>::reserve_rehash",
		"/bin/r!std::collections::hash::map::HashMap<K,V,S>::insert",
		"/bin/r!core::iter::traits::iterator::Iterator::collect",
		"/bin/r!<core::slice::iter::Iter<u8> as core::iter::traits::iterator::"
		"Iterator>::collect::<alloc::vec::Vec<u8>>",
		"/bin/r!core::option::Option<T>::map_or_else (inline)",
		"/bin/r!<core::option::Option<&str>>::map_or_else::<alloc::string::String, "
		"alloc::fmt::format::{closure#0}, <str as alloc::borrow::ToOwned>::to_owned>",
		"/bin/r!__rust_alloc",
		"/bin/r!__rdl_realloc (inline)",
		"/bin/r!std::sys::alloc::unix::<impl core::alloc::global::GlobalAlloc for "
		"std::alloc::System>::alloc",
		"/bin/r!<std::alloc::System as core::alloc::global::GlobalAlloc>::alloc",
		/* format!, String::clone and slices' to_vec as rustc 1.95 names them
		 * (tests/targets/rust/allocs.rs, t5210) */
		"/bin/r!core::fmt::write",
		"/bin/r!<core::fmt::Formatter>::pad_integral",
		"/bin/r!<core::fmt::Formatter>::padding (inline)",
		"/bin/r!<core::fmt::rt::Argument>::fmt (inline)",
		"/bin/r!<u64 as core::fmt::Display>::fmt",
		"/bin/r!<&str as core::fmt::Display>::fmt",
		"/bin/r!<&mut alloc::string::String as core::fmt::Write::write_fmt::"
		"SpecWriteFmt>::spec_write_fmt (inline)",
		"/bin/r!<u8 as <[_]>::to_vec_in::ConvertVec>::to_vec::<alloc::alloc::Global> "
		"(inline)",
		"/bin/r!<[u8]>::to_vec_in::<alloc::alloc::Global> (inline)",
		"/bin/r!<str>::to_owned (inline)",
		/* and as rustc 1.63's legacy mangling does */
		"/bin/r!core::fmt::num::imp::<impl core::fmt::Display for u64>::fmt",
		"/bin/r!core::fmt::Formatter::pad_integral",
		"/bin/r!<&mut W as core::fmt::Write>::write_str",
		"/bin/r!<T as alloc::slice::hack::ConvertVec>::to_vec",
		"/bin/r!alloc::slice::hack::to_vec",
	};
	static const char *const kept[] = {
		"/bin/app!main",
		"/bin/app!use_vec()",
		"/lib/libc.so.6!_IO_file_doallocate",
		"/lib/libc.so.6!freeaddrinfo",
		"/bin/app!std::vector<long, std::allocator<long> >* ns::fill<long>(int)",
		"/bin/app!use(std::vector<int, std::allocator<int> >&)",
		"/bin/app!f(int, std::map<int, int, std::less<int>, std::allocator<std::"
		"pair<int const, int> > > const&)",
		"/bin/app!Cache<std::map<int, int, std::less<int>, std::allocator<std::"
		"pair<int const, int> > > >::get(int)",
		"/bin/app!std::_Rb_tree_iterator<std::pair<int const, int> > "
		"find_or_add<int>(std::map<int, int, std::less<int>, std::allocator<std::"
		"pair<int const, int> > >&, int)",
		"/bin/app!ns::vector<int>::push_back(int)",
		"/bin/app!mystd::vector<int>::push_back(int)",
		"/bin/app!main::{lambda(int)#1}::operator()(int) const",
		"/bin/app!std::thread::_State_impl<std::thread::_Invoker<std::tuple<void "
		"(*)()> > >::_M_run()",
		"/bin/app!std::thread::thread<void (&)(), void>(void (&)()) (inline)",
		"/bin/app!void std::sort<int*, bool (*)(int, int)>(int*, int*, bool "
		"(*)(int, int)) (inline)",
		"/bin/app!std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke("
		"std::_Any_data const&)",
		"/bin/app!std::__invoke_result<void (*)()>::type std::__invoke<void "
		"(*)()>(void (*&&)()) (inline)",
		"/bin/r!r::cache::insert",
		"/bin/r!r::worker::{closure#0}",
		"/bin/r!<r::Foo as core::fmt::Display>::fmt",
		"/bin/r!<&r::Foo as core::fmt::Debug>::fmt",
		"/bin/r!<[r::Item] as r::Summary>::summarize",
		"/bin/r!<r::Text as core::fmt::Write>::write_str",
		"/bin/r!<r::Foo as core::convert::From<alloc::string::String>>::from",
		"/bin/r!<alloc::vec::Vec<r::Item> as r::Summary>::summarize",
		"/bin/r!std::thread::Builder::spawn_unchecked_",
		"/bin/r!core::slice::sort::shared::smallsort::insertion_sort_shift_left",
		"/bin/r!std::rt::lang_start_internal",
		"/bin/r!core::option::Option<T>::unwrap_or_else",
	};
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_patlist l = HS_PATLIST_INIT;
	size_t i;
	int bad = 0;

	(void)state;
	assert_int_equal(hs_patlist_parse(&l, HS_PRESET_HEAP_FOLD, "FoldPats", &diag), 0);
	for (i = 0; i < sizeof(folded) / sizeof(folded[0]); i++)
		bad += !folds_as(&l, folded[i], 1);
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		bad += !folds_as(&l, kept[i], 0);
	assert_int_equal(bad, 0);
	hs_patlist_release(&l);
}

/*
 * "perfview heap": PerfView's defaults for heap snapshots fold arrays and
 * strings (.NET Framework's and .NET's) into their holder, keep the other
 * types and the root categories, and exclude the orphans' frame.
 */
static void perfview_heap(void **state)
{
	static const char *const folded[] = {
		"/usr/share/dotnet/System.Private.CoreLib.dll!System.Byte[] (Bytes > 1K)",
		"System.Private.CoreLib.dll!Entry<System.Int32,CacheEntry>[]",
		"dotnet-heap.dll!Node[]",
		"mscorlib!String",
		"/usr/share/dotnet/System.Private.CoreLib.dll!System.String",
	};
	static const char *const kept[] = {
		"dotnet-heap.dll!Node",
		"System.Private.CoreLib.dll!System.Collections.Generic.List<Node>",
		"System.Private.CoreLib.dll!System.StringComparer",
		"System.Private.CoreLib.dll!System.String (Bytes > 10K)",
		"[static vars]",
		"[.NET Roots]",
		"[static var System.Collections.Generic.List<Node>.Nodes]",
	};
	const struct hs_preset *p = hs_preset_find("PerfView-Heap");
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_patlist l = HS_PATLIST_INIT;
	size_t i, which;
	int bad = 0;

	(void)state;
	assert_non_null(p);
	assert_string_equal(p->group, "mscorlib!=>LIB;System%!=>LIB;");
	assert_string_equal(p->exc, "[not reachable from roots]");
	assert_int_equal(hs_patlist_parse(&l, p->fold, "FoldPats", &diag), 0);
	for (i = 0; i < sizeof(folded) / sizeof(folded[0]); i++)
		bad += !folds_as(&l, folded[i], 1);
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		bad += !folds_as(&l, kept[i], 0);
	assert_int_equal(bad, 0);
	hs_patlist_release(&l);
	assert_int_equal(hs_patlist_parse(&l, p->exc, "ExcPats", &diag), 0);
	assert_int_equal(hs_patlist_match_any(&l, "[not reachable from roots]", 26, &which),
			 1);
	assert_int_equal(hs_patlist_match_any(&l, "[static vars]", 13, &which), 0);
	hs_patlist_release(&l);
	/* the other presets exclude nothing */
	for (i = 0; i < hs_presets_count(); i++)
		if (hs_presets_get(i) != p)
			assert_null(hs_presets_get(i)->exc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listing),
		cmocka_unit_test(lookup),
		cmocka_unit_test(group_texts),
		cmocka_unit_test(linux_names),
		cmocka_unit_test(just_my_app),
		cmocka_unit_test(heap_fold),
		cmocka_unit_test(perfview_heap),
	};
	return cmocka_run_group_tests_name("presets", tests, NULL, NULL);
}
