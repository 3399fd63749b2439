#!/bin/sh
# run_all_decode_profile_test.sh - tools/gpu_run_all.sh --decode-profile
# (stage/run_all.sh on the GPU machine) on a fake stage, before it reaches a
# GPU: stub read_ceiling and oppbench binaries stand in for the staged ones
# (the oppbench stub copies a recorded CUPTI timeline to $OPP_TIMELINE, as
# libopp_timeline.so writes it at exit), and bench/timeline.py summarises it:
#   - every step ran, with the arguments and environment the profile needs
#     (read_ceiling on $OPP_WORKLOADS; oppbench --only decode_gqa_bf16 --impl
#     fast under CUDA_INJECTION64_PATH), exit 0, and the logs are
#     decode_profile.log, timeline.csv.xz (timeline.csv without xz),
#     summary.txt (the tool's file count);
#   - the timeline's summary names the four decode kernels;
#   - a failing read_ceiling, or an oppbench that writes no timeline, makes
#     run_all exit 1 and says so in summary.txt.
# Usage (from Bazel): run_all_decode_profile_test.sh <gpu_run_all.sh>
#   <gpu_unpack.sh> <ci_summary.py> <timeline.py>
set -u
run_all="$1" unpack="$2" ci_summary="$3" timeline="$4"
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# make_stage DIR RC_EXIT WRITE_TIMELINE: a fake stage under DIR/stage
make_stage() {
    rm -rf "$1"
    mkdir -p "$1/stage/bench" "$1/stage/lib"
    cp "$run_all" "$1/stage/run_all.sh"
    cp "$unpack" "$1/stage/unpack.sh"
    cp "$ci_summary" "$1/stage/ci_summary.py"
    cp "$timeline" "$1/stage/bench/timeline.py"
    echo "staged by run_all_decode_profile_test" >"$1/stage/STAGE_INFO.txt"
    : >"$1/stage/libopp_timeline.so"
    cat >"$1/stage/read_ceiling" <<STUB
#!/bin/sh
echo "read_ceiling args: \$*"
echo "read_ceiling: 13 cases, 13 checked and timed, 0 failed, 0 not run"
exit $2
STUB
    # a timeline of two timed runs (each after a 256 MiB memset), in the
    # CSV that libopp_timeline.so writes
    cat >"$1/timeline.csv" <<'CSV'
kind,name,start_ns,end_ns,stream,grid_x,grid_y,grid_z,block_x,dyn_smem,correlation,bytes
memset,memset,0,1000,13,0,0,0,0,0,1,268435456
kernel,_Z19varlen_guard_kernel,3000,6000,13,64,1,1,1024,0,2,0
kernel,_Z23hopper_attention_kernel,4000,7000,13,132,1,1,384,199168,3,0
kernel,_Z16hop_split_kernel,7500,390000,13,264,1,1,192,110480,4,0
kernel,_Z20flash_combine_kernel,8000,398000,13,512,2,1,128,0,5,0
memset,memset,500000,501000,13,0,0,0,0,0,6,268435456
kernel,_Z19varlen_guard_kernel,503000,506000,13,64,1,1,1024,0,7,0
kernel,_Z23hopper_attention_kernel,504000,507000,13,132,1,1,384,199168,8,0
kernel,_Z16hop_split_kernel,507500,890000,13,264,1,1,192,110480,9,0
kernel,_Z20flash_combine_kernel,508000,898000,13,512,2,1,128,0,10,0
CSV
    cat >"$1/stage/oppbench" <<STUB
#!/bin/sh
echo "oppbench args: \$* injection=\$CUDA_INJECTION64_PATH"
[ $3 -eq 0 ] || cp "$1/timeline.csv" "\$OPP_TIMELINE"
STUB
    chmod +x "$1/stage/read_ceiling" "$1/stage/oppbench"
}

# 1. the profile as it should run
make_stage "$tmp/ok" 0 1
out=$(cd "$tmp/ok" && OUT="$tmp/ok/out" bash stage/run_all.sh --no-tests --decode-profile 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "run_all --decode-profile exit $rc: $out"
files=$(ls "$tmp/ok/out" 2>/dev/null | sort | tr '\n' ' ')
csv=timeline.csv.xz # compressed where xz is installed (run_all.sh)
command -v xz >/dev/null || csv=timeline.csv
[ "$files" = "decode_profile.log summary.txt $csv " ] ||
    fail "logs [$files], expected [decode_profile.log summary.txt $csv ]"
log="$tmp/ok/out/decode_profile.log"
grep -q "read_ceiling args: --workloads $tmp/ok/stage/bench/workloads.json" "$log" ||
    fail "read_ceiling did not read \$OPP_WORKLOADS: $(head -3 "$log")"
grep -q "oppbench args: --only decode_gqa_bf16 --impl fast --reps 20 injection=$tmp/ok/stage/libopp_timeline.so" "$log" ||
    fail "oppbench not run under the timeline library: $(grep oppbench "$log")"
for k in varlen_guard_kernel hopper_attention_kernel hop_split_kernel flash_combine_kernel; do
    grep -q "^ *[0-9]  $k " "$log" || fail "the timeline's summary lacks $k: $(cat "$log")"
done
grep -q "all 2 runs" "$log" || fail "timeline.py did not split the two runs: $(cat "$log")"

# expect_failure NAME RC_EXIT WRITE_TIMELINE WANT: run_all on such a stage
# exits 1 and its summary has a line matching WANT
expect_failure() {
    make_stage "$tmp/$1" "$2" "$3"
    (cd "$tmp/$1" && OUT="$tmp/$1/out" bash stage/run_all.sh --no-tests --decode-profile \
        >/dev/null 2>&1)
    rc=$?
    [ "$rc" -eq 1 ] || fail "$1: run_all exit $rc, expected 1"
    grep -q "$4" "$tmp/$1/out/summary.txt" ||
        fail "$1: summary lacks '$4': $(cat "$tmp/$1/out/summary.txt")"
}
# 2. read_ceiling fails; 3. oppbench writes no timeline
expect_failure rc 1 1 "read_ceiling: .*(exit 1)"
expect_failure nt 0 0 "decode profile: no timeline"

[ "$fails" -eq 0 ] || exit 1
echo "run_all --decode-profile: 3 cases passed"
