#!/usr/bin/env bash
# sass_check_test.sh - the machine code of liboppacked.a's Hopper kernels
# (issue 10's check: "cuobjdump -sass of liboppacked.a: HGMMA and UTMALDG
# are present"), no GPU needed. From cuobjdump -sass -arch sm_90a:
#   test_hopper_instances     every hopper_attention_kernel instance of
#                             kernels/kernel_list.h's SM 90 rows is there,
#                             as sm_90a code: f16 and bf16 x (D 64 BM 128,
#                             D 64 BM 192 (the wide configuration), D 128,
#                             D 256) = 8 functions, the split decode
#                             batches' probe instances of D 128 and D 256
#                             (kernels/hopper_attention.cuh, PROBE) = 12,
#                             and with OPP__HOPPER_GUARD_PDL 1 (kernel_list.h's
#                             default) the guard's dependents of D 128 and
#                             D 256 (GPDL) = 16
#   test_hopper_wgmma_tma     each of them issues HGMMA (wgmma) and UTMALDG
#                             (TMA loads); those of D <= 128 UTMASTG too (the
#                             O tile's TMA store)
#   test_hopper_no_local      none of them touches local memory (LDL / STL:
#                             a spill or a stack array in the hot loop)
#   test_hopper_step_softmax_order
#                             with OPP__HOPPER_SOFTMAX_FIRST (its never-taken
#                             branches: BPT.TRAP in the Hopper kernels), no
#                             key-block step runs a MUFU.EX2 after its wait
#                             for P V (WARPGROUP.DEPBAR.LE gsb0 0x0 after
#                             the wait for S, 0x1): the online softmax stays
#                             under P V; SKIPPED without the switch (ptxas
#                             then moves that wait above the softmax), with
#                             each step's EX2 before / after the wait
#   test_tf32x3_wgmma         the 3xTF32 kernel (OPP_ALGO_TF32X3, kernel_list.h's
#                             TF32X3 rows; the warp-specialised
#                             tf32x3_ws_kernel) is there as sm_90a code, once,
#                             issues tf32 wgmma (HGMMA.64x64x8.F32.TF32: 48 in
#                             its key-block loop, 3 x 8 for S with A in shared
#                             memory, 3 x 8 for P V with A from registers),
#                             no other HGMMA, touches no local memory, and its
#                             setmaxnreg counts fit the launch registers of
#                             its three consumer warpgroups and producer
#   test_hopper_bm64_build    the D 64 one-consumer A/B object
#                             (//kernels:hopper_d64_bm64, OPP__HOPPER_D64_BM
#                             64: hop_cfg<64, 128, 1>, two blocks an SM):
#                             both instances there, HGMMA, UTMALDG and
#                             UTMASTG in each, no local memory, setmaxnreg
#                             counts within its launch registers (one
#                             consumer warpgroup and the producer)
#   test_tf32x3_ab_builds     the 3xTF32 switches' A/B builds (objects of
#                             //kernels:tf32x3_1wg: OPP__TF32X3_WS=0, the
#                             one-warpgroup tf32x3_attention_kernel, 48 tf32
#                             HGMMA from registers; tf32x3_ws_k2: two split K
#                             stages; tf32x3_ws_turns: the consumers' turns;
#                             tf32x3_ws_overlap: each consumer's P V in
#                             flight under its softmax, 48 + 48 HGMMA (S_0
#                             and the last P V peeled) and a wait that leaves
#                             one group in flight, WARPGROUP.DEPBAR.LE gsb0,
#                             0x1, with the softmax's MUFU.EX2 (>= 64)
#                             between it and the next wait for P V, and
#                             setmaxnreg counts that fit the block's launch
#                             registers; tf32x3_ws_qreg: Q's fragments in
#                             registers, 48 tf32 HGMMA from registers, its
#                             setmaxnreg counts too; tf32x3_ws_sacc2: S in two
#                             accumulations, 24 + 24; tf32x3_ws_nc2: two
#                             consumer warpgroups, 24 + 24, the default
#                             before (the A/B objects but the one-warpgroup
#                             one are NC 2 builds); not in the library):
#                             each holds its one
#                             kernel with those HGMMA, no other, no local
#                             memory
#   test_split_slices_build   the sliced split-KV A/B objects (OPP__SPLIT_SLICES
#                             4): //kernels:hopper_split_slices (the D 128 TMA
#                             split kernel with its sliced tile: both dtypes'
#                             hop_split_kernel, UTMALDG and the 64 + 64 HMMA
#                             of a warp's whole key block in each, no local
#                             memory), //kernels:hopper_split_slices_narrow
#                             (OPP__SPLIT_SLICES_NARROW 1: the slices on the
#                             narrow tile, 16 + 16 HMMA a warp and a block,
#                             UTMALDG, no local memory), //kernels:
#                             hopper_split_slice_items (OPP__SPLIT_SLICE_ITEMS:
#                             the narrow tile's counts again, and both dtypes'
#                             slice-folding combine, no local memory) and
#                             //kernels:fast_split_slices (sm_90: both dtypes'
#                             flash_split_kernel, the narrow-only and the
#                             mixed instance, HMMA in each)
# The lines are CMocka's, so tools/ci_summary.py counts eight cases. Without
# cuobjdump and nvdisasm (tools/find_cuobjdump.sh looks for them; the CUDA
# 13 toolkit here has neither, tools/bootstrap.sh installs PyPI's
# nvidia-cuda-cuobjdump and -nvdisasm into /opt/liboppacked/tools) each case is SKIPPED, unless OPP_SASS_STRICT=1
# (.ci/run sets it: --test_env), which makes that a failure.
#
#   sass_check_test.sh FIND_CUOBJDUMP_SH LIBOPPACKED_A... 1WG_O WS_K2_O WS_TURNS_O
#       WS_OVERLAP_O WS_QREG_O WS_SACC2_O WS_NC3_O HOPPER_BM64_O SLICES_HOPPER_O
#       SLICES_NARROW_O SLICE_ITEMS_O SLICES_FAST_O KERNEL_LIST_H
#   (the first named liboppacked.a; the objects tf32x3_1wg_tf32x3_d64.o,
#   tf32x3_ws_k2_tf32x3_d64.o, tf32x3_ws_turns_tf32x3_d64.o,
#   tf32x3_ws_overlap_tf32x3_d64.o, tf32x3_ws_qreg_tf32x3_d64.o,
#   tf32x3_ws_sacc2_tf32x3_d64.o, tf32x3_ws_nc2_tf32x3_d64.o,
#   hopper_d64_bm64_hopper_d64.o, hopper_split_slices_hopper_d128.o,
#   hopper_split_slices_narrow_hopper_d128.o, hopper_split_slice_items_hopper_d128.o
#   and fast_split_slices_flash_d128.o; kernels/kernel_list.h, whose
#   OPP__HOPPER_GUARD_PDL default sets the instances expected)
set -u

