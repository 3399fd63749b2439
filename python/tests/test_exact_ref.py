"""test_exact_ref.py - the CPU reference library that test_gpu.py compares
EXACT with (exact_ref.py, liboppacked_ref.so): it loads, agrees with a
plain double-precision model within one float32 ulp, and reports a bad
cu_seqlens with its own message. No GPU, no torch (skipped where the
library was not built or staged beside liboppacked.so)."""
import array
import math
import random

import pytest

import exact_ref
import oppacked


@pytest.fixture(scope="module")
def ref(lib_loaded):
    if exact_ref.load() is None:
        pytest.skip(f"no {exact_ref.library_path()} (bazel build //python:liboppacked_ref_so)")
    return exact_ref.load()


def _model(q, k, v, lq, lk, hq, hkv, d, causal, softcap):
    """out [total_q, hq, d] in double: softmax(q k^T / sqrt(d)) v per sequence."""
    out, oq, ok, g = [], 0, 0, hq // hkv
    for a, b in zip(lq, lk):
        for i in range(a):
            for h in range(hq):
                qi = q[((oq + i) * hq + h) * d:((oq + i) * hq + h + 1) * d]
                s = []
                for j in range(b):
                    kj = k[((ok + j) * hkv + h // g) * d:((ok + j) * hkv + h // g + 1) * d]
                    x = sum(x * y for x, y in zip(qi, kj)) / math.sqrt(d)
                    if softcap:
                        x = softcap * math.tanh(x / softcap)
                    s.append(-math.inf if causal and j > i + b - a else x)
                m = max(s, default=-math.inf)
                p = [0.0 if m == -math.inf else math.exp(x - m) for x in s]
                den = sum(p)
                for e in range(d):
                    num = sum(p[j] * v[((ok + j) * hkv + h // g) * d + e] for j in range(b))
                    out.append(num / den if den > 0 else 0.0)
        oq, ok = oq + a, ok + b
    return out


@pytest.mark.parametrize("causal,softcap", [(False, 0.0), (True, 0.0), (True, 3.0)])
def test_reference_matches_double_model(ref, causal, softcap):
    # f32, GQA 4:2, a sequence whose first rows see no key (causal, L_q > L_k).
    lq, lk, hq, hkv, d = [3, 5, 2], [4, 2, 7], 4, 2, 8
    rng = random.Random(1)
    q = array.array("f", [rng.uniform(-2, 2) for _ in range(sum(lq) * hq * d)])
    k = array.array("f", [rng.uniform(-2, 2) for _ in range(sum(lk) * hkv * d)])
    v = array.array("f", [rng.uniform(-2, 2) for _ in range(sum(lk) * hkv * d)])
    cu_q = array.array("i", [0, 3, 8, 10])
    cu_k = array.array("i", [0, 4, 6, 13])
    out = array.array("f", [math.nan] * (sum(lq) * hq * d))
    desc = oppacked.attention_desc(q_dtype=1, k_dtype=1, v_dtype=1, out_dtype=1, batch=3,
                                   num_heads=hq, kv_num_heads=hkv, head_size=d, total_q=sum(lq),
                                   total_kv=sum(lk), max_seqlen_q=5, max_seqlen_kv=7,
                                   is_causal=int(causal), softcap=softcap)
    addr = [x.buffer_info()[0] for x in (cu_q, cu_k, q, k, v, out)]
    exact_ref.packed_attention(desc, *addr)
    want = _model(q, k, v, lq, lk, hq, hkv, d, causal, softcap)
    for i, (got, w) in enumerate(zip(out, want)):
        assert abs(got - w) <= 2.0**-23 * abs(w) + 2.0**-149, (i, got, w)


def test_reference_reports_bad_cu_seqlens(ref):
    # A decreasing cu_seqlens_kv is refused with the reference's own message.
    desc = oppacked.attention_desc(q_dtype=1, k_dtype=1, v_dtype=1, out_dtype=1, batch=2,
                                   num_heads=2, head_size=8, total_q=4, total_kv=4,
                                   max_seqlen_q=4, max_seqlen_kv=4)
    buf = array.array("f", [0.0] * 64)
    cu_q, cu_k = array.array("i", [0, 2, 4]), array.array("i", [0, 3, 2])
    with pytest.raises(oppacked.OppError) as e:
        exact_ref.packed_attention(desc, cu_q.buffer_info()[0], cu_k.buffer_info()[0],
                                   *[buf.buffer_info()[0]] * 4)
    assert e.value.name == "BAD_PARAM_SEQLENS_DECREASING", str(e.value)
    assert "cu_seqlens_kv[2] = 2 < cu_seqlens_kv[1] = 3" in e.value.message
