#!/usr/bin/env bash
# run_all.sh - runs what tools/gpu_stage.sh staged, on the GPU machine
# (copied to stage/run_all.sh by tools/gpu_stage.sh; do not run it from
# tools/). From the repo root:
#
#   bash stage/run_all.sh                  every test binary, then the summary line
#   bash stage/run_all.sh --sanitize       + GPU test binaries under compute-sanitizer
#                                            memcheck and racecheck (20 batches each,
#                                            lengths capped at 160, 4 graph replays,
#                                            2 concurrent and 4 repeated runs)
#   bash stage/run_all.sh --sanitize-full  + compute-sanitizer memcheck, initcheck, synccheck
#                                            and racecheck at FULL length (issue 12 item 8)
#                                            in one device command of ~3 minutes (the
#                                            seconds after each step: measured on an H200
#                                            on 2026-12-03, "est." where not measured; each
#                                            step prints its own):
#                                            (b) tests/device_guard_test under each tool,
#                                               every kernel checked (2, 2, 1, 12 s):
#                                               adversarial device cu_seqlens (negative,
#                                               decreasing, past the total, above max_seqlen,
#                                               INT32_MIN / INT32_MAX) at full-size extents,
#                                               EXACT and FAST, each a guard finding;
#                                            (a) stage/oppbench on bench/sanitize_workloads.json
#                                               (--impl exact,fast,tf32x3 --reps 1 --warmup 0
#                                               --max-seconds-per-impl 0.001: exact, FAST, TF32X3
#                                               (on the f32 D 64 workloads) and the cuBLAS reference
#                                               run once each, validated):
#                                               1. memcheck, the san_* set (lengths up to 4096 /
#                                                  20000 keys, every kernel path), every kernel
#                                                  checked, the reference's and cuBLAS's too (19 s);
#                                               2. the filter canary: initcheck on our kernels
#                                                  minus the guard kernel, on san_rsx_f32: the EXACT
#                                                  kernel's first read, of the guard record the
#                                                  unchecked guard wrote, must be reported (exit
#                                                  86), else the filter of 3-5 reaches none of our
#                                                  kernels and they would pass vacuously (est. 3 s);
#                                               3. initcheck, the san_* set (est. 20 s), and
#                                               4. synccheck, the san_* set (est. 15 s), both on
#                                                  the library's kernels only (--kernel-name
#                                                  kns=opp__guard_record: every attention kernel
#                                                  takes the guard record). initcheck must filter
#                                                  so: it does not see the writes of a kernel it
#                                                  skips, and with cuBLAS skipped the reference's
#                                                  every read of cuBLAS's scores was an
#                                                  "uninitialized" report - the H200 step ran out
#                                                  of time on them;
#                                               5. racecheck, the library's kernels: the san_rsx_*
#                                                  set with EXACT (shorter multi-tile sequences,
#                                                  1/66 of san_rs_causal_bf16's EXACT work; est.
#                                                  20 s), then each san_rs_* workload (one
#                                                  full-length sequence per FAST path, and a
#                                                  ragged decode batch that the TMA split
#                                                  kernel's claim order ranks) as its own
#                                                  step with EXACT unchecked (--kernel-name-exclude
#                                                  kns=exact_attention_kernel; est. 10-20 s each).
#                                                  On the H200, racecheck with EXACT (and the
#                                                  reference) checked did not finish
#                                                  san_rs_causal_bf16 in 140 s: its EXACT run
#                                                  alone issues ~6e9 shared-memory loads.
#                                            A timeout per step, ~4-6x its seconds above (30 to
#                                            90 s; --san-timeout S sets every step's), a budget
#                                            for the pass (--san-budget S, default 420): a step
#                                            that would start past it is reported "not run" (a
#                                            failure). Log: sanitize_full.log (each step's
#                                            compute-sanitizer options in its header line); a
#                                            step is "clean" only with exit 0 and the tool's
#                                            summary of 0 errors / 0 hazards.
#                                            Device command: bash stage/run_all.sh --no-tests
#                                            --sanitize-full
#   bash stage/run_all.sh --bench          + the benchmark, in this order (bench/README.md):
#                                            1. stage/oppbench on the workloads: validate
#                                               (exact vs cuBLAS bit for bit, FAST vs exact),
#                                               time exact, fast, cublas; --dump to a temp dir
#                                            2. torch_anchors.py (FA2 varlen, cuDNN, ...)
#                                            3. fa2_accuracy.py: FA2's error vs ours on the
#                                               dumped inputs
#                                            4. the sweep: oppbench --sweep, fa2_sweep.py
#                                            4b. the decode sweep: oppbench --decode-sweep,
#                                               fa2_sweep.py --decode (GB/s, fraction of
#                                               a copy bandwidth; log appended to sweep.log)
#                                            5. compare.py: the tables for bench/RESULTS.md
#                                            6. plot.py: chart.png, TFLOP/s per workload
#                                               beside FA2 and cuDNN, and the sweep
#                                               (needs matplotlib there; without it the
#                                               chart is made here from the logs)
#   bash stage/run_all.sh --oppcheck       + stage/oppcheck (default batch; then an
#                                            f32 D 64 batch: FFMA and, on sm_90, the
#                                            opt-in TF32X3 kernel), then oppcheck
#                                            --onnx-test on the conformance and golden
#                                            cases (CPU, cuBLAS, exact, FAST, TF32X3)
#   bash stage/run_all.sh --decode-profile + where decode_gqa_bf16's time goes (about
#                                            20 s; sm_90 only): stage/read_ceiling on
#                                            its K and V (the default cases: flat,
#                                            cp.async, TMA, two-head items; each
#                                            checked before it is timed), then
#                                            oppbench --only decode_gqa_bf16 --impl fast
#                                            under the CUPTI kernel timeline
#                                            (libopp_timeline.so) and bench/timeline.py
#                                            over its last 20 runs: decode_profile.log,
#                                            timeline.csv.xz (bench/README.md, "Kernel
#                                            timeline"). With --bench --no-accuracy the
#                                            two fit the tool's 8 files
#   options: --no-tests (skip the test pass); --tests NAME[,NAME] (the test
#   pass runs only these binaries, e.g. --tests edge31_gpu_test: the 2^31 edges,
#   ~70 GiB of device memory, ~1 minute); for --bench: --no-anchors,
#   --no-accuracy (no dump, no fa2_accuracy.py), --no-sweep, --no-decode-sweep,
#   --only NAME[,NAME] (workloads of steps 1-3), --sweep-only NAME[,NAME]
#   (cases of step 4), --decode-only NAME[,NAME] (cases of step 4b),
#   --bench-args "ARGS" (extra options of step 1's oppbench; default
#   --max-seconds-per-impl 3 comes first, so ARGS may override it),
#   --sweep-args "ARGS" (extra options of oppbench --sweep), --decode-args
#   "ARGS" (extra options of oppbench --decode-sweep); --timeout S
#   (per binary or script, default 300)
#
# Device tool calls (README.md): carry ["stage"], "bash stage/run_all.sh --sanitize", then
# "bash stage/run_all.sh --no-tests --bench --oppcheck" (one call may run 10 minutes;
# --bench alone takes ~5 minutes on an H200, bench/README.md).
# First it unpacks the binaries gpu_stage.sh staged as <name>.xz.
# Environment it sets: LD_LIBRARY_PATH=stage/lib:/usr/local/cuda/lib64,
# OPP_ONNX_CONFORMANCE_DIR, OPP_GOLDEN_DIR, OPP_WORKLOADS, TEST_TMPDIR.
# Logs: into $OUT when set (the device tool returns at most 8 files: tests.log,
# sanitize.log, sanitize_full.log, bench.log, anchors.log, accuracy.log, sweep.log, results.md,
# chart.png, oppcheck.log, decode_profile.log, timeline.csv.xz, summary.txt -
# --bench --oppcheck writes 8 of them;
# all only when tests, --sanitize, --bench and --oppcheck run together, which
# is more than one call's 10 minutes anyway), else stage/logs/. Test results
# are counted per CMocka case like tools/ci_summary.py (stage/ci_summary.py)
# and end with the line
#   N passed, N failed, N skipped
# Exit status: 0 when nothing failed (tests, sanitizers, bench, decode profile,
# oppcheck).
set -uo pipefail

