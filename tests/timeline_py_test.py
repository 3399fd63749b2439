#!/usr/bin/env python3
"""timeline_py_test.py - bench/timeline.py on the CPU, on record files made
here in libopp_timeline.so's CSV format (bench/kernel_timeline.c): three
runs, each a 256 MiB memset then four kernels (a guard, the Hopper kernel,
a split kernel that starts before the Hopper kernel ends, a combine kernel
after a gap), with validation kernels before the first memset, a small memset
and a memcpy inside the runs and the rows shuffled. Checks the medians, the
gaps' signs, the span, --last, --runs, the name shortening, and that a file
with no flush-sized memset, or of another format, is a clear error with exit
status 1.

    python3 tests/timeline_py_test.py [bench/timeline.py]
Prints one line per check, then "all N checks ok" or "N of M checks
FAILED" (exit 1).
"""

import importlib.util
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import py_checks  # noqa: E402  (tests/py_checks.py: the report)
SCRIPT = (os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else
          os.path.join(os.path.dirname(HERE), "bench", "timeline.py"))

HEADER = ("kind,name,start_ns,end_ns,stream,grid_x,grid_y,grid_z,block_x,dyn_smem,"
          "correlation,bytes")
NS = "_INTERNAL_1a2b3c4d_15_varlen_guard_cu_0a1b2c3d"
GUARD = f"_ZN{len(NS)}{NS}17opp__guard_kernelEPKiS1_iiPv"  # nvcc's name of a static kernel
HOPPER = "_Z23hopper_attention_kernelILi1ELi128EEv20opp_hopper_params_t"
SPLIT = "_ZL19split_kv_tma_kernelILi128EEvPK6__halfi"  # internal linkage
COMBINE = "void opp::combine_kernel<64, (opp_dtype)2>(float const*, int)"
MIB = 1 << 20

# Per run: (memset end before the first kernel, [(start, end) of the four
# kernels in ns from the first kernel's start]).
RUNS = [
    (5000, [(0, 2000), (3000, 43000), (40000, 60000), (62000, 65000)]),
    (4000, [(0, 2400), (3000, 45000), (41000, 62000), (63000, 66500)]),
    (6000, [(0, 1800), (2500, 42000), (39000, 59000), (61500, 64000)]),
]


def row(kind, name, start, end, nbytes=0, grid=(0, 0, 0), block=0, smem=0, corr=0):
    if "," in name or '"' in name:
        name = '"' + name.replace('"', '""') + '"'
    return (f"{kind},{name},{start},{end},7,{grid[0]},{grid[1]},{grid[2]},{block},{smem},"
            f"{corr},{nbytes}")


def synthetic_rows():
    rows = [row("kernel", "_Z22exact_attention_kernelv", 100, 900000),  # validation
            row("memset", "memset", 900100, 900200, nbytes=4 * MIB)]
    corr = 1
    for r, (lead, ks) in enumerate(RUNS):
        t0 = 10_000_000 * (r + 1)
        rows.append(row("memset", "memset", t0 - lead - 300000, t0 - lead, nbytes=256 * MIB))
        for name, (s, e), grid, block in zip((GUARD, HOPPER, SPLIT, COMBINE), ks,
                                             ((1, 1, 1), (132, 1, 1), (528, 1, 1), (64, 8, 1)),
                                             (128, 384, 192, 256)):
            rows.append(row("kernel", name, t0 + s, t0 + e, grid=grid, block=block,
                            smem=1000 * block, corr=corr))
            corr += 1
        rows.append(row("memset", "memset", t0 + 70000, t0 + 70500, nbytes=1 * MIB))  # not a flush
    rows.append(row("memcpy", "memcpy_DtoH", 40_000_000, 40_001_000, nbytes=64))
    random.Random(1).shuffle(rows)
    return rows


def write(folder, name, lines):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run(args):
    p = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True,
                       check=False)
    return p.returncode, p.stdout, p.stderr


def table(stdout):
    """{(pos, name): [runs, start, duration, gap]} from the printed table."""
    out = {}
    for line in stdout.splitlines():
        f = line.split()
        if len(f) >= 6 and f[0].isdigit():
            out[(int(f[0]), f[1])] = f[2:6]
    return out


def name_checks(tl):
    cases = [
        (HOPPER, "hopper_attention_kernel"),
        (GUARD, "opp__guard_kernel"),
        (SPLIT, "split_kv_tma_kernel"),
        ("_ZN3opp6detail14combine_kernelILi64EEEvPKfi", "combine_kernel"),
        ("_ZNK3Foo3barEv", "bar"),
        ("_ZNSt6vector4sizeEv", "size"),
        ("_Z6simplev", "simple"),
        (COMBINE, "combine_kernel"),
        ("void hopper_attention_kernel<1, 128>(opp_hopper_params_t)", "hopper_attention_kernel"),
        ("(anonymous namespace)::decode_kernel(int)", "decode_kernel"),
        ("plain_c_kernel", "plain_c_kernel"),
        ("memcpy_DtoH", "memcpy_DtoH"),
        ("_Zbroken", "_Zbroken"),
        ("_Z99short", "_Z99short"),
    ]
    return [(f"short_name({n!r})", tl.short_name(n), want) for n, want in cases]


