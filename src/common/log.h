#ifndef HS_COMMON_LOG_H
#define HS_COMMON_LOG_H

/*
 * log - leveled messages on stderr, prefixed "heapscope: ".
 *
 * The level comes from hs_log_set_level() (the CLI's -v) or the HS_LOG
 * environment variable (error, warn, info, debug). Messages follow git's
 * style: lowercase, no full stop, the subject in quotes. Control
 * characters in a message are escaped (common/escape.h): its arguments
 * quote names and files.
 */
enum hs_log_level { HS_LOG_ERROR, HS_LOG_WARN, HS_LOG_INFO, HS_LOG_DEBUG };

void hs_log_set_level(enum hs_log_level level);
int hs_log_enabled(enum hs_log_level level);
void hs_log(enum hs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define pr_err(...) hs_log(HS_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) hs_log(HS_LOG_WARN, __VA_ARGS__)
#define pr_info(...) hs_log(HS_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) hs_log(HS_LOG_DEBUG, __VA_ARGS__)

/*
 * A check of a documented invariant that stays on in release builds:
 * when @cond holds, prints "BUG at file:line" and aborts. For the
 * caller's mistakes and corrupted state, never for bad input (which gets
 * an error return).
 */
#define HS_BUG_ON(cond)                                                                  \
	do {                                                                             \
		if (__builtin_expect(!!(cond), 0))                                       \
			hs__bug(__FILE__, __LINE__, #cond);                              \
	} while (0)
_Noreturn void hs__bug(const char *file, int line, const char *what);

/*
 * On a function that can fail: the compiler warns (an error under
 * -Werror) when a caller ignores its result.
 */
#define HS_MUST_CHECK __attribute__((warn_unused_result))
#endif