STAGE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$STAGE")
cd "$ROOT" || exit 2

do_tests=1 do_sanitize=0 do_bench=0 do_oppcheck=0 only="" bench_args="" per_bin_timeout=300
do_sanitize_full=0 san_timeout="" san_budget=420 tests_only=""
do_anchors=1 do_accuracy=1 do_sweep=1 sweep_only="" sweep_args=""
do_decode=1 decode_only="" decode_args="" do_decode_profile=0
while [ $# -gt 0 ]; do
    case "$1" in
    --sanitize) do_sanitize=1 ;;
    --sanitize-full) do_sanitize_full=1 ;;
    --san-timeout) san_timeout=${2:?--san-timeout needs seconds}; shift ;;
    --san-budget) san_budget=${2:?--san-budget needs seconds}; shift ;;
    --tests) tests_only=${2:?--tests needs a value}; shift ;;
    --bench) do_bench=1 ;;
    --oppcheck) do_oppcheck=1 ;;
    --decode-profile) do_decode_profile=1 ;;
    --no-tests) do_tests=0 ;;
    --no-anchors) do_anchors=0 ;;
    --no-accuracy) do_accuracy=0 ;;
    --no-sweep) do_sweep=0 ;;
    --no-decode-sweep) do_decode=0 ;;
    --only) only=${2:?--only needs a value}; shift ;;
    --sweep-only) sweep_only=${2:?--sweep-only needs a value}; shift ;;
    --bench-args) bench_args=${2:?--bench-args needs a value}; shift ;;
    --sweep-args) sweep_args=${2:?--sweep-args needs a value}; shift ;;
    --decode-only) decode_only=${2:?--decode-only needs a value}; shift ;;
    --decode-args) decode_args=${2:?--decode-args needs a value}; shift ;;
    --timeout) per_bin_timeout=${2:?--timeout needs seconds}; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_all: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

