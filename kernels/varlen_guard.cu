/*
 * varlen_guard.cu - the device-side guard of every run: validates the
 * device arrays that describe the batch against the host descriptor and
 * rewrites the guard record (kernels.h) at the start of the workspace;
 * plus opp__guard_record_read(), the host read-back.
 *
 *   cu_seqlens_q, cu_seqlens_kv : device int32 [B + 1]   (packed layout)
 *   nonpad                      : device int64 [B]       (padded layout)
 *   record                      : device, OPP__GUARD_RECORD_BYTES
 *
 * Checks, in the order of the host check (lib/varlen_check.c), q before kv:
 *   [0] == 0; [b] >= [b-1] for b = 1..B; [B] == total; [b+1] - [b] <=
 *   max_seqlen for b = 0..B-1; and 0 <= nonpad[b] <= S_kv.
 * Every finding gets a key (array, check, index) ordered like that list,
 * the block takes the smallest (atomicMin), so the record names the same
 * first failure the host check would. One block of 1024 threads strides
 * over b; the attention kernel, launched after it on the same stream,
 * reads record.code first and touches nothing when it is not SUCCESS.
 * Build: nvcc_object(//kernels:exact).
 */
#include <cuda_runtime.h>

#include "kernels/kernels.h"
#include "lib/internal/check.h"

static_assert(sizeof(opp__guard_record_t) == OPP__GUARD_RECORD_BYTES, "record is 256 bytes");

// --- kernels

/* What the guard checks (from the problem). Exactly one of (cu_seqlens_q
 * and cu_seqlens_kv) or nonpad is given. */
typedef struct opp__guard_args {
    const int32_t *cu_seqlens_q;  /* device [B + 1] or NULL */
    const int32_t *cu_seqlens_kv; /* device [B + 1] or NULL */
    const int64_t *nonpad;        /* device [B] or NULL */
    int32_t batch;                /* B >= 1 */
    int32_t max_seqlen_q, max_seqlen_kv;
    int32_t kv_seqlen; /* S_kv: upper bound of nonpad */
    int64_t total_q, total_kv;
} opp__guard_args_t;

#define GUARD_THREADS 1024
#define GUARD_NONE    0xFFFFFFFFFFFFFFFFull

/* Check kinds in the host order. */
enum { GUARD_START = 0, GUARD_DECREASING = 1, GUARD_TOTAL = 2, GUARD_LENGTH = 3 };

__device__ static inline unsigned long long guard_key(int array, int kind, int64_t index) {
    return ((unsigned long long)(array * 4 + kind) << 40) | (unsigned long long)index;
}

__device__ static unsigned long long guard_scan_cu(const int32_t *cu, int array, int32_t batch,
                                                   int64_t total, int32_t max_seqlen) {
    unsigned long long best = GUARD_NONE;
    const int tid = threadIdx.x;
    if (tid == 0 && cu[0] != 0) {
        best = min(best, guard_key(array, GUARD_START, 0));
    }
    for (int64_t b = 1 + tid; b <= batch; b += GUARD_THREADS) {
        if (cu[b] < cu[b - 1]) {
            best = min(best, guard_key(array, GUARD_DECREASING, b));
        }
    }
    if (tid == 0 && cu[batch] != total) {
        best = min(best, guard_key(array, GUARD_TOTAL, batch));
    }
    for (int64_t b = tid; b < batch; b += GUARD_THREADS) {
        if ((int64_t)cu[b + 1] - cu[b] > max_seqlen) {
            best = min(best, guard_key(array, GUARD_LENGTH, b));
        }
    }
    return best;
}

