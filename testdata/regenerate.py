#!/usr/bin/env python3
"""Regenerates liboppacked's golden Attention-24 cases (testdata/cases/).

One command, from anywhere:

    python3 testdata/regenerate.py            # write testdata/cases/ and the README table
    python3 testdata/regenerate.py --check    # regenerate into a temp dir, compare byte for byte
    python3 testdata/regenerate.py --list     # print the case table
    python3 testdata/regenerate.py --out DIR  # write the cases somewhere else

The script first makes a virtual environment at testdata/.venv (git-ignored)
with the pinned packages below and re-executes itself inside it.

Each case is one logical batch (B sequences with lengths L_q[b], L_kv[b],
attributes, dtype, values) written as the padded ONNX Attention-24 case of
DESIGN.md section 3: an ONNX backend-test folder (model.onnx,
test_data_set_0/input_0..3.pb = Q, K, V, nonpad_kv_seqlen, output_0.pb = Y)
plus logical_batch.txt. The golden Y is onnx.reference's Attention evaluated
on a float64 copy of the case (sqrt(scale) folded into Q and K, scale
attribute 1.0) and rounded once to the case dtype (DESIGN.md section 2.3;
testdata/README.md says why). Two cheap checks run on every case: an
independent float64 model of the packed semantics must agree with the golden
bit for bit on every valid element, and onnxruntime (CPU) is run on the
stored model where it can be, for a report only. After each case a progress
line with elapsed time and ETA, at the end its summary (tools/opp_progress.py,
the format of oppbench and oppcheck --onnx-test).
"""

import os
import sys

# --- bootstrap: pinned venv at testdata/.venv, then re-exec inside it ----------------

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")
PINS = [
    "onnx==1.23.2",
    "numpy==2.4.6",
    "ml_dtypes==0.7.0",
    "onnxruntime==1.32.0",
    "protobuf==7.36.2",  # onnx's serializer; pinned so the .pb bytes cannot drift
]
# Single-threaded BLAS: numpy's float64 matmul inside onnx.reference then sums
# in one fixed order on a given CPU (see README "Determinism").
FIXED_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _in_venv():
    return os.path.realpath(sys.prefix) == os.path.realpath(VENV)


def _bootstrap():
    import subprocess

    py = os.path.join(VENV, "bin", "python")
    stamp = os.path.join(VENV, "pins.txt")
    want = "\n".join(PINS) + "\n"
    have = open(stamp).read() if os.path.exists(stamp) else None
    if have != want:
        if not os.path.exists(py):
            print(f"[venv] creating {VENV}", flush=True)
            subprocess.check_call([sys.executable, "-m", "venv", VENV])
        print(f"[venv] installing {' '.join(PINS)}", flush=True)
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", *PINS])
        with open(stamp, "w") as f:
            f.write(want)
    env = dict(os.environ, **FIXED_ENV)
    os.execve(py, [py, os.path.abspath(__file__), *sys.argv[1:]], env)


if __name__ == "__main__" and not _in_venv():
    _bootstrap()
for _k, _v in FIXED_ENV.items():  # also when run inside the venv by hand
    os.environ.setdefault(_k, _v)

import argparse  # noqa: E402
import filecmp  # noqa: E402
import math  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from fractions import Fraction  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import opp_progress  # noqa: E402  (tools/opp_progress.py: stdlib only)

CASES_DIR = os.path.join(HERE, "cases")
README = os.path.join(HERE, "README.md")
OPSET = 24
IR_VERSION = 12  # written explicitly so a newer onnx's default cannot change model.onnx

# --- the case table ---------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    dtype: str  # f32 | f16 | bf16
    hq: int  # num_heads (q_num_heads)
    hkv: int  # kv_num_heads
    d: int  # head_size
    lq: tuple
    lkv: tuple
    dv: int = 0  # v_head_size; 0 = same as d
    layout: str = "4d"  # 4d (B,H,S,D) | 3d (B,S,H*D)
    causal: bool = False
    scale: float = 0.0  # explicit float32 scale attribute; 0 = attribute absent
    softcap: float = 0.0  # float32 softcap attribute; 0 = attribute absent
    amp: float = 1.0  # Q and K values are amp * standard normal (V is standard normal)
    note: str = field(default="", compare=False)

    @property
    def v_d(self):
        return self.dv or self.d

    @property
    def batch(self):
        return len(self.lq)

    @property
    def s_q(self):
        return max(1, max(self.lq))

    @property
    def s_kv(self):
        return max(1, max(self.lkv))


