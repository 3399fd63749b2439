#!/bin/sh
# oppcheck_onnx_test.sh - oppcheck --onnx-test end to end: the 66 ONNX
# conformance cases give "66 cases, 66 bit-identical, 0 differ, 0 unreadable"
# and exit 0, with a progress line per case (harness/progress.h) and the
# progress summary; a copy with one expected bit flipped differs (exit 1); a
# copy with a truncated input_1.pb is unreadable (exit 2).
# Usage (from Bazel): oppcheck_onnx_test.sh <oppcheck> <any file of the conformance folder>
set -u

oppcheck="$1"
dir="$2"
while [ "$(basename "$dir")" != "onnx-attention-conformance" ]; do
    [ "$dir" != "/" ] && [ "$dir" != "." ] || { echo "FAIL: no conformance folder above $2"; exit 1; }
    dir="$(dirname "$dir")"
done
work="${TEST_TMPDIR:-$(mktemp -d)}/oppcheck_onnx"
rm -rf "$work"
mkdir -p "$work"
failures=0

# expect NAME RC SUMMARY DIR...: runs oppcheck, checks exit status and last line.
expect() {
    name="$1" want_rc="$2" want_line="$3"
    shift 3
    "$oppcheck" --onnx-test "$@" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    last="$(tail -n 1 "$work/$name.out")"
    if [ "$rc" -ne "$want_rc" ] || [ "$last" != "$want_line" ]; then
        echo "FAIL $name: exit $rc (want $want_rc), last line '$last' (want '$want_line')"
        cat "$work/$name.out" "$work/$name.err"
        failures=$((failures + 1))
    else
        echo "ok   $name: exit $rc, '$last'"
    fi
}

expect conformance 0 "66 cases, 66 bit-identical, 0 differ, 0 unreadable" "$dir"
# A progress line after each case, counting up to 66, then the summary.
n_progress=$(grep -c '^oppcheck \[[ 0-9]*/66\] *[0-9.]*% elapsed [0-9.]*s eta [0-9.]*s: test_attention_' "$work/conformance.out")
if [ "$n_progress" -ne 66 ] || ! grep -q '^oppcheck \[66/66\] 100.0% elapsed ' "$work/conformance.out" ||
    ! grep -q '^oppcheck done: 66 items in [0-9.]*s (' "$work/conformance.out"; then
    echo "FAIL conformance: $n_progress progress lines (want 66), or no 66/66 line or summary"
    failures=$((failures + 1))
else
    echo "ok   conformance: 66 progress lines and the summary"
fi

# One case copied and its expected Y changed in the lowest bit of element 0.
case_dir="$dir/test_attention_4d_fp16"
mkdir -p "$work/flipped/case/test_data_set_0"
cp "$case_dir/model.onnx" "$work/flipped/case/"
cp "$case_dir"/test_data_set_0/*.pb "$work/flipped/case/test_data_set_0/"
chmod -R u+w "$work/flipped"
out="$work/flipped/case/test_data_set_0/output_0.pb"
size=$(wc -c <"$out")
# raw_data is the last field: element 0 starts at size - 2 * 192 (f16, 192 values).
off=$((size - 384))
byte=$(od -An -tu1 -j "$off" -N1 "$out" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 1)))" | dd of="$out" bs=1 seek="$off" conv=notrunc 2>/dev/null
expect flipped 1 "1 cases, 0 bit-identical, 1 differ, 0 unreadable" "$work/flipped"

# The same case with a truncated input_1.pb, next to an intact copy.
mkdir -p "$work/mixed/good/test_data_set_0" "$work/mixed/damaged/test_data_set_0"
for c in good damaged; do
    cp "$case_dir/model.onnx" "$work/mixed/$c/"
    cp "$case_dir"/test_data_set_0/*.pb "$work/mixed/$c/test_data_set_0/"
done
chmod -R u+w "$work/mixed"
in1="$work/mixed/damaged/test_data_set_0/input_1.pb"
head -c $(($(wc -c <"$in1") / 2)) "$in1" >"$in1.tmp" && mv "$in1.tmp" "$in1"
expect damaged 2 "2 cases, 1 bit-identical, 0 differ, 1 unreadable" "$work/mixed"
grep -q "damaged: UNREADABLE: .*input_1.pb" "$work/damaged.out" ||
    { echo "FAIL damaged: no UNREADABLE line naming input_1.pb"; failures=$((failures + 1)); }

# A folder without cases is unreadable, never a pass.
mkdir -p "$work/empty"
expect empty 2 "1 cases, 0 bit-identical, 0 differ, 1 unreadable" "$work/empty"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all oppcheck --onnx-test checks passed"
