/*
 * hopper_maps.cuh - TMA tensor maps of the library's 16-bit tensors, on the
 * host: the driver's cuTensorMapEncodeTiled looked up once through the
 * runtime (no libcuda link), the map of a tensor as [nb][rows][heads][cols]
 * with a box of 64 columns (128-byte swizzle), and whether TMA can address
 * a tensor at all. Encoding does no stream work, so a launch that encodes
 * its maps per call stays graph-capturable. Used by the Hopper kernel's
 * launcher (kernels/hopper_launch.cuh), the TMA split kernel
 * (kernels/hopper_split.cuh) and bench/read_ceiling_gpu.cu.
 */
#ifndef OPP_KERNELS_HOPPER_MAPS_CUH
#define OPP_KERNELS_HOPPER_MAPS_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernel_list.h"
#include "lib/internal/check.h"
#include "lib/internal/problem.h"

typedef CUresult (*hop_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                  const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* cuTensorMapEncodeTiled from the driver (through the runtime: no libcuda
 * link), looked up once. */
static inline opp_status_t hop_encoder(hop_encode_fn *fn) {
    static hop_encode_fn cached;
    hop_encode_fn f = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        void *p = NULL;
        OPP_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                      cudaEnableDefault, &q));
        OPP_RETURN_IF(q != cudaDriverEntryPointSuccess || p == NULL, OPP_STATUS_CUDA_ERROR,
                      "the CUDA driver has no cuTensorMapEncodeTiled (query result %d)", (int)q);
        f = (hop_encode_fn)p;
        __atomic_store_n(&cached, f, __ATOMIC_RELEASE);
    }
    *fn = f;
    return OPP_STATUS_SUCCESS;
}

/* The map of tensor t viewed as [nb][rows][heads][cols] (16-bit elements,
 * element strides t.batch / t.row / t.head), box {64 columns, box_heads,
 * box_rows, 1}, 128-byte swizzle, zeros out of bounds. A tensor with no
 * element (rows == 0 or no pointer) is never loaded: its map stays zero. */
static inline opp_status_t hop_map(hop_encode_fn enc, CUtensorMap *m, const char *name,
                                   const opp__tensor_t *t, int dt, int64_t cols, int64_t heads,
                                   int64_t rows, int64_t nb, uint32_t box_heads,
                                   uint32_t box_rows) {
    memset(m, 0, sizeof(*m));
    if (t->ptr == NULL || rows <= 0 || heads <= 0 || cols <= 0 || nb <= 0) {
        return OPP_STATUS_SUCCESS;
    }
    const cuuint64_t dims[4] = {(cuuint64_t)cols, (cuuint64_t)heads, (cuuint64_t)rows,
                                (cuuint64_t)nb};
    const int64_t bstride = nb > 1 ? t->batch : t->row;
    const cuuint64_t strides[3] = {(cuuint64_t)t->head * 2, (cuuint64_t)t->row * 2,
                                   (cuuint64_t)bstride * 2};
    const cuuint32_t box[4] = {64, box_heads, box_rows, 1};
    const cuuint32_t estr[4] = {1, 1, 1, 1};
    const CUresult r = enc(m,
                           dt == OPP_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                           4, (void *)t->ptr, dims, strides, box, estr,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    OPP_RETURN_IF(r != CUDA_SUCCESS, OPP_STATUS_CUDA_ERROR,
                  "cuTensorMapEncodeTiled failed (%d) for %s: [%lld][%lld][%lld][%lld], strides "
                  "(elements) batch %lld, row %lld, head %lld",
                  (int)r, name, (long long)nb, (long long)rows, (long long)heads, (long long)cols,
                  (long long)t->batch, (long long)t->row, (long long)t->head);
    return OPP_STATUS_SUCCESS;
}

/* Whether TMA can address tensor t (16-bit elements): a 16-byte aligned
 * pointer, strides of 16-byte multiples below 2^40 bytes
 * (OPP__TMA_STRIDE_BYTES_LIMIT). */
static inline bool hop_tma_ok(const opp__tensor_t *t, int64_t nb) {
    const int64_t strides[3] = {t->head, t->row, nb > 1 ? t->batch : t->row};
    if (((uintptr_t)t->ptr & 15u) != 0) {
        return false;
    }
    for (int i = 0; i < 3; ++i) {
        if (strides[i] <= 0 || (strides[i] * 2) % 16 != 0 ||
            strides[i] * 2 >= OPP__TMA_STRIDE_BYTES_LIMIT) {
            return false;
        }
    }
    return true;
}

#endif /* OPP_KERNELS_HOPPER_MAPS_CUH */
