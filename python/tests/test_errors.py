"""test_errors.py - every bad argument raises OppError with the status name
and the library's message, before anything runs on a GPU. No GPU needed:
the arrays are fakes (conftest.py) whose made-up device pointers are never
dereferenced; each case is refused by a Python check, by the library's
host checks (descriptor, claim, cu_seqlens on the host) or by the
library's pointer and workspace checks that run before its first CUDA call.
"""
import math

import pytest

import oppacked
from conftest import FakeCudaArray as F
from conftest import FakeDLPackArray as DL

PTR = 0x7F0000000000  # 256-byte aligned, never dereferenced


def packed(**overrides):
    """Arguments of a valid f16 GQA call (3 sequences, Hq 32, Hkv 8, D 128)
    with caller-provided out and workspace, then the overrides."""
    args = dict(
        q=F((700, 32, 128), "<f2"), k=F((700, 8, 128), "<f2"), v=F((700, 8, 128), "<f2"),
        cu_seqlens_q=F((4,), "<i4"), cu_seqlens_k=F((4,), "<i4"), max_seqlen_q=400,
        max_seqlen_k=400, out=F((700, 32, 128), "<f2"), workspace=F((256,), "|u1"))
    args.update(overrides)
    return args


def padded(**overrides):
    """Arguments of a valid 4D f16 GQA Attention-24 call (B 2, Hq 8, Hkv 4,
    S_q 16, S_kv 32, D 64) with caller-provided out and workspace, then the
    overrides."""
    args = dict(
        q=F((2, 8, 16, 64), "<f2"), k=F((2, 4, 32, 64), "<f2"), v=F((2, 4, 32, 64), "<f2"),
        nonpad_kv_seqlen=F((2,), "<i8"), out=F((2, 8, 16, 64), "<f2"),
        workspace=F((256,), "|u1"))
    args.update(overrides)
    return args


def raises(status, fn, *args, match=None, **kwargs):
    with pytest.raises(oppacked.OppError) as info:
        fn(*args, **kwargs)
    e = info.value
    assert e.name == status, str(e)
    assert str(e).startswith(status + ": ")
    assert e.message, "no message"
    if match is not None:
        assert match in e.message, e.message
    return e


# --- the validation API through ctypes


def good_desc(**fields):
    d = dict(q_dtype=16, k_dtype=16, v_dtype=16, out_dtype=16, batch=3, num_heads=32,
             kv_num_heads=8, head_size=128, total_q=700, total_kv=700, max_seqlen_q=400,
             max_seqlen_kv=400, is_causal=1)
    d.update(fields)
    return oppacked.attention_desc(**d)


def test_desc_check_accepts_valid_desc(lib_loaded):
    # A valid bf16 GQA descriptor passes every host check and names its sm_90 kernel.
    d = good_desc()
    oppacked.claim_check(d)
    oppacked.desc_check(d)
    oppacked.varlen_check(d, [0, 100, 500, 700], [0, 100, 500, 700])
    assert oppacked.kernel_query(d, 90)
    assert oppacked.workspace_size(d) >= 256


@pytest.mark.parametrize("fields,status,match", [
    (dict(kv_num_heads=6), "BAD_PARAM_KV_HEADS_NOT_DIVIDING", "kv_num_heads = 6"),
    (dict(num_heads=0), "BAD_PARAM_NUM_HEADS", None),
    (dict(head_size=300), "NOT_SUPPORTED_HEAD_SIZE", "300"),
    (dict(scale=math.nan), "BAD_PARAM_SCALE", None),
    (dict(softcap=-1.0), "BAD_PARAM_SOFTCAP", None),
    (dict(is_causal=2), "BAD_PARAM_IS_CAUSAL", None),
    (dict(q_dtype=11, k_dtype=11, v_dtype=11, out_dtype=11), "NOT_SUPPORTED_DTYPE", "f64"),
    (dict(k_dtype=10), "BAD_PARAM_DTYPE_MISMATCH", None),
    (dict(max_seqlen_q=-1), "BAD_PARAM_MAX_SEQLEN", None),
    (dict(algo=7), "BAD_PARAM_ALGO", None),
    (dict(algo=4), "BAD_PARAM_ALGO", "OPP_ALGO_TF32X3 (3)"),
    (dict(algo=3), "NOT_SUPPORTED_DTYPE", "TF32X3 serves f32 only"),
])
def test_desc_check_rejects_bad_field(lib_loaded, fields, status, match):
    # opp_attention_desc_check refuses each bad field with its status and message.
    raises(status, oppacked.desc_check, good_desc(**fields), match=match)


