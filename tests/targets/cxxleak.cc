// cxxleak - a C++ program with one known leak: leak_buffer() allocates
// 64,000 bytes with new[] and never frees them. Everything else it
// allocates (a string, a vector, an exception thrown and caught) is freed.
// libstdc++ allocates its emergency exception pool when it is loaded and
// frees it only in its free-at-exit hook, so the trace must show this one
// leak and nothing of libstdc++ (t5150).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

static char *volatile sink;

__attribute__((noinline)) static void leak_buffer()
{
	sink = new char[64000];
}

__attribute__((noinline)) static size_t use_and_free()
{
	std::string s(100, 'x');
	std::vector<int> v(1000, 1);
	size_t n = s.size() + v.size();

	try {
		throw std::runtime_error("caught and freed");
	} catch (const std::exception &e) {
		n += std::string(e.what()).size();
	}
	return n;
}

int main()
{
	size_t n = use_and_free();

	leak_buffer();
	std::printf("leak 64000 1 leak_buffer\n");
	return n == 1116 ? 0 : 1;
}
