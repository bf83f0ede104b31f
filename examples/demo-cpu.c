#include <stdio.h>
#include <stdlib.h>
static volatile double sink;
__attribute__((noinline)) static void parse_input(int n) { for (int i = 0; i < n; i++) sink += i * 0.5; }
__attribute__((noinline)) static void build_index(int n) { for (int i = 0; i < n; i++) sink += i / 3.0; }
__attribute__((noinline)) static void compute(int n) { parse_input(n); build_index(3 * n); }
int main(void) { for (int r = 0; r < 40; r++) compute(2000000); printf("%f\n", sink); return 0; }
