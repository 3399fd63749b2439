#!/usr/bin/env bash
# fuzz/run.sh - runs the libFuzzer targets built by fuzz/build.sh, each for a
# time budget, starting from the in-tree seed corpus (fuzz/corpus/<target>/,
# never modified: new inputs go to a scratch corpus), and prints one line per
# target that .ci/run counts as a test:
#   fuzz:<target>: PASSED (<N> execs in <S> s, <C> corpus inputs)
#   fuzz:<target>: FAILED (...; the crashing input: <path>)
#
#   bash fuzz/run.sh                  # CI: 60 s per target
#   bash fuzz/run.sh 3600             # long: an hour per target
#   bash fuzz/run.sh 600 varlen onnx  # some targets only
# Environment: OPP_FUZZ_OUT (binaries and scratch, default build/fuzz),
# OPP_FUZZ_JOBS (parallel libFuzzer jobs per target, default 1).
# Exit status: 0 when every target passed.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(desc attention24_desc varlen onnx)
fi
out=${OPP_FUZZ_OUT:-build/fuzz}
jobs=${OPP_FUZZ_JOBS:-1}
rc=0
for t in "${targets[@]}"; do
    bin="$out/${t}_fuzz"
    work="$out/work/$t"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    if [ ! -x "$bin" ]; then
        echo "fuzz:$t: FAILED (no $bin: run fuzz/build.sh)"
        rc=1
        continue
    fi
    log="$work/log"
    start=$(date +%s)
    extra=()
    if [ "$jobs" -gt 1 ]; then
        extra=(-jobs="$jobs" -workers="$jobs")
    fi
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "${extra[@]}" "$work/corpus" "fuzz/corpus/$t" \
        >"$log" 2>&1
    status=$?
    if [ "$jobs" -gt 1 ]; then
        cat fuzz-*.log >>"$log" 2>/dev/null
        rm -f fuzz-*.log
    fi
    elapsed=$(($(date +%s) - start))
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
    inputs=$(find "$work/corpus" -type f | wc -l)
    crash=$(find "$work/artifacts" -type f | head -1)
    if [ $status -eq 0 ] && [ -z "$crash" ]; then
        echo "fuzz:$t: PASSED ($execs execs in $elapsed s, $inputs new corpus inputs)"
    else
        echo "fuzz:$t: FAILED (exit $status after $execs execs; log $log; the crashing input: ${crash:-none})"
        grep -E "oracle failed|ERROR:|SUMMARY" "$log" | head -5
        rc=1
    fi
done
exit $rc
