#!/bin/sh
# bench_plot_test.sh - bench/plot.py on the CPU with synthetic JSON lines (no
# GPU, no torch; needs matplotlib, which tools/bootstrap.sh installs):
#   - oppbench + torch_anchors.py + fa2_sweep.py lines (with the text lines of
#     a real log around them) give one PNG and say what they plotted;
#   - workloads alone and the sweep alone each give a PNG too;
#   - bad input is a clear error, exit 2, naming FILE:LINE where there is one:
#     a missing file, a malformed JSON line, a "tflops" that is not a number,
#     a sweep name that is not sweep_d<D>_<causal|noncausal>_L<L>, nothing
#     to plot; no PNG is written then;
#   - the README chart's path: a fake run's three files (oppbench --json,
#     torch_anchors.py's stdout, the sweep's lines) with --run-only give a
#     PNG titled with the anchors' GPU; --run-only refuses a transcribed
#     line ("source"), which is otherwise marked in the title;
#   - without matplotlib: exit 3 and a message naming the package.
# Usage (from Bazel): bench_plot_test.sh <bench/plot.py>
set -u

plot="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}/bench_plot"
rm -rf "$work"
mkdir -p "$work"
export PYTHONDONTWRITEBYTECODE=1
failures=0
ok() { echo "ok   $1"; }
bad() {
    echo "FAIL $1"
    failures=$((failures + 1))
}
if ! python3 -c 'import matplotlib' 2>/dev/null; then
    echo "FAIL: $(command -v python3) cannot import matplotlib (bash tools/bootstrap.sh)"
    exit 1
fi

# expect NAME RC [GREP] -- ARGS...: plot.py ARGS exits RC; its output holds GREP.
expect() {
    name="$1" want="$2" pattern="$3"
    shift 4
    python3 "$plot" "$@" >"$work/$name.out" 2>&1
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        bad "$name: exit $rc, want $want"
        cat "$work/$name.out"
    elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$work/$name.out"; then
        bad "$name: output lacks '$pattern'"
        cat "$work/$name.out"
    else
        ok "$name (exit $rc)"
    fi
}

