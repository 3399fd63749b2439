#!/usr/bin/env bash
# fuzz/build.sh - builds the libFuzzer targets of fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined) straight from the C sources: the
# library's validation objects (pure host C, no CUDA: see lib/BUILD) and the
# ONNX reader of tools/onnx (with protobuf-c). No Bazel.
#
#   bash fuzz/build.sh            # -> build/fuzz/{desc,attention24_desc,varlen,onnx}_fuzz
#
# Needs clang with its libFuzzer runtime (Debian: apt-get install -y clang),
# protoc-c and libprotobuf-c (tools/bootstrap.sh installs them). Output
# directory: $OPP_FUZZ_OUT (default build/fuzz, git-ignored). Run them with
# fuzz/run.sh (fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OPP_FUZZ_OUT:-build/fuzz}
cc=${CC:-clang}
mkdir -p "$out/gen/tools/onnx" "$out/obj"

san="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
cflags="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra -Werror -Wshadow -ffp-contract=off"
inc="-I. -I$out/gen"

# The library's validation-only sources (no CUDA, no libm): lib/BUILD names them.
lib_srcs="lib/attention_desc.c lib/attention24_desc.c lib/desc_size.c lib/dispatch.c lib/dtype.c
          lib/problem.c lib/status.c lib/varlen_check.c lib/version.c"

# The ONNX reader and its protobuf-c code, generated as tools/onnx/BUILD does.
protoc-c --proto_path=tools/onnx --c_out="$out/gen/tools/onnx" tools/onnx/onnx_min.proto
# generated code: its own warnings policy (as in tools/onnx/BUILD)
$cc -std=c11 -g -O1 $san -I"$out/gen/tools/onnx" -c "$out/gen/tools/onnx/onnx_min.pb-c.c" \
    -o "$out/obj/onnx_min.pb-c.o"
onnx_srcs="tools/onnx/onnx_case.c tools/onnx/onnx_io.c tools/onnx/onnx_model.c
           tools/onnx/onnx_tensor.c"

build() { # name, sources...
    local name=$1
    shift
    echo "fuzz/build.sh: $out/$name"
    # shellcheck disable=SC2086
    $cc $cflags $san $inc "$@" -o "$out/$name" -lm
}

# shellcheck disable=SC2086
build desc_fuzz fuzz/desc_fuzz.c $lib_srcs
# shellcheck disable=SC2086
build attention24_desc_fuzz fuzz/attention24_desc_fuzz.c $lib_srcs
# shellcheck disable=SC2086
build varlen_fuzz fuzz/varlen_fuzz.c $lib_srcs
# shellcheck disable=SC2086
build onnx_fuzz fuzz/onnx_fuzz.c $onnx_srcs "$out/obj/onnx_min.pb-c.o" -lprotobuf-c
