"""_arrays.py - a read-only view of any CUDA array: device pointer, shape,
strides in elements, ONNX dtype code, device, and which framework made it.

Recognised, in this order:
  1. torch.Tensor (read directly: every dtype including bfloat16);
  2. objects with __cuda_array_interface__ (CuPy, Numba, PyTorch, JAX);
  3. objects with __dlpack__ / __dlpack_device__ (JAX, CuPy, PyTorch, ...),
     read from the DLPack capsule through ctypes without consuming it (the
     capsule's own destructor releases the producer's tensor).
Nothing here touches the GPU or copies data.
"""
import ctypes
import sys

from . import _lib

# --- dtypes: every source maps to the ONNX TensorProto.DataType value the
# library takes (opp_dtype_t); unsupported ONNX types are refused by the
# library with its own message, unknown ones here.

_NUMPY_TYPESTR = {  # kind + bytes -> ONNX
    "f4": 1, "u1": 2, "i1": 3, "u2": 4, "i2": 5, "i4": 6, "i8": 7, "b1": 9,
    "f2": 10, "f8": 11, "u4": 12, "u8": 13,
}
_DLPACK = {  # (code, bits) -> ONNX; codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool
    (2, 32): 1, (1, 8): 2, (0, 8): 3, (1, 16): 4, (0, 16): 5, (0, 32): 6, (0, 64): 7,
    (6, 8): 9, (2, 16): 10, (2, 64): 11, (1, 32): 12, (1, 64): 13, (4, 16): 16,
}
_TORCH_NAMES = {  # torch dtype name -> ONNX
    "float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13, "bfloat16": 16,
}
ONNX_ITEMSIZE = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}
ONNX_NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
              7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
              13: "uint64", 16: "bfloat16"}

_KDL_CUDA = 2
_KDL_CUDA_MANAGED = 13


class ArrayView:
    """What the library needs to know of one argument.

    name: the argument's name (for messages); ptr: device address (int);
    shape, strides: tuples (strides in elements); dtype: ONNX code;
    device: CUDA ordinal or None when the producer does not say;
    framework: "torch", "cupy" or "other"; obj: the array; stream: the
    stream a __cuda_array_interface__ producer names, or None; keepalive:
    what must outlive the call (a DLPack capsule)."""

    __slots__ = ("name", "ptr", "shape", "strides", "dtype", "device", "framework", "obj",
                 "stream", "keepalive")

    def __init__(self, name, ptr, shape, strides, dtype, device, framework, obj, stream=None,
                 keepalive=None):
        self.name, self.ptr, self.shape, self.strides = name, ptr, tuple(shape), tuple(strides)
        self.dtype, self.device, self.framework, self.obj = dtype, device, framework, obj
        self.stream, self.keepalive = stream, keepalive

    @property
    def ndim(self):
        return len(self.shape)

    def dense_strides(self):
        """The strides of a C-contiguous array of this shape."""
        out, step = [], 1
        for n in reversed(self.shape):
            out.append(step)
            step *= max(int(n), 1)
        return tuple(reversed(out))

    def is_dense_from(self, dim):
        """Whether dims dim.. are C-contiguous (dims of size 1 may have any stride)."""
        want = self.dense_strides()
        return all(self.shape[i] <= 1 or self.strides[i] == want[i]
                   for i in range(dim, self.ndim))

    def numel(self):
        n = 1
        for s in self.shape:
            n *= int(s)
        return n


def _dtype_fail(name, what):
    _lib.fail(_lib.BAD_PARAM_DTYPE, f"{name} has dtype {what}, which has no ONNX element type")


def _from_torch(name, x):
    if not x.is_cuda:
        _lib.fail(_lib.BAD_PARAM, f"{name} is on {x.device}, not on a CUDA device")
    dtype = _TORCH_NAMES.get(str(x.dtype).replace("torch.", ""))
    if dtype is None:
        _dtype_fail(name, x.dtype)
    return ArrayView(name, x.data_ptr(), x.shape, x.stride(), dtype, x.device.index, "torch", x)


def _from_cai(name, x, cai):
    typestr = cai.get("typestr", "")
    if len(typestr) < 3 or typestr[0] not in "<|=":
        _dtype_fail(name, repr(typestr))
    dtype = _NUMPY_TYPESTR.get(typestr[1:])
    if dtype is None:
        _dtype_fail(name, repr(typestr))
    if cai.get("mask") is not None:
        _lib.fail(_lib.BAD_PARAM, f"{name} is a masked array (__cuda_array_interface__ mask)")
    shape = tuple(int(s) for s in cai["shape"])
    ptr = int(cai["data"][0] or 0)
    itemsize = ONNX_ITEMSIZE[dtype]
    if cai.get("strides") is None:
        view = ArrayView(name, ptr, shape, (0,) * len(shape), dtype, None, "other", x)
        view.strides = view.dense_strides()
    else:
        byte_strides = tuple(int(s) for s in cai["strides"])
        if any(s % itemsize for s in byte_strides):
            _lib.fail(_lib.BAD_PARAM_STRIDE,
                      f"{name} has byte strides {byte_strides}, not multiples of its "
                      f"{itemsize}-byte elements")
        view = ArrayView(name, ptr, shape, tuple(s // itemsize for s in byte_strides), dtype,
                         None, "other", x)
    if _module_of(x) == "cupy":
        view.framework, view.device = "cupy", int(x.device.id)
    view.stream = cai.get("stream")
    return view


# --- DLPack (dlpack.h, the unversioned DLManagedTensor)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(name, x):
    dev_type, dev_id = x.__dlpack_device__()
    if int(dev_type) not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        _lib.fail(_lib.BAD_PARAM, f"{name} is a DLPack array on device type {int(dev_type)}, "
                                  "not CUDA (2)")
    capsule = x.__dlpack__(stream=None)  # None: the consumer uses the legacy default stream
    addr = _capsule_get(capsule, b"dltensor")
    t = DLManagedTensor.from_address(addr).dl_tensor
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    dtype = _DLPACK.get((code, bits)) if lanes == 1 else None
    if dtype is None:
        _dtype_fail(name, f"DLPack (code {code}, bits {bits}, lanes {lanes})")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    ptr = (t.data or 0) + t.byte_offset
    view = ArrayView(name, ptr, shape, (0,) * len(shape), dtype, int(dev_id), "other", x,
                     keepalive=capsule)
    view.strides = (tuple(t.strides[i] for i in range(t.ndim)) if t.strides
                    else view.dense_strides())
    return view


def _module_of(x):
    return type(x).__module__.split(".", 1)[0]


def view(name, x):
    """The ArrayView of a CUDA array x; OppError for anything else."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _from_torch(name, x)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(name, x, cai)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _from_dlpack(name, x)
    _lib.fail(_lib.BAD_PARAM, f"{name} is a {type(x).__name__}, not a CUDA array (expected "
                              "__cuda_array_interface__ or DLPack on a CUDA device)")
