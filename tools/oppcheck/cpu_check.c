/*
 * cpu_check.c - the CPU part of oppcheck: the packed reference, then the
 * padded Attention-24 reference on each requested layout (4D, 3D) and
 * poison (large finite, NaN), each compared bit for bit on the valid rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/opp_reference.h"
#include "tools/oppcheck/oppcheck.h"

static size_t out_elems(const opp_lb_t *lb) {
    return (size_t)lb->total_q * (size_t)lb->num_heads * (size_t)lb->v_head_size;
}

int oppcheck_run_cpu(const opp_lb_t *lb, const oppcheck_opts_t *o, oppcheck_table_t *t,
                     void **packed_out) {
    const size_t n = out_elems(lb), es = opp_dtype_size(lb->dtype);
    void *packed = malloc((n + 1) * es);
    void *valid = malloc((n + 1) * es);
    if (packed == NULL || valid == NULL) {
        fprintf(stderr, "oppcheck: out of host memory for %zu output elements\n", n);
        free(packed);
        free(valid);
        return 2;
    }
    opp_attention_desc_t desc;
    opp_lb_packed_desc(lb, &desc);
    oppcheck_row_t *row = oppcheck_table_add(t, "packed reference (CPU, exact)");
    double t0 = oppcheck_now_ms();
    opp_status_t st =
        opp_ref_packed_attention(&desc, lb->cu_q, lb->cu_kv, lb->q, lb->k, lb->v, packed);
    row->ms = oppcheck_now_ms() - t0;
    if (st != OPP_STATUS_SUCCESS) {
        fprintf(stderr, "oppcheck: packed reference failed: %s: %s\n", opp_status_name(st),
                opp_last_error_message());
        free(packed);
        free(valid);
        return 2;
    }
    int rc = 0;
    for (int32_t rank = 4; rank >= 3; --rank) {
        if (!(o->layouts & (rank == 4 ? 1 : 2))) {
            continue;
        }
        for (int p = 0; p < 2; ++p) {
            if (!(o->poisons & (1 << p))) {
                continue;
            }
            opp_lb_padded_t pad;
            if (opp_lb_to_padded(lb, rank, (opp_lb_poison_t)p, &pad) != 0) {
                fprintf(stderr, "oppcheck: out of host memory for the padded tensors\n");
                rc = 2;
                continue;
            }
            char name[96];
            snprintf(name, sizeof(name), "padded Attention-24 ref (CPU, %dD, %s pad) vs packed",
                     (int)rank, p ? "NaN" : "finite");
            row = oppcheck_table_add(t, name);
            opp_ref_attention24_tensors_t ten = opp_lb_padded_tensors(&pad);
            t0 = oppcheck_now_ms();
            st = opp_ref_attention24(&pad.desc, &ten);
            row->ms = oppcheck_now_ms() - t0;
            if (st != OPP_STATUS_SUCCESS) {
                fprintf(stderr, "oppcheck: padded reference failed: %s: %s\n", opp_status_name(st),
                        opp_last_error_message());
                row->ok = 0;
                rc = 2;
            } else {
                opp_lb_padded_valid_rows(lb, &pad, pad.y, valid);
                if (opp_cmp(valid, packed, n, lb->dtype, 1, 0, name, 5, &row->cmp) != 0) {
                    row->ok = 0;
                    rc = rc ? rc : 1;
                }
            }
            opp_lb_padded_free(&pad);
        }
    }
    free(valid);
    *packed_out = packed;
    return rc;
}