# Binaries staged compressed (tools/gpu_stage.sh: <name>.xz): unpack them
# next to the .xz (kept; stage/unpack.sh, from tools/gpu_unpack.sh).
# shellcheck source=gpu_unpack.sh
. "$STAGE/unpack.sh" || exit 2
while IFS= read -r -d '' z; do
    opp_unpack "$z" || { echo "run_all: cannot unpack $z" >&2; exit 2; }
done < <(find "$STAGE" -name '*.xz' -not -path "$STAGE/ab/*" -print0)

export LD_LIBRARY_PATH="$STAGE/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Test data: stage/testdata, or the tracked testdata/ (gpu_stage.sh --no-testdata).
DATA=$STAGE/testdata
[ -d "$DATA/cases" ] || DATA=$ROOT/testdata
export OPP_ONNX_CONFORMANCE_DIR="$DATA/onnx-attention-conformance"
export OPP_GOLDEN_DIR="$DATA/cases"
export OPP_WORKLOADS="$STAGE/bench/workloads.json"
export PYTHONUNBUFFERED=1
TEST_TMPDIR=$(mktemp -d)
export TEST_TMPDIR
LOG=${OUT:-$STAGE/logs}
mkdir -p "$LOG"
SUMMARY=$LOG/summary.txt
: >"$SUMMARY"
status=0

note() { echo "$*" | tee -a "$SUMMARY"; }
with_timeout() { if command -v timeout >/dev/null; then timeout -k 10 "$per_bin_timeout" "$@"; else "$@"; fi; }

note "run_all: $(head -2 "$STAGE/STAGE_INFO.txt" 2>/dev/null | tr '\n' ' ')"
note "run_all: host $(uname -n), $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi')"

# Prints "passed failed skipped" for one binary's output and exit code, as
# tools/ci_summary.py counts a Bazel test log.
count() { # count <log file> <exit code>
    if command -v python3 >/dev/null; then
        python3 - "$1" "$2" "$STAGE" <<'EOF'
import sys
sys.path.insert(0, sys.argv[3])
from ci_summary import cmocka_counts
counts, is_cmocka = cmocka_counts(open(sys.argv[1], errors="replace").read())
rc = int(sys.argv[2])
if is_cmocka:
    p, f, s = counts["OK"], counts["FAILED"], counts["SKIPPED"]
    if rc != 0 and f == 0:
        f = 1
else:
    p, f, s = (1, 0, 0) if rc == 0 else (0, 1, 0)
print(p, f, s)
EOF
    else # rough fallback: result lines only
        local p f s
        p=$(grep -c '^\[       OK \] test_' "$1")
        f=$(grep -c '^\[  \(FAILED\|ERROR\)  *\] test_' "$1")
        s=$(grep -c '^\[  SKIPPED \] test_' "$1")
        if ! grep -q '^\[ RUN      \]' "$1"; then p=$(($2 == 0)) f=$(($2 != 0)) s=0; fi
        [ "$2" -ne 0 ] && [ "$f" -eq 0 ] && f=1
        echo "$p $f $s"
    fi
}

