"""plot.py - one PNG chart from one device command's benchmark logs.

Reads the JSON lines of any number of log files (lines that do not start
with '{' are skipped; a line that does must be a JSON object):
  oppbench            {"workload", "impl": "exact"|"fast"|"cublas", "tflops", "supported", ...}
                      (the workloads and, with --sweep, the sweep_* cases)
  torch_anchors.py    {"workload", "impl": "torch_flash2_varlen"|"padded_sdpa_cudnn"|..., "tflops"}
  fa2_sweep.py        {"workload": "sweep_d<D>_<causal|noncausal>_L<L>", "impl": "fa2", "tflops"}
(fa2_accuracy.py's lines and the decode sweep's decode_g<G>_b<B>_kv<L> cases -
GB/s, tabled by compare.py - are ignored; torch_anchors.py's {"env": {"gpu",
"torch"}} line names the device in the default title) and draws, into one
PNG, what it found:
  1. workloads: TFLOP/s per workload, ours FAST beside the FA2 varlen and
     cuDNN (padded SDPA) anchors (no bar where a number is missing: "n/a");
  2. the length sweep: TFLOP/s against sequence length L, ours FAST and FA2,
     one panel per head size D and causal / not.
TFLOP/s is each tool's own "tflops" (useful FLOPs / median time, DESIGN.md
section 7). --title names the run (device, date, commit) in the chart;
without it the title is the anchors' GPU and torch version.

A line with a "source" member is a figure transcribed by hand (e.g. from
RESULTS.md's tables: charts/h200_2026-12-03.jsonl), not a tool's output:
the title then says so, and --run-only refuses such a line (exit 2), for
charts that must come from a run's own JSON lines (the README's chart:
bench/README.md, "The README's chart").

  python3 plot.py LOG... --out chart.png [--title "H200, 2026-12-03, commit abc1234"]
                  [--run-only]

Exit status: 0 chart written; 2 bad input (a missing file, a malformed JSON
line or field, nothing to plot, a transcribed line with --run-only), with
FILE:LINE in the message; 3 matplotlib is not importable (Debian
python3-matplotlib, or pip install matplotlib).
"""
import argparse
import json
import math
import os
import re
import sys

SWEEP_NAME = re.compile(r"^sweep_d(\d+)_(causal|noncausal)_L(\d+)$")
DECODE_NAME = re.compile(r"^decode_g\d+_b\d+_kv\d+$")  # oppbench --decode-sweep
OURS_IMPLS = ("exact", "fast", "cublas")
# The bars of the workload chart: (where the number comes from, legend label).
WORKLOAD_BARS = (("fast", "ours FAST"), ("torch_flash2_varlen", "FA2 varlen"),
                 ("padded_sdpa_cudnn", "cuDNN (padded SDPA)"))
COLORS = {"fast": "#1f77b4", "torch_flash2_varlen": "#ff7f0e", "padded_sdpa_cudnn": "#2ca02c",
          "fa2": "#ff7f0e"}


class InputError(Exception):
    """Bad input: the message names FILE:LINE where it can."""


def _tflops(obj, where):
    """The row's "tflops": a finite number >= 0, or None (null / absent)."""
    v = obj.get("tflops")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise InputError("%s: \"tflops\" must be a number >= 0 or null, not %r" % (where, v))
    return float(v)


