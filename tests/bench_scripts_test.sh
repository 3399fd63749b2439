#!/bin/sh
# bench_scripts_test.sh - bench/'s Python scripts without torch or a GPU, and
# oppbench's CPU-only paths:
#   - every script compiles and answers --help (torch is imported only to run);
#   - fa2_sweep.py --list gives exactly oppbench --sweep --list --json's cases
#     (names, shapes, attended pairs, FLOPs), in the same order, and --only
#     selects the same way; fa2_sweep.py --decode --list likewise equals
#     oppbench --decode-sweep --list --json (51 cases with their bytes, then
#     the 9 skipped ones);
#   - fa2_accuracy.py on a missing or incomplete dump exits 2 and says why;
#   - compare.py turns fixed oppbench / anchor / FA2 lines into the tables
#     (speed ratio = FA2 ms / ours ms; the decode table with GB/s and the
#     fraction of the copy bandwidth), and exits 2 on a missing input;
#   - sched_model.py's makespans on a two-sequence batch worked by hand;
#   - hop_trace.py's phases of a one-block, one-item trace written by hand,
#     and exit 1 on a missing file; tf32x3_trace.py's on one block, and exit
#     1 on a file of another shape;
#   - oppbench --help, --list and a bad --impl (exit 2);
#   - read_ceiling --help, and its bad options, case specs, workload file
#     and workload name (exit 2, the option named).
# Usage (from Bazel): bench_scripts_test.sh <oppbench> <bench/fa2_sweep.py>
#                     <read_ceiling>
set -u

oppbench="$1"
read_ceiling="$3"
bench="$(dirname "$2")"
work="${TEST_TMPDIR:-$(mktemp -d)}/bench_scripts"
rm -rf "$work"
mkdir -p "$work"
export PYTHONDONTWRITEBYTECODE=1
failures=0

ok() { echo "ok   $1"; }
bad() {
    echo "FAIL $1"
    failures=$((failures + 1))
}

# expect NAME RC CMD...: CMD's exit status must be RC (output in $work/NAME.out).
expect() {
    name="$1" want="$2"
    shift 2
    "$@" >"$work/$name.out" 2>&1
    rc=$?
    if [ "$rc" -eq "$want" ]; then ok "$name (exit $rc)"; else
        bad "$name: exit $rc, want $want"
        cat "$work/$name.out"
    fi
}

# has NAME TEXT: the output of expect NAME contains TEXT.
has() {
    if grep -qF -- "$2" "$work/$1.out"; then ok "$1 says '$2'"; else
        bad "$1 lacks '$2'"
        cat "$work/$1.out"
    fi
}

for f in bench_common.py fa2_sweep.py fa2_accuracy.py compare.py sched_model.py hop_trace.py tf32x3_model.py tf32x3_trace.py; do
    expect "compile_$f" 0 python3 -c "compile(open('$bench/$f').read(), '$f', 'exec')"
done
for f in fa2_sweep.py fa2_accuracy.py compare.py sched_model.py hop_trace.py tf32x3_model.py tf32x3_trace.py; do
    expect "help_$f" 0 python3 "$bench/$f" --help
    has "help_$f" "usage:"
done

# The sweep: the same cases on both sides.
expect c_list 0 "$oppbench" --sweep --list --json "$work/c.jsonl"
expect py_list 0 python3 "$bench/fa2_sweep.py" --list
expect same_cases 0 python3 - "$work/c.jsonl" "$work/py_list.out" <<'EOF'
import json, sys
c = [json.loads(l) for l in open(sys.argv[1])]
py = [json.loads(l) for l in open(sys.argv[2])]
assert len(c) == 48, len(c)
assert c == py, next((a, b) for a, b in zip(c, py) if a != b) if len(c) == len(py) else (len(c), len(py))
for r in c:  # FlashAttention's benchmark shapes
    assert r["total_q"] == 16384 and r["heads"] * r["head_size"] == 2048, r
    L = r["max_seqlen_q"]
    pairs = L * (L + 1) // 2 if r["causal"] else L * L
    assert r["pairs"] == r["batch"] * pairs and r["flops"] == 4 * r["pairs"] * 2048, r
