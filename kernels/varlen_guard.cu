/*
 * varlen_guard.cu - the device-side guard of every run: validates the
 * device arrays that describe the batch against the host descriptor,
 * rewrites the guard record (kernels.h) at the start of the workspace, and
 * writes the output elements no attention kernel will write; plus
 * opp__guard_record_read(), the host read-back.
 *
 *   cu_seqlens_q, cu_seqlens_kv : device int32 [B + 1]   (packed layout)
 *   nonpad                      : device int64 [B]       (padded layout)
 *   record                      : device, OPP__GUARD_RECORD_BYTES
 *   out [total_q, Hq, Dv] (packed) or y [B, Hq, S_q, Dv] / [B, S_q, Hq*Dv]
 *   (padded), any strides; lse [Hq, total_q] or [B, Hq, S_q] (optional)
 *
 * Checks, in the order of the host check (lib/varlen_check.c), q before kv:
 *   [0] == 0; [b] >= [b-1] for b = 1..B; [B] <= total; [b+1] - [b] <=
 *   max_seqlen for b = 0..B-1; and 0 <= nonpad[b] <= S_kv.
 * Every finding gets a key (array, check, index) ordered like that list,
 * each block takes the smallest (atomicMin), so the record names the same
 * first failure the host check would.
 * Then every block (each has scanned the arrays itself, so no grid-wide
 * barrier is needed) writes its share of:
 *   - after a finding: quiet NaN into every out element within the extents
 *     (row-stride gaps untouched) and into every lse element, so the run
 *     fails loudly even for a caller that never reads the status back;
 *   - without one, packed layout: zeros into out rows cu_seqlens_q[B] ..
 *     total_q - 1 and -inf into their lse (rows past the batch, like a row
 *     that sees no key: CUDA-graph replay with a smaller batch).
 * Block 0 writes the record. The attention kernel, launched after this one
 * on the same stream, reads record.code first and touches nothing when it
 * is not SUCCESS, and otherwise writes only rows below cu_seqlens_q[B]: the
 * two kernels never write the same element, and stream order separates
 * them anyway. On sm_90 every block first allows its programmatic
 * dependents to launch (the flash kernel's main launch is one): they may
 * start while this grid runs, and wait for its end and its memory
 * (griddepcontrol.wait) before their first read.
 * Grid: min(256, ceil(total_q * Hq / 32)) blocks (at least 1) of 1024
 * threads; one warp per (row, head) line of out.
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
    /* the outputs (see the file comment): element (row r, head h, column c)
     * of out at r * out.row + h * out.head + c (packed) or
     * (r / S_q) * out.batch + (r % S_q) * out.row + h * out.head + c (padded) */
    void *out;
    opp__tensor_t out_strides; /* ptr unused */
    int32_t hq, dv, esize;     /* esize: 4 or 2 bytes */
    uint32_t nan_bits;         /* quiet NaN of out's dtype */
    int32_t q_seqlen;          /* padded: S_q */
    float *lse;                /* or NULL */
    int64_t lse_head, lse_batch;
} opp__guard_args_t;

#define GUARD_THREADS    1024
#define GUARD_WARPS      (GUARD_THREADS / 32)
#define GUARD_MAX_BLOCKS 256
#define GUARD_NONE       0xFFFFFFFFFFFFFFFFull

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
    if (tid == 0 && cu[batch] > total) {
        best = min(best, guard_key(array, GUARD_TOTAL, batch));
    }
    for (int64_t b = tid; b < batch; b += GUARD_THREADS) {
        if ((int64_t)cu[b + 1] - cu[b] > max_seqlen) {
            best = min(best, guard_key(array, GUARD_LENGTH, b));
        }
    }
    return best;
}

/* x / d for 0 <= x, 0 < d; in 32 bits when both fit (the common case). */
__device__ static inline int64_t guard_div(int64_t x, int64_t d) {
    if ((((uint64_t)x | (uint64_t)d) >> 32) == 0) {
        return (int64_t)((uint32_t)x / (uint32_t)d);
    }
    return x / d;
}

/* Writes `bits` (its low esize bytes) to every out element of rows
 * r0 .. r1-1, all heads, columns 0 .. Dv-1, and nothing else. Line
 * l = (r - r0) * Hq + h is taken by warp l of the grid-stride walk; its
 * lanes stride over the columns. */
__device__ static void guard_fill_out(const opp__guard_args_t &a, int64_t r0, int64_t r1,
                                      uint32_t bits) {
    const int64_t lines = (r1 - r0) * a.hq;
    const int lane = threadIdx.x & 31;
    const int64_t step = (int64_t)gridDim.x * GUARD_WARPS;
    for (int64_t l = (int64_t)blockIdx.x * GUARD_WARPS + threadIdx.x / 32; l < lines; l += step) {
        const int64_t dr = guard_div(l, a.hq);
        const int64_t r = r0 + dr, h = l - dr * a.hq;
        int64_t o = h * a.out_strides.head;
        if (a.nonpad != NULL) { /* padded: r = b * S_q + i (S_q > 0 since lines > 0) */
            const int64_t b = guard_div(r, a.q_seqlen);
            o += b * a.out_strides.batch + (r - b * a.q_seqlen) * a.out_strides.row;
        } else {
            o += r * a.out_strides.row;
        }
        for (int c = lane; c < a.dv; c += 32) {
            if (a.esize == 4) {
                ((uint32_t *)a.out)[o + c] = bits;
            } else {
                ((uint16_t *)a.out)[o + c] = (uint16_t)bits;
            }
        }
    }
}

