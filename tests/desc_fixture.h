/*
 * desc_fixture.h - the shared fixture of the descriptor tests
 * (attention_claim_check_test.c, attention_desc_test.c): a valid GQA
 * descriptor and the two assertion shapes (a claim-time fault reported by
 * both checks; a batch-shape fault reported by desc_check only).
 */
#ifndef OPP_TESTS_DESC_FIXTURE_H
#define OPP_TESTS_DESC_FIXTURE_H

#include <math.h>
#include <string.h>

#include "tests/test_util.h"

/* A valid GQA descriptor: B = 3, Hq = 8, Hkv = 2, D = 64, f16. */
static inline opp_attention_desc_t valid_desc(void) {
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_F16;
    d.batch = 3;
    d.num_heads = 8;
    d.kv_num_heads = 2;
    d.head_size = 64;
    d.total_q = 100;
    d.total_kv = 120;
    d.max_seqlen_q = 50;
    d.max_seqlen_kv = 60;
    return d;
}

/* A claim-time fault: claim_check and desc_check both report it. */
#define assert_claim_fails(desc, status, substring)                                   \
    do {                                                                              \
        assert_opp_status(opp_attention_claim_check(&(desc)), (status), (substring)); \
        assert_opp_status(opp_attention_desc_check(&(desc)), (status), (substring));  \
    } while (0)

/* A batch-shape fault: claim_check accepts, desc_check reports it. */
#define assert_desc_fails(desc, status, substring)                                   \
    do {                                                                             \
        assert_opp_ok(opp_attention_claim_check(&(desc)));                           \
        assert_opp_status(opp_attention_desc_check(&(desc)), (status), (substring)); \
    } while (0)

static inline void set_dtypes(opp_attention_desc_t *d, int q, int k, int v, int out) {
    d->q_dtype = (opp_dtype_t)q;
    d->k_dtype = (opp_dtype_t)k;
    d->v_dtype = (opp_dtype_t)v;
    d->out_dtype = (opp_dtype_t)out;
}

#endif /* OPP_TESTS_DESC_FIXTURE_H */