print("48 cases agree")
EOF
expect only_one 0 python3 "$bench/fa2_sweep.py" --list --only sweep_d128_causal_L4096
has only_one '"workload":"sweep_d128_causal_L4096","dtype":"bf16","batch":4,"heads":16'
expect only_unknown 1 python3 "$bench/fa2_sweep.py" --list --only sweep_d999
has only_unknown "unknown case(s): sweep_d999"
expect sweep_reps 2 python3 "$bench/fa2_sweep.py" --reps 5

# The decode sweep: the same cases and the same skipped ones on both sides.
expect c_dlist 0 "$oppbench" --decode-sweep --list --json "$work/cd.jsonl"
has c_dlist "skipped: decode_g8_b256_kv131072 (K + V 128.0 GiB > the 16 GiB cap)"
expect py_dlist 0 python3 "$bench/fa2_sweep.py" --decode --list
expect same_decode_cases 0 python3 - "$work/cd.jsonl" "$work/py_dlist.out" <<'EOF'
import json, sys
c = [json.loads(l) for l in open(sys.argv[1])]
py = [json.loads(l) for l in open(sys.argv[2])]
assert len(c) == 60, len(c)
assert c == py, next((a, b) for a, b in zip(c, py) if a != b) if len(c) == len(py) else (len(c), len(py))
run = [r for r in c if not r.get("skipped")]
skipped = [r for r in c if r.get("skipped")]
assert len(run) == 51 and c[:51] == run, len(run)
assert sorted(r["workload"] for r in skipped) == sorted(
    "decode_g%d_b%s" % (g, s) for g in (1, 4, 8)
    for s in ("64_kv131072", "256_kv65536", "256_kv131072")), skipped
for r in skipped:
    b, l = (int(x) for x in r["workload"].split("_b")[1].split("_kv"))
    assert r["kv_bytes"] == b * l * 8 * 256 * 2 > 16 << 30, r
for r in run:
    assert r["total_q"] == r["batch"] and r["max_seqlen_q"] == 1 and r["kv_heads"] == 8, r
    assert r["head_size"] == 128 and r["heads"] in (8, 32, 64) and not r["causal"], r
    kv = r["total_kv"] * 8 * 256 * 2
    assert kv <= 16 << 30 and r["bytes"] == kv + r["batch"] * r["heads"] * 256 * 2, r
    assert r["flops"] == 4 * r["total_kv"] * r["heads"] * 128, r
print("60 decode combinations agree (51 run, 9 skipped)")
EOF
expect donly_one 0 python3 "$bench/fa2_sweep.py" --decode --list --only decode_g4_b8_kv4096
has donly_one '"workload":"decode_g4_b8_kv4096","dtype":"bf16","batch":8,"heads":32,"kv_heads":8'
expect c_donly 0 "$oppbench" --decode-sweep --list --only decode_g4_b8_kv4096 --json "$work/cd1.jsonl"
expect same_donly 0 python3 - "$work/cd1.jsonl" "$work/donly_one.out" <<'EOF'
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
assert len(a) == 1 and a == b, (a, b)
EOF
expect donly_skipped 1 python3 "$bench/fa2_sweep.py" --decode --list --only decode_g1_b256_kv65536
has donly_skipped "unknown case(s): decode_g1_b256_kv65536"
expect c_donly_skipped 2 "$oppbench" --decode-sweep --list --only decode_g1_b256_kv65536

# fa2_accuracy.py: a dump that is not there, or not complete, is an error.
expect acc_missing 2 python3 "$bench/fa2_accuracy.py" "$work/no_dump"
has acc_missing "no such folder"
mkdir -p "$work/partial/w1"
expect acc_partial 2 python3 "$bench/fa2_accuracy.py" "$work/partial"
has acc_partial "w1: no meta.json"