def test_claim_check_rejects_fast_f32_odd_head_size(lib_loaded):
    # Claim time: FAST's f32 kernel needs head sizes that are multiples of 4,
    # and the message says so.
    d = good_desc(q_dtype=1, k_dtype=1, v_dtype=1, out_dtype=1, algo=1, head_size=126)
    raises("NOT_SUPPORTED_HEAD_SIZE", oppacked.claim_check, d, match="multiples of 4")


def test_tf32x3_is_an_opt_in_algo(lib_loaded):
    # algo 3 (TF32X3): f32, D <= 64 (multiples of 4): accepted at claim time
    # (some GPU runs it), named on sm_90, NOT_SUPPORTED_ARCH elsewhere; AUTO
    # keeps the FFMA row.
    f32 = dict(q_dtype=1, k_dtype=1, v_dtype=1, out_dtype=1, head_size=64)
    d = good_desc(algo=oppacked._lib.ALGOS["tf32x3"], **f32)
    oppacked.claim_check(d)
    oppacked.desc_check(d)
    assert oppacked.kernel_query(d, 90) == "tf32x3_f32_d64"
    assert oppacked.workspace_size(d) == oppacked.workspace_size(good_desc(algo=2, **f32))
    for sm in (80, 86, 89, 100):
        raises("NOT_SUPPORTED_ARCH", oppacked.kernel_query, d, sm,
               match="TF32X3 needs compute capability 9.0")
    assert oppacked.kernel_query(good_desc(algo=2, **f32), 90).startswith("ffma_f32_")
    raises("NOT_SUPPORTED_HEAD_SIZE", oppacked.claim_check,
           good_desc(algo=3, **dict(f32, head_size=128)), match="up to 64")


@pytest.mark.parametrize("cu_q,cu_kv,status,match", [
    ([0, 100, 500, 700], [0, 500, 100, 700], "BAD_PARAM_SEQLENS_DECREASING", "cu_seqlens_kv[2]"),
    ([1, 100, 500, 700], [0, 100, 500, 700], "BAD_PARAM_SEQLENS_START", None),
    ([0, 100, 500, 701], [0, 100, 500, 700], "BAD_PARAM_SEQLENS_TOTAL", None),
    ([0, 100, 500, 700], [0, 100, 700], "BAD_PARAM_SEQLENS_COUNT_MISMATCH", None),
    ([0, 50, 600, 700], [0, 50, 600, 700], "BAD_PARAM_MAX_SEQLEN", None),
])
def test_varlen_check_rejects_bad_cu_seqlens(lib_loaded, cu_q, cu_kv, status, match):
    # Host cu_seqlens: each inconsistency is named with index and values.
    raises(status, oppacked.varlen_check, good_desc(), cu_q, cu_kv, match=match)


def test_attention24_desc_check_rejects_bad_rank(lib_loaded):
    # The Attention-24 descriptor refuses input_rank 5.
    d = oppacked.attention24_desc(q_dtype=10, k_dtype=10, v_dtype=10, out_dtype=10, input_rank=5,
                                  batch=1, num_heads=2, head_size=64, q_seqlen=4, kv_seqlen=4)
    with pytest.raises(oppacked.OppError) as info:
        oppacked.desc_check(d)
    assert info.value.name.startswith("BAD_PARAM"), str(info.value)


# --- varlen_attention on fake __cuda_array_interface__ arrays


