/*
 * ptxas_check_fixture.cu - a one-wgmma kernel for //tests:ptxas_check_test
 * (tools/build_defs/nvcc_checked.sh). As written, ptxas keeps the wgmma
 * pipeline; with -DSERIALISE the wgmma sits in a thread-divergent branch,
 * and ptxas serialises it (reported as info C7520, not as a warning).
 * sm_90a only; never linked or run.
 *
 *   out [128] float: each thread's sum of its four accumulators
 */
#include <stdint.h>

__global__ void fixture_kernel(float *out, uint64_t desc_a, uint64_t desc_b, int n) {
    float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#ifdef SERIALISE
    if ((int)threadIdx.x < n) {
#endif
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
                     "{%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                     : "l"(desc_a), "l"(desc_b), "r"(n)
                     : "memory");
#ifdef SERIALISE
    }
#endif
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    out[threadIdx.x] = d0 + d1 + d2 + d3;
}
