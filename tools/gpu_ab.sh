#!/usr/bin/env bash
# gpu_ab.sh - A/B of builds on the GPU machine, in ONE device command:
# stage/ (this tree, tools/gpu_stage.sh) against each build that
# `tools/gpu_stage.sh --ab NAME=REF` staged under stage/ab/NAME/, timed in
# turns (A B C A B C ..) so that clocks and heat drift hit every build alike
# (copied to stage/ab.sh by tools/gpu_stage.sh; run from the repo root):
#
#   bash stage/ab.sh --only W1,W2[,..]  the workloads of --workloads (default
#                                       stage/bench/workloads.json; also e.g.
#                                       stage/bench/decode_probes.json)
#   options: --workloads FILE; --rounds N (turns, default 2); --impl NAME
#   (the implementation the --only runs time, validate and tabulate, and
#   that --same-bits, --tests and --ncu use: fast, the default, or tf32x3,
#   oppbench's opt-in TF32X3 kernel - f32 with D <= 64 on 9.0; the sweeps
#   below time FAST whatever NAME is); --decode-only
#   C1,C2 (also decode-sweep cases, oppbench --decode-sweep --only);
#   --sweep-only C1,C2 (also length-sweep cases, oppbench --sweep --only,
#   e.g. sweep_d64_causal_L4096); --tests
#   (first each staged build's fast_gpu_test - with --impl tf32x3 its
#   tf32x3_gpu_test, staged by gpu_stage.sh --ab-tests tf32x3_gpu_test: the
#   L4 batch invariance and accuracy of that build; stage/'s own tests are
#   run_all.sh's; a build staged by --ab-bench has none, and says so);
#   --reps N (oppbench --reps, default 20); --same-bits (each build's last
#   turn also writes its FAST outputs, oppbench --dump-outputs, and ab.txt
#   says, per workload, which builds' FAST outputs (out_fast.bin; with
#   --impl tf32x3 the TF32X3 ones, out_tf32x3.bin) are byte-identical - a
#   change meant to leave the arithmetic alone must group with the tree's;
#   oppbench's inputs depend only on the workload name and --seed, so every
#   build gets the same ones); --anchors (torch_anchors.py on --only
#   afterwards: FA2 varlen in the same command); --ncu NAME (last, per
#   build: ncu on workload NAME of --workloads with --impl's implementation,
#   the library's kernels only - guard, Hopper, TMA split, flash, decode, combine,
#   FFMA, TF32X3 - each kernel's launches, median duration and DRAM
#   throughput into ab.txt; ncu runs the kernels
#   one at a time (no overlap, no programmatic launch), clocks free and no
#   cache flush of its own - oppbench flushes L2 before each timed run, as
#   in the timing - so the durations add up to more than a timed run's);
#   --timeout S (per binary, default 120); --builds B1,B2 (only these
#   builds of stage/ab/ beside this tree - the others are neither unpacked
#   nor run; default every one)
#
# Every oppbench run validates FAST against EXACT before it times (--impl
# fast: EXACT and cuBLAS run once for the check; with --impl tf32x3 the
# --only runs validate and time TF32X3 so). Output: into $OUT (else
# stage/logs/) two files, ab.log (every binary's output) and ab.txt (the
# table: per workload the median ms of each build in each turn, then each
# build's median over the turns against the first build's); the table also
# goes to stdout as each turn ends, so a command cut off at its limit still
# shows what it measured. The device call returns at most 8 files: run
# run_all.sh in another command, or with OUT pointing to a subfolder.
# A build staged by `gpu_stage.sh --ab-portable` (its PORTABLE file: the
# Hopper rows left out, so the portable flash kernel serves FAST on 9.0)
# is labelled "portable" in ab.log / ab.txt; one staged by `gpu_stage.sh
# --ab-define` (its DEFINES file) with the switches it set.
# Exit status: 0 when every run validated and every test passed.
set -uo pipefail

STAGE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$STAGE")
cd "$ROOT" || exit 2

