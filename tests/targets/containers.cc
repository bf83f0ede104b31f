// containers - the C++ standard library used the ordinary way, one use
// per function, built with -O2 -g (the library's code inlined into the
// functions, as in a release build): with the heap views' default
// FoldPats (the `heap` preset), ByName's Exc of each use_* function is
// exactly what its containers allocated (t5130-memviews-cxx.bats).
//
// It prints, for each function that allocates, "exc BYTES BLOCKS NAME":
// what the function allocates, computed from libstdc++'s own sizes
// (capacity, node types, bucket counts), so that the numbers follow the
// library, and its name as the demangler writes it. store::use_deque and
// store::fill<long> are in a namespace, and fill<long> is a template with
// a return type in its name (heapscope source finds them by bare name).
// Frames that are not between a user's function and the allocator stay:
// worker runs in a std::thread and allocates itself, by_len is a
// comparator of std::sort that allocates.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#define SITE __attribute__((noinline, noclone, used))

static void *volatile sink;

template <class T> static inline void keep(T &x)
{
	asm volatile("" : : "r"(&x) : "memory");
}

// what each function allocated, printed at the end (printing allocates
// stdout's buffer, which must not be charged to a use_* function)
static struct {
	const char *fn;
	size_t bytes, blocks;
} excs[16];
static int nr_excs;

static void exc(const char *fn, size_t bytes, size_t blocks)
{
	excs[nr_excs].fn = fn;
	excs[nr_excs].bytes = bytes;
	excs[nr_excs++].blocks = blocks;
}

SITE void use_str()
{
	std::string s(200, 'a');	// one block: capacity + 1
	keep(s);
	exc("use_str()", s.capacity() + 1, 1);
}

SITE void use_vec()
{
	std::vector<int> v;
	size_t bytes = 0, blocks = 0, cap = 0;

	for (int i = 0; i < 5; i++) {
		v.push_back(i);		// grows 1, 2, 4, 8
		if (v.capacity() != cap) {
			cap = v.capacity();
			bytes += cap * sizeof(int);
			blocks++;
		}
	}
	keep(v);
	exc("use_vec()", bytes, blocks);
}

SITE void use_map()
{
	std::map<int, int> m;

	m[1] = 2;
	m[3] = 4;
	keep(m);
	exc("use_map()", 2 * sizeof(std::_Rb_tree_node<std::pair<const int, int>>), 2);
}

SITE void use_umap()
{
	std::unordered_map<int, int> m;

	m[1] = 2;
	keep(m);
	// a node, and the buckets (one in place until the first insert)
	exc("use_umap()",
	    sizeof(std::__detail::_Hash_node<std::pair<const int, int>, false>) +
		    m.bucket_count() * sizeof(void *), 2);
}

SITE void use_list()
{
	std::list<int> l;

	l.push_back(1);
	l.push_back(2);
	keep(l);
	exc("use_list()", 2 * sizeof(std::_List_node<int>), 2);
}

namespace store {
SITE void use_deque()
{
	std::deque<int> d;

	d.push_back(1);
	keep(d);
	// the map of 8 node pointers (libstdc++'s initial size) and one node
	exc("store::use_deque()", 8 * sizeof(int *) +
		std::__deque_buf_size(sizeof(int)) * sizeof(int), 2);
}

template <class T> SITE std::vector<T> *fill(int n)
{
	auto *v = new std::vector<T>();

	v->reserve(n);
	for (int i = 0; i < n; i++)
		v->push_back(T(i));
	exc("std::vector<long, std::allocator<long> >* store::fill<long>(int)",
	    sizeof(*v) + n * sizeof(T), 2);
	return v;
}
}

SITE void use_shared()
{
	auto p = std::make_shared<long>(7);	// one block: control block and long

	keep(p);
	exc("use_shared()",
	    sizeof(std::_Sp_counted_ptr_inplace<long, std::allocator<long>,
					       __gnu_cxx::_S_atomic>), 1);
}

SITE void use_unique()
{
	auto p = std::make_unique<long[]>(10);

	keep(p);
	exc("use_unique()", 10 * sizeof(long), 1);
}

SITE void worker()
{
	sink = std::malloc(123);
	std::free(sink);
	exc("worker()", 123, 1);
}

SITE bool by_len(const std::string &a, const std::string &b)
{
	sink = std::malloc(16);		// a comparator that allocates
	std::free(sink);
	return a.size() < b.size();
}

SITE void use_sort()
{
	std::string s[3] = { "ccc", "a", "bb" };	// short strings: in place

	std::sort(s, s + 3, by_len);
	keep(s);
}

SITE void use_thread()
{
	std::thread t(worker);

	t.join();
}

int main()
{
	use_str();
	use_vec();
	use_map();
	use_umap();
	use_list();
	store::use_deque();
	delete store::fill<long>(7);
	use_shared();
	use_unique();
	use_sort();
	use_thread();
	for (int i = 0; i < nr_excs; i++)
		std::printf("exc %zu %zu %s\n", excs[i].bytes, excs[i].blocks,
			    excs[i].fn);
	return 0;
}
