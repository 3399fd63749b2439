#!/usr/bin/env bash
# sass_diff.sh - proves that a change leaves the GPU machine code alone: builds
# the CUDA objects of two trees with Bazel (so with exactly the nvcc flags of
# tools/build_defs/cuda.bzl and kernels/BUILD) and compares, object by object,
# architecture by architecture and function by function, the SASS that
# cuobjdump prints. Runs on a machine without a GPU. Meant for refactors of
# kernel code that no GPU run re-verifies (DESIGN.md section 6).
#
#   bash tools/sass_diff.sh BASE              BASE (a git revision) vs the working tree
#   bash tools/sass_diff.sh BASE NEW          two git revisions
#   bash tools/sass_diff.sh -t //kernels:exact BASE
#                                             other nvcc_object targets (-t repeats;
#                                             default //kernels:fast //kernels:hopper)
#   bash tools/sass_diff.sh -k DIR BASE       keep the dumps in DIR (else a temporary
#                                             folder, removed at the end)
#
# A revision is checked out in a temporary git worktree and built there (its
# own Bazel output base, removed afterwards with `bazel clean --expunge`; the
# disk cache of .bazelrc / ~/.bazelrc makes unchanged objects free). The
# working tree is built in place, uncommitted changes included.
# Per function it compares
#   instructions  the SASS text with the address column and the encoding
#                 comments removed (opcodes, predicates, operands, branch targets)
#   encodings     the 128-bit words, scheduling control bits included
#   resources     cuobjdump -res-usage (REG, STACK, SHARED, LOCAL, ...)
# and prints one line per (object, architecture, function):
#   identical | DIFF instructions (a diff -u of the first difference follows) |
#   DIFF encodings | DIFF resources | ONLY base / ONLY new
# Exit status: 0 when every function is identical in all three, 1 when
# something differs, 2 on a usage or build error. The embedded PTX (compute_80,
# for GPUs newer than the SASS list) is compared too, as one extra line per
# object (its register numbering may change while the SASS does not).
#
# cuobjdump and nvdisasm: tools/find_cuobjdump.sh ($CUOBJDUMP, else PATH,
# /usr/local/cuda/bin, /opt/liboppacked/tools (tools/bootstrap.sh), ...).
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

targets=()
keep=""
while getopts "t:k:h" opt; do
    case "$opt" in
    t) targets+=("$OPTARG") ;;
    k) keep="$OPTARG" ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 2 ] || usage