# --- every test binary
if [ $do_tests -eq 1 ] && [ -n "$tests_only" ]; then
    for t in ${tests_only//,/ }; do
        grep -qx "$t" "$STAGE/tests.txt" || { echo "run_all: --tests: no staged test $t (stage/tests.txt)" >&2; exit 2; }
    done
fi
if [ $do_tests -eq 1 ]; then
    : >"$LOG/tests.log"
    tp=0 tf=0 ts=0
    while read -r t; do
        [ -n "$t" ] || continue
        [ -z "$tests_only" ] || [[ ",$tests_only," == *",$t,"* ]] || continue
        one=$TEST_TMPDIR/$t.log
        echo "==================== $t" | tee -a "$LOG/tests.log"
        start=$(date +%s)
        with_timeout "$STAGE/tests/$t" >"$one" 2>&1
        rc=$?
        tee -a "$LOG/tests.log" <"$one"
        read -r p f s < <(count "$one" "$rc")
        tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
        note "tests/$t: $p passed, $f failed, $s skipped (exit $rc, $(($(date +%s) - start)) s)"
    done <"$STAGE/tests.txt"
    totals="$tp passed, $tf failed, $ts skipped"
    note "$totals"
    [ $tf -eq 0 ] || status=1
fi

# --- GPU test binaries under compute-sanitizer
if [ $do_sanitize -eq 1 ]; then
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if [ ! -x "$SAN" ]; then
        note "sanitize: compute-sanitizer not found: skipped"
    else
        : >"$LOG/sanitize.log"
        for tool in memcheck racecheck; do
            clean=0 total=0 hostonly=""
            while read -r t; do
                [ -n "$t" ] || continue
                one=$TEST_TMPDIR/$tool.$t.log
                echo "==================== $tool $t" >>"$LOG/sanitize.log"
                start=$(date +%s)
                # Reduced counts under the sanitizers (100-1000x slower):
                # fewer batches, sequence lengths capped at 160 (still two
                # key tiles, three chunks, several row blocks), no
                # full-size workload shapes; a few graph replays, concurrent
                # and repeated runs (graph_replay_test, concurrency_test).
                OPP_GPU_TEST_BATCHES=20 OPP_L0_BATCHES=20 OPP_L3_BATCHES=4 OPP_L3_RANDOM=10 \
                    OPP_GPU_TEST_MAX_LEN=160 OPP_GPU_TEST_REPLAYS=4 OPP_GPU_TEST_ITERS=2 \
                    OPP_GPU_TEST_REPEATS=4 OPP_WORKLOADS="" with_timeout "$SAN" --tool "$tool" \
                    --error-exitcode 86 "$STAGE/tests/$t" >"$one" 2>&1
                rc=$?
                secs=$(($(date +%s) - start))
                cat "$one" >>"$LOG/sanitize.log"
                tail -3 "$one"
                read -r p f s < <(count "$one" 0)
                if [ $rc -ne 0 ] && [ "$f" -eq 0 ] && grep -q '^\[  PASSED  \]' "$one" &&
                    grep -q "terminated before first instrumented API call" "$one"; then
                    # A binary of host-side checks (it links CUDA, but every
                    # call it makes fails before reaching the driver).
                    hostonly="$hostonly $t"
                    note "sanitize $tool tests/$t: made no CUDA API call (host-side checks only): nothing to check"
                    continue
                fi
                total=$((total + 1))
                if [ $rc -eq 0 ]; then
                    clean=$((clean + 1))
                    note "sanitize $tool tests/$t: clean ($secs s)"
                else
                    status=1
                    what="test failed or crashed"
                    [ $rc -eq 86 ] && what="sanitizer errors"
                    [ $rc -eq 124 ] && what="timed out"
                    note "sanitize $tool tests/$t: exit $rc ($what, $secs s; see sanitize.log)"
                fi
            done <"$STAGE/gpu_tests.txt"
            note "sanitize $tool: $clean of $total GPU test binaries clean${hostonly:+ (no CUDA call made:$hostonly)}"
        done
    fi
fi

# --- compute-sanitizer at full length (issue 12 item 8; see the header)
# san_step TOOL LABEL TIMEOUT [SANITIZER OPTIONS...] -- CMD...: one sanitizer
# run of at most TIMEOUT seconds (--san-timeout S replaces every step's),
# into sanitize_full.log. "clean" needs exit 0 and the tool's summary of
# zero. With san_expect set (a grep -E pattern of kernel names) the step is
# a canary instead: it passes only with the tool's error exit (86) and a
# report "at" one of those kernels.
san_step() {
    local tool=$1 label=$2 limit=$3 start rc secs summary p f s opts=()
    shift 3
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    shift
    [ -z "$san_timeout" ] || limit=$san_timeout
    if [ $(($(date +%s) - san_t0)) -ge "$san_budget" ]; then
        note "sanitize-full $tool $label: not run (the --san-budget of $san_budget s is spent)"
        status=1
        return
    fi
    local one=$TEST_TMPDIR/san_full.$tool.$label.log
    echo "==================== $tool $label (timeout $limit s): compute-sanitizer --tool $tool" \
        "${opts[*]+${opts[*]} }$*" >>"$LOG/sanitize_full.log"
    start=$(date +%s)
    if command -v timeout >/dev/null; then
        timeout -k 10 "$limit" "$SAN" --tool "$tool" --error-exitcode 86 \
            ${opts[@]+"${opts[@]}"} "$@" >"$one" 2>&1
    else
        "$SAN" --tool "$tool" --error-exitcode 86 ${opts[@]+"${opts[@]}"} "$@" >"$one" 2>&1
    fi
    rc=$?
    secs=$(($(date +%s) - start))
    cat "$one" >>"$LOG/sanitize_full.log"
    summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$one" | tail -1 | sed 's/^=* *//')
    local extra=""
    case "$label" in
    device_guard_test)
        read -r p f s < <(count "$one" "$rc")
        extra="; $p passed, $f failed, $s skipped; $(grep -c -- '-> BAD_PARAM_' "$one") guard findings"
        ;;
    oppbench* | filter_canary)
        # oppbench's own last line, "N workloads, N validated, N FAILED" (a
        # count of lines containing FAILED would count that line itself).
        local last
        last=$(grep -E '^[0-9]+ workloads, [0-9]+ validated, [0-9]+ FAILED$' "$one" | tail -1)
        extra="; $(grep -c '^  validation (first runs' "$one") workloads ran; ${last:-no oppbench summary line}"
        ;;
    esac
    local what="failed or crashed"
    [ $rc -eq 86 ] && what="sanitizer errors"
    [ $rc -eq 124 ] && what="timed out after $limit s"
    if [ -n "${san_expect:-}" ]; then
        local hits
        hits=$(grep -cE "^=+ +at .*($san_expect)" "$one")
        if [ $rc -eq 86 ] && [ "$hits" -gt 0 ]; then
            note "sanitize-full $tool $label: ok (exit 86 as planted: $hits printed reports at our" \
                "kernels; ${summary:-no summary}; $secs s$extra)"
        else
            status=1
            [ $rc -eq 0 ] && what="no error reported"
            note "sanitize-full $tool $label: FAILED (exit $rc, $what; $hits printed reports at" \
                "our kernels, expected some; ${summary:-no summary}; $secs s$extra): the" \
                "--kernel-name filter may reach none of our kernels - its steps can pass vacuously"
        fi
        return
    fi
    local zero=" 0 errors"
    [ "$tool" = racecheck ] && zero=" 0 hazards" # its warnings are hazards too
    if [ $rc -eq 0 ] && [[ $summary == *"$zero"* ]]; then
        note "sanitize-full $tool $label: clean ($summary; $secs s$extra)"
    else
        status=1
        [ $rc -eq 0 ] && what="no zero summary from the tool"
        note "sanitize-full $tool $label: exit $rc ($what; ${summary:-no summary}; $secs s$extra)"
    fi
}