wl=$STAGE/bench/workloads.json only="" rounds=2 decode_only="" sweep_only="" tests=0 reps=20
anchors=0 ncu_w="" same_bits=0 impl=fast builds=""
per_bin_timeout=120
while [ $# -gt 0 ]; do
    case "$1" in
    --workloads) wl=${2:?--workloads needs a file}; shift ;;
    --only) only=${2:?--only needs names}; shift ;;
    --rounds) rounds=${2:?--rounds needs a count}; shift ;;
    --decode-only) decode_only=${2:?--decode-only needs case names}; shift ;;
    --sweep-only) sweep_only=${2:?--sweep-only needs case names}; shift ;;
    --tests) tests=1 ;;
    --reps) reps=${2:?--reps needs a count}; shift ;;
    --anchors) anchors=1 ;;
    --same-bits) same_bits=1 ;;
    --ncu) ncu_w=${2:?--ncu needs a workload name}; shift ;;
    --impl) impl=${2:?--impl needs fast or tf32x3}; shift ;;
    --timeout) per_bin_timeout=${2:?--timeout needs seconds}; shift ;;
    --builds) builds=${2:?--builds needs build names}; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ab: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$only$decode_only$sweep_only" ] || {
    echo "ab: --only, --decode-only or --sweep-only is required" >&2
    exit 2
}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ab: --rounds $rounds: a positive count" >&2; exit 2; }
[ -f "$wl" ] || { echo "ab: --workloads $wl: no such file" >&2; exit 2; }
case $impl in
# what the messages name: the turns' medians, the outputs compared, the
# hint where a build lacks its test binary
fast) turn_what="FAST, each turn" bits_what="FAST outputs" test_hint="" ;;
tf32x3)
    turn_what="TF32X3, each turn - the sweeps' cases: FAST"
    bits_what="TF32X3 outputs, out_tf32x3.bin"
    test_hint=" (gpu_stage.sh --ab-tests tf32x3_gpu_test)"
    ;;
*) echo "ab: --impl $impl: fast or tf32x3" >&2; exit 2 ;;
esac
tname=${impl}_gpu_test # --tests: the test binary of each build

