/*
 * split_config.h - the switches of split-KV (kernels/flash_split.cuh, the
 * TMA split kernel of kernels/hopper_split.cuh and the slices of a split):
 * plain C, included by kernels/kernel_list.h (which A/B builds set them
 * after: tools/ab_defines.sh), so that every file that includes the list
 * sees them. Each switch says what it does and what it measured.
 */
#ifndef OPP_KERNELS_SPLIT_CONFIG_H
#define OPP_KERNELS_SPLIT_CONFIG_H

/* Split-KV of the FAST rows with DMAX <= OPP__SPLIT_DMAX
 * (kernels/flash_split.cuh): in every sequence whose L_kv exceeds
 * OPP__SPLIT_MIN_KV (1024), the last min(L_q, OPP__SPLIT_MOST(G)) query
 * tokens (a whole decode sequence) run as ceil(L_kv / OPP__SPLIT_KEYS)
 * splits of OPP__SPLIT_KEYS keys (fixed in keys, a multiple of every BN;
 * 1024 by default, settable for an A/B of the split grain - 512 or 256),
 * combined in ascending order in the same run; the partials live in the
 * workspace (lib/attention_plan.c). */
#ifndef OPP__SPLIT_KEYS
#define OPP__SPLIT_KEYS 1024
#endif
#if OPP__SPLIT_KEYS % 128 != 0 || OPP__SPLIT_KEYS > 1024 || OPP__SPLIT_KEYS < 256
#error "OPP__SPLIT_KEYS: a multiple of every BN (128), 256 .. 1024"
#endif
#define OPP__SPLIT_ROWS 64
/* The most tokens of a sequence that split: OPP__SPLIT_ROWS / G (64: a
 * G 1 sequence's last 64 tokens, the split tile's rows), capped at
 * OPP__SPLIT_TOKENS. 64 (default) is no cap. 16: G 1 and G 2 split their
 * last 16 tokens (speculative decoding's reach, as at G 4), so a G 1
 * prefill has a quarter of the split rows (their own launches after the
 * Hopper kernel: 14-17 % of the L 2048 sweep cases on an H200,
 * bench/RESULTS.md, forty-fifth session), on the narrow tile; other bits
 * for G <= 2 rows 17 .. 64 from the end. Still a function of L_q, L_kv and
 * G: batch and layout invariant. Measured (H100, one turn, forty-sixth
 * session): causal L 2048 / 4096 sweep cases 2.6 / 4.2 % slower (their
 * split rows on the narrow tile), non-causal D 128 L 2048 2.5 % faster. */
#ifndef OPP__SPLIT_TOKENS
#define OPP__SPLIT_TOKENS 64
#endif
#if OPP__SPLIT_TOKENS < 1
#error "OPP__SPLIT_TOKENS: at least 1"
#endif
#if OPP__SPLIT_TOKENS >= OPP__SPLIT_ROWS
#define OPP__SPLIT_MOST(g) (OPP__SPLIT_ROWS / (g))
#else
#define OPP__SPLIT_MOST(g) \
    (OPP__SPLIT_ROWS / (g) < OPP__SPLIT_TOKENS ? OPP__SPLIT_ROWS / (g) : OPP__SPLIT_TOKENS)
#endif
#define OPP__SPLIT_DMAX 128
/* Which sequences' last tokens split: those with L_kv > OPP__SPLIT_MIN_KV.
 * OPP__SPLIT_ALL_KV 0 (default): 1024, a sequence of at most 1024 keys
 * runs on the main kernel. 1: -1, every sequence's (still a function of
 * L_kv and the token's distance from the end, so batch invariant), so that
 * a batch whose max_seqlen_q <= OPP__SPLIT_MOST(G) (decode, speculative
 * decode) has no row for the main kernel and its launch is left out
 * (flash_all_split) - for an A/B against the Hopper launch of a decode
 * batch's short sequences; a row of one split then takes the split path's
 * bits, and every call with queries splits its sequences' last tokens.
 * Measured (H100, bench/RESULTS.md, thirty-sixth session): decode_gqa_bf16
 * 6.1 % faster but encoder_mha_f16 30 % slower (the last 64 tokens of
 * every sequence split): not a default. */
