"""compare.py - the markdown tables for bench/RESULTS.md from one device command's logs.

Reads the JSON lines of any number of log files (other lines are skipped):
  oppbench            {"workload", "impl": "exact"|"fast"|"cublas", "median_ms", "tflops", ...}
                      (the workloads and, with --sweep, the sweep_* cases)
  torch_anchors.py    {"workload", "impl": "torch_flash2_varlen"|"padded_sdpa_cudnn"|..., "ms"}
  fa2_sweep.py        {"workload": "sweep_...", "impl": "fa2", "median_ms", "tflops"}
                      (with --decode the decode_* cases, with "gbps", "bw_fraction")
  fa2_accuracy.py     {"workload", "impl": "accuracy", "ours_max_abs", "fa2_max_abs", ...}
and prints
  1. workloads: workload | ours FAST ms | TFLOP/s | FA2 ms | TFLOP/s |
     ours/FA2 speed | cuDNN ms | exact ms | FAST check
     (ours/FA2 speed = FA2 ms / ours ms: above 1 we are faster)
  2. accuracy (fa2_accuracy.py's tables), when its lines are given
  3. sweep, one row per case: case | ours FAST ms | TFLOP/s | FA2 ms |
     TFLOP/s | ours/FA2 speed | check; then TFLOP/s "ours / FA2" per (D,
     causal) and L, and the geometric mean of the speed ratio.
  4. decode sweep (oppbench --decode-sweep, fa2_sweep.py --decode), one row
     per case: case | ours FAST ms | GB/s | of copy BW | FA2 ms | GB/s | of
     copy BW | ours/FA2 speed | check; then GB/s "ours / FA2" per (G,
     batch) and L_kv, and the geometric mean of the speed ratio. Each
     side's fraction is of the copy bandwidth measured in its own process.
Missing numbers print as '-'. Plain Python, no torch.

  python3 compare.py LOG... [--out PATH]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import (DECODE_LENGTHS, SWEEP_LENGTHS, decode_cases, fmt,  # noqa: E402
                          json_lines, md_table, sweep_cases)
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


def pct(x):
    return fmt(None if x is None else 100.0 * x, "%.1f%%")


def decode_tables(ours, fa2):
    rows, ratios, pivot, bw = [], [], {}, {}
    for c in decode_cases():
        n = c["workload"]
        o, f = ours.get((n, "fast")), fa2.get(n)
        if c["skipped"] or (o is None and f is None):
            continue
        o, f = o or {}, f or {}
        for side, row in (("ours", o), ("FA2", f)):
            if row.get("bw_gbps") is not None:
                bw.setdefault(side, row["bw_gbps"])
        r = speed(o.get("median_ms"), f.get("median_ms"))
        if r:
            ratios.append(r)
        rows.append((n, fmt(o.get("median_ms"), "%.4f"), fmt(o.get("gbps"), "%.0f"),
                     pct(o.get("bw_fraction")), fmt(f.get("median_ms"), "%.4f"),
                     fmt(f.get("gbps"), "%.0f"), pct(f.get("bw_fraction")), fmt(r, "%.2f"),
                     o.get("validation") or f.get("error")))
        cell = "%s / %s" % (fmt(o.get("gbps"), "%.0f") or "-", fmt(f.get("gbps"), "%.0f") or "-")
        pivot.setdefault((c["group"], c["batch"]), {})[c["seqlen"]] = cell
    if not rows:
        return ""
    text = md_table(["case", "ours FAST ms", "GB/s", "of copy BW", "FA2 ms", "GB/s",
                     "of copy BW", "ours/FA2 speed", "check"], rows)
    text += ("\n\nGB/s = (K + V read + Q read + out written) / median ms; copy bandwidth "
             "(device-to-device copy, read + write, measured in each process): ours %s GB/s, "
             "FA2 %s GB/s" % (fmt(bw.get("ours"), "%.0f") or "-",
                              fmt(bw.get("FA2"), "%.0f") or "-"))
    text += "\n\nGB/s, ours FAST / FA2 (bf16, D 128, 8 KV heads, heads = 8 G, one query):\n\n"
    text += md_table(["G", "batch"] + ["L_kv=%d" % n for n in DECODE_LENGTHS],
                     [(g, b) + tuple(cells.get(n) for n in DECODE_LENGTHS)
                      for (g, b), cells in sorted(pivot.items())])
    skipped = [c["workload"] for c in decode_cases() if c["skipped"]]
    text += "\n\nskipped (K + V > 16 GiB): " + ", ".join(skipped)
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        text += ("\n\nours/FA2 speed over %d decode cases: geometric mean %.2f, min %.2f, max %.2f"
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
    decode_names = {c["workload"] for c in decode_cases()}
    for r in json_lines(a.logs):
        n, impl = r.get("workload"), r.get("impl")
        if n is None or impl is None:
            continue
        if impl in ("exact", "fast", "cublas"):
            ours[(n, impl)] = r
            if not n.startswith("sweep_") and n not in decode_names and n not in names:
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
    decode = decode_tables(ours, fa2)
    if decode:
        parts.append("### Decode sweep (FAST vs FA2 varlen, median ms, GB/s)\n\n" + decode)
    if not parts:
        print("compare: no oppbench, anchor, accuracy, sweep or decode lines in %s"
              % ", ".join(a.logs),
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
