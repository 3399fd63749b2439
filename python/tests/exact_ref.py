"""exact_ref.py - the exact CPU packed reference (opp_ref_packed_attention,
reference/opp_reference.h) through ctypes, for the tests that compare the
GPU's EXACT output with it bit for bit.

The reference lives in a test-only shared library, liboppacked_ref.so
(//python:liboppacked_ref_so: the reference and the host validation code,
no kernel, no CUDA), looked up at $OPPACKED_REF_LIB, else beside the
liboppacked.so the package loaded. Host buffers only.
"""
import ctypes
import os

import oppacked
from oppacked import _lib

_ref = None


def library_path():
    """Where liboppacked_ref.so is looked for (it may not exist)."""
    env = os.environ.get("OPPACKED_REF_LIB")
    if env:
        return env
    return os.path.join(os.path.dirname(oppacked.library_path()), "liboppacked_ref.so")


def load():
    """The loaded reference library, or None when there is none (a
    pip-installed package ships without it)."""
    global _ref
    if _ref is not None:
        return _ref
    path = library_path()
    if not os.path.exists(path):
        return None
    ref = ctypes.CDLL(path)
    ref.opp_ref_packed_attention.restype = ctypes.c_int
    ref.opp_ref_packed_attention.argtypes = [ctypes.POINTER(_lib.AttentionDesc)] + [
        ctypes.c_void_p] * 6
    ref.opp_ref_threads.restype = ctypes.c_int
    ref.opp_ref_threads.argtypes = []
    ref.opp_last_error_message.restype = ctypes.c_char_p
    ref.opp_last_error_message.argtypes = []
    _ref = ref
    return _ref


def packed_attention(desc, cu_seqlens_q, cu_seqlens_kv, q, k, v, out):
    """opp_ref_packed_attention on host memory: desc an oppacked.AttentionDesc,
    cu_seqlens_q / cu_seqlens_kv and q, k, v, out host addresses (ints) laid
    out as desc says (cu_seqlens int32 [batch + 1]). Raises OppError, with
    the reference's own message, unless it returns SUCCESS."""
    ref = load()
    assert ref is not None, f"no {library_path()}"
    status = ref.opp_ref_packed_attention(ctypes.byref(desc), cu_seqlens_q, cu_seqlens_kv, q, k, v,
                                          out)
    if status != _lib.SUCCESS:
        raise oppacked.OppError(status, ref.opp_last_error_message().decode(errors="replace"))