if [ $do_sanitize_full -eq 1 ]; then
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    SAN_WL=$STAGE/bench/sanitize_workloads.json
    if [ ! -x "$SAN" ]; then
        note "sanitize-full: compute-sanitizer not found: not run"
        status=1
    elif [ ! -f "$SAN_WL" ] || [ ! -x "$STAGE/oppbench" ]; then
        note "sanitize-full: $SAN_WL or stage/oppbench missing (tools/gpu_stage.sh): not run"
        status=1
    elif ! grep -q -- '--kernel-name-exclude' <<<"$("$SAN" --help 2>&1)"; then
        # (the help text is read whole first: with pipefail, grep -q leaving
        # early made the tool's SIGPIPE fail the test at random - it said
        # "not run" on an H200 whose compute-sanitizer has the options)
        note "sanitize-full: this compute-sanitizer has no --kernel-name / --kernel-name-exclude" \
            "(2023.3 and newer have them): not run"
        status=1
    else
        : >"$LOG/sanitize_full.log"
        san_t0=$(date +%s)
        san_expect=""
        # Which kernels a tool checks (see the header): memcheck every one;
        # initcheck, synccheck and racecheck only the library's. Each kernel
        # of the attention path (kernels/ but merge_states_kernel, which
        # oppbench does not run) takes the guard record, so its mangled name
        # holds opp__guard_record; the reference's and cuBLAS's do not.
        ours=(--kernel-name kns=opp__guard_record)
        ours_but_exact=(--kernel-name kns=opp__guard_record
            --kernel-name-exclude kns=exact_attention_kernel)
        names=$(grep -o '"name": *"san_[a-z0-9_]*"' "$SAN_WL" | sed 's/.*"\(san_[a-z0-9_]*\)"/\1/')
        full_set=$(grep -v '^san_rs' <<<"$names" | paste -sd, -)
        rsx_set=$(grep '^san_rsx_' <<<"$names" | paste -sd, -)
        rs_names=$(grep '^san_rs_' <<<"$names")
        note "sanitize-full: $("$SAN" --version 2>/dev/null | grep -i version | head -1);" \
            "memcheck/initcheck/synccheck workloads: $full_set; racecheck, EXACT checked:" \
            "$rsx_set; racecheck, one step each, EXACT unchecked: $(paste -sd, - <<<"$rs_names")"
        # shellcheck disable=SC2054 # exact,fast,tf32x3 is one value of --impl
        # (tf32x3: the opt-in TF32X3 kernel on the f32 D 64 workloads, "not
        # supported" - no failure - on the others)
        bench_opts=(--workloads "$SAN_WL" --impl exact,fast,tf32x3 --reps 1 --warmup 0
            --max-seconds-per-impl 0.001 --flush-mib 1)
        # Timeouts: ~4-6x the seconds measured on an H200 (2026-12-03) or,
        # where nothing was measured, estimated (header).
        # (b) adversarial device cu_seqlens, every tool, every kernel checked
        san_step memcheck device_guard_test 30 -- "$STAGE/tests/device_guard_test"  # 2 s
        san_step initcheck device_guard_test 30 -- "$STAGE/tests/device_guard_test" # 2 s
        san_step synccheck device_guard_test 30 -- "$STAGE/tests/device_guard_test" # 1 s
        san_step racecheck device_guard_test 60 -- "$STAGE/tests/device_guard_test" # 12 s
        # (a) full-length shapes
        san_step memcheck oppbench 75 -- "$STAGE/oppbench" "${bench_opts[@]}" --only "$full_set" # 19 s
        # The canary: with the guard kernel unchecked, initcheck must report
        # the EXACT kernel's first read, of the guard record the guard wrote
        # (san_rsx_f32: EXACT alone, 12 blocks of 256 threads: ~3000 such reads).
        san_expect='exact_attention_kernel|hopper_attention_kernel|flash_[a-z]+_kernel'
        san_step initcheck filter_canary 30 "${ours[@]}" --kernel-name-exclude kns=varlen_guard_kernel \
            --print-limit 10 -- "$STAGE/oppbench" "${bench_opts[@]}" --only san_rsx_f32
        san_expect=""
        san_step initcheck oppbench 90 "${ours[@]}" -- \
            "$STAGE/oppbench" "${bench_opts[@]}" --only "$full_set"
        san_step synccheck oppbench 60 "${ours[@]}" -- \
            "$STAGE/oppbench" "${bench_opts[@]}" --only "$full_set"
        san_step racecheck oppbench_rsx 90 "${ours[@]}" -- \
            "$STAGE/oppbench" "${bench_opts[@]}" --only "$rsx_set"
        for w in $rs_names; do
            san_step racecheck "oppbench_${w#san_}" 60 "${ours_but_exact[@]}" -- \
                "$STAGE/oppbench" "${bench_opts[@]}" --only "$w"
        done
        note "sanitize-full: done in $(($(date +%s) - san_t0)) s"
    fi
