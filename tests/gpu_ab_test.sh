#!/bin/bash
# gpu_ab_test.sh - tools/gpu_ab.sh (stage/ab.sh) without a GPU:
#   - on a fake stage/ (stage/oppbench and stage/ab/alt/oppbench.xz, which
#     stage/unpack.sh unpacks, are scripts that log their turn and print
#     oppbench's JSON line with a fixed median: 1.0 ms and 1.5 ms), two turns: the builds run in turns (this alt this
#     alt), the table holds each turn's median and alt / this = 1.500, a
#     run whose line says validated false shows as nan, the exit status is 0;
#   - a failing build's run makes the exit status 1;
#   - --builds: only the named stage/ab builds run and are unpacked; an
#     unknown name exits 2;
#   - --sweep-only / --decode-only: oppbench --sweep / --decode-sweep per build;
#   - --same-bits: builds with byte-identical out_fast.bin in one group, others apart,
#     the outputs written by each build's last turn (no extra run);
#   - --tests: a build staged without its fast_gpu_test (--ab-bench) is named,
#     one that should have it and lacks it fails the run;
#   - --ncu: per build, each kernel's launches, median duration and DRAM
#     throughput from ncu's CSV (a fake ncu on PATH writes it);
#   - --impl tf32x3: the --only runs (and ncu's) get --impl tf32x3 (the
#     sweeps none), the table holds the TF32X3 medians (the fake also prints
#     a FAST line, which must stay out) and the sweeps' FAST ones, --same-bits
#     compares out_tf32x3.bin (the fake writes out_fast.bin with other
#     contents), --tests runs each build's tf32x3_gpu_test and not its
#     fast_gpu_test, ncu's kernel regex takes tf32x3_ws_kernel; --impl bogus
#     is refused;
#   - --help, and the errors (exit 2 and the message) of a missing --only, a
#     bad --rounds, an unknown option and a missing --workloads file; and of
#     tools/gpu_stage.sh's bad --ab / --ab-bench / --ab-portable / --tests
#     arguments;
#   - a build staged by --ab-define is labelled with its switches, and
#     tools/ab_defines.sh sets switches right after kernel_list.h's include
#     guard, refusing (unchanged, exit 2) unknown switches and bad items;
#   - a build staged by --ab-portable is labelled portable in ab.txt, and
#     tools/portable_rows.sh removes exactly the three Hopper lines of the
#     tree's kernels/kernel_list.h, refusing (unchanged, exit 2) a file
#     without them, with one twice, or missing;
#   - stage/unpack.sh's opp_unpack (tools/gpu_unpack.sh): a fresh unpack,
#     an older (read-only) unpacked file replaced, a newer one kept, a bad
#     .xz a failure with no file left, python3's lzma where xz is missing;
#   - bench/decode_probes.json passes oppbench's workload schema (oppbench
#     --list, no GPU): its four workloads, L_q up to 16 for the speculative
#     ones and both L_q 1 and 512 in the mixed one.
# Usage (from Bazel): gpu_ab_test.sh <gpu_ab.sh> <gpu_unpack.sh> <oppbench> <decode_probes.json>
#                     <gpu_stage.sh> <portable_rows.sh> <kernels/kernel_list.h>
#                     <ab_defines.sh>
set -u
ab_src=$1
unpack_src=$2
oppbench=$3
probes=$4
stage_src=$5
portable_src=$6
kernel_list=$7
defines_src=$8
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}