#ifndef OPP__SPLIT_ALL_KV
#define OPP__SPLIT_ALL_KV 0
#endif
#define OPP__SPLIT_MIN_KV (OPP__SPLIT_ALL_KV ? -1 : 1024)
/* The threshold for G >= OPP__SPLIT_GQA_G (4) query heads a kv head
 * (kernels/split_rule.h opp__split_min_kv): OPP__SPLIT_MIN_KV_GQA keys,
 * settable (-1 or a multiple of 128 in 128 .. 1024; 1024 is the one rule
 * above). 512 (the default; -1 with OPP__SPLIT_ALL_KV): a GQA decode
 * batch's short sequences (in decode_gqa_bf16 four of 606 - 863 keys) take
 * the split launch's narrow tile instead of a Hopper main tile that holds G
 * of its 128 rows; a prefill sequence of more keys splits its last 64 / G
 * tokens. Still a function of L_kv and G, so batch and layout invariant.
 * Measured (H100, bench/RESULTS.md, thirty-eighth session): decode_gqa_bf16
 * 2.3 % faster than at 1024, prefill_gqa_causal_bf16 and
 * short_many_causal_bf16 level; with OPP__SPLIT_KEYS 512 on top, slower
 * on both. */
#define OPP__SPLIT_GQA_G 4
#ifndef OPP__SPLIT_MIN_KV_GQA
#define OPP__SPLIT_MIN_KV_GQA (OPP__SPLIT_ALL_KV ? -1 : 512)
#endif
#if OPP__SPLIT_MIN_KV_GQA > OPP__SPLIT_MIN_KV || \
    (OPP__SPLIT_MIN_KV_GQA != -1 && OPP__SPLIT_MIN_KV_GQA % 128 != 0)
#error "OPP__SPLIT_MIN_KV_GQA: -1 or a multiple of 128, at most OPP__SPLIT_MIN_KV"
#endif
/* 1 (default): on SM 90, a split launch whose items all take the narrow
 * tile runs the TMA split kernel (kernels/hopper_split.cuh: the narrow
 * tile's arithmetic, the same bits, its K and V by TMA into a ring of
 * OPP__SPLIT_TMA_STAGES stages fed by a producer warp, a persistent grid);
 * 0: the split kernel of kernels/flash_split.cuh. Measured (H100,
 * thirty-second session, bench/RESULTS.md): the same bits; 100 % of the
 * copy bandwidth on decode_g1_b256_kv4096 (3.3 % faster) and
 * decode_g4_b64_kv16384 (3.1 %), level on decode_gqa_bf16 (0.5 % slower),
 * 2.2 % slower on decode_g4_b8_kv4096 (0.08 ms: the persistent grid's
 * set-up); compute-sanitizer memcheck, racecheck, synccheck clean. */
#ifndef OPP__SPLIT_TMA
#define OPP__SPLIT_TMA 1
#endif
#ifndef OPP__SPLIT_TMA_STAGES
#define OPP__SPLIT_TMA_STAGES 3
#endif
/* With OPP__SPLIT_SLICES 4, the ring's stages at DB 128 (one block an SM)
 * and at DB 64 (two): a multiple of the four consumer warps, so that within
 * an item a stage serves one warp and each wait on its full barrier is at
 * most one phase ahead (with 5 a warp could wait two fills ahead, where
 * the phase parity cannot tell them apart: stale data, seen on an H100) */
#ifndef OPP__SPLIT_TMA_STAGES_SL128
#define OPP__SPLIT_TMA_STAGES_SL128 4
#endif
#ifndef OPP__SPLIT_TMA_STAGES_SL64
#define OPP__SPLIT_TMA_STAGES_SL64 4
#endif
#if OPP__SPLIT_TMA_STAGES_SL128 % 4 != 0 || OPP__SPLIT_TMA_STAGES_SL64 % 4 != 0
#error "OPP__SPLIT_TMA_STAGES_SL128 / _SL64: multiples of the 4 consumer warps"
#endif
/* The TMA split kernel's claim order. 1 (default): the splits before each
 * sequence's last, split-major, then the last splits by their key blocks,
 * most first (warp 5 of each block ranks the sequences while the first
 * items run; where the lengths may differ, in batches of 2 ..
 * OPP__SPLIT_ORDER_MAX sequences; else in batch order), so that the
 * launch ends on the shortest items; 0: split-major (split 0 of every
 * sequence and kv head, then split 1, ...). Which block runs an item
 * changes, never its arithmetic. Measured (bench/RESULTS.md,
 * thirty-third session). On an H200, as built: decode_gqa_bf16 2.1 %
 * faster, the uniform decode cases within 1 %, the same bits, memcheck
 * and synccheck clean. On an H100, with the rank done by the producer warp
 * before its first claim: the uniform cases 0.2-1 % slower. */
