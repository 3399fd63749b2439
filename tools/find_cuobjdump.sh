#!/usr/bin/env bash
# find_cuobjdump.sh - sourced by tools/sass_diff.sh and tests/sass_check_test.sh:
# opp_find_cuobjdump prints the path of a cuobjdump with an nvdisasm beside
# it (cuobjdump -sass runs nvdisasm), or nothing: $CUOBJDUMP when set, else
# the first of PATH, /usr/local/cuda/bin, /opt/liboppacked/tools/nvidia/cu13/bin
# (tools/bootstrap.sh installs PyPI's nvidia-cuda-cuobjdump and -nvdisasm
# there; the CUDA 13 toolkit here has neither), /tmp/cuobj/nvidia/cu13/bin
# and the pip packages of ~/.pyenv.
opp_find_cuobjdump() {
    if [ -n "${CUOBJDUMP:-}" ]; then
        echo "$CUOBJDUMP"
        return
    fi
    local c
    for c in "$(command -v cuobjdump || true)" /usr/local/cuda/bin/cuobjdump \
        /opt/liboppacked/tools/nvidia/cu13/bin/cuobjdump /tmp/cuobj/nvidia/cu13/bin/cuobjdump \
        "${HOME:-/nonexistent}"/.pyenv/versions/*/lib/python3*/site-packages/nvidia/cu13/bin/cuobjdump; do
        if [ -n "$c" ] && [ -x "$c" ] && [ -x "$(dirname "$c")/nvdisasm" ]; then
            echo "$c"
            return
        fi
    done
}
