"""_api.py - the framework-neutral calls: arrays -> descriptor -> host
checks -> caller's framework allocates output, LSE and workspace -> one
liboppacked run on the caller's current stream.

The checks the descriptor cannot express (ranks, one tensor's shape
against another's, dtypes of cu_seqlens, layout inside a row) are made
here and raise OppError with the status the library uses for that kind of
fault; everything else (head counts, sizes, dtypes, scale, softcap,
max_seqlen, strides, support) is the library's own check and message.
"""
import contextlib
import operator
import sys

from . import _arrays, _lib

INT32_MAX = 2**31 - 1


def _i32(name, value, status):
    try:
        v = operator.index(value)
    except TypeError:
        _lib.fail(status, f"{name} = {value!r} is not an integer")
    if not -(2**31) <= v <= INT32_MAX:
        _lib.fail(status, f"{name} = {v} does not fit in int32")
    return v


def _algo(algo):
    a = _lib.ALGOS.get(str(algo).lower()) if isinstance(algo, str) else None
    if a is None:
        _lib.fail(_lib.BAD_PARAM_ALGO, f"algo = {algo!r}; use 'auto', 'fast', 'exact' or 'tf32x3'")
    return a


def _scale(name, value):
    """None -> 0 (the library's default 1/sqrt(head_size)); an explicit 0
    is refused rather than silently meaning the default."""
    if value is None:
        return 0.0
    s = float(value)
    if s == 0.0:
        _lib.fail(_lib.BAD_PARAM_SCALE, f"{name} = 0; pass None for the default 1/sqrt(head_size)")
    return s


def _flag(name, value, status):
    if value is True or value is False:
        return int(value)
    return _i32(name, value, status)


def _rank(v, n, dims):
    if v.ndim != n:
        _lib.fail(_lib.BAD_PARAM_SHAPE, f"{v.name} has shape {list(v.shape)}; expected rank {n} "
                                        f"[{dims}]")


def _same(a, adim, b, bdim, what):
    if a.shape[adim] != b.shape[bdim]:
        _lib.fail(_lib.BAD_PARAM_SHAPE,
                  f"{what}: {a.name}.shape[{adim}] = {a.shape[adim]} but {b.name}.shape[{bdim}] = "
                  f"{b.shape[bdim]} ({a.name} {list(a.shape)}, {b.name} {list(b.shape)})")


def _row_stride(v):
    """Row stride (elements) of a [rows, H, D] array whose rows may be strided
    but whose [H, D] part must be dense; 0 (dense) for fewer than two rows."""
    if not v.is_dense_from(1):
        _lib.fail(_lib.BAD_PARAM_STRIDE,
                  f"{v.name} has strides {list(v.strides)} for shape {list(v.shape)}: the "
                  f"[heads, head_size] part of each row must be contiguous "
                  f"(strides [*, {v.shape[2]}, 1])")
    return v.strides[0] if v.shape[0] > 1 else 0


def _dense(v):
    if not v.is_dense_from(0):
        _lib.fail(_lib.BAD_PARAM_STRIDE,
                  f"{v.name} has strides {list(v.strides)} for shape {list(v.shape)}; the "
                  "Attention-24 layout must be C-contiguous")


def _index_array(v, dtype, count, status):
    if v.ndim != 1:
        _lib.fail(_lib.BAD_PARAM_SHAPE, f"{v.name} has shape {list(v.shape)}; expected rank 1")
    if v.dtype != dtype:
        _lib.fail(_lib.BAD_PARAM_DTYPE, f"{v.name} has dtype "
                                        f"{_arrays.ONNX_NAMES.get(v.dtype, v.dtype)}; expected "
                                        f"{_arrays.ONNX_NAMES[dtype]}")
    if count is not None and v.shape[0] != count:
        _lib.fail(status, f"{v.name} has {v.shape[0]} entries; expected {count}")
    if v.shape[0] > 1 and v.strides[0] != 1:
        _lib.fail(_lib.BAD_PARAM_STRIDE, f"{v.name} has stride {v.strides[0]}; expected 1")


