#!/usr/bin/env bash
# nvcc_checked.sh - runs one nvcc command and fails it when ptxas reports that
# it serialised the wgmma pipeline. ptxas prints those reports as "info", not
# as warnings (C7510-C7520 "Potential Performance Loss: wgmma.mma_async
# instructions are serialized ...", and C7508 when setmaxnreg is ignored), so
# -Xptxas=-Werror lets them through; a kernel built that way is correct but
# runs its products one after another. nvcc_object(ptxas_strict = True)
# (tools/build_defs/cuda.bzl) compiles through this script.
#
#   nvcc_checked.sh NVCC ARGS...
#
# Prints nvcc's output (stderr). Exit: nvcc's status when it fails; 3 when it
# succeeded but ptxas reported a serialisation (the object is removed, so
# Bazel keeps nothing); else 0. Tested by //tests:ptxas_check_test.
set -u
if [ $# -lt 1 ]; then
    echo "usage: nvcc_checked.sh NVCC ARGS..." >&2
    exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1
rc=$?
cat "$log" >&2
if [ $rc -ne 0 ]; then
    exit $rc
fi
if grep -E 'Potential Performance Loss|\(C7508\)' "$log" >/dev/null; then
    echo "nvcc_checked.sh: ptxas serialised the wgmma pipeline or ignored setmaxnreg" \
        "(the lines above); failing the build" >&2
    # the object nvcc wrote: the argument after -o
    prev=""
    for arg in "$@"; do
        if [ "$prev" = "-o" ]; then
            rm -f "$arg"
        fi
        prev=$arg
    done
    exit 3
fi
exit 0