RAG_Q, RAG_KV = (3, 8, 1, 6), (5, 8, 4, 11)
CASES = [
    Case("attn24_f32_b4_h8kv2_d64_causal_ragged", 101, "f32", 8, 2, 64, RAG_Q, RAG_KV,
         causal=True, note="GQA 4, ragged, causal offsets 2,0,3,5"),
    Case("attn24_f16_b4_h8kv2_d64_causal_ragged", 102, "f16", 8, 2, 64, RAG_Q, RAG_KV,
         causal=True, note="same batch in f16"),
    Case("attn24_bf16_b4_h8kv2_d64_causal_ragged", 103, "bf16", 8, 2, 64, RAG_Q, RAG_KV,
         causal=True, note="same batch in bf16"),
    Case("attn24_f16_b3_h4kv2_d80_causal", 104, "f16", 4, 2, 80, (7, 2, 12), (7, 9, 12),
         causal=True, note="GQA 2, head size 80"),
    Case("attn24_f32_b2_h16kv2_d128_gqa8", 105, "f32", 16, 2, 128, (6, 11), (13, 4),
         note="GQA 8, head size 128, L_kv < L_q without causal"),
    Case("attn24_bf16_b3_h8kv1_d256_causal_mqa", 106, "bf16", 8, 1, 256, (4, 9, 1), (10, 9, 6),
         causal=True, note="MQA, head size 256"),
    Case("attn24_f32_b3_h4kv2_d64_causal_softcap30", 107, "f32", 4, 2, 64, (8, 5, 12),
         (8, 16, 12), causal=True, softcap=30.0, amp=4.0, note="softcap saturating, causal"),
    Case("attn24_f16_b2_h4_d128_softcap50_scale0p0625", 108, "f16", 4, 4, 128, (9, 4), (12, 4),
         scale=0.0625, softcap=50.0, amp=6.0, note="MHA, explicit scale and softcap"),
    Case("attn24_f32_b3_h2_d64_causal_scale0p3", 109, "f32", 2, 2, 64, (6, 3, 10), (9, 3, 10),
         causal=True, scale=0.3, note="MHA, scale 0.3 (not exact in float32)"),
    Case("attn24_f16_b5_h8kv2_d128_causal_decode", 110, "f16", 8, 2, 128, (1, 1, 1, 1, 1),
         (300, 17, 1, 128, 257), causal=True, note="decode, L_kv up to 300"),
    Case("attn24_bf16_b4_h4kv1_d64_decode", 111, "bf16", 4, 1, 64, (1, 1, 1, 1),
         (200, 5, 64, 133), note="decode, MQA"),
    Case("attn24_f32_b3_h4kv2_d64_causal_negoffset", 112, "f32", 4, 2, 64, (6, 5, 7), (2, 5, 1),
         causal=True, note="L_kv < L_q with causal: first rows see no key, zeros"),
    Case("attn24_f16_b4_h4kv2_d64_causal_zerolen", 113, "f16", 4, 2, 64, (0, 3, 4, 2),
         (5, 0, 4, 3), causal=True, note="L_q = 0 and L_kv = 0 (zero rows)"),
    Case("attn24_f32_b3_h4kv2_d64_dv80_zerolen", 114, "f32", 4, 2, 64, (4, 0, 3), (0, 6, 2),
         dv=80, note="v_head_size 80 != head_size 64; zero-length sequences"),
    Case("attn24_f32_b2_h2_d64_nokv", 115, "f32", 2, 2, 64, (0, 2), (0, 0),
         note="every L_kv = 0: S_kv = 1 of pure padding, all valid rows zero"),
    Case("attn24_f32_3d_b3_h4kv2_d64_causal", 116, "f32", 4, 2, 64, (5, 2, 8), (7, 2, 8),
         layout="3d", causal=True, note="3D layout"),
    Case("attn24_bf16_3d_b2_h8kv2_d64_dv80", 117, "bf16", 8, 2, 64, (3, 6), (10, 6), dv=80,
         layout="3d", note="3D layout, v_head_size 80"),
    Case("attn24_f16_3d_b3_h6kv3_d80_causal_softcap30", 118, "f16", 6, 3, 80, (4, 7, 1),
         (6, 7, 3), layout="3d", causal=True, softcap=30.0, amp=4.0,
         note="3D layout, GQA 2, softcap"),
    Case("attn24_f16_b2_h2kv1_d64_causal_long", 119, "f16", 2, 1, 64, (2600, 1537), (2600, 2111),
         causal=True, note="long sequences, causal"),
    Case("attn24_f32_b2_h2kv1_d64_long", 120, "f32", 2, 1, 64, (1500, 1800), (2000, 1800),
         note="long sequences"),
]