# compare.py: fixed lines -> the tables.
cat >"$work/bench.jsonl" <<'EOF'
{"workload":"w1","impl":"exact","median_ms":100,"min_ms":99,"tflops":6,"validated":true,"validation":"ok: 10 elems bit-identical"}
{"workload":"w1","impl":"fast","median_ms":2,"min_ms":1.9,"tflops":300,"validated":true,"kernel":"flash_bf16_d128","max_abs_err":0.004,"rms_err":0.0004,"validation":"ok: max_abs 0.004 rms 0.0004"}
{"workload":"sweep_d128_causal_L4096","impl":"fast","median_ms":1.5,"min_ms":1.4,"tflops":400,"validated":true,"validation":"ok"}
EOF
cat >"$work/anchors.log" <<'EOF'
{"env": {"torch": "x"}}
not json
{"workload": "w1", "gflop": 600, "impl": "torch_flash2_varlen", "ms": 3.0, "tflops": 200}
{"workload": "w1", "gflop": 600, "impl": "padded_sdpa_cudnn", "ms": 20.0, "tflops": 30}
{"workload":"sweep_d128_causal_L4096","impl":"fa2","median_ms":3.0,"min_ms":2.9,"tflops":200,"flops":1}
{"workload":"w1","impl":"accuracy","ours_max_abs":0.004,"ours_rms":0.0004,"fa2_max_abs":0.008,"fa2_rms":0.0005}
{"bandwidth":{"gbps":4000}}
{"workload":"decode_g4_b8_kv4096","impl":"fa2","median_ms":0.1,"min_ms":0.09,"tflops":5,"bytes":134348800,"gbps":1343.5,"bw_gbps":4000,"bw_fraction":0.3359}
{"workload":"decode_g4_b8_kv4096","impl":"fast","median_ms":0.05,"min_ms":0.04,"tflops":10,"validated":true,"bytes":134348800,"bw_gbps":4200,"gbps":2687,"bw_fraction":0.6398,"validation":"ok: max_abs 0.004"}
EOF
expect compare 0 python3 "$bench/compare.py" "$work/bench.jsonl" "$work/anchors.log" --out "$work/r.md"
has compare "| w1 | 2.0000 | 300.0 | 3.0000 | 200.0 | 1.50 | 20.0000 | 100.000 | ok: max_abs 0.004 rms 0.0004 |"
has compare "| w1 | 0.004 | 0.008 | 0.0004 | 0.0005 | yes |"
has compare "| sweep_d128_causal_L4096 | 1.5000 | 400.0 | 3.0000 | 200.0 | 2.00 | ok |"
has compare "| 128 | yes | - | - | - | - | - | 400 / 200 | - | - |"
has compare "geometric mean 2.00"
has compare "| decode_g4_b8_kv4096 | 0.0500 | 2687 | 64.0% | 0.1000 | 1344 | 33.6% | 2.00 | ok: max_abs 0.004 |"
has compare "| 4 | 8 | - | 2687 / 1344 | - | - | - |"
has compare "measured in each process): ours 4200 GB/s, FA2 4000 GB/s"
has compare "ours/FA2 speed over 1 decode cases: geometric mean 2.00"
if grep -q "^| decode_g4_b8_kv4096 | -" "$work/compare.out"; then
    bad "compare lists the decode case as a workload"
else ok "compare keeps decode cases out of the workload table"; fi
expect compare_missing 2 python3 "$bench/compare.py" "$work/nothing.jsonl"

# sched_model.py, non-causal, G 1, BM = BN = 128, no overhead, 2 SMs: A (L_q
# 384, L_kv 128) is 3 items of 1 key block, B (128, 384) 1 item of 3. Batch
# order 1 1 1 3 ends at 4 against a mean of 3 (1.333); sorted (B first:
# 3 1 1 1) at 3 (1.000); level (m-block 2: A; 1: A; 0: B, A = 1 1 3 1) at 4;
# lpt (3 1 1 1) at 3.
cat >"$work/sched.json" <<'JSON'
{"version": 1, "workloads": [{"name": "t", "dtype": "bf16", "heads": 1, "kv_heads": 1,
 "head_size": 128, "causal": false, "lq": [384, 128], "lkv": [128, 384]}]}