@pytest.mark.parametrize("overrides,status,match", [
    (dict(q=F((700, 4096), "<f2")), "BAD_PARAM_SHAPE", "rank 3"),
    (dict(v=F((699, 8, 128), "<f2")), "BAD_PARAM_SHAPE", "k and v rows"),
    (dict(k=F((700, 8, 64), "<f2")), "BAD_PARAM_SHAPE", "head_size"),
    (dict(k=F((700, 0, 128), "<f2"), v=F((700, 0, 128), "<f2")), "BAD_PARAM_SHAPE", None),
    (dict(k=F((700, 6, 128), "<f2"), v=F((700, 6, 128), "<f2")),
     "BAD_PARAM_KV_HEADS_NOT_DIVIDING", "kv_num_heads = 6"),
    (dict(k=F((700, 8, 128), "<f4")), "BAD_PARAM_DTYPE_MISMATCH", "k_dtype = f32"),
    (dict(q=F((700, 32, 128), "<f8"), k=F((700, 8, 128), "<f8"), v=F((700, 8, 128), "<f8"),
          out=F((700, 32, 128), "<f8")), "NOT_SUPPORTED_DTYPE", "f64"),
    (dict(q=F((700, 32, 128), ">f2")), "BAD_PARAM_DTYPE", "'>f2'"),
    (dict(q=F((700, 32, 512), "<f2"), k=F((700, 8, 512), "<f2"), v=F((700, 8, 512), "<f2"),
          out=F((700, 32, 512), "<f2")), "NOT_SUPPORTED_HEAD_SIZE", "512"),
    (dict(cu_seqlens_q=F((4,), "<i8")), "BAD_PARAM_DTYPE", "int32"),
    (dict(cu_seqlens_k=F((5,), "<i4")), "BAD_PARAM_SEQLENS_COUNT_MISMATCH", None),
    (dict(cu_seqlens_q=F((1,), "<i4"), cu_seqlens_k=F((1,), "<i4")), "BAD_PARAM_SEQLENS_COUNT",
     None),
    (dict(cu_seqlens_q=F((4, 1), "<i4")), "BAD_PARAM_SHAPE", None),
    (dict(cu_seqlens_q=F((4,), "<i4", strides=(8,))), "BAD_PARAM_STRIDE", None),
    (dict(max_seqlen_q=-5), "BAD_PARAM_MAX_SEQLEN", "-5"),
    (dict(max_seqlen_k=2**40), "BAD_PARAM_MAX_SEQLEN", "int32"),
    (dict(max_seqlen_k="400"), "BAD_PARAM_MAX_SEQLEN", "integer"),
    (dict(softmax_scale=0.0), "BAD_PARAM_SCALE", "None"),
    (dict(softmax_scale=-0.5), "BAD_PARAM_SCALE", None),
    (dict(softmax_scale=math.inf), "BAD_PARAM_SCALE", None),
    (dict(softcap=math.nan), "BAD_PARAM_SOFTCAP", None),
    (dict(causal=2), "BAD_PARAM_IS_CAUSAL", None),
    (dict(algo="turbo"), "BAD_PARAM_ALGO", "turbo"),
    (dict(algo="tf32x3"), "NOT_SUPPORTED_DTYPE", "TF32X3 serves f32 only"),
    (dict(q=F((700, 32, 128), "<f4"), k=F((700, 8, 128), "<f4"), v=F((700, 8, 128), "<f4"),
          out=F((700, 32, 128), "<f4"), algo="TF32X3"), "NOT_SUPPORTED_HEAD_SIZE", "up to 64"),
    (dict(q=F((700, 32, 126), "<f4"), k=F((700, 8, 126), "<f4"), v=F((700, 8, 126), "<f4"),
          out=F((700, 32, 126), "<f4"), algo="fast"), "NOT_SUPPORTED_HEAD_SIZE",
     "multiples of 4"),
    (dict(q=F((700, 32, 128), "<f2", strides=(8192 * 2, 2, 256))), "BAD_PARAM_STRIDE",
     "contiguous"),
    (dict(q=F((700, 32, 128), "<f2", strides=(128, 256, 2))), "BAD_PARAM_STRIDE",
     "q_row_stride = 64"),
    (dict(q=F((700, 32, 128), "<f2", strides=(8193, 256, 2))), "BAD_PARAM_STRIDE", "byte strides"),
    (dict(out=F((700, 32, 64), "<f2")), "BAD_PARAM_SHAPE", "out"),
    (dict(out=F((700, 32, 128), "<f4")), "BAD_PARAM_DTYPE_MISMATCH", "out_dtype"),
    (dict(q=[[[0.0]]]), "BAD_PARAM", "not a CUDA array"),
    # Pointer and workspace checks: the library's, before its first CUDA call.
    (dict(q=F((700, 32, 128), "<f2", ptr=PTR + 8)), "BAD_PARAM_MISALIGNED", "16-byte"),
    (dict(q=F((700, 32, 128), "<f2", ptr=0)), "BAD_PARAM_NULL_POINTER", "q is NULL"),
    (dict(out=F((700, 32, 128), "<f2", ptr=PTR + 2)), "BAD_PARAM_MISALIGNED", "out"),
    (dict(cu_seqlens_k=F((4,), "<i4", ptr=PTR + 2)), "BAD_PARAM_MISALIGNED", "cu_seqlens_kv"),
    (dict(cu_seqlens_q=F((4,), "<i4", ptr=0)), "BAD_PARAM_NULL_POINTER", "cu_seqlens_q"),
    (dict(workspace=F((128,), "|u1")), "BAD_PARAM_WORKSPACE", "128"),
    (dict(workspace=F((512,), "|u1", ptr=PTR + 16)), "BAD_PARAM_MISALIGNED", "256-byte"),
    (dict(workspace=F((256,), "|u1", ptr=0)), "BAD_PARAM_NULL_POINTER", "workspace"),
])
def test_varlen_attention_rejects_bad_argument(lib_loaded, overrides, status, match):
    # Each bad argument raises OppError(status, message) before any launch.
    raises(status, oppacked.varlen_attention, **packed(**overrides), match=match)


