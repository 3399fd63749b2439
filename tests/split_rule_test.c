/*
 * split_rule_test.c - kernels/split_rule.h on the CPU: the keys a query
 * token sees and the key blocks each split runs, against the definition
 * taken one key at a time (tail-aligned causal: token t of L_q sees key k
 * iff k <= t + L_kv - L_q), over lengths around the split size and block
 * edges, every G, causal and not:
 *   - opp__key_end counts exactly the keys the definition shows token t;
 *   - the split rows are the last min(L_q, 64 / G) tokens when L_kv >
 *     opp__split_min_kv(G): OPP__SPLIT_MIN_KV (1024; //tests:split_rule_all_test
 *     builds this file with OPP__SPLIT_ALL_KV 1: -1, every sequence) below G
 *     4, OPP__SPLIT_MIN_KV_GQA from G 4 (512; //tests:split_rule_gqa1024_test
 *     builds this file with 1024), none otherwise;
 *   - for each split s, [jb, je) is exactly the blocks of BN keys inside
 *     [S s, S (s + 1)) (S = OPP__SPLIT_KEYS, 1024; //tests:split_rule_k512_test
 *     builds this file with 512) that hold a key some split row sees; a split
 *     with no such key runs none (returns 0); the splits' blocks tile the
 *     visible blocks without gap or overlap; a sequence of no key (no
 *     split: the last is split -1) runs none.
 * The TMA split kernel's producer and the narrow tile both walk these
 * blocks (kernels/hopper_split.cuh, kernels/flash_split_narrow.cuh); and
 * the producer's claim order (OPP__SPLIT_TMA_ORDER) runs each item with
 * blocks exactly once, the sequences' last splits last, longest first.
 *
 *   bazel test //tests:split_rule_test
 */
#include <stdio.h>
#include <string.h>

#include "kernels/split_rule.h"
#include "tests/test_util.h"

/* The definition: does token t (of lq) see key k (of lkv)? */
static int sees(int causal, int64_t t, int32_t k, int32_t lq, int32_t lkv) {
    return k < lkv && (!causal || (int64_t)k <= t + lkv - lq);
}

static void test_key_end_matches_definition(void **state) {
    (void)state;
    const int32_t lens[] = {0, 1, 2, 7, 64, 65, 130};
    for (int causal = 0; causal < 2; ++causal) {
        for (int iq = 0; iq < 7; ++iq) {
            for (int ik = 0; ik < 7; ++ik) {
                const int32_t lq = lens[iq], lkv = lens[ik];
                for (int64_t t = 0; t < lq; ++t) {
                    int32_t n = 0;
                    for (int32_t k = 0; k < lkv; ++k) {
                        n += sees(causal, t, k, lq, lkv);
                    }
                    assert_int_equal(opp__key_end(causal, t, lq, lkv), n);
                }
            }
        }
    }
}

static void test_split_tokens(void **state) {
    (void)state;
    const int32_t m = OPP__SPLIT_MIN_KV;
#if OPP__SPLIT_MIN_KV >= 0
    assert_int_equal(opp__split_tokens(1, m, 4, m), 0); /* not more than 1024 keys */
    assert_int_equal(opp__split_tokens(40, m, 4, m), 0);
#else /* every sequence splits its last tokens, one of no key too */
    assert_int_equal(opp__split_tokens(1, 0, 4, m), 1);
    assert_int_equal(opp__split_tokens(40, 1, 4, m), 16);
    assert_int_equal(opp__split_tokens(40, 1024, 1, m), 40);
#endif
    assert_int_equal(opp__split_tokens(1, m + 1, 4, m), 1);  /* decode */
    assert_int_equal(opp__split_tokens(40, 5000, 4, m), 16); /* 64 / 4 */
    assert_int_equal(opp__split_tokens(40, 5000, 64, m), 1);
    assert_int_equal(opp__split_tokens(3, 5000, 8, m), 3);
    assert_int_equal(opp__split_tokens(3, 700, 8, 512), 3); /* the threshold is the argument */
    assert_int_equal(opp__split_tokens(3, 512, 8, 512), 0);
    /* the cap OPP__SPLIT_TOKENS (64: none): G 1 splits 64 tokens, or the cap */
    assert_int_equal(opp__split_tokens(100, 5000, 1, m),
                     OPP__SPLIT_TOKENS < 64 ? OPP__SPLIT_TOKENS : 64);
    for (int32_t g = 1; g <= 64; ++g) {
        int32_t most = 64 / g; /* the split tile's rows a kv head */
        if (most > OPP__SPLIT_TOKENS) {
            most = OPP__SPLIT_TOKENS;
        }
        assert_int_equal(opp__split_tokens(100, 5000, g, m), most);
        assert_int_equal(opp__split_tokens(1, 5000, g, m), 1);
        assert_int_equal(OPP__SPLIT_MOST(g), most);
    }
}

