"""_torch_op.py - the PyTorch custom operators (torch.library.custom_op),
registered when torch is importable, so oppacked works under torch.compile
(a FakeTensor implementation gives the output shapes) and inside CUDA
graphs (the op allocates with torch's caching allocator and launches on
torch's current stream, which is the capturing stream during capture).

  oppacked::varlen_attention       (q, k, v, cu_q, cu_k, ...) -> (out, lse)
  oppacked::varlen_attention_out   (..., out!) -> lse        (writes out)
  oppacked::attention24            (q, k, v, nonpad?, ...) -> (y, lse)
  oppacked::attention24_out        (..., out!) -> lse

lse is an empty float32 tensor when return_lse is False.
"""
from typing import Optional, Tuple

import torch

from . import _api

Tensor = torch.Tensor


def _empty_lse(q):
    return q.new_empty((0,), dtype=torch.float32)


def _varlen_lse_shape(q, return_lse):
    return (q.shape[1], q.shape[0]) if return_lse else (0,)


@torch.library.custom_op("oppacked::varlen_attention", mutates_args=())
def varlen_attention(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                     max_seqlen_q: int, max_seqlen_k: int, softmax_scale: Optional[float],
                     causal: bool, softcap: float, return_lse: bool,
                     algo: str) -> Tuple[Tensor, Tensor]:
    r = _api.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                              softmax_scale, causal, softcap, return_lse, algo)
    return r if return_lse else (r, _empty_lse(q))


@varlen_attention.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
      softcap, return_lse, algo):
    out = q.new_empty((q.shape[0], q.shape[1], v.shape[2]))
    return out, q.new_empty(_varlen_lse_shape(q, return_lse), dtype=torch.float32)


@torch.library.custom_op("oppacked::varlen_attention_out", mutates_args=("out",))
def varlen_attention_out(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
                         cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
                         softmax_scale: Optional[float], causal: bool, softcap: float,
                         return_lse: bool, algo: str, out: Tensor) -> Tensor:
    r = _api.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                              softmax_scale, causal, softcap, return_lse, algo, out=out)
    return r[1] if return_lse else _empty_lse(q)


@varlen_attention_out.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
      softcap, return_lse, algo, out):
    return q.new_empty(_varlen_lse_shape(q, return_lse), dtype=torch.float32)


def _attention24_shapes(q, k, v, q_num_heads, kv_num_heads, return_lse):
    if q.dim() == 4:
        b, hq, sq = q.shape[0], q.shape[1], q.shape[2]
        y = (b, hq, sq, v.shape[3])
    else:
        b, sq, hq = q.shape[0], q.shape[1], q_num_heads
        y = (b, sq, hq * (v.shape[2] // kv_num_heads))
    return y, ((b, hq, sq) if return_lse else (0,))


@torch.library.custom_op("oppacked::attention24", mutates_args=())
def attention24(q: Tensor, k: Tensor, v: Tensor, nonpad_kv_seqlen: Optional[Tensor],
                q_num_heads: Optional[int], kv_num_heads: Optional[int], scale: Optional[float],
                is_causal: bool, softcap: float, return_lse: bool,
                algo: str) -> Tuple[Tensor, Tensor]:
    r = _api.attention24(q, k, v, nonpad_kv_seqlen, q_num_heads, kv_num_heads, scale, is_causal,
                         softcap, return_lse, algo)
    return r if return_lse else (r, _empty_lse(q))


@attention24.register_fake
def _(q, k, v, nonpad_kv_seqlen, q_num_heads, kv_num_heads, scale, is_causal, softcap, return_lse,
      algo):
    y, lse = _attention24_shapes(q, k, v, q_num_heads, kv_num_heads, return_lse)
    return q.new_empty(y), q.new_empty(lse, dtype=torch.float32)


@torch.library.custom_op("oppacked::attention24_out", mutates_args=("out",))
def attention24_out(q: Tensor, k: Tensor, v: Tensor, nonpad_kv_seqlen: Optional[Tensor],
                    q_num_heads: Optional[int], kv_num_heads: Optional[int],
                    scale: Optional[float], is_causal: bool, softcap: float, return_lse: bool,
                    algo: str, out: Tensor) -> Tensor:
    r = _api.attention24(q, k, v, nonpad_kv_seqlen, q_num_heads, kv_num_heads, scale, is_causal,
                         softcap, return_lse, algo, out=out)
    return r[1] if return_lse else _empty_lse(q)


@attention24_out.register_fake
def _(q, k, v, nonpad_kv_seqlen, q_num_heads, kv_num_heads, scale, is_causal, softcap, return_lse,
      algo, out):
    _, lse = _attention24_shapes(q, k, v, q_num_heads, kv_num_heads, return_lse)
    return q.new_empty(lse, dtype=torch.float32)