# --- dtypes and the one rounding ----------------------------------------------------

DTYPES = {
    # name: (numpy storage dtype, TensorProto type, unsigned view for bit compares)
    "f32": (np.dtype(np.float32), TensorProto.FLOAT, np.uint32),
    "f16": (np.dtype(np.float16), TensorProto.FLOAT16, np.uint16),
    "bf16": (np.dtype(ml_dtypes.bfloat16), TensorProto.BFLOAT16, np.uint16),
}
POISON = {"f32": 1e30, "f16": 30000.0, "bf16": 1e30}  # magnitude before rounding


def f64_to_bf16_bits(x):
    """Round float64 -> bfloat16 once (round to nearest, ties to even), from the
    float64 bit pattern. Handles bf16 subnormals, overflow to inf, inf, NaN.
    |x| = sig * 2^(E-52); the bf16 quantum at E is 2^(max(E,-126)-7)."""
    u = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    sign = ((u >> np.uint64(63)).astype(np.uint16)) << np.uint16(15)
    a = u & np.uint64(0x7FFFFFFFFFFFFFFF)
    bexp = (a >> np.uint64(52)).astype(np.int64)
    man = a & np.uint64((1 << 52) - 1)
    normal = bexp != 0
    sig = np.where(normal, man | np.uint64(1 << 52), man)
    e = np.where(normal, bexp - 1023, -1022)
    ec = np.maximum(e, -126)
    shift = np.minimum(45 + (ec - e), 63).astype(np.uint64)
    q = sig >> shift
    rem = sig & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    up = (rem > half) | ((rem == half) & ((q & np.uint64(1)) == np.uint64(1)))
    q = q + up.astype(np.uint64)
    mag = ((ec + 126) << 7) + q.astype(np.int64)  # carries into the exponent as needed
    mag = np.where((e > 127) | (mag >= 0x7F80), 0x7F80, mag)  # overflow -> inf
    mag = np.where(bexp == 2047, np.where(man == 0, 0x7F80, 0x7FC0), mag)  # inf, NaN
    return (sign | mag.astype(np.uint16)).reshape(np.shape(x))


def round_once(x64, dtype):
    """The single rounding from float64 to the case dtype."""
    x64 = np.asarray(x64, dtype=np.float64)
    if dtype == "f32":
        return x64.astype(np.float32)  # IEEE RNE
    if dtype == "f16":
        return x64.astype(np.float16)  # numpy rounds double -> half directly (checked below)
    return f64_to_bf16_bits(x64).view(ml_dtypes.bfloat16)


def _exact_round(x, mant_bits, emin):
    """Slow exact RNE of a finite float to a binary format with mant_bits
    stored mantissa bits and minimum normal exponent emin (no overflow)."""
    if x == 0:
        return 0.0
    e = max(math.frexp(x)[1] - 1, emin)  # |x| in [2^e, 2^(e+1)) unless subnormal
    quantum = Fraction(2) ** (e - mant_bits)
    n = Fraction(x) / quantum
    fl = math.floor(n)
    r = n - fl
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and fl % 2 == 1):
        fl += 1
    return float(fl * quantum)


