#!/usr/bin/env bash
# gpu_stage.sh - stages the Python package's GPU test suite for the GPU
# machine (which has PyTorch but no Bazel) in the git-ignored stage-python/:
#   stage-python/liboppacked.so   bazel-bin/liboppacked.so (built here)
#   stage-python/oppacked.h       the public header (test_layout.py)
#   stage-python/oppacked/        the package
#   stage-python/tests/           the pytest suite (test_gpu.py and the host tests)
#   stage-python/site/            pytest and its pure-Python dependencies,
#                                 unpacked from wheels (the GPU machine is offline)
# Then, with the device tool (carry ["stage-python"]), from the repository root:
#   cd stage-python && OPPACKED_LIB=$PWD/liboppacked.so OPPACKED_HEADER=$PWD/oppacked.h \
#     PYTHONPATH=$PWD:$PWD/site python3 -m pytest -v -p no:cacheprovider tests
#
#   bash python/gpu_stage.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
stage=stage-python
if [ "${1:-}" != "--no-build" ]; then
    bazel build //:liboppacked.so
fi
rm -rf "$stage"
mkdir -p "$stage/site"
cp -L bazel-bin/liboppacked.so "$stage/liboppacked.so"
cp lib/oppacked.h "$stage/oppacked.h"
cp -r python/oppacked python/tests "$stage/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
wheels="$(mktemp -d)"
python3 -m pip download --quiet --only-binary=:all: --dest "$wheels" pytest
# What pytest needs on Python < 3.11, as pure-Python wheels (any interpreter).
python3 -m pip download --quiet --only-binary=:all: --no-deps --dest "$wheels" \
    --implementation py --abi none --platform any --python-version 3.10 \
    exceptiongroup tomli typing_extensions
for w in "$wheels"/*.whl; do
    python3 -m zipfile -e "$w" "$stage/site"
done
rm -rf "$wheels"
echo "gpu_stage: staged $(du -sh "$stage" | cut -f1) in $stage/ ($(ls "$stage/site" | grep -c dist-info) wheels)"
