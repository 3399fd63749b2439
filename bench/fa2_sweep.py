"""fa2_sweep.py - FlashAttention-2 (PyTorch's varlen kernel) on oppbench --sweep's cases.

The cases are bench/sweep.c's (FlashAttention's benchmark shapes): bf16, 16384
tokens per case, batch = 16384 / L sequences of L queries and L keys, heads =
kv_heads = 2048 / D, D in {64, 128, 256}, causal and not. Each case runs
  torch.ops.aten._flash_attention_forward(q, k, v, cu, cu, L, L, 0.0, causal,
                                          False, scale=1/sqrt(D))
(the call of ../shared/bench/torch_anchors.py) on random inputs, timed as
oppbench times: --warmup runs, then --reps runs (default 30, at least 20) with
CUDA events, each after an L2 flush outside the events; median and min.
FLOPs = 4 * sum_b attended_pairs_b * heads * D (causal: visible pairs only).

Prints one JSON line per case with oppbench's sweep fields:
  {"workload": "sweep_d128_causal_L4096", "impl": "fa2", "median_ms": ...,
   "min_ms": ..., "tflops": ..., "flops": ..., "reps": 30, "validated": true,
   "kernel": "aten._flash_attention_forward", "validation": "ok: no NaN/inf"}
("error" instead of the timings when FA2 refused the case), then a table.

  python3 fa2_sweep.py --list          the cases as oppbench --sweep --list --json
                                       writes them (no torch needed)
  python3 fa2_sweep.py [--only NAMES] [--reps N] [--warmup N] [--json PATH]
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import cuda_median_ms, list_line, md_table, select, sweep_cases  # noqa: E402


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[1:]))
    ap.add_argument("--list", action="store_true", help="print the cases as JSON lines and exit")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--reps", type=int, default=30, help="timed runs (>= 20; default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed runs (default 5)")
    ap.add_argument("--json", default=None, help="also write the JSON lines here")
    a = ap.parse_args(argv)
    if a.reps < 20 or a.warmup < 1:
        ap.error("--reps must be >= 20 and --warmup >= 1")
    return a


def run_case(c, reps, warmup):
    import torch
    n, h, d, length = c["batch"] * c["seqlen"], c["heads"], c["head_size"], c["seqlen"]
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(n, h, d, device="cuda", dtype=torch.bfloat16, generator=g)
               for _ in range(3))
    cu = torch.arange(0, n + 1, length, device="cuda", dtype=torch.int32)
    scale = 1.0 / math.sqrt(d)

    def fa2():
        return torch.ops.aten._flash_attention_forward(
            q, k, v, cu, cu, length, length, 0.0, c["causal"], False, scale=scale)[0]

    finite = bool(torch.isfinite(fa2()).all())
    median, low = cuda_median_ms(fa2, reps, warmup)
    del q, k, v
    torch.cuda.empty_cache()
    return dict(workload=c["workload"], impl="fa2", median_ms=round(median, 5),
                min_ms=round(low, 5), tflops=round(c["flops"] / (median * 1e-3) / 1e12, 3),
                flops=c["flops"], reps=reps, validated=finite,
                kernel="aten._flash_attention_forward",
                validation="ok: no NaN/inf" if finite else "FAILED: NaN/inf in the output")


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    cases = select(sweep_cases(), a.only)
    if a.list:
        for c in cases:
            print(json.dumps(list_line(c), separators=(",", ":")))
        return 0
    import torch
    out = open(a.json, "w") if a.json else None

    def emit(obj):
        line = json.dumps(obj, separators=(",", ":"))
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    emit({"env": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                  "script": "fa2_sweep.py"}})
    rows, failed = [], 0
    for c in cases:
        try:
            r = run_case(c, a.reps, a.warmup)
        except Exception as e:  # FA2 refusing a shape says why; the others still run
            r = dict(workload=c["workload"], impl="fa2", flops=c["flops"],
                     error=str(e).splitlines()[0][:160] if str(e) else type(e).__name__)
        failed += not r.get("validated", False)
        emit(r)
        rows.append((r["workload"], r.get("median_ms"), r.get("tflops"),
                     r.get("validation", r.get("error"))))
    print()
    print(md_table(["case", "FA2 ms (median)", "FA2 TFLOP/s", "check"], rows))
    print("\n%d cases, %d failed or refused" % (len(cases), failed))
    if out:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