def test_varlen_attention_valid_fakes_reach_the_device_lookup(has_device):
    # Valid fakes pass every host check; without a GPU the call stops at NO_DEVICE.
    if has_device:
        pytest.skip("a GPU is present: made-up pointers must not reach a launch")
    raises("NO_DEVICE", oppacked.varlen_attention, **packed())


def test_varlen_attention_without_allocator_asks_for_out(lib_loaded):
    # Foreign arrays and no PyTorch/CuPy to allocate with: out= and workspace= are asked for.
    import importlib.util

    if any(importlib.util.find_spec(m) for m in ("torch", "cupy")):
        pytest.skip("PyTorch or CuPy is importable: it allocates")
    raises("NOT_SUPPORTED_FEATURE", oppacked.varlen_attention,
           **packed(out=None, workspace=None), match="out=")


def test_cupy_bf16_output_without_torch_asks_for_out(lib_loaded, monkeypatch):
    # CuPy has no bfloat16: with CuPy as the allocator and PyTorch not importable,
    # a bf16 output is refused before any allocation, and out= is asked for.
    import sys

    from oppacked import _api

    monkeypatch.setattr(_api, "_importable", lambda module: False)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    fw = _api._Framework.__new__(_api._Framework)
    fw.alloc_kind, fw.device = "cupy", None
    raises("NOT_SUPPORTED_FEATURE", fw.empty, "out", (2, 8, 64), 16,
           match="cannot allocate out: CuPy has no bfloat16")


def test_varlen_attention_validate_needs_a_host_copy(lib_loaded):
    # validate=True on arrays of no known framework cannot copy cu_seqlens: it says so.
    raises("NOT_SUPPORTED_FEATURE", oppacked.varlen_attention, **packed(), validate=True,
           match="validate=True")


# --- DLPack (capsules read through ctypes)


def test_dlpack_bf16_reaches_the_library(lib_loaded):
    # A DLPack bf16 q is read as bf16 (the library's dtype message names it).
    q = DL((700, 32, 128), code=4, bits=16)
    e = raises("BAD_PARAM_DTYPE_MISMATCH", oppacked.varlen_attention, **packed(q=q))
    assert "bf16" in e.message
    assert q.streams == [None]  # the legacy default stream was announced to the producer


def test_dlpack_byte_offset_and_strides_are_applied(has_device):
    # byte_offset moves the pointer (misaligned here) and element strides are read.
    # (DLPack names the device: with PyTorch or CuPy importable it is made current
    # first, which a machine without a GPU refuses as NO_DEVICE.)
    import importlib.util

    q = DL((700, 32, 128), code=2, bits=16, byte_offset=2)
    if has_device or not any(importlib.util.find_spec(m) for m in ("torch", "cupy")):
        raises("BAD_PARAM_MISALIGNED", oppacked.varlen_attention, **packed(q=q),
               match=hex(PTR + 2))
    else:
        raises("NO_DEVICE", oppacked.varlen_attention, **packed(q=q), match="device 0")
    q = DL((700, 32, 128), code=2, bits=16, strides=(100, 128, 1))
    raises("BAD_PARAM_STRIDE", oppacked.varlen_attention, **packed(q=q), match="100")


