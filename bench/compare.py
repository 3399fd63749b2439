"""compare.py - the markdown tables for bench/RESULTS.md from one device command's logs.

Reads the JSON lines of any number of log files (other lines are skipped):
  oppbench            {"workload", "impl": "exact"|"fast"|"cublas", "median_ms", "tflops", ...}
                      (the workloads and, with --sweep, the sweep_* cases)
  torch_anchors.py    {"workload", "impl": "torch_flash2_varlen"|"padded_sdpa_cudnn"|..., "ms"}
  fa2_sweep.py        {"workload": "sweep_...", "impl": "fa2", "median_ms", "tflops"}
  fa2_accuracy.py     {"workload", "impl": "accuracy", "ours_max_abs", "fa2_max_abs", ...}
and prints
  1. workloads: workload | ours FAST ms | TFLOP/s | FA2 ms | TFLOP/s |
     ours/FA2 speed | cuDNN ms | exact ms | FAST check
     (ours/FA2 speed = FA2 ms / ours ms: above 1 we are faster)
  2. accuracy (fa2_accuracy.py's tables), when its lines are given
  3. sweep, one row per case: case | ours FAST ms | TFLOP/s | FA2 ms |
     TFLOP/s | ours/FA2 speed | check; then TFLOP/s "ours / FA2" per (D,
     causal) and L, and the geometric mean of the speed ratio.
Missing numbers print as '-'. Plain Python, no torch.

  python3 compare.py LOG... [--out PATH]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import SWEEP_LENGTHS, fmt, json_lines, md_table, sweep_cases  # noqa: E402
from fa2_accuracy import tables as accuracy_tables  # noqa: E402


def speed(ours_ms, fa2_ms):
    if not ours_ms or not fa2_ms:
        return None
    return fa2_ms / ours_ms


def workload_table(ours, anchors, names):
    rows = []
    for n in names:
        f, e = ours.get((n, "fast"), {}), ours.get((n, "exact"), {})
        a = anchors.get(n, {})
        fa2 = a.get("torch_flash2_varlen", {})
        rows.append((n, fmt(f.get("median_ms"), "%.4f"), fmt(f.get("tflops"), "%.1f"),
                     fmt(fa2.get("ms"), "%.4f"), fmt(fa2.get("tflops"), "%.1f"),
                     fmt(speed(f.get("median_ms"), fa2.get("ms")), "%.2f"),
                     fmt(a.get("padded_sdpa_cudnn", {}).get("ms"), "%.4f"),
                     fmt(e.get("median_ms"), "%.3f"), f.get("validation")))
    return md_table(["workload", "ours FAST ms", "TFLOP/s", "FA2 ms", "TFLOP/s",
                     "ours/FA2 speed", "cuDNN ms", "exact ms", "FAST check"], rows)


def sweep_tables(ours, fa2):
    rows, ratios, pivot = [], [], {}
    for c in sweep_cases():
        n = c["workload"]
        o, f = ours.get((n, "fast")), fa2.get(n)
        if o is None and f is None:
            continue
        o, f = o or {}, f or {}
        r = speed(o.get("median_ms"), f.get("median_ms"))
        if r:
            ratios.append(r)
        rows.append((n, fmt(o.get("median_ms"), "%.4f"), fmt(o.get("tflops"), "%.1f"),
                     fmt(f.get("median_ms"), "%.4f"), fmt(f.get("tflops"), "%.1f"),
                     fmt(r, "%.2f"), o.get("validation") or f.get("error")))
        cell = "%s / %s" % (fmt(o.get("tflops"), "%.0f") or "-", fmt(f.get("tflops"), "%.0f") or "-")
        pivot.setdefault((c["head_size"], c["causal"]), {})[c["seqlen"]] = cell
    if not rows:
        return ""
    text = md_table(["case", "ours FAST ms", "TFLOP/s", "FA2 ms", "TFLOP/s", "ours/FA2 speed",
                     "check"], rows)
    text += "\n\nTFLOP/s, ours FAST / FA2 (16384 tokens, heads = 2048 / D, bf16):\n\n"
    text += md_table(["D", "causal"] + ["L=%d" % n for n in SWEEP_LENGTHS],
                     [(d, "yes" if causal else "no") + tuple(cells.get(n) for n in SWEEP_LENGTHS)
                      for (d, causal), cells in sorted(pivot.items())])
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        text += ("\n\nours/FA2 speed over %d cases: geometric mean %.2f, min %.2f, max %.2f"
                 % (len(ratios), geo, min(ratios), max(ratios)))
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[1:]))
    ap.add_argument("logs", nargs="+", help="log or JSON-lines files")
    ap.add_argument("--out", default=None, help="also write the tables here")
    a = ap.parse_args(sys.argv[1:] if argv is None else argv)
    missing = [p for p in a.logs if not os.path.isfile(p)]
    if missing:
        print("compare: missing input(s): %s" % ", ".join(missing), file=sys.stderr)
        return 2
    ours, anchors, fa2, accuracy, names = {}, {}, {}, [], []
    for r in json_lines(a.logs):
        n, impl = r.get("workload"), r.get("impl")
        if n is None or impl is None:
            continue
        if impl in ("exact", "fast", "cublas"):
            ours[(n, impl)] = r
            if not n.startswith("sweep_") and n not in names:
                names.append(n)
        elif impl == "fa2":
            fa2[n] = r
        elif impl == "accuracy":
            accuracy.append(r)
        else:
            anchors.setdefault(n, {})[impl] = r
    parts = []
    if names:
        parts.append("### Workloads (median ms; ours/FA2 speed = FA2 ms / ours ms)\n\n"
                     + workload_table(ours, anchors, names))
    if accuracy:
        parts.append("### Accuracy on the same inputs (max abs / RMS error vs our EXACT "
                     "output)\n\n" + accuracy_tables(accuracy))
    sweep = sweep_tables(ours, fa2)
    if sweep:
        parts.append("### Sweep (FAST vs FA2 varlen, median ms)\n\n" + sweep)
    if not parts:
        print("compare: no oppbench, anchor, accuracy or sweep lines in %s" % ", ".join(a.logs),
              file=sys.stderr)
        return 2
    text = "\n\n".join(parts)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