# is_png NAME FILE: FILE exists, starts with the PNG signature, is not tiny.
is_png() {
    if [ ! -f "$2" ]; then
        bad "$1: no $2"
    elif [ "$(head -c 8 "$2" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]; then
        bad "$1: $2 is not a PNG"
    elif [ "$(wc -c <"$2")" -lt 10000 ]; then
        bad "$1: $2 has only $(wc -c <"$2") bytes"
    else
        ok "$1: $2 is a PNG of $(wc -c <"$2") bytes"
    fi
}

# A log as oppbench writes it: text lines around the JSON lines.
cat >"$work/bench.log" <<'LOG'
oppbench: 3 of 3 workloads from workloads.json
[1/3] w_bf16: bf16 B=4 Hq=8 Hkv=2 D=128 causal softcap=0
{"workload":"w_bf16","impl":"exact","median_ms":10,"min_ms":9.9,"tflops":5.1,"validated":true,"supported":true,"flops":1e12,"workspace_bytes":0,"reps":20,"kernel":"exact","validation":"ok"}
{"workload":"w_bf16","impl":"fast","median_ms":0.5,"min_ms":0.49,"tflops":200.5,"validated":true,"supported":true,"flops":1e12,"workspace_bytes":0,"reps":20,"kernel":"flash_bf16_d128","validation":"ok"}
oppbench [1/3]  33.3% elapsed 1.0s eta 2.0s: w_bf16
{"workload":"w_f16","impl":"fast","median_ms":1,"min_ms":1,"tflops":150,"validated":true,"supported":true,"flops":1e12,"workspace_bytes":0,"reps":20,"kernel":"flash_f16_d64","validation":"ok"}
{"workload":"w_f32","impl":"fast","median_ms":null,"min_ms":null,"tflops":null,"validated":false,"supported":false,"flops":1e12,"workspace_bytes":0,"reps":0,"kernel":null,"validation":"fast: not supported"}
oppbench done: 3 items in 3.0s (1000.0 ms per item)
LOG
cat >"$work/anchors.log" <<'LOG'
{"env": {"torch": "2.11", "gpu": "H200"}}
{"workload": "w_bf16", "gflop": 1000, "impl": "torch_flash2_varlen", "ms": 0.4, "tflops": 250.0}
{"workload": "w_bf16", "gflop": 1000, "impl": "padded_sdpa_cudnn", "ms": 2.0, "tflops": 50.0}
{"workload": "w_f16", "gflop": 1000, "impl": "padded_sdpa_cudnn", "error": "no kernel"}
{"workload": "w_bf16", "impl": "accuracy", "ours_max_abs": 0.01}
LOG
: >"$work/sweep.log"
for d in 64 128; do
    for c in causal noncausal; do
        for l in 128 256 512 1024; do
            echo "{\"workload\":\"sweep_d${d}_${c}_L${l}\",\"impl\":\"fast\",\"tflops\":$((l / 8 + d))}" >>"$work/sweep.log"
            echo "{\"workload\":\"sweep_d${d}_${c}_L${l}\",\"impl\":\"fa2\",\"median_ms\":1,\"tflops\":$((l / 6 + d))}" >>"$work/sweep.log"
        done
    done
done
# The decode sweep shares sweep.log; its cases are not plotted.
cat >>"$work/sweep.log" <<'LOG'
{"workload":"decode_g4_b8_kv4096","impl":"fast","median_ms":0.05,"tflops":10,"bytes":134348800,"gbps":2687}
{"workload":"decode_g4_b8_kv4096","impl":"fa2","median_ms":0.1,"tflops":5,"bytes":134348800,"gbps":1343}
LOG

expect all 0 "plot: $work/all.png: 3 workloads, 32 sweep points" -- \
    "$work/bench.log" "$work/anchors.log" "$work/sweep.log" --out "$work/all.png" --title "test run"
is_png all "$work/all.png"
expect workloads_only 0 "3 workloads, 0 sweep points" -- "$work/bench.log" --out "$work/w.png"
is_png workloads_only "$work/w.png"
expect sweep_only 0 "0 workloads, 32 sweep points" -- "$work/sweep.log" --out "$work/s.png"
is_png sweep_only "$work/s.png"

printf '{"workload":"a","impl":"fast","tflops":1}\n{"workload": "a", "impl": \n' >"$work/cut.log"
expect malformed 2 "plot: $work/cut.log:2: not a JSON object" -- "$work/cut.log" --out "$work/x.png"
echo '[1, 2]' >"$work/array.log"
printf 'text\n{"workload":"a","impl":"fast","tflops":"fast"}\n' >"$work/type.log"
expect tflops_type 2 "plot: $work/type.log:2: \"tflops\" must be a number >= 0 or null, not 'fast'" \
    -- "$work/type.log" --out "$work/x.png"
printf '{"workload":"a","impl":"fast","tflops":-1}\n' >"$work/neg.log"
expect tflops_negative 2 "$work/neg.log:1: \"tflops\" must be" -- "$work/neg.log" --out "$work/x.png"
printf '{"workload":"sweep_d64_L128","impl":"fa2","tflops":1}\n' >"$work/name.log"
expect sweep_name 2 "$work/name.log:1: sweep case name 'sweep_d64_L128' is not" \
    -- "$work/name.log" --out "$work/x.png"
printf '{"workload":3,"impl":"fast"}\n' >"$work/wname.log"
expect workload_type 2 "$work/wname.log:1: \"workload\" and \"impl\" must be" \
    -- "$work/wname.log" --out "$work/x.png"
printf 'no json here\n{"env": {}}\n' >"$work/empty.log"
expect nothing 2 "plot: no oppbench, torch_anchors.py or fa2_sweep.py lines" \
    -- "$work/empty.log" "$work/array.log" --out "$work/x.png"
expect missing 2 "plot: $work/none.log: no such file" -- "$work/none.log" --out "$work/x.png"
[ ! -e "$work/x.png" ] && ok "no PNG from bad input" || bad "a PNG was written from bad input"

# The README chart's path (bench/README.md, "The README's chart"): the three
# files one device command writes - oppbench --json, torch_anchors.py's
# stdout, the sweep's JSON lines - drawn with --run-only. A FAKE fixture in
# the formats of bench/report.c, torch_anchors.py and fa2_sweep.py: made-up
# numbers, written here and deleted with the test's temp dir, never a result.
cat >"$work/bench.jsonl" <<'LOG'
{"workload":"fake_gqa_bf16","impl":"exact","median_ms":100,"min_ms":99,"tflops":5,"validated":true,"supported":true,"flops":5e14,"workspace_bytes":256,"reps":3,"kernel":"exact_bf16_d128_bm64","validation":"ok: fake"}
{"workload":"fake_gqa_bf16","impl":"fast","median_ms":1,"min_ms":0.9,"tflops":500,"validated":true,"supported":true,"flops":5e14,"workspace_bytes":256,"reps":20,"kernel":"hopper_bf16_d128","max_abs_err":0.01,"rms_err":0.0001,"validation":"ok: fake"}
{"workload":"fake_gqa_bf16","impl":"cublas","median_ms":50,"min_ms":49,"tflops":10,"validated":true,"supported":true,"flops":5e14,"workspace_bytes":1024,"reps":20,"kernel":null,"validation":"ok: fake"}
{"workload":"fake_f32","impl":"fast","median_ms":null,"min_ms":null,"tflops":null,"validated":false,"supported":false,"flops":1e12,"workspace_bytes":256,"reps":0,"kernel":null,"validation":"fast: not supported (no FAST kernel for q_dtype = f32)"}
LOG
cat >"$work/anchors.jsonl" <<'LOG'
{"env": {"torch": "0.0-fake", "gpu": "FAKE-GPU (test fixture)"}}
{"workload": "fake_gqa_bf16", "gflop": 500.0, "impl": "torch_flash2_varlen", "ms": 2.0, "tflops": 250.0}
{"workload": "fake_gqa_bf16", "gflop": 500.0, "impl": "padded_sdpa_cudnn", "ms": 5.0, "tflops": 100.0}
{"workload": "fake_gqa_bf16", "gflop": 500.0, "impl": "padded_unfused", "ms": 50.0, "tflops": 10.0}
{"workload": "fake_f32", "gflop": 1.0, "impl": "padded_sdpa_cudnn", "error": "fake: no f32 kernel"}
LOG
grep '"impl":"f' "$work/sweep.log" | grep -v decode_ >"$work/sweep.jsonl"
expect readme_path 0 "2 workloads, 32 sweep points; title: FAKE-GPU (test fixture), torch 0.0-fake" \
    -- --run-only "$work/bench.jsonl" "$work/anchors.jsonl" "$work/sweep.jsonl" \
    --out "$work/readme.png"
is_png readme_path "$work/readme.png"
expect readme_title 0 "title: FAKE-GPU, 2099-01-01, commit fake123" -- --run-only \
    "$work/bench.jsonl" "$work/anchors.jsonl" --out "$work/readme2.png" \
    --title "FAKE-GPU, 2099-01-01, commit fake123"
printf '{"workload":"fake_gqa_bf16","impl":"fast","tflops":1,"source":"typed in"}\n' >"$work/typed.log"
expect run_only_refuses_transcribed 2 "$work/typed.log:1: a transcribed figure" \
    -- --run-only "$work/bench.jsonl" "$work/typed.log" --out "$work/z.png"
[ ! -e "$work/z.png" ] && ok "no PNG from a transcribed line with --run-only" ||
    bad "a PNG from a transcribed line with --run-only"
expect transcribed_marked 0 "title: t - 1 figures transcribed from tables" \
    -- "$work/typed.log" --out "$work/t.png" --title t

# No matplotlib: a package of that name that fails to import shadows it.
mkdir -p "$work/nompl/matplotlib"
echo 'raise ImportError("hidden by the test")' >"$work/nompl/matplotlib/__init__.py"
PYTHONPATH="$work/nompl" expect no_matplotlib 3 "python3-matplotlib" -- "$work/bench.log" \
    --out "$work/y.png"
[ ! -e "$work/y.png" ] && ok "no PNG without matplotlib" || bad "a PNG without matplotlib"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all bench/plot.py checks passed"
