/*
 * dlleak - a library whose constructor leaks a block: a user's leak made
 * under dlopen(), with the dynamic linker's functions on its stack, which
 * the leaks view must show (t5140-leaks-dlopen.bats).
 */
#include <stdlib.h>
#include "target.h"

static void *volatile sink;

SITE void *site_plugin_leak(size_t n) { void *p = malloc(n); sink = p; return p; }

__attribute__((constructor)) static void plugin_init(void)
{
	site_plugin_leak(777);	/* never freed */
}
