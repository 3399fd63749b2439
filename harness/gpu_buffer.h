/*
 * gpu_buffer.h - device buffers for the harness: allocation, copies,
 * uploads of host buffers, poisoned allocations, and a workspace grown on
 * demand. Host C against the CUDA runtime API (synchronous calls on the
 * legacy default stream); shared by the tests, tools/oppcheck and
 * bench/oppbench.
 *
 * Sizes are in BYTES except where a name says _elems. Allocations are
 * cudaMalloc'ed (256-byte aligned) and at least 1 byte, so a 0-byte
 * tensor still has a valid, distinct pointer. A failed CUDA call goes to
 * the process's handler (harness/gpu_status.h) and does not return.
 *
 * Poison: an output buffer is filled before a run so that an element no
 * one writes can never match a finite reference value:
 *   OPP_HGPU_POISON_ONES    every byte 0xFF (cudaMemset): a NaN in f32,
 *                           f16 and bf16 alike
 *   OPP_HGPU_POISON_NAN     the dtype's quiet NaN in every element
 *   OPP_HGPU_POISON_FINITE  large finite values of alternating sign
 * (the last two are harness/logical_batch.h's padding poisons, filled on
 * the host and uploaded).
 */
#ifndef OPP_HARNESS_GPU_BUFFER_H
#define OPP_HARNESS_GPU_BUFFER_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "lib/oppacked.h"

typedef enum opp_hgpu_poison {
    OPP_HGPU_POISON_ONES = 0,
    OPP_HGPU_POISON_NAN = 1,
    OPP_HGPU_POISON_FINITE = 2,
} opp_hgpu_poison_t;

/* Device allocation of bytes (at least 1). */
void *opp_hgpu_alloc(size_t bytes);

/* cudaFree(ptr) (NULL: nothing). Reports nothing: a tool frees after a
 * failed run and must still print its results.
 * @return : cudaFree's error (cudaSuccess for NULL). */
cudaError_t opp_hgpu_free(const void *ptr);

/* opp_hgpu_free() of each of n pointers (NULL entries allowed).
 * @return : the first error. */
cudaError_t opp_hgpu_free_all(const void *const *ptrs, size_t n);

/* Synchronous copies and fills of bytes (0 bytes: nothing happens). */
void opp_hgpu_h2d(void *dst, const void *src, size_t bytes);
void opp_hgpu_d2h(void *dst, const void *src, size_t bytes);
void opp_hgpu_fill(void *dst, int byte, size_t bytes);

/* A device copy of bytes of host src (src may be NULL when bytes is 0). */
void *opp_hgpu_upload(const void *src, size_t bytes);

/* Fills elems elements of dtype at device dst with poison. */
void opp_hgpu_poison(void *dst, size_t elems, opp_dtype_t dtype, opp_hgpu_poison_t poison);

/* A device buffer of elems elements of dtype, poisoned. */
void *opp_hgpu_alloc_poisoned(size_t elems, opp_dtype_t dtype, opp_hgpu_poison_t poison);

/* A device workspace kept between runs; zero-initialise it. */
typedef struct opp_hgpu_ws {
    void *ptr;
    size_t bytes;
} opp_hgpu_ws_t;

/* Makes ws at least bytes long (reallocated, contents lost, when it is
 * shorter or not allocated yet). @return : ws->ptr. */
void *opp_hgpu_ws_reserve(opp_hgpu_ws_t *ws, size_t bytes);

/* Frees the workspace (accepts a zeroed one or NULL) and zeroes it;
 * reports nothing, like opp_hgpu_free. @return : cudaFree's error. */
cudaError_t opp_hgpu_ws_free(opp_hgpu_ws_t *ws);

#endif /* OPP_HARNESS_GPU_BUFFER_H */
