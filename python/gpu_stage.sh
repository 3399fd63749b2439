#!/usr/bin/env bash
# gpu_stage.sh - stages the Python package's GPU test suite for the GPU
# machine (which has PyTorch but no Bazel, and is offline) in the git-ignored
# stage-python/ (~3.5 MiB: it travels beside stage/ within one device call's
# 64 MiB):
#   stage-python/liboppacked.so.xz   bazel-bin/liboppacked.so, xz-compressed
#                                    (19 MiB of fat binaries -> ~1.7 MiB)
#   stage-python/liboppacked_ref.so  the exact CPU reference (test-only,
#                                    //python:liboppacked_ref_so): EXACT is
#                                    compared with it bit for bit
#   stage-python/oppacked.h          the public header (test_layout.py)
#   stage-python/oppacked/           the package
#   stage-python/tests/              the pytest suite (test_gpu.py and the host tests)
#   stage-python/site.tar.xz         pytest and its pure-Python dependencies
#                                    (site/), and for Python < 3.11 its
#                                    backports (site-py310/), from wheels
#   stage-python/run.sh              python/gpu_run.sh: unpacks, prints the
#                                    machine, runs pytest
#   stage-python/STAGE_INFO.txt      commit, date, sizes
# Then one device command (carry ["stage-python"]), from the repository root:
#   bash stage-python/run.sh
#
#   bash python/gpu_stage.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
stage=stage-python
if [ "${1:-}" != "--no-build" ]; then
    bazel build //:liboppacked.so //python:liboppacked_ref_so
fi
if ! command -v xz >/dev/null; then
    echo "gpu_stage: xz not found (apt-get install xz-utils)" >&2
    exit 1
fi
rm -rf "$stage"
mkdir -p "$stage"
xz -T0 -6 -c bazel-bin/liboppacked.so >"$stage/liboppacked.so.xz"
cp -L bazel-bin/python/liboppacked_ref.so "$stage/liboppacked_ref.so"
chmod u+w "$stage/liboppacked_ref.so"
cp lib/oppacked.h "$stage/oppacked.h"
cp -r python/oppacked python/tests "$stage/"
cp python/gpu_run.sh "$stage/run.sh"
chmod a+x "$stage/run.sh"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +

# pytest for an offline machine: pure-Python wheels (any interpreter >= 3.10)
# unpacked into site/, the backports pytest needs on Python < 3.11 into
# site-py310/ (run.sh puts that on the path only there, so they never shadow
# what PyTorch imports on a newer Python), then packed as one .tar.xz.
work="$(mktemp -d)"
python3 -m pip download --quiet --only-binary=:all: --dest "$work/whl" pytest
python3 -m pip download --quiet --only-binary=:all: --no-deps --dest "$work/whl310" \
    --implementation py --abi none --platform any --python-version 3.10 \
    exceptiongroup tomli typing_extensions
for w in "$work"/whl/*.whl; do python3 -m zipfile -e "$w" "$work/site"; done
for w in "$work"/whl310/*.whl; do python3 -m zipfile -e "$w" "$work/site-py310"; done
tar -C "$work" -cJf "$stage/site.tar.xz" site site-py310
wheels="$(cd "$work" && ls whl whl310 | grep -c '\.whl$')"
rm -rf "$work"

{
    echo "staged $(date -u '+%Y-%m-%d %H:%M:%S UTC') by python/gpu_stage.sh"
    echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "uncommitted changes: $(git status --porcelain 2>/dev/null | wc -l) paths"
    (cd "$stage" && find . -maxdepth 1 -type f ! -name STAGE_INFO.txt \
        -printf '  %P %s bytes\n' | sort)
} >"$stage/STAGE_INFO.txt"
echo "gpu_stage: staged $(du -sh "$stage" | cut -f1) in $stage/ ($wheels wheels in site.tar.xz)"
echo "gpu_stage: device command (carry [\"stage-python\"]): bash stage-python/run.sh"
