/*
 * split_rule.h - which of a sequence's query rows run split-KV and which
 * key blocks a split runs for them (kernels/flash_split.cuh): plain C,
 * usable from host C (//tests:split_rule_test checks it against the keys
 * each row sees, one by one) and from CUDA device code, where the split
 * tiles and the TMA split kernel's producer (kernels/hopper_split.cuh)
 * share it, so that both walk the same blocks.
 */
#ifndef OPP_KERNELS_SPLIT_RULE_H
#define OPP_KERNELS_SPLIT_RULE_H

#include <stdint.h>

#include "kernels/kernel_list.h"

#ifdef __CUDACC__
#define OPP__SPLIT_HD __host__ __device__
#else
#define OPP__SPLIT_HD
#endif

/* Keys visible to local query token t of a sequence of lq queries and lkv
 * keys: 0 .. key_end - 1 (tail-aligned causal: t sees key k iff k <= t +
 * lkv - lq; clamped to 0 .. lkv). */
static inline OPP__SPLIT_HD int32_t opp__key_end(int causal, int64_t t, int32_t lq, int32_t lkv) {
    if (!causal) {
        return lkv;
    }
    const int64_t e = t + (int64_t)lkv - lq + 1;
    return (int32_t)(e < 0 ? 0 : (e > lkv ? lkv : e));
}

/* The key count above which a sequence of G query heads per kv head splits
 * its last tokens (kernels/split_config.h): OPP__SPLIT_MIN_KV_GQA from G >=
 * OPP__SPLIT_GQA_G, else OPP__SPLIT_MIN_KV. A function of G alone, so the
 * rule stays batch and layout invariant. The host computes it once per call
 * (flash_args.split_min_kv); the kernels read it from there, never as a
 * constant, since a literal threshold below 1024 made ptxas serialise the
 * D 128 Hopper kernels' wgmma pipeline (C7511; bench/RESULTS.md,
 * thirty-sixth session). */
static inline OPP__SPLIT_HD int32_t opp__split_min_kv(int32_t g) {
    return g >= OPP__SPLIT_GQA_G ? OPP__SPLIT_MIN_KV_GQA : OPP__SPLIT_MIN_KV;
}

/* How many of a sequence's last query tokens run split (0: none), for lq
 * queries, lkv keys and G query heads per kv head: min(lq, OPP__SPLIT_MOST(G)) when
 * lkv > min_kv (opp__split_min_kv(G)). */
static inline OPP__SPLIT_HD int32_t opp__split_tokens(int32_t lq, int32_t lkv, int32_t g,
                                                      int32_t min_kv) {
    const int32_t most = OPP__SPLIT_MOST(g);
    return lkv > min_kv ? (lq < most ? lq : most) : 0;
}

/* The key blocks [*jb, *je) of BN keys (BN divides OPP__SPLIT_KEYS) that
 * split `split` of the sequence runs for its split rows (min_kv:
 * opp__split_min_kv(G)): 0 (and *jb = *je
 * = 0) when it runs none (no split rows, or the split starts at or past
 * the last key), else 1 with *jb < *je. The blocks end at the last split
 * row's last visible key (the rows' widest view). */
static inline OPP__SPLIT_HD int opp__split_blocks(int32_t lq, int32_t lkv, int32_t g,
                                                  int32_t min_kv, int causal, int32_t split,
                                                  int32_t bn, int32_t *jb, int32_t *je) {
    const int32_t ts = opp__split_tokens(lq, lkv, g, min_kv);
    const int64_t nrows = (int64_t)lq * g;
    const int64_t r0 = (int64_t)(lq - ts) * g;
    *jb = *je = 0;
    if (r0 >= nrows || (int64_t)split * OPP__SPLIT_KEYS >= lkv) {
        return 0;
    }
    if (OPP__SPLIT_ALL_KV && split < 0) {
        return 0; /* lkv 0 splits (OPP__SPLIT_ALL_KV) into no split: "the last" is -1 */
    }
    const int32_t kend = opp__key_end(causal, (nrows - 1) / g, lq, lkv);
    const int32_t nkb = (int32_t)(((int64_t)kend + bn - 1) / bn);
    const int32_t b0 = split * (OPP__SPLIT_KEYS / bn);
    const int32_t e = b0 + OPP__SPLIT_KEYS / bn < nkb ? b0 + OPP__SPLIT_KEYS / bn : nkb;
    if (e <= b0) {
        return 0; /* not reached: the last row sees every key (tail-aligned) */
    }
    *jb = b0;
    *je = e;
    return 1;
}

