"""_lib.py - liboppacked.so through ctypes: finding and loading it, the
descriptor structs of lib/oppacked.h, the status -> exception mapping, and
thin wrappers of the host validation API (no GPU needed).

The library is looked up, first hit wins:
  1. $OPPACKED_LIB (a path to the .so; nothing else is tried when it is set);
  2. liboppacked.so next to this package (bundled by `pip install` when the
     Bazel build was there: python/setup.py);
  3. $OPPACKED_PREFIX/lib/liboppacked.so (a `bazel run //:install` prefix);
  4. <sys.prefix>/lib/liboppacked.so (installed into the environment);
  5. liboppacked.so.0 through the dynamic loader (LD_LIBRARY_PATH, ldconfig).
"""
import ctypes
import os
import sys
import threading

# --- status and errors


class OppError(RuntimeError):
    """A liboppacked status other than SUCCESS.

    Attributes:
      status:  the opp_status_t value (e.g. 1005).
      name:    its name without the OPP_STATUS_ prefix
               (e.g. "BAD_PARAM_KV_HEADS_NOT_DIVIDING").
      message: the library's opp_last_error_message() (or, for a check the
               Python layer makes before calling the library, its own text).
    """

    def __init__(self, status, message):
        self.status = int(status)
        self.name = status_name(self.status)
        self.message = message
        super().__init__(f"{self.name}: {message}")


class LibraryNotFound(OSError):
    """liboppacked.so could not be loaded from any place this package looks."""


# The statuses the Python layer raises itself (values pinned in oppacked.h).
SUCCESS = 0
BAD_PARAM = 1000
BAD_PARAM_NULL_POINTER = 1001
BAD_PARAM_MISALIGNED = 1002
BAD_PARAM_DTYPE = 1014
BAD_PARAM_DTYPE_MISMATCH = 1015
BAD_PARAM_STRIDE = 1016
BAD_PARAM_ALGO = 1017
BAD_PARAM_SEQLENS_COUNT = 1018
BAD_PARAM_SEQLENS_COUNT_MISMATCH = 1019
BAD_PARAM_WORKSPACE = 1023
BAD_PARAM_SHAPE = 1024
BAD_PARAM_NONPAD = 1026
BAD_PARAM_SCALE = 1011
BAD_PARAM_IS_CAUSAL = 1013
BAD_PARAM_MAX_SEQLEN = 1010
NOT_SUPPORTED_FEATURE = 2005
CUDA_ERROR = 3000
NO_DEVICE = 3003

# opp_dtype_t: ONNX TensorProto.DataType values.
DTYPE_F32 = 1
DTYPE_F16 = 10
DTYPE_F64 = 11
DTYPE_BF16 = 16

# opp_algo_t (lib/oppacked.h); "tf32x3" is opt-in: "auto" never takes it.
ALGOS = {"exact": 0, "fast": 1, "auto": 2, "tf32x3": 3}

# --- the descriptor structs (lib/oppacked.h; tests/test_layout.py compares
# their sizes and offsets with the C compiler's)


class AttentionDesc(ctypes.Structure):
    """opp_attention_desc_t: the packed layout."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("q_dtype", ctypes.c_int),
        ("k_dtype", ctypes.c_int),
        ("v_dtype", ctypes.c_int),
        ("out_dtype", ctypes.c_int),
        ("batch", ctypes.c_int32),
        ("num_heads", ctypes.c_int32),
        ("kv_num_heads", ctypes.c_int32),
        ("head_size", ctypes.c_int32),
        ("v_head_size", ctypes.c_int32),
        ("total_q", ctypes.c_int64),
        ("total_kv", ctypes.c_int64),
        ("max_seqlen_q", ctypes.c_int32),
        ("max_seqlen_kv", ctypes.c_int32),
        ("scale", ctypes.c_float),
        ("is_causal", ctypes.c_int32),
        ("softcap", ctypes.c_float),
        ("q_row_stride", ctypes.c_int64),
        ("k_row_stride", ctypes.c_int64),
        ("v_row_stride", ctypes.c_int64),
        ("out_row_stride", ctypes.c_int64),
        ("algo", ctypes.c_int),
    ]


class Attention24Desc(ctypes.Structure):
    """opp_attention24_desc_t: ONNX Attention-24's padded layout."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("q_dtype", ctypes.c_int),
        ("k_dtype", ctypes.c_int),
        ("v_dtype", ctypes.c_int),
        ("out_dtype", ctypes.c_int),
        ("input_rank", ctypes.c_int32),
        ("batch", ctypes.c_int32),
        ("num_heads", ctypes.c_int32),
        ("kv_num_heads", ctypes.c_int32),
        ("head_size", ctypes.c_int32),
        ("v_head_size", ctypes.c_int32),
        ("q_seqlen", ctypes.c_int32),
        ("kv_seqlen", ctypes.c_int32),
        ("scale", ctypes.c_float),
        ("is_causal", ctypes.c_int32),
        ("softcap", ctypes.c_float),
        ("algo", ctypes.c_int),
    ]


