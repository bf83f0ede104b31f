/*
 * io_internal - what formats.c (the formats as data) and io.c (the
 * path-level import and export) share inside src/io; not for other
 * modules.
 */
#ifndef HS_IO_INTERNAL_H
#define HS_IO_INTERNAL_H

/* Whether @s ends with @suffix, ignoring case. */
int hs__io_ends_with(const char *s, const char *suffix);

#endif