finder=$1
shift
lib="" one_wg="" ws_k2="" ws_turns="" ws_overlap="" ws_qreg="" ws_sacc2="" ws_nc2="" bm64=""
sl_hop="" sl_nar="" sl_items="" sl_fast="" klist=""
for f in "$@"; do
    case "$f" in
    */liboppacked.a) [ -n "$lib" ] || lib=$f ;;
    */tf32x3_1wg_tf32x3_d64.o) [ -n "$one_wg" ] || one_wg=$f ;;
    */tf32x3_ws_k2_tf32x3_d64.o) [ -n "$ws_k2" ] || ws_k2=$f ;;
    */tf32x3_ws_turns_tf32x3_d64.o) [ -n "$ws_turns" ] || ws_turns=$f ;;
    */tf32x3_ws_overlap_tf32x3_d64.o) [ -n "$ws_overlap" ] || ws_overlap=$f ;;
    */tf32x3_ws_qreg_tf32x3_d64.o) [ -n "$ws_qreg" ] || ws_qreg=$f ;;
    */tf32x3_ws_sacc2_tf32x3_d64.o) [ -n "$ws_sacc2" ] || ws_sacc2=$f ;;
    */tf32x3_ws_nc2_tf32x3_d64.o) [ -n "$ws_nc2" ] || ws_nc2=$f ;;
    */hopper_d64_bm64_hopper_d64.o) [ -n "$bm64" ] || bm64=$f ;;
    */hopper_split_slices_hopper_d128.o) [ -n "$sl_hop" ] || sl_hop=$f ;;
    */hopper_split_slices_narrow_hopper_d128.o) [ -n "$sl_nar" ] || sl_nar=$f ;;
    */hopper_split_slice_items_hopper_d128.o) [ -n "$sl_items" ] || sl_items=$f ;;
    */fast_split_slices_flash_d128.o) [ -n "$sl_fast" ] || sl_fast=$f ;;
    */kernel_list.h) [ -n "$klist" ] || klist=$f ;;
    esac
