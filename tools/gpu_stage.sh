#!/usr/bin/env bash
# gpu_stage.sh - builds, on THIS machine (no GPU needed), everything the GPU
# machine runs, and stages it in the git-ignored folder stage/ so that one
# device command can run it there (DESIGN.md §6; the GPU machine has the
# CUDA 13 runtime and cuBLAS at /usr/local/cuda/lib64, but no Bazel, no
# CMocka, no protobuf-c).
#
#   bash tools/gpu_stage.sh                  build (-c opt) and stage
#   bash tools/gpu_stage.sh --allow-missing  stage what builds, list what did not
#   bash tools/gpu_stage.sh --no-build       re-stage the last -c opt outputs
#   bash tools/gpu_stage.sh --no-testdata    leave testdata/ out of stage/ (run_all.sh
#                                            then reads the tracked testdata/ that the
#                                            device call sends anyway; saves ~16 MiB)
#   bash tools/gpu_stage.sh --ab NAME=REF    also build oppbench and fast_gpu_test of
#                                            commit REF (a temporary worktree) into
#                                            stage/ab/NAME/ (~4 MiB compressed) for
#                                            stage/ab.sh (tools/gpu_ab.sh); repeatable.
#                                            Each is a build in a fresh output base:
#                                            minutes with a Bazel disk cache
#                                            (build --disk_cache=... in ~/.bazelrc),
#                                            a clean build's time without one
#   bash tools/gpu_stage.sh --ab-bench NAME=REF  the same with oppbench alone (~2.2 MiB:
#                                            a build whose tests already ran)
#   bash tools/gpu_stage.sh --ab-portable NAME=REF  as --ab, with the Hopper rows left
#                                            out of the worktree's dispatch list
#                                            (tools/portable_rows.sh): the portable
#                                            flash kernel's figures on an H100 / H200
#                                            (bench/README.md); stage/ab/NAME/PORTABLE
#   bash tools/gpu_stage.sh --ab-define NAME=REF:MACRO=V[,MACRO=V]  as --ab, with those
#                                            compile-time switches of the kernels set
#                                            (tools/ab_defines.sh: defined after
#                                            kernel_list.h's include guard), e.g.
#                                            --ab-define sf=HEAD:OPP__HOPPER_SOFTMAX_FIRST=1;
#                                            stage/ab/NAME/DEFINES names them
#   bash tools/gpu_stage.sh --ab-tests T1,T2  the tests each --ab / --ab-portable /
#                                            --ab-define build stages (default
#                                            fast_gpu_test; e.g. tf32x3_gpu_test for a
#                                            TF32X3 switch); stage/ab.sh --tests runs
#                                            fast_gpu_test where staged (with --impl
#                                            tf32x3: tf32x3_gpu_test)
#   bash tools/gpu_stage.sh --tests T1,T2    build and stage only these test binaries
#                                            of //tests (e.g. fast_gpu_test,ffma_gpu_test):
#                                            room for more --ab builds under the 64 MiB
#                                            (four --ab builds and every test do not fit);
#                                            run_all.sh then runs only these, and its
#                                            --sanitize / --sanitize-full need
#                                            device_guard_test among them
#
# What it builds: every cc_test of //tests (bazel query 'kind(cc_test,
# //tests:all)'; CPU tests too, they are cheap), //bench:oppbench,
# //bench:read_ceiling, //bench:libopp_timeline.so and //tools:oppcheck, with
# bazel build -c opt.
# What stage/ holds afterwards (regular files only, no symbolic links):
#   stage/tests/<test>       the test binaries (stage/tests.txt lists them,
#                            stage/gpu_tests.txt those that use CUDA)
#   stage/oppbench, stage/oppcheck, stage/read_ceiling (bench/read_ceiling.h)
#                            (a binary over 1 MiB is stored as <name>.xz - those
#                            linking the library's kernels, ~13 MiB each -
#                            and stage/run_all.sh unpacks it on the GPU machine)
#   stage/libopp_timeline.so the CUPTI kernel-timeline injection library
#                            (bench/kernel_timeline.c; bench/README.md, "Kernel
#                            timeline (CUPTI)"), ~20 KiB
#   stage/lib/               shared libraries the binaries need that the GPU
#                            machine lacks (libcmocka.so.0, libprotobuf-c.so.1,
#                            ...: everything ldd names except CUDA's, libc,
#                            libm, libstdc++, libgcc_s, ld-linux, libpthread,
#                            libdl, librt, libutil (glibc's); Jansson, which oppbench uses, is
#                            linked from libjansson.a: nothing to carry), and
#                            CUPTI, libcupti.so.13, which libopp_timeline.so
#                            needs: though CUDA's, it is carried (the GPU
#                            machine's library path may lack it), as
#                            stage/lib/libcupti.so.13.xz (~4 MiB unpacked;
#                            run_all.sh unpacks it, or opp_unpack of stage/unpack.sh)
#   stage/testdata/          onnx-attention-conformance/ and cases/ (unless --no-testdata)
#   stage/bench/             workloads.json, torch_anchors.py (from ../shared/bench) and
#                            bench/'s scripts: fa2_accuracy.py, fa2_sweep.py, compare.py,
#                            bench_common.py, plot.py; bench/decode_probes.json (speculative
#                            decoding and chunked prefill); bench/sanitize_workloads.json (the
#                            full-length shapes of run_all.sh --sanitize-full); timeline.py
#                            (the summary of libopp_timeline.so's records);
#                            bench/small_decode.json (read_ceiling's small-batch decode shapes)
#   stage/ci_summary.py      the CMocka result parser of tools/ci_summary.py
#   stage/run_all.sh         copied from tools/gpu_run_all.sh: runs it all there
#   stage/ab.sh              copied from tools/gpu_ab.sh: this build against the
#                            --ab builds, timed in turns, in one device command
#   stage/ab/NAME/           oppbench.xz, fast_gpu_test.xz, COMMIT (--ab NAME=REF;
#                            --ab-bench: oppbench.xz, COMMIT, BENCH_ONLY;
#                            --ab-portable: as --ab, and PORTABLE)
#   stage/unpack.sh          copied from tools/gpu_unpack.sh: the unpacking both use
#   stage/STAGE_INFO.txt     commit, dirty files, date, sizes
# On the GPU machine (device tool), from the repo root, with carry ["stage"]:
#   bash stage/run_all.sh --sanitize, then bash stage/run_all.sh --no-tests --bench --oppcheck
#   (compute-sanitizer's four tools at full length and on adversarial cu_seqlens:
#    bash stage/run_all.sh --no-tests --sanitize-full; the 2^31 edges alone:
#    bash stage/run_all.sh --tests edge31_gpu_test)
#   (the benchmark alone, FAST vs FA2 with accuracy, the sweep and the decode sweep:
#    bash stage/run_all.sh --no-tests --bench; the decode sweep with decode_gqa_bf16
#    and its anchors only: bash stage/run_all.sh --no-tests --bench --no-accuracy
#    --no-sweep --only decode_gqa_bf16)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SHARED=${OPP_SHARED_DIR:-$ROOT/../shared}
STAGE=$ROOT/stage
build=1
allow_missing=0
testdata=1
ab=()      # NAME=REF of --ab / --ab-bench / --ab-portable
ab_tests=() # 1: with the --ab-tests list (--ab, --ab-portable, --ab-define), 0: oppbench alone (--ab-bench)
ab_portable=() # 1: the Hopper rows left out (--ab-portable), else 0
ab_defines=()  # MACRO=V[,MACRO=V] of --ab-define, else ""
tests_only="" # --tests: comma-separated test names
ab_test_list=fast_gpu_test # --ab-tests: the tests each --ab build stages
while [ $# -gt 0 ]; do
    a=$1
    shift
    case "$a" in
    --no-build) build=0 ;;
    --allow-missing) allow_missing=1 ;;
    --no-testdata) testdata=0 ;;
    --ab | --ab-bench | --ab-portable | --ab-define)
        [ $# -gt 0 ] && [[ $1 =~ ^[A-Za-z0-9_.-]+=.+$ ]] || {
            echo "gpu_stage: $a needs NAME=REF (NAME: letters, digits, _ . -), got '${1:-}'" >&2
            exit 2
        }
        defs=""
        if [ "$a" = --ab-define ]; then
            [[ ${1#*=} =~ ^[^:]+:OPP__[A-Z0-9_]+=[A-Za-z0-9_]+(,OPP__[A-Z0-9_]+=[A-Za-z0-9_]+)*$ ]] || {
                echo "gpu_stage: --ab-define needs NAME=REF:MACRO=V[,MACRO=V] (MACRO: OPP__...), got '$1'" >&2
                exit 2
            }
            defs=${1##*:}
            set -- "${1%:*}" "${@:2}"
        fi
        [[ ${1%%=*} != this ]] && [[ " ${ab[*]+${ab[*]}} " != *" ${1%%=*}="* ]] || {
            echo "gpu_stage: $a ${1%%=*}: a second build of that name, or 'this' (the tree's)" >&2
            exit 2
        }
        ab+=("$1")
        if [ "$a" = --ab-bench ]; then ab_tests+=(0); else ab_tests+=(1); fi
        if [ "$a" = --ab-portable ]; then ab_portable+=(1); else ab_portable+=(0); fi
        ab_defines+=("$defs")
        shift
        ;;
    --ab-tests)
        [ $# -gt 0 ] && [[ $1 =~ ^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$ ]] || {
            echo "gpu_stage: --ab-tests needs NAME[,NAME] (test binaries of //tests), got '${1:-}'" >&2
            exit 2
        }
        ab_test_list=$1
        shift
        ;;
    --tests)
        [ $# -gt 0 ] && [[ $1 =~ ^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$ ]] || {
            echo "gpu_stage: --tests needs NAME[,NAME] (test binaries of //tests), got '${1:-}'" >&2
            exit 2
        }
        tests_only=$1
        shift
        ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "gpu_stage: unknown option $a (see --help)" >&2
        exit 2
        ;;
    esac
done

die() {
    echo "gpu_stage: $*" >&2
    exit 1
}

# the tree the binaries are built from, taken before the build: a commit
# made while it runs must not be written into STAGE_INFO.txt as theirs
built_head=$(git rev-parse HEAD 2>/dev/null || echo unknown)
built_dirty=$(git status --porcelain 2>/dev/null | wc -l) || built_dirty=unknown

# --- what to build
# (the fuzz replay tests are left out: they read their seed corpus from
# Bazel's runfiles arguments, and CI runs them; fuzz/README.md)
mapfile -t TESTS < <(bazel query 'kind(cc_test, //tests:all)' 2>/dev/null | grep -v '^//tests:fuzz_.*_replay_test$' | sort)
[ ${#TESTS[@]} -gt 0 ] || die "bazel query found no cc_test in //tests"
if [ -n "$tests_only" ]; then
    all=" ${TESTS[*]} "
    TESTS=()
    for t in ${tests_only//,/ }; do
        [[ $all == *" //tests:$t "* ]] || die "--tests: //tests:$t is not a test binary gpu_stage stages"
        TESTS+=("//tests:$t")
    done
fi
TARGETS=("${TESTS[@]}" //bench:oppbench //bench:read_ceiling //bench:libopp_timeline.so
    //tools:oppcheck)
echo "gpu_stage: ${#TESTS[@]} test binaries + oppbench + read_ceiling + libopp_timeline.so + oppcheck"

# Labels that built in this run (from Bazel's build event file); with
# --no-build every existing -c opt output counts.
built=" ${TARGETS[*]} "
if [ $build -eq 1 ]; then
    bep=$(mktemp)
    # --keep_going: a target someone else is breaking right now must not
    # hide which of the others built.
    if ! bazel build -c opt --dynamic_mode=off --keep_going --build_event_json_file="$bep" "${TARGETS[@]}"; then
        [ $allow_missing -eq 1 ] || die "bazel build -c opt failed (--allow-missing stages what built)"
        echo "gpu_stage: WARNING: some targets did not build; staging the others" >&2
    fi
    built=" $(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    label = e.get("id", {}).get("targetCompleted", {}).get("label")
    if label and e.get("completed", {}).get("success"):
        print(label)
' "$bep" | tr '\n' ' ') "
    rm -f "$bep"
fi
BIN=$(bazel info -c opt --dynamic_mode=off bazel-bin 2>/dev/null) || die "bazel info -c opt bazel-bin failed"

# label //pkg:name -> $BIN/pkg/name
out_path() {
    local l=${1#//}
    echo "$BIN/${l%%:*}/${l#*:}"
}

# --- fresh stage/
rm -rf "$STAGE"
mkdir -p "$STAGE/tests" "$STAGE/lib" "$STAGE/bench" "$STAGE/testdata"
missing=()
staged=()
: >"$STAGE/tests.txt"
: >"$STAGE/gpu_tests.txt"
for t in "${TARGETS[@]}"; do
    src=$(out_path "$t")
    name=${t#*:}
    # An output of a target that failed to build now may still be there
    # from an earlier run: stale, so not staged.
    if [ ! -f "$src" ] || [[ $built != *" $t "* ]]; then
        missing+=("$t")
        continue
    fi
    case "$t" in
    //tests:*)
        dst=$STAGE/tests/$name
        echo "$name" >>"$STAGE/tests.txt"
        if grep -q cudaGetDeviceCount "$src"; then
            echo "$name" >>"$STAGE/gpu_tests.txt"
        fi
        ;;
    *) dst=$STAGE/$name ;;
    esac
    cp -L "$src" "$dst"
    chmod u+w,a+x "$dst"
    staged+=("$dst")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "gpu_stage: NOT staged (did not build): ${missing[*]}" >&2
    [ $allow_missing -eq 1 ] || die "missing binaries"
fi

# --- --ab NAME=REF: oppbench and fast_gpu_test of commit REF (--ab-bench:
# oppbench alone), built -c opt in a temporary worktree (its own Bazel
# output base, expunged afterwards; the disk cache of ~/.bazelrc, if any,
# is shared), into stage/ab/NAME/ with the commit in stage/ab/NAME/COMMIT,
# for stage/ab.sh; the libraries and compression steps below take them as
# they take the tree's binaries
ab_remove() { # ab_remove WORKTREE: expunge its output base, remove it and its folder
    (cd "$1" && bazel clean --expunge >/dev/null 2>&1)
    git worktree remove --force "$1"
    rmdir "$(dirname "$1")"
}
for k in "${!ab[@]}"; do
    spec=${ab[$k]}
    name=${spec%%=*} ref=${spec#*=}
    outs=(bench/oppbench) # bazel-bin paths; the label of p is //${p%/*}:${p#*/}
    if [ "${ab_tests[$k]}" -eq 1 ]; then
        IFS=, read -ra abt <<<"$ab_test_list"
        for t in "${abt[@]}"; do outs+=("tests/$t"); done
    fi
    targets=()
    for o in "${outs[@]}"; do targets+=("//${o%/*}:${o#*/}"); done
    commit=$(git rev-parse --verify --quiet "$ref^{commit}") || die "--ab $spec: no commit $ref"
    wt=$(mktemp -d)/$name
    git worktree add --detach "$wt" "$commit" >/dev/null || die "--ab $spec: git worktree add failed"
    if [ "${ab_portable[$k]}" -eq 1 ] &&
        ! bash "$ROOT/tools/portable_rows.sh" "$wt/kernels/kernel_list.h"; then
        ab_remove "$wt"
        die "--ab-portable $spec: the Hopper rows could not be left out"
    fi
    if [ -n "${ab_defines[$k]}" ] &&
        ! bash "$ROOT/tools/ab_defines.sh" "$wt/kernels" "${ab_defines[$k]}"; then
        ab_remove "$wt"
        die "--ab-define $spec: the switches ${ab_defines[$k]} could not be set"
    fi
    echo "gpu_stage: --ab $name: building $commit in $wt$([ "${ab_portable[$k]}" -eq 0 ] ||
        echo ' (Hopper rows left out)')${ab_defines[$k]:+ with ${ab_defines[$k]}}"
    if ! (cd "$wt" && bazel build -c opt --dynamic_mode=off "${targets[@]}"); then
        ab_remove "$wt"
        die "--ab $spec: bazel build failed"
    fi
    abin=$(cd "$wt" && bazel info -c opt --dynamic_mode=off bazel-bin 2>/dev/null)
    mkdir -p "$STAGE/ab/$name"
    for o in "${outs[@]}"; do
        cp -L "$abin/$o" "$STAGE/ab/$name/"
        chmod u+w,a+x "$STAGE/ab/$name/${o#*/}"
        staged+=("$STAGE/ab/$name/${o#*/}")
    done
    [ "${ab_tests[$k]}" -eq 1 ] || echo "--ab-bench: oppbench alone" >"$STAGE/ab/$name/BENCH_ONLY"
    [ "${ab_portable[$k]}" -eq 0 ] ||
        echo "--ab-portable: the Hopper rows left out (tools/portable_rows.sh)" >"$STAGE/ab/$name/PORTABLE"
    [ -z "${ab_defines[$k]}" ] || echo "${ab_defines[$k]}" >"$STAGE/ab/$name/DEFINES"
    echo "$commit" >"$STAGE/ab/$name/COMMIT"
    ab_remove "$wt"
done

# --- shared libraries the GPU machine lacks
skip_lib='^(linux-vdso|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux|libpthread\.so|libdl\.so|librt\.so|libutil\.so)'
for f in "${staged[@]}"; do
    while read -r line; do
        case "$line" in
        *"not found"*) die "$(basename "$f") needs a library ldd cannot find: $line" ;;
        esac
        lib=$(awk '{print $1}' <<<"$line")
        path=$(awk '$2 == "=>" {print $3}' <<<"$line")
        [ -n "$path" ] || continue
        [[ $lib =~ $skip_lib ]] && continue
        # CUDA's libraries are the GPU machine's, except CUPTI (libopp_timeline.so's)
        [[ $path == /usr/local/cuda* ]] && [[ $lib != libcupti.so* ]] && continue
        [ -f "$STAGE/lib/$lib" ] || cp -L "$path" "$STAGE/lib/$lib"
    done < <(ldd "$f")
done
# CUPTI (~4 MiB) travels compressed with the large binaries below
for f in "$STAGE"/lib/libcupti.so*; do
    if [ -f "$f" ]; then
        chmod u+w "$f"
        staged+=("$f")
    fi
done
for need in libcmocka.so.0 libprotobuf-c.so.1; do
    [ -f "$STAGE/lib/$need" ] || die "$need was not staged (no test links it?)"
done

# --- the large binaries travel compressed: each binary that links the
# library carries the kernels' fat binary (SASS for four architectures,
# ~13 MiB), and a device call sends at most 64 MiB. xz -3 makes them ~9x
# smaller; stage/run_all.sh unpacks them (xz, else python3's lzma) first.
command -v xz >/dev/null || die "xz not found (apt-get install xz-utils)"
for f in "${staged[@]}"; do
    [ "$(stat -c %s "$f")" -gt $((1 << 20)) ] || continue
    xz -T0 -3 -f "$f" || die "xz $f failed"
done

# --- data, bench inputs, the parser and the runner
if [ $testdata -eq 1 ]; then
    cp -rL testdata/onnx-attention-conformance "$STAGE/testdata/"
    cp -rL testdata/cases "$STAGE/testdata/"
    find "$STAGE/testdata" -name __pycache__ -prune -exec rm -rf {} +
else
    rmdir "$STAGE/testdata"
fi
for f in workloads.json torch_anchors.py; do
    [ -f "$SHARED/bench/$f" ] || die "$SHARED/bench/$f not found (set OPP_SHARED_DIR)"
    cp -L "$SHARED/bench/$f" "$STAGE/bench/"
done
for f in bench_common.py fa2_accuracy.py fa2_sweep.py compare.py plot.py sanitize_workloads.json \
    decode_probes.json small_decode.json timeline.py; do
    cp bench/$f "$STAGE/bench/"
done
cp tools/ci_summary.py "$STAGE/ci_summary.py"
cp tools/gpu_run_all.sh "$STAGE/run_all.sh"
cp tools/gpu_ab.sh "$STAGE/ab.sh"
cp tools/gpu_unpack.sh "$STAGE/unpack.sh"
chmod a+x "$STAGE/run_all.sh" "$STAGE/ab.sh"

# --- what was staged, and how much will travel
{
    echo "staged $(date -u '+%Y-%m-%d %H:%M:%S UTC') by tools/gpu_stage.sh"
    echo "commit $built_head"
    echo "uncommitted changes: $built_dirty paths"
    now_head=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    if [ "$now_head" != "$built_head" ]; then
        echo "HEAD moved during the stage: now $now_head (the binaries are of the commit above)"
    fi
    echo "binaries:"
    (cd "$STAGE" && find tests oppbench* read_ceiling* libopp_timeline* oppcheck* -type f -printf '  %p %s bytes\n' 2>/dev/null | sort) || true
    echo "libraries: $(find "$STAGE/lib" -type f -printf '%f ' | sort)"
    echo "GPU test binaries: $(tr '\n' ' ' <"$STAGE/gpu_tests.txt")"
    echo "bench scripts: $(cd "$STAGE/bench" && ls | tr '\n' ' ')"
    for spec in ${ab[@]+"${ab[@]}"}; do
        echo "ab build ${spec%%=*}: ${spec#*=} = $(cat "$STAGE/ab/${spec%%=*}/COMMIT")"
    done
} >"$STAGE/STAGE_INFO.txt"
cat "$STAGE/STAGE_INFO.txt"

stage_bytes=$(du -sb "$STAGE" | awk '{print $1}')
tree_bytes=$(git ls-files -z -co --exclude-standard | xargs -0 du -cb 2>/dev/null | tail -1 | awk '{print $1}')
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
echo "gpu_stage: stage/ is $(mib "$stage_bytes") (tests $(du -sh "$STAGE/tests" | cut -f1)," \
    "lib $(du -sh "$STAGE/lib" | cut -f1), testdata $(du -sh "$STAGE/testdata" 2>/dev/null | cut -f1))"
echo "gpu_stage: the device call sends the working tree ($(mib "$tree_bytes")) + stage/ =" \
    "$(mib $((stage_bytes + tree_bytes))) of its 64 MiB"
[ $((stage_bytes + tree_bytes)) -lt $((64 * 1048576)) ] ||
    die "over the device tool's 64 MiB (try --no-testdata)"
[ $((stage_bytes + tree_bytes)) -lt $((56 * 1048576)) ] || [ $testdata -eq 0 ] ||
    echo "gpu_stage: WARNING: close to 64 MiB; --no-testdata saves ~16 MiB" >&2
echo "gpu_stage: done. Device commands (carry [\"stage\"], README.md): bash stage/run_all.sh --sanitize; then bash stage/run_all.sh --no-tests --bench --oppcheck (or --no-tests --bench alone); bash stage/run_all.sh --no-tests --sanitize-full"