def _same_device(views):
    known = [v for v in views if v.device is not None]
    for v in known[1:]:
        if v.device != known[0].device:
            _lib.fail(_lib.BAD_PARAM, f"{v.name} is on CUDA device {v.device} but "
                                      f"{known[0].name} on CUDA device {known[0].device}")
    return known[0].device if known else None


# --- the caller's framework: allocation, device and stream


class _Framework:
    """Allocates like the arrays' framework and names its current stream."""

    def __init__(self, views):
        self.device = _same_device(views)
        kinds = {v.framework for v in views}
        self.kind = "torch" if "torch" in kinds else "cupy" if "cupy" in kinds else "other"
        cai_streams = {v.stream for v in views if v.stream is not None}
        self.cai_stream = cai_streams.pop() if len(cai_streams) == 1 else None
        self.alloc_kind = self.kind
        if self.alloc_kind == "other":
            if "cupy" in sys.modules or _importable("cupy"):
                self.alloc_kind = "cupy"
            elif "torch" in sys.modules or _importable("torch"):
                self.alloc_kind = "torch"

    def _device_context(self):
        if self.device is not None and self.alloc_kind == "torch":
            import torch

            return torch.cuda.device(self.device)
        if self.device is not None and self.alloc_kind == "cupy":
            import cupy

            return cupy.cuda.Device(self.device)
        return contextlib.nullcontext()

    def _has_device(self):
        try:
            if self.alloc_kind == "torch":
                import torch

                return torch.cuda.is_available()
            import cupy

            return cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            return False

    @contextlib.contextmanager
    def on_device(self):
        """Makes the arrays' device current (through their framework, or the
        allocating one) for the allocations and the launch; OppError
        NO_DEVICE / CUDA_ERROR when the framework cannot."""
        ctx = self._device_context()
        try:
            ctx.__enter__()
        except Exception as e:
            _lib.fail(_lib.NO_DEVICE if not self._has_device() else _lib.CUDA_ERROR,
                      f"{self.alloc_kind} could not make CUDA device {self.device} current: "
                      f"{str(e).splitlines()[0] if str(e) else type(e).__name__}")
        try:
            yield
        finally:
            ctx.__exit__(None, None, None)

    def stream(self):
        """The caller's current stream (an int handle; 0 is the legacy default)."""
        if self.kind == "torch":
            import torch

            return torch.cuda.current_stream().cuda_stream
        if self.kind == "cupy":
            import cupy

            return cupy.cuda.get_current_stream().ptr
        return int(self.cai_stream) if self.cai_stream is not None else 0

    def empty(self, name, shape, dtype):
        """An uninitialised array of the caller's framework, with its view. CuPy
        has no bfloat16: bf16 arrays come from PyTorch then, when it is there."""
        kind = self.alloc_kind
        if kind == "cupy" and _arrays.ONNX_NAMES[dtype] == "bfloat16":
            if not ("torch" in sys.modules or _importable("torch")):
                _lib.fail(_lib.NOT_SUPPORTED_FEATURE,
                          f"cannot allocate {name}: CuPy has no bfloat16 and PyTorch is not "
                          "importable; pass out=")
            kind = "torch"
        if kind == "torch":
            import torch

            tdtype = getattr(torch, _arrays.ONNX_NAMES[dtype])
            dev = torch.device("cuda", self.device) if self.device is not None else "cuda"
            return _arrays.view(name, torch.empty(shape, dtype=tdtype, device=dev))
        if kind == "cupy":
            import cupy

            return _arrays.view(name, cupy.empty(shape, dtype=_arrays.ONNX_NAMES[dtype]))
        _lib.fail(_lib.NOT_SUPPORTED_FEATURE,
                  f"cannot allocate {name}: the arrays come from neither PyTorch nor CuPy and "
                  "neither is importable; pass out= and workspace= (and no return_lse)")