done
cases=(test_hopper_instances test_hopper_wgmma_tma test_hopper_no_local
    test_hopper_step_softmax_order test_tf32x3_wgmma test_tf32x3_ab_builds test_hopper_bm64_build
    test_split_slices_build)
report() { # report STATUS CASE [MESSAGE]
    echo "[ RUN      ] $2"
    [ -n "${3:-}" ] && echo "$3"
    case "$1" in
    OK) echo "[       OK ] $2" ;;
    SKIPPED) echo "[  SKIPPED ] $2" ;;
    *) echo "[  FAILED  ] $2" ;;
    esac
}
if [ -z "$lib" ] || [ ! -s "$lib" ]; then
    for c in "${cases[@]}"; do report FAILED "$c" "no liboppacked.a among the arguments: $*"; done
    exit 1
fi

# cuobjdump with nvdisasm beside it (tools/find_cuobjdump.sh)
# shellcheck source=../tools/find_cuobjdump.sh
. "$finder"
cuobjdump=$(opp_find_cuobjdump)
if [ -z "$cuobjdump" ]; then
    why="no cuobjdump + nvdisasm (tools/bootstrap.sh installs them into /opt/liboppacked/tools)"
    if [ "${OPP_SASS_STRICT:-0}" = 1 ]; then
        for c in "${cases[@]}"; do report FAILED "$c" "$why; OPP_SASS_STRICT=1"; done
        exit 1
    fi
    for c in "${cases[@]}"; do report SKIPPED "$c" "$why"; done
    exit 0
fi

tmp=${TEST_TMPDIR:-$(mktemp -d)}
if ! PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -sass -arch sm_90a "$lib" >"$tmp/sass.txt" 2>"$tmp/err.txt"; then
    for c in "${cases[@]}"; do
        report FAILED "$c" "cuobjdump -sass -arch sm_90a failed: $(head -c 400 "$tmp/err.txt")"
    done
    exit 1
fi

# hopper_counts SASS REGEX: per function whose name matches REGEX, "NAME
# HGMMA UTMALDG UTMASTG LDL/STL" (its counts of each), sorted
hopper_counts() {
    awk -v re="$2" '/Function : / { f = $3; if (f ~ re) { n[f] = 1 } }
         f in n && /[ \t]HGMMA/ { h[f]++ }
         f in n && /[ \t]UTMALDG/ { t[f]++ }
         f in n && /[ \t]UTMASTG/ { s[f]++ }
         f in n && /[ \t](LDL|STL)[ .]/ { l[f]++ }
         END { for (k in n) printf "%s %d %d %d %d\n", k, h[k], t[k], s[k], l[k] }' "$1" | sort
}

# per Hopper function: its counts of HGMMA, UTMALDG, UTMASTG, LDL / STL
hopper_counts "$tmp/sass.txt" hopper_attention_kernel >"$tmp/funcs.txt"

