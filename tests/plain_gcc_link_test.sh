#!/bin/sh
# plain_gcc_link_test.sh - proves the public header alone is enough to call
# the validation API from a plain gcc program: compiles plain_gcc_program.c
# with gcc -std=c11 -Wall -Wextra -Werror against oppacked.h and
# liboppacked.a (no Bazel toolchain, no internal headers) and runs it.
# Usage (from Bazel): plain_gcc_link_test.sh <oppacked.h> <plain_gcc_program.c> <lib files...>
set -eu

header="$1"
program="$2"
shift 2
archive=""
for f in "$@"; do
    case "$f" in
    *.a) archive="$f" ;;
    esac
done
if [ -z "$archive" ]; then
    echo "FAILED: no .a among: $*" >&2
    exit 1
fi

# Copy the header alone into a fresh directory so nothing else is on the path.
work="${TEST_TMPDIR:-$(mktemp -d)}/plain_gcc"
mkdir -p "$work/include"
cp "$header" "$work/include/oppacked.h"

gcc -std=c11 -Wall -Wextra -Werror -I"$work/include" "$program" "$archive" -o "$work/prog"
"$work/prog"
