#!/usr/bin/env bash
# gpu_unpack.sh - sourced by stage/run_all.sh and stage/ab.sh (copied to
# stage/unpack.sh by tools/gpu_stage.sh): opp_unpack FILE.xz unpacks a
# binary that tools/gpu_stage.sh compressed next to its .xz (kept), with xz
# or else python3's lzma, and makes it executable; a file already unpacked
# and not older than its .xz is left alone. An older one (a warm device
# machine keeps the last call's unpacked binaries) is replaced: the binary
# is written beside it and moved over it (`xz -dkf` onto the kept file
# failed there with "File exists", twenty-sixth session). Returns non-zero
# on failure.
opp_unpack() {
    local z=$1 b=${1%.xz}
    [ -f "$b" ] && [ ! "$z" -nt "$b" ] && return 0
    rm -f "$b.unpack"
    if command -v xz >/dev/null; then
        xz -dc "$z" >"$b.unpack"
    else
        python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as i, open(sys.argv[2], "wb") as o:
    shutil.copyfileobj(i, o)' "$z" "$b.unpack"
    fi
    # shellcheck disable=SC2181 # the if's status: xz's or python3's
    if [ $? -ne 0 ] || ! chmod a+x "$b.unpack" || ! mv -f "$b.unpack" "$b"; then
        rm -f "$b.unpack"
        return 1
    fi
}