class Varlen(ctypes.Structure):
    """opp_varlen_t: the device cu_seqlens pointers."""

    _fields_ = [("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_kv", ctypes.c_void_p)]


# --- loading

_P = ctypes.POINTER
_S = ctypes.c_int  # opp_status_t
_VP = ctypes.c_void_p
_PROTOTYPES = {
    "opp_version_string": (ctypes.c_char_p, []),
    "opp_version_number": (ctypes.c_uint, []),
    "opp_status_name": (ctypes.c_char_p, [_S]),
    "opp_status_string": (ctypes.c_char_p, [_S]),
    "opp_last_error_message": (ctypes.c_char_p, []),
    "opp_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "opp_attention_desc_init_sized": (None, [_P(AttentionDesc), ctypes.c_size_t]),
    "opp_attention_claim_check": (_S, [_P(AttentionDesc)]),
    "opp_attention_desc_check": (_S, [_P(AttentionDesc)]),
    "opp_varlen_check": (
        _S,
        [_P(AttentionDesc), _P(ctypes.c_int32), ctypes.c_size_t, _P(ctypes.c_int32),
         ctypes.c_size_t],
    ),
    "opp_attention_kernel_query": (_S, [_P(AttentionDesc), ctypes.c_int32, _P(ctypes.c_char_p)]),
    "opp_packed_attention_workspace_size": (_S, [_P(AttentionDesc), _P(ctypes.c_size_t)]),
    "opp_packed_attention_fwd_lse": (
        _S,
        [_P(AttentionDesc), _P(Varlen), _VP, _VP, _VP, _VP, _VP, _VP, ctypes.c_size_t, _VP],
    ),
    "opp_device_sm_arch": (_S, [_P(ctypes.c_int32)]),
    "opp_attention_device_status": (_S, [_VP, ctypes.c_size_t, _VP]),
    "opp_attention24_desc_init_sized": (None, [_P(Attention24Desc), ctypes.c_size_t]),
    "opp_attention24_desc_check": (_S, [_P(Attention24Desc)]),
    "opp_attention24_kernel_query": (
        _S, [_P(Attention24Desc), ctypes.c_int32, _P(ctypes.c_char_p)]),
    "opp_attention24_nonpad_workspace_size": (_S, [_P(Attention24Desc), _P(ctypes.c_size_t)]),
    "opp_attention24_nonpad_fwd_lse": (
        _S,
        [_P(Attention24Desc), _VP, _VP, _VP, _VP, _VP, _VP, _VP, ctypes.c_size_t, _VP],
    ),
}

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates():
    env = os.environ.get("OPPACKED_LIB")
    if env:
        return [env]
    out = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "liboppacked.so")]
    prefix = os.environ.get("OPPACKED_PREFIX")
    if prefix:
        out.append(os.path.join(prefix, "lib", "liboppacked.so"))
    out.append(os.path.join(sys.prefix, "lib", "liboppacked.so"))
    out.append("liboppacked.so.0")
    return out