@pytest.mark.parametrize("kwargs,status", [
    (dict(code=2, bits=16, device_type=1), "BAD_PARAM"),  # CPU
    (dict(code=5, bits=64), "BAD_PARAM_DTYPE"),  # complex64
])
def test_dlpack_rejects_cpu_and_unknown_dtype(lib_loaded, kwargs, status):
    # A host DLPack array or a dtype without an ONNX type is refused.
    raises(status, oppacked.varlen_attention, **packed(q=DL((700, 32, 128), **kwargs)))


# --- attention24 on fake arrays


@pytest.mark.parametrize("overrides,status,match", [
    (dict(q=F((2, 8, 16), "<f2")), "BAD_PARAM_SHAPE", "rank 3"),
    (dict(q=F((2, 8, 16, 64, 1), "<f2")), "BAD_PARAM_SHAPE", "rank 4"),
    (dict(k=F((3, 4, 32, 64), "<f2")), "BAD_PARAM_SHAPE", "batch"),
    (dict(v=F((2, 4, 31, 64), "<f2")), "BAD_PARAM_SHAPE", "sequence length"),
    (dict(k=F((2, 3, 32, 64), "<f2"), v=F((2, 3, 32, 64), "<f2")),
     "BAD_PARAM_KV_HEADS_NOT_DIVIDING", None),
    (dict(q_num_heads=4), "BAD_PARAM_SHAPE", "q_num_heads = 4"),
    (dict(q=F((2, 8, 16, 64), "<f2", strides=(16384, 128, 1024, 2))), "BAD_PARAM_STRIDE",
     "C-contiguous"),
    (dict(nonpad_kv_seqlen=F((2,), "<i4")), "BAD_PARAM_DTYPE", "int64"),
    (dict(nonpad_kv_seqlen=F((3,), "<i8")), "BAD_PARAM_NONPAD", "3 entries"),
    (dict(nonpad_kv_seqlen=F((2,), "<i8", ptr=PTR + 4)), "BAD_PARAM_MISALIGNED",
     "nonpad_kv_seqlen"),
    (dict(out=F((2, 16, 8, 64), "<f2")), "BAD_PARAM_SHAPE", "out"),
    (dict(scale=0), "BAD_PARAM_SCALE", None),
    (dict(is_causal=3), "BAD_PARAM_IS_CAUSAL", None),
    (dict(algo="fastest"), "BAD_PARAM_ALGO", None),
    (dict(workspace=F((64,), "|u1")), "BAD_PARAM_WORKSPACE", None),
])
def test_attention24_rejects_bad_argument(lib_loaded, overrides, status, match):
    # Each bad Attention-24 argument raises OppError before any launch.
    raises(status, oppacked.attention24, **padded(**overrides), match=match)


@pytest.mark.parametrize("overrides,status,match", [
    (dict(), "BAD_PARAM_SHAPE", "q_num_heads"),
    (dict(q_num_heads=8, kv_num_heads=4, q=F((2, 16, 500), "<f2")), "BAD_PARAM_SHAPE",
     "multiple"),
    (dict(q_num_heads=8, kv_num_heads=4, k=F((2, 32, 4 * 32), "<f2")), "BAD_PARAM_SHAPE",
     "head_size"),
])
def test_attention24_3d_rejects_bad_heads(lib_loaded, overrides, status, match):
    # 3D inputs need head counts that split the hidden size.
    args = padded(q=F((2, 16, 8 * 64), "<f2"), k=F((2, 32, 4 * 64), "<f2"),
                  v=F((2, 32, 4 * 64), "<f2"), out=F((2, 16, 8 * 64), "<f2"))
    args.update(overrides)
    raises(status, oppacked.attention24, **args, match=match)


def test_attention24_valid_fakes_reach_the_device_lookup(has_device):
    # Valid 4D and 3D fakes pass every host check; without a GPU: NO_DEVICE.
    if has_device:
        pytest.skip("a GPU is present: made-up pointers must not reach a launch")
    raises("NO_DEVICE", oppacked.attention24, **padded())
    raises("NO_DEVICE", oppacked.attention24,
           **padded(q=F((2, 16, 8 * 64), "<f2"), k=F((2, 32, 4 * 64), "<f2"),
                    v=F((2, 32, 4 * 64), "<f2"), out=F((2, 16, 8 * 64), "<f2"), q_num_heads=8,
                    kv_num_heads=4))
