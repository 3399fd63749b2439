/*
 * attention24_desc_fuzz.c - libFuzzer target: opp_attention24_desc_check()
 * and opp_attention24_kernel_query() on arbitrary Attention-24 layout
 * descriptors (fuzz/README.md).
 *
 * Input: byte 0 chooses struct_size (bits 0-2: the library's sizeof, the
 * smallest accepted size, the size ending before softcap or before algo,
 * or the input's own bytes); the rest is copied over a zeroed
 * opp_attention24_desc_t.
 * Oracles (beyond fuzz_common.h's):
 *   - independent: the claim-time fields as fuzz/oracle.h predicts;
 *     then input_rank, batch, q_seqlen, kv_seqlen and the 128-bit byte
 *     size of each of q, k, v, y as predicted below;
 *   - the same descriptor read with a smaller struct_size == the full-size
 *     one holding the defaults past it (status and message);
 *   - the kernel query fails exactly as desc_check, or names a kernel, or
 *     says 2xxx.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/oracle.h"
#include "fuzz/fuzz_common.h"

/* The layout status after valid claim fields, or SUCCESS. */
static opp_status_t oracle_layout(const opp_attention24_desc_t *d) {
    if (d->input_rank != 3 && d->input_rank != 4) {
        return OPP_STATUS_BAD_PARAM_SHAPE;
    }
    if (d->batch < 1) {
        return OPP_STATUS_BAD_PARAM_BATCH;
    }
    if (d->q_seqlen < 0 || d->kv_seqlen < 0) {
        return OPP_STATUS_BAD_PARAM_SHAPE;
    }
    const __int128 hq = d->num_heads, hkv = d->kv_num_heads == 0 ? hq : d->kv_num_heads;
    const __int128 dd = d->head_size, dv = d->v_head_size == 0 ? dd : d->v_head_size;
    const __int128 es = d->q_dtype == OPP_DTYPE_F32 ? 4 : 2;
    const __int128 b = d->batch, sq = d->q_seqlen, skv = d->kv_seqlen;
    const __int128 bytes[4] = {b * sq * hq * dd * es, b * skv * hkv * dd * es,
                               b * skv * hkv * dv * es, b * sq * hq * dv * es};
    for (int i = 0; i < 4; ++i) {
        if (bytes[i] > INT64_MAX) {
            return OPP_STATUS_BAD_PARAM_SHAPE;
        }
    }
    return OPP_STATUS_SUCCESS;
}

static fuzz_outcome_t desc_check(const opp_attention24_desc_t *d) {
    return fuzz_outcome(opp_attention24_desc_check(d), "opp_attention24_desc_check");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t sel = 0;
    fuzz_take(&sel, 1, &data, &size);
    opp_attention24_desc_t d;
    fuzz_take(&d, sizeof d, &data, &size);
    const size_t sizes[5] = {sizeof d, OPP_ATTENTION24_DESC_MIN_SIZE,
                             offsetof(opp_attention24_desc_t, softcap),
                             offsetof(opp_attention24_desc_t, algo), sizeof d};
    if ((sel & 7) < 5) {
        d.struct_size = sizes[sel & 7];
    }
    const size_t s = d.struct_size;
    const int plausible = s % 8 == 0 && s >= OPP_ATTENTION24_DESC_MIN_SIZE && s <= sizeof d;
    const fuzz_outcome_t full = desc_check(&d);
    if (!plausible) {
        const opp_status_t want = s % 8 == 0 && s > sizeof d && s <= 4096
                                      ? OPP_STATUS_NOT_SUPPORTED_VERSION
                                      : OPP_STATUS_BAD_PARAM_NOT_INITIALISED;
        FUZZ_REQUIRE(full.st == want, "struct_size %zu: desc %s", s, opp_status_name(full.st));
        FUZZ_REQUIRE(strstr(full.msg, "opp_attention24_desc_init") != NULL, "message: %s",
                     full.msg);
        return 0;
    }
    opp_attention24_desc_t eff;
    opp_attention24_desc_init(&eff);
    memcpy(&eff, &d, s);
    eff.struct_size = sizeof eff;
    if (s < sizeof d) {
        const fuzz_outcome_t e = desc_check(&eff);
        FUZZ_REQUIRE(e.st == full.st && strcmp(e.msg, full.msg) == 0,
                     "struct_size %zu: %s \"%s\" but the defaulted full-size desc: %s \"%s\"", s,
                     opp_status_name(full.st), full.msg, opp_status_name(e.st), e.msg);
    }
    const oracle_claim_t c = ORACLE_CLAIM_OF(&eff);
    const opp_status_t want_claim = oracle_claim_status(&c);
    if (want_claim != OPP_STATUS_SUCCESS) {
        FUZZ_REQUIRE(full.st == want_claim, "desc_check %s, claim oracle %s",
                     opp_status_name(full.st), opp_status_name(want_claim));
    } else if (!oracle_is_unsupported(full.st)) {
        /* claim fields valid and some kernel serves them: the layout decides */
        const opp_status_t want = oracle_layout(&eff);
        FUZZ_REQUIRE(full.st == want, "desc_check %s, layout oracle %s", opp_status_name(full.st),
                     opp_status_name(want));
    }
    static const int32_t arches[4] = {80, 86, 89, 90};
    for (int i = 0; i < 4; ++i) {
        const char *name = "stale";
        const opp_status_t q = opp_attention24_kernel_query(&d, arches[i], &name);
        fuzz_check_result(q, "opp_attention24_kernel_query");
        if (full.st != OPP_STATUS_SUCCESS) {
            FUZZ_REQUIRE(q == full.st && name == NULL, "query %s, desc_check %s",
                         opp_status_name(q), opp_status_name(full.st));
        } else if (q == OPP_STATUS_SUCCESS) {
            FUZZ_REQUIRE(name != NULL && name[0] != '\0', "query succeeded without a name");
        } else {
            FUZZ_REQUIRE(oracle_is_unsupported(q) && name == NULL, "query %s on sm_%d",
                         opp_status_name(q), arches[i]);
        }
    }
    return 0;
}