# --- the fake stage
S=$T/stage
mkdir -p "$S/bench" "$S/ab/alt" "$S/tests"
cp "$ab_src" "$S/ab.sh"
cp "$unpack_src" "$S/unpack.sh"
echo '{"version": 1, "workloads": []}' >"$S/bench/workloads.json"
printf 'staged now\ncommit 0123456789abcdef\n' >"$S/STAGE_INFO.txt"
echo fedcba9876543210 >"$S/ab/alt/COMMIT"
# fake MS VALIDATED [RC [FAST_BITS [TF32X3_MS [TF32X3_BITS]]]]: writes the
# fake binary's script to stdout. Its JSON lines name the --only value as
# the workload (default w1); with --impl tf32x3 it prints a tf32x3 line of
# TF32X3_MS besides the FAST one, and --dump-outputs writes out_tf32x3.bin
# (TF32X3_BITS) besides out_fast.bin (FAST_BITS)
fake() {
    cat <<EOF
#!/bin/bash
echo "\$*" >>"$T/args.txt"
json="" dump="" impl=fast only=w1
while [ \$# -gt 0 ]; do
    [ "\$1" = --json ] && json=\$2
    [ "\$1" = --dump-outputs ] && dump=\$2
    [ "\$1" = --impl ] && impl=\$2
    [ "\$1" = --only ] && only=\$2
    shift
done
if [ -n "\$dump" ]; then
    mkdir -p "\$dump/w1"
    echo "${4:-same}" >"\$dump/w1/out_fast.bin"
    if [ "\$impl" = tf32x3 ]; then
        echo "${6:-same32}" >"\$dump/w1/out_tf32x3.bin"
    fi
fi
echo "\$(basename "\$(dirname "\$0")")" >>"$T/order.txt"
lines='{"workload":"'"\$only"'","impl":"fast","median_ms":$1,"validated":$2}'
if [ "\$impl" = tf32x3 ]; then
    lines="\$lines
{\"workload\":\"\$only\",\"impl\":\"tf32x3\",\"median_ms\":${5:-2.0},\"validated\":$2}"
fi
echo "\$lines"
[ -n "\$json" ] && echo "\$lines" >>"\$json"
exit ${3:-0}
EOF
}
fake 1.0 true >"$S/oppbench"
fake 1.5 true >"$S/ab/alt/oppbench"
chmod +x "$S/oppbench" "$S/ab/alt/oppbench"
# the ab build staged compressed, as gpu_stage.sh does: ab.sh unpacks it
xz -f "$S/ab/alt/oppbench" || fail "xz"

OUT=$T/out bash "$S/ab.sh" --only w1 --rounds 2 >"$T/stdout.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "exit $rc on two passing builds: $(cat "$T/stdout.txt")"
order=$(tr '\n' ' ' <"$T/order.txt")
[ "$order" = "stage alt stage alt " ] || fail "turn order [$order], expected [stage alt stage alt ]"
grep -q '^| workload | this | alt | alt / this |$' "$T/out/ab.txt" ||
    fail "no table header in ab.txt: $(cat "$T/out/ab.txt")"
grep -q '^| w1 | 1.0000 1.0000 | 1.5000 1.5000 | 1.500 |$' "$T/out/ab.txt" ||
    fail "wrong row in ab.txt: $(cat "$T/out/ab.txt")"
grep -q 'ab: build this = commit 0123456789' "$T/out/ab.txt" || fail "no commit of stage/ in ab.txt"
grep -q 'ab: build alt = commit fedcba9876$' "$T/out/ab.txt" || fail "no commit of the ab build"
grep -q '^| w1 |' "$T/stdout.txt" || fail "the table is not on stdout"

# a build staged by --ab-portable (its PORTABLE file) is labelled so
echo "--ab-portable: the Hopper rows left out" >"$S/ab/alt/PORTABLE"
OUT=$T/outp bash "$S/ab.sh" --only w1 --rounds 1 >/dev/null 2>&1
grep -q 'ab: build alt = commit fedcba9876 (portable: the Hopper rows left out)$' \
    "$T/outp/ab.txt" || fail "a portable build is not labelled: $(head -3 "$T/outp/ab.txt")"
grep -q 'ab: build this = commit 0123456789$' "$T/outp/ab.txt" ||
    fail "the tree's build is labelled portable: $(head -3 "$T/outp/ab.txt")"
rm -f "$S/ab/alt/PORTABLE"
# ... and one staged by --ab-define (its DEFINES file) with its switches
echo "OPP__HOPPER_SOFTMAX_FIRST=1" >"$S/ab/alt/DEFINES"
OUT=$T/outd bash "$S/ab.sh" --only w1 --rounds 1 >/dev/null 2>&1
grep -q 'ab: build alt = commit fedcba9876 (defines: OPP__HOPPER_SOFTMAX_FIRST=1)$' \
    "$T/outd/ab.txt" || fail "a build with switches set is not labelled: $(head -3 "$T/outd/ab.txt")"
rm -f "$S/ab/alt/DEFINES"

# --builds: only the named builds beside this tree run (and are unpacked);
# an unknown name is refused (exit 2) before anything runs
mkdir -p "$S/ab/alt2"
fake 2.0 true >"$S/ab/alt2/oppbench"
xz -f "$S/ab/alt2/oppbench" || fail "xz"
rm -f "$T/order.txt"
OUT=$T/outb bash "$S/ab.sh" --only w1 --rounds 1 --builds alt >/dev/null 2>&1 ||
    fail "--builds alt failed: $(cat "$T/outb/ab.log")"
order=$(tr '\n' ' ' <"$T/order.txt")
[ "$order" = "stage alt " ] || fail "--builds alt: turn order [$order], expected [stage alt ]"
[ ! -e "$S/ab/alt2/oppbench" ] || fail "--builds alt unpacked alt2"
rm -f "$T/order.txt"
OUT=$T/outb2 bash "$S/ab.sh" --only w1 --rounds 1 >/dev/null 2>&1 || fail "three builds failed"
order=$(tr '\n' ' ' <"$T/order.txt")
[ "$order" = "stage alt alt2 " ] || fail "no --builds: turn order [$order], expected [stage alt alt2 ]"
OUT=$T/outb3 bash "$S/ab.sh" --only w1 --builds alt,nosuch >"$T/outb3.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'ab: --builds nosuch: no build' "$T/outb3.txt" ||
    fail "--builds nosuch: exit $rc, $(cat "$T/outb3.txt")"
rm -rf "$S/ab/alt2"

# a run that did not validate: its median shows as nan, not as a time
fake 1.5 false >"$S/ab/alt/oppbench"
rm -f "$T/order.txt"
OUT=$T/out2 bash "$S/ab.sh" --only w1 --rounds 1 >/dev/null 2>&1
grep -q '^| w1 | 1.0000 | nan | nan |$' "$T/out2/ab.txt" ||
    fail "an unvalidated run is not nan: $(cat "$T/out2/ab.txt")"

# a failing run (exit 1) fails the A/B
fake 1.5 true 1 >"$S/ab/alt/oppbench"
OUT=$T/out3 bash "$S/ab.sh" --only w1 --rounds 1 >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit $rc with a failing build, expected 1"

# --ncu: each build's kernels from ncu's CSV (a fake ncu on PATH copies $T/ncu.csv)
mkdir -p "$T/bin"
# fake_ncu: $T/bin/ncu logs its arguments to $T/ncu_args.txt and copies
# $T/ncu.csv to its --log-file
fake_ncu() {
    cat >"$T/bin/ncu" <<EOF
#!/bin/bash
echo "\$*" >>"$T/ncu_args.txt"
log=""
while [ \$# -gt 0 ]; do
    [ "\$1" = --log-file ] && log=\$2
    shift
done
cp "$T/ncu.csv" "\$log"
EOF
    chmod +x "$T/bin/ncu"
}
fake_ncu
h='"ID","Kernel Name","Block Size","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum"'
{
    echo "==PROF== a message"
    echo "$h"
    echo '"","","","%","nsecond"'
    echo '"0","flash_decode_kernel","(128, 1, 1)","72.0","300,000"'
    echo '"1","flash_decode_kernel","(128, 1, 1)","70.0","310,000"'
    echo '"2","flash_combine_kernel","(128, 1, 1)","20.0","12000"'
} >"$T/ncu.csv"
fake 1.0 true >"$S/ab/alt/oppbench"
PATH=$T/bin:$PATH OUT=$T/out5 bash "$S/ab.sh" --only w1 --rounds 1 --ncu w1 >/dev/null 2>&1 ||
    fail "--ncu run failed: $(cat "$T/out5/ab.log")"
n=$(grep -c '^  flash_decode_kernel  *2 launches, median     305.0 us, DRAM  71.0 % of peak$' \
    "$T/out5/ab.txt")
[ "$n" -eq 2 ] || fail "--ncu: $n decode lines (one per build expected): $(cat "$T/out5/ab.txt")"
grep -q '^  flash_combine_kernel  *1 launches, median      12.0 us, DRAM  20.0 % of peak$' \
    "$T/out5/ab.txt" || fail "--ncu: no combine line: $(cat "$T/out5/ab.txt")"
# an ncu that profiled nothing: ab.txt shows its messages instead of no line at all
echo "==ERROR== ERR_NVGPUCTRPERM - no permission to the GPU's performance counters" >"$T/ncu.csv"
PATH=$T/bin:$PATH OUT=$T/out5b bash "$S/ab.sh" --only w1 --rounds 1 --ncu w1 >/dev/null 2>&1
grep -q "no kernel rows in ncu's CSV" "$T/out5b/ab.txt" &&
    grep -q 'ERR_NVGPUCTRPERM' "$T/out5b/ab.txt" ||
    fail "--ncu without rows: no diagnostic: $(cat "$T/out5b/ab.txt")"

# --sweep-only and --decode-only alone: each build's oppbench gets the sweep's options
rm -f "$T/args.txt"
OUT=$T/out6 bash "$S/ab.sh" --sweep-only sweep_x --decode-only decode_y --rounds 1 >/dev/null 2>&1 ||
    fail "--sweep-only / --decode-only failed: $(cat "$T/out6/ab.log")"
n=$(grep -c -- '^--sweep --only sweep_x --reps 20 --json ' "$T/args.txt")
m=$(grep -c -- '^--decode-sweep --only decode_y --reps 20 --json ' "$T/args.txt")
[ "$n" -eq 2 ] && [ "$m" -eq 2 ] || fail "sweep / decode runs $n / $m (2 builds each): $(cat "$T/args.txt")"

# --same-bits: builds grouped by byte-identical FAST outputs
fake 1.0 true 0 bitsA >"$S/oppbench"
fake 1.0 true 0 bitsA >"$S/ab/alt/oppbench"
OUT=$T/out7 bash "$S/ab.sh" --only w1 --rounds 1 --same-bits >/dev/null 2>&1 ||
    fail "--same-bits failed: $(cat "$T/out7/ab.log")"
grep -q '^  w1: \[this alt\]$' "$T/out7/ab.txt" || fail "same outputs not grouped: $(cat "$T/out7/ab.txt")"
fake 1.0 true 0 bitsB >"$S/ab/alt/oppbench"
OUT=$T/out8 bash "$S/ab.sh" --only w1 --rounds 1 --same-bits >/dev/null 2>&1
grep -q '^  w1: \[this\] \[alt\]$' "$T/out8/ab.txt" || fail "different outputs grouped: $(cat "$T/out8/ab.txt")"
# the outputs come from the last turn's run: no run of their own
rm -f "$T/args.txt"
OUT=$T/out8b bash "$S/ab.sh" --only w1 --rounds 2 --same-bits >/dev/null 2>&1
n=$(grep -c -- '--only w1' "$T/args.txt")
d=$(grep -c -- '--dump-outputs' "$T/args.txt")
[ "$n" -eq 4 ] && [ "$d" -eq 2 ] ||
    fail "--same-bits over 2 turns: $n runs, $d dumping (4 and 2 expected): $(cat "$T/args.txt")"
grep -q '^  w1: \[this\] \[alt\]$' "$T/out8b/ab.txt" || fail "2 turns: outputs not compared"

# --tests: an --ab-bench build (BENCH_ONLY, no fast_gpu_test) is named, not failed;
# an --ab build whose fast_gpu_test is missing fails
touch "$S/ab/alt/BENCH_ONLY"
OUT=$T/out9 bash "$S/ab.sh" --only w1 --rounds 1 --tests >/dev/null 2>&1 ||
    fail "--tests with a bench-only build failed: $(cat "$T/out9/ab.txt")"
grep -q 'ab: alt: staged with oppbench alone' "$T/out9/ab.txt" || fail "bench-only build not named"
rm "$S/ab/alt/BENCH_ONLY"
OUT=$T/out10 bash "$S/ab.sh" --only w1 --rounds 1 --tests >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit $rc with an ab build lacking its fast_gpu_test, expected 1"

# --impl tf32x3: the --only runs time TF32X3 (the fake's FAST line stays out
# of the table), the sweeps FAST (no --impl of their own)
grep -q -- '--only w1 --impl fast ' "$T/args.txt" || fail "no --impl fast by default: $(cat "$T/args.txt")"
fake 1.0 true 0 bitsA 2.0 bits32 >"$S/oppbench"
fake 1.5 true 0 bitsB 2.5 bits32 >"$S/ab/alt/oppbench"
rm -f "$T/args.txt"
OUT=$T/out11 bash "$S/ab.sh" --impl tf32x3 --only w1 --sweep-only sweep_x --rounds 2 \
    >"$T/stdout11.txt" 2>&1 || fail "--impl tf32x3 failed: $(cat "$T/stdout11.txt")"
n=$(grep -c -- '^--workloads .* --only w1 --impl tf32x3 --reps 20 --json ' "$T/args.txt")
[ "$n" -eq 4 ] || fail "--impl tf32x3: $n runs with --impl tf32x3 (4 expected): $(cat "$T/args.txt")"
grep -q -- '--impl fast' "$T/args.txt" && fail "--impl tf32x3: a run got --impl fast: $(cat "$T/args.txt")"
[ "$(grep -c -- '^--sweep --only sweep_x --reps 20 --json ' "$T/args.txt")" -eq 4 ] ||
    fail "--impl tf32x3: the sweep runs: $(cat "$T/args.txt")"
grep -q '^| w1 | 2.0000 2.0000 | 2.5000 2.5000 | 1.250 |$' "$T/out11/ab.txt" ||
    fail "--impl tf32x3: wrong w1 row: $(cat "$T/out11/ab.txt")"
grep -q '^| sweep_x | 1.0000 1.0000 | 1.5000 1.5000 | 1.500 |$' "$T/out11/ab.txt" ||
    fail "--impl tf32x3: wrong sweep row: $(cat "$T/out11/ab.txt")"
grep -q 'median ms of TF32X3' "$T/stdout11.txt" || fail "--impl tf32x3: the table's caption"
# --same-bits compares out_tf32x3.bin: same TF32X3 bits group, whatever FAST's
OUT=$T/out12 bash "$S/ab.sh" --impl tf32x3 --only w1 --rounds 1 --same-bits >/dev/null 2>&1 ||
    fail "--impl tf32x3 --same-bits failed: $(cat "$T/out12/ab.log")"
grep -q '^  w1: \[this alt\]$' "$T/out12/ab.txt" ||
    fail "--impl tf32x3: same out_tf32x3.bin not grouped: $(cat "$T/out12/ab.txt")"
grep -q '^same bits (TF32X3 outputs, out_tf32x3.bin, ' "$T/out12/ab.txt" ||
    fail "--impl tf32x3: ab.txt does not name out_tf32x3.bin: $(cat "$T/out12/ab.txt")"
fake 1.0 true 0 bitsA 2.0 bits32 >"$S/oppbench"
fake 1.5 true 0 bitsA 2.5 other32 >"$S/ab/alt/oppbench"
OUT=$T/out13 bash "$S/ab.sh" --impl tf32x3 --only w1 --rounds 1 --same-bits >/dev/null 2>&1
grep -q '^  w1: \[this\] \[alt\]$' "$T/out13/ab.txt" ||
    fail "--impl tf32x3: different out_tf32x3.bin grouped: $(cat "$T/out13/ab.txt")"
# --tests runs tf32x3_gpu_test (staged compressed: ab.sh unpacks it), not
# fast_gpu_test; stage/'s own tests/tf32x3_gpu_test.xz is unpacked, its
# fast_gpu_test.xz left alone (and the reverse by default)
fake_test() { # fake_test NAME: a CMocka-like test binary that logs its run
    printf '#!/bin/bash\necho %s >>"%s"\necho "[  PASSED  ] 3 test(s)."\n' "$1" "$T/tests.txt"
}
fake_test fast_gpu_test >"$S/ab/alt/fast_gpu_test"
fake_test tf32x3_gpu_test >"$S/ab/alt/tf32x3_gpu_test"
fake_test this_fast >"$S/tests/fast_gpu_test"
fake_test this_tf32x3 >"$S/tests/tf32x3_gpu_test"
chmod +x "$S/ab/alt/fast_gpu_test" "$S/ab/alt/tf32x3_gpu_test" "$S/tests/fast_gpu_test" \
    "$S/tests/tf32x3_gpu_test"
xz -f "$S/ab/alt/tf32x3_gpu_test" "$S/tests/fast_gpu_test" "$S/tests/tf32x3_gpu_test" || fail "xz"
rm -f "$T/tests.txt"
OUT=$T/out14 bash "$S/ab.sh" --impl tf32x3 --only w1 --rounds 1 --tests >/dev/null 2>&1 ||
    fail "--impl tf32x3 --tests failed: $(cat "$T/out14/ab.txt")"
[ "$(cat "$T/tests.txt" 2>/dev/null)" = tf32x3_gpu_test ] ||
    fail "--impl tf32x3 --tests ran [$(cat "$T/tests.txt" 2>/dev/null)], expected tf32x3_gpu_test"
grep -q '^ab: alt tf32x3_gpu_test: \[  PASSED  \] 3 test(s)\. $' "$T/out14/ab.txt" ||
    fail "--impl tf32x3 --tests: no totals in ab.txt: $(cat "$T/out14/ab.txt")"
if [ ! -x "$S/tests/tf32x3_gpu_test" ] || [ -e "$S/tests/fast_gpu_test" ]; then
    fail "--impl tf32x3: stage/tests/tf32x3_gpu_test.xz not unpacked, or fast_gpu_test.xz unpacked"
fi
OUT=$T/out14b bash "$S/ab.sh" --only w1 --rounds 1 >/dev/null 2>&1
[ -x "$S/tests/fast_gpu_test" ] || fail "default: stage/tests/fast_gpu_test.xz not unpacked"
# ... and a build without its tf32x3_gpu_test fails, naming it
rm -f "$S/ab/alt/tf32x3_gpu_test" "$S/ab/alt/tf32x3_gpu_test.xz"
OUT=$T/out15 bash "$S/ab.sh" --impl tf32x3 --only w1 --rounds 1 --tests >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit $rc with an ab build lacking its tf32x3_gpu_test, expected 1"
grep -q '^ab: alt: no tf32x3_gpu_test staged' "$T/out15/ab.txt" ||
    fail "--impl tf32x3: the missing tf32x3_gpu_test not named: $(cat "$T/out15/ab.txt")"
rm -f "$S/ab/alt/fast_gpu_test"
# --ncu runs --impl tf32x3, and its kernel regex takes the TF32X3 kernel
fake_ncu
{
    echo "$h"
    echo '"","","","%","nsecond"'
    echo '"0","tf32x3_ws_kernel","(384, 1, 1)","40.0","500000"'
} >"$T/ncu.csv"
PATH=$T/bin:$PATH OUT=$T/out16 bash "$S/ab.sh" --impl tf32x3 --only w1 --rounds 1 --ncu w1 \
    >/dev/null 2>&1 || fail "--impl tf32x3 --ncu failed: $(cat "$T/out16/ab.log")"
[ "$(grep -c -- ' --only w1 --impl tf32x3 --reps 2 --warmup 0$' "$T/ncu_args.txt")" -eq 2 ] ||
    fail "--impl tf32x3 --ncu: ncu's oppbench runs: $(cat "$T/ncu_args.txt")"
re=$(sed -n 's/.*--kernel-name regex:\([^ ]*\) .*/\1/p' "$T/ncu_args.txt" | head -1)
for k in tf32x3_ws_kernel varlen_guard_kernel hopper_attention_kernel flash_decode_kernel \
    ffma_attention_kernel; do
    echo "$k" | grep -q -E "^($re)" || fail "ncu's kernel regex [$re] misses $k"
done
[ "$(grep -c '^  tf32x3_ws_kernel  *1 launches, median     500.0 us, DRAM  40.0 % of peak$' \
    "$T/out16/ab.txt")" -eq 2 ] || fail "--impl tf32x3 --ncu: no TF32X3 lines: $(cat "$T/out16/ab.txt")"

# --help and argument errors
bash "$S/ab.sh" --help | grep -q 'A/B of builds' || fail "--help"
# each bad argument: exit 2 and the message naming it
check_err() { # check_err WANT_MESSAGE CMD...
    local want=$1 err rc
    shift
    err=$("$@" 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 2 ] || fail "$*: exit $rc, expected 2"
    [[ $err == *"$want"* ]] || fail "$*: message [$err], expected [$want]"
}
check_err "--only, --decode-only or --sweep-only is required" env OUT="$T/out4" bash "$S/ab.sh"
check_err "--rounds 0: a positive count" env OUT="$T/out4" bash "$S/ab.sh" --only w1 --rounds 0
check_err "unknown option --frobnicate" env OUT="$T/out4" bash "$S/ab.sh" --only w1 --frobnicate
check_err "--impl bogus: fast or tf32x3" env OUT="$T/out4" bash "$S/ab.sh" --only w1 --impl bogus
check_err "--workloads $T/none.json: no such file" env OUT="$T/out4" bash "$S/ab.sh" --only w1 \
    --workloads "$T/none.json"
# tools/gpu_stage.sh's --ab / --ab-bench arguments (refused before anything is built)
check_err "--ab needs NAME=REF (NAME: letters, digits, _ . -), got 'bad'" bash "$stage_src" --ab bad
check_err "--ab-bench needs NAME=REF" bash "$stage_src" --ab-bench
check_err "--ab this: a second build of that name, or 'this'" bash "$stage_src" --ab this=main
check_err "--ab-bench x: a second build of that name" bash "$stage_src" --ab x=main --ab-bench x=main
check_err "--ab-portable needs NAME=REF (NAME: letters, digits, _ . -), got 'x'" \
    bash "$stage_src" --ab-portable x
check_err "--ab-portable p: a second build of that name" bash "$stage_src" --ab p=main \
    --ab-portable p=main
check_err "--ab-define needs NAME=REF:MACRO=V[,MACRO=V] (MACRO: OPP__...), got 'd=main'" \
    bash "$stage_src" --ab-define d=main
check_err "--ab-define needs NAME=REF:MACRO=V[,MACRO=V] (MACRO: OPP__...), got 'd=main:X=1'" \
    bash "$stage_src" --ab-define d=main:X=1
check_err "--ab-define d: a second build of that name" bash "$stage_src" --ab d=main \
    --ab-define d=main:OPP__HOPPER_SOFTMAX_FIRST=1

# tools/ab_defines.sh (what --ab-define runs in its worktree) on a copy of
# the tree's kernel_list.h and a switch file: the defines land right after
# the include guard, nothing else changes; an unknown switch, a bad item or
# a file without the guard is refused unchanged
mkdir -p "$T/kd"
cp "$kernel_list" "$T/kd/kernel_list.h"
printf '#ifndef OPP__TEST_SWITCH\n#define OPP__TEST_SWITCH 0\n#endif\n' >"$T/kd/sw.cuh"
bash "$defines_src" "$T/kd" OPP__TEST_SWITCH=1,OPP__HOPPER_TRIM_WHERE=2 ||
    fail "ab_defines.sh refused two known switches"
added=$(diff "$kernel_list" "$T/kd/kernel_list.h" | grep '^>' | tr '\n' '|')
[ "$added" = '> #define OPP__TEST_SWITCH 1 /* set by tools/ab_defines.sh (A/B build) */|> #define OPP__HOPPER_TRIM_WHERE 2 /* set by tools/ab_defines.sh (A/B build) */|' ] ||
    fail "ab_defines.sh added [$added]"
[ "$(diff "$kernel_list" "$T/kd/kernel_list.h" | grep -c '^<')" -eq 0 ] || fail "ab_defines.sh removed lines"
grep -A1 -x '#define OPP_KERNELS_KERNEL_LIST_H' "$T/kd/kernel_list.h" | grep -q OPP__TEST_SWITCH ||
    fail "the defines are not right after the include guard"
cp "$T/kd/kernel_list.h" "$T/kd.h"
check_err "OPP__NO_SUCH is no switch of $T/kd (no '#ifndef OPP__NO_SUCH' line): not changed" \
    bash "$defines_src" "$T/kd" OPP__TEST_SWITCH=0,OPP__NO_SUCH=1
check_err "'X=1' is not NAME=VALUE" bash "$defines_src" "$T/kd" X=1
cmp -s "$T/kd/kernel_list.h" "$T/kd.h" || fail "a refused call changed kernel_list.h"
grep -v -x '#define OPP_KERNELS_KERNEL_LIST_H' "$kernel_list" >"$T/kd/kernel_list.h"
check_err "no single '#define OPP_KERNELS_KERNEL_LIST_H' line: not changed" \
    bash "$defines_src" "$T/kd" OPP__TEST_SWITCH=1

# tools/portable_rows.sh (what --ab-portable runs in its worktree) on the
# tree's kernel_list.h: exactly the three Hopper lines go, every other line
# stays; a second pass, or a list of another shape, is refused unchanged
cp "$kernel_list" "$T/kl.h"
bash "$portable_src" "$T/kl.h" || fail "portable_rows.sh refused the tree's kernel_list.h"
removed=$(diff "$kernel_list" "$T/kl.h" | grep '^<' | tr -s ' ' | tr '\n' '|')
[ "$removed" = '< OPP__HOPPER_D64_KERNELS(X) \|< OPP__HOPPER_D128_KERNELS(X) \|< OPP__HOPPER_D256_KERNELS(X) \|' ] ||
    fail "portable_rows.sh removed [$removed]"
[ "$(diff "$kernel_list" "$T/kl.h" | grep -c '^>')" -eq 0 ] || fail "portable_rows.sh added lines"
grep -q 'OPP__FLASH_D128_KERNELS(X)' "$T/kl.h" || fail "the flash rows went too"
cp "$T/kl.h" "$T/kl2.h"
check_err "holds 0 of the 3 Hopper lines of OPP__FAST_KERNELS (expected 3): not changed" \
    bash "$portable_src" "$T/kl2.h"
cmp -s "$T/kl.h" "$T/kl2.h" || fail "a refused file was changed"
sed 's/^    OPP__HOPPER_D128_KERNELS(X) \\$/    OPP__HOPPER_D64_KERNELS(X) \\/' "$kernel_list" >"$T/kl3.h"
check_err "OPP__HOPPER_D64_KERNELS(X) not listed exactly once: not changed" \
    bash "$portable_src" "$T/kl3.h"
check_err "$T/none.h: no such file" bash "$portable_src" "$T/none.h"
# and its --tests list (refused before anything is built, like --ab)
check_err "--tests needs NAME[,NAME] (test binaries of //tests), got 'a b'" bash "$stage_src" \
    --tests 'a b'
check_err "--tests needs NAME[,NAME] (test binaries of //tests), got 'a,,b'" bash "$stage_src" \
    --tests a,,b
check_err "--tests needs NAME[,NAME] (test binaries of //tests), got ''" bash "$stage_src" --tests

# --- stage/unpack.sh's opp_unpack: unpacks next to the .xz; replaces an
# older unpacked file, even a read-only one (a warm device machine keeps the
# last call's); leaves a newer one; fails on a bad .xz, leaving no partial
# file; the same through python3's lzma where xz is missing
U=$T/unpack
mkdir -p "$U"
(
    # shellcheck disable=SC1090 # the script under test
    . "$unpack_src"
    cd "$U" || exit 1
    echo new >b && xz -k b && rm b
    opp_unpack b.xz && [ "$(cat b)" = new ] && [ -x b ] || fail "opp_unpack: a fresh unpack"
    echo old >b && chmod a-w b && touch -d '2001-01-01' b
    opp_unpack b.xz && [ "$(cat b)" = new ] || fail "opp_unpack: an older, read-only file not replaced"
    echo kept >b && touch -d '2001-01-01' b.xz
    opp_unpack b.xz && [ "$(cat b)" = kept ] || fail "opp_unpack: a newer file replaced"
    echo junk >c.xz
    opp_unpack c.xz 2>/dev/null && fail "opp_unpack: a bad .xz unpacked"
    [ ! -e c ] && [ ! -e c.unpack ] || fail "opp_unpack: a bad .xz left a file"
    rm -f b && touch b.xz
    mkdir -p nox && for c in python3 chmod mv rm; do ln -s "$(command -v $c)" nox/$c; done
    PATH=$U/nox opp_unpack b.xz && [ "$(cat b)" = new ] || fail "opp_unpack: python3's lzma"
) || exit 1

# --- bench/decode_probes.json
out=$("$oppbench" --list --workloads "$probes" 2>&1) || fail "oppbench --list rejects $probes: $out"
names=$(echo "$out" | awk 'NR > 2 {print $1}' | tr '\n' ' ')
[ "$names" = "spec_q4_g4 spec_q16_g4 spec_q16_g8 mixed_chunked_g4 " ] ||
    fail "decode_probes.json lists [$names]"
# columns: ... max_lq (the 11th) of spec_*: 4, 16, 16; mixed: 512
maxlq=$(echo "$out" | awk 'NR > 2 {print $11}' | tr '\n' ' ')
[ "$maxlq" = "4 16 16 512 " ] || fail "max L_q [$maxlq], expected [4 16 16 512 ]"
python3 - "$probes" <<'EOF' || fail "mixed_chunked_g4 must hold L_q 1 and L_q 512 sequences"
import json, sys
w = {x["name"]: x for x in json.load(open(sys.argv[1]))["workloads"]}
lq = set(w["mixed_chunked_g4"]["lq"])
sys.exit(0 if lq == {1, 512} else 1)
EOF
echo "PASS: gpu_ab.sh table, order, nan and exit status; decode_probes.json"