fi

# --- benchmark: ours, the anchors, accuracy vs FA2, the sweep, the tables
# (all in this one device command: ratios from one command only, DESIGN.md §7)

# step NAME LOG CMD...: runs CMD under the timeout, its output into LOG
# (appended) and stdout; notes exit status and seconds; a failure fails the run.
step() {
    local name=$1 log=$2 start rc
    shift 2
    start=$(date +%s)
    with_timeout "$@" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    note "bench: $name exit $rc ($(($(date +%s) - start)) s)"
    [ "$rc" -eq 0 ] || status=1
}

if [ $do_bench -eq 1 ]; then
    BENCH=$STAGE/bench
    DUMP=$TEST_TMPDIR/dump # ~2.6 GB for the seven workloads; removed at the end
    J=$TEST_TMPDIR/json
    mkdir -p "$J"
    dump_opt=()
    [ $do_accuracy -eq 1 ] && dump_opt=(--dump "$DUMP")
    : >"$LOG/bench.log"
    # shellcheck disable=SC2086 # bench_args is a list of options
    step oppbench "$LOG/bench.log" "$STAGE/oppbench" --workloads "$BENCH/workloads.json" \
        --json "$J/bench.jsonl" ${only:+--only "$only"} ${dump_opt[@]+"${dump_opt[@]}"} \
        --max-seconds-per-impl 3 $bench_args
    if [ $do_anchors -eq 1 ]; then
        : >"$LOG/anchors.log"
        step torch_anchors.py "$LOG/anchors.log" python3 "$BENCH/torch_anchors.py" \
            "$BENCH/workloads.json" ${only:+--only "$only"}
    fi
    if [ $do_accuracy -eq 1 ]; then
        : >"$LOG/accuracy.log"
        step fa2_accuracy.py "$LOG/accuracy.log" python3 "$BENCH/fa2_accuracy.py" "$DUMP" \
            --json "$J/accuracy.jsonl" ${only:+--only "$only"}
        rm -rf "$DUMP"
    fi
    if [ $do_sweep -eq 1 ]; then
        : >"$LOG/sweep.log"
        # shellcheck disable=SC2086 # sweep_args is a list of options
        step "oppbench --sweep" "$LOG/sweep.log" "$STAGE/oppbench" --sweep \
            --json "$J/sweep.jsonl" ${sweep_only:+--only "$sweep_only"} $sweep_args
        step fa2_sweep.py "$LOG/sweep.log" python3 "$BENCH/fa2_sweep.py" \
            --json "$J/fa2_sweep.jsonl" ${sweep_only:+--only "$sweep_only"}
    fi
    # The decode sweep: its lines feed compare.py, not the chart (JD).
    JD=$TEST_TMPDIR/json_decode
    mkdir -p "$JD"
    if [ $do_decode -eq 1 ]; then
        [ $do_sweep -eq 1 ] || : >"$LOG/sweep.log"
        # shellcheck disable=SC2086 # decode_args is a list of options
        step "oppbench --decode-sweep" "$LOG/sweep.log" "$STAGE/oppbench" --decode-sweep \
            --json "$JD/decode.jsonl" ${decode_only:+--only "$decode_only"} $decode_args
        step "fa2_sweep.py --decode" "$LOG/sweep.log" python3 "$BENCH/fa2_sweep.py" --decode \
            --json "$JD/fa2_decode.jsonl" ${decode_only:+--only "$decode_only"}
    fi
    # The tables, from the JSON lines of this command only.
    inputs=()
    for f in "$J"/*.jsonl; do [ -s "$f" ] && inputs+=("$f"); done
    [ $do_anchors -eq 1 ] && inputs+=("$LOG/anchors.log")
    decode_inputs=()
    for f in "$JD"/*.jsonl; do [ -s "$f" ] && decode_inputs+=("$f"); done
    if [ $((${#inputs[@]} + ${#decode_inputs[@]})) -gt 0 ]; then
        python3 "$BENCH/compare.py" ${inputs[@]+"${inputs[@]}"} \
            ${decode_inputs[@]+"${decode_inputs[@]}"} --out "$LOG/results.md"
        rc=$?
        note "bench: compare.py exit $rc (tables in results.md)"
        [ "$rc" -eq 0 ] || status=1
        # The chart of the same lines (not the decode sweep's: GB/s, tabled
        # only), titled with the device, date and commit.
        gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
        commit=$(sed -n 's/^commit \(.\{7\}\).*/\1/p' "$STAGE/STAGE_INFO.txt" 2>/dev/null)
        if [ ${#inputs[@]} -eq 0 ]; then
            rc=4
        else
            python3 "$BENCH/plot.py" "${inputs[@]}" --out "$LOG/chart.png" \
                --title "${gpu:-unknown GPU}, $(date -u +%F), commit ${commit:-unknown}"
            rc=$?
        fi
        case $rc in
        0) note "bench: plot.py exit 0 (chart.png)" ;;
        3) note "bench: plot.py: no matplotlib on this machine, no chart.png; make it from" \
            "the logs: python3 bench/plot.py bench.log anchors.log sweep.log --out chart.png" ;;
        4) note "bench: no chart (only the decode sweep ran)" ;;
        *) note "bench: plot.py exit $rc (no chart.png)"; status=1 ;;
        esac
    fi
