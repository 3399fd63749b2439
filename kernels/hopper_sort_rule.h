/*
 * hopper_sort_rule.h - whether a launch of the Hopper kernel runs its
 * (sequence, kv head) pairs longest sequence first (flash_args.hop_sort,
 * kernels/hopper_items.cuh hop_sort_sequences) or in batch order, and
 * whether its blocks probe for tokens first (opp__hop_wants_probe). Plain C:
 * the launcher (kernels/hopper_launch.cuh) calls it on the host, and
 * //tests:hopper_sort_rule_test checks it on the CPU.
 *
 * The sort pays only where a launch's tail is a large part of it: on an
 * H200 (bench/RESULTS.md, twentieth session) it made softcap_hd256_bf16
 * (12 items an SM) 3.5-4.2 % faster, and launches of 30-55 items an SM or
 * of equal lengths 0.5-4 % slower (every block ranks the sequences at its
 * start). So it runs only with all of:
 *   - 2 .. OPP__HOPPER_SORT_MAX sequences;
 *   - at most OPP__HOPPER_SORT_ITEMS_PER_SM items with tokens a block.
 *     `items` counts every sequence at max_seqlen_q; packed, at most
 *     (total_q / bmt + B) Hkv items hold tokens (each sequence's last
 *     m-block may be partial);
 *   - not a split decode batch (split_on and max_seqlen_q <=
 *     OPP__SPLIT_MOST(G), flash_split_tokens' bound: every query token
 *     of a sequence of many keys is a split token, so the split launch
 *     runs those sequences and this one only the short ones);
 *   - lengths that may differ (packed: not every sequence at max_seqlen_q
 *     and max_seqlen_kv; padded: nonpad is on the device, so they may).
 * Host arithmetic only: no device value is read.
 */
#ifndef OPP_KERNELS_HOPPER_SORT_RULE_H
#define OPP_KERNELS_HOPPER_SORT_RULE_H

#include <stdint.h>

#include "kernels/kernel_list.h"

/* The launch's shape, as the launcher knows it on the host. */
typedef struct opp__hop_sort_in {
    int packed;            /* packed layout (cu_seqlens), else padded */
    int64_t batch, hkv, g; /* B, kv heads, query heads a kv head */
    int64_t items;         /* ceil(max_seqlen_q / bmt) B Hkv */
    int64_t bmt;           /* query tokens a tile (BM / G), > 0 */
    int64_t grid;          /* blocks of the persistent launch, > 0 */
    int split_on;          /* split-KV rows are taken out of this launch */
    int64_t total_q, total_kv, max_seqlen_q, max_seqlen_kv;
} opp__hop_sort_in_t;

/* Whether the launch runs the kernel's probe instance, whose blocks first
 * look for a sequence with tokens of their own (kernels/hopper_attention.cuh,
 * PROBE): in a split decode batch (split_on
 * and max_seqlen_q <= OPP__SPLIT_MOST(G)), where every sequence of more
 * than the split threshold's keys has all of its tokens split, so that
 * the launch often has no item at all. Without the probe such a launch
 * still claims every (sequence, kv head) pair, an atomic and a load round
 * trip each; with it, a block reads the lengths once and leaves. Host
 * arithmetic only. */
static inline int opp__hop_wants_probe(const opp__hop_sort_in_t *in) {
    return in->split_on && in->max_seqlen_q <= OPP__SPLIT_MOST(in->g);
}

static inline int opp__hop_wants_sort(const opp__hop_sort_in_t *in) {
    if (in->batch <= 1 || in->batch > OPP__HOPPER_SORT_MAX) {
        return 0;
    }
    int64_t busy = in->items;
    if (in->packed) {
        const int64_t bound = (in->total_q / in->bmt + in->batch) * in->hkv;
        busy = bound < busy ? bound : busy;
    }
    if (busy > (int64_t)OPP__HOPPER_SORT_ITEMS_PER_SM * in->grid) {
        return 0;
    }
    if (opp__hop_wants_probe(in)) {
        return 0; /* a split decode batch */
    }
    if (in->packed && in->total_q == in->batch * in->max_seqlen_q &&
        in->total_kv == in->batch * in->max_seqlen_kv) {
        return 0; /* every sequence at the longest: one order is as good as another */
    }
    return 1;
}

#endif /* OPP_KERNELS_HOPPER_SORT_RULE_H */