base_rev="$1"
new_rev="${2:-}"
[ ${#targets[@]} -gt 0 ] || targets=(//kernels:fast //kernels:hopper)

root="$(git rev-parse --show-toplevel)"
cd "$root"
git rev-parse --verify -q "$base_rev^{commit}" >/dev/null || {
    echo "sass_diff: no revision $base_rev" >&2
    exit 2
}
if [ -n "$new_rev" ]; then
    git rev-parse --verify -q "$new_rev^{commit}" >/dev/null || {
        echo "sass_diff: no revision $new_rev" >&2
        exit 2
    }
fi

# --- cuobjdump
# shellcheck source=find_cuobjdump.sh
. "$(dirname "${BASH_SOURCE[0]}")/find_cuobjdump.sh"
cuobjdump="$(opp_find_cuobjdump)"
[ -n "$cuobjdump" ] || {
    echo "sass_diff: no cuobjdump with an nvdisasm beside it (see the header)" >&2
    exit 2
}
export PATH="$(dirname "$cuobjdump"):$PATH" # cuobjdump -sass runs nvdisasm

work="${keep:-$(mktemp -d /tmp/sass_diff.XXXXXX)}"
mkdir -p "$work"
trees=()
cleanup() {
    local t
    for t in "${trees[@]}"; do
        (cd "$t" && bazel clean --expunge >/dev/null 2>&1) || true
        git -C "$root" worktree remove --force "$t" >/dev/null 2>&1 || true
    done
    [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

# The objects of `targets` built in tree $1, copied to $2. An nvcc_object
# //pkg:name writes bazel-bin/pkg/name_<src>.o (tools/build_defs/cuda.bzl).
build_objects() {
    local tree="$1" out="$2" t pkg name
    mkdir -p "$out"
    echo "sass_diff: building ${targets[*]} in $tree" >&2
    (cd "$tree" && bazel build "${targets[@]}" >&2) || {
        echo "sass_diff: the build failed in $tree" >&2
        exit 2
    }
    for t in "${targets[@]}"; do
        pkg="${t#//}"
        pkg="${pkg%%:*}"
        name="${t##*:}"
        cp "$tree/bazel-bin/$pkg/${name}"_*.o "$out/"
    done
}

# The tree of revision $1 ("": the working tree) in $tree (no subshell: the
# cleanup needs `trees`).
tree_of() {
    local rev="$1" side="$2"
    tree="$root"
    if [ -n "$rev" ]; then
        tree="$work/tree_$side"
        git worktree add --detach -q "$tree" "$rev" >&2
        trees+=("$tree")
    fi
}

tree_of "$base_rev" base
build_objects "$tree" "$work/base"
tree_of "$new_rev" new
build_objects "$tree" "$work/new"

# Splits `cuobjdump -sass OBJ` into DIR/<arch>/<function>.ins (instructions)
# and .enc (encodings).
split_sass() {
    "$cuobjdump" -sass "$1" | awk -v dir="$2" '
        /^arch = / { arch = $3; next }
        /^[ \t]*Function : / {
            fn = $3; base = dir "/" arch "/" fn
            system("mkdir -p \"" dir "/" arch "\"")
            ins = base ".ins"; enc = base ".enc"
            printf "" > ins; printf "" > enc
            next
        }
        fn == "" { next }
        /^[ \t]*\/\* 0x[0-9a-f]+ \*\/[ \t]*$/ {          # the second encoding word
            match($0, /0x[0-9a-f]+/); print substr($0, RSTART, RLENGTH) >> enc; next
        }
        /^[ \t]*\/\*[0-9a-f]+\*\// {                      # an instruction
            line = $0
            if (match(line, /\/\* 0x[0-9a-f]+ \*\/[ \t]*$/)) {
                w = substr(line, RSTART, RLENGTH); line = substr(line, 1, RSTART - 1)
                match(w, /0x[0-9a-f]+/); print substr(w, RSTART, RLENGTH) >> enc
            }
            sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
            sub(/[ \t]+$/, "", line)
            print line >> ins
            next
        }
        /^[ \t]*\.[a-z]/ { line = $0; sub(/^[ \t]+/, "", line); print line >> ins; next }
        /^[ \t]*\.\./ { next }
    '
}

# `cuobjdump -res-usage OBJ` as lines "arch function resources".
res_usage() {
    "$cuobjdump" -res-usage "$1" | awk '
        /^Fatbin ptx code/ { ptx = 1 } /^Fatbin elf code/ { ptx = 0 }
        /^arch = / { arch = $3 }
        /^ Function / { fn = $2; sub(/:$/, "", fn); next }
        fn != "" && /REG:/ { if (!ptx) { sub(/^[ \t]+/, ""); print arch, fn, $0 } fn = "" }
    ' | sort
}

# The embedded PTX, comments and blank lines removed.
ptx_of() {
    local d="$1/ptx"
    rm -rf "$d" && mkdir -p "$d"
    (cd "$d" && "$cuobjdump" -xptx all "$2" >/dev/null 2>&1) || true
    if compgen -G "$d/*.ptx" >/dev/null; then
        cat "$d"/*.ptx | sed -e 's://.*$::' -e '/^[[:space:]]*$/d'
    fi
}

status=0
n_same=0
n_diff=0
for obj in "$work"/base/*.o "$work"/new/*.o; do
    basename "$obj"
done | sort -u >"$work/objects"
while read -r o; do
    a="$work/base/$o" b="$work/new/$o"
    if [ ! -f "$a" ] || [ ! -f "$b" ]; then
        echo "$o: ONLY $([ -f "$a" ] && echo base || echo new)"
        status=1
        continue
    fi
    sa="$work/sass/base/$o" sb="$work/sass/new/$o"
    rm -rf "$sa" "$sb"
    mkdir -p "$sa" "$sb"
    split_sass "$a" "$sa"
    split_sass "$b" "$sb"
    res_usage "$a" >"$sa.res"
    res_usage "$b" >"$sb.res"
    (cd "$sa" && find . -name '*.ins' | sort) >"$sa.list"
    (cd "$sb" && find . -name '*.ins' | sort) >"$sb.list"
    while read -r f; do
        f="${f#./}"
        arch="${f%%/*}"
        fn="${f#*/}"
        fn="${fn%.ins}"
        label="$o $arch $fn"
        if [ ! -f "$sa/$f" ] || [ ! -f "$sb/$f" ]; then
            echo "$label: ONLY $([ -f "$sa/$f" ] && echo base || echo new)"
            status=1
            n_diff=$((n_diff + 1))
            continue
        fi
        what=""
        cmp -s "$sa/$f" "$sb/$f" || what="$what instructions"
        cmp -s "$sa/${f%.ins}.enc" "$sb/${f%.ins}.enc" || what="$what encodings"
        [ "$(grep -F " $fn " "$sa.res" | grep "^$arch " || true)" = \
            "$(grep -F " $fn " "$sb.res" | grep "^$arch " || true)" ] || what="$what resources"
        if [ -z "$what" ]; then
            echo "$label: identical ($(wc -l <"$sa/$f") lines)"
            n_same=$((n_same + 1))
        else
            echo "$label: DIFF$what"
            if [[ "$what" == *instructions* ]]; then
                diff -u "$sa/$f" "$sb/$f" >"$work/diff" || true
                sed -n '3,42p' "$work/diff" | sed 's/^/    /'
            fi
            if [[ "$what" == *resources* ]]; then
                grep -F " $fn " "$sa.res" | grep "^$arch " | sed 's/^/    base: /' || true
                grep -F " $fn " "$sb.res" | grep "^$arch " | sed 's/^/    new:  /' || true
            fi
            status=1
            n_diff=$((n_diff + 1))
        fi
    done < <(sort -u "$sa.list" "$sb.list")
    ptx_of "$work/sass/base" "$a" >"$sa.ptx"
    ptx_of "$work/sass/new" "$b" >"$sb.ptx"
    if [ ! -s "$sa.ptx" ] && [ ! -s "$sb.ptx" ]; then
        echo "$o PTX: none embedded"
    elif cmp -s "$sa.ptx" "$sb.ptx"; then
        echo "$o PTX: identical"
    else
        echo "$o PTX: differs (not SASS: only GPUs newer than the SASS list JIT it)"
    fi
done <"$work/objects"
echo "sass_diff: $n_same functions identical, $n_diff differ (base $base_rev, new ${new_rev:-working tree})"
exit $status