def read_logs(paths, run_only=False):
    """The rows to plot: {"workloads": {name: {impl: tflops|None}}, "order": [names],
    "sweep": {(D, causal): {impl: {L: tflops}}}, "unsupported": {names},
    "env": the first {"env": {...}} object or None, "transcribed": [FILE:LINE of
    each line with a "source"]}. run_only: a transcribed line is an InputError."""
    data = {"workloads": {}, "order": [], "sweep": {}, "unsupported": set(), "env": None,
            "transcribed": []}
    for path in paths:
        if not os.path.isfile(path):
            raise InputError("%s: no such file" % path)
        with open(path, errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                where = "%s:%d" % (path, lineno)
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise InputError("%s: not a JSON object (%s)" % (where, e)) from None
                if not isinstance(obj, dict):
                    raise InputError("%s: not a JSON object" % where)
                if isinstance(obj.get("env"), dict) and data["env"] is None:
                    data["env"] = obj["env"]
                if "source" in obj:
                    if run_only:
                        raise InputError("%s: a transcribed figure (\"source\": %r), not a "
                                         "tool's output; --run-only draws a run's own JSON "
                                         "lines only" % (where, obj["source"]))
                    data["transcribed"].append(where)
                _add_row(data, obj, where)
    if not data["order"] and not data["sweep"]:
        raise InputError("no oppbench, torch_anchors.py or fa2_sweep.py lines with a workload "
                         "in %s" % ", ".join(paths))
    return data


def _add_row(data, obj, where):
    name, impl = obj.get("workload"), obj.get("impl")
    if name is None and impl is None:
        return  # torch_anchors.py's {"env": ...} line and the like
    if not isinstance(name, str) or not name or not isinstance(impl, str) or not impl:
        raise InputError("%s: \"workload\" and \"impl\" must be non-empty strings" % where)
    if impl == "accuracy" or DECODE_NAME.match(name):
        return  # fa2_accuracy.py: not a speed; the decode sweep: GB/s, in compare.py's table
    tflops = _tflops(obj, where)
    if name.startswith("sweep_"):
        m = SWEEP_NAME.match(name)
        if m is None:
            raise InputError("%s: sweep case name %r is not sweep_d<D>_<causal|noncausal>_L<L>"
                             % (where, name))
        if impl not in ("fast", "fa2"):
            return
        key = (int(m.group(1)), m.group(2) == "causal")
        if tflops is not None:
            data["sweep"].setdefault(key, {}).setdefault(impl, {})[int(m.group(3))] = tflops
        return
    if name not in data["workloads"]:
        data["workloads"][name] = {}
        data["order"].append(name)
    data["workloads"][name][impl] = tflops
    if impl == "fast" and obj.get("supported") is False:
        data["unsupported"].add(name)


def draw(data, out, title):
    """Writes the chart to out (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep_keys = sorted(data["sweep"])
    head_sizes = sorted({d for d, _ in sweep_keys})
    n_rows = (1 if data["order"] else 0) + (2 if sweep_keys else 0)
    n_cols = max(1, len(head_sizes))
    height = 4.6 * n_rows + 0.6
    fig = plt.figure(figsize=(max(12, 4.5 * n_cols), height))
    grid = fig.add_gridspec(n_rows, n_cols, hspace=0.55, wspace=0.25, top=1 - 0.7 / height)
    row = 0
    if data["order"]:
        _workload_bars(fig.add_subplot(grid[0, :]), data)
        row = 1
    for (d, causal) in sweep_keys:
        ax = fig.add_subplot(grid[row + (1 if causal else 0), head_sizes.index(d)])
        _sweep_panel(ax, d, causal, data["sweep"][(d, causal)])
    fig.suptitle("liboppacked benchmark" + (" - " + title if title else ""), fontsize=12,
                 y=1 - 0.15 / height)
    fig.savefig(out, dpi=90, bbox_inches="tight")
    plt.close(fig)


def _workload_bars(ax, data):
    names = data["order"]
    width = 0.8 / len(WORKLOAD_BARS)
    top = max([v for w in data["workloads"].values() for v in w.values() if v is not None] or [1])
    for k, (impl, label) in enumerate(WORKLOAD_BARS):
        for i, n in enumerate(names):
            x = i - 0.4 + width * (k + 0.5)
            v = data["workloads"][n].get(impl)
            if v is None:
                why = "no FAST\nkernel" if impl == "fast" and n in data["unsupported"] else "n/a"
                ax.text(x, top * 0.01, why, ha="center", va="bottom", fontsize=7, rotation=90,
                        color="gray")
                continue
            ax.bar(x, v, width, color=COLORS[impl])
            ax.text(x, v, "%.0f" % v, ha="center", va="bottom", fontsize=7)
    from matplotlib.patches import Patch
    handles = [Patch(color=COLORS[impl], label=label) for impl, label in WORKLOAD_BARS]
    ax.legend(handles=handles, loc="upper right", fontsize=8)
    ax.set_xticks(range(len(names)))
    ax.set_xlim(-0.5, len(names) - 0.5)  # also where the last workloads have no bar
    ax.set_xticklabels(names, rotation=15, ha="right", fontsize=8)
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, top * 1.15)
    ax.set_title("TFLOP/s per workload (useful FLOPs / median time)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def _sweep_panel(ax, d, causal, series):
    for impl, label in (("fast", "ours FAST"), ("fa2", "FA2 varlen")):
        pts = sorted(series.get(impl, {}).items())
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                    color=COLORS[impl], label=label)
    ax.set_xscale("log", base=2)
    lengths = sorted({n for s in series.values() for n in s})
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(n) for n in lengths], rotation=45, fontsize=7)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("sequence length L (16384 tokens per case)", fontsize=8)
    ax.set_ylabel("TFLOP/s", fontsize=8)
    ax.set_title("sweep: D=%d, %s" % (d, "causal" if causal else "non-causal"), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[1:]))
    ap.add_argument("logs", nargs="+", help="log or JSON-lines files")
    ap.add_argument("--out", required=True, help="the PNG to write")
    ap.add_argument("--title", default="",
                    help="names the run: device, date, commit (default: the anchors' GPU)")
    ap.add_argument("--run-only", action="store_true",
                    help="refuse transcribed lines (a \"source\" member): a run's JSON only")
    a = ap.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        data = read_logs(a.logs, run_only=a.run_only)
    except InputError as e:
        print("plot: %s" % e, file=sys.stderr)
        return 2
    try:
        import matplotlib
        del matplotlib  # imported again, with the Agg backend, by draw()
    except ImportError:
        print("plot: matplotlib is not importable by %s (Debian python3-matplotlib, or pip "
              "install matplotlib); no chart written" % sys.executable, file=sys.stderr)
        return 3
    title = chart_title(data, a.title)
    draw(data, a.out, title)
    n_sweep = sum(len(s) for v in data["sweep"].values() for s in v.values())
    print("plot: %s: %d workloads, %d sweep points; title: %s"
          % (a.out, len(data["order"]), n_sweep, title or "(none)"))
    return 0


def chart_title(data, title):
    """--title, else the anchors' GPU and torch version; marked when any
    figure was transcribed rather than read from a tool's output."""
    env = data["env"] or {}
    if not title and env.get("gpu"):
        title = "%s%s" % (env["gpu"], ", torch %s" % env["torch"] if env.get("torch") else "")
    if data["transcribed"]:
        title += "%s%d figures transcribed from tables, not a run's JSON lines" % (
            " - " if title else "", len(data["transcribed"]))
    return title


if __name__ == "__main__":
    sys.exit(main())
