/*
 * decode_sweep.c - the decode sweep of oppbench --decode-sweep as a workload
 * set (see workloads.h): L_q = 1 against L_kv = 1k .. 128k keys, batch 1 ..
 * 256, GQA group 1 / 4 / 8, K + V capped at OPP_DECODE_MAX_KV_BYTES, so
 * bench/fa2_sweep.py --decode times FA2 on exactly these cases. Also the
 * byte count behind its GB/s. Tested by tests/bench_workloads_test.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads.h"

static const int32_t decode_groups[] = {1, 4, 8};
static const int32_t decode_batches[] = {1, 8, 64, 256};
static const int32_t decode_lengths[] = {1024, 4096, 16384, 65536, 131072};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

void opp_decode_sweep_cases(opp_decode_case_t cases[OPP_DECODE_COMBINATIONS]) {
    int n = 0;
    for (int g = 0; g < COUNT(decode_groups); ++g) {
        for (int b = 0; b < COUNT(decode_batches); ++b) {
            for (int l = 0; l < COUNT(decode_lengths); ++l) {
                opp_decode_case_t *c = &cases[n++];
                c->group = decode_groups[g];
                c->batch = decode_batches[b];
                c->lkv = decode_lengths[l];
                c->kv_bytes = (int64_t)c->batch * c->lkv * OPP_DECODE_KV_HEADS *
                              (2 * OPP_DECODE_HEAD_SIZE) * 2;
                c->skipped = c->kv_bytes > OPP_DECODE_MAX_KV_BYTES;
                snprintf(c->name, sizeof c->name, "decode_g%d_b%d_kv%d", (int)c->group,
                         (int)c->batch, (int)c->lkv);
            }
        }
    }
}

int opp_decode_sweep_workloads(opp_workload_set_t *set) {
    memset(set, 0, sizeof(*set));
    opp_decode_case_t cases[OPP_DECODE_COMBINATIONS];
    opp_decode_sweep_cases(cases);
    set->items = calloc(OPP_DECODE_COMBINATIONS, sizeof(opp_workload_t));
    if (set->items == NULL) {
        return -1;
    }
    for (int i = 0; i < OPP_DECODE_COMBINATIONS; ++i) {
        const opp_decode_case_t *c = &cases[i];
        if (c->skipped) {
            continue;
        }
        opp_workload_t *w = &set->items[set->count++];
        memcpy(w->name, c->name, sizeof w->name); /* same size, NUL-terminated */
        w->dtype = OPP_DTYPE_BF16;
        w->head_size = OPP_DECODE_HEAD_SIZE;
        w->kv_heads = OPP_DECODE_KV_HEADS;
        w->heads = OPP_DECODE_KV_HEADS * c->group;
        w->batch = c->batch;
        w->lq = malloc(sizeof(int32_t) * (size_t)w->batch);
        w->lkv = malloc(sizeof(int32_t) * (size_t)w->batch);
        if (w->lq == NULL || w->lkv == NULL) {
            opp_workloads_free(set);
            return -1;
        }
        for (int32_t b = 0; b < w->batch; ++b) {
            w->lq[b] = 1;
            w->lkv[b] = c->lkv;
        }
    }
    return 0;
}

double opp_workload_min_bytes(const opp_workload_t *w) {
    int64_t tq, tkv;
    opp_workload_tokens(w, &tq, &tkv);
    const double elem = (double)opp_dtype_size(w->dtype);
    return ((double)tkv * w->kv_heads + (double)tq * w->heads) * 2.0 * w->head_size * elem;
}
