/*
 * kernels.h - internal launchers of the kernels/ package (extern "C"),
 * called by lib/ (host C). Nothing here is public API.
 *
 * Dims: B = batch, Hq = query heads, Hkv = key/value heads (G = Hq / Hkv),
 * D = head size of Q and K, Dv = head size of V and out, Tq / Tkv = the
 * query / key length of one sequence (L_q, L_kv), total_q / total_kv = the
 * packed token totals.
 *
 * Two layouts share one kernel through element strides (opp__exact_args_t):
 * element (sequence b, row i, head h, column d) of a tensor lives at
 *   base_b + i * row + h * head + d
 * with base_b = cu_seqlens[b] * row (packed) or b * batch (padded
 * Attention-24, where Tq = S_q and Tkv = nonpad_kv_seqlen[b]).
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
    int64_t padding[26];
} opp__guard_record_t;

/* What the guard checks. Exactly one of (cu_seqlens_q and cu_seqlens_kv)
 * or nonpad is given. */
typedef struct opp__guard_args {
    const int32_t *cu_seqlens_q;  /* device [B + 1] or NULL */
    const int32_t *cu_seqlens_kv; /* device [B + 1] or NULL */
    const int64_t *nonpad;        /* device [B] or NULL */
    int32_t batch;                /* B >= 1 */
    int32_t max_seqlen_q, max_seqlen_kv;
    int32_t kv_seqlen; /* S_kv: upper bound of nonpad */
    int64_t total_q, total_kv;
} opp__guard_args_t;

/*! opp__varlen_guard_launch() :
 * Enqueues the guard kernel on stream: validates the device arrays of args
 * (host-check order: q before kv; start, order, total, then lengths; the
 * first failure wins) and rewrites the whole record at `record` (device,
 * 256-byte aligned, OPP__GUARD_RECORD_BYTES).
 * @return : SUCCESS when enqueued, CUDA_ERROR if the launch failed. */
opp_status_t opp__varlen_guard_launch(const opp__guard_args_t *args, void *record,
                                      struct CUstream_st *stream);

/*! opp__guard_record_read() :
 * Copies the record at `record` (device) into *out (host) on stream and
 * synchronizes the stream.
 * @return : SUCCESS, or CUDA_ERROR if the copy or the synchronization failed. */
opp_status_t opp__guard_record_read(const void *record, opp__guard_record_t *out,
                                    struct CUstream_st *stream);

// --- exact attention

/* One tensor: base pointer and element strides (see the file comment). */
typedef struct opp__exact_tensor {
    const void *ptr;
    int64_t row, head, batch; /* elements; batch is used by the padded layout only */
} opp__exact_tensor_t;

/* Everything the exact kernel needs; filled by lib/ from a validated
 * descriptor. Packed layout: cu_seqlens_q/kv given, nonpad NULL. Padded
 * layout: nonpad given (Tq = q_seqlen, Tkv = nonpad[b]), cu_seqlens NULL. */
typedef struct opp__exact_args {
    int32_t dtype; /* OPP_DTYPE_F32, F16 or BF16 (all four tensors) */
    int32_t batch, hq, hkv, d, dv;
    int32_t max_seqlen_q;  /* bound on Tq: sizes the grid */
    int32_t max_seqlen_kv; /* bound on Tkv (guard only) */
    int32_t q_seqlen;      /* padded layout: S_q; kv_seqlen: S_kv */
    int32_t kv_seqlen;
    int64_t total_q, total_kv; /* packed layout (guard only) */
    const int32_t *cu_seqlens_q, *cu_seqlens_kv;
    const int64_t *nonpad;
    opp__exact_tensor_t q, k, v, out; /* out.ptr is written (cast) */
    double sqrt_scale;                /* s of exact_order.h */
    double softcap;                   /* 0: off */
    int32_t is_causal;
} opp__exact_args_t;

/*! opp__exact_attention_supported() :
 * The dispatch table's answer for (dtype, D, Dv) without launching.
 * @return : SUCCESS, NOT_SUPPORTED_DTYPE or NOT_SUPPORTED_HEAD_SIZE. */
opp_status_t opp__exact_attention_supported(int32_t dtype, int32_t d, int32_t dv);

/*! opp__exact_attention_launch() :
 * Enqueues on stream the guard (rewrites the record at `record`) and then
 * the exact attention kernel, which reads the record first and writes
 * out [.., Hq, Dv] only when the guard found nothing.
 * q [total_q | B*S_q rows, Hq, D], k [.., Hkv, D], v [.., Hkv, Dv].
 * @return : SUCCESS when enqueued; NOT_SUPPORTED_* (nothing enqueued);
 *           CUDA_ERROR if a launch failed. */
opp_status_t opp__exact_attention_launch(const opp__exact_args_t *args, void *record,
                                         struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif
#endif /* OPP_KERNELS_KERNELS_H */