JSON
# tf32x3_model.py on a short row block: the three modes print, and fresh
# accumulation (OPP__TF32X3_O_FRESH 1) models a smaller RMS than the current
# order; a bad --lkv is refused
expect tf32x3_model 0 python3 "$bench/tf32x3_model.py" --lkv 128 --trials 1
has tf32x3_model "ffma   max abs"
rms() { awk -v m="$1" '$1 == m {print $NF}' "$work/tf32x3_model.out"; }
if python3 -c "import sys; sys.exit(0 if float('$(rms fresh)') < float('$(rms cur)') else 1)" 2>/dev/null; then
    ok "tf32x3_model: fresh RMS $(rms fresh) < cur $(rms cur)"
else
    bad "tf32x3_model: fresh RMS '$(rms fresh)' not below cur '$(rms cur)'"
fi
expect tf32x3_model_bad 2 python3 "$bench/tf32x3_model.py" --lkv 0

expect sched_model 0 python3 "$bench/sched_model.py" --workloads "$work/sched.json" --sms 2 --overhead 0
has sched_model "| t | 4 | 1.333 | 1.000 | 1.333 | 1.000 |"
# --ahead 1 (the claim queue): each SM holds one claimed item beyond the
# one it runs. Sorted (3 1 1 1): SM 0 runs 3 and holds 1, SM 1 runs 1 and
# holds 1; SM 1 ends at 2, SM 0 at 4 (1.333): every order ends at 4 here.
expect sched_ahead 0 python3 "$bench/sched_model.py" --workloads "$work/sched.json" --sms 2 --overhead 0 --ahead 1
has sched_ahead "| t | 4 | 1.333 | 1.333 | 1.333 | 1.333 |"
expect sched_ahead_bad 2 python3 "$bench/sched_model.py" --workloads "$work/sched.json" --ahead -1
has sched_ahead_bad "--ahead must be >= 0, not -1"

# hop_trace.py on one block (kernels/hopper_trace.cuh's words, 1980 cycles a
# microsecond): the loader waits for claimed items from 0 to 3 us and from
# 5 to 7 (median of 2 and 3: 3), for q_empty 1 us after the first; consumer 0
# gets its item (2 key blocks) at 2 us, each later event 1 us after the
# last to the epilogue at 12, and the end at 14: one step of 4 events (4 us)
# and 10 us else.
expect hop_trace_gen 0 python3 - "$work/t.d128" <<'EOF'
import struct, sys
ROLES, CAP, u = 4, 8192, 1980
buf = [0] * (ROLES * CAP)
def put(role, evs):
    for k, (e, a, t) in enumerate(evs):
        buf[role * CAP + k] = (e << 56) | (a << 48) | t
    buf[role * CAP + len(evs)] = (255 << 56) | len(evs)
put(0, [(0, 0, 0), (1, 0, 0), (2, 2, 3 * u), (3, 0, 4 * u), (4, 0, 4 * u), (1, 0, 5 * u), (2, 254, 7 * u)])
put(1, [(0, 0, 0), (16, 2, 2 * u), (17, 0, 3 * u), (18, 0, 4 * u), (19, 0, 5 * u), (20, 1, 6 * u),
        (22, 1, 7 * u), (23, 1, 8 * u), (24, 1, 9 * u), (25, 0, 10 * u), (26, 0, 11 * u),
        (27, 0, 12 * u), (16, 253, 14 * u)])
open(sys.argv[1], "wb").write(struct.pack("<%dQ" % len(buf), *buf))
EOF
expect hop_trace 0 python3 "$bench/hop_trace.py" "$work/t.d128"
has hop_trace "1 blocks, 1 items (1.0 an SM), mean key blocks an item 2.00"
has hop_trace "wait Q (after epilogue)                 2.0   14.3%          1        2.000"
has hop_trace "steady steps: 4.000 us a step (1 steps); everything else 10.000 us an item per consumer"
has hop_trace "loader's wait for a claimed item: median 3.000 us, p90 3.000, max 3.000 (2 items)"
has hop_trace "loader's wait for q_empty after it: median 1.000 us"
expect hop_trace_missing 1 python3 "$bench/hop_trace.py" "$work/nothing.d128"

