#!/usr/bin/env bash
# gpu_run.sh - runs the Python package's pytest suite on the GPU machine
# (copied to stage-python/run.sh by python/gpu_stage.sh; do not run it from
# python/). From the repository root, device tool with carry ["stage-python"]:
#
#   bash stage-python/run.sh [PYTEST ARGS...]     e.g. -k fa2, -x
#
# 1. unpacks what gpu_stage.sh packed (liboppacked.so.xz, site.tar.xz) with
#    python3's lzma and tarfile (no xz needed);
# 2. prints the machine: Python, PyTorch and its CUDA, the GPU, whether
#    FlashAttention-2 (torch.ops.aten._flash_attention_forward), Triton, a
#    C compiler and Python.h (inductor) and CuPy are there;
# 3. runs pytest -v on stage-python/tests (test_gpu.py and the host tests)
#    with OPPACKED_LIB, OPPACKED_REF_LIB (the exact CPU reference EXACT is
#    compared with) and OPPACKED_HEADER set, the staged pytest first on
#    PYTHONPATH; skip reasons (-rs), the 10 slowest tests, and pytest's
#    summary line "N passed, N skipped in S s" last.
# Environment: OPP_PYTEST_TIMEOUT (seconds for the whole pytest run, default
# 300; a test stuck for 120 s has its stack dumped). Log: $OUT/pytest.log
# (else stage-python/logs/). Exit status: pytest's (0 all passed or skipped;
# 124 timed out), 2 when the stage is incomplete.
set -uo pipefail

S=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOG=${OUT:-$S/logs}
mkdir -p "$LOG"
start=$(date +%s)

python3 - "$S" <<'PY' || { echo "run: cannot unpack $S (python/gpu_stage.sh)" >&2; exit 2; }
import lzma, os, shutil, sys, tarfile
s = sys.argv[1]
so, packed = os.path.join(s, "liboppacked.so"), os.path.join(s, "liboppacked.so.xz")
if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(packed):
    with lzma.open(packed) as i, open(so + ".tmp", "wb") as o:
        shutil.copyfileobj(i, o)
    os.chmod(so + ".tmp", 0o755)
    os.replace(so + ".tmp", so)
if not os.path.isdir(os.path.join(s, "site")):
    with tarfile.open(os.path.join(s, "site.tar.xz")) as t:
        t.extractall(s, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
PY

export OPPACKED_LIB=$S/liboppacked.so OPPACKED_REF_LIB=$S/liboppacked_ref.so
export OPPACKED_HEADER=$S/oppacked.h PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# The staged pytest (and, for Python < 3.11, its backports) before anything installed.
site=$S/site
python3 -c 'import sys; sys.exit(sys.version_info >= (3, 11))' && site=$site:$S/site-py310
export PYTHONPATH=$S:$site${PYTHONPATH:+:$PYTHONPATH}
# inductor (test_torch_compile_fullgraph_bitwise): no compile worker pool, fresh caches.
TMP_RUN=$(mktemp -d)
export TORCHINDUCTOR_COMPILE_THREADS=1 TORCHINDUCTOR_CACHE_DIR=$TMP_RUN/inductor
export TRITON_CACHE_DIR=$TMP_RUN/triton

python3 - <<'PY' 2>&1 | tee "$LOG/pytest.log"
import importlib.util, os, platform, shutil, sysconfig
print(f"run: Python {platform.python_version()} ({shutil.which('python3')}), "
      f"{os.cpu_count()} CPUs, glibc {platform.libc_ver()[1]}")
try:
    import torch
    line = f"run: torch {torch.__version__} (CUDA {torch.version.cuda})"
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        line += f", {p.name} sm_{p.major}{p.minor}, {torch.cuda.device_count()} device(s)"
    else:
        line += ", no CUDA device: the GPU tests will be skipped"
    print(line)
    fa2 = hasattr(torch.ops.aten, "_flash_attention_forward") and getattr(
        torch.backends.cuda, "is_flash_attention_available", lambda: True)()
    print(f"run: FlashAttention-2 (torch.ops.aten._flash_attention_forward): "
          f"{'yes' if fa2 else 'NO (its tests skip)'}")
except Exception as e:  # the suite still runs its host tests
    print(f"run: torch not importable ({type(e).__name__}: {e}): the GPU tests will be skipped")
include = sysconfig.get_paths()["include"]
print(f"run: inductor needs: triton {'yes' if importlib.util.find_spec('triton') else 'NO'}, "
      f"C compiler {shutil.which('gcc') or shutil.which('clang') or os.environ.get('CC') or 'NO'}, "
      f"Python.h {'yes' if os.path.exists(os.path.join(include, 'Python.h')) else 'NO'}; "
      f"cupy {'yes' if importlib.util.find_spec('cupy') else 'no (its test skips)'}")
PY

timeout -k 10 "${OPP_PYTEST_TIMEOUT:-300}" python3 -m pytest -v -rs -p no:cacheprovider \
    --durations=10 -o faulthandler_timeout=120 "$S/tests" "$@" 2>&1 | tee -a "$LOG/pytest.log"
rc=${PIPESTATUS[0]}
rm -rf "$TMP_RUN"
echo "run: pytest exit $rc in $(($(date +%s) - start)) s (log: $LOG/pytest.log)" |
    tee -a "$LOG/pytest.log"
exit "$rc"
