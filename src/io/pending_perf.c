/*
 * pending_perf - TEMPORARY: entry points whose real implementation is being
 * written. Each is removed from here when its module lands; the file goes
 * away when empty. Nothing here may remain on main at the end of a session.
 */
#include "io/io.h"
#include <errno.h>

int hs_import_perf_script(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{ (void)f; (void)out; (void)diag; return -ENOSYS; }
int hs_import_trace_zip(const char *path, struct hs_stack_source *out, struct hs_diag *diag)
{ (void)path; (void)out; (void)diag; return -ENOSYS; }