def summary_checks(tl, path):
    records = tl.load(path)
    runs = tl.split_runs(records, 64 * MIB)
    rows, spans, leads = tl.summarise(runs)
    got = [(r["pos"], r["name"], r["n"], round(r["start_us"], 3), round(r["dur_us"], 3),
            None if r["gap_us"] is None else round(r["gap_us"], 3)) for r in rows]
    want = [(0, "opp__guard_kernel", 3, 0.0, 2.0, None),
            (1, "hopper_attention_kernel", 3, 3.0, 40.0, 0.7),
            (2, "split_kv_tma_kernel", 3, 40.0, 20.0, -3.0),
            (3, "combine_kernel", 3, 62.0, 3.0, 2.0)]
    checks = [("runs split at the 256 MiB memsets", str(len(runs)), "3"),
              ("the validation kernel before the first flush is in no run",
               str(any(k["name"] == "_Z22exact_attention_kernelv"
                       for run in runs for k in tl.kernels(run))), "False")]
    checks += [(f"summary row {w[0]}", str(g), str(w))
               for g, w in zip(got + [None] * 4, want)]
    checks.append(("summary row count", str(len(rows)), "4"))
    signs = ["-" if r["gap_us"] is None else ("overlap" if r["gap_us"] < 0 else "gap")
             for r in rows]
    checks.append(("gap signs (split overlaps the Hopper kernel)", str(signs),
                   str(["-", "gap", "overlap", "gap"])))
    checks.append(("spans (ns)", str(sorted(spans)), str([64000, 65000, 66500])))
    checks.append(("flush end to first kernel (ns)", str(sorted(leads)),
                   str([4000, 5000, 6000])))
    return checks


def cli_checks(folder, path):
    checks = []
    rc, out, err = run([path])
    checks.append(("exit status", str(rc), "0"))
    checks.append(("nothing on stderr", err, ""))
    t = table(out)
    checks.append(("printed split row", str(t.get((2, "split_kv_tma_kernel"))),
                   str(["3", "40.00", "20.00", "-3.00"])))
    checks.append(("printed Hopper row", str(t.get((1, "hopper_attention_kernel"))),
                   str(["3", "3.00", "40.00", "0.70"])))
    checks.append(("printed guard row", str(t.get((0, "opp__guard_kernel"))),
                   str(["3", "0.00", "2.00", "-"])))
    span = [ln for ln in out.splitlines() if ln.startswith("span")]
    checks.append(("span line", str(span),
                   str(["span (first kernel start to last kernel end): median 65.00 us "
                        "(min 64.00, max 66.50)"])))
    checks.append(("lead line", str("flush memset end to first kernel start: median 5.00 us"
                                    in out), "True"))

    rc, out, _ = run([path, "--last", "2"])
    t = table(out)
    checks.append(("--last 2: guard over the last two runs", str(t.get((0, "opp__guard_kernel"))),
                   str(["2", "0.00", "2.10", "-"])))
    checks.append(("--last 2: split gap", str(t.get((2, "split_kv_tma_kernel"))),
                   str(["2", "40.00", "20.50", "-3.50"])))

    rc, out, _ = run([path, "--runs", "--last", "0"])
    heads = [ln.split(":")[0] for ln in out.splitlines() if ln.startswith("run ")]
    checks.append(("--runs headers", str(heads), str(["run 0", "run 1", "run 2"])))
    checks.append(("--runs lists the small memset and the memcpy",
                   str(out.count("memset ") >= 3 and "memcpy_DtoH" in out), "True"))

    nomemset = write(folder, "nomemset.csv", [HEADER] + [
        row("kernel", HOPPER, 1000, 2000), row("memset", "memset", 3000, 4000, nbytes=MIB)])
    rc, out, err = run([nomemset])
    checks.append(("no flush memset: exit status", str(rc), "1"))
    checks.append(("no flush memset: message",
                   str(err.startswith(f"timeline: {nomemset}: no memset of 64 MiB or more")),
                   "True"))
    checks.append(("no flush memset: nothing on stdout", out, ""))
    rc, out, err = run([nomemset, "--min-memset-mib", "1"])
    checks.append(("--min-memset-mib 1 makes the 1 MiB memset a flush", str(rc), "1"))
    checks.append(("... whose run has no kernel", str("no kernel after any memset" in err),
                   "True"))

    other = write(folder, "other.csv", ["a,b,c", "1,2,3"])
    rc, _, err = run([other])
    checks.append(("another CSV: exit status", str(rc), "1"))
    checks.append(("another CSV: message",
                   str("not a libopp_timeline.so record file" in err), "True"))
    rc, _, err = run([os.path.join(folder, "absent.csv")])
    checks.append(("absent file: exit status and message",
                   str((rc, "No such file" in err)), str((1, True))))
    rc, _, _ = run([path, "--last", "-1"])
    checks.append(("--last -1: usage error", str(rc), "2"))
    return checks


def main():
    spec = importlib.util.spec_from_file_location("timeline", SCRIPT)
    tl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tl)
    with tempfile.TemporaryDirectory() as folder:
        path = write(folder, "tl.csv", [HEADER] + synthetic_rows())
        checks = name_checks(tl) + summary_checks(tl, path) + cli_checks(folder, path)
    return py_checks.report(checks)


if __name__ == "__main__":
    sys.exit(main())
