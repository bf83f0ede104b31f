// makeshared - std::make_shared and std::allocate_shared of library types
// (a vector, a string) and of a user type whose constructor allocates,
// built -O2 -g as a release: the control block and what the object's
// constructor allocates are charged to the user's function that calls
// make_shared, or to the user's constructor, never to libstdc++'s
// _Sp_counted_ptr_inplace constructor that builds the object in place
// (t5190).
#include <memory>
#include <string>
#include <vector>

struct Record {
	std::string name;
	std::vector<int> values;
	Record(const char *n, int k) : name(n), values(k, 1) {}
};

static std::shared_ptr<std::vector<int>> keep_vector;
static std::shared_ptr<std::string> keep_string;
static std::shared_ptr<Record> keep_record;

__attribute__((noinline)) void shared_vectors()
{
	for (int i = 0; i < 3; i++)
		keep_vector = std::make_shared<std::vector<int>>(100 + i);
}

__attribute__((noinline)) void shared_strings()
{
	std::allocator<std::string> a;

	for (int i = 0; i < 2; i++)
		keep_string = std::allocate_shared<std::string>(a, 40 + i, 'x');
}

__attribute__((noinline)) void shared_records()
{
	for (int i = 0; i < 2; i++)
		keep_record = std::make_shared<Record>("a name longer than fifteen", 50);
}

int main()
{
	shared_vectors();
	shared_strings();
	shared_records();
	keep_vector.reset();
	keep_string.reset();
	keep_record.reset();
	return 0;
}
