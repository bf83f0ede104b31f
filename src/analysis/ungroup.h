#ifndef HS_ANALYSIS_UNGROUP_H
#define HS_ANALYSIS_UNGROUP_H
#include "common/buf.h"
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * ungroup - the stack viewer's Ungroup (docs/gui.md) for a group that
 * GroupPats made from a template ("{%!*}::->class $1" makes "class
 * libfoo.so!Foo") or an entry group ("LIB <<mscorlib!Foo>>"): the
 * GroupPats entries that, put first, take exactly that row's frames out
 * of their group and leave every other frame of the source as it was.
 *
 * A front end cannot find them from the row's name: "class libfoo.so!Foo"
 * is not a pattern, and its module ("libfoo.so!->") would also ungroup
 * "class libfoo.so!Bar". So the frames decide: the row's frames are those
 * of @src that GroupPats put in it (for an entry group, its entry frame),
 * and the first of these candidates that changes exactly them is taken,
 * each checked against every frame of @src with the GroupPats it makes:
 *   1. their module, "libfoo.so!" (all of "module libfoo.so"), then the
 *      same only where a module's name starts, "@(?:^|/)libfoo\.so!"
 *      (not "xlibfoo.so!");
 *   2. the start their short names share, "libfoo.so!Foo::", then the
 *      same where a module's name starts;
 *   3. their short names, each whole: "@(?:^|/)(?:libfoo\.so!Foo::a|...)$";
 *   4. their full names, each whole.
 * An entry group stands for its entry frame: its candidates start at 2,
 * with the frame's own name ("mscorlib!Foo->", as PerfView's Ungroup).
 * Text with a pattern's special characters becomes a raw regular
 * expression ("@...") that matches it literally.
 *
 * Ungroup Module is the same for all the grouped frames of one module.
 *
 * Ownership: nothing is kept; @out is the caller's.
 */

/*
 * The GroupPats text that ungroups row @name (a plain group's name or an
 * entry group's "GROUP <<frame>>") of a view of @src grouped with
 * @group_text: the candidate's entries ("PAT->", which leaves a frame
 * ungrouped), after @group_text's leading "[description]" and before its
 * entries, appended to @out. Returns 0; -ENOENT when no frame of @src is
 * in that row; -EINVAL when @group_text is bad or no candidate is exact
 * (a message in @diag either way); -ENOMEM.
 */
int hs_ungroup(const struct hs_stack_source *src, const char *group_text,
	       const char *name, struct hs_buf *out, struct hs_diag *diag);

/*
 * Ungroup Module: the same for every grouped frame of module @module (its
 * short name, "libc.so.6"), whatever group it is in: "libc.so.6!->", or
 * "@(?:^|/)libc\.so\.6!->" when another module's name ends in it, else
 * the frames' names. A module none of whose frames is grouped gets its
 * "mod!->" all the same (it keeps them ungrouped), when that changes no
 * other frame. Returns 0, -EINVAL or -ENOMEM as hs_ungroup().
 */
int hs_ungroup_module(const struct hs_stack_source *src, const char *group_text,
		      const char *module, struct hs_buf *out, struct hs_diag *diag);
#endif
