// symtest_cxx - C++ names for the symbolizer's demangling tests
// (tests/unit/test_symbols.c): a template in a namespace that calls an
// always-inlined template, and a member function. Each records the
// return address of its call to the leaf; MARK comments name the lines.
extern "C" {
void *hs_symtest_cxx_last_return;

__attribute__((noinline)) int hs_symtest_cxx_leaf(int x)
{
	hs_symtest_cxx_last_return = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}
}

namespace hs {
namespace detail {
template <typename T>
static inline __attribute__((always_inline)) T scale(T v)
{
	return hs_symtest_cxx_leaf(v) * 3; // MARK:cxx_scale_call
}
} // namespace detail

template <typename T> __attribute__((noinline)) T twice(T v)
{
	return detail::scale(v) + 2; // MARK:cxx_twice_call
}
template int twice<int>(int);

struct widget {
	long size;
	__attribute__((noinline)) long grow(unsigned long n);
};

long widget::grow(unsigned long n)
{
	size += hs_symtest_cxx_leaf((int)n); // MARK:cxx_grow_call
	return size;
}
} // namespace hs

extern "C" int hs_symtest_cxx_twice(int x)
{
	return hs::twice<int>(x);
}

extern "C" long hs_symtest_cxx_grow(unsigned long n)
{
	hs::widget w = { 1 };

	return w.grow(n);
}
