/*
 * hopper_sort_rule_test.c - when the Hopper kernel runs its sequences
 * longest first (kernels/hopper_sort_rule.h): on the shapes of the fixed
 * workloads that the twentieth session's A/B measured (bench/RESULTS.md:
 * softcap_hd256_bf16 sorted; prefill, short_many, encoder, long, decode
 * and the equal-length sweep batches in batch order), and one step either
 * side of each bound (sequences, items an SM, the split decode rows, equal
 * lengths); and when its blocks probe for tokens first (the split decode
 * batches). The shapes are the workloads' (../shared/bench/workloads.json)
 * with the Hopper tiles of kernels/kernel_list.h (BM 128, so BM / G query
 * tokens a tile) on 132 SMs. CPU only.
 * Run (Bazel): bazel test //tests:hopper_sort_rule_test --test_output=all
 */
#include <stdint.h>
#include <string.h>

#include "kernels/hopper_sort_rule.h"
#include "tests/test_util.h"

enum { SMS = 132, BM = 128 };

/* A packed launch of n sequences of lengths lq (= lkv), hq / hkv heads. */
static opp__hop_sort_in_t packed_of(const int32_t *lq, int n, int64_t hq, int64_t hkv) {
    opp__hop_sort_in_t in;
    memset(&in, 0, sizeof(in));
    in.packed = 1;
    in.batch = n;
    in.hkv = hkv;
    in.g = hq / hkv;
    in.bmt = BM / in.g;
    for (int b = 0; b < n; ++b) {
        in.total_q += lq[b];
        in.max_seqlen_q = lq[b] > in.max_seqlen_q ? lq[b] : in.max_seqlen_q;
    }
    in.total_kv = in.total_q;
    in.max_seqlen_kv = in.max_seqlen_q;
    in.items = (in.max_seqlen_q + in.bmt - 1) / in.bmt * n * hkv;
    in.grid = in.items < SMS ? in.items : SMS;
    return in;
}

// softcap_hd256_bf16: 8 sequences, 16 / 8 heads, BMT 64: 3008 items, of
// which at most (12712 / 64 + 8) 8 = 1648 hold tokens, 12.5 an SM: sorted.
// prefill_gqa_causal_bf16: 16 sequences, 32 / 8 heads, BMT 32: at most
// (29113 / 32 + 16) 8 = 7400 items with tokens, 56 an SM: batch order.
static void test_sort_rule_workloads(void **state) {
    (void)state;
    const int32_t softcap[8] = {1022, 1075, 2871, 1443, 584, 3008, 670, 2039};
    const int32_t prefill[16] = {814,  2626, 1400, 175,  3118, 3718, 671,  3825,
                                 2201, 1097, 2366, 1095, 162,  1363, 2070, 2412};
    opp__hop_sort_in_t in = packed_of(softcap, 8, 16, 8);
    assert_int_equal(in.items, 3008);
    assert_int_equal(opp__hop_wants_sort(&in), 1);
    in = packed_of(prefill, 16, 32, 8);
    assert_int_equal(opp__hop_wants_sort(&in), 0);
    /* the same softcap batch padded (nonpad on the device): 3008 items,
     * 22.8 an SM, above the bound: batch order */
    in = packed_of(softcap, 8, 16, 8);
    in.packed = 0;
    assert_int_equal(opp__hop_wants_sort(&in), 0);
}

// long_causal_bf16 (one sequence), a sweep batch (equal lengths), and
// decode_gqa_bf16 (one query token, 4 query heads a kv head: the split
// launch's rows): batch order.
static void test_sort_rule_no_order_to_gain(void **state) {
    (void)state;
    const int32_t one[1] = {16384};
    opp__hop_sort_in_t in = packed_of(one, 1, 32, 8);
    assert_int_equal(opp__hop_wants_sort(&in), 0);
    int32_t equal[32];
    for (int b = 0; b < 32; ++b) {
        equal[b] = 512;
    }
    in = packed_of(equal, 32, 16, 16); /* sweep_d128_causal_L512: 2048 items */
    assert_int_equal(opp__hop_wants_sort(&in), 0);
    equal[5] = 511; /* one shorter: the lengths differ */
    in = packed_of(equal, 32, 16, 16);
    assert_int_equal(opp__hop_wants_sort(&in), 1);
    int32_t dec[64];
    for (int b = 0; b < 64; ++b) {
        dec[b] = 1;
    }
    in = packed_of(dec, 64, 32, 8);
    in.total_kv = 275108; /* the keys differ, the queries do not */
    in.max_seqlen_kv = 8187;
    in.split_on = 1;
    assert_int_equal(opp__hop_wants_sort(&in), 0);
    in.split_on = 0; /* no workspace: no split rows, the launch runs them all */
    assert_int_equal(opp__hop_wants_sort(&in), 1);
}

