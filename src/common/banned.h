#ifndef HS_COMMON_BANNED_H
#define HS_COMMON_BANNED_H

/*
 * banned - libc calls heapscope's code must not make, turned into compile
 * errors, as git's banned.h does. The build includes this header first in
 * every C translation unit of the project (`-include`, see the top-level
 * meson.build); a call such as strcpy(a, b) then fails to compile with an
 * error that names sorry_strcpy_is_banned_see_common_banned_h.
 *
 * Why each is banned, and what to use:
 *  - strcpy, strcat, sprintf, vsprintf, gets: no bound on what they write;
 *    use memcpy with a known length, struct hs_buf (common/buf.h),
 *    snprintf / vsnprintf.
 *  - strncpy, strncat: bounded, but strncpy may leave no NUL and pads, and
 *    strncat's bound is not the buffer's size; use snprintf or memcpy.
 *  - strtok: hidden state, not reentrant; use strtok_r, or strchr/strcspn.
 *  - gmtime, localtime, ctime, asctime, ctime_r, asctime_r: static results
 *    or unbounded output; use gmtime_r / localtime_r with strftime.
 *  - tmpnam, tempnam, mktemp: a race between the name and the file; use
 *    mkstemp or tmpfile.
 *
 * The standard headers that declare these are included first, so that
 * their declarations are read before the names become macros; a later
 * #include of them is then a no-op.
 *
 * Opting out: -DHS_ALLOW_BANNED, for code outside the rule: the preload
 * collector (which keeps rules of its own: no stdio, no allocation in its
 * hooks; see collector/) and the unit tests, whose fixtures build their
 * inputs with sprintf and strcpy into buffers sized for them.
 */
#ifndef HS_ALLOW_BANNED
#include <stdio.h>
#include <string.h>
#include <time.h>

#define HS_BANNED(func) sorry_##func##_is_banned_see_common_banned_h

#undef strcpy
#define strcpy(...) HS_BANNED(strcpy)
#undef strcat
#define strcat(...) HS_BANNED(strcat)
#undef strncpy
#define strncpy(...) HS_BANNED(strncpy)
#undef strncat
#define strncat(...) HS_BANNED(strncat)
#undef sprintf
#define sprintf(...) HS_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) HS_BANNED(vsprintf)
#undef gets
#define gets(...) HS_BANNED(gets)
#undef strtok
#define strtok(...) HS_BANNED(strtok)

#undef gmtime
#define gmtime(...) HS_BANNED(gmtime)
#undef localtime
#define localtime(...) HS_BANNED(localtime)
#undef ctime
#define ctime(...) HS_BANNED(ctime)
#undef ctime_r
#define ctime_r(...) HS_BANNED(ctime_r)
#undef asctime
#define asctime(...) HS_BANNED(asctime)
#undef asctime_r
#define asctime_r(...) HS_BANNED(asctime_r)

#undef tmpnam
#define tmpnam(...) HS_BANNED(tmpnam)
#undef tempnam
#define tempnam(...) HS_BANNED(tempnam)
#undef mktemp
#define mktemp(...) HS_BANNED(mktemp)
#endif /* HS_ALLOW_BANNED */
#endif
