"""conftest.py - shared fixtures: fake CUDA arrays that expose
__cuda_array_interface__ or DLPack with made-up device pointers (nothing
ever dereferences them: every test using them expects the call to be
refused before any launch), and the library's header for layout checks."""
import ctypes
import os

import pytest

import oppacked
from oppacked import _arrays


class FakeCudaArray:
    """A CUDA array that is only a __cuda_array_interface__ (version 3)."""

    def __init__(self, shape, typestr, ptr=0x7F0000000000, strides=None, stream=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, False), "version": 3,
            "strides": strides, "stream": stream,
        }


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeDLPackArray:
    """An array that is only DLPack: __dlpack__ returns a real "dltensor"
    capsule over a DLManagedTensor built here (no deleter)."""

    def __init__(self, shape, code, bits, ptr=0x7F0000000000, device_type=2, device_id=0,
                 strides=None, byte_offset=0):
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        m = _arrays.DLManagedTensor()
        t = m.dl_tensor
        t.data, t.ndim, t.byte_offset = ptr, len(shape), byte_offset
        t.device.device_type, t.device.device_id = device_type, device_id
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        if self._strides is not None:
            t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        self._managed = m
        self.streams = []

    def __dlpack_device__(self):
        return (self._managed.dl_tensor.device.device_type,
                self._managed.dl_tensor.device.device_id)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _PyCapsule_New(ctypes.addressof(self._managed), b"dltensor", None)


@pytest.fixture(scope="session")
def lib_loaded():
    """The library, loaded (skips nothing: a missing library is a failure)."""
    oppacked._lib.lib()
    return oppacked.library_path()


@pytest.fixture(scope="session")
def has_device(lib_loaded):
    """Whether liboppacked sees a CUDA device."""
    try:
        oppacked.device_sm_arch()
        return True
    except oppacked.OppError as e:
        assert e.name == "NO_DEVICE", str(e)
        return False


@pytest.fixture(scope="session")
def header_path():
    """lib/oppacked.h: $OPPACKED_HEADER, else the repository's."""
    path = os.environ.get("OPPACKED_HEADER") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "oppacked.h")
    if not os.path.exists(path):
        pytest.skip(f"no oppacked.h at {path}")
    return path