status=0
# 1. the instances: hop_cfg<DB, BN, NC> for DT 10 (f16) and 16 (bf16),
# each <PROBE, GPDL> = <false, false> (Lb0ELb0), and from D 128 the split
# decode batches' probe <true, false> (Lb1ELb0) and, with
# OPP__HOPPER_GUARD_PDL 1 (kernel_list.h's default), the guard's dependent
# <false, true> (Lb0ELb1)
gpdl=$(sed -n 's/^#define OPP__HOPPER_GUARD_PDL \([01]\)$/\1/p' "${klist:-/dev/null}")
want=""
for dt in 10 16; do
    for cfg in "Li64ELi128ELi2E" "Li64ELi96ELi3E" "Li128ELi128ELi2E" "Li256ELi64ELi2E"; do
        kinds="0ELb0"
        case $cfg in Li64E*) ;; *) kinds="0ELb0 1ELb0" ;; esac
        case $cfg in Li64E*) ;; *) [ "$gpdl" = 1 ] && kinds="$kinds 0ELb1" ;; esac
        for k in $kinds; do
            want="$want _Z23hopper_attention_kernelILi${dt}E7hop_cfgI${cfg}ELb${k}EEv8hop_maps10flash_argsP17opp__guard_record"
        done
    done
done
nwant=$(echo $want | wc -w)
missing=""
for w in $want; do
    grep -q "^$w " "$tmp/funcs.txt" || missing="$missing $w"
done
if [ -z "$gpdl" ]; then
    report FAILED test_hopper_instances "no '#define OPP__HOPPER_GUARD_PDL 0|1' in kernel_list.h (${klist:-not among the arguments})"
    status=1
elif [ -z "$missing" ] && [ "$(wc -l <"$tmp/funcs.txt")" -eq "$nwant" ]; then
    report OK test_hopper_instances "$nwant hopper_attention_kernel instances in sm_90a code"
else
    report FAILED test_hopper_instances "missing:${missing:- none}; found:
$(cat "$tmp/funcs.txt")"
    status=1
fi

# 2. HGMMA and UTMALDG everywhere, UTMASTG where DB <= 128
bad=$(awk '{ db = ($1 ~ /Li256E/) ? 256 : 128
             if ($2 == 0 || $3 == 0 || (db <= 128 && $4 == 0)) print }' "$tmp/funcs.txt")
if [ -z "$bad" ] && [ -s "$tmp/funcs.txt" ]; then
    report OK test_hopper_wgmma_tma "$(awk '{n = $1; sub(/^_Z23hopper_attention_kernel/, "", n)
        sub(/EEv8hop_maps.*/, "", n); printf "%s HGMMA %d UTMALDG %d UTMASTG %d\n", n, $2, $3, $4}' \
        "$tmp/funcs.txt")"
else
    report FAILED test_hopper_wgmma_tma "without HGMMA, UTMALDG or (D <= 128) UTMASTG:
${bad:-no Hopper function at all}"
    status=1
fi

# 3. no local memory
bad=$(awk '$5 > 0' "$tmp/funcs.txt")
if [ -z "$bad" ] && [ -s "$tmp/funcs.txt" ]; then
    report OK test_hopper_no_local "no LDL / STL in the Hopper kernels"
else
    report FAILED test_hopper_no_local "local memory (name HGMMA UTMALDG UTMASTG LDL/STL):
${bad:-no Hopper function at all}"
    status=1
fi