/* Writes v to the lse element of every (row r, head h), r in r0 .. r1-1:
 * lse[h * lse_head + r] (packed) or lse[b * lse_batch + h * lse_head + i]
 * with (b, i) = (r / S_q, r % S_q) (padded). Consecutive threads take
 * consecutive rows of one head. */
__device__ static void guard_fill_lse(const opp__guard_args_t &a, int64_t r0, int64_t r1, float v) {
    const int64_t n = r1 - r0, count = n * a.hq;
    const int64_t step = (int64_t)gridDim.x * GUARD_THREADS;
    for (int64_t e = (int64_t)blockIdx.x * GUARD_THREADS + threadIdx.x; e < count; e += step) {
        const int64_t h = guard_div(e, n);
        const int64_t r = r0 + (e - h * n);
        int64_t o = h * a.lse_head;
        if (a.nonpad != NULL) {
            const int64_t b = guard_div(r, a.q_seqlen);
            o += b * a.lse_batch + (r - b * a.q_seqlen);
        } else {
            o += r;
        }
        a.lse[o] = v;
    }
}

/* Every block checks the arrays and fills its share (file comment); block
 * 0 writes the record. args by value; rec: the workspace's first 256 bytes. */
static __global__ void __launch_bounds__(GUARD_THREADS)
    varlen_guard_kernel(const opp__guard_args_t a, opp__guard_record_t *rec) {
#if __CUDA_ARCH__ >= 900
    /* the flash kernel after this one is a programmatic dependent: its
     * blocks may start now, and wait (griddepcontrol.wait) for this grid's
     * end and its memory before they read anything */
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
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
    const unsigned long long found = first;
    if (found != GUARD_NONE) {
        guard_fill_out(a, 0, a.total_q, a.nan_bits);
        if (a.lse != NULL) {
            guard_fill_lse(a, 0, a.total_q, __int_as_float(0x7FC00000));
        }
    } else if (a.cu_seqlens_q != NULL) {
        const int64_t end = a.cu_seqlens_q[a.batch]; /* checked: 0 <= end <= total_q */
        if (end < a.total_q) {
            guard_fill_out(a, end, a.total_q, 0u);
            if (a.lse != NULL) {
                guard_fill_lse(a, end, a.total_q, __int_as_float(0xFF800000)); /* -inf */
            }
        }
    }
    if (blockIdx.x != 0 || threadIdx.x != 0) {
        return;
    }
    opp__guard_record_t r;
    memset(&r, 0, sizeof(r));
    r.magic = OPP__GUARD_MAGIC;
    r.code = OPP_STATUS_SUCCESS;
    if (found != GUARD_NONE) {
        const int array = (int)(found >> 42), kind = (int)((found >> 40) & 3);
        const int64_t b = (int64_t)(found & 0xFFFFFFFFFFull);
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

/* The quiet NaN bits of an output dtype. */
static uint32_t guard_nan_bits(opp_dtype_t dtype) {
    if (dtype == OPP_DTYPE_F32) {
        return 0x7FC00000u;
    }
    return dtype == OPP_DTYPE_F16 ? 0x7E00u : 0x7FC0u;
}

/* min(GUARD_MAX_BLOCKS, ceil(total_q * Hq / GUARD_WARPS)) blocks, at least
 * 1, of GUARD_THREADS on stream; see kernels.h and the file comment. */
extern "C" opp_status_t opp__varlen_guard_launch(const opp__problem_t *p, void *record,
                                                 struct CUstream_st *stream) {
    opp__guard_args_t g;
    memset(&g, 0, sizeof(g));
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
    g.out = (void *)p->out.ptr;
    g.out_strides = p->out;
    g.hq = p->a.hq;
    g.dv = p->a.dv;
    g.esize = (int32_t)opp_dtype_size(p->a.dtype);
    g.nan_bits = guard_nan_bits(p->a.dtype);
    g.q_seqlen = p->q_seqlen;
    g.lse = p->lse;
    g.lse_head = p->lse_head;
    g.lse_batch = p->lse_batch;
    const int64_t lines = p->total_q * p->a.hq; /* <= 2^31 * 2^31 */
    const int64_t want = (lines + GUARD_WARPS - 1) / GUARD_WARPS;
    const unsigned blocks =
        want < 1 ? 1u : (want > GUARD_MAX_BLOCKS ? GUARD_MAX_BLOCKS : (unsigned)want);
    varlen_guard_kernel<<<blocks, GUARD_THREADS, 0, (cudaStream_t)stream>>>(
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