def check_rounding():
    """Startup proof that the roundings used are single roundings from double:
    random doubles, exact halfway points of bf16 and f16 and their nudges
    (where rounding via float32 would go wrong), subnormals, overflow, NaN.
    Returns a one-line summary; raises on any failure."""
    rng = np.random.default_rng(12345)
    wide = rng.standard_normal(2000) * np.exp2(rng.integers(-140, 100, 2000))
    bf = rng.integers(0, 0x7F7F, 1000).astype(np.uint32)  # finite bf16 patterns
    bf_half = ((bf << np.uint32(16)) | np.uint32(0x8000)).view(np.float32).astype(np.float64)
    h = rng.integers(0, 0x7BFF, 1000).astype(np.uint16).view(np.float16)
    h_half = (h.astype(np.float64) + np.nextafter(h, np.float16(np.inf)).astype(np.float64)) / 2
    halves = np.concatenate([bf_half, h_half])
    xs = np.concatenate([wide, halves, halves * (1 + 2.0**-40), halves * (1 - 2.0**-40),
                         [0.0, -0.0, 2.0**-134, 3 * 2.0**-134, 2.0**-126 - 2.0**-135, 1e-300,
                          65504.0, 65519.99, 3.3895313892515355e38]])
    xs = np.concatenate([xs, -xs])
    bf_bad = f16_bad = 0
    ours = f64_to_bf16_bits(xs).view(ml_dtypes.bfloat16).astype(np.float64)
    with np.errstate(over="ignore"):
        f16 = xs.astype(np.float16).astype(np.float64)
        via32 = xs.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    for v, got_bf, got_h in zip(xs.tolist(), ours.tolist(), f16.tolist()):
        if _exact_round(v, 7, -126) != got_bf:
            bf_bad += 1
        if abs(v) < 65519 and _exact_round(v, 10, -14) != got_h:
            f16_bad += 1
    special = f64_to_bf16_bits(np.array([3.4e38, -3.4e38, np.inf, -np.inf, np.nan]))
    if bf_bad or f16_bad or list(special) != [0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FC0]:
        raise SystemExit(f"rounding self-test failed: bf16 {bf_bad}, f16 {f16_bad}, {special}")
    ml = xs.astype(ml_dtypes.bfloat16).view(np.uint16)
    mine = f64_to_bf16_bits(xs)
    return (f"rounding self-test: {len(xs)} doubles rounded exactly once to bf16 (ours) and "
            f"f16 (numpy); for comparison, via float32 would differ on "
            f"{int(np.count_nonzero(via32 != mine))}, ml_dtypes' own f64->bf16 cast on "
            f"{int(np.count_nonzero(ml != mine))} (not used)")


# --- building one case --------------------------------------------------------------


def to_stored(x4, layout):
    """Logical (B,H,S,D) -> stored layout."""
    if layout == "4d":
        return np.ascontiguousarray(x4)
    b, h, s, d = x4.shape
    return np.ascontiguousarray(x4.transpose(0, 2, 1, 3).reshape(b, s, h * d))


def to_logical(x, layout, heads):
    """Stored layout -> logical (B,H,S,D) view."""
    if layout == "4d":
        return x
    b, s, hd = x.shape
    return x.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)


def make_inputs(c):
    """Q, K, V in stored layout and case dtype, padding poisoned; nonpad int64 [B]."""
    rng = np.random.default_rng(c.seed)
    b = c.batch
    shapes = {"Q": (b, c.hq, c.s_q, c.d), "K": (b, c.hkv, c.s_kv, c.d),
              "V": (b, c.hkv, c.s_kv, c.v_d)}
    amp = {"Q": c.amp, "K": c.amp, "V": 1.0}
    poison = round_once(POISON[c.dtype], c.dtype)
    out = {}
    for name, shp in shapes.items():
        vals = round_once(rng.standard_normal(shp) * amp[name], c.dtype)
        pad = np.zeros(shp, dtype=bool)
        for i in range(b):
            if name == "Q":
                pad[i, :, : c.s_q - c.lq[i], :] = True  # queries sit at the tail
            else:
                pad[i, :, c.lkv[i]:, :] = True  # kv right-padded
        vals, pad = to_stored(vals, c.layout), to_stored(pad, c.layout)
        sign = np.where(np.arange(vals.size) % 2 == 0, 1.0, -1.0).reshape(vals.shape)
        poisoned = round_once(sign * float(poison), c.dtype)
        out[name] = np.where(pad, poisoned, vals)
    out["nonpad_kv_seqlen"] = np.array(c.lkv, dtype=np.int64)
    return out, float(poison)