/* The threshold: a function of G alone, OPP__SPLIT_MIN_KV_GQA from G 4. */
static void test_split_min_kv(void **state) {
    (void)state;
    for (int32_t g = 1; g <= 64; ++g) {
        assert_int_equal(opp__split_min_kv(g),
                         g >= OPP__SPLIT_GQA_G ? OPP__SPLIT_MIN_KV_GQA : OPP__SPLIT_MIN_KV);
    }
    assert_int_equal(OPP__SPLIT_GQA_G, 4);
    assert_true(OPP__SPLIT_MIN_KV_GQA <= OPP__SPLIT_MIN_KV);
}

/* Every (lq, lkv, G, causal) below: each split's blocks against the keys
 * its rows see, key by key. */
static void test_split_blocks_match_definition(void **state) {
    (void)state;
    const int32_t lqs[] = {1, 2, 5, 16, 40};
    const int32_t lkvs[] = {0,    1,    511,  512,  513,  700,  1023, 1024,
                            1025, 1087, 1088, 1089, 2048, 2049, 3000, 4160};
    const int32_t gs[] = {1, 2, 4, 8, 16, 64};
    const int32_t bns[] = {64, 128};
    int checked = 0;
    for (int causal = 0; causal < 2; ++causal) {
        for (int iq = 0; iq < 5; ++iq) {
            for (int ik = 0; ik < 16; ++ik) {
                for (int ig = 0; ig < 6; ++ig) {
                    for (int ib = 0; ib < 2; ++ib) {
                        const int32_t lq = lqs[iq], lkv = lkvs[ik], g = gs[ig], bn = bns[ib];
                        const int32_t mk = opp__split_min_kv(g);
                        const int32_t ts = opp__split_tokens(lq, lkv, g, mk);
                        int32_t next = -1; /* the block after the previous split's */
                        if (lkv == 0) {
                            /* no split: the last, count - 1, is -1 (the TMA split
                             * kernel's claim order asks for it) and runs nothing */
                            int32_t jb = -7, je = -7;
                            assert_int_equal(
                                opp__split_blocks(lq, lkv, g, mk, causal, -1, bn, &jb, &je), 0);
                            assert_true(jb == 0 && je == 0);
                        }
                        for (int32_t s = 0; s < 6 * 1024 / OPP__SPLIT_KEYS; ++s) {
                            /* the blocks of split s holding a key a split row sees */
                            int32_t lo = -1, hi = -1;
                            for (int32_t k = s * OPP__SPLIT_KEYS;
                                 k < (s + 1) * OPP__SPLIT_KEYS && k < lkv; ++k) {
                                int seen = 0;
                                for (int64_t t = lq - ts; t < lq && !seen; ++t) {
                                    seen = sees(causal, t, k, lq, lkv);
                                }
                                if (seen) {
                                    lo = lo < 0 ? k / bn : lo;
                                    hi = k / bn + 1;
                                }
                            }
                            int32_t jb = -7, je = -7;
                            const int runs =
                                opp__split_blocks(lq, lkv, g, mk, causal, s, bn, &jb, &je);
                            if (lo < 0) {
                                if (runs != 0 || jb != 0 || je != 0) {
                                    fail_msg("lq %d lkv %d G %d causal %d BN %d split %d: runs %d "
                                             "[%d, %d), no key seen",
                                             lq, lkv, g, causal, bn, s, runs, jb, je);
                                }
                                continue;
                            }
                            if (runs != 1 || jb != lo || je != hi) {
                                fail_msg("lq %d lkv %d G %d causal %d BN %d split %d: runs %d [%d, "
                                         "%d), want [%d, %d)",
                                         lq, lkv, g, causal, bn, s, runs, jb, je, lo, hi);
                            }
                            assert_true(next < 0 || jb == next); /* no gap, no overlap */
                            next = je;
                            ++checked;
                        }
                    }
                }
            }
        }
    }
    assert_true(checked > 500);
}

/* The TMA split kernel's claim order, over random batches: walking the
 * claims 0 .. items-1 as its producer does (opp__split_claim_slot, the
 * rank table, opp__split_claim_split, then opp__split_blocks), every item
 * with key blocks runs exactly once and nothing else runs; no sequence's
 * last split comes before the last-split claims, and those take the last
 * splits by their key blocks, most first. The rank table here is an
 * insertion sort (the kernel's: a warp's counting sort, the same order). */