fi

# --- where decode_gqa_bf16's time goes: the read ceiling of its K and V,
# then its kernels' CUPTI timeline (bench/README.md)
if [ $do_decode_profile -eq 1 ]; then
    with_timeout "$STAGE/read_ceiling" --workloads "$OPP_WORKLOADS" 2>&1 |
        tee "$LOG/decode_profile.log"
    rc=${PIPESTATUS[0]}
    note "decode profile: read_ceiling: $(tail -1 "$LOG/decode_profile.log") (exit $rc)"
    [ "$rc" -eq 0 ] || status=1
    rm -f "$LOG/timeline.csv" "$LOG/timeline.csv.xz"
    with_timeout env CUDA_INJECTION64_PATH="$STAGE/libopp_timeline.so" \
        OPP_TIMELINE="$LOG/timeline.csv" "$STAGE/oppbench" --only decode_gqa_bf16 --impl fast \
        --reps 20 >>"$LOG/decode_profile.log" 2>&1
    rc=$?
    note "decode profile: oppbench under the kernel timeline: exit $rc"
    [ "$rc" -eq 0 ] || status=1
    if [ -s "$LOG/timeline.csv" ] && command -v python3 >/dev/null; then
        python3 "$STAGE/bench/timeline.py" "$LOG/timeline.csv" --last 20 2>&1 |
            tee -a "$LOG/decode_profile.log"
        rc=${PIPESTATUS[0]}
        note "decode profile: timeline.py exit $rc"
        [ "$rc" -eq 0 ] || status=1
        ! command -v xz >/dev/null || xz -9 -f "$LOG/timeline.csv"
    else
        note "decode profile: no timeline (no $LOG/timeline.csv, or no python3)"
        status=1
    fi
