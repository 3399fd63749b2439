#!/usr/bin/env bash
# gpu_unpack.sh - sourced by stage/run_all.sh and stage/ab.sh (copied to
# stage/unpack.sh by tools/gpu_stage.sh): opp_unpack FILE.xz unpacks a
# binary that tools/gpu_stage.sh compressed next to its .xz (kept), with xz
# or else python3's lzma, and makes it executable; a file already unpacked
# and not older than its .xz is left alone. Returns non-zero on failure.
opp_unpack() {
    local z=$1
    [ -f "${z%.xz}" ] && [ ! "$z" -nt "${z%.xz}" ] && return 0
    if command -v xz >/dev/null; then
        xz -dkf "$z"
    else
        python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as i, open(sys.argv[1][:-3], "wb") as o:
    shutil.copyfileobj(i, o)' "$z"
    fi && chmod a+x "${z%.xz}"
}
