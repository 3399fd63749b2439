/*
 * consumer.c - an example program built against an INSTALLED liboppacked
 * (make, which asks `pkg-config --cflags --libs oppacked`). It calls the
 * host validation API only, so it runs on a machine without a GPU:
 *   - a valid descriptor passes the claim check, the descriptor check and
 *     the host cu_seqlens check;
 *   - a bad descriptor and bad cu_seqlens are refused with the status and
 *     message a runtime would log;
 *   - the dispatch table names the kernel an H100/H200 (sm_90) would run.
 * Prints one line per step and "consumer: OK" when every status is the
 * expected one; exits 1 otherwise.
 */
#include <oppacked.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

/* Prints a step's status and message; counts it as a failure if it is not
 * the expected status. */
static void expect(const char *step, opp_status_t got, opp_status_t want) {
    printf("%-28s %-32s %s\n", step, opp_status_name(got),
           got == OPP_STATUS_SUCCESS ? "" : opp_last_error_message());
    if (got != want) {
        printf("  unexpected: wanted %s\n", opp_status_name(want));
        failures++;
    }
}

int main(void) {
    printf("liboppacked %s (header %d.%d.%d)\n", opp_version_string(), OPP_VERSION_MAJOR,
           OPP_VERSION_MINOR, OPP_VERSION_PATCH);
    if (opp_version_number() != OPP_VERSION_NUMBER) {
        printf("  unexpected: library version %u != header version %d\n", opp_version_number(),
               OPP_VERSION_NUMBER);
        failures++;
    }

    /* A bf16 GQA batch of three sequences: 100, 400 and 200 tokens. */
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = OPP_DTYPE_BF16;
    desc.batch = 3;
    desc.num_heads = 32;
    desc.kv_num_heads = 8;
    desc.head_size = 128;
    desc.total_q = desc.total_kv = 700;
    desc.max_seqlen_q = desc.max_seqlen_kv = 400;
    desc.is_causal = 1;
    const int32_t cu[4] = {0, 100, 500, 700};

    expect("claim check", opp_attention_claim_check(&desc), OPP_STATUS_SUCCESS);
    expect("descriptor check", opp_attention_desc_check(&desc), OPP_STATUS_SUCCESS);
    expect("cu_seqlens check", opp_varlen_check(&desc, cu, 4, cu, 4), OPP_STATUS_SUCCESS);

    const char *kernel = NULL;
    expect("kernel query (sm_90)", opp_attention_kernel_query(&desc, 90, &kernel),
           OPP_STATUS_SUCCESS);
    printf("  sm_90 runs %s\n", kernel != NULL ? kernel : "(none)");

    /* The same batch with cu_seqlens_kv decreasing at index 2. */
    const int32_t bad_cu[4] = {0, 500, 100, 700};
    expect("bad cu_seqlens_kv", opp_varlen_check(&desc, cu, 4, bad_cu, 4),
           OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING);

    /* 6 kv heads do not divide 32 query heads. */
    opp_attention_desc_t bad = desc;
    bad.kv_num_heads = 6;
    expect("bad kv_num_heads", opp_attention_desc_check(&bad),
           OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING);

    /* f64 is a valid ONNX type the library does not support: a runtime falls back. */
    bad = desc;
    bad.q_dtype = bad.k_dtype = bad.v_dtype = bad.out_dtype = OPP_DTYPE_F64;
    expect("claim check f64", opp_attention_claim_check(&bad), OPP_STATUS_NOT_SUPPORTED_DTYPE);

    printf("consumer: %s\n", failures == 0 ? "OK" : "FAILED");
    return failures == 0 ? 0 : 1;
}
