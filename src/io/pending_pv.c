/*
 * pending_pv - TEMPORARY: entry points whose real implementation is being
 * written. Each is removed from here when its module lands; the file goes
 * away when empty. Nothing here may remain on main at the end of a session.
 */
#include "io/io.h"
#include <errno.h>

enum hs_format hs_format_sniff(const unsigned char *head, size_t n)
{ (void)head; (void)n; return HS_FORMAT_UNKNOWN; }
int hs_import_path(const char *path, enum hs_format fmt,
		   struct hs_stack_source *out, struct hs_diag *diag)
{ (void)path; (void)fmt; (void)out; (void)diag; return -ENOSYS; }
int hs_export_path(const struct hs_stack_source *src, const char *path,
		   enum hs_format fmt, struct hs_diag *diag)
{ (void)src; (void)path; (void)fmt; (void)diag; return -ENOSYS; }
int hs_import_perfview_xml(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{ (void)f; (void)out; (void)diag; return -ENOSYS; }
int hs_import_perfview_json(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{ (void)f; (void)out; (void)diag; return -ENOSYS; }
int hs_import_folded(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{ (void)f; (void)out; (void)diag; return -ENOSYS; }
int hs_export_folded(const struct hs_stack_source *src, FILE *f)
{ (void)src; (void)f; return -ENOSYS; }
int hs_export_perfview_xml(const struct hs_stack_source *src, FILE *f)
{ (void)src; (void)f; return -ENOSYS; }
int hs_export_perfview_json(const struct hs_stack_source *src, FILE *f)
{ (void)src; (void)f; return -ENOSYS; }
