#!/usr/bin/env bash
# ptxas_check_test.sh - tools/build_defs/nvcc_checked.sh fails a compile in
# which ptxas serialised the wgmma pipeline, and passes one in which it did
# not: tests/ptxas_check_fixture.cu built with the Hopper kernels' flags
# (sm_90a, -Xptxas=-warn-spills,-Werror), as written (expected: exit 0, an
# object) and with -DSERIALISE (expected: exit 3, the C7520 report shown, no
# object). Needs nvcc only (no GPU).
#
#   ptxas_check_test.sh CHECKER NVCC FIXTURE
set -u
checker=$1 nvcc=$(readlink -f "$2") fixture=$3
tmp=${TEST_TMPDIR:-$(mktemp -d)}
flags=(-c -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Werror=all-warnings
    -Xptxas=-warn-spills,-Werror)
fail=0

bash "$checker" "$nvcc" "${flags[@]}" "$fixture" -o "$tmp/clean.o" 2>"$tmp/clean.log"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$tmp/clean.o" ]; then
    echo "FAIL: the pipelined fixture: exit $rc (want 0 and an object)"
    cat "$tmp/clean.log"
    fail=1
else
    echo "ok: the pipelined fixture compiles (exit 0)"
fi

bash "$checker" "$nvcc" "${flags[@]}" -DSERIALISE "$fixture" -o "$tmp/ser.o" 2>"$tmp/ser.log"
rc=$?
if [ $rc -ne 3 ] || [ -e "$tmp/ser.o" ] || ! grep -q "Potential Performance Loss" "$tmp/ser.log"; then
    echo "FAIL: the serialised fixture: exit $rc (want 3, no object, ptxas's report shown)"
    cat "$tmp/ser.log"
    fail=1
else
    echo "ok: the serialised fixture fails (exit 3): $(grep -o '(C75[0-9]*)' "$tmp/ser.log" | head -1)"
fi

bash "$checker" "$nvcc" --no-such-flag "$fixture" -o "$tmp/bad.o" 2>"$tmp/bad.log"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 3 ]; then
    echo "FAIL: a failing nvcc: exit $rc (want nvcc's own non-zero status)"
    fail=1
else
    echo "ok: a failing nvcc keeps its status ($rc)"
fi
exit $fail
