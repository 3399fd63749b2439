#!/bin/bash
# gpu_ab_test.sh - tools/gpu_ab.sh (stage/ab.sh) without a GPU:
#   - on a fake stage/ (stage/oppbench and stage/ab/alt/oppbench.xz, which
#     stage/unpack.sh unpacks, are scripts that log their turn and print
#     oppbench's JSON line with a fixed median: 1.0 ms and 1.5 ms), two turns: the builds run in turns (this alt this
#     alt), the table holds each turn's median and alt / this = 1.500, a
#     run whose line says validated false shows as nan, the exit status is 0;
#   - a failing build's run makes the exit status 1;
#   - --ncu: per build, each kernel's launches, median duration and DRAM
#     throughput from ncu's CSV (a fake ncu on PATH writes it);
#   - --help, and the errors of a missing --only, a bad --rounds and an
#     unknown option (exit 2);
#   - bench/decode_probes.json passes oppbench's workload schema (oppbench
#     --list, no GPU): its four workloads, L_q up to 16 for the speculative
#     ones and both L_q 1 and 512 in the mixed one.
# Usage (from Bazel): gpu_ab_test.sh <gpu_ab.sh> <gpu_unpack.sh> <oppbench> <decode_probes.json>
set -u
ab_src=$1
unpack_src=$2
oppbench=$3
probes=$4
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
# fake_oppbench MS VALIDATED: writes the fake binary's script to stdout
fake() {
    cat <<EOF
#!/bin/bash
json=""
while [ \$# -gt 0 ]; do
    [ "\$1" = --json ] && json=\$2
    shift
done
echo "\$(basename "\$(dirname "\$0")")" >>"$T/order.txt"
line='{"workload":"w1","impl":"fast","median_ms":$1,"validated":$2}'
echo "\$line"
[ -n "\$json" ] && echo "\$line" >>"\$json"
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
grep -q 'ab: build alt = commit fedcba9876' "$T/out/ab.txt" || fail "no commit of the ab build"
grep -q '^| w1 |' "$T/stdout.txt" || fail "the table is not on stdout"

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

# --ncu: each build's kernels from ncu's CSV (a fake ncu on PATH writes it)
mkdir -p "$T/bin"
cat >"$T/bin/ncu" <<'EOF'
#!/bin/bash
log=""
while [ $# -gt 0 ]; do
    [ "$1" = --log-file ] && log=$2
    shift
done
h='"ID","Kernel Name","Block Size","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum"'
{
    echo "==PROF== a message"
    echo "$h"
    echo '"","","","%","nsecond"'
    echo '"0","flash_decode_kernel","(128, 1, 1)","72.0","300000"'
    echo '"1","flash_decode_kernel","(128, 1, 1)","70.0","310000"'
    echo '"2","flash_combine_kernel","(128, 1, 1)","20.0","12000"'
} >"$log"
EOF
chmod +x "$T/bin/ncu"
fake 1.0 true >"$S/ab/alt/oppbench"
PATH=$T/bin:$PATH OUT=$T/out5 bash "$S/ab.sh" --only w1 --rounds 1 --ncu w1 >/dev/null 2>&1 ||
    fail "--ncu run failed: $(cat "$T/out5/ab.log")"
n=$(grep -c '^  flash_decode_kernel  *2 launches, median     305.0 us, DRAM  71.0 % of peak$' \
    "$T/out5/ab.txt")
[ "$n" -eq 2 ] || fail "--ncu: $n decode lines (one per build expected): $(cat "$T/out5/ab.txt")"
grep -q '^  flash_combine_kernel  *1 launches, median      12.0 us, DRAM  20.0 % of peak$' \
    "$T/out5/ab.txt" || fail "--ncu: no combine line: $(cat "$T/out5/ab.txt")"

# --help and argument errors
bash "$S/ab.sh" --help | grep -q 'A/B of builds' || fail "--help"
for args in "" "--only w1 --rounds 0" "--only w1 --frobnicate"; do
    # shellcheck disable=SC2086 # args is a list of options
    OUT=$T/out4 bash "$S/ab.sh" $args >/dev/null 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "ab.sh $args: exit $rc, expected 2"
done

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
