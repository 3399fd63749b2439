#!/usr/bin/env python3
"""timeline.py - the kernel timeline of one library call, from the CSV that
libopp_timeline.so (bench/kernel_timeline.c, a CUPTI injection library) writes
at exit: each kernel's start, duration and gap to the kernel before it, as
medians over oppbench's timed runs. Python 3, standard library only; no GPU.

    python3 bench/timeline.py tl.csv [--last 20] [--min-memset-mib 64] [--runs]

Runs: oppbench times each call after an L2-flush cudaMemsetAsync of 256 MiB
or more (bench/gpu_common.c), so a run is the records from one memset of at
least --min-memset-mib MiB up to the next one (the last run: up to the end of
the file); records before the first such memset (the validation runs) are no
run, and a run with no kernel is dropped. The last --last runs (0: all) are
summarised: one row per kernel position in the run (kernels ordered by start
time) and short name, with the number of runs that have that kernel there,
the median start offset from the run's first kernel start, the median
duration and the median gap from the previous kernel's end to this kernel's
start (negative: the two overlap, e.g. a programmatic dependent launch), all
in microseconds; then the median span (first kernel start to last kernel end)
and the median time from the flush memset's end to the first kernel's start.
--runs also prints each summarised run's records (small memsets and memcpys
included). Every kind of record counts, on every stream: run one workload
(oppbench --only NAME) for a clean picture.

Names are shortened: mangled _Z23hopper_attention_kernelILi1E... ->
hopper_attention_kernel; _ZN...: the last component before template
arguments (I) or the end (E), so nvcc's _INTERNAL_... namespaces of static
kernels drop out; a demangled name loses its return type, template
arguments, parameters and namespaces.

Exit status: 0, 1 on an unreadable or unsplittable file (the message says
why), 2 on bad options.
"""
import argparse
import csv
import statistics
import sys

COLUMNS = ["kind", "name", "start_ns", "end_ns", "stream", "grid_x", "grid_y", "grid_z",
           "block_x", "dyn_smem", "correlation", "bytes"]
INTS = COLUMNS[2:]


class TimelineError(Exception):
    """A record file this script cannot summarise; the message says why."""


def _mangled_short(name):
    """The function's identifier in an Itanium-mangled name (_Z...), or None."""
    i = 2
    if name[i:i + 1] == "L":  # internal linkage
        i += 1
    nested = name[i:i + 1] == "N"
    if nested:
        i += 1
        while name[i:i + 1] in ("r", "V", "K", "R", "O"):
            i += 1
    last = None
    while i < len(name):
        if name[i].isdigit():
            j = i
            while j < len(name) and name[j].isdigit():
                j += 1
            n = int(name[i:j])
            if n == 0 or j + n > len(name):
                return last
            last = name[j:j + n]
            i = j + n
            if not nested:
                break
        elif nested and name.startswith("St", i):
            i += 2
        elif nested and name[i] == "L":
            i += 1
        else:
            break  # I (template arguments), E (end of the nested name), anything else
    return last


def _demangled_short(name):
    """The identifier of a demangled or plain name: no return type, template
    arguments, parameters or namespaces."""
    depth, kept = 0, []
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            kept.append(ch)
    words = "".join(kept).split()
    if not words:
        return name
    last = words[-1].split("::")[-1]
    return last or name


def short_name(name):
    """hopper_attention_kernel for _Z23hopper_attention_kernelILi1E..., for
    _ZN..6detail23hopper_attention_kernelI..E.. and for
    void opp::hopper_attention_kernel<1>(params); other names unchanged."""
    if name.startswith("_Z"):
        return _mangled_short(name) or name
    return _demangled_short(name)


