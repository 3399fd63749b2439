"""fa2_accuracy.py - our FAST kernel's error vs FlashAttention-2's, on the same inputs.

Reads what `oppbench --dump DIR` wrote (bench/dump.h: DIR/<workload>/ with
q, k, v, cu_seqlens, out_exact, out_fast, meta.json) and, per workload, on
the GPU (one workload at a time, freed before the next):
  ours  = out_fast (OPP_ALGO_FAST)                   vs out_exact (OPP_ALGO_EXACT)
  FA2   = torch.ops.aten._flash_attention_forward(q, k, v, cu_q, cu_kv, max_q,
          max_kv, 0.0, causal, False, scale=scale)  vs out_exact
as max |x - exact| and sqrt(mean((x - exact)^2)) in float64. EXACT is the
double-accumulated result rounded once; it is checked here too, against a
float64 reference computed by torch from the same q, k, v (per sequence and
head chunk): every element within one ulp of the output dtype, else the dump
was misread and the script fails.
FA2 has no softcap: for a softcap workload the FA2 columns say
"n/a (FA2 has no softcap)", and a second table puts, side by side, ours (with
softcap, vs EXACT) and FA2 without softcap vs a float64 reference without
softcap on the same q, k, v - a proxy, not the same problem. FA2 has no fp32
kernel and FAST none for f32: such a workload reports n/a.

Prints one JSON line per workload ({"workload": ..., "impl": "accuracy",
"ours_max_abs", "ours_rms", "fa2_max_abs", "fa2_rms" (vs EXACT), "fa2_note",
"ours_vs_f64_*", "fa2_vs_f64_*" (vs the float64 reference), "fa2_nosoftcap_*",
"exact_vs_f64_max_abs", "exact_vs_f64_ok"}), then the markdown tables:
  workload | ours max abs | FA2 max abs | ours RMS | FA2 RMS | ours <= FA2?
Exit status: 0; 1 when EXACT disagrees with the float64 reference or an
output has NaN/inf; 2 when the dump is missing or incomplete (the complete
workloads are still measured and printed).

  python3 fa2_accuracy.py DUMP_DIR [--only NAMES] [--json PATH]
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import fmt, md_table  # noqa: E402

# one ulp of the dtype relative to |x| (upper bound), and the floor below which
# values are subnormal-ish; EXACT must lie within ulp(ref) of the f64 reference.
ULP_REL = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10, "f32": 2.0 ** -23}
ULP_FLOOR = 2.0 ** -24
NP_DTYPES = {"bf16": "int16", "f16": "float16", "f32": "float32", "int32": "int32"}
ITEM_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "int32": 4}
HEAD_CHUNK_BYTES = 2 << 30  # float64 scores of one head chunk


class DumpError(Exception):
    """A dump folder that is missing, incomplete or inconsistent."""


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[1:]))
    ap.add_argument("dump_dir", help="the folder of oppbench --dump")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--json", default=None, help="also write the JSON lines here")
    return ap.parse_args(argv)


def find_workloads(dump_dir, only):
    """([(index, name, folder, meta)] of the complete dumps in workload-file order,
    [problems]): a folder without meta.json is an interrupted dump, a problem."""
    if not os.path.isdir(dump_dir):
        raise DumpError("%s: no such folder (run oppbench --dump %s first)" % (dump_dir, dump_dir))
    found, problems = [], []
    for name in sorted(os.listdir(dump_dir)):
        folder = os.path.join(dump_dir, name)
        meta_path = os.path.join(folder, "meta.json")
        if not os.path.isdir(folder):
            continue
        if not os.path.isfile(meta_path):
            problems.append("%s: no meta.json (an interrupted dump?)" % folder)
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        found.append((meta.get("index", 0), meta["workload"], folder, meta))
    if only:
        names = only.split(",")
        missing = [n for n in names if n not in {w[1] for w in found}]
        problems += ["%s: no complete dump of %s" % (dump_dir, n) for n in missing]
        found = [w for w in found if w[1] in names]
    if not found:
        raise DumpError("; ".join(problems) or "%s: no workload folders (oppbench --dump writes "
                        "DIR/<workload>/)" % dump_dir)
    found.sort()
    return found, problems


def load(folder, meta, name, device):
    """File `name` of the dump as a torch tensor of its dtype and shape, on device."""
    import numpy as np
    import torch
    spec = meta["files"].get(name)
    if spec is None:
        return None
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        raise DumpError("%s: missing (meta.json names it)" % path)
    count = math.prod(spec["shape"])
    want = count * ITEM_BYTES[spec["dtype"]]
    if os.path.getsize(path) != want:
        raise DumpError("%s: %d bytes, but shape %s of %s needs %d"
                        % (path, os.path.getsize(path), spec["shape"], spec["dtype"], want))
    t = torch.from_numpy(np.fromfile(path, dtype=NP_DTYPES[spec["dtype"]]))
    if spec["dtype"] == "bf16":
        t = t.view(torch.bfloat16)
    return t.reshape(spec["shape"]).to(device)


def reference_f64(q, k, v, cu_q, cu_kv, scale, causal, softcap):
    """out [total_q, Hq, Dv] in float64: softmax(softcap(q k^T * scale) + mask) v per
    sequence, GQA head h reading kv head h // (Hq / Hkv), causal tail-aligned
    (query i sees key j iff j <= i + L_kv - L_q); rows with no key are 0."""
    import torch
    total_q, hq, _ = q.shape
    hkv, dv = k.shape[1], v.shape[2]
    rep = hq // hkv
    out = torch.zeros(total_q, hq, dv, dtype=torch.float64, device=q.device)
    cq, ck = cu_q.tolist(), cu_kv.tolist()
    for b in range(len(cq) - 1):
        lq, lk = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
        if lq == 0 or lk == 0:
            continue
        qb = q[cq[b]:cq[b + 1]].to(torch.float64).transpose(0, 1)  # [Hq, Lq, D]
        kb = k[ck[b]:ck[b + 1]].to(torch.float64).transpose(0, 1)  # [Hkv, Lk, D]
        vb = v[ck[b]:ck[b + 1]].to(torch.float64).transpose(0, 1)  # [Hkv, Lk, Dv]
        hidden = None
        if causal:
            i = torch.arange(lq, device=q.device)[:, None]
            j = torch.arange(lk, device=q.device)[None, :]
            hidden = j > i + (lk - lq)
        chunk = max(1, HEAD_CHUNK_BYTES // (lq * lk * 8))
        for h0 in range(0, hq, chunk):
            heads = torch.arange(h0, min(hq, h0 + chunk), device=q.device)
            s = torch.matmul(qb[heads], kb[heads // rep].transpose(1, 2)) * scale
            if softcap:
                s = softcap * torch.tanh(s / softcap)
            if hidden is not None:
                s.masked_fill_(hidden, float("-inf"))
            m = s.amax(dim=-1, keepdim=True)
            m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
            p = torch.exp(s - m)
            del s
            den = p.sum(dim=-1, keepdim=True)
            o = torch.matmul(p, vb[heads // rep]) / torch.where(den > 0, den, torch.ones_like(den))
            out[cq[b]:cq[b + 1], h0:h0 + len(heads)] = o.transpose(0, 1)
            del p, o
    return out


def errors(x, want):
    """(max abs, rms, nonfinite count) of x against float64 want."""
    import torch
    x = x.to(torch.float64)
    bad = int((~torch.isfinite(x)).sum())
    d = (x - want).abs()
    d = torch.where(torch.isfinite(d), d, torch.zeros_like(d))
    return float(d.max()) if d.numel() else 0.0, float(torch.sqrt((d * d).mean())) if d.numel() else 0.0, bad


def within_ulp(x, ref, dtype):
    """(ok, max abs) for x (rounded once from the exact value) against float64 ref."""
    import torch
    d = (x.to(torch.float64) - ref).abs()
    ok = bool((d <= ULP_REL[dtype] * ref.abs() + ULP_FLOOR).all())
    return ok, float(d.max()) if d.numel() else 0.0


def fa2(q, k, v, cu_q, cu_kv, meta):
    import torch
    return torch.ops.aten._flash_attention_forward(
        q, k, v, cu_q, cu_kv, meta["max_seqlen_q"], meta["max_seqlen_kv"], 0.0,
        bool(meta["causal"]), False, scale=meta["scale"])[0]


def measure(folder, meta):
    """One workload's JSON object (see the file comment)."""
    import torch
    dev = "cuda"
    r = dict(workload=meta["workload"], impl="accuracy", dtype=meta["dtype"],
             softcap=meta["softcap"], fast_kernel=meta.get("fast_kernel"),
             exact_validated=bool(meta.get("exact_validated")))
    q, k, v = (load(folder, meta, n, dev) for n in ("q.bin", "k.bin", "v.bin"))
    cu_q, cu_kv = (load(folder, meta, n, dev) for n in ("cu_seqlens_q.bin", "cu_seqlens_kv.bin"))
    exact = load(folder, meta, "out_exact.bin", dev)
    fast = load(folder, meta, "out_fast.bin", dev)
    if exact is None:
        raise DumpError("%s: no out_exact.bin (the exact kernel failed in oppbench?)" % folder)
    causal, softcap, scale = bool(meta["causal"]), float(meta["softcap"]), float(meta["scale"])
    ref = reference_f64(q, k, v, cu_q, cu_kv, scale, causal, softcap)
    r["exact_vs_f64_ok"], r["exact_vs_f64_max_abs"] = within_ulp(exact, ref, meta["dtype"])
    exact64 = exact.to(torch.float64)
    if fast is not None:
        r["ours_max_abs"], r["ours_rms"], r["ours_nonfinite"] = errors(fast, exact64)
        r["ours_vs_f64_max_abs"], r["ours_vs_f64_rms"], _ = errors(fast, ref)
    else:
        r["ours_note"] = "n/a (no FAST kernel for %s)" % meta["dtype"]
    if meta["dtype"] == "f32":
        r["fa2_note"] = "n/a (FA2 has no fp32 kernel)"
    else:
        try:
            out = fa2(q, k, v, cu_q, cu_kv, meta)
        except Exception as e:  # FA2 refusing the shape is a result, not a crash
            out = None
            r["fa2_note"] = "FA2 error: %s" % (str(e).splitlines() or [""])[0][:120]
        if out is not None and softcap:
            r["fa2_note"] = "n/a (FA2 has no softcap)"
            del ref
            ref = reference_f64(q, k, v, cu_q, cu_kv, scale, causal, 0.0)
            r["fa2_nosoftcap_max_abs"], r["fa2_nosoftcap_rms"], r["fa2_nonfinite"] = \
                errors(out, ref)
        elif out is not None:
            r["fa2_max_abs"], r["fa2_rms"], r["fa2_nonfinite"] = errors(out, exact64)
            r["fa2_vs_f64_max_abs"], r["fa2_vs_f64_rms"], _ = errors(out, ref)
        del out
    del q, k, v, exact, exact64, fast, ref
    torch.cuda.empty_cache()
    return r


