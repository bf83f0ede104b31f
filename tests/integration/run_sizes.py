# run_sizes - how `heapscope run`'s end summary writes sizes and counts
# (cli_human_bytes() and cli_count() in src/cli), for the bats files
# that check its lines against `heapscope stats --format json`'s
# figures. Import it with PYTHONPATH="$HS_SRC/tests/integration".
import math


def human(b):
    """Bytes as run prints them: "512 B", "1.5 KiB", ... up to TiB."""
    v, u = abs(b), 0
    while v >= 1024 and u < 4:
        v, u = v / 1024, u + 1
    return "%.0f B" % b if u == 0 else "%.1f %s" % (v, ["B", "KiB", "MiB", "GiB", "TiB"][u])


def count(x):
    """A count as run prints it: an integer, or one decimal for an estimate."""
    return "%.0f" % x if x == math.floor(x) else "%.1f" % x