# 4. the step's softmax before its wait for P V: per Hopper function its
# BPT.TRAP count, then each step's MUFU.EX2 between the wait for S (gsb0
# 0x1) and the wait for P V (0x0) / after that wait, up to the next wgmma,
# barrier or unconditional branch
awk '/Function : / { f = $3; hop = (f ~ /hopper_attention_kernel/); st = 0; next }
     !hop { next }
     /BPT\.TRAP/ { trap[f]++ }
     /WARPGROUP\.DEPBAR\.LE gsb0, 0x1/ { st = 1; pre = 0; next }
     st == 1 && /MUFU\.EX2/ { pre++ }
     st == 1 && /WARPGROUP\.DEPBAR\.LE gsb0, 0x0/ { st = 2; post = 0; next }
     st == 2 && /MUFU\.EX2/ { post++ }
     st == 2 && (/WARPGROUP\.ARRIVE/ || /BAR\.SYNC/ || /HGMMA/ || /EXIT/ || /[^@!P0-9T] +BRA /) {
         steps[f] = steps[f] " " pre "/" post; st = 0
     }
     END { for (k in steps) printf "%s %d%s\n", k, trap[k] + 0, steps[k] }' \
    "$tmp/sass.txt" | sed 's/^_Z23hopper_attention_kernel//; s/EEv8hop_maps[^ ]*//' |
    sort >"$tmp/steps.txt"
summary="each step's MUFU.EX2 before / after its wait for P V (name, BPT.TRAP, steps):
$(cat "$tmp/steps.txt")"
if [ "$(wc -l <"$tmp/steps.txt")" -ne "$nwant" ]; then
    report FAILED test_hopper_step_softmax_order "steps not found in all $nwant Hopper functions; $summary"
    status=1
elif ! awk '$2 > 0 { t = 1 } END { exit !t }' "$tmp/steps.txt"; then
    report SKIPPED test_hopper_step_softmax_order "OPP__HOPPER_SOFTMAX_FIRST is 0 (no BPT.TRAP): ptxas runs the softmax after the wait; $summary"
elif awk '{ for (i = 3; i <= NF; ++i) { split($i, x, "/"); if (x[2] > 0 || x[1] == 0) bad = 1 } }
          END { exit !bad }' "$tmp/steps.txt"; then
    report FAILED test_hopper_step_softmax_order "a step with MUFU.EX2 after its wait for P V; $summary"
    status=1
else
    report OK test_hopper_step_softmax_order "$summary"
fi

# tf32x3_counts SASS: per function named tf32x3_attention_kernel or
# tf32x3_ws_kernel, "NAME SS RS OTHER LOCAL": its tf32 HGMMA with A in
# shared memory ("HGMMA... Rd, gdesc[URx], ...": both descriptors), with A
# from registers ("HGMMA... Rd, Ra, gdesc[URx], ..."), other HGMMA, LDL / STL
tf32x3_counts() {
    awk '/Function : / { f = $3; t = (f ~ /tf32x3_(attention|ws)_kernel/); if (t) n[f] = 1; next }
         t && /[ \t]HGMMA\.64x64x8\.F32\.TF32 / { if ($0 ~ /TF32 R[0-9]+, R[0-9]+, gdesc/) r[f]++; else sh[f]++; next }
         t && /[ \t]HGMMA/ { o[f]++ }
         t && /[ \t](LDL|STL)[ .]/ { l[f]++ }
         END { for (k in n) printf "%s %d %d %d %d\n", k, sh[k], r[k], o[k], l[k] }' "$1" |
        sed 's/EEEv10flash_argsPK17opp__guard_record//' | sort
}

# regs_fit SASS REG NC: the setmaxnreg counts of one warp-specialised
# kernel's SASS (its consumers' raised count, its producer's lowered one)
# within the block's launch registers, NC consumer warpgroups and a
# producer of REG registers a thread each, else the consumers'
# setmaxnreg.inc waits forever; prints what it found, status 1 if not
regs_fit() {
    local inc dec
    inc=$(grep -oE "USETMAXREG\.TRY_ALLOC\.CTAPOOL [A-Z0-9]+, 0x[0-9a-f]+" "$1" | head -1 | grep -oE "0x[0-9a-f]+$")
    dec=$(grep -oE "USETMAXREG\.DEALLOC\.CTAPOOL 0x[0-9a-f]+" "$1" | head -1 | grep -oE "0x[0-9a-f]+$")
    if [ -n "$inc" ] && [ -n "$dec" ] && [ -n "$2" ] && [ $(($3 * inc + dec)) -le $((($3 + 1) * $2)) ]; then
        echo "setmaxnreg $3 x $((inc)) + $((dec)) <= $(($3 + 1)) x $2"
        return 0
    fi
    echo "setmaxnreg: inc '$inc' dec '$dec' launch registers '$2': not $3 inc + dec <= $(($3 + 1)) x registers"
    return 1
}

