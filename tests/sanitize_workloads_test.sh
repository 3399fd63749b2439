#!/bin/sh
# sanitize_workloads_test.sh - bench/sanitize_workloads.json, the full-length
# shapes of tools/gpu_run_all.sh --sanitize-full, before it reaches a GPU:
#   - oppbench's strict workload schema accepts it (oppbench --list, no GPU);
#   - the names run_all.sh extracts (grep of "name": "san_...") are the
#     workloads oppbench lists, both sets non-empty: san_* (memcheck,
#     initcheck) and san_rs_* (racecheck, synccheck).
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
full=$(echo "$listed" | grep -vc '^san_rs_')
small=$(echo "$listed" | grep -c '^san_rs_')
if [ "$full" -lt 1 ] || [ "$small" -lt 1 ]; then
    echo "FAIL: $full san_* and $small san_rs_* workloads (each set needs one)"
    exit 1
fi
others=$(echo "$out" | awk 'NR > 2 && $1 !~ /^san_/ {print $1}')
if [ -n "$others" ]; then
    echo "FAIL: workloads without the san_ prefix: $others"
    exit 1
fi
echo "ok   $full san_* (memcheck, initcheck) and $small san_rs_* (racecheck, synccheck) workloads"
