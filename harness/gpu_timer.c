/*
 * gpu_timer.c - CUDA-event timing of one call (see gpu_timer.h).
 */
#include "harness/gpu_timer.h"

#include "harness/gpu_status.h"

void opp_hgpu_timer_init(opp_hgpu_timer_t *t) {
    OPP_HGPU_CHECK(cudaEventCreate(&t->start));
    OPP_HGPU_CHECK(cudaEventCreate(&t->stop));
}

void opp_hgpu_timer_destroy(opp_hgpu_timer_t *t) {
    (void)cudaEventDestroy(t->start);
    (void)cudaEventDestroy(t->stop);
}

opp_status_t opp_hgpu_timer_run(opp_hgpu_timer_t *t, opp_hgpu_run_fn fn, void *ctx,
                                cudaStream_t stream, float *ms) {
    OPP_HGPU_CHECK(cudaEventRecord(t->start, stream));
    const opp_status_t st = fn(ctx);
    OPP_HGPU_CHECK(cudaEventRecord(t->stop, stream));
    OPP_HGPU_CHECK(cudaEventSynchronize(t->stop));
    *ms = 0.0f;
    OPP_HGPU_CHECK(cudaEventElapsedTime(ms, t->start, t->stop));
    return st;
}

double opp_hgpu_time_after_warmup(opp_hgpu_run_fn fn, void *ctx, cudaStream_t stream,
                                  opp_status_t *st) {
    opp_hgpu_timer_t t;
    opp_hgpu_timer_init(&t);
    float ms = 0.0f;
    *st = fn(ctx);
    if (*st == OPP_STATUS_SUCCESS) {
        *st = opp_hgpu_timer_run(&t, fn, ctx, stream, &ms);
    } else {
        OPP_HGPU_CHECK(cudaStreamSynchronize(stream));
    }
    opp_hgpu_timer_destroy(&t);
    return *st == OPP_STATUS_SUCCESS ? (double)ms : 0.0;
}