def load(path):
    """The records of a libopp_timeline.so CSV file as dicts (ints for the
    numeric columns), sorted by start time."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise TimelineError(f"{path}: {e.strerror}") from e
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise TimelineError(f"{path}: not a libopp_timeline.so record file "
                                f"(no column {', '.join(missing)})")
        records = []
        for row in reader:
            try:
                r = {c: int(row[c]) for c in INTS}
            except (TypeError, ValueError) as e:
                raise TimelineError(f"{path}:{reader.line_num}: malformed record") from e
            r["kind"], r["name"] = row["kind"], row["name"]
            records.append(r)
    records.sort(key=lambda r: (r["start_ns"], r["end_ns"]))
    return records


def is_flush(r, min_bytes):
    return r["kind"] == "memset" and r["bytes"] >= min_bytes


def split_runs(records, min_bytes, source="records"):
    """Runs: {"flush": the memset, "records": what follows it up to the next
    flush}, each with at least one kernel. Raises TimelineError without a
    flush-sized memset."""
    runs, cur = [], None
    for r in records:
        if is_flush(r, min_bytes):
            cur = {"flush": r, "records": []}
            runs.append(cur)
        elif cur is not None:
            cur["records"].append(r)
    if not runs:
        n = sum(1 for r in records if r["kind"] == "memset")
        raise TimelineError(
            f"{source}: no memset of {min_bytes / 1048576:g} MiB or more among "
            f"{len(records)} records ({n} smaller memsets): cannot split the file into runs "
            "(oppbench flushes L2 with a >= 256 MiB memset before each timed call; was "
            "memset tracing enabled? see --min-memset-mib)")
    return [run for run in runs if kernels(run)]


def kernels(run):
    return [r for r in run["records"] if r["kind"] == "kernel"]


def summarise(runs):
    """(rows, span_ns, lead_ns): rows keyed by (position, short name), each
    {"pos", "name", "n", "start_us", "dur_us", "gap_us" (None at position 0),
    "grid", "block_x", "dyn_smem"} with medians; the runs' spans and flush-end
    to first-kernel times."""
    groups, spans, leads = {}, [], []
    for run in runs:
        ks = kernels(run)
        t0 = ks[0]["start_ns"]
        spans.append(max(k["end_ns"] for k in ks) - t0)
        leads.append(t0 - run["flush"]["end_ns"])
        for i, k in enumerate(ks):
            g = groups.setdefault((i, short_name(k["name"])),
                                  {"start": [], "dur": [], "gap": [], "first": k})
            g["start"].append(k["start_ns"] - t0)
            g["dur"].append(k["end_ns"] - k["start_ns"])
            if i > 0:
                g["gap"].append(k["start_ns"] - ks[i - 1]["end_ns"])
    rows = []
    for (pos, name), g in groups.items():
        k = g["first"]
        rows.append({
            "pos": pos, "name": name, "n": len(g["dur"]),
            "start_us": statistics.median(g["start"]) / 1e3,
            "dur_us": statistics.median(g["dur"]) / 1e3,
            "gap_us": statistics.median(g["gap"]) / 1e3 if g["gap"] else None,
            "grid": f'{k["grid_x"]}x{k["grid_y"]}x{k["grid_z"]}',
            "block_x": k["block_x"], "dyn_smem": k["dyn_smem"],
        })
    rows.sort(key=lambda r: (r["pos"], -r["n"], r["name"]))
    return rows, spans, leads


def us(ns):
    return f"{ns / 1e3:.2f}"


def print_runs(runs, first_index, out):
    for i, run in enumerate(runs):
        ks = kernels(run)
        t0 = ks[0]["start_ns"]
        print(f"run {first_index + i}: flush memset {run['flush']['bytes'] / 1048576:g} MiB "
              f"ends {us(t0 - run['flush']['end_ns'])} us before the first kernel", file=out)
        prev_end = None
        for r in run["records"]:
            gap = "-" if prev_end is None else us(r["start_ns"] - prev_end)
            size = f" {r['bytes']} B" if r["kind"] != "kernel" else (
                f" grid {r['grid_x']}x{r['grid_y']}x{r['grid_z']} block {r['block_x']}"
                f" smem {r['dyn_smem']}")
            print(f"  {r['kind']:<6} {short_name(r['name']):<32} start {us(r['start_ns'] - t0):>9}"
                  f"  dur {us(r['end_ns'] - r['start_ns']):>9}  gap {gap:>9}  stream "
                  f"{r['stream']}{size}", file=out)
            if r["kind"] == "kernel":
                prev_end = r["end_ns"]


def report(path, args, out=sys.stdout):
    records = load(path)
    runs = split_runs(records, args.min_memset_mib * 1048576, path)
    if not runs:
        raise TimelineError(f"{path}: no kernel after any memset of {args.min_memset_mib:g} "
                            "MiB or more")
    chosen = runs[-args.last:] if args.last > 0 else runs
    first_index = len(runs) - len(chosen)
    if args.runs:
        print_runs(chosen, first_index, out)
        print(file=out)
    rows, spans, leads = summarise(chosen)
    which = (f"all {len(runs)}" if len(chosen) == len(runs) else
             f"the last {len(chosen)} of {len(runs)}")
    print(f"timeline: {path}: {which} runs (each after a memset of >= "
          f"{args.min_memset_mib:g} MiB); medians in us; gap < 0: overlap", file=out)
    w = max([len("kernel")] + [len(r["name"]) for r in rows])
    print(f"{'pos':>3}  {'kernel':<{w}}  {'runs':>4}  {'start':>9}  {'duration':>9}  {'gap':>9}"
          f"  {'grid':>11}  {'block':>5}  {'dyn_smem':>8}", file=out)
    for r in rows:
        gap = "-" if r["gap_us"] is None else f"{r['gap_us']:.2f}"
        print(f"{r['pos']:>3}  {r['name']:<{w}}  {r['n']:>4}  {r['start_us']:>9.2f}  "
              f"{r['dur_us']:>9.2f}  {gap:>9}  {r['grid']:>11}  {r['block_x']:>5}  "
              f"{r['dyn_smem']:>8}", file=out)
    seqs = {tuple(short_name(k["name"]) for k in kernels(run)) for run in chosen}
    if len(seqs) > 1:
        print(f"note: the runs hold {len(seqs)} different kernel sequences; 'runs' counts "
              "those with that kernel at that position", file=out)
    print(f"span (first kernel start to last kernel end): median {us(statistics.median(spans))}"
          f" us (min {us(min(spans))}, max {us(max(spans))})", file=out)
    print(f"flush memset end to first kernel start: median {us(statistics.median(leads))} us",
          file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Summarise a libopp_timeline.so CSV: kernel starts, durations and gaps "
        "per oppbench timed run (see the top of this file).")
    ap.add_argument("csv", help="the file OPP_TIMELINE named")
    ap.add_argument("--last", type=int, default=20, metavar="N",
                    help="summarise the last N runs (0: all; default 20)")
    ap.add_argument("--min-memset-mib", type=float, default=64, metavar="MIB",
                    help="a memset of at least this many MiB starts a run (default 64)")
    ap.add_argument("--runs", action="store_true",
                    help="also print each summarised run's records")
    args = ap.parse_args(argv)
    if args.last < 0:
        ap.error("--last must be >= 0")
    if args.min_memset_mib <= 0:
        ap.error("--min-memset-mib must be > 0")
    try:
        report(args.csv, args)
    except TimelineError as e:
        print(f"timeline: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
