"""oppacked - liboppacked from Python: packed variable-length attention on
NVIDIA GPUs with the exact semantics of ONNX Attention-24, a drop-in for
flash_attn_varlen_func.

    import torch, oppacked
    q = torch.randn(700, 32, 128, device="cuda", dtype=torch.bfloat16)   # [total_q, Hq, D]
    k = v = torch.randn(700, 8, 128, device="cuda", dtype=torch.bfloat16) # [total_k, Hkv, D]
    cu = torch.tensor([0, 100, 500, 700], device="cuda", dtype=torch.int32)
    out = oppacked.varlen_attention(q, k, v, cu, cu, 400, 400, causal=True)

Pure Python over liboppacked.so (ctypes; where it is looked up: _lib.py).
Arrays: any CUDA array with DLPack or __cuda_array_interface__ (PyTorch,
CuPy, JAX); the call runs on the caller's current stream (PyTorch's, CuPy's,
a __cuda_array_interface__ producer's stream, else the legacy default
stream) and the caller's framework allocates output, LSE and workspace.
Every bad argument raises OppError(status name, library message). With
torch importable, torch tensors go through the custom ops
torch.ops.oppacked.* (torch.compile, CUDA graphs).
"""
from . import _api, _lib
from ._lib import (
    Attention24Desc,
    AttentionDesc,
    LibraryNotFound,
    OppError,
    attention24_desc,
    attention_desc,
    claim_check,
    desc_check,
    device_sm_arch,
    kernel_query,
    library_path,
    varlen_check,
    version,
    workspace_size,
)

__all__ = [
    "varlen_attention", "attention24", "OppError", "LibraryNotFound", "AttentionDesc",
    "Attention24Desc", "attention_desc", "attention24_desc", "claim_check", "desc_check",
    "varlen_check", "kernel_query", "workspace_size", "device_sm_arch", "library_path", "version",
]

try:
    import torch as _torch
except ImportError:
    _torch = None
if _torch is not None and not hasattr(_torch.library, "custom_op"):
    _torch = None  # PyTorch < 2.4: its tensors take the direct (eager) call
if _torch is not None:
    from . import _torch_op


def _use_torch_op(arrays, workspace):
    """Torch tensors take the custom op (traceable, graph-safe) unless the
    caller brings a workspace (then the direct, eager call)."""
    return (_torch is not None and workspace is None
            and all(isinstance(a, _torch.Tensor) for a in arrays if a is not None))


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                     softmax_scale=None, causal=False, softcap=0.0, return_lse=False,
                     algo="auto", out=None, *, workspace=None, validate=False):
    """Attention over packed variable-length sequences (flash_attn_varlen_func's
    arguments and shapes).

    q [total_q, Hq, D], k [total_k, Hkv, D], v [total_k, Hkv, Dv]: CUDA
    arrays of one dtype (float16, bfloat16 or float32); Hkv divides Hq (GQA:
    query head h reads kv head h // (Hq // Hkv)); rows may be strided, the
    [heads, head_size] part of a row must be contiguous.
    cu_seqlens_q / cu_seqlens_k: int32 [B + 1] on the GPU: sequence b owns
    query rows cu_seqlens_q[b]..cu_seqlens_q[b+1]-1 (and kv rows likewise).
    max_seqlen_q / max_seqlen_k: host ints, >= every sequence length.
    softmax_scale: None for 1/sqrt(D). causal: tail-aligned (query i of a
    sequence sees key j iff j <= i + L_k - L_q; FlashAttention's rule).
    softcap: 0 is off, else scores become softcap * tanh(score / softcap).
    algo: "auto" (FAST where a tensor-core kernel serves the call, else
    EXACT), "fast", "exact" (double accumulation, bit-identical to the CPU
    reference), or "tf32x3" (opt-in, never chosen by "auto": float32 only,
    compute capability 9.0 only, D and Dv <= 64 and multiples of 4; each
    product as three tf32 tensor-core products, fp32 accumulation; not
    bit-identical to "exact" or "fast", but batch-invariant as "fast" is).
    out: optional [total_q, Hq, Dv] array to write.
    workspace: optional caller-owned device buffer (bytes:
    oppacked.workspace_size(desc)); by default the framework allocates it.
    validate: copy cu_seqlens to the host (this synchronizes) and check them
    first, so that bad ones raise OppError naming index and values (e.g.
    BAD_PARAM_SEQLENS_DECREASING); an eager debugging aid (it takes the
    direct call, not the custom op).

    Returns out [total_q, Hq, Dv], or (out, lse) with return_lse: lse is
    float32 [Hq, total_q] (FlashAttention's varlen layout), natural log,
    -inf for rows that see no key. Raises OppError on any bad argument
    (before anything runs on the GPU) and on a failed launch. Without
    validate, cu_seqlens are checked on the GPU only, by the library's
    device guard, which refuses to read out of bounds (lib/oppacked.h).
    """
    if not validate and _use_torch_op((q, k, v, cu_seqlens_q, cu_seqlens_k, out), workspace):
        # Checked here so a bad scalar raises OppError, not a schema error.
        scale = None if softmax_scale is None else _api._scale("softmax_scale", softmax_scale)
        causal = _api._flag("causal", causal, _lib.BAD_PARAM_IS_CAUSAL)
        if causal in (0, 1):
            args = (q, k, v, cu_seqlens_q, cu_seqlens_k,
                    _api._i32("max_seqlen_q", max_seqlen_q, _lib.BAD_PARAM_MAX_SEQLEN),
                    _api._i32("max_seqlen_k", max_seqlen_k, _lib.BAD_PARAM_MAX_SEQLEN),
                    scale, bool(causal), float(softcap), bool(return_lse), str(algo))
            if out is None:
                o, lse = _torch.ops.oppacked.varlen_attention(*args)
            else:
                lse = _torch.ops.oppacked.varlen_attention_out(*args, out)
                o = out
            return (o, lse) if return_lse else o
    return _api.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                 softmax_scale, causal, softcap, return_lse, algo, out, workspace,
                                 validate)