# 5. the 3xTF32 kernel of the library (one line: one function); its S
# issue in three copies, one a consumer (OPP__TF32X3_WS_UDESC: a
# compile-time consumer index, so that the descriptors are uniform); the
# A/B objects (two consumers, UDESC off) one
ws_want="_Z16tf32x3_ws_kernelI13tf32x3_ws_cfgILi64 72 24 0 0"
ab_want="_Z16tf32x3_ws_kernelI13tf32x3_ws_cfgILi64 24 24 0 0"
tf32x3_counts "$tmp/sass.txt" >"$tmp/tf32.txt"
summary="function, tf32 HGMMA A shared / A registers, other HGMMA, LDL/STL:
$(cat "$tmp/tf32.txt")"
# its setmaxnreg counts (three consumer warpgroups, OPP__TF32X3_WS_NC)
awk '/Function : / { on = ($0 ~ /tf32x3_ws_kernel/) } on' "$tmp/sass.txt" >"$tmp/tfws.txt"
reg=$(PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -res-usage "$lib" 2>/dev/null |
    grep -A1 "tf32x3_ws_kernel" | grep -oE "REG:[0-9]+" | head -1 | cut -d: -f2)
fit=0
msg=$(regs_fit "$tmp/tfws.txt" "$reg" 3) && fit=1
summary="$summary
$msg"
if [ "$(cat "$tmp/tf32.txt")" = "$ws_want" ] && [ $fit -eq 1 ]; then
    report OK test_tf32x3_wgmma "$summary"
else
    report FAILED test_tf32x3_wgmma "want one tf32x3_ws_kernel (DB 64), 3 x 24 + 24 tf32 HGMMA, no other, no local memory, setmaxnreg within the launch registers of 3 consumers and a producer; $summary"
    status=1
fi

# 6. the 3xTF32 switches' A/B builds: per object its one kernel
summary="object: function, tf32 HGMMA A shared / A registers, other HGMMA, LDL/STL:"
ok=1
for spec in "$one_wg|_Z23tf32x3_attention_kernelI10tf32x3_cfgILi64 0 48 0 0" \
    "$ws_k2|$ab_want" "$ws_turns|$ab_want" \
    "$ws_overlap|_Z16tf32x3_ws_kernelI13tf32x3_ws_cfgILi64 48 48 0 0|gsb0, 0x1" \
    "$ws_qreg|_Z16tf32x3_ws_kernelI13tf32x3_ws_cfgILi64 0 48 0 0" "$ws_sacc2|$ab_want" \
    "$ws_nc2|$ab_want"; do
    # OBJECT|COUNTS[|WAIT]
    IFS='|' read -r a want wait <<<"$spec"
    if [ -z "$a" ] || [ ! -s "$a" ]; then
        summary="$summary
(an object missing among the arguments)"
        ok=0
        continue
    fi
    if ! PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -sass -arch sm_90a "$a" >"$tmp/ab.txt" 2>"$tmp/err.txt"; then
        summary="$summary
$(basename "$a"): cuobjdump failed: $(head -c 200 "$tmp/err.txt")"
        ok=0
        continue
    fi
    got=$(tf32x3_counts "$tmp/ab.txt")
    summary="$summary