def verdict(ours_max, ours_rms, fa2_max, fa2_rms):
    if None in (ours_max, ours_rms, fa2_max, fa2_rms):
        return "n/a"
    if ours_max <= fa2_max and ours_rms <= fa2_rms:
        return "yes"
    return "no (%s)" % ", ".join(w for w, bad in (("max", ours_max > fa2_max),
                                                  ("rms", ours_rms > fa2_rms)) if bad)


def tables(results):
    """The markdown tables of the file comment, from the JSON objects."""
    e = "%.3g"
    rows, proxy = [], []
    for r in results:
        if "error" in r:
            rows.append((r["workload"], "error: " + r["error"], None, None, None, None))
            continue
        name = r["workload"] + ("" if r.get("exact_validated", True) else
                                " (EXACT NOT validated in oppbench)")
        om, orr = r.get("ours_max_abs"), r.get("ours_rms")
        fm, fr = r.get("fa2_max_abs"), r.get("fa2_rms")
        note = r.get("fa2_note")
        rows.append((name, fmt(om, e) or r.get("ours_note", "n/a"),
                     fmt(fm, e) or note, fmt(orr, e) or "n/a", fmt(fr, e) or note,
                     verdict(om, orr, fm, fr)))
        if "fa2_nosoftcap_max_abs" in r:
            pm, pr = r["fa2_nosoftcap_max_abs"], r["fa2_nosoftcap_rms"]
            proxy.append((name, fmt(om, e), fmt(orr, e), fmt(pm, e), fmt(pr, e),
                          verdict(om, orr, pm, pr)))
    text = md_table(["workload", "ours max abs", "FA2 max abs", "ours RMS", "FA2 RMS",
                     "ours <= FA2?"], rows)
    if proxy:
        text += ("\n\nSoftcap workloads (proxy): ours with softcap vs EXACT; FA2 without softcap "
                 "vs a float64 reference without softcap, same q, k, v.\n\n")
        text += md_table(["workload", "ours max abs", "ours RMS", "FA2 (no softcap) max abs",
                          "FA2 (no softcap) RMS", "ours <= FA2 (proxy)?"], proxy)
    return text


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    try:
        work, problems = find_workloads(a.dump_dir, a.only)
    except (DumpError, OSError, ValueError, KeyError) as e:
        print("fa2_accuracy: %s" % e, file=sys.stderr)
        return 2
    import torch
    out = open(a.json, "w") if a.json else None
    print(json.dumps({"env": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                              "script": "fa2_accuracy.py", "dump": a.dump_dir}}), flush=True)
    results, status = [], 0
    for _, name, folder, meta in work:
        try:
            r = measure(folder, meta)
        except DumpError as e:
            print("fa2_accuracy: %s" % e, file=sys.stderr)
            return 2
        except Exception as e:  # one workload's failure must not hide the others'
            r = dict(workload=name, impl="accuracy", error=(str(e).splitlines() or [""])[0][:160])
            status = 1
            torch.cuda.empty_cache()
        if not r.get("exact_vs_f64_ok", True):
            print("fa2_accuracy: %s: EXACT differs from the float64 reference by more than one "
                  "ulp (max abs %.3g): the dump was misread or the reference differs"
                  % (name, r["exact_vs_f64_max_abs"]), file=sys.stderr)
            status = 1
        if r.get("ours_nonfinite") or r.get("fa2_nonfinite"):
            status = 1
        line = json.dumps(r, separators=(",", ":"))
        print(line, flush=True)
        if out:
            out.write(line + "\n")
        results.append(r)
    if out:
        out.close()
    print()
    print(tables(results))
    for p in problems:
        print("fa2_accuracy: %s" % p, file=sys.stderr)
    return 2 if problems else status


if __name__ == "__main__":
    sys.exit(main())