# tf32x3_trace.py on one block of 4 roles x 16 events (the TT_* words of
# kernels/hopper_trace.cuh): the producer lands block 0 at 100 cycles after
# its start, waits 50 for k_empty, splits K in 200, waits 30 for v_empty,
# splits V in 400; consumer 0 (one key block) starts its item at 10, has Q
# at 110, K at 400, S at 1200, P at 1500, V at 1600, P V at 2400, the rest
# released at 2500, the epilogue at 3000; its SM (7) spans 0 .. 3000.
expect tf32x3_trace_gen 0 python3 - "$work/t.f32" <<'EOF'
import struct, sys
ROLES, CAP = 4, 16
buf = [0] * (ROLES * CAP)
def put(role, evs):
    for k, (e, a, t) in enumerate(evs):
        buf[role * CAP + k] = (e << 56) | (a << 48) | t
    buf[role * CAP + len(evs)] = (255 << 56) | len(evs)
put(0, [(0, 7, 0), (40, 0, 100), (41, 0, 150), (42, 0, 350), (43, 0, 380), (44, 0, 780)])
put(1, [(0, 7, 0), (48, 1, 10), (49, 1, 110), (50, 0, 400), (51, 0, 1200), (52, 0, 1500),
        (53, 0, 1600), (54, 0, 2400), (55, 0, 2500), (56, 0, 3000)])
open(sys.argv[1], "wb").write(struct.pack("<%dQ" % len(buf), *buf))
EOF
expect tf32x3_trace 0 python3 "$bench/tf32x3_trace.py" "$work/t.f32" --blocks 1 --cap 16
has tf32x3_trace "1 traced blocks on 1 SMs"
has tf32x3_trace "split V                         51.3 %        1 times      400 cycles each"
has tf32x3_trace "S (issue, queue, product)       26.7 %        1 times      800 cycles each"
has tf32x3_trace "per-SM span (first event to last, cycles): min 3000, median 3000, max 3000"
expect tf32x3_trace_size 1 python3 "$bench/tf32x3_trace.py" "$work/t.f32"
has tf32x3_trace_size "not 640 x 4 x 512"

# oppbench without a GPU: help, lists, strict options.
expect oppbench_help 0 "$oppbench" --help
has oppbench_help "--impl exact,fast,cublas"
expect oppbench_bad_impl 2 "$oppbench" --impl exact,exact --list
has oppbench_bad_impl "bad value for --impl: 'exact,exact'"

# read_ceiling without a GPU: everything it checks before it opens the device.
expect rc_help 0 "$read_ceiling" --help
has rc_help "tma:ROWS:STAGES[:persistent]"
expect rc_reps 2 "$read_ceiling" --reps 0
has rc_reps "--reps needs an integer in 1 .. 100000, got '0'"
expect rc_case 2 "$read_ceiling" --case tma:48:2
has rc_case "--case 'tma:48:2'"
expect rc_case_kind 2 "$read_ceiling" --case copy:64:2
has rc_case_kind "--case 'copy:64:2'"
expect rc_unknown 2 "$read_ceiling" --fast
has rc_unknown "unknown option or missing value: '--fast'"
expect rc_no_file 2 "$read_ceiling" --workloads "$work/none.json"
has rc_no_file "none.json"
printf '{"version": 1, "workloads": [{"name": "f", "dtype": "f32", "heads": 2, "kv_heads": 2, "head_size": 64, "causal": false, "lq": [1], "lkv": [8]}]}\n' >"$work/w32.json"
expect rc_only 2 "$read_ceiling" --workloads "$work/w32.json" --only nosuch
has rc_only "--only 'nosuch': no such workload in the file"
expect rc_f32 2 "$read_ceiling" --workloads "$work/w32.json" --only f
has rc_f32 "--only 'f': not 16-bit"

[ "$failures" -eq 0 ] || {
    echo "$failures check(s) failed"
    exit 1
}
echo "all bench script checks passed"
