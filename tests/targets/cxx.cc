// cxx - C++ allocations: new, new[], delete, and over-aligned new, which
// reach the collector through libstdc++'s operator new (malloc) and its
// aligned form (aligned_alloc).
#include <cstdio>
#include <new>
#include <string>
#include <vector>
extern "C" {
#include "target.h"
}

struct alignas(64) Wide {
	char bytes[128];
};

static void *volatile sink;

extern "C" SITE void site_new(void)
{
	int *p = new int[25];	// 100 bytes
	sink = p;
	delete[] p;
}

extern "C" SITE void site_object(void)
{
	std::string *s = new std::string();	// 32 bytes on 64-bit libstdc++
	sink = s;
	delete s;
}

extern "C" SITE void site_aligned(void)
{
	Wide *w = new Wide;
	sink = w;
	delete w;
}

int main()
{
	SYM(site_new);
	SYM(site_object);
	SYM(site_aligned);
	std::fflush(stdout);
	for (int i = 0; i < 4; i++)
		site_new();
	for (int i = 0; i < 3; i++)
		site_object();
	for (int i = 0; i < 2; i++)
		site_aligned();
	// operator new is the allocation function called: its call site is in
	// libstdc++, so the stack's innermost target frame is the site
	std::printf("expect alloc malloc 100 4 site_new\n");
	std::printf("expect free malloc 100 4 site_new\n");
	std::printf("expect alloc malloc %zu 3 site_object\n", sizeof(std::string));
	std::printf("expect free malloc %zu 3 site_object\n", sizeof(std::string));
	std::printf("expect alloc aligned_alloc 128 2 site_aligned\n");
	std::printf("expect free aligned_alloc 128 2 site_aligned\n");
	return 0;
}