def _importable(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _workspace(fw, workspace, nbytes):
    """(view, bytes): the caller's workspace (the library checks its size and
    alignment) or one the framework allocates."""
    if workspace is None:
        w = fw.empty("workspace", (max(nbytes, 1),), 2)  # uint8
        return w, nbytes
    w = _arrays.view("workspace", workspace)
    if not w.is_dense_from(0):
        _lib.fail(_lib.BAD_PARAM_STRIDE, "workspace must be contiguous")
    return w, w.numel() * _arrays.ONNX_ITEMSIZE[w.dtype]


# --- the packed layout (flash_attn_varlen_func's arguments)


def _host_ints(v):
    """A host list of a device index array (a synchronizing copy)."""
    if v.framework == "torch":
        return [int(x) for x in v.obj.tolist()]
    if v.framework == "cupy":
        return [int(x) for x in v.obj.get().tolist()]
    _lib.fail(_lib.NOT_SUPPORTED_FEATURE, f"validate=True copies {v.name} to the host, which "
                                          "needs a PyTorch tensor or a CuPy array")


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                     softmax_scale=None, causal=False, softcap=0.0, return_lse=False, algo="auto",
                     out=None, workspace=None, validate=False):
    """The framework-neutral packed call (oppacked.varlen_attention's body):
    returns out, or (out, lse) with return_lse. validate: copy cu_seqlens to
    the host (synchronizes) and check them with opp_varlen_check first."""
    _lib.lib()
    qv, kv, vv = _arrays.view("q", q), _arrays.view("k", k), _arrays.view("v", v)
    cq, ck = _arrays.view("cu_seqlens_q", cu_seqlens_q), _arrays.view("cu_seqlens_k", cu_seqlens_k)
    _rank(qv, 3, "total_q, num_heads, head_size")
    _rank(kv, 3, "total_k, kv_num_heads, head_size")
    _rank(vv, 3, "total_k, kv_num_heads, v_head_size")
    _same(kv, 0, vv, 0, "k and v rows")
    _same(kv, 1, vv, 1, "k and v heads")
    _same(qv, 2, kv, 2, "q and k head_size")
    for x in (kv, vv):
        if x.shape[1] == 0 or x.shape[2] == 0:
            _lib.fail(_lib.BAD_PARAM_SHAPE, f"{x.name} has shape {list(x.shape)}: no heads or "
                                            "an empty head")
    _index_array(cq, 6, None, _lib.BAD_PARAM_SEQLENS_COUNT)
    _index_array(ck, 6, cq.shape[0], _lib.BAD_PARAM_SEQLENS_COUNT_MISMATCH)
    if cq.shape[0] < 2:
        _lib.fail(_lib.BAD_PARAM_SEQLENS_COUNT, f"cu_seqlens_q has {cq.shape[0]} entries; a batch "
                                                "of B sequences needs B + 1 >= 2")
    total_q, hq, d = qv.shape
    dv = vv.shape[2]
    ov = None
    if out is not None:
        ov = _arrays.view("out", out)
        if ov.shape != (total_q, hq, dv):
            _lib.fail(_lib.BAD_PARAM_SHAPE, f"out has shape {list(ov.shape)}; expected "
                                            f"[{total_q}, {hq}, {dv}] (total_q, num_heads, "
                                            "v_head_size)")
    desc = _lib.attention_desc(
        q_dtype=qv.dtype, k_dtype=kv.dtype, v_dtype=vv.dtype,
        out_dtype=ov.dtype if ov is not None else qv.dtype,
        batch=_i32("batch", cq.shape[0] - 1, _lib.BAD_PARAM_SEQLENS_COUNT),
        num_heads=_i32("num_heads", hq, _lib.BAD_PARAM_SHAPE),
        kv_num_heads=_i32("kv_num_heads", kv.shape[1], _lib.BAD_PARAM_SHAPE),
        head_size=_i32("head_size", d, _lib.BAD_PARAM_SHAPE),
        v_head_size=_i32("v_head_size", dv, _lib.BAD_PARAM_SHAPE),
        total_q=total_q, total_kv=kv.shape[0],
        max_seqlen_q=_i32("max_seqlen_q", max_seqlen_q, _lib.BAD_PARAM_MAX_SEQLEN),
        max_seqlen_kv=_i32("max_seqlen_k", max_seqlen_k, _lib.BAD_PARAM_MAX_SEQLEN),
        scale=_scale("softmax_scale", softmax_scale),
        is_causal=_flag("causal", causal, _lib.BAD_PARAM_IS_CAUSAL),
        softcap=float(softcap),
        q_row_stride=_row_stride(qv), k_row_stride=_row_stride(kv), v_row_stride=_row_stride(vv),
        out_row_stride=_row_stride(ov) if ov is not None else 0,
        algo=_algo(algo))
    _lib.desc_check(desc)
    if validate:
        _lib.varlen_check(desc, _host_ints(cq), _host_ints(ck))
    nbytes = _lib.workspace_size(desc)
    views = [qv, kv, vv, cq, ck] + ([ov] if ov is not None else [])
    fw = _Framework(views)
    with fw.on_device():
        if ov is None:
            ov = fw.empty("out", (total_q, hq, dv), qv.dtype)
        lse = fw.empty("lse", (hq, total_q), 1) if return_lse else None
        ws, ws_bytes = _workspace(fw, workspace, nbytes)
        varlen = _lib.Varlen(cq.ptr, ck.ptr)
        _lib.check(_lib.lib().opp_packed_attention_fwd_lse(
            desc, varlen, qv.ptr, kv.ptr, vv.ptr, ov.ptr, lse.ptr if lse is not None else None,
            ws.ptr, ws_bytes, fw.stream()))
    return (ov.obj, lse.obj) if return_lse else ov.obj


