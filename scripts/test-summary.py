#!/usr/bin/env python3
"""Print one closing line, "N passed, N failed", over the Meson test logs
given as arguments (BUILD/meson-logs/testlog.json), so a CI log ends with
a count of what ran. Exit status 1 when any test failed or none ran."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                result = json.loads(line).get("result")
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        failed += 1
        print(f"missing test log {path}", file=sys.stderr)
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or not passed else 0)
