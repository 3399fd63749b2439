/*
 * desc_fuzz.c - libFuzzer target: opp_attention_claim_check(),
 * opp_attention_desc_check() and opp_attention_kernel_query() on arbitrary
 * packed descriptors (fuzz/README.md: build, run, corpus).
 *
 * Input: byte 0 chooses struct_size (bits 0-2: the library's sizeof, the
 * smallest accepted size, the size ending before softcap, before the
 * strides, before algo, or the input's own bytes - usually garbage); the
 * rest is copied over a zeroed opp_attention_desc_t.
 * Oracles (beyond fuzz_common.h's status and message checks):
 *   - independent: the claim-time fields' status as fuzz/oracle.h
 *     predicts it, and the batch-shape status (batch, totals, max_seqlens,
 *     strides with 128-bit extents) as predicted below;
 *   - claim_check's failure is desc_check's; the kernel query fails exactly
 *     as desc_check does, and otherwise names a kernel or says 2xxx;
 *   - struct_size: a descriptor read with a smaller struct_size gives the
 *     same status and message as the full-size descriptor holding the
 *     defaults past that size; an implausible struct_size is refused with
 *     NOT_INITIALISED / NOT_SUPPORTED_VERSION before anything else.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/oracle.h"
#include "fuzz/fuzz_common.h"

/* The batch-shape status after valid claim fields, or SUCCESS. */
static opp_status_t oracle_shape(const opp_attention_desc_t *d) {
    if (d->batch < 1) {
        return OPP_STATUS_BAD_PARAM_BATCH;
    }
    const int64_t totals[2] = {d->total_q, d->total_kv};
    for (int i = 0; i < 2; ++i) {
        if (totals[i] < 0 || totals[i] > INT32_MAX) {
            return OPP_STATUS_BAD_PARAM_TOTAL;
        }
    }
    const int32_t maxs[2] = {d->max_seqlen_q, d->max_seqlen_kv};
    for (int i = 0; i < 2; ++i) {
        if (!oracle_max_seqlen_ok(maxs[i], totals[i], d->batch)) {
            return OPP_STATUS_BAD_PARAM_MAX_SEQLEN;
        }
    }
    const __int128 hq = d->num_heads, hkv = d->kv_num_heads == 0 ? hq : d->kv_num_heads;
    const __int128 dd = d->head_size, dv = d->v_head_size == 0 ? dd : d->v_head_size;
    const __int128 es = d->q_dtype == OPP_DTYPE_F32 ? 4 : 2;
    const int64_t strides[4] = {d->q_row_stride, d->k_row_stride, d->v_row_stride,
                                d->out_row_stride};
    const __int128 widths[4] = {hq * dd, hkv * dd, hkv * dv, hq * dv};
    const int64_t rows[4] = {d->total_q, d->total_kv, d->total_kv, d->total_q};
    for (int i = 0; i < 4; ++i) {
        if (strides[i] < 0 || (strides[i] > 0 && strides[i] < widths[i])) {
            return OPP_STATUS_BAD_PARAM_STRIDE;
        }
        const __int128 step = strides[i] == 0 ? widths[i] : strides[i];
        const __int128 extent = rows[i] <= 1 ? widths[i] : (rows[i] - 1) * step + widths[i];
        if (extent * es > INT64_MAX) {
            return OPP_STATUS_BAD_PARAM_STRIDE;
        }
    }
    return OPP_STATUS_SUCCESS;
}

static fuzz_outcome_t desc_check(const opp_attention_desc_t *d) {
    return fuzz_outcome(opp_attention_desc_check(d), "opp_attention_desc_check");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t sel = 0;
    fuzz_take(&sel, 1, &data, &size);
    opp_attention_desc_t d;
    fuzz_take(&d, sizeof d, &data, &size);
    const size_t sizes[6] = {sizeof d,
                             OPP_ATTENTION_DESC_MIN_SIZE,
                             offsetof(opp_attention_desc_t, softcap),
                             offsetof(opp_attention_desc_t, q_row_stride),
                             offsetof(opp_attention_desc_t, algo),
                             sizeof d};
    if ((sel & 7) < 6) {
        d.struct_size = sizes[sel & 7];
    }
    const size_t s = d.struct_size;
    const int plausible = s % 8 == 0 && s >= OPP_ATTENTION_DESC_MIN_SIZE && s <= sizeof d;

    const opp_status_t claim = opp_attention_claim_check(&d);
    fuzz_check_result(claim, "opp_attention_claim_check");
    const fuzz_outcome_t full = desc_check(&d);
    if (!plausible) {
        const opp_status_t want = s % 8 == 0 && s > sizeof d && s <= 4096
                                      ? OPP_STATUS_NOT_SUPPORTED_VERSION
                                      : OPP_STATUS_BAD_PARAM_NOT_INITIALISED;
        FUZZ_REQUIRE(claim == want && full.st == want, "struct_size %zu: claim %s, desc %s", s,
                     opp_status_name(claim), opp_status_name(full.st));
        FUZZ_REQUIRE(strstr(full.msg, "opp_attention_desc_init") != NULL, "message: %s", full.msg);
        return 0;
    }
    /* the descriptor as the library must read it: defaults past struct_size */
    opp_attention_desc_t eff;
    opp_attention_desc_init(&eff);
    memcpy(&eff, &d, s);
    eff.struct_size = sizeof eff;
    if (s < sizeof d) {
        const fuzz_outcome_t e = desc_check(&eff);
        FUZZ_REQUIRE(e.st == full.st && strcmp(e.msg, full.msg) == 0,
                     "struct_size %zu: %s \"%s\" but the defaulted full-size desc: %s \"%s\"", s,
                     opp_status_name(full.st), full.msg, opp_status_name(e.st), e.msg);
    }

    /* claim-time fields: the independent oracle */
    const oracle_claim_t c = ORACLE_CLAIM_OF(&eff);
    const opp_status_t want_claim = oracle_claim_status(&c);
    if (want_claim != OPP_STATUS_SUCCESS) {
        FUZZ_REQUIRE(claim == want_claim, "claim_check %s, oracle %s", opp_status_name(claim),
                     opp_status_name(want_claim));
    } else {
        FUZZ_REQUIRE(claim == OPP_STATUS_SUCCESS || oracle_is_unsupported(claim),
                     "valid claim fields, claim_check %s", opp_status_name(claim));
    }
    if (claim != OPP_STATUS_SUCCESS) {
        FUZZ_REQUIRE(full.st == claim, "claim_check %s but desc_check %s", opp_status_name(claim),
                     opp_status_name(full.st));
    } else {
        const opp_status_t want_shape = oracle_shape(&eff);
        if (want_shape != OPP_STATUS_SUCCESS) {
            FUZZ_REQUIRE(full.st == want_shape, "desc_check %s, oracle %s",
                         opp_status_name(full.st), opp_status_name(want_shape));
        } else {
            FUZZ_REQUIRE(full.st == OPP_STATUS_SUCCESS || oracle_is_unsupported(full.st),
                         "valid shape, desc_check %s", opp_status_name(full.st));
        }
    }

    /* the kernel query: the descriptor's status first, then a kernel or a 2xxx reason */
    static const int32_t arches[4] = {80, 86, 89, 90};
    for (int i = 0; i < 4; ++i) {
        const char *name = "stale";
        const opp_status_t q = opp_attention_kernel_query(&d, arches[i], &name);
        fuzz_check_result(q, "opp_attention_kernel_query");
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
