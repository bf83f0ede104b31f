#ifndef HS_TESTS_FUZZ_UTIL_H
#define HS_TESTS_FUZZ_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/stack_source.h"

/*
 * fuzz_util - what the libFuzzer targets of tests/fuzz share: an input
 * handed to an importer as a FILE or as a path, and one check of the stack
 * source an importer made, so that whatever an importer lets through is
 * also read by what every front end reads.
 *
 * A failure of the fuzz machinery itself (no memory for the FILE, no
 * memfd) aborts: it would otherwise look like an input the importer
 * refused. A broken invariant of the source aborts too, which libFuzzer
 * reports as a crash with the input that caused it.
 */

/* The LLVMFuzzerTestOneInput of each target (libFuzzer calls it). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * @size bytes at @data (borrowed; they must outlive the FILE) as a FILE
 * opened for reading, which the caller fclose()s. An empty input gives an
 * empty stream.
 */
FILE *fuzz_open_mem(const uint8_t *data, size_t size);

/*
 * @size bytes at @data in an anonymous memory file; its name in @path
 * ("/proc/self/fd/N", room for @len bytes). Returns the descriptor, which
 * the caller closes.
 */
int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t len);

/*
 * Check @src as every importer must leave it (stack_source.h: frames and
 * callers known, a caller's id below its callees', depths one more than
 * the caller's; samples on known stacks), then view it as `heapscope
 * report` would: its saved defaults as the filter, the call tree, and the
 * ByName, CallTree and Flame views written as text and JSON to nowhere.
 * A bad saved pattern is a refusal, not a failure.
 */
void fuzz_check_source(const struct hs_stack_source *src);
#endif
