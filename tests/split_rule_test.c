/*
 * split_rule_test.c - kernels/split_rule.h on the CPU: the keys a query
 * token sees and the key blocks each split runs, against the definition
 * taken one key at a time (tail-aligned causal: token t of L_q sees key k
 * iff k <= t + L_kv - L_q), over lengths around the split size and block
 * edges, every G, causal and not:
 *   - opp__key_end counts exactly the keys the definition shows token t;
 *   - the split rows are the last min(L_q, 64 / G) tokens when L_kv >
 *     OPP__SPLIT_MIN_KV (1024; //tests:split_rule_all_test builds this file
 *     with OPP__SPLIT_ALL_KV 1: -1, every sequence), none otherwise;
 *   - for each split s, [jb, je) is exactly the blocks of BN keys inside
 *     [1024 s, 1024 (s + 1)) that hold a key some split row sees; a split
 *     with no such key runs none (returns 0); the splits' blocks tile the
 *     visible blocks without gap or overlap; a sequence of no key (no
 *     split: the last is split -1) runs none.
 * The TMA split kernel's producer and the narrow tile both walk these
 * blocks (kernels/hopper_split.cuh, kernels/flash_split_narrow.cuh).
 *
 *   bazel test //tests:split_rule_test
 */
#include <stdio.h>

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
#if OPP__SPLIT_MIN_KV >= 0
    assert_int_equal(opp__split_tokens(1, OPP__SPLIT_MIN_KV, 4), 0); /* not more than 1024 keys */
    assert_int_equal(opp__split_tokens(40, OPP__SPLIT_MIN_KV, 4), 0);
#else /* every sequence splits its last tokens, one of no key too */
    assert_int_equal(opp__split_tokens(1, 0, 4), 1);
    assert_int_equal(opp__split_tokens(40, 1, 4), 16);
    assert_int_equal(opp__split_tokens(40, 1024, 1), 40);
#endif
    assert_int_equal(opp__split_tokens(1, OPP__SPLIT_MIN_KV + 1, 4), 1); /* decode */
    assert_int_equal(opp__split_tokens(40, 5000, 4), 16);                /* 64 / 4 */
    assert_int_equal(opp__split_tokens(40, 5000, 64), 1);
    assert_int_equal(opp__split_tokens(3, 5000, 8), 3);
}

/* Every (lq, lkv, G, causal) below: each split's blocks against the keys
 * its rows see, key by key. */
static void test_split_blocks_match_definition(void **state) {
    (void)state;
    const int32_t lqs[] = {1, 2, 5, 16, 40};
    const int32_t lkvs[] = {0, 1, 1023, 1024, 1025, 1087, 1088, 1089, 2048, 2049, 3000, 4160};
    const int32_t gs[] = {1, 2, 4, 8, 16, 64};
    const int32_t bns[] = {64, 128};
    int checked = 0;
    for (int causal = 0; causal < 2; ++causal) {
        for (int iq = 0; iq < 5; ++iq) {
            for (int ik = 0; ik < 12; ++ik) {
                for (int ig = 0; ig < 6; ++ig) {
                    for (int ib = 0; ib < 2; ++ib) {
                        const int32_t lq = lqs[iq], lkv = lkvs[ik], g = gs[ig], bn = bns[ib];
                        const int32_t ts = opp__split_tokens(lq, lkv, g);
                        int32_t next = -1; /* the block after the previous split's */
                        if (lkv == 0) {
                            /* no split: the last, count - 1, is -1 (the TMA split
                             * kernel's claim order asks for it) and runs nothing */
                            int32_t jb = -7, je = -7;
                            assert_int_equal(
                                opp__split_blocks(lq, lkv, g, causal, -1, bn, &jb, &je), 0);
                            assert_true(jb == 0 && je == 0);
                        }
                        for (int32_t s = 0; s < 6; ++s) {
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
                            const int runs = opp__split_blocks(lq, lkv, g, causal, s, bn, &jb, &je);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_end_matches_definition),
        cmocka_unit_test(test_split_tokens),
        cmocka_unit_test(test_split_blocks_match_definition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