#ifndef OPP__SPLIT_TMA_ORDER
#define OPP__SPLIT_TMA_ORDER 1
#endif
#define OPP__SPLIT_ORDER_MAX 1024
/* The combine's grid.y bound (kernels/flash_launch.cuh): its blocks split
 * an item's ts G x Dv / 2 elements into at most this many 128-element
 * chunks, a thread taking every (grid.y 128)-th element. 32 (default): no
 * bound (64 x 128 / 2 / 128 at most), a thread an element; fewer: fewer
 * blocks, whose fixed costs (the lengths, the partial offset, the wait)
 * the prefill-like combines pay 4096 times (21 us on an H200 for two
 * splits of about 1 M elements, forty-fifth session). Host only; the same
 * bits. */
#ifndef OPP__SPLIT_COMBINE_Y
#define OPP__SPLIT_COMBINE_Y 32
#endif
#if OPP__SPLIT_COMBINE_Y < 1
#error "OPP__SPLIT_COMBINE_Y: at least 1"
#endif
/* The combine's blocks an SM in its launch bound (kernels/flash_split.cuh):
 * 0 (default): none (124 registers on sm_90, so four 128-thread blocks an
 * SM: a prefill-like combine of 4096 blocks runs in about eight waves,
 * 21 us on an H200, forty-fifth session); N: __launch_bounds__(128, N). The
 * same bits (the same operations; ptxas may spill). */
#ifndef OPP__SPLIT_COMBINE_MINB
#define OPP__SPLIT_COMBINE_MINB 0
#endif
/* 1 (default): on SM 90 the combine is the split launch's programmatic
 * dependent (PDL): the TMA split kernel lets it launch from its start, and
 * the combine's blocks wait (griddepcontrol.wait) for the split launch's
 * end and memory before they read, so its launch overlaps the split
 * launch's tail. 0: an ordinary launch after it. The same bits. Measured
 * (bench/RESULTS.md, thirty-sixth session; H100): decode_gqa_bf16 0.8 %
 * faster, encoder_mha_f16 unchanged, fast_gpu_test 8/8. */
#ifndef OPP__SPLIT_COMBINE_PDL
#define OPP__SPLIT_COMBINE_PDL 1
#endif
/* 1: on SM 90, when every row of a call splits (OPP__SPLIT_ALL_KV and a
 * decode batch: no main launch), the TMA split launch is the guard's
 * programmatic dependent (PDL): its blocks start and set up their barriers
 * while the guard runs, and wait (griddepcontrol.wait) for its end and
 * record before they read anything, so the split launch's start overlaps
 * the guard. 0 (default): an ordinary launch after it. The same bits.
 * Measured with OPP__SPLIT_ALL_KV (H100, bench/RESULTS.md, thirty-sixth
 * session): the split launch starts 0.8 us after the guard's start
 * instead of after its end; decode_gqa_bf16 0.2 % faster than without (noise). */
#ifndef OPP__SPLIT_GUARD_PDL
#define OPP__SPLIT_GUARD_PDL 0
#endif
/* The slices of a split (kernels/split_rule.h opp__split_next_block):
 * 1 (default): a split's key blocks run in ascending order, one online
 * softmax over them. 4: slice s of a split holds its blocks jb + s, jb + s
 * + 4, ...; each slice runs its own online softmax over its blocks, in
 * ascending order, and the split's partial is the slices' partials folded
 * in slice order 0 .. 3 (flash_slice_fold, kernels/softmax_rows.cuh). The
 * TMA split kernel then runs a slice on each of its four consumer warps
 * (kernels/hopper_split_tile.cuh: no barrier between them inside an item);
 * the split tile and the cp.async narrow tile run the slices one after
 * another with the same arithmetic, so a row's bits are the same on every
 * tile. A function of the split's blocks alone: batch and layout
 * invariant. Other bits than 1's. Measured (H100, bench/RESULTS.md,
 * fortieth session; 4 ring stages, one block an SM at D 128): the GPU
 * tests pass with it as the default and compute-sanitizer is clean, but
 * the slices do not pay: decode_g4_b1_kv1024 5 % faster, decode_gqa_bf16
 * 2.7 %, decode_g4_b8_kv4096 6.6 % and the speculative probes 3-4 %
 * slower. Four warps on four blocks at once did not shorten the small
 * batches' time (8 busy SMs of 132): what one SM reads a second bounds it,
 * not the tile's chain of work. Four SMs reading a split do
 * (OPP__SPLIT_SLICE_ITEMS below: a small launch's slices as items of
 * their own, folded by the combine; the same bits).
 * //kernels:hopper_split_slices and :fast_split_slices build it
 * (//tests:sass_check_test). */