# --- ONNX Attention-24's padded layout (nonpad_kv_seqlen)


def _attention24_heads(qv, kv, vv, q_num_heads, kv_num_heads):
    """(rank, B, Hq, Hkv, S_q, S_kv, D, Dv) from the shapes (4D) or from the
    shapes and the head counts (3D, ONNX's q_num_heads / kv_num_heads)."""
    if qv.ndim not in (3, 4):
        _lib.fail(_lib.BAD_PARAM_SHAPE,
                  f"q has shape {list(qv.shape)}; expected rank 4 [B, q_num_heads, S_q, D] "
                  "or rank 3 [B, S_q, q_num_heads*D]")
    for x in (kv, vv):
        if x.ndim != qv.ndim:
            _lib.fail(_lib.BAD_PARAM_SHAPE, f"{x.name} has rank {x.ndim} but q rank {qv.ndim}")
    _same(qv, 0, kv, 0, "batch")
    _same(kv, 0, vv, 0, "batch")
    if qv.ndim == 4:
        _same(kv, 1, vv, 1, "k and v heads")
        _same(kv, 2, vv, 2, "k and v sequence length")
        _same(qv, 3, kv, 3, "q and k head_size")
        b, hq, sq, d = qv.shape
        hkv, skv, dv = kv.shape[1], kv.shape[2], vv.shape[3]
        for name, given, have in (("q_num_heads", q_num_heads, hq),
                                  ("kv_num_heads", kv_num_heads, hkv)):
            if given is not None and given != have:
                _lib.fail(_lib.BAD_PARAM_SHAPE, f"{name} = {given} but the 4D tensors have "
                                                f"{have} heads")
        return 4, b, hq, hkv, sq, skv, d, dv
    if q_num_heads is None or kv_num_heads is None:
        _lib.fail(_lib.BAD_PARAM_SHAPE, "3D inputs [B, S, heads*head_size] need q_num_heads and "
                                        "kv_num_heads")
    hq = _i32("q_num_heads", q_num_heads, _lib.BAD_PARAM_SHAPE)
    hkv = _i32("kv_num_heads", kv_num_heads, _lib.BAD_PARAM_SHAPE)
    if hq <= 0 or hkv <= 0:
        _lib.fail(_lib.BAD_PARAM_SHAPE, f"q_num_heads = {hq}, kv_num_heads = {hkv}: must be > 0")
    _same(kv, 1, vv, 1, "k and v sequence length")
    for x, h in ((qv, hq), (kv, hkv), (vv, hkv)):
        if x.shape[2] % h != 0:
            _lib.fail(_lib.BAD_PARAM_SHAPE, f"{x.name}.shape[2] = {x.shape[2]} is not a multiple "
                                            f"of its {h} heads")
    d = qv.shape[2] // hq
    if kv.shape[2] // hkv != d:
        _lib.fail(_lib.BAD_PARAM_SHAPE, f"q head_size {d} != k head_size {kv.shape[2] // hkv}")
    return 3, qv.shape[0], hq, hkv, qv.shape[1], kv.shape[1], d, vv.shape[2] // hkv


