#!/usr/bin/env python3
"""progress_py_test.py - tools/opp_progress.py on the CPU: every string of
tests/progress_cases.txt (the table that also pins harness/progress.h,
tests/progress_test.c), and the Progress class's printed lines with a fake
clock (counts, weights, ETA, summary).

    python3 tests/progress_py_test.py [tests/progress_cases.txt]
Prints one line per check, then "all N checks ok" or "N of M checks
FAILED" (exit 1).
"""

import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import opp_progress  # noqa: E402
sys.path.insert(0, HERE)
import py_checks  # noqa: E402  (tests/py_checks.py: the report)


def table_checks(path):
    """(description, got, want) for each row of the table."""
    out = []
    for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        if f[0] == "duration" and len(f) == 3:
            got = opp_progress.duration(float(f[1]))
        elif f[0] == "item" and len(f) == 9:
            got = opp_progress.format_item(f[1], int(f[2]), int(f[3]), float(f[4]), float(f[5]),
                                           float(f[6]), f[7])
        elif f[0] == "done" and len(f) == 5:
            got = opp_progress.format_done(f[1], int(f[2]), float(f[3]))
        else:
            raise SystemExit(f"{path}:{lineno}: malformed row")
        out.append((f"{path}:{lineno}", got, f[-1]))
    return out


def class_checks():
    """The Progress class with a clock that advances 2 s per item."""
    t = [100.0]
    buf = io.StringIO()
    p = opp_progress.Progress("gen", 4, out=buf, clock=lambda: t[0])
    for name in ("a", "b"):
        t[0] += 2.0
        p.item(name)
    p.done()
    w = opp_progress.Progress("w", 2, total_work=10.0, out=buf, clock=lambda: t[0])
    t[0] += 9.0
    w.item("heavy", work=9.0)
    lines = buf.getvalue().splitlines()
    want = [
        "gen [1/4]  25.0% elapsed 2.0s eta 6.0s: a",
        "gen [2/4]  50.0% elapsed 4.0s eta 4.0s: b",
        "gen done: 2 items in 4.0s (2000.0 ms per item)",
        "w [1/2]  90.0% elapsed 9.0s eta 1.0s: heavy",
    ]
    return [("Progress line %d" % i, g, w) for i, (g, w) in enumerate(zip(lines, want))] + [
        ("Progress line count", str(len(lines)), str(len(want)))]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "progress_cases.txt")
    checks = table_checks(path)
    if len(checks) < 18:
        raise SystemExit(f"{path}: only {len(checks)} rows read")
    checks += class_checks()
    return py_checks.report(checks)


if __name__ == "__main__":
    sys.exit(main())
