"""fa2_sweep.py - FlashAttention-2 (PyTorch's varlen kernel) on oppbench --sweep's cases,
or with --decode on oppbench --decode-sweep's.

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

--decode: the decode sweep of bench/decode_sweep.c - bf16, D = 128, 8 KV
heads, heads = 8 G for G in {1, 4, 8}, batch 1, 8, 64, 256 sequences of one
query against L_kv = 1024 .. 131072 keys, the 9 combinations whose K + V
exceed 16 GiB skipped - called as
  torch.ops.aten._flash_attention_forward(q, k, v, cu_q, cu_kv, 1, L_kv, 0.0,
                                          False, False, scale=1/sqrt(128))
First a device-to-device copy of min(4 GiB, free / 4) is timed the same way
(read + write counted, median of 10): {"bandwidth": {...}}. Each case's line
adds "bytes" (K + V read, Q read, out written), "gbps" (bytes / median),
"bw_gbps" (that copy bandwidth) and "bw_fraction"; its check is no NaN/inf
and the first and last sequence within bench/accuracy.h's bound (0.05 max|ref|
+ 1e-3) of a float32 torch softmax(q k^T s) v.

  python3 fa2_sweep.py [--decode] --list   the cases as oppbench [--decode-]sweep
                                           --list --json writes them (no torch)
  python3 fa2_sweep.py [--decode] [--only NAMES] [--reps N] [--warmup N] [--json PATH]
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import (cuda_median_ms, decode_cases, list_line, md_table, select,  # noqa: E402
                          skipped_line, sweep_cases)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[1:]))
    ap.add_argument("--list", action="store_true", help="print the cases as JSON lines and exit")
    ap.add_argument("--decode", action="store_true", help="the decode sweep's cases")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--reps", type=int, default=30, help="timed runs (>= 20; default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed runs (default 5)")
    ap.add_argument("--json", default=None, help="also write the JSON lines here")
    a = ap.parse_args(argv)
    if a.reps < 20 or a.warmup < 1:
        ap.error("--reps must be >= 20 and --warmup >= 1")
    return a


def fmt_pct(x):
    return None if x is None else "%.1f%%" % (100.0 * x)


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


def copy_bandwidth():
    """GB/s of a device-to-device copy of min(4 GiB, free / 4) bytes, read +
    write counted, as oppbench --decode-sweep measures it."""
    import torch
    free = torch.cuda.mem_get_info()[0]
    nbytes = 4 << 30
    while nbytes > free // 4 and nbytes > 64 << 20:
        nbytes //= 2
    src = torch.full((nbytes,), 0x3C, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    median, low = cuda_median_ms(lambda: dst.copy_(src), 10, 2)
    del src, dst
    torch.cuda.empty_cache()
    return dict(method="torch copy_ device to device, read + write counted", bytes=2 * nbytes,
                median_ms=round(median, 5), min_ms=round(low, 5),
                gbps=round(2 * nbytes / (median * 1e-3) / 1e9, 1), reps=10)


def decode_check(out, q, k, v, c, scale):
    """Max abs error of FA2's rows of the first and last sequence against a
    float32 softmax(q k^T scale) v, and whether it is within bench/accuracy.h's
    bound (0.05 max |ref| + 1e-3)."""
    import torch
    hk, length, worst, ok = c["kv_heads"], c["seqlen"], 0.0, True
    for b in sorted({0, c["batch"] - 1}):
        qb = q[b].float().view(hk, -1, q.shape[-1])  # [Hkv, G, D]: head h reads KV head h // G
        kb = k[b * length:(b + 1) * length].float()  # [L, Hkv, D]
        vb = v[b * length:(b + 1) * length].float()
        p = torch.softmax(torch.einsum("kgd,lkd->kgl", qb, kb) * scale, dim=-1)
        ref = torch.einsum("kgl,lkd->kgd", p, vb).reshape(out[b].shape)
        err = (out[b].float() - ref).abs().max().item()
        worst = max(worst, err)
        ok = ok and err <= 0.05 * ref.abs().max().item() + 1e-3
    return worst, ok


def run_decode_case(c, reps, warmup, bw):
    import torch
    b, h, hk, d, length = c["batch"], c["heads"], c["kv_heads"], c["head_size"], c["seqlen"]
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, h, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k, v = (torch.randn(b * length, hk, d, device="cuda", dtype=torch.bfloat16, generator=g)
            for _ in range(2))
    cu_q = torch.arange(0, b + 1, device="cuda", dtype=torch.int32)
    cu_kv = torch.arange(0, b * length + 1, length, device="cuda", dtype=torch.int32)
    scale = 1.0 / math.sqrt(d)

    def fa2():
        return torch.ops.aten._flash_attention_forward(
            q, k, v, cu_q, cu_kv, 1, length, 0.0, False, False, scale=scale)[0]

    out = fa2()
    finite = bool(torch.isfinite(out).all())
    err, close = decode_check(out, q, k, v, c, scale) if finite else (None, False)
    del out
    median, low = cuda_median_ms(fa2, reps, warmup)
    del q, k, v
    torch.cuda.empty_cache()
    gbps = c["bytes"] / (median * 1e-3) / 1e9
    if not finite:
        check = "FAILED: NaN/inf in the output"
    elif not close:
        check = "FAILED: max abs %.3g vs float32 torch (sequences 0, %d)" % (err, b - 1)
    else:
        check = "ok: no NaN/inf; max abs %.3g vs float32 torch (sequences 0, %d)" % (err, b - 1)
    return dict(workload=c["workload"], impl="fa2", median_ms=round(median, 5),
                min_ms=round(low, 5), tflops=round(c["flops"] / (median * 1e-3) / 1e12, 3),
                flops=c["flops"], reps=reps, validated=finite and close,
                kernel="aten._flash_attention_forward", bytes=c["bytes"],
                gbps=round(gbps, 1), bw_gbps=bw, bw_fraction=round(gbps / bw, 4),
                validation=check)


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    every = decode_cases() if a.decode else sweep_cases()
    cases = select([c for c in every if not c.get("skipped")], a.only)
    if a.list:
        for c in cases:
            print(json.dumps(list_line(c), separators=(",", ":")))
        for c in every if not a.only else []:
            if c.get("skipped"):
                print(json.dumps(skipped_line(c), separators=(",", ":")))
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
                  "script": "fa2_sweep.py" + (" --decode" if a.decode else "")}})
    bw = None
    if a.decode:
        band = copy_bandwidth()
        emit({"bandwidth": band})
        bw = band["gbps"]
        for c in every:
            if c["skipped"] and not a.only:
                print("skipped: %s (K + V %.1f GiB > the 16 GiB cap)"
                      % (c["workload"], c["kv_bytes"] / 2.0**30))
    rows, failed = [], 0
    for c in cases:
        try:
            r = run_decode_case(c, a.reps, a.warmup, bw) if a.decode else run_case(
                c, a.reps, a.warmup)
        except Exception as e:  # FA2 refusing a shape says why; the others still run
            r = dict(workload=c["workload"], impl="fa2", flops=c["flops"],
                     error=str(e).splitlines()[0][:160] if str(e) else type(e).__name__)
        failed += not r.get("validated", False)
        emit(r)
        rows.append((r["workload"], r.get("median_ms"), r.get("gbps" if a.decode else "tflops"))
                    + ((fmt_pct(r.get("bw_fraction")),) if a.decode else ())
                    + (r.get("validation", r.get("error")),))
    print()
    if a.decode:
        print(md_table(["case", "FA2 ms (median)", "FA2 GB/s", "of copy BW", "check"], rows))
        print("\nGB/s counts K + V read, Q read and out written once; copy bandwidth %s GB/s"
              % bw)
    else:
        print(md_table(["case", "FA2 ms (median)", "FA2 TFLOP/s", "check"], rows))
    print("\n%d cases, %d failed or refused" % (len(cases), failed))
    if out:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
