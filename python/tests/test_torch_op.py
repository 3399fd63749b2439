"""test_torch_op.py - the PyTorch custom ops without a GPU (skipped where
torch is not importable): their schemas, their fake implementations'
shapes (what torch.compile sees), a full-graph trace through the public
functions, and that CPU tensors raise OppError instead of reaching the
library's run path."""
import pytest

import oppacked

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("PyTorch < 2.4 has no torch.library.custom_op", allow_module_level=True)

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402


def test_schemas():
    # The four ops are registered with flash_attn_varlen_func's / ONNX's argument names.
    ops = torch.ops.oppacked
    s = str(ops.varlen_attention.default._schema)
    for arg in ("cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k", "softmax_scale",
                "causal", "softcap", "return_lse", "algo"):
        assert arg in s, s
    assert "Tensor(a" in str(ops.varlen_attention_out.default._schema)  # out is mutated
    s = str(ops.attention24.default._schema)
    for arg in ("nonpad_kv_seqlen", "q_num_heads", "kv_num_heads", "scale", "is_causal"):
        assert arg in s, s
    assert "Tensor(a" in str(ops.attention24_out.default._schema)


@pytest.mark.parametrize("return_lse", [False, True])
def test_fake_shapes(return_lse):
    # The fake implementations give out [total_q, Hq, Dv] / y and lse [Hq, total_q] / [B, Hq, S_q].
    with FakeTensorMode():
        q = torch.empty(70, 8, 64, dtype=torch.bfloat16)
        k = torch.empty(90, 2, 64, dtype=torch.bfloat16)
        v = torch.empty(90, 2, 32, dtype=torch.bfloat16)
        cu = torch.empty(4, dtype=torch.int32)
        out, lse = torch.ops.oppacked.varlen_attention(q, k, v, cu, cu, 40, 50, None, True, 0.0,
                                                       return_lse, "auto")
        assert out.shape == (70, 8, 32) and out.dtype == torch.bfloat16
        assert lse.shape == ((8, 70) if return_lse else (0,)) and lse.dtype == torch.float32
        q4, k4, v4 = (torch.empty(2, h, s, d) for h, s, d in ((8, 16, 64), (4, 32, 64),
                                                              (4, 32, 16)))
        y, lse = torch.ops.oppacked.attention24(q4, k4, v4, None, None, None, None, False, 0.0,
                                                return_lse, "auto")
        assert y.shape == (2, 8, 16, 16)
        assert lse.shape == ((2, 8, 16) if return_lse else (0,))
        q3, k3, v3 = torch.empty(2, 16, 8 * 64), torch.empty(2, 32, 4 * 64), torch.empty(2, 32, 64)
        y, lse = torch.ops.oppacked.attention24(q3, k3, v3, None, 8, 4, None, False, 0.0,
                                                return_lse, "auto")
        assert y.shape == (2, 16, 8 * 16)


def test_compile_traces_full_graph_then_refuses_cpu(lib_loaded):
    # torch.compile(fullgraph=True) traces the public call into one graph holding the op;
    # running it on CPU tensors raises OppError (not a crash, not a graph break).
    seen = []

    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    def f(q, k, v, cu):
        out, lse = oppacked.varlen_attention(q, k, v, cu, cu, 40, 40, causal=True,
                                             return_lse=True)
        return out * 2, lse

    q = torch.zeros(70, 8, 64, dtype=torch.bfloat16)
    k = torch.zeros(70, 2, 64, dtype=torch.bfloat16)
    cu = torch.tensor([0, 30, 70], dtype=torch.int32)
    torch._dynamo.reset()
    with pytest.raises(oppacked.OppError) as e:
        torch.compile(f, fullgraph=True, backend=backend)(q, k, k, cu)
    assert e.value.name == "BAD_PARAM" and "cpu" in e.value.message
    assert any("oppacked.varlen_attention" in t for t in seen), seen


def test_cpu_tensors_raise_opperror(lib_loaded):
    # Host tensors are refused with the status name, through the op and the direct call.
    q = torch.zeros(10, 2, 64, dtype=torch.float16)
    cu = torch.tensor([0, 10], dtype=torch.int32)
    for kwargs in ({}, {"validate": True}):
        with pytest.raises(oppacked.OppError) as e:
            oppacked.varlen_attention(q, q, q, cu, cu, 10, 10, **kwargs)
        assert e.value.name == "BAD_PARAM"
    with pytest.raises(oppacked.OppError):
        oppacked.attention24(q.view(1, 10, 2, 64), q.view(1, 10, 2, 64), q.view(1, 10, 2, 64))
