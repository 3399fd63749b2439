/*
 * header_c11_test.c - the public header alone compiles as strict C11
 * (built with -std=c11 -pedantic -Werror) and its macros, types and a few
 * functions work from C. No CMocka: a compile test with a minimal main
 * that returns non-zero on a failed check.
 */
#include "lib/oppacked.h"

#include <stdio.h>
#include <string.h>

_Static_assert(OPP_VERSION_NUMBER == 100, "version macros");
_Static_assert(OPP_STATUS_CATEGORY(OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING) == OPP_STATUS_BAD_PARAM,
               "status category macro is a constant expression");
_Static_assert(OPP_DTYPE_BF16 == 16 && OPP_DTYPE_F16 == 10 && OPP_DTYPE_F32 == 1,
               "dtype values are ONNX TensorProto values");

static int failures;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "FAILED: %s (last error: %s)\n", what, opp_last_error_message());
        ++failures;
    }
}

int main(void) {
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = OPP_DTYPE_F16;
    desc.batch = 1;
    desc.num_heads = 2;
    desc.head_size = 64;
    desc.total_q = desc.total_kv = 3;
    desc.max_seqlen_q = desc.max_seqlen_kv = 3;
    const int32_t cu[2] = {0, 3};
    check(opp_varlen_check(&desc, cu, 2, cu, 2) == OPP_STATUS_SUCCESS, "valid desc passes");
    desc.num_heads = 0;
    check(opp_attention_desc_check(&desc) == OPP_STATUS_BAD_PARAM_NUM_HEADS, "bad num_heads");
    check(strcmp(opp_status_name(OPP_STATUS_BAD_PARAM_NUM_HEADS), "BAD_PARAM_NUM_HEADS") == 0,
          "status name");
    check(strstr(opp_last_error_message(), "num_heads = 0") != NULL, "message");
    check(opp_version_number() == OPP_VERSION_NUMBER, "version");
    check(opp_dtype_size(OPP_DTYPE_BF16) == 2, "dtype size");
    printf("header_c11_test: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
