#!/usr/bin/env bash
# ab_defines.sh - for A/B builds of a compile-time switch (tools/gpu_stage.sh
# --ab-define): sets switches of the kernels, in place, in the tree whose
# kernels/ folder is given, by defining each right after the include guard
# of its kernel_list.h, which every kernel includes before the switches'
# own `#ifndef NAME` / `#define NAME default` (e.g. OPP__HOPPER_SOFTMAX_FIRST
# in kernels/hopper_config.cuh, OPP__HOPPER_TRIM_WHERE in kernel_list.h).
# gpu_stage.sh runs it in its temporary worktree; never commit its result.
#
#   bash tools/ab_defines.sh KERNELS_DIR NAME=VALUE[,NAME=VALUE...]
#
# NAME: OPP__[A-Z0-9_]+, and a switch of that tree (a `#ifndef NAME` line in
# one of KERNELS_DIR's .h / .cuh files); VALUE: letters, digits, _.
# Exit status: 0 when every switch was set; 2 (nothing changed) on a bad
# argument, an unknown switch, or a kernel_list.h without its guard.
set -euo pipefail

dir=${1:?usage: ab_defines.sh KERNELS_DIR NAME=VALUE[,NAME=VALUE...]}
defs=${2:?usage: ab_defines.sh KERNELS_DIR NAME=VALUE[,NAME=VALUE...]}
f=$dir/kernel_list.h
[ -f "$f" ] || { echo "ab_defines: $f: no such file" >&2; exit 2; }
guard='#define OPP_KERNELS_KERNEL_LIST_H'
[ "$(grep -cxF "$guard" "$f")" -eq 1 ] || {
    echo "ab_defines: $f: no single '$guard' line: not changed" >&2
    exit 2
}
lines=""
IFS=, read -ra items <<<"$defs"
for d in "${items[@]}"; do
    [[ $d =~ ^(OPP__[A-Z0-9_]+)=([A-Za-z0-9_]+)$ ]] || {
        echo "ab_defines: '$d' is not NAME=VALUE (NAME: OPP__[A-Z0-9_]+, VALUE: [A-Za-z0-9_]+): not changed" >&2
        exit 2
    }
    name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    grep -qxE "#ifndef $name" "$dir"/*.h "$dir"/*.cuh 2>/dev/null || {
        echo "ab_defines: $name is no switch of $dir (no '#ifndef $name' line): not changed" >&2
        exit 2
    }
    lines+="#define $name $value /* set by tools/ab_defines.sh (A/B build) */"$'\n'
done
tmp=$(mktemp)
awk -v add="$lines" -v g="$guard" '{print} $0 == g {printf "%s", add}' "$f" >"$tmp"
cat "$tmp" >"$f"
rm -f "$tmp"
