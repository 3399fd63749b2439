#!/usr/bin/env bash
# bootstrap.sh - installs what liboppacked needs on a fresh Debian 12 machine
# and checks the CUDA toolkit. Safe to run again: it only installs what is
# missing. Needs root (or sudo) for apt-get.
#
#   bash tools/bootstrap.sh          install + check
#   bash tools/bootstrap.sh --check  check only, install nothing
set -u

# libjansson-dev: bench/'s JSON reader (linked from its libjansson.a);
# python3-matplotlib: bench/plot.py's charts (tests/bench_plot_test.sh);
# make, pkg-config: examples/ against an installed tree; python3-pytest,
# -setuptools, -pip: python/'s package and its tests; clang: the libFuzzer
# targets of fuzz/ (fuzz/build.sh, run by .ci/run).
PACKAGES=(bazel-bootstrap libcmocka-dev protobuf-c-compiler libprotobuf-c-dev libjansson-dev
    python3-matplotlib gcc g++ make pkg-config python3 python3-pytest python3-setuptools
    python3-pip clang)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
check_only=0
[ "${1:-}" = "--check" ] && check_only=1

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
    if [ $check_only -eq 1 ]; then
        echo "bootstrap: missing Debian packages: ${missing[*]}" >&2
        exit 1
    fi
    echo "bootstrap: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq || { echo "bootstrap: apt-get update failed" >&2; exit 1; }
    $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null ||
        { echo "bootstrap: apt-get install ${missing[*]} failed" >&2; exit 1; }
fi

# cuobjdump + nvdisasm for tests/sass_check_test.sh (the Hopper kernels'
# machine code; the CUDA 13 toolkit here has neither): PyPI's wheels into
# SASS_TOOLS. Not fatal: without them that test reports SKIPPED (and fails
# under .ci/run's OPP_SASS_STRICT=1).
SASS_TOOLS=/opt/liboppacked/tools
SASS_WHEELS=(nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37)
sass_ok() { [ -x "$SASS_TOOLS/nvidia/cu13/bin/cuobjdump" ] && [ -x "$SASS_TOOLS/nvidia/cu13/bin/nvdisasm" ]; }
if ! sass_ok; then
    if [ $check_only -eq 1 ]; then
        echo "bootstrap: no cuobjdump + nvdisasm in $SASS_TOOLS: tests/sass_check_test.sh will skip" >&2
    else
        echo "bootstrap: installing ${SASS_WHEELS[*]} into $SASS_TOOLS"
        $SUDO python3 -m pip install -q --no-deps --target "$SASS_TOOLS" "${SASS_WHEELS[@]}" >/dev/null 2>&1 ||
            $SUDO python3 -m pip install -q --no-deps --break-system-packages --target "$SASS_TOOLS" \
                "${SASS_WHEELS[@]}" >/dev/null 2>&1
        sass_ok || echo "bootstrap: could not install ${SASS_WHEELS[*]} (PyPI):" \
            "tests/sass_check_test.sh will skip" >&2
    fi
fi

fail=0
need() { # need <path> <what it is>
    if [ ! -e "$1" ]; then
        echo "bootstrap: MISSING $2 ($1)" >&2
        fail=1
    fi
}
need "$CUDA_HOME/bin/nvcc" "the CUDA toolkit's nvcc (install CUDA 13 at $CUDA_HOME)"
need "$CUDA_HOME/include/cuda_runtime_api.h" "the CUDA runtime headers"
need "$CUDA_HOME/include/cublas_v2.h" "the cuBLAS headers"
need "$CUDA_HOME/lib64/libcudart_static.a" "the static CUDA runtime"
need "$CUDA_HOME/lib64/libcublas.so" "cuBLAS"
command -v bazel >/dev/null || { echo "bootstrap: MISSING bazel (Debian package bazel-bootstrap)" >&2; fail=1; }
command -v protoc-c >/dev/null || { echo "bootstrap: MISSING protoc-c (protobuf-c-compiler)" >&2; fail=1; }
[ -e /usr/include/cmocka.h ] || { echo "bootstrap: MISSING cmocka.h (libcmocka-dev)" >&2; fail=1; }
[ -e /usr/include/jansson.h ] || { echo "bootstrap: MISSING jansson.h (libjansson-dev)" >&2; fail=1; }
gcc -print-file-name=libjansson.a | grep -q / ||
    { echo "bootstrap: MISSING libjansson.a (libjansson-dev)" >&2; fail=1; }
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
    { echo "bootstrap: MISSING matplotlib for /usr/bin/python3 (python3-matplotlib)" >&2; fail=1; }
command -v clang >/dev/null || { echo "bootstrap: MISSING clang (the fuzz targets)" >&2; fail=1; }
if [ $fail -ne 0 ]; then
    echo "bootstrap: not ready (see MISSING lines above)" >&2
    exit 1
fi
nvcc_version=$("$CUDA_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
echo "bootstrap: ready (bazel-bootstrap $(dpkg-query -W -f='${Version}' bazel-bootstrap)," \
    "cmocka $(dpkg-query -W -f='${Version}' libcmocka-dev), nvcc $nvcc_version at $CUDA_HOME)"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    echo "bootstrap: GPU: $(nvidia-smi -L | head -n 1)"
else
    echo "bootstrap: no GPU here: GPU tests will be reported as skipped"
fi