def attention24(q, k, v, nonpad_kv_seqlen=None, q_num_heads=None, kv_num_heads=None, scale=None,
                is_causal=False, softcap=0.0, return_lse=False, algo="auto", out=None,
                workspace=None):
    """The framework-neutral Attention-24 call (oppacked.attention24's body):
    returns y, or (y, lse) with return_lse."""
    _lib.lib()
    qv, kv, vv = _arrays.view("q", q), _arrays.view("k", k), _arrays.view("v", v)
    rank, b, hq, hkv, sq, skv, d, dv = _attention24_heads(qv, kv, vv, q_num_heads, kv_num_heads)
    if hkv == 0 or dv == 0:  # 0 would mean "the default" to the library
        _lib.fail(_lib.BAD_PARAM_SHAPE, f"k/v have {hkv} heads of v_head_size {dv}")
    for x in (qv, kv, vv):
        _dense(x)
    y_shape = (b, hq, sq, dv) if rank == 4 else (b, sq, hq * dv)
    ov = None
    if out is not None:
        ov = _arrays.view("out", out)
        if ov.shape != y_shape:
            _lib.fail(_lib.BAD_PARAM_SHAPE, f"out has shape {list(ov.shape)}; expected "
                                            f"{list(y_shape)}")
        _dense(ov)
    nv = None
    if nonpad_kv_seqlen is not None:
        nv = _arrays.view("nonpad_kv_seqlen", nonpad_kv_seqlen)
        _index_array(nv, 7, b, _lib.BAD_PARAM_NONPAD)
    desc = _lib.attention24_desc(
        q_dtype=qv.dtype, k_dtype=kv.dtype, v_dtype=vv.dtype,
        out_dtype=ov.dtype if ov is not None else qv.dtype,
        input_rank=rank, batch=_i32("batch", b, _lib.BAD_PARAM_SHAPE),
        num_heads=_i32("num_heads", hq, _lib.BAD_PARAM_SHAPE),
        kv_num_heads=_i32("kv_num_heads", hkv, _lib.BAD_PARAM_SHAPE),
        head_size=_i32("head_size", d, _lib.BAD_PARAM_SHAPE),
        v_head_size=_i32("v_head_size", dv, _lib.BAD_PARAM_SHAPE),
        q_seqlen=_i32("q_seqlen", sq, _lib.BAD_PARAM_SHAPE),
        kv_seqlen=_i32("kv_seqlen", skv, _lib.BAD_PARAM_SHAPE),
        scale=_scale("scale", scale),
        is_causal=_flag("is_causal", is_causal, _lib.BAD_PARAM_IS_CAUSAL),
        softcap=float(softcap), algo=_algo(algo))
    _lib.desc_check(desc)
    nbytes = _lib.workspace_size(desc)
    views = [qv, kv, vv] + [x for x in (ov, nv) if x is not None]
    fw = _Framework(views)
    with fw.on_device():
        if nv is None:  # no padding: every sequence has all S_kv keys
            nv = _full_int64(fw, b, skv)
        if ov is None:
            ov = fw.empty("out", y_shape, qv.dtype)
        lse = fw.empty("lse", (b, hq, sq), 1) if return_lse else None
        ws, ws_bytes = _workspace(fw, workspace, nbytes)
        _lib.check(_lib.lib().opp_attention24_nonpad_fwd_lse(
            desc, nv.ptr, qv.ptr, kv.ptr, vv.ptr, ov.ptr, lse.ptr if lse is not None else None,
            ws.ptr, ws_bytes, fw.stream()))
    return (ov.obj, lse.obj) if return_lse else ov.obj


def _full_int64(fw, n, value):
    if fw.alloc_kind == "torch":
        import torch

        dev = torch.device("cuda", fw.device) if fw.device is not None else "cuda"
        return _arrays.view("nonpad_kv_seqlen", torch.full((n,), value, dtype=torch.int64,
                                                           device=dev))
    if fw.alloc_kind == "cupy":
        import cupy

        return _arrays.view("nonpad_kv_seqlen", cupy.full((n,), value, dtype="int64"))
    _lib.fail(_lib.NOT_SUPPORTED_FEATURE, "nonpad_kv_seqlen = None needs PyTorch or CuPy to make "
                                          "the array; pass it")