fi

# --- the main job, then the ONNX cases through every path
if [ $do_oppcheck -eq 1 ]; then
    with_timeout "$STAGE/oppcheck" 2>&1 | tee "$LOG/oppcheck.log"
    rc=${PIPESTATUS[0]}
    note "oppcheck: exit $rc"
    [ "$rc" -eq 0 ] || status=1
    # f32, D 64: the FFMA kernel and the opt-in TF32X3 kernel (sm_90 only;
    # elsewhere oppcheck prints "TF32X3 path: not run: ..." and why)
    with_timeout "$STAGE/oppcheck" --dtype f32 --head-size 64 2>&1 | tee -a "$LOG/oppcheck.log"
    rc=${PIPESTATUS[0]}
    note "oppcheck --dtype f32 --head-size 64: exit $rc"
    [ "$rc" -eq 0 ] || status=1
    with_timeout "$STAGE/oppcheck" --onnx-test "$OPP_ONNX_CONFORMANCE_DIR" "$OPP_GOLDEN_DIR" \
        >>"$LOG/oppcheck.log" 2>&1
    rc=$?
    grep -c ": exact kernel (" "$LOG/oppcheck.log" | sed 's/^/oppcheck --onnx-test: exact kernel ran on /; s/$/ cases/' | tee -a "$SUMMARY"
    note "oppcheck --onnx-test: $(tail -1 "$LOG/oppcheck.log") (exit $rc)"
    [ "$rc" -eq 0 ] || status=1
fi

rm -rf "$TEST_TMPDIR"
note "run_all: exit $status (logs in $LOG)"
# The last line is the test count over all binaries (as CI's).
[ -z "${totals:-}" ] || note "$totals"
exit $status