/* One block; args by value; rec: the workspace's first 256 bytes. */
static __global__ void __launch_bounds__(GUARD_THREADS)
    varlen_guard_kernel(const opp__guard_args_t a, opp__guard_record_t *rec) {
    __shared__ unsigned long long first;
    if (threadIdx.x == 0) {
        first = GUARD_NONE;
    }
    __syncthreads();
    unsigned long long mine = GUARD_NONE;
    if (a.cu_seqlens_q != NULL) {
        mine = min(mine, guard_scan_cu(a.cu_seqlens_q, OPP__GUARD_CU_SEQLENS_Q, a.batch, a.total_q,
                                       a.max_seqlen_q));
        mine = min(mine, guard_scan_cu(a.cu_seqlens_kv, OPP__GUARD_CU_SEQLENS_KV, a.batch,
                                       a.total_kv, a.max_seqlen_kv));
    }
    if (a.nonpad != NULL) {
        for (int64_t b = threadIdx.x; b < a.batch; b += GUARD_THREADS) {
            if (a.nonpad[b] < 0 || a.nonpad[b] > a.kv_seqlen) {
                mine = min(mine, guard_key(OPP__GUARD_NONPAD, GUARD_START, b));
            }
        }
    }
    if (mine != GUARD_NONE) {
        atomicMin(&first, mine);
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    opp__guard_record_t r;
    memset(&r, 0, sizeof(r));
    r.magic = OPP__GUARD_MAGIC;
    r.code = OPP_STATUS_SUCCESS;
    if (first != GUARD_NONE) {
        const int array = (int)(first >> 42), kind = (int)((first >> 40) & 3);
        const int64_t b = (int64_t)(first & 0xFFFFFFFFFFull);
        const int32_t *cu = array == OPP__GUARD_CU_SEQLENS_Q ? a.cu_seqlens_q : a.cu_seqlens_kv;
        r.array = array;
        r.index = b;
        if (array == OPP__GUARD_NONPAD) {
            r.code = OPP_STATUS_BAD_PARAM_NONPAD;
            r.value = a.nonpad[b];
            r.limit = a.kv_seqlen;
        } else if (kind == GUARD_START) {
            r.code = OPP_STATUS_BAD_PARAM_SEQLENS_START;
            r.value = cu[0];
        } else if (kind == GUARD_DECREASING) {
            r.code = OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING;
            r.value = cu[b];
            r.other = cu[b - 1];
        } else if (kind == GUARD_TOTAL) {
            r.code = OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL;
            r.value = cu[b];
            r.limit = array == OPP__GUARD_CU_SEQLENS_Q ? a.total_q : a.total_kv;
        } else {
            r.code = OPP_STATUS_BAD_PARAM_MAX_SEQLEN;
            r.value = (int64_t)cu[b + 1] - cu[b];
            r.limit = array == OPP__GUARD_CU_SEQLENS_Q ? a.max_seqlen_q : a.max_seqlen_kv;
        }
    }
    *rec = r;
}

// --- launchers

/* One block of GUARD_THREADS on stream; see kernels.h. */
extern "C" opp_status_t opp__varlen_guard_launch(const opp__problem_t *p, void *record,
                                                 struct CUstream_st *stream) {
    opp__guard_args_t g;
    const bool packed = p->layout == OPP__LAYOUT_PACKED;
    g.cu_seqlens_q = packed ? p->cu_seqlens_q : NULL;
    g.cu_seqlens_kv = packed ? p->cu_seqlens_kv : NULL;
    g.nonpad = packed ? NULL : p->nonpad;
    g.batch = p->batch;
    g.max_seqlen_q = p->max_seqlen_q;
    g.max_seqlen_kv = p->max_seqlen_kv;
    g.kv_seqlen = p->kv_seqlen;
    g.total_q = p->total_q;
    g.total_kv = p->total_kv;
    varlen_guard_kernel<<<1, GUARD_THREADS, 0, (cudaStream_t)stream>>>(
        g, (opp__guard_record_t *)record);
    OPP_CUDA_TRY(cudaGetLastError());
    return OPP_STATUS_SUCCESS;
}

extern "C" opp_status_t opp__guard_record_read(const void *record, opp__guard_record_t *out,
                                               struct CUstream_st *stream) {
    OPP_CUDA_TRY(
        cudaMemcpyAsync(out, record, sizeof(*out), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    OPP_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
    return OPP_STATUS_SUCCESS;
}
