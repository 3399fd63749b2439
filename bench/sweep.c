/*
 * sweep.c - the synthetic sweep of oppbench --sweep as a workload set (see
 * workloads.h): FlashAttention's benchmark shapes (16384 tokens, hidden
 * size 2048, batch = 16384 / L), so bench/fa2_sweep.py times FA2 on
 * exactly these cases. Tested by tests/bench_workloads_test.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads.h"

static const int32_t sweep_head_sizes[] = {64, 128, 256};
static const int32_t sweep_lengths[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

int opp_sweep_workloads(opp_workload_set_t *set) {
    memset(set, 0, sizeof(*set));
    const int n = COUNT(sweep_head_sizes) * 2 * COUNT(sweep_lengths);
    set->items = calloc((size_t)n, sizeof(opp_workload_t));
    if (set->items == NULL) {
        return -1;
    }
    for (int d = 0; d < COUNT(sweep_head_sizes); ++d) {
        for (int causal = 0; causal < 2; ++causal) {
            for (int l = 0; l < COUNT(sweep_lengths); ++l) {
                opp_workload_t *w = &set->items[set->count++];
                const int32_t len = sweep_lengths[l];
                w->dtype = OPP_DTYPE_BF16;
                w->head_size = sweep_head_sizes[d];
                w->heads = w->kv_heads = OPP_SWEEP_HIDDEN / w->head_size;
                w->causal = causal;
                w->batch = OPP_SWEEP_TOKENS / len;
                snprintf(w->name, sizeof w->name, "sweep_d%d_%s_L%d", (int)w->head_size,
                         causal ? "causal" : "noncausal", (int)len);
                w->lq = malloc(sizeof(int32_t) * (size_t)w->batch);
                w->lkv = malloc(sizeof(int32_t) * (size_t)w->batch);
                if (w->lq == NULL || w->lkv == NULL) {
                    opp_workloads_free(set);
                    return -1;
                }
                for (int32_t b = 0; b < w->batch; ++b) {
                    w->lq[b] = w->lkv[b] = len;
                }
            }
        }
    }
    return 0;
}