#define ORDER_B   40
#define ORDER_HKV 8
#define ORDER_NS  (8 * 1024 / OPP__SPLIT_KEYS) /* the most splits of a sequence */
static uint64_t order_rng = 0x9E3779B97F4A7C15ull;
static uint32_t order_rand(uint32_t n) {
    order_rng = order_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(order_rng >> 33) % n;
}
/* opp__split_next_block: from jb, every block of [jb, je) exactly once,
 * slice by slice (slice s = (j - jb) % OPP__SPLIT_SLICES: //tests:
 * split_rule_slices_test builds this file with 4), each slice ascending,
 * then je; opp__split_slice_ends exactly at each slice's last block (the
 * tiles fold there). Against the definition: the expected walk built
 * slice by slice from the slice's membership. */
static void test_slice_order(void **state) {
    (void)state;
    const int sl = OPP__SPLIT_SLICES;
    for (int32_t jb = 0; jb < 40; jb += 13) {
        for (int32_t n = 1; n <= 20; ++n) {
            const int32_t je = jb + n;
            int32_t want[64], nw = 0;
            for (int s = 0; s < sl; ++s) {
                for (int32_t j = jb; j < je; ++j) {
                    if ((j - jb) % sl == s) {
                        want[nw++] = j;
                    }
                }
            }
            assert_int_equal(nw, n);
            int32_t j = jb, k = 0;
            while (j < je) {
                assert_true(k < n);
                assert_int_equal(j, want[k]);
                const int32_t nx = opp__split_next_block(j, jb, je);
                /* j ends its slice iff no later block of the walk is in its slice */
                int later = 0;
                for (int32_t q = k + 1; q < n; ++q) {
                    later |= (want[q] - jb) % sl == (j - jb) % sl;
                }
                assert_int_equal(opp__split_slice_ends(j, je), !later);
                if (k + 1 < n) {
                    assert_int_equal(nx, want[k + 1]);
                } else {
                    assert_true(nx >= je);
                }
                j = nx;
                ++k;
            }
            assert_int_equal(k, n);
        }
    }
}

/* Slice items (OPP__SPLIT_SLICE_ITEMS: //tests:split_rule_slice_items_test
 * builds this file with 32): slice s's own walk, from opp__split_slice_first
 * by OPP__SPLIT_SLICES, is the blocks of slice s in opp__split_next_block's
 * walk, in its order, and opp__split_slice_ends holds at its last block
 * alone; the launch's items and the rule against their definitions. */
static void test_slice_items(void **state) {
    (void)state;
    const int sl = OPP__SPLIT_SLICES;
    for (int32_t jb = 0; jb < 40; jb += 13) {
        for (int32_t n = 1; n <= 20; ++n) {
            const int32_t je = jb + n;
            for (int s = 0; s < sl; ++s) {
                int32_t want[64], nw = 0; /* slice s in the one-block walk */
                for (int32_t j = jb; j < je; j = opp__split_next_block(j, jb, je)) {
                    if ((j - jb) % sl == s) {
                        want[nw++] = j;
                    }
                }
                int32_t k = 0;
                for (int32_t j = opp__split_slice_first(jb, s); j < je; j += sl, ++k) {
                    assert_true(k < nw);
                    assert_int_equal(j, want[k]);
                    assert_int_equal(opp__split_slice_ends(j, je), k == nw - 1);
                }
                assert_int_equal(k, nw);
            }
        }
    }
    const int64_t kv[] = {1, 1024, 1025, 4096, 131072, INT32_MAX};
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); ++i) {
        for (int64_t b = 1; b <= 300; b += 37) {
            const int64_t want = (kv[i] / OPP__SPLIT_KEYS + (kv[i] % OPP__SPLIT_KEYS != 0)) * b * 8;
            assert_int_equal(opp__split_items(kv[i], b, 8), want);
            assert_int_equal(opp__split_slice_items(want),
                             OPP__SPLIT_SLICE_ITEMS > 0 && want <= OPP__SPLIT_SLICE_ITEMS);
        }
    }
}