$(basename "$a"): $got"
    [ "$got" = "$want" ] || ok=0
    if [ -n "$wait" ]; then # a wait that leaves a product in flight
        if grep -q "WARPGROUP.DEPBAR.LE $wait ;" "$tmp/ab.txt"; then
            summary="$summary (WARPGROUP.DEPBAR.LE $wait: there)"
        else
            summary="$summary (WARPGROUP.DEPBAR.LE $wait: missing)"
            ok=0
        fi
        # the softmax under P V: MUFU.EX2 between the wait that leaves P V
        # in flight and the next wait for everything (ptxas hoists that
        # wait above the softmax without the never-taken branch between)
        ex2=$(awk -v w="WARPGROUP.DEPBAR.LE $wait ;" 'index($0, w) { on = 1; n = 0; next }
                 on && /WARPGROUP\.DEPBAR\.LE gsb0, 0x0 ;/ { print n; exit }
                 on && /MUFU\.EX2/ { n++ }' "$tmp/ab.txt")
        if [ "${ex2:-0}" -ge 64 ]; then
            summary="$summary ($ex2 MUFU.EX2 under P V)"
        else
            summary="$summary (${ex2:-no} MUFU.EX2 between the two waits: want >= 64, the softmax under P V)"
            ok=0
        fi
    fi
    if grep -q "USETMAXREG" "$tmp/ab.txt"; then # two consumer warpgroups (NC 2 builds)
        reg=$(PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -res-usage "$a" 2>/dev/null | grep -oE "REG:[0-9]+" | head -1 | cut -d: -f2)
        msg=$(regs_fit "$tmp/ab.txt" "$reg" 2) || ok=0
        summary="$summary ($msg)"
    fi
done
if [ $ok -eq 1 ]; then
    report OK test_tf32x3_ab_builds "$summary"
else
    report FAILED test_tf32x3_ab_builds "want per object its one kernel: the one-warpgroup one with 48 tf32 HGMMA from registers, the warp-specialised ones with 24 + 24 (the overlap build 48 + 48 and a wait leaving one group in flight, the softmax under it; the QREG build 0 + 48; setmaxnreg within the launch registers); no other HGMMA, no local memory; $summary"
    status=1
fi

# 7. the D 64 one-consumer A/B object: its two hop_cfg<64, 128, 1> instances
# (f16, bf16), each with HGMMA, UTMALDG and UTMASTG, no local memory, and
# setmaxnreg within its launch registers for 1 consumer and the producer
nc1_ok=1
summary="object hopper_d64_bm64: function HGMMA UTMALDG UTMASTG LDL/STL:"
if [ -z "$bm64" ] || [ ! -s "$bm64" ]; then
    summary="$summary (the object is missing among the arguments)"
    nc1_ok=0
elif ! PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -sass -arch sm_90a "$bm64" >"$tmp/bm64.txt" 2>"$tmp/err.txt"; then
    summary="$summary cuobjdump failed: $(head -c 200 "$tmp/err.txt")"
    nc1_ok=0
else
    hopper_counts "$tmp/bm64.txt" 'hopper_attention_kernel.*Li64ELi128ELi1E' >"$tmp/bm64f.txt"
    summary="$summary
$(cat "$tmp/bm64f.txt")"
    [ -z "$(awk '$2 == 0 || $3 == 0 || $4 == 0 || $5 > 0' "$tmp/bm64f.txt")" ] || nc1_ok=0
    for dt in 10 16; do
        fn="_Z23hopper_attention_kernelILi${dt}E7hop_cfgILi64ELi128ELi1EELb0ELb0EEv8hop_maps10flash_argsP17opp__guard_record"
        grep -q "^$fn " "$tmp/bm64f.txt" || {
            summary="$summary
(no hop_cfg<64, 128, 1> instance of dtype $dt)"
            nc1_ok=0
        }
        awk -v fn="$fn" '/Function : / { on = ($3 == fn) } on' "$tmp/bm64.txt" >"$tmp/bm64one.txt"
        reg=$(PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -res-usage "$bm64" 2>/dev/null |
            grep -A1 "$fn" | grep -oE "REG:[0-9]+" | head -1 | cut -d: -f2)
        msg=$(regs_fit "$tmp/bm64one.txt" "$reg" 1) || nc1_ok=0
        summary="$summary
dtype $dt: $msg (launch registers ${reg:-?}: two blocks of 256 threads an SM need <= 128)"
        [ -n "$reg" ] && [ "$reg" -le 128 ] || nc1_ok=0
    done
fi
if [ $nc1_ok -eq 1 ]; then
    report OK test_hopper_bm64_build "$summary"
else
    report FAILED test_hopper_bm64_build "want two hop_cfg<64, 128, 1> instances, each with HGMMA, UTMALDG and UTMASTG, no local memory, <= 128 launch registers and setmaxnreg within them; $summary"
    status=1
fi

# 8. the sliced split-KV A/B objects: per function its HMMA, UTMALDG, LDL / STL
split_counts() {
    awk -v re="$2" '/Function : / { f = $3; if (f ~ re) { n[f] = 1 } }
         f in n && /[ \t]HMMA/ { h[f]++ }
         f in n && /[ \t]UTMALDG/ { t[f]++ }
         f in n && /[ \t](LDL|STL)[ .]/ { l[f]++ }
         END { for (k in n) printf "%s %d %d %d\n", k, h[k], t[k], l[k] }' "$1" | sort
}
sl_ok=1
summary="function HMMA UTMALDG LDL/STL:"
for pair in "hopper_split_slices:$sl_hop:sm_90a:hop_split_kernel:2" \
    "hopper_split_slices_narrow:$sl_nar:sm_90a:hop_split_kernel:2" \
    "hopper_split_slice_items:$sl_items:sm_90a:hop_split_kernel:2" \
    "fast_split_slices:$sl_fast:sm_90:flash_split_kernel:4"; do
    IFS=: read -r name obj arch re want <<<"$pair"
    if [ -z "$obj" ] || [ ! -s "$obj" ]; then
        summary="$summary
($name: the object is missing among the arguments)"
        sl_ok=0
    elif ! PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -sass -arch "$arch" "$obj" >"$tmp/sl.txt" 2>"$tmp/err.txt"; then
        summary="$summary
$name: cuobjdump failed: $(head -c 200 "$tmp/err.txt")"
        sl_ok=0
    else
        split_counts "$tmp/sl.txt" "$re" >"$tmp/slf.txt"
        summary="$summary
$name:
$(cat "$tmp/slf.txt")"
        [ "$(wc -l <"$tmp/slf.txt")" -eq "$want" ] || sl_ok=0
        [ -z "$(awk '$2 == 0' "$tmp/slf.txt")" ] || sl_ok=0
        if [ "$name" = hopper_split_slices ]; then
            # the sliced tile: a warp runs a whole 64-key block, 64 + 64
            # HMMA at D 128 (the narrow tile spreads them: 16 + 16 a warp);
            # its TMA loads; no spill
            [ -z "$(awk '$2 != 128 || $3 == 0 || $4 > 0' "$tmp/slf.txt")" ] || sl_ok=0
        elif [ "$name" != fast_split_slices ]; then
            # the narrow tile: 16 + 16 HMMA a warp; TMA loads; no spill
            [ -z "$(awk '$2 != 32 || $3 == 0 || $4 > 0' "$tmp/slf.txt")" ] || sl_ok=0
        fi
        if [ "$name" = hopper_split_slice_items ]; then
            # the combine that folds slice partials (SL true), both dtypes, no spill
            split_counts "$tmp/sl.txt" 'flash_combine_kernelILi1[06]ELb1E' >"$tmp/slc.txt"
            summary="$summary
$(cat "$tmp/slc.txt")"
            [ "$(wc -l <"$tmp/slc.txt")" -eq 2 ] || sl_ok=0
            [ -z "$(awk '$4 > 0' "$tmp/slc.txt")" ] || sl_ok=0
        fi
    fi
done
if [ $sl_ok -eq 1 ]; then
    report OK test_split_slices_build "$summary"
else
    report FAILED test_split_slices_build "want two sliced hop_split_kernel instances (128 HMMA, UTMALDG, no local memory), two on the narrow tile (32 HMMA, UTMALDG, no local memory) in each of the narrow and the slice-item objects, the latter's two slice-folding combines (no local memory), and four flash_split_kernel instances (HMMA); $summary"
    status=1
fi
exit $status
