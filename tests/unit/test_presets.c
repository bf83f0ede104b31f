#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/group.h"
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
	assert_int_equal(n, 11);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listing),
		cmocka_unit_test(lookup),
		cmocka_unit_test(group_texts),
		cmocka_unit_test(linux_names),
		cmocka_unit_test(just_my_app),
	};
	return cmocka_run_group_tests_name("presets", tests, NULL, NULL);
}