def attention24(q, k, v, nonpad_kv_seqlen=None, q_num_heads=None, kv_num_heads=None, scale=None,
                is_causal=False, softcap=0.0, return_lse=False, algo="auto", out=None, *,
                workspace=None):
    """ONNX Attention-24 on its padded layout with nonpad_kv_seqlen (no
    attn_mask, no past): the same kernels as varlen_attention.

    4D: q [B, Hq, S_q, D], k [B, Hkv, S_kv, D], v [B, Hkv, S_kv, Dv] ->
        y [B, Hq, S_q, Dv];
    3D: q [B, S_q, Hq*D], k [B, S_kv, Hkv*D], v [B, S_kv, Hkv*Dv] ->
        y [B, S_q, Hq*Dv] (q_num_heads and kv_num_heads required).
    C-contiguous CUDA arrays of one dtype. nonpad_kv_seqlen: int64 [B] on the
    GPU (None: every key is valid); keys j >= nonpad_kv_seqlen[b] are never
    read. scale: None for 1/sqrt(D). is_causal: ONNX's offset
    nonpad[b] - S_q (tail-aligned). softcap, algo, out, workspace: as
    varlen_attention. Returns y, or (y, lse) with lse float32 [B, Hq, S_q].
    Raises OppError on any bad argument.
    """
    if _use_torch_op((q, k, v, nonpad_kv_seqlen, out), workspace):
        s = None if scale is None else _api._scale("scale", scale)
        causal = _api._flag("is_causal", is_causal, _lib.BAD_PARAM_IS_CAUSAL)
        heads_ok = all(h is None or isinstance(h, int) for h in (q_num_heads, kv_num_heads))
        if causal in (0, 1) and heads_ok:
            args = (q, k, v, nonpad_kv_seqlen, q_num_heads, kv_num_heads, s, bool(causal),
                    float(softcap), bool(return_lse), str(algo))
            if out is None:
                y, lse = _torch.ops.oppacked.attention24(*args)
            else:
                lse = _torch.ops.oppacked.attention24_out(*args, out)
                y = out
            return (y, lse) if return_lse else y
    return _api.attention24(q, k, v, nonpad_kv_seqlen, q_num_heads, kv_num_heads, scale, is_causal,
                            softcap, return_lse, algo, out, workspace)
