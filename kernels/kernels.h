/*
 * kernels.h - internal launchers of the kernels/ package (extern "C"),
 * called by lib/ (host C). Nothing here is public API.
 *
 * Dims: B = batch, Hq = query heads, Hkv = key/value heads (G = Hq / Hkv),
 * D = head size of Q and K, Dv = head size of V and out, Tq / Tkv = the
 * query / key length of one sequence (L_q, L_kv), total_q / total_kv = the
 * packed token totals.
 *
 * Two layouts share every kernel through element strides (the problem,
 * lib/internal/problem.h): element (sequence b, row i, head h, column d)
 * of a tensor lives at base_b + i * row + h * head + d with
 * base_b = cu_seqlens[b] * row (packed) or b * batch (padded Attention-24,
 * where Tq = S_q and Tkv = nonpad_kv_seqlen[b]).
 *
 * The device guard record (opp__guard_record_t) is the first
 * OPP__GUARD_RECORD_BYTES of the caller's workspace: the guard kernel
 * rewrites it on every run, the attention kernel reads it first and exits
 * when it is bad, and opp_packed_attention_device_status() reads it back.
 */
#ifndef OPP_KERNELS_KERNELS_H
#define OPP_KERNELS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_list.h"
#include "lib/internal/attention_plan.h"
#include "lib/internal/dispatch.h"
#include "lib/internal/problem.h"
#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

// --- device guard

/* Bytes of workspace the guard record occupies (and its alignment). */
#define OPP__GUARD_RECORD_BYTES 256
/* record.magic once a guard kernel has written the record ("OPPG"). */
#define OPP__GUARD_MAGIC 0x4750504Fu

/* Which device array a finding is about. */
typedef enum opp__guard_array {
    OPP__GUARD_CU_SEQLENS_Q = 0,
    OPP__GUARD_CU_SEQLENS_KV = 1,
    OPP__GUARD_NONPAD = 2
} opp__guard_array_t;

/* The record (exactly OPP__GUARD_RECORD_BYTES). code is an opp_status_t:
 *   SUCCESS                  nothing found
 *   BAD_PARAM_SEQLENS_START  array[0] = value != 0
 *   BAD_PARAM_SEQLENS_DECREASING  array[index] = value < array[index-1] = other
 *   BAD_PARAM_SEQLENS_TOTAL  array[index = batch] = value != limit (total)
 *   BAD_PARAM_MAX_SEQLEN     sequence index: length value > limit (max_seqlen)
 *   BAD_PARAM_NONPAD         nonpad_kv_seqlen[index] = value outside 0..limit */
typedef struct opp__guard_record {
    uint32_t magic;
    int32_t code;
    int32_t array; /* opp__guard_array_t */
    int32_t reserved;
    int64_t index;
    int64_t value;
    int64_t other;
    int64_t limit;
    /* the work counter of the persistent FAST kernels (the next item a block
     * claims, kernels/hopper_items.cuh): zero when the guard wrote the
     * record, so each call starts from item 0 (graph replays too) */
    uint64_t work_next;
    uint64_t work_next_wide;  /* ... of the Hopper D 64 pair's wide launch */
    uint64_t work_next_split; /* ... of the TMA split kernel (kernels/hopper_split.cuh) */
    int64_t padding[23];
} opp__guard_record_t;

/*! opp__varlen_guard_launch() :
 * Enqueues the guard kernel on stream: validates the device length arrays
 * of p (cu_seqlens for the packed layout, nonpad_kv_seqlen for the padded
 * one; host-check order: q before kv; start, order, total, then lengths;
 * the first failure wins) and rewrites the whole record at `record`
 * (device, 256-byte aligned, OPP__GUARD_RECORD_BYTES).
 * @return : SUCCESS when enqueued, CUDA_ERROR if the launch failed. */
opp_status_t opp__varlen_guard_launch(const opp__problem_t *p, void *record,
                                      struct CUstream_st *stream);

/*! opp__guard_record_read() :
 * Copies the record at `record` (device) into *out (host) on stream and
 * synchronizes the stream.
 * @return : SUCCESS, or CUDA_ERROR if the copy or the synchronization failed. */
opp_status_t opp__guard_record_read(const void *record, opp__guard_record_t *out,
                                    struct CUstream_st *stream);

// --- attention kernels

/* One launch function per line of kernels/kernel_list.h, defined next to
 * its kernel: opp__launch_<name>(p, row, plan, stream) enqueues that kernel
 * for the bound problem p on stream (the guard has already been enqueued;
 * the kernel reads plan->guard_record first and writes nothing when it is
 * bad). Shapes: see lib/internal/problem.h.
 * @return : SUCCESS when enqueued, CUDA_ERROR if the launch failed. */
typedef opp_status_t (*opp__launch_fn)(const opp__problem_t *p, const opp__kernel_row_t *row,
                                       const opp__plan_t *plan, struct CUstream_st *stream);

#define OPP__LAUNCH_DECL_(name, ...)                                                       \
    opp_status_t opp__launch_##name(const opp__problem_t *p, const opp__kernel_row_t *row, \
                                    const opp__plan_t *plan, struct CUstream_st *stream);
OPP__KERNEL_LIST(OPP__LAUNCH_DECL_)
#undef OPP__LAUNCH_DECL_

#ifdef __cplusplus
}
#endif
#endif /* OPP_KERNELS_KERNELS_H */