def make_model(c, elem_type, scale_attr):
    """One Attention node, opset 24, inputs Q K V '' '' '' nonpad_kv_seqlen, output Y."""
    b = c.batch
    if c.layout == "4d":
        q_shape, k_shape = [b, c.hq, c.s_q, c.d], [b, c.hkv, c.s_kv, c.d]
        v_shape, y_shape = [b, c.hkv, c.s_kv, c.v_d], [b, c.hq, c.s_q, c.v_d]
    else:
        q_shape, k_shape = [b, c.s_q, c.hq * c.d], [b, c.s_kv, c.hkv * c.d]
        v_shape, y_shape = [b, c.s_kv, c.hkv * c.v_d], [b, c.s_q, c.hq * c.v_d]
    attrs = {}
    if c.causal:
        attrs["is_causal"] = 1
    if c.layout == "3d":
        attrs["q_num_heads"] = c.hq
        attrs["kv_num_heads"] = c.hkv
    if scale_attr is not None:
        attrs["scale"] = float(scale_attr)
    if c.softcap:
        attrs["softcap"] = float(np.float32(c.softcap))
    node = helper.make_node("Attention", ["Q", "K", "V", "", "", "", "nonpad_kv_seqlen"],
                            ["Y"], **attrs)
    graph = helper.make_graph(
        [node], c.name,
        [helper.make_tensor_value_info("Q", elem_type, q_shape),
         helper.make_tensor_value_info("K", elem_type, k_shape),
         helper.make_tensor_value_info("V", elem_type, v_shape),
         helper.make_tensor_value_info("nonpad_kv_seqlen", TensorProto.INT64, [b])],
        [helper.make_tensor_value_info("Y", elem_type, y_shape)])
    model = helper.make_model(graph, producer_name="liboppacked testdata/regenerate.py",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return model


def sqrt_scale(c):
    """s = sqrt(scale) in double: the float32 attribute widened, or the default."""
    if c.scale:
        return math.sqrt(float(np.float32(c.scale)))
    return float(np.sqrt(1.0 / np.sqrt(np.float64(c.d))))


def golden(c, inputs):
    """onnx.reference on the float64 copy, then one rounding to the case dtype."""
    s = sqrt_scale(c)
    model64 = make_model(c, TensorProto.DOUBLE, 1.0)
    feeds = {"Q": inputs["Q"].astype(np.float64) * s, "K": inputs["K"].astype(np.float64) * s,
             "V": inputs["V"].astype(np.float64), "nonpad_kv_seqlen": inputs["nonpad_kv_seqlen"]}
    (y64,) = ReferenceEvaluator(model64).run(None, feeds)
    assert y64.dtype == np.float64, y64.dtype
    return round_once(y64, c.dtype)


def independent_valid_rows(c, inputs):
    """Packed semantics in float64, written without onnx: per sequence,
    tail-aligned causal, repeat-interleave GQA, softcap before the mask, zeros
    for rows with no visible key. Non-BLAS sums (einsum loops, ascending
    cumsum) so the summation order differs from the reference's matmuls.
    Returns {b: [Hq, L_q, Dv] float64}."""
    s = sqrt_scale(c)
    q4 = to_logical(inputs["Q"], c.layout, c.hq).astype(np.float64)
    k4 = to_logical(inputs["K"], c.layout, c.hkv).astype(np.float64)
    v4 = to_logical(inputs["V"], c.layout, c.hkv).astype(np.float64)
    kv_of = np.arange(c.hq) // (c.hq // c.hkv)  # [kv0, kv0, kv1, kv1, ...]
    cap = float(np.float32(c.softcap))
    res = {}
    for b in range(c.batch):
        lq, lkv = c.lq[b], c.lkv[b]
        y = np.zeros((c.hq, lq, c.v_d))
        if lq and lkv:
            q = q4[b, :, c.s_q - lq:, :] * s
            k = k4[b, kv_of, :lkv, :] * s
            v = v4[b, kv_of, :lkv, :]
            x = np.einsum("hid,hjd->hij", q, k)
            if cap > 0:
                x = cap * np.tanh(x / cap)
            i = np.arange(lq)[:, None]
            j = np.arange(lkv)[None, :]
            vis = (j <= i + (lkv - lq)) if c.causal else np.ones((lq, lkv), bool)
            vis = np.broadcast_to(vis, x.shape)
            xm = np.where(vis, x, -np.inf)
            m = xm.max(axis=-1, keepdims=True)
            m = np.where(np.isneginf(m), 0.0, m)
            e = np.where(vis, np.exp(xm - m), 0.0)
            den = np.cumsum(e, axis=-1)[..., -1:]
            p = np.where(den > 0, e / np.where(den > 0, den, 1.0), 0.0)
            y = np.einsum("hij,hje->hie", p, v)
        res[b] = y
    return res


def valid_rows(c, y):
    """Y (stored layout) -> {b: [Hq, L_q, Dv]} of the valid (tail) rows."""
    y4 = to_logical(y, c.layout, c.hq)
    return {b: y4[b, :, c.s_q - c.lq[b]:, :] for b in range(c.batch)}


def self_check(c, inputs, y):
    """Independent model vs golden, bit for bit after the one rounding."""
    ind = independent_valid_rows(c, inputs)
    view = DTYPES[c.dtype][2]
    gold = valid_rows(c, y)
    total, bad = 0, []
    for b in range(c.batch):
        g = np.ascontiguousarray(gold[b]).view(view)
        w = np.ascontiguousarray(round_once(ind[b], c.dtype)).view(view)
        total += g.size
        for idx in zip(*np.nonzero(g != w)):
            bad.append((b, idx, g[idx], w[idx], ind[b][idx]))
    return total, bad


def ulp_index(bits, nbits):
    """Monotone integer index of a float's bit pattern (for ulp distances)."""
    bits = bits.astype(np.int64)
    sign = np.int64(1) << (nbits - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def ort_report(c, model_bytes, inputs, y):
    """Run onnxruntime (CPU) on the stored model; agreement on valid rows only."""
    try:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.log_severity_level = 3
        sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
        (got,) = sess.run(["Y"], dict(inputs))
    except Exception as e:  # report, never fail
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return f"ort: not supported: {reason[:160]}", None
    view = DTYPES[c.dtype][2]
    nbits = 8 * np.dtype(view).itemsize
    g_rows, o_rows = valid_rows(c, y), valid_rows(c, got.astype(y.dtype))
    st = dict(n=0, same=0, one_ulp=0, nan=0, max_abs=0.0, max_rel=0.0, zero_rows=0,
              zero_rows_ok=0)
    for b in range(c.batch):
        g, o = np.asarray(g_rows[b]), np.asarray(o_rows[b])
        if g.size == 0:
            continue
        gb, ob = np.ascontiguousarray(g).view(view), np.ascontiguousarray(o).view(view)
        g64, o64 = g.astype(np.float64), o.astype(np.float64)
        st["n"] += g.size
        st["same"] += int(np.count_nonzero(gb == ob))
        st["one_ulp"] += int(np.count_nonzero(np.abs(ulp_index(gb, nbits) -
                                                     ulp_index(ob, nbits)) <= 1))
        st["nan"] += int(np.count_nonzero(np.isnan(o64)))
        diff = np.abs(g64 - o64)
        if np.isfinite(diff).any():
            st["max_abs"] = max(st["max_abs"], float(np.nanmax(np.where(
                np.isfinite(diff), diff, np.nan))))
            # error relative to the row's largest golden magnitude
            rowmax = np.max(np.abs(g64), axis=-1, keepdims=True)
            rel = np.where((rowmax > 0) & np.isfinite(diff), diff / np.where(
                rowmax > 0, rowmax, 1.0), 0.0)
            st["max_rel"] = max(st["max_rel"], float(rel.max()))
        gz = np.all(g64 == 0, axis=-1)  # [Hq, L_q] golden zero rows (no visible key)
        st["zero_rows"] += int(gz.sum())
        st["zero_rows_ok"] += int(np.all(o64[gz] == 0, axis=-1).sum())
    n = max(st["n"], 1)
    msg = (f"ort: {st['same']}/{st['n']} valid elements bit-identical "
           f"({100 * st['same'] / n:.1f}%), {100 * st['one_ulp'] / n:.1f}% within 1 ulp, "
           f"max |diff| {st['max_abs']:.3g} = {st['max_rel']:.2g} of the row's max |y|")
    if st["nan"]:
        msg += f", {st['nan']} NaN"
    if st["zero_rows"]:
        msg += f"; {st['zero_rows_ok']}/{st['zero_rows']} no-visible-key rows zero in ort too"
    return msg, st


def fmt_f32(x):
    return "0" if not x else repr(float(np.float32(x)))


def sidecar(c, poison):
    lines = [
        "# liboppacked logical batch (testdata/README.md)",
        "format 1",
        f"name {c.name}",
        f"seed {c.seed}",
        f"dtype {c.dtype}",
        f"layout {c.layout}",
        f"batch {c.batch}",
        f"num_heads {c.hq}",
        f"kv_num_heads {c.hkv}",
        f"head_size {c.d}",
        f"v_head_size {c.v_d}",
        f"scale {fmt_f32(c.scale)}",
        f"is_causal {int(c.causal)}",
        f"softcap {fmt_f32(c.softcap)}",
        "lq " + " ".join(str(x) for x in c.lq),
        "lkv " + " ".join(str(x) for x in c.lkv),
        f"q_poison {poison!r}",
        f"kv_poison {poison!r}",
    ]
    return "\n".join(lines) + "\n"


def tensor_proto(name, arr):
    t = numpy_helper.from_array(np.ascontiguousarray(arr), name)
    assert t.HasField("raw_data") or arr.size == 0
    return t.SerializeToString()


def write_case(c, out_dir, run_ort=True):
    t0 = time.time()
    inputs, poison = make_inputs(c)
    model = make_model(c, DTYPES[c.dtype][1], c.scale or None)
    model_bytes = model.SerializeToString()
    onnx.checker.check_model(model)
    y = golden(c, inputs)
    assert y.dtype == DTYPES[c.dtype][0]
    if np.isnan(y.astype(np.float64)).any():
        raise SystemExit(f"{c.name}: NaN in golden")

    d = os.path.join(out_dir, c.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    files = {"model.onnx": model_bytes, "logical_batch.txt": sidecar(c, poison).encode()}
    for i, name in enumerate(["Q", "K", "V", "nonpad_kv_seqlen"]):
        files[f"test_data_set_0/input_{i}.pb"] = tensor_proto(name, inputs[name])
    files["test_data_set_0/output_0.pb"] = tensor_proto("Y", y)
    for rel, data in files.items():
        with open(os.path.join(d, rel), "wb") as f:
            f.write(data)
    # the stored tensors must read back to the same bits
    back = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "test_data_set_0/output_0.pb")))
    assert back.dtype == y.dtype and np.array_equal(back.view(DTYPES[c.dtype][2]),
                                                    y.view(DTYPES[c.dtype][2]))
    t_gold = time.time() - t0

    total, bad = self_check(c, inputs, y)
    ort_msg, ort_stats = ort_report(c, model_bytes, inputs, y) if run_ort else ("", None)
    size = sum(len(v) for v in files.values())
    shapes = " ".join(f"{k}{list(inputs[k].shape)}" for k in ("Q", "K", "V")) + \
        f" Y{list(y.shape)}"
    print(f"{c.name}: {shapes} {size / 1024:.0f} KiB, {time.time() - t0:.2f} s "
          f"(golden {t_gold:.2f} s)", flush=True)
    status = "OK" if not bad else f"DISAGREE on {len(bad)}"
    print(f"    self-check: {total - len(bad)}/{total} valid elements bit-identical "
          f"to the independent float64 model [{status}]", flush=True)
    for b, idx, g, w, v64 in bad[:5]:
        print(f"      b={b} (h,i,e)={tuple(int(t) for t in idx)} golden=0x{int(g):x} "
              f"independent=0x{int(w):x} (double {v64!r})")
    if run_ort:
        print(f"    {ort_msg}", flush=True)
    return dict(total=total, bad=len(bad), size=size, ort=ort_stats, ort_msg=ort_msg)


