#!/bin/sh
# sanitize_workloads_test.sh - bench/sanitize_workloads.json, the full-length
# shapes of tools/gpu_run_all.sh --sanitize-full, before it reaches a GPU:
#   - oppbench's strict workload schema accepts it (oppbench --list, no GPU);
#   - the names run_all.sh extracts (grep of "name": "san_...") are the
#     workloads oppbench lists, each of its three sets non-empty: san_*
#     without san_rs* (memcheck, initcheck, synccheck), san_rsx_* (racecheck
#     with EXACT checked) and san_rs_* (racecheck, EXACT unchecked);
#   - san_rsx_f32, the workload of run_all.sh's filter canary, is there.
# Usage (from Bazel): sanitize_workloads_test.sh <oppbench> <sanitize_workloads.json>
set -u
oppbench="$1"
file="$2"
if ! out=$("$oppbench" --list --workloads "$file" 2>&1); then
    echo "FAIL: oppbench --list rejects $file:"
    echo "$out"
    exit 1
fi
listed=$(echo "$out" | awk '$1 ~ /^san_/ {print $1}' | sort)
grepped=$(grep -o '"name": *"san_[a-z0-9_]*"' "$file" | sed 's/.*"\(san_[a-z0-9_]*\)"/\1/' | sort)
if [ "$listed" != "$grepped" ]; then
    echo "FAIL: oppbench lists [$listed], run_all.sh would run [$grepped]"
    exit 1
fi
full=$(echo "$listed" | grep -vc '^san_rs')
rsx=$(echo "$listed" | grep -c '^san_rsx_')
rs=$(echo "$listed" | grep -c '^san_rs_')
if [ "$full" -lt 1 ] || [ "$rsx" -lt 1 ] || [ "$rs" -lt 1 ]; then
    echo "FAIL: $full san_*, $rsx san_rsx_* and $rs san_rs_* workloads (each set needs one)"
    exit 1
fi
if ! echo "$listed" | grep -qx 'san_rsx_f32'; then
    echo "FAIL: no san_rsx_f32 (the workload of run_all.sh's filter canary)"
    exit 1
fi
others=$(echo "$out" | awk 'NR > 2 && $1 !~ /^san_/ {print $1}')
if [ -n "$others" ]; then
    echo "FAIL: workloads without the san_ prefix: $others"
    exit 1
fi
echo "ok   $full san_* (memcheck, initcheck, synccheck), $rsx san_rsx_* (racecheck with EXACT)" \
    "and $rs san_rs_* (racecheck, FAST) workloads"
