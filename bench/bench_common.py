"""bench_common.py - what bench/fa2_sweep.py, fa2_accuracy.py and compare.py share.

Plain Python (no torch at import time, so --help and --list run anywhere):
  attended_pairs()  the FLOP rule of DESIGN.md section 7, as oppbench and
                    ../shared/bench/torch_anchors.py count it
  sweep_cases()     oppbench --sweep's cases (bench/sweep.c), same order
  decode_cases()    oppbench --decode-sweep's combinations (bench/decode_sweep.c),
                    same order, the skipped ones marked
  list_line()       one case as the JSON object oppbench --list --json writes
  skipped_line()    a skipped decode combination as oppbench --decode-sweep --list
                    --json writes it
  json_lines()      the JSON objects among the lines of some log files
  md_table()        a markdown table
  cuda_median_ms()  CUDA-event timing like oppbench's (needs torch)
"""
import json
import math

SWEEP_TOKENS = 16384  # OPP_SWEEP_TOKENS
SWEEP_HIDDEN = 2048  # OPP_SWEEP_HIDDEN: heads = 2048 / D
SWEEP_HEAD_SIZES = (64, 128, 256)
SWEEP_LENGTHS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
DECODE_GROUPS = (1, 4, 8)  # heads = 8 * G
DECODE_BATCHES = (1, 8, 64, 256)
DECODE_LENGTHS = (1024, 4096, 16384, 65536, 131072)
DECODE_KV_HEADS = 8  # OPP_DECODE_KV_HEADS
DECODE_HEAD_SIZE = 128  # OPP_DECODE_HEAD_SIZE
DECODE_MAX_KV_BYTES = 16 << 30  # OPP_DECODE_MAX_KV_BYTES


def attended_pairs(lq, lkv, causal):
    """(query, key) pairs that attend in one sequence; causal is tail-aligned:
    query i sees key j iff j <= i + lkv - lq (rows with no key count 0)."""
    if lq <= 0 or lkv <= 0:
        return 0
    if not causal:
        return lq * lkv
    off = lkv - lq
    i0 = max(0, -off)  # first query that sees a key
    n = lq - i0
    return n * (i0 + off + 1 + lkv) // 2 if n > 0 else 0


def sweep_cases():
    """The sweep as dicts: name, dtype, batch, heads, kv_heads, head_size,
    causal, softcap, seqlen (every sequence), flops."""
    cases = []
    for d in SWEEP_HEAD_SIZES:
        for causal in (False, True):
            for length in SWEEP_LENGTHS:
                heads = SWEEP_HIDDEN // d
                batch = SWEEP_TOKENS // length
                pairs = batch * attended_pairs(length, length, causal)
                cases.append(dict(
                    workload="sweep_d%d_%s_L%d" % (d, "causal" if causal else "noncausal", length),
                    dtype="bf16", batch=batch, heads=heads, kv_heads=heads, head_size=d,
                    causal=causal, softcap=0, seqlen=length, pairs=pairs,
                    flops=4 * pairs * heads * d))
    return cases


def decode_cases():
    """The decode sweep's 60 combinations as dicts (sweep_cases()' keys, with
    seqlen_q = 1 and seqlen = L_kv), plus kv_bytes (K + V), bytes (K + V
    read, Q read, out written: what GB/s counts) and skipped (kv_bytes above
    the 16 GiB cap)."""
    cases = []
    d, hk = DECODE_HEAD_SIZE, DECODE_KV_HEADS
    for g in DECODE_GROUPS:
        for batch in DECODE_BATCHES:
            for length in DECODE_LENGTHS:
                heads = hk * g
                kv_bytes = batch * length * hk * (d + d) * 2
                cases.append(dict(
                    workload="decode_g%d_b%d_kv%d" % (g, batch, length), dtype="bf16",
                    batch=batch, heads=heads, kv_heads=hk, head_size=d, causal=False,
                    softcap=0, seqlen_q=1, seqlen=length, pairs=batch * length,
                    flops=4 * batch * length * heads * d, kv_bytes=kv_bytes,
                    bytes=kv_bytes + batch * heads * (d + d) * 2, group=g,
                    skipped=kv_bytes > DECODE_MAX_KV_BYTES))
    return cases


def list_line(c):
    """The JSON object of oppbench --list --json for case c (with "bytes"
    for a decode case, as oppbench --decode-sweep --list --json)."""
    lq = c.get("seqlen_q", c["seqlen"])
    out = dict(workload=c["workload"], dtype=c["dtype"], batch=c["batch"], heads=c["heads"],
               kv_heads=c["kv_heads"], head_size=c["head_size"], causal=c["causal"],
               softcap=c["softcap"], total_q=c["batch"] * lq,
               total_kv=c["batch"] * c["seqlen"], max_seqlen_q=lq,
               max_seqlen_kv=c["seqlen"], pairs=c["pairs"], flops=c["flops"])
    if "bytes" in c:
        out["bytes"] = c["bytes"]
    return out


def skipped_line(c):
    """The JSON object of oppbench --decode-sweep --list --json for a skipped case."""
    return dict(workload=c["workload"], skipped=True, kv_bytes=c["kv_bytes"])


def select(cases, only):
    """cases whose workload is in the comma list only (all when empty);
    an unknown name raises SystemExit(2)."""
    if not only:
        return cases
    names = only.split(",")
    known = {c["workload"] for c in cases}
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit("unknown case(s): %s" % ", ".join(bad))
    return [c for c in cases if c["workload"] in names]


def json_lines(paths):
    """Every JSON object found on a line of the files (other lines skipped)."""
    out = []
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    out.append(obj)
    return out


def md_table(headers, rows):
    """A markdown table; None cells print as '-'."""
    def cell(x):
        return "-" if x is None else str(x)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


def fmt(x, spec):
    """'%spec' of x, or None when x is None / not finite."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return spec % x


def cuda_median_ms(fn, reps, warmup, flush_bytes=None):
    """Median and min ms of fn over reps CUDA-event timed runs after warmup
    runs; before each timed run an L2 flush (a write of flush_bytes, default
    max(256 MiB, 4 x L2)) outside the events, as oppbench times."""
    import torch
    if flush_bytes is None:
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)
        flush_bytes = max(256 << 20, 4 * l2)
    flush = torch.empty(flush_bytes, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        flush.fill_(i & 0xFF)
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    del flush
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    return median, times[0]
