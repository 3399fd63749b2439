"""opp_progress - the progress lines of the long tools, for Python.

The same format as harness/progress.h (oppbench, oppcheck --onnx-test);
testdata/regenerate.py uses it. After each item one line

    TOOL [ 3/66]   4.5% elapsed 1.2s eta 25.2s: NAME

and at the end one summary line

    TOOL done: 66 items in 27.0s (409.1 ms per item)

The ETA is elapsed * (work left / work done): work is the item count, or a
weight given per item. Durations are "12.3s" below a minute, "4m05s" below
an hour, else "1h02m". tests/progress_cases.txt pins both implementations to
the same strings (tests/progress_test.c, tests/progress_py_test.py).
"""

import math
import sys
import time


def _c_round(x):
    """C's lround: halves away from zero (Python's round() goes to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def duration(seconds):
    """seconds as "12.3s", "4m05s" or "1h02m" ("?" if negative or not finite)."""
    s = float(seconds)
    if not (s >= 0.0) or not math.isfinite(s):
        return "?"
    if s < 59.95:
        return "%.1fs" % s
    if s < 3599.5:
        t = _c_round(s)
        return "%dm%02ds" % (t // 60, t % 60)
    m = _c_round(s / 60.0)
    return "%dh%02dm" % (m // 60, m % 60)


def format_item(tool, done_items, total_items, done_work, total_work, elapsed_s, name):
    """The line printed after an item (no newline)."""
    frac = done_work / total_work if total_work > 0 else 0.0
    eta = elapsed_s * (total_work - done_work) / done_work if done_work > 0 else -1.0
    width = len(str(total_items)) if total_items >= 0 else 1
    return "%s [%*d/%d] %5.1f%% elapsed %s eta %s: %s" % (
        tool, width, done_items, total_items, 100.0 * frac, duration(elapsed_s),
        duration(eta if eta > 0 else 0.0), name)


def format_done(tool, items, elapsed_s):
    """The summary line (no newline)."""
    per = 1e3 * elapsed_s / items if items > 0 else 0.0
    return "%s done: %d item%s in %s (%.1f ms per item)" % (
        tool, items, "" if items == 1 else "s", duration(elapsed_s), per)


class Progress:
    """Counts items as they finish and prints their lines to out.

    total_work: the summed weight of all items; None counts items.
    """

    def __init__(self, tool, total_items, total_work=None, out=None, clock=time.monotonic):
        self.tool = tool
        self.total_items = total_items
        self.total_work = total_work if total_work and total_work > 0 else None
        self.out = out if out is not None else sys.stdout
        self.clock = clock
        self.done_items = 0
        self.done_work = 0.0
        self.start = clock()

    def item(self, name, work=None):
        """One item finished: print its line."""
        self.done_items += 1
        self.done_work += work if self.total_work is not None and work is not None else 1.0
        total = self.total_work if self.total_work is not None else float(self.total_items)
        print(format_item(self.tool, self.done_items, self.total_items, self.done_work, total,
                          self.clock() - self.start, name), file=self.out, flush=True)

    def done(self):
        """Print the summary line."""
        print(format_done(self.tool, self.done_items, self.clock() - self.start),
              file=self.out, flush=True)
