/*
 * plain_gcc_program.c - built by plain_gcc_link_test.sh with plain gcc
 * against liboppacked.a and oppacked.h only (no Bazel, no internal header):
 * validates a good descriptor and a bad one and prints the message, and
 * the merge's shape check (no CUDA either).
 */
#include <stdio.h>
#include <string.h>

#include "oppacked.h"

int main(void) {
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = OPP_DTYPE_BF16;
    desc.batch = 2;
    desc.num_heads = 8;
    desc.kv_num_heads = 2;
    desc.head_size = 128;
    desc.total_q = desc.total_kv = 10;
    desc.max_seqlen_q = desc.max_seqlen_kv = 7;
    const int32_t cu_good[3] = {0, 7, 10};
    opp_status_t s = opp_varlen_check(&desc, cu_good, 3, cu_good, 3);
    printf("liboppacked %s, good descriptor: %s\n", opp_version_string(), opp_status_name(s));
    if (s != OPP_STATUS_SUCCESS) {
        return 1;
    }
    const int32_t cu_bad[3] = {0, 7, 6};
    s = opp_varlen_check(&desc, cu_good, 3, cu_bad, 3);
    printf("bad descriptor: %s (%s): %s\n", opp_status_name(s), opp_status_string(s),
           opp_last_error_message());
    if (s != OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING ||
        strstr(opp_last_error_message(), "cu_seqlens_kv[2] = 6 < cu_seqlens_kv[1] = 7") == NULL) {
        return 1;
    }
    /* the merge's shape check is host-only too */
    s = opp_merge_attention_states_check(OPP_DTYPE_BF16, 2, 10, 8, 0);
    printf("merge with v_head_size 0: %s: %s\n", opp_status_name(s), opp_last_error_message());
    if (s != OPP_STATUS_BAD_PARAM_V_HEAD_SIZE ||
        strstr(opp_last_error_message(), "v_head_size = 0 must be >= 1") == NULL) {
        return 1;
    }
    return 0;
}