// One step either side of each bound.
static void test_sort_rule_bounds(void **state) {
    (void)state;
    static int32_t lq[OPP__HOPPER_SORT_MAX + 1];
    for (int b = 0; b <= OPP__HOPPER_SORT_MAX; ++b) {
        lq[b] = 1 + b % 32; /* one m-block each at BMT 32 */
    }
    /* sequences: 512 sorted, 513 not (Hkv 1, G 4: 512 / 513 items) */
    opp__hop_sort_in_t in = packed_of(lq, OPP__HOPPER_SORT_MAX, 4, 1);
    assert_int_equal(opp__hop_wants_sort(&in), 1);
    in = packed_of(lq, OPP__HOPPER_SORT_MAX + 1, 4, 1);
    assert_int_equal(opp__hop_wants_sort(&in), 0);
    /* items an SM: exactly OPP__HOPPER_SORT_ITEMS_PER_SM x grid, then one more */
    in = packed_of(lq, 64, 4, 1);
    in.grid = 4;
    in.items = (int64_t)OPP__HOPPER_SORT_ITEMS_PER_SM * 4; /* busy = min(items, bound) */
    in.total_q = 0; /* bound (0 / 32 + 64) 1 = 64 = items: at the limit */
    assert_int_equal(opp__hop_wants_sort(&in), 1);
    in.items += 1;
    in.total_q = 32; /* bound 65 */
    assert_int_equal(opp__hop_wants_sort(&in), 0);
    /* split decode rows: max_seqlen_q at OPP__SPLIT_ROWS / G is the split
     * launch's, one token more is not */
    in = packed_of(lq, 64, 4, 1);
    in.split_on = 1;
    in.max_seqlen_q = OPP__SPLIT_ROWS / 4;
    assert_int_equal(opp__hop_wants_sort(&in), 0);
    in.max_seqlen_q += 1;
    assert_int_equal(opp__hop_wants_sort(&in), 1);
}

/* The probe (opp__hop_wants_probe): a split decode batch only, that is
 * split_on and max_seqlen_q G <= OPP__SPLIT_ROWS (64), one token either
 * side of that bound at G 1, 4 and 8; never without split_on. The
 * decode_gqa_bf16 shape (64 sequences of one query, 32 / 8 heads) probes. */
static void test_probe_rule(void **state) {
    (void)state;
    int32_t one[64];
    for (int b = 0; b < 64; ++b) {
        one[b] = 1;
    }
    opp__hop_sort_in_t in = packed_of(one, 64, 32, 8);
    in.split_on = 1;
    assert_int_equal(opp__hop_wants_probe(&in), 1);
    in.split_on = 0;
    assert_int_equal(opp__hop_wants_probe(&in), 0);
    const int64_t gs[3] = {1, 4, 8};
    for (int i = 0; i < 3; ++i) {
        in.g = gs[i];
        in.split_on = 1;
        in.max_seqlen_q = 64 / gs[i];
        assert_int_equal(opp__hop_wants_probe(&in), 1);
        in.max_seqlen_q = 64 / gs[i] + 1;
        assert_int_equal(opp__hop_wants_probe(&in), 0);
        in.split_on = 0;
        in.max_seqlen_q = 1;
        assert_int_equal(opp__hop_wants_probe(&in), 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_rule_workloads),
        cmocka_unit_test(test_sort_rule_no_order_to_gain),
        cmocka_unit_test(test_sort_rule_bounds),
        cmocka_unit_test(test_probe_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