/* The key block after block j of a split's blocks [jb, je) in the order
 * of its slices (OPP__SPLIT_SLICES, kernels/split_config.h): slice s = (j -
 * jb) % SLICES holds jb + s, jb + s + SLICES, ...; the slices run one after
 * another, in order, each ascending. At least je: none left. */
static inline OPP__SPLIT_HD int32_t opp__split_next_block(int32_t j, int32_t jb, int32_t je) {
    if (OPP__SPLIT_SLICES == 1 || j + OPP__SPLIT_SLICES < je) {
        return j + OPP__SPLIT_SLICES; /* (one slice: j + 1, je or past it at the end) */
    }
    const int32_t s1 = (j - jb) % OPP__SPLIT_SLICES + 1; /* the next slice */
    return s1 < OPP__SPLIT_SLICES && jb + s1 < je ? jb + s1 : je;
}

/* Whether block j ends its slice (no block of its slice follows it in
 * [jb, je)): the tiles fold the slice there. */
static inline OPP__SPLIT_HD int opp__split_slice_ends(int32_t j, int32_t je) {
    return j + OPP__SPLIT_SLICES >= je;
}

/* The split launch's items (split, sequence, kv head): the host's bound
 * ceil(max_seqlen_kv / OPP__SPLIT_KEYS) B Hkv, from the extents. */
static inline OPP__SPLIT_HD int64_t opp__split_items(int64_t max_seqlen_kv, int64_t batch,
                                                     int64_t hkv) {
    return (max_seqlen_kv + OPP__SPLIT_KEYS - 1) / OPP__SPLIT_KEYS * batch * hkv;
}

/* Whether a split launch of `items` items (opp__split_items) runs each item's slices as items
 * of their own (OPP__SPLIT_SLICE_ITEMS, kernels/split_config.h): then the
 * workspace holds OPP__SPLIT_SLICES slice partials a split row. */
static inline OPP__SPLIT_HD int opp__split_slice_items(int64_t items) {
    return OPP__SPLIT_SLICE_ITEMS > 0 && items <= OPP__SPLIT_SLICE_ITEMS;
}

/* The first key block of slice `slice` of a split's blocks [jb, je) (the
 * slice's blocks: it, + OPP__SPLIT_SLICES, ... below je; none when it is
 * at least je). */
static inline OPP__SPLIT_HD int32_t opp__split_slice_first(int32_t jb, int32_t slice) {
    return jb + slice;
}

/* The number of splits of a sequence of lkv keys (0 for none). */
static inline OPP__SPLIT_HD int32_t opp__split_count(int32_t lkv) {
    return (int32_t)(((int64_t)lkv + OPP__SPLIT_KEYS - 1) / OPP__SPLIT_KEYS);
}

/* The TMA split kernel's claim order (OPP__SPLIT_TMA_ORDER,
 * kernels/hopper_split.cuh), in two steps around the sequence's lengths.
 * Claims c of [0, items), items = NS per, per = B Hkv (NS: the most
 * splits the host's extents allow a sequence). Claim c sits at split c /
 * per, sequence (c % per) / Hkv and kv head c % Hkv (*split, *b, *hk);
 * the last per claims (c >= items - per) take the last split of the
 * sequence of rank (c - (items - per)) / Hkv instead, which this returns
 * (the caller's sequence: its rank table's entry, or the rank itself);
 * -1 for the others. */
static inline OPP__SPLIT_HD int32_t opp__split_claim_slot(int64_t c, int64_t items, int64_t per,
                                                          int32_t hkv, int32_t *split, int32_t *b,
                                                          int32_t *hk) {
    *split = (int32_t)(c / per);
    *b = (int32_t)((c % per) / hkv);
    *hk = (int32_t)(c % hkv);
    return c >= items - per ? (int32_t)((c - (items - per)) / hkv) : -1;
}
/* Whether a claim runs, for a sequence of lkv keys, and *split, the split
 * it runs: a last-split claim (`last`) its sequence's last split; another
 * the slot's split, unless that is the sequence's last split or past it
 * (0: skipped; the last split is claimed at the end). The caller still
 * skips a split without key blocks (opp__split_blocks). */
static inline OPP__SPLIT_HD int opp__split_claim_split(int32_t *split, int last, int32_t lkv) {
    const int32_t l = opp__split_count(lkv) - 1;
    if (last) {
        *split = l;
        return 1;
    }
    return *split < l;
}
#endif /* OPP_KERNELS_SPLIT_RULE_H */
