#!/usr/bin/env bash
# python_test.sh - the Python package's Bazel tests (python/BUILD).
#   python_test.sh pytest <liboppacked.so> <oppacked.h> [<liboppacked_ref.so>]
#       pytest -v of python/tests, OPPACKED_LIB set to the built library and
#       OPPACKED_REF_LIB to the test-only CPU reference library (one result
#       line per case: tools/ci_summary.py counts them).
#   python_test.sh pip <liboppacked.so> <oppacked.h>
#       pip install of a copy of python/ (no network: --no-build-isolation
#       --no-index) into a fresh target; the installed package must load the
#       bundled library with no environment set and pass a host check.
# Python: $OPP_PYTHON, else python3 (the Debian one under Bazel's PATH).
set -euo pipefail

mode="$1"
lib="$(readlink -f "$2")"
header="$(readlink -f "$3")"
ref_lib="${4:+$(readlink -f "$4")}"
py="${OPP_PYTHON:-python3}"
here="$(dirname "$(readlink -f "$0")")"
# The package's sources in the runfiles tree (python/ beside this script).
src="${TEST_SRCDIR:-$here/..}/oppacked/python"
[ -d "$src/oppacked" ] || src="$here"
work="${TEST_TMPDIR:-$(mktemp -d)}/python_$mode"
rm -rf "$work"
mkdir -p "$work"

case "$mode" in
pytest)
    export OPPACKED_LIB="$lib" OPPACKED_HEADER="$header" PYTHONPATH="$src"
    [ -z "$ref_lib" ] || export OPPACKED_REF_LIB="$ref_lib"
    exec "$py" -m pytest -v -p no:cacheprovider "$src/tests"
    ;;
pip)
    mkdir -p "$work/repo/lib" "$work/site"
    cp -rL "$src" "$work/repo/python"
    cp "$header" "$work/repo/lib/oppacked.h"
    OPPACKED_LIB="$lib" "$py" -m pip install --quiet --no-build-isolation --no-index --no-deps \
        --target "$work/site" "$work/repo/python"
    [ -f "$work/site/oppacked/liboppacked.so" ] || { echo "FAILED: liboppacked.so not bundled" >&2; exit 1; }
    cd "$work"
    env -u OPPACKED_LIB -u OPPACKED_PREFIX PYTHONPATH="$work/site" "$py" - "$work/site" <<'PY'
import os, sys
import oppacked
site = sys.argv[1]
path = oppacked.library_path()
assert os.path.realpath(path) == os.path.realpath(os.path.join(site, "oppacked", "liboppacked.so")), path
d = oppacked.attention_desc(q_dtype=16, k_dtype=16, v_dtype=16, out_dtype=16, batch=1, num_heads=8,
                            head_size=64, total_q=10, total_kv=10, max_seqlen_q=10, max_seqlen_kv=10)
oppacked.desc_check(d)
d.kv_num_heads = 3
try:
    oppacked.desc_check(d)
    raise SystemExit("FAILED: kv_num_heads = 3 accepted")
except oppacked.OppError as e:
    assert e.name == "BAD_PARAM_KV_HEADS_NOT_DIVIDING", e
print(f"PASSED: pip-installed oppacked {oppacked.version()} loads {path}")
PY
    ;;
*)
    echo "usage: python_test.sh pytest|pip <liboppacked.so> <oppacked.h> [<liboppacked_ref.so>]" >&2
    exit 2
    ;;
esac
