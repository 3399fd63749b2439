#!/usr/bin/env python3
"""tf32x3_model.py - a CPU model (numpy) of the TF32X3 kernel's arithmetic
(kernels/tf32x3_attention.cuh) for one 64-row tile, to reason about its
error before a GPU run: operands split into tf32 hi (to nearest) + lo,
three products a k8 step (lo x hi, hi x lo, hi x hi) with the tensor core's
operand truncation to tf32, products exact, and each k8 step's sum added to
the fp32 accumulator ROUNDED TOWARD ZERO (the truncating additions that
studies of NVIDIA tensor cores report; a model, not the hardware). Beside
it the FFMA kernel's arithmetic (fp32 fused multiply-adds, to nearest).
Prints max abs and RMS error against a double-precision softmax, for:

  cur    O += P V_j on the tensor core (the kernel with OPP__TF32X3_O_FRESH 0)
  fresh  P V_j into fresh accumulators, O = alpha O + P V_j by FFMA, and
         every k step's small terms first in both products (1)
  ffma   the FFMA kernel

  python3 bench/tf32x3_model.py [--lkv 1024] [--trials 3] [--seed 2]

Inputs uniform in [-1, 1], D = Dv = 64, scale 1/8, non-causal, BN 64.
The twenty-fourth session's run (bench/RESULTS.md) printed
cur RMS 1.77e-7, fresh 4.9e-9, ffma 1.08e-8 at L_kv 1024 (defaults).
"""
import argparse

np = None  # numpy, imported in main() so that --help needs none


def bits_and(x, mask):
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & np.uint32(mask)).view(np.float32)


def tf32_rna(x):
    """tf32x3_split's hi: (bits + 0x1000) & 0xFFFFE000."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) + np.uint32(0x1000)
    return (b & np.uint32(0xFFFFE000)).view(np.float32)


def split(x):
    hi = tf32_rna(x)
    return hi, (x - hi).astype(np.float32)


def to_f32_rz(x):
    """float64 -> float32 rounded toward zero."""
    f = x.astype(np.float32)
    away = np.abs(f.astype(np.float64)) > np.abs(x)
    f[away] = np.nextafter(f[away], np.float32(0))
    return f


def k8_step(acc, a, b):
    """One wgmma k8 step: operands truncated to tf32, exact products, RZ add."""
    t = bits_and(a, 0xFFFFE000).astype(np.float64) @ bits_and(b, 0xFFFFE000).astype(np.float64)
    return to_f32_rz(acc.astype(np.float64) + t)


def gemm3(acc, a, b, small_first=False):
    """acc (+)= a b as tf32x3_issue issues it: per k8 step lo x hi, hi x lo,
    hi x hi; small_first: every step's lo x hi, then hi x lo, then hi x hi."""
    ah, al = split(a)
    bh, bl = split(b)
    steps = [slice(k, k + 8) for k in range(0, a.shape[1], 8)]
    if small_first:
        for x, y in ((al, bh), (ah, bl), (ah, bh)):
            for s in steps:
                acc = k8_step(acc, x[:, s], y[s])
        return acc
    for s in steps:
        acc = k8_step(acc, al[:, s], bh[s])
        acc = k8_step(acc, ah[:, s], bl[s])
        acc = k8_step(acc, ah[:, s], bh[s])
    return acc


def flash(q, k, v, mode):
    rows, sl = q.shape[0], np.float32(0.125 / np.log(2.0))
    m = np.full((rows, 1), -np.inf, np.float32)
    l = np.zeros((rows, 1), np.float32)
    o = np.zeros((rows, v.shape[1]), np.float32)
    for j in range(0, k.shape[0], 64):
        kb, vb = k[j:j + 64], v[j:j + 64]
        if mode == "ffma":
            s = np.zeros((rows, kb.shape[0]), np.float32)
            for d in range(q.shape[1]):
                s = (s.astype(np.float64) + np.outer(q[:, d], kb[:, d])).astype(np.float32)
        else:
            s = gemm3(np.zeros((rows, kb.shape[0]), np.float32), q, np.ascontiguousarray(kb.T),
                      mode == "fresh")
        mx = np.maximum(m, s.max(1, keepdims=True)).astype(np.float32)
        p = np.exp2((s * sl - mx * sl).astype(np.float32)).astype(np.float32)
        alpha = np.exp2((m * sl - mx * sl).astype(np.float32)).astype(np.float32)
        l = (l * alpha + p.sum(1, keepdims=True, dtype=np.float32)).astype(np.float32)
        m = mx
        if mode == "ffma":
            o = (o * alpha).astype(np.float32)
            for kk in range(p.shape[1]):
                o = (o.astype(np.float64) + np.outer(p[:, kk], vb[kk])).astype(np.float32)
        elif mode == "cur":
            o = gemm3((o * alpha).astype(np.float32), p, vb)
        else:  # fresh
            oj = gemm3(np.zeros_like(o), p, vb, True)
            o = (o.astype(np.float64) * alpha + oj).astype(np.float32)
    return o / l


def exact(q, k, v):
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) * 0.125
    p = np.exp(s - s.max(1, keepdims=True))
    return (p @ v.astype(np.float64)) / p.sum(1, keepdims=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lkv", type=int, default=1024)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2)
    a = ap.parse_args()
    if a.lkv < 1 or a.trials < 1:
        ap.error("--lkv and --trials must be at least 1")
    global np
    import numpy
    np = numpy
    rng = np.random.default_rng(a.seed)
    err = {"cur": [], "fresh": [], "ffma": []}
    for t in range(a.trials):
        q, k, v = (rng.uniform(-1, 1, (n, 64)).astype(np.float32) for n in (64, a.lkv, a.lkv))
        ref = exact(q, k, v)
        for mode in err:
            e = flash(q, k, v, mode) - ref
            err[mode].append((np.abs(e).max(), np.sqrt(np.mean(e * e))))
        print(f"trial {t + 1}/{a.trials} done", flush=True)
    for mode, vals in err.items():
        x = np.array(vals).mean(0)
        print(f"{mode:6s} max abs {x[0]:.3g}  RMS {x[1]:.3g}")


if __name__ == "__main__":
    main()
