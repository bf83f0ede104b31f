#!/usr/bin/env python3
"""check-signal-safe - refuse calls a signal handler must not make.

Usage: check-signal-safe.py FILE...

Each FILE holds code that runs inside a signal handler (the collector's
src/collector/cpu_handler.c). Every call in it must be to a function the
file defines itself (checked with it) or to one on ALLOWED below: atomics,
the clock, libunwind's local unwinding, the few collector functions that
are async-signal-safe. A call to anything else fails the check, and a call
to something on NEVER (allocation, stdio, locks, ...) can never be added to
ALLOWED. Comments and string literals are ignored; calls through a struct
(hs_real.malloc) count by their whole name.

Exit status: 0 when every file passes, 1 with a line per offending call
("FILE:LINE: call to NAME ..."), 2 on a usage error.
"""
import re
import sys

# name: why it is safe inside the handler
ALLOWED = {
    # C11 atomics (macros over compiler built-ins: no lock for these sizes)
    'atomic_load': 'lock-free atomic', 'atomic_load_explicit': 'lock-free atomic',
    'atomic_store': 'lock-free atomic', 'atomic_store_explicit': 'lock-free atomic',
    'atomic_exchange': 'lock-free atomic', 'atomic_fetch_add': 'lock-free atomic',
    'atomic_fetch_add_explicit': 'lock-free atomic',
    'atomic_flag_test_and_set_explicit': 'atomic_flag: lock-free by the standard',
    'atomic_flag_clear_explicit': 'atomic_flag: lock-free by the standard',
    'memcmp': 'pure function on caller memory (POSIX.1-2016 lists it)',
    'memcpy': 'pure function on caller memory (POSIX.1-2016 lists it)',
    'memset': 'pure function on caller memory (POSIX.1-2016 lists it)',
    'sigismember': 'async-signal-safe (POSIX)',
    'clock_ns': 'cpu_internal.h inline over clock_gettime(), async-signal-safe (POSIX)',
    'clock_gettime': 'async-signal-safe (POSIX)',
    'read': 'async-signal-safe (POSIX); the count of the thread\'s perf event',
    # libunwind: local unwinding is signal-safe (libunwind(3), "Signal safety")
    'unw_init_local2': 'libunwind local unwinding', 'unw_step': 'libunwind local unwinding',
    'unw_get_reg': 'libunwind local unwinding', 'unw_is_signal_frame': 'libunwind local unwinding',
    # the collector
    'hs_now_ns': 'reads the clock (collector.h)',
    'hs_fatal_signal': "the collector's fatal-signal path, made for signal context",
    'hs_msg': 'formats into a stack buffer and write(2)s; only with unwind=check',
}

# Never allowed, whatever ALLOWED says: the handler interrupts these.
NEVER = re.compile(r'''^(?:
    malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|
    strdup|strndup|asprintf|vasprintf|mmap|munmap|
    printf|fprintf|vfprintf|dprintf|puts|fputs|fputc|putc|putchar|fwrite|fflush|fopen|fclose|
    snprintf|vsnprintf|sprintf|vsprintf|syslog|perror|strerror|
    pthread_\w+|sem_\w+|dlopen|dlsym|dlclose|dl_iterate_phdr|
    exit|atexit|abort|setenv|getenv|qsort|
    hs_real\.\w+|hs_\w*malloc\w*|hs_\w*free\w*|hs_thread_get|hs_emit\w*|hs_stack_\w+
)$''', re.X)

KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof', '_Alignof', 'alignof',
            '__typeof__', 'typeof', '__attribute__', 'defined', '_Static_assert',
            '__builtin_expect', 'HS_UNLIKELY', 'HS_LIKELY', 'tls_model'}

assert not [n for n in ALLOWED if NEVER.match(n)], 'ALLOWED names a NEVER function'


def blank_out(text):
    """Comments, strings, character constants and preprocessor lines as spaces."""
    out = []
    pat = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|'
                     r'^[ \t]*#[^\n]*(?:\\\n[^\n]*)*', re.S | re.M)
    last = 0
    for m in pat.finditer(text):
        out.append(text[last:m.start()])
        out.append(re.sub(r'[^\n]', ' ', m.group(0)))
        last = m.end()
    out.append(text[last:])
    return ''.join(out)


def defined_functions(code):
    """Functions the file defines: a name followed by '(' on a line that starts at column 0."""
    names = set()
    for line in code.split('\n'):
        if line[:1].isalpha() or line[:1] == '_':
            m = re.search(r'\b([A-Za-z_]\w*)\s*\(', line)
            if m and m.group(1) not in KEYWORDS:
                names.add(m.group(1))
    return names


def check(path):
    code = blank_out(open(path, encoding='utf-8').read())
    own = defined_functions(code)
    bad = []
    call = re.compile(r'((?:[A-Za-z_]\w*\s*(?:\.|->)\s*)*[A-Za-z_]\w*)\s*\(')
    for m in call.finditer(code):
        name = re.sub(r'\s+', '', m.group(1))
        base = re.split(r'\.|->', name)[-1]
        line = code.count('\n', 0, m.start()) + 1
        if NEVER.match(name) or NEVER.match(base):
            bad.append('%s:%d: call to %s, which a signal handler must never make'
                       % (path, line, name))
        elif name in KEYWORDS or (name in own and name == base) or name in ALLOWED:
            continue
        else:
            bad.append('%s:%d: call to %s, not on the list of calls allowed in a signal '
                       'handler (scripts/check-signal-safe.py ALLOWED)' % (path, line, name))
    return bad


def main(argv):
    if len(argv) < 2:
        sys.stderr.write('usage: check-signal-safe.py FILE...\n')
        return 2
    bad = []
    for path in argv[1:]:
        bad += check(path)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