#ifndef OPP__SPLIT_SLICES
#define OPP__SPLIT_SLICES 1
#endif
#if OPP__SPLIT_SLICES != 1 && OPP__SPLIT_SLICES != 4
#error "OPP__SPLIT_SLICES: 1 or 4"
#endif
/* With OPP__SPLIT_SLICES 4: 1, the TMA split kernel runs the narrow tile
 * over the slices one after another (its producer loading the key blocks
 * in slice order: the cp.async narrow tile's arithmetic, four warps on
 * each block, two blocks an SM) instead of a slice a warp; 0 (default):
 * the per-warp sliced tile. The same bits. Measured (H100, bench/
 * RESULTS.md, forty-third session; against slices off): level from batch
 * 8 up (decode_g4_b8_kv4096 0.998, _b64_kv4096 1.000, _b256_kv1024
 * 1.004, decode_gqa_bf16 1.002), 2-5 % slower at batch 1 (the slices run
 * one after another); fast_gpu_test 8/8. */
#ifndef OPP__SPLIT_SLICES_NARROW
#define OPP__SPLIT_SLICES_NARROW 0
#endif
/* the TMA split kernel's tile is the per-warp sliced one */
#define OPP__SPLIT_SLICE_TILE (OPP__SPLIT_SLICES > 1 && !OPP__SPLIT_SLICES_NARROW)
/* With OPP__SPLIT_SLICES 4 and OPP__SPLIT_SLICES_NARROW 1: a TMA split
 * launch of at most OPP__SPLIT_SLICE_ITEMS items (the host's bound,
 * ceil(max_seqlen_kv / OPP__SPLIT_KEYS) B Hkv: a small batch, whose items
 * would leave most SMs idle) runs each item's four slices as four items of
 * their own, on up to four SMs: each writes its slice's partial (the fold
 * of that slice alone: its frame, sum and O) to the workspace, and the
 * combine folds a split's slices in slice order by flash_slice_fold's
 * operations before it adds the splits - the partial the one-block fold
 * writes, bit for bit, so the rule (a function of the launch) never
 * changes a row's bits. The workspace holds four slice partials a split
 * row where the rule can hold (opp__split_slice_items, kernels/
 * split_rule.h; lib/attention_plan.c). 0 (default): off. Measured (H100,
 * bench/RESULTS.md, forty-third session; 32 against slices off, one
 * device command): decode_g4_b1_kv1024 and _g8_b1_kv1024 0.63x the time,
 * the b1_kv4096 cases 0.80x, b1_kv16384 0.95-0.98x, the decode sweep's
 * geometric mean 0.967 (worst decode_g8_b8_kv1024 1.029: 64 items, the
 * slices in turn), decode_gqa_bf16 1.003; but the slices' arithmetic on
 * the split tile costs spec_q16_g4 4.5 % and spec_q16_g8 2.4 %;
 * fast_gpu_test 8/8 and compute-sanitizer memcheck clean; the same bits
 * with and without slice items (rc_b1_kv1024: its 8 items sliced, against
 * the in-block fold). 128 made b1_kv16384 (128 items) 1.2x slower. */
#ifndef OPP__SPLIT_SLICE_ITEMS
#define OPP__SPLIT_SLICE_ITEMS 0
#endif
#if OPP__SPLIT_SLICE_ITEMS < 0 || \
    (OPP__SPLIT_SLICE_ITEMS > 0 && (OPP__SPLIT_SLICES != 4 || !OPP__SPLIT_SLICES_NARROW))
#error "OPP__SPLIT_SLICE_ITEMS: 0, or > 0 with OPP__SPLIT_SLICES 4 and OPP__SPLIT_SLICES_NARROW 1"
#endif
/* A sequence with at most this many split rows (ts G) runs them on the
 * narrow tile (kernels/flash_split_narrow.cuh: four warps on one m16
 * tile), a longer one on the split tile; a row's bits are the same. */
#define OPP__SPLIT_NARROW_ROWS 16

#endif /* OPP_KERNELS_SPLIT_CONFIG_H */
