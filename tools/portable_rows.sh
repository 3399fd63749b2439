#!/usr/bin/env bash
# portable_rows.sh - for measuring the portable flash kernel on an H100 /
# H200 only (bench/README.md, "The portable kernel on an H100 / H200"):
# removes the three Hopper lines (OPP__HOPPER_D64/128/256_KERNELS(X)) from
# OPP__FAST_KERNELS in the kernel_list.h given, in place, so that a build
# of that tree dispatches FAST on compute capability 9.0 to the flash
# kernel, as on an 8.x GPU. tools/gpu_stage.sh --ab-portable runs it in
# its temporary worktree; never commit its result to main.
#
#   bash tools/portable_rows.sh kernels/kernel_list.h
#
# Exit status: 0 when exactly those three lines were removed; 2 (the file
# left as it was) when the file is missing or does not hold exactly one
# of each, e.g. a kernel_list.h whose list changed shape.
set -euo pipefail

f=${1:?usage: portable_rows.sh KERNEL_LIST_H}
[ -f "$f" ] || { echo "portable_rows: $f: no such file" >&2; exit 2; }
pat='^    OPP__HOPPER_D(64|128|256)_KERNELS\(X\) *\\$'
n=$(grep -cE "$pat" "$f" || true)
[ "$n" -eq 3 ] || {
    echo "portable_rows: $f holds $n of the 3 Hopper lines of OPP__FAST_KERNELS (expected 3): not changed" >&2
    exit 2
}
for d in 64 128 256; do
    [ "$(grep -cE "^    OPP__HOPPER_D${d}_KERNELS\(X\) *\\\\\$" "$f")" -eq 1 ] || {
        echo "portable_rows: $f: OPP__HOPPER_D${d}_KERNELS(X) not listed exactly once: not changed" >&2
        exit 2
    }
done
tmp=$(mktemp)
grep -vE "$pat" "$f" >"$tmp"
cat "$tmp" >"$f"
rm -f "$tmp"