# --- the README case table, --list, --check ----------------------------------------

TABLE_BEGIN = "<!-- case-table:begin (written by regenerate.py) -->"
TABLE_END = "<!-- case-table:end -->"


def case_table():
    rows = ["| case | dtype | layout | B | Hq | Hkv | D | Dv | causal | scale | softcap | "
            "L_q | L_kv | note |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in CASES:
        rows.append(
            f"| `{c.name}` | {c.dtype} | {c.layout} | {c.batch} | {c.hq} | {c.hkv} | {c.d} | "
            f"{c.v_d} | {int(c.causal)} | {fmt_f32(c.scale)} | {fmt_f32(c.softcap)} | "
            f"{' '.join(map(str, c.lq))} | {' '.join(map(str, c.lkv))} | {c.note} |")
    return "\n".join(rows) + "\n"


def readme_with_table(text):
    if TABLE_BEGIN not in text or TABLE_END not in text:
        return None
    head, rest = text.split(TABLE_BEGIN, 1)
    _, tail = rest.split(TABLE_END, 1)
    return head + TABLE_BEGIN + "\n" + case_table() + TABLE_END + tail


def tree_files(root):
    out = set()
    for dp, _, fns in os.walk(root):
        for fn in fns:
            out.add(os.path.relpath(os.path.join(dp, fn), root))
    return out


def compare_trees(new_root, old_root):
    new, old = tree_files(new_root), tree_files(old_root) if os.path.isdir(old_root) else set()
    ndiff = 0
    for rel in sorted(new | old):
        if rel not in old:
            state = "MISSING (not committed)"
        elif rel not in new:
            state = "EXTRA (committed, not generated)"
        elif filecmp.cmp(os.path.join(new_root, rel), os.path.join(old_root, rel), shallow=False):
            state = "OK"
        else:
            state = "DIFF"
        ndiff += state != "OK"
        print(f"{state:4s} {rel}")
    return ndiff


def remove_stale(out_dir):
    names = {c.name for c in CASES}
    for entry in sorted(os.listdir(out_dir)):
        p = os.path.join(out_dir, entry)
        if entry not in names and os.path.exists(os.path.join(p, "logical_batch.txt")):
            print(f"removing stale case {entry}")
            shutil.rmtree(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the cases into DIR (default testdata/cases)")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temp dir and compare byte for byte")
    ap.add_argument("--list", action="store_true", help="print the case table")
    ap.add_argument("--no-ort", action="store_true", help="skip the onnxruntime report")
    args = ap.parse_args()

    names = [c.name for c in CASES]
    assert len(set(names)) == len(names) and len({c.seed for c in CASES}) == len(CASES)
    for c in CASES:
        assert c.hq % c.hkv == 0 and len(c.lq) == len(c.lkv), c.name
    if args.list:
        sys.stdout.write(case_table())
        return 0

    import onnxruntime

    print(f"onnx {onnx.__version__}, numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"onnxruntime {onnxruntime.__version__}, python {sys.version.split()[0]}")
    print(check_rounding(), flush=True)
    t_start = time.time()
    target = os.path.abspath(args.out or CASES_DIR)
    tmp = tempfile.mkdtemp(prefix="oppacked-cases-") if args.check else None
    out_dir = tmp or target
    os.makedirs(out_dir, exist_ok=True)
    if not args.check:
        remove_stale(out_dir)
    progress = opp_progress.Progress("regenerate", len(CASES))
    results = []
    for c in CASES:
        results.append(write_case(c, out_dir, run_ort=not args.no_ort))
        progress.item(c.name)
    progress.done()

    total = sum(r["total"] for r in results)
    bad = sum(r["bad"] for r in results)
    size = sum(r["size"] for r in results)
    print(f"\n{len(CASES)} cases, {size / 1e6:.2f} MB ({size} bytes) in {out_dir}")
    print(f"self-check: {total - bad}/{total} valid elements bit-identical between the golden "
          f"and the independent float64 model" + ("" if not bad else f"; {bad} DISAGREE"))
    ort_ok = [r for r in results if r["ort"]]
    if not args.no_ort:
        n = sum(r["ort"]["n"] for r in ort_ok)
        same = sum(r["ort"]["same"] for r in ort_ok)
        print(f"onnxruntime: ran {len(ort_ok)}/{len(CASES)} cases; {same}/{n} valid elements "
              f"bit-identical to the golden (report only; see README 'onnxruntime')")
    rc = 1 if bad else 0

    if args.check:
        print(f"\ncomparing with {target}:")
        ndiff = compare_trees(tmp, target)
        text = open(README).read() if os.path.exists(README) else ""
        want = readme_with_table(text)
        readme_ok = want is not None and want == text
        print(f"{'OK' if readme_ok else 'DIFF':4s} README.md case table")
        ndiff += not readme_ok
        shutil.rmtree(tmp)
        print(f"check: {'OK' if not ndiff else f'{ndiff} difference(s)'}")
        rc = rc or (1 if ndiff else 0)
    elif not args.out and os.path.exists(README):
        text = open(README).read()
        new = readme_with_table(text)
        if new is not None and new != text:
            with open(README, "w") as f:
                f.write(new)
            print("README.md case table updated")
    print(f"done in {time.time() - t_start:.1f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
