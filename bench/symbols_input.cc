// symbols_input - a C++ program with the kind of debug information that
// makes symbolizing slow: big translation units (regex, streams, maps)
// full of inlined templates. Input of symbols_bench (bench/README.md);
// built only on request: ninja -C build bench/symbols_input
#include <regex>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>
#include <iostream>
#include <sstream>
#include <algorithm>
#include <memory>
#include <functional>
#include <set>
#include <deque>
int main(int argc, char **argv) {
	std::map<std::string, std::vector<int>> m;
	std::unordered_map<std::string, std::set<double>> u;
	std::deque<std::shared_ptr<std::string>> d;
	std::regex re(argc > 1 ? argv[1] : "a+b*");
	for (int i = 0; i < argc; i++) {
		std::smatch sm; std::string s(argv[i]);
		if (std::regex_search(s, sm, re)) m[sm.str()].push_back(i);
		u[s].insert(i * 0.5);
		d.push_back(std::make_shared<std::string>(s));
		std::function<int(int)> f = [&](int x) { return x + (int)m.size(); };
		std::ostringstream os; os << f(i) << s; std::cout << os.str();
	}
	std::sort(d.begin(), d.end(), [](auto &a, auto &b) { return *a < *b; });
	return (int)m.size();
}
