"""test_layout.py - the ctypes mirrors of lib/oppacked.h agree with the C
compiler: struct sizes, every field's offset and size, and the pinned
status values the Python layer raises itself. Needs gcc; no GPU."""
import ctypes
import os
import shutil
import subprocess

import pytest

from oppacked import _lib

STRUCTS = [
    ("opp_attention_desc_t", _lib.AttentionDesc),
    ("opp_attention24_desc_t", _lib.Attention24Desc),
    ("opp_varlen_t", _lib.Varlen),
]
PY_STATUSES = [name for name in dir(_lib) if name.isupper() and (
    name in ("SUCCESS", "CUDA_ERROR", "NO_DEVICE") or name.startswith(("BAD_PARAM",
                                                                        "NOT_SUPPORTED")))]


@pytest.fixture(scope="module")
def c_layout(header_path, tmp_path_factory):
    """{key: value} printed by a C program compiled against the header."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "oppacked.h"',
             "int main(void) {"]
    for cname, cls in STRUCTS:
        lines.append(f'printf("{cname}.size %zu\\n", sizeof({cname}));')
        for field, _ in cls._fields_:
            lines.append(f'printf("{cname}.{field} %zu %zu\\n", offsetof({cname}, {field}), '
                         f'sizeof((({cname} *)0)->{field}));')
    for name in PY_STATUSES:
        lines.append(f'printf("OPP_STATUS_{name} %d\\n", (int)OPP_STATUS_{name});')
    for algo, value in _lib.ALGOS.items():
        lines.append(f'printf("OPP_ALGO_{algo.upper()} %d\\n", (int)OPP_ALGO_{algo.upper()});')
    for dt in ("F32", "F16", "F64", "BF16"):
        lines.append(f'printf("OPP_DTYPE_{dt} %d\\n", (int)OPP_DTYPE_{dt});')
    lines += ["return 0;", "}"]
    d = tmp_path_factory.mktemp("layout")
    (d / "layout.c").write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", os.path.dirname(header_path),
                    str(d / "layout.c"), "-o", str(d / "layout")], check=True)
    out = subprocess.run([str(d / "layout")], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        key, *values = line.split()
        result[key] = tuple(int(v) for v in values)
    return result


@pytest.mark.parametrize("cname,cls", STRUCTS, ids=[s[0] for s in STRUCTS])
def test_struct_layout_matches_header(c_layout, cname, cls):
    # Every field of the ctypes mirror has the C offset and size, and the sizes agree.
    assert c_layout[f"{cname}.size"] == (ctypes.sizeof(cls),)
    c_fields = {k.split(".", 1)[1] for k in c_layout if k.startswith(cname + ".")} - {"size"}
    assert c_fields == {f for f, _ in cls._fields_}
    for field, ctype in cls._fields_:
        want = (getattr(cls, field).offset, ctypes.sizeof(ctype))
        assert c_layout[f"{cname}.{field}"] == want, field


def test_status_values_match_header(c_layout):
    # The statuses raised from Python carry the header's pinned values.
    for name in PY_STATUSES:
        assert c_layout[f"OPP_STATUS_{name}"] == (getattr(_lib, name),), name


def test_enum_values_match_header(c_layout):
    # Algorithm and dtype codes passed through ctypes are the header's.
    for algo, value in _lib.ALGOS.items():
        assert c_layout[f"OPP_ALGO_{algo.upper()}"] == (value,)
    for dt in ("F32", "F16", "F64", "BF16"):
        assert c_layout[f"OPP_DTYPE_{dt}"] == (getattr(_lib, "DTYPE_" + dt),)


def test_status_names_come_from_library(lib_loaded):
    # OppError names are the library's opp_status_name() (e.g. 1024 -> BAD_PARAM_SHAPE).
    assert _lib.status_name(1024) == "BAD_PARAM_SHAPE"
    assert _lib.status_name(0) == "SUCCESS"
    assert _lib.status_name(123456) == "UNKNOWN_STATUS"