# unpack what gpu_stage.sh compressed (stage/unpack.sh, from tools/gpu_unpack.sh)
# shellcheck source=gpu_unpack.sh
. "$STAGE/unpack.sh" || exit 2
# builds: name, oppbench, $tname (fast_gpu_test or tf32x3_gpu_test), commit
names=(this) benches=("$STAGE/oppbench") testbins=("$STAGE/tests/$tname")
commits=("$(sed -n 's/^commit \(.\{10\}\).*/\1/p' "$STAGE/STAGE_INFO.txt" 2>/dev/null)")
for b in ${builds//,/ }; do
    [ -d "$STAGE/ab/$b" ] || { echo "ab: --builds $b: no build $STAGE/ab/$b" >&2; exit 2; }
done
unpack_dirs=()
for d in "$STAGE"/ab/*/; do
    [ -d "$d" ] || continue
    [ -z "$builds" ] || [[ ",$builds," == *",$(basename "$d"),"* ]] || continue
    unpack_dirs+=("$d")
    names+=("$(basename "$d")")
    benches+=("${d}oppbench")
    testbins+=("${d}$tname")
    commits+=("$(head -c 10 "${d}COMMIT" 2>/dev/null)")
done
while IFS= read -r -d '' z; do
    opp_unpack "$z" || { echo "ab: cannot unpack $z" >&2; exit 2; }
done < <(find "$STAGE/oppbench.xz" "$STAGE/tests/$tname.xz" "${unpack_dirs[@]}" \
    -name '*.xz' -print0 2>/dev/null)
export LD_LIBRARY_PATH="$STAGE/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
LOG=${OUT:-$STAGE/logs}
mkdir -p "$LOG"
J=$(mktemp -d)
: >"$LOG/ab.log"
: >"$LOG/ab.txt"
status=0
say() { echo "$*" | tee -a "$LOG/ab.txt"; }
run() { # run LABEL CMD...: output to ab.log; returns the exit status
    local label=$1 start rc
    shift
    start=$(date +%s)
    echo "==================== $label: $*" >>"$LOG/ab.log"
    timeout -k 10 "$per_bin_timeout" "$@" >>"$LOG/ab.log" 2>&1
    rc=$?
    echo "ab: $label exit $rc ($(($(date +%s) - start)) s)" | tee -a "$LOG/ab.log"
    [ $rc -eq 0 ] || status=1
    return $rc
}

for i in "${!names[@]}"; do
    kind=""
    [ ! -f "$STAGE/ab/${names[$i]}/PORTABLE" ] || kind=" (portable: the Hopper rows left out)"
    [ ! -f "$STAGE/ab/${names[$i]}/DEFINES" ] ||
        kind+=" (defines: $(head -c 200 "$STAGE/ab/${names[$i]}/DEFINES"))"
    say "ab: build ${names[$i]} = commit ${commits[$i]:-unknown}$kind"
done
if [ $tests -eq 1 ]; then
    for i in "${!names[@]}"; do
        [ "${names[$i]}" = this ] && continue
        if [ -f "$STAGE/ab/${names[$i]}/BENCH_ONLY" ]; then
            say "ab: ${names[$i]}: staged with oppbench alone (gpu_stage.sh --ab-bench): no test"
            continue
        fi
        if [ ! -x "${testbins[$i]}" ]; then
            say "ab: ${names[$i]}: no $tname staged$test_hint"
            status=1
            continue
        fi
        run "${names[$i]} $tname" "${testbins[$i]}"
        # its CMocka totals: passed, skipped (no GPU), failed
        say "ab: ${names[$i]} $tname: $(awk -v m="==================== ${names[$i]} $tname:" \
            'index($0, m) == 1 {on = 1; next} on && /^====================/ {on = 0}
             on && /^\[  (PASSED|SKIPPED|FAILED) *\] [0-9]/ {printf "%s ", $0}' "$LOG/ab.log")"
    done
fi

# The table of what has been timed so far (JSON lines of J/<build>.<turn>*.jsonl):
# the --only runs' lines of --impl, the sweeps' FAST lines (they time FAST alone).
table() {
    python3 - "$J" "$impl" "${names[@]}" <<'EOF' | tee "$LOG/ab_table.tmp"
import glob, json, os, statistics, sys
jdir, impl, names = sys.argv[1], sys.argv[2], sys.argv[3:]
ms = {}  # (workload, build) -> [ms per turn]
order = []
for n in names:
    for f in sorted(glob.glob(os.path.join(jdir, n + ".*.jsonl"))):
        sweep = f.endswith((".decode.jsonl", ".sweep.jsonl"))
        for line in open(f):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("impl") != ("fast" if sweep else impl) or "median_ms" not in r:
                continue
            w = r["workload"]
            if w not in order:
                order.append(w)
            ms.setdefault((w, n), []).append(r["median_ms"] if r.get("validated") else float("nan"))
head = "| workload | " + " | ".join(names) + " | " + " | ".join(n + " / " + names[0] for n in names[1:]) + " |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for w in order:
    cells, med = [], {}
    for n in names:
        v = ms.get((w, n), [])
        med[n] = statistics.median(v) if v else None
        cells.append(" ".join("%.4f" % x for x in v) if v else "-")
    ratios = ["%.3f" % (med[n] / med[names[0]]) if med[n] and med[names[0]] else "-" for n in names[1:]]
    print("| " + w + " | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
EOF
}

for turn in $(seq 1 "$rounds"); do
    for i in "${!names[@]}"; do
        n=${names[$i]}
        if [ -n "$only" ]; then
            # --same-bits: the last turn also writes the outputs of --impl
            # (before its timing; no run of its own)
            dump=()
            [ $same_bits -eq 1 ] && [ "$turn" -eq "$rounds" ] && dump=(--dump-outputs "$J/dump.$n")
            run "$n turn $turn" "${benches[$i]}" --workloads "$wl" --only "$only" --impl "$impl" \
                --reps "$reps" --json "$J/$n.$turn.jsonl" "${dump[@]}"
        fi
        if [ -n "$decode_only" ]; then
            run "$n turn $turn decode" "${benches[$i]}" --decode-sweep --only "$decode_only" \
                --reps "$reps" --json "$J/$n.$turn.decode.jsonl"
        fi
        if [ -n "$sweep_only" ]; then
            run "$n turn $turn sweep" "${benches[$i]}" --sweep --only "$sweep_only" \
                --reps "$reps" --json "$J/$n.$turn.sweep.jsonl"
        fi
    done
    echo "ab: after turn $turn (median ms of $turn_what; NaN: not validated):"
    table
done
cat "$LOG/ab_table.tmp" >>"$LOG/ab.txt"
rm -f "$LOG/ab_table.tmp"
if [ $same_bits -eq 1 ] && [ -n "$only" ]; then
    say "same bits ($bits_what, byte for byte; [..] = builds whose outputs are identical):"
    for w in ${only//,/ }; do
        groups=() # representative build of each group, and its members
        members=()
        for n in "${names[@]}"; do
            f=$J/dump.$n/$w/out_$impl.bin
            if [ ! -f "$f" ]; then
                groups+=("")
                members+=("$n(no output)")
                continue
            fi
            placed=0
            for g in "${!groups[@]}"; do
                r=${groups[$g]}
                if [ -n "$r" ] && cmp -s "$f" "$J/dump.$r/$w/out_$impl.bin"; then
                    members[$g]="${members[$g]} $n"
                    placed=1
                    break
                fi
            done
            if [ $placed -eq 0 ]; then
                groups+=("$n")
                members+=("$n")
            fi
        done
        line="  $w:"
        for m in "${members[@]}"; do line="$line [$m]"; done
        say "$line"
    done
fi
if [ $anchors -eq 1 ] && [ -n "$only" ]; then
    run "torch_anchors.py" python3 "$STAGE/bench/torch_anchors.py" "$wl" --only "$only"
    say "FA2 varlen, same command (ms):"
    grep -h '"torch_flash2_varlen"' "$LOG/ab.log" |
        python3 -c 'import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print("  %s %s" % (r["workload"], r.get("ms", r.get("error"))))' | tee -a "$LOG/ab.txt"
fi
if [ -n "$ncu_w" ]; then
    for i in "${!names[@]}"; do
        n=${names[$i]}
        csv=$J/ncu.$n.csv
        run "$n ncu $ncu_w" ncu --csv --page raw --print-units base --log-file "$csv" \
            --print-kernel-base function --clock-control none --cache-control none \
            --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
            --kernel-name regex:'varlen_guard|hopper_attention|hop_split|flash_|ffma_|tf32x3_' \
            "${benches[$i]}" --workloads "$wl" --only "$ncu_w" --impl "$impl" --reps 2 --warmup 0
        say "ncu, build $n, $ncu_w (kernels serialized; clocks and caches as the run leaves them):"
        python3 - "$csv" <<'EOF' | tee -a "$LOG/ab.txt"
import csv, statistics, sys
rows = {}
try:
    lines = [l for l in open(sys.argv[1]) if not l.startswith("==")]
except OSError as e:
    print("  no ncu output (%s)" % e)
    sys.exit(0)
def num(x):  # ncu may write thousands separators ("371,234")
    return float(x.replace(",", ""))
for r in csv.DictReader(lines):
    try:
        us = num(r["gpu__time_duration.sum"]) / 1e3  # ns
        dram = num(r["dram__throughput.avg.pct_of_peak_sustained_elapsed"])
    except (KeyError, ValueError):
        continue  # the units row
    rows.setdefault(r["Kernel Name"], []).append((us, dram))
if not rows:  # say why: ncu's own messages and the CSV's first lines
    print("  no kernel rows in ncu's CSV; its first lines:")
    for l in open(sys.argv[1]).read().splitlines()[:8]:
        print("    " + l[:200])
for k, v in rows.items():
    print("  %-28s %3d launches, median %9.1f us, DRAM %5.1f %% of peak"
          % (k, len(v), statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)))
EOF
    done
fi
rm -rf "$J"
say "ab: exit $status"
exit $status