static void test_claim_order(void **state) {
    (void)state;
    const int32_t gs[] = {1, 2, 4, 8, 16};
    int ranked_cases = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const int32_t batch = 1 + (int32_t)order_rand(ORDER_B),
                      hkv = 1 + (int32_t)order_rand(3) * 3;
        const int32_t g = gs[order_rand(5)], causal = (int32_t)order_rand(2);
        const int32_t mk = opp__split_min_kv(g);
        int32_t lq[ORDER_B], lkv[ORDER_B], last_blocks[ORDER_B], max_kv = 0;
        for (int32_t b = 0; b < batch; ++b) {
            lq[b] = 1 + (int32_t)order_rand((uint32_t)(16 / g + 2));
            /* around the split edges: 0, 1 .. 1024, 1025 .., whole splits */
            const uint32_t kind = order_rand(4);
            lkv[b] = kind == 0   ? (int32_t)order_rand(1100)
                     : kind == 1 ? OPP__SPLIT_KEYS * (1 + (int32_t)order_rand(6))
                                 : (int32_t)order_rand(ORDER_NS * OPP__SPLIT_KEYS - 100) + 1;
            if (lkv[b] < lq[b] && causal) {
                lkv[b] = lq[b]; /* keep some keys for every split row */
            }
            max_kv = lkv[b] > max_kv ? lkv[b] : max_kv;
            int32_t jb = 0, je = 0;
            const int32_t last = opp__split_count(lkv[b]) - 1;
            last_blocks[b] =
                opp__split_blocks(lq[b], lkv[b], g, mk, causal, last, 64, &jb, &je) ? je - jb : 0;
        }
        /* the host's extents may exceed the batch's: up to one more split */
        max_kv += (int32_t)order_rand(2) * (int32_t)order_rand(OPP__SPLIT_KEYS);
        const int64_t per = (int64_t)batch * hkv;
        const int64_t items = (int64_t)opp__split_count(max_kv) * per;
        /* the rank: by the last split's blocks, most first, ties in batch order, 0 last */
        int32_t perm[ORDER_B];
        for (int32_t b = 0; b < batch; ++b) {
            int32_t i = b;
            while (i > 0 && last_blocks[perm[i - 1]] < last_blocks[b]) {
                perm[i] = perm[i - 1];
                --i;
            }
            perm[i] = b;
        }
        ranked_cases += last_blocks[perm[0]] != last_blocks[perm[batch - 1]];
        static uint8_t runs[ORDER_NS + 1][ORDER_B][ORDER_HKV];
        memset(runs, 0, sizeof runs);
        int in_last = 0;
        int32_t prev_blocks = 1 << 30;
        for (int64_t c = 0; c < items; ++c) {
            int32_t split, b, hk;
            const int32_t r = opp__split_claim_slot(c, items, per, hkv, &split, &b, &hk);
            if (r >= 0) {
                assert_true(r < batch);
                b = perm[r];
                in_last = 1;
            } else {
                assert_false(in_last); /* the last-split claims come last */
            }
            int32_t jb = 0, je = 0;
            if (!opp__split_claim_split(&split, r >= 0, lkv[b]) ||
                !opp__split_blocks(lq[b], lkv[b], g, mk, causal, split, 64, &jb, &je)) {
                continue;
            }
            assert_true(split <= ORDER_NS);
            runs[split][b][hk]++;
            if (r >= 0) { /* the last splits: blocks never grow */
                assert_true(je - jb <= prev_blocks);
                prev_blocks = je - jb;
            } else { /* before: never a sequence's last split */
                assert_true((int64_t)(split + 1) * OPP__SPLIT_KEYS < lkv[b]);
            }
        }
        for (int32_t b = 0; b < batch; ++b) {
            for (int32_t s = 0; s <= ORDER_NS; ++s) {
                int32_t jb = 0, je = 0;
                const int want = opp__split_blocks(lq[b], lkv[b], g, mk, causal, s, 64, &jb, &je);
                for (int32_t hk = 0; hk < hkv; ++hk) {
                    if (runs[s][b][hk] != want) {
                        fail_msg(
                            "trial %d: split %d of sequence %d (lq %d, lkv %d, G %d, causal %d), "
                            "kv head %d ran %d times, want %d",
                            trial, s, b, lq[b], lkv[b], g, causal, hk, runs[s][b][hk], want);
                    }
                }
            }
        }
    }
    assert_true(ranked_cases > 100); /* the order had something to sort */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_end_matches_definition),
        cmocka_unit_test(test_split_tokens),
        cmocka_unit_test(test_split_min_kv),
        cmocka_unit_test(test_split_blocks_match_definition),
        cmocka_unit_test(test_slice_order),
        cmocka_unit_test(test_slice_items),
        cmocka_unit_test(test_claim_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
