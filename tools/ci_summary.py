#!/usr/bin/env python3
"""ci_summary.py - counts test cases from Bazel test logs for .ci/run.

Reads bazel-testlogs/<pkg>/<target>/test.log for every target in the
`bazel test` summary (the log of that command is argv[1]). A CMocka binary
contributes one count per test case ([ OK ] / [ FAILED ] / [ SKIPPED ]); any
other test target (a shell test) counts as one case by its Bazel status. A
target that failed without a CMocka failure line (crash, timeout, build
failure) counts as one failed case. Prints per-target lines, then the plain
line "N passed, N failed" (", N skipped" when any were skipped).
An optional third argument names the output of fuzz/run.sh: each line
"fuzz:<target>: PASSED|FAILED ..." counts as one test case.
"""
import os
import re
import sys

FUZZ = re.compile(r"^(fuzz:\S+): (PASSED|FAILED)\b")
SUMMARY = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|FAILED TO BUILD|NO STATUS|TIMEOUT|FLAKY)\b")
RESULT = re.compile(r"^\[\s*(OK|FAILED|SKIPPED|ERROR)\s*\] (test_\S+)\s*$")
PYTEST = re.compile(r"^(\S+\.py(?:::.+?)?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: \(.*\))?(?:\s+\[\s*\d+%\])?\s*$")
PYTEST_KIND = {"PASSED": "OK", "XFAIL": "OK", "FAILED": "FAILED", "ERROR": "FAILED",
               "XPASS": "FAILED", "SKIPPED": "SKIPPED"}


def pytest_counts(log_text):
    """Per-item results of a pytest -v run (an item failing in setup and in
    its test counts once, as failed)."""
    items = {}
    for line in log_text.splitlines():
        m = PYTEST.match(line)
        if m:
            kind = PYTEST_KIND[m.group(2)]
            if items.get(m.group(1)) != "FAILED":
                items[m.group(1)] = kind
    counts = {"OK": 0, "FAILED": 0, "SKIPPED": 0}
    for kind in items.values():
        counts[kind] += 1
    return counts, bool(items)


def cmocka_counts(log_text):
    """Per-case results: the first result line after each [ RUN ] line."""
    counts = {"OK": 0, "FAILED": 0, "SKIPPED": 0}
    running = None
    for line in log_text.splitlines():
        if line.startswith("[ RUN      ] "):
            running = line[len("[ RUN      ] "):].strip()
            continue
        m = RESULT.match(line)
        if m and running is not None and m.group(2) == running:
            kind = "FAILED" if m.group(1) == "ERROR" else m.group(1)
            counts[kind] += 1
            running = None
    if running is not None:  # crashed inside a test
        counts["FAILED"] += 1
    return counts, "[ RUN      ]" in log_text


def main():
    bazel_log = open(sys.argv[1], errors="replace").read() if len(sys.argv) > 1 else ""
    testlogs = sys.argv[2] if len(sys.argv) > 2 else "bazel-testlogs"
    passed = failed = skipped = 0
    targets = [m.groups() for m in map(SUMMARY.match, bazel_log.splitlines()) if m]
    if not targets:
        print("ci_summary: no test results in the bazel output")
        failed = 1
    for label, status in targets:
        pkg, name = label[2:].split(":")
        log = os.path.join(testlogs, pkg, name, "test.log")
        text = open(log, errors="replace").read() if os.path.exists(log) else ""
        counts, is_cmocka = cmocka_counts(text)
        if not is_cmocka:
            counts, is_cmocka = pytest_counts(text)
        ok = status in ("PASSED", "FLAKY")
        if is_cmocka:
            p, f, s = counts["OK"], counts["FAILED"], counts["SKIPPED"]
            if not ok and f == 0:
                f = 1
        else:
            p, f, s = (1, 0, 0) if ok else (0, 1, 0)
        print(f"{label}: {status}: {p} passed, {f} failed, {s} skipped")
        passed, failed, skipped = passed + p, failed + f, skipped + s
    if len(sys.argv) > 3:
        fuzz_text = open(sys.argv[3], errors="replace").read() if os.path.exists(sys.argv[3]) else ""
        fuzz = [m.groups() for m in map(FUZZ.match, fuzz_text.splitlines()) if m]
        if not fuzz:
            print("ci_summary: no fuzz results")
            failed += 1
        for label, status in fuzz:
            ok = status == "PASSED"
            print(f"{label}: {status}: {1 if ok else 0} passed, {0 if ok else 1} failed, 0 skipped")
            passed, failed = passed + (1 if ok else 0), failed + (0 if ok else 1)
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