def lib():
    """The loaded liboppacked.so (a ctypes.CDLL), loaded on first use.

    Raises LibraryNotFound naming every place tried."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(f"{path} (absent)")
                continue
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            for name, (restype, argtypes) in _PROTOTYPES.items():
                fn = getattr(handle, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib, _lib_path = handle, path
            return _lib
        raise LibraryNotFound(
            "liboppacked.so not found; set OPPACKED_LIB=/path/to/liboppacked.so "
            "(bazel build //:liboppacked.so) or OPPACKED_PREFIX to a `bazel run //:install` "
            "prefix. Tried: " + "; ".join(tried)
        )


def library_path():
    """The path liboppacked.so was loaded from (loads it if needed)."""
    lib()
    return _lib_path


def version():
    """The loaded library's version string, e.g. "0.1.0"."""
    return lib().opp_version_string().decode()


def status_name(status):
    """"BAD_PARAM_SHAPE" for 1024 (the library's own names); "status N"
    when the library is not loaded."""
    if _lib is None:
        return f"status {int(status)}"
    return _lib.opp_status_name(int(status)).decode()


def check(status):
    """Raises OppError(status, opp_last_error_message()) unless SUCCESS."""
    if status != SUCCESS:
        raise OppError(status, lib().opp_last_error_message().decode(errors="replace"))


def fail(status, message):
    """Raises OppError for a check made in Python (the library is loaded first
    so the exception carries the library's status name)."""
    lib()
    raise OppError(status, message)


# --- the host validation API (pure host code in the library: no GPU)


def attention_desc(**fields):
    """An AttentionDesc set by opp_attention_desc_init (struct_size: this
    binding's sizeof, as the C macro does), then the given fields."""
    d = AttentionDesc()
    lib().opp_attention_desc_init_sized(ctypes.byref(d), ctypes.sizeof(d))
    for k, v in fields.items():
        setattr(d, k, v)
    return d


def attention24_desc(**fields):
    """An Attention24Desc set by opp_attention24_desc_init (struct_size: this
    binding's sizeof), then the given fields."""
    d = Attention24Desc()
    lib().opp_attention24_desc_init_sized(ctypes.byref(d), ctypes.sizeof(d))
    for k, v in fields.items():
        setattr(d, k, v)
    return d


def claim_check(desc):
    """opp_attention_claim_check: raises OppError if the node cannot be claimed."""
    check(lib().opp_attention_claim_check(ctypes.byref(desc)))


def desc_check(desc):
    """opp_attention_desc_check / opp_attention24_desc_check: raises OppError."""
    if isinstance(desc, Attention24Desc):
        check(lib().opp_attention24_desc_check(ctypes.byref(desc)))
    else:
        check(lib().opp_attention_desc_check(ctypes.byref(desc)))


def varlen_check(desc, cu_seqlens_q, cu_seqlens_kv):
    """opp_varlen_check on HOST sequences of ints: raises OppError."""
    q = (ctypes.c_int32 * len(cu_seqlens_q))(*cu_seqlens_q)
    kv = (ctypes.c_int32 * len(cu_seqlens_kv))(*cu_seqlens_kv)
    check(lib().opp_varlen_check(ctypes.byref(desc), q, len(q), kv, len(kv)))


def kernel_query(desc, sm_arch):
    """The kernel the run path launches for desc on compute capability sm_arch
    (e.g. 90), or OppError saying why there is none."""
    name = ctypes.c_char_p()
    if isinstance(desc, Attention24Desc):
        check(lib().opp_attention24_kernel_query(ctypes.byref(desc), sm_arch, ctypes.byref(name)))
    else:
        check(lib().opp_attention_kernel_query(ctypes.byref(desc), sm_arch, ctypes.byref(name)))
    return name.value.decode()


def workspace_size(desc):
    """Bytes of device workspace a run of desc needs (raises OppError)."""
    n = ctypes.c_size_t()
    if isinstance(desc, Attention24Desc):
        check(lib().opp_attention24_nonpad_workspace_size(ctypes.byref(desc), ctypes.byref(n)))
    else:
        check(lib().opp_packed_attention_workspace_size(ctypes.byref(desc), ctypes.byref(n)))
    return n.value


def device_sm_arch():
    """The current CUDA device's compute capability (e.g. 90); OppError
    NO_DEVICE without one."""
    sm = ctypes.c_int32()
    check(lib().opp_device_sm_arch(ctypes.byref(sm)))
    return sm.value
