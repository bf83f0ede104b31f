/*
 * dlsym - the collector's dlsym(), for what a program finds by name at
 * run time rather than through its link map: today the .NET host's
 * coreclr_shutdown functions (dotnet_exit.c).
 *
 * Every other lookup must behave as if the collector were not there. The
 * real dlsym() reads its caller's return address to resolve RTLD_NEXT
 * (and the caller's namespace for RTLD_DEFAULT), so the forward is a
 * sibling call: the real function returns straight to our caller, and
 * sees its address. The sibling call is asked for explicitly, since the
 * collector may be built without optimisation (GCC: the function is
 * optimised whatever the build's level; clang: musttail); the wrapped
 * names are looked up only through a handle, where the caller does not
 * matter. t3004's nextsym fails when the forward is a plain call.
 *
 * The real dlsym() is found with dlvsym(), which the collector does not
 * interpose (GLIBC_2.34 where dlsym moved into libc, else GLIBC_2.2.5).
 */
#include "collector/collector.h"
#include "collector/dotnet_exit.h"
#include <dlfcn.h>
#include <string.h>
#include <stdatomic.h>

typedef void *dlsym_fn(void *handle, const char *name);

#if defined(__clang__)
#define SIBLING_CALLER
#define SIBLING_CALL __attribute__((musttail))
#else
#define SIBLING_CALLER __attribute__((optimize("O2", "optimize-sibling-calls")))
#define SIBLING_CALL
#endif

static dlsym_fn *_Atomic real_dlsym;

static dlsym_fn *find_real_dlsym(void)
{
	dlsym_fn *fn = atomic_load_explicit(&real_dlsym, memory_order_acquire);

	if (fn)
		return fn;
	fn = (dlsym_fn *)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!fn)
		fn = (dlsym_fn *)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (fn)
		atomic_store_explicit(&real_dlsym, fn, memory_order_release);
	return fn;
}

SIBLING_CALLER HS_EXPORT void *dlsym(void *handle, const char *name)
{
	dlsym_fn *real = find_real_dlsym();

	if (!real)
		return NULL;
	if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && name[0] == 'c' &&
	    !strncmp(name, "coreclr_shutdown", 16))
		return hs_dotnet_exit_wrap(name, real(handle, name));
	SIBLING_CALL return real(handle, name);
}
