/*
 * oppacked.h - scaled dot-product attention over packed (padding-free)
 * variable-length sequences, with the exact semantics of ONNX Attention-24.
 *
 * This is the library's one public header. It compiles as C11 and as C++.
 *
 * Model:   the caller owns all device memory. The run path never allocates
 *          device memory, never synchronizes the host, and only enqueues work
 *          on the stream it is given, so it is CUDA-graph capturable.
 * Layout:  packed ("THD"). Q is [total_q, num_heads, head_size] (rank 3) or
 *          [total_q, num_heads * head_size] (rank 2: the same row-major
 *          memory), K is [total_kv, kv_num_heads, head_size], V is
 *          [total_kv, kv_num_heads, v_head_size], out is
 *          [total_q, num_heads, v_head_size]. Sequence b owns query rows
 *          cu_seqlens_q[b] .. cu_seqlens_q[b+1]-1 and key/value rows
 *          cu_seqlens_kv[b] .. cu_seqlens_kv[b+1]-1. Attention is
 *          block-diagonal: a query never sees another sequence's keys.
 *          Row strides are in ELEMENTS; 0 means dense.
 * Math:    for query head h the key/value head is h / (num_heads /
 *          kv_num_heads) (repeat-interleave, as ONNX). s = sqrt(scale);
 *          score x_ij = sum_d (q_id s)(k_jd s); softcap (if > 0) is applied
 *          before any mask; causal is tail-aligned: local query i sees local
 *          key j iff j <= i + (L_kv - L_q); a row with no visible key outputs
 *          exact zeros; softmax forms each p_j = e_j / sum_k e_k, then
 *          y = sum_j p_j v_j.
 * Errors:  every function that can fail returns opp_status_t; the detail of
 *          the last failure on the calling thread is opp_last_error_message().
 *          The library never prints, exits or aborts on user input, and
 *          never rewrites a caller's argument.
 */
#ifndef OPPACKED_H
#define OPPACKED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======   Version   ====== */

#define OPP_VERSION_MAJOR  0
#define OPP_VERSION_MINOR  1
#define OPP_VERSION_PATCH  0
#define OPP_VERSION_NUMBER (OPP_VERSION_MAJOR * 10000 + OPP_VERSION_MINOR * 100 + OPP_VERSION_PATCH)

/*! opp_version_number() :
 * @return : the version of the linked library as MAJOR*10000 + MINOR*100 +
 *           PATCH; compare it with OPP_VERSION_NUMBER of the header. */
unsigned opp_version_number(void);

/*! opp_version_string() :
 * @return : the version of the linked library as "MAJOR.MINOR.PATCH"
 *           (static storage, never NULL). */
const char *opp_version_string(void);

/* ======   Status   ======
 * Values are pinned and never reused. Category = value / 1000 * 1000:
 *   0     success
 *   1xxx  the caller passed something invalid
 *   2xxx  valid, but this build or device does not support it
 *   3xxx  a runtime or dependency (CUDA, cuBLAS, host memory) failed
 *   9xxx  a bug in liboppacked
 * OPP_STATUS_MAP(XX) is the single list; XX(name, value, description). */
#define OPP_STATUS_MAP(XX)                                                                        \
    XX(SUCCESS, 0, "success")                                                                     \
    XX(BAD_PARAM, 1000, "an argument is invalid")                                                 \
    XX(BAD_PARAM_NULL_POINTER, 1001, "a required pointer is NULL")                                \
    XX(BAD_PARAM_MISALIGNED, 1002, "a pointer is not aligned as required")                        \
    XX(BAD_PARAM_NUM_HEADS, 1003, "num_heads is not positive")                                    \
    XX(BAD_PARAM_KV_NUM_HEADS, 1004, "kv_num_heads is negative")                                  \
    XX(BAD_PARAM_KV_HEADS_NOT_DIVIDING, 1005, "kv_num_heads does not divide num_heads")           \
    XX(BAD_PARAM_HEAD_SIZE, 1006, "head_size is not positive")                                    \
    XX(BAD_PARAM_V_HEAD_SIZE, 1007, "v_head_size is negative")                                    \
    XX(BAD_PARAM_BATCH, 1008, "batch is not positive")                                            \
    XX(BAD_PARAM_TOTAL, 1009, "a token total is negative or exceeds 32-bit indexing")             \
    XX(BAD_PARAM_MAX_SEQLEN, 1010, "max_seqlen is negative or below a sequence's length")         \
    XX(BAD_PARAM_SCALE, 1011, "scale is NaN, infinite or negative")                               \
    XX(BAD_PARAM_SOFTCAP, 1012, "softcap is NaN, infinite or negative")                           \
    XX(BAD_PARAM_IS_CAUSAL, 1013, "is_causal is neither 0 nor 1")                                 \
    XX(BAD_PARAM_DTYPE, 1014, "a dtype is not a known ONNX element type")                         \
    XX(BAD_PARAM_DTYPE_MISMATCH, 1015, "the dtypes of Q, K, V and out differ")                    \
    XX(BAD_PARAM_STRIDE, 1016, "a row stride is negative or smaller than its row")                \
    XX(BAD_PARAM_ALGO, 1017, "algo is not a known algorithm")                                     \
    XX(BAD_PARAM_SEQLENS_COUNT, 1018, "a cu_seqlens array does not have batch + 1 entries")       \
    XX(BAD_PARAM_SEQLENS_COUNT_MISMATCH, 1019, "cu_seqlens_q and cu_seqlens_kv differ in length") \
    XX(BAD_PARAM_SEQLENS_START, 1020, "cu_seqlens[0] is not 0")                                   \
    XX(BAD_PARAM_SEQLENS_DECREASING, 1021, "cu_seqlens decreases")                                \
    XX(BAD_PARAM_SEQLENS_TOTAL, 1022, "cu_seqlens[batch] is above the token total")               \
    XX(BAD_PARAM_WORKSPACE, 1023, "the workspace is too small")                                   \
    XX(BAD_PARAM_SHAPE, 1024, "a tensor shape is invalid or inconsistent")                        \
    XX(BAD_PARAM_MASK, 1025, "attn_mask has an invalid type or does not broadcast")               \
    XX(BAD_PARAM_NONPAD, 1026, "nonpad_kv_seqlen is invalid or combined with past")               \
    XX(BAD_PARAM_QK_MATMUL_OUTPUT_MODE, 1027, "qk_matmul_output_mode is not in -1..3")            \
    XX(BAD_PARAM_SOFTMAX_PRECISION, 1028, "softmax_precision is not a floating ONNX type")        \
    XX(BAD_PARAM_PAST, 1029, "past_key and past_value are not given together or disagree")        \
    XX(BAD_PARAM_NOT_INITIALISED, 1030, "a descriptor was not set up by its *_init function")     \
    XX(NOT_SUPPORTED, 2000, "valid, but not supported")                                           \
    XX(NOT_SUPPORTED_DTYPE, 2001, "the dtype is not supported")                                   \
    XX(NOT_SUPPORTED_HEAD_SIZE, 2002, "the head size is above the supported maximum")             \
    XX(NOT_SUPPORTED_ARCH, 2003, "the GPU architecture is not supported")                         \
    XX(NOT_SUPPORTED_ALGO, 2004, "the algorithm is not available in this build")                  \
    XX(NOT_SUPPORTED_FEATURE, 2005, "the combination of options is not supported")                \
    XX(NOT_SUPPORTED_VERSION, 2006, "the descriptor is from a newer oppacked.h than the library") \
    XX(CUDA_ERROR, 3000, "a CUDA runtime call failed")                                            \
    XX(CUBLAS_ERROR, 3001, "a cuBLAS call failed")                                                \
    XX(HOST_ALLOC_FAILED, 3002, "a host memory allocation failed")                                \
    XX(NO_DEVICE, 3003, "no CUDA device is available")                                            \
    XX(INTERNAL_ERROR, 9000, "internal error in liboppacked")

typedef enum opp_status {
#define OPP_STATUS_ENUM_(name, value, text) OPP_STATUS_##name = value,
    OPP_STATUS_MAP(OPP_STATUS_ENUM_)
#undef OPP_STATUS_ENUM_
} opp_status_t;

#define OPP_STATUS_CATEGORY(s) ((opp_status_t)(((int)(s) / 1000) * 1000))

/*! opp_status_name() :
 * @return : the enumerator's name without its prefix, e.g. "BAD_PARAM_SHAPE",
 *           or "UNKNOWN_STATUS" for a value not in the list. Never NULL. */
const char *opp_status_name(opp_status_t status);

/*! opp_status_string() :
 * @return : a one-line description, e.g. "a tensor shape is invalid or
 *           inconsistent", or "unknown status". Never NULL. */
const char *opp_status_string(opp_status_t status);

/*! opp_last_error_message() :
 * @return : the detail of the last non-success status returned on this
 *           thread, naming the argument, index and values at fault, e.g.
 *           "cu_seqlens_kv[3] = 17 < cu_seqlens_kv[2] = 20". "" if none.
 *           Thread-local; valid until the next failing call on this thread.
 *           Never NULL. The message names no source file: a library built
 *           with -DOPP_DEBUG_MESSAGES prefixes "file:line: " (for debugging
 *           liboppacked itself). */
const char *opp_last_error_message(void);

/* ======   Element types   ======
 * The values are ONNX TensorProto.DataType values, so a runtime can pass
 * them through. Every ONNX value is accepted as a dtype; the supported
 * storage types are FLOAT, FLOAT16 and BFLOAT16. */
typedef enum opp_dtype {
    OPP_DTYPE_UNDEFINED = 0,
    OPP_DTYPE_F32 = 1,  /* ONNX FLOAT */
    OPP_DTYPE_F16 = 10, /* ONNX FLOAT16 */
    OPP_DTYPE_F64 = 11, /* ONNX DOUBLE: valid, not supported */
    OPP_DTYPE_BF16 = 16 /* ONNX BFLOAT16 */
} opp_dtype_t;

/*! opp_dtype_name() :
 * @return : "f32", "f16", "bf16", "f64" for those values, the lowercase ONNX
 *           type name for other ONNX values 2..28 (e.g. "int8"), "undefined"
 *           for 0, "invalid" otherwise. Never NULL. */
const char *opp_dtype_name(opp_dtype_t dtype);

/*! opp_dtype_size() :
 * @return : bytes per element of a supported storage dtype (4, 2, 2), 8 for
 *           F64, 0 for anything else. */
size_t opp_dtype_size(opp_dtype_t dtype);

/* ======   Descriptors: initialisation, growth, order of checks   ======
 * Every descriptor struct (opp_attention_desc_t, opp_attention24_desc_t)
 * starts with `size_t struct_size`. Its *_init macro sets it to the sizeof
 * of the struct as the CALLER's compiler sees it, and fills every field
 * with its default; then the caller sets the fields it needs.
 *  - Always start from *_init. A descriptor never passed to it (all zero,
 *    stack garbage, every byte 0xAB) has no valid struct_size and is refused
 *    by every function that takes it with OPP_STATUS_BAD_PARAM_NOT_INITIALISED
 *    and a message saying "... not initialised with opp_attention_desc_init"
 *    (resp. opp_attention24_desc_init).
 *  - Growth: fields are only ever appended, each at or after the end of the
 *    previous version's struct (never in its tail padding), and each new
 *    field has a default. The library reads only the first struct_size bytes
 *    of a descriptor: a field that begins at or past struct_size takes its
 *    default. So a binary built against an older, smaller header keeps
 *    working with a newer library.
 *  - Accepted struct_size: a multiple of 8 from the struct's *_MIN_SIZE
 *    (the fields every version has) to the library's own sizeof. A larger
 *    one (a header newer than the library) gets OPP_STATUS_NOT_SUPPORTED_VERSION;
 *    anything else BAD_PARAM_NOT_INITIALISED. The descriptor is never written.
 *  - *_init_sized(desc, struct_size) is the function behind each *_init
 *    macro, for bindings that cannot expand macros (pass the size of your
 *    struct). The plain *_init functions exist for such bindings too and
 *    assume the linked library's sizeof.
 * Order of checks, the same in every function that takes a descriptor:
 *  1. the descriptor: NULL (BAD_PARAM_NULL_POINTER, "desc is NULL"), then
 *     struct_size, then its fields in the order of *_desc_check();
 *  2. then the other arguments, in parameter order.
 * So a call with several bad arguments always reports the descriptor's fault
 * first, whichever entry it is. */

/* ======   Packed attention descriptor   ====== */

/* Algorithms.
 *   EXACT  accumulates in double in one fixed order and rounds once: the
 *          output is bit-identical to the CPU reference (a correctness path,
 *          far slower than the tensor cores).
 *   FAST   flash kernels with fp32 accumulation and online softmax: tensor
 *          cores for f16/bf16 (head sizes multiples of 8), CUDA-core FFMA
 *          for f32 (multiples of 4; fp32 throughout, no TF32); the output of
 *          a sequence is bit-identical whatever batch it is in (DESIGN.md
 *          section 4). NOT_SUPPORTED_* where no FAST kernel serves the
 *          descriptor (opp_attention_kernel_query() says why).
 *   AUTO   FAST where a FAST kernel serves the descriptor on the current GPU,
 *          else EXACT (never TF32X3). The default of the *_desc_init()
 *          functions; ask for EXACT explicitly when you need bit-identity
 *          with the reference.
 *   TF32X3 opt-in, for f32 storage only: each f32 operand of Q K^T and of
 *          P V is split into a tf32 high part and a tf32 low part, and each
 *          matrix product runs as three tensor-core products (hi x hi,
 *          hi x lo, lo x hi) with fp32 accumulation. Compute capability 9.0
 *          only (H100 / H200: wgmma); D and Dv <= 64 and multiples of 4,
 *          every row stride a multiple of 4 elements; any GQA ratio; causal,
 *          softcap, scale, LSE and both layouts as FAST. Not bit-identical to
 *          EXACT or to FAST, but batch-invariant as FAST is (a sequence's
 *          output and LSE have the same bits in any batch, position or
 *          layout; DESIGN.md section 4); its error against EXACT is
 *          measured (//tests:tf32x3_gpu_test, oppbench --impl tf32x3).
 *          Claim and descriptor checks accept it where some GPU runs it
 *          (else NOT_SUPPORTED_DTYPE / _HEAD_SIZE / _FEATURE); a run or a
 *          kernel query for any other GPU is NOT_SUPPORTED_ARCH. AUTO never
 *          takes it. */
typedef enum opp_algo {
    OPP_ALGO_EXACT = 0,
    OPP_ALGO_FAST = 1,
    OPP_ALGO_AUTO = 2,
    OPP_ALGO_TF32X3 = 3
} opp_algo_t;

/* Largest head_size / v_head_size the library supports. */
#define OPP_MAX_HEAD_SIZE 256

typedef struct opp_attention_desc {
    size_t struct_size;    /* set by opp_attention_desc_init(); never set by hand */
    opp_dtype_t q_dtype;   /* of Q; F32, F16 or BF16 */
    opp_dtype_t k_dtype;   /* of K; must equal q_dtype */
    opp_dtype_t v_dtype;   /* of V; must equal q_dtype */
    opp_dtype_t out_dtype; /* of out; must equal q_dtype */
    int32_t batch;         /* B, number of sequences, >= 1 */
    int32_t num_heads;     /* Hq, >= 1 */
    int32_t kv_num_heads;  /* Hkv, divides Hq; 0 means Hq (the default) */
    int32_t head_size;     /* D, 1 .. OPP_MAX_HEAD_SIZE */
    int32_t v_head_size;   /* Dv, 0 means D (the default) */
    int64_t total_q;       /* rows of q / out, >= cu_seqlens_q[batch], <= INT32_MAX (host) */
    int64_t total_kv;      /* rows of k / v, >= cu_seqlens_kv[batch], <= INT32_MAX (host) */
    int32_t max_seqlen_q;  /* >= 0, an upper bound on every L_q[b] (host; may exceed total_q) */
    int32_t max_seqlen_kv; /* >= 0, an upper bound on every L_kv[b] (host) */
    /* Every field below has a default, taken when struct_size ends before it. */
    float scale;            /* > 0; 0 means 1/sqrt(head_size) (the default) */
    int32_t is_causal;      /* 0 or 1; tail-aligned (see the file comment) */
    float softcap;          /* >= 0; 0 means off (the default) */
    int64_t q_row_stride;   /* elements between query rows; 0 = Hq * D */
    int64_t k_row_stride;   /* elements between key rows; 0 = Hkv * D */
    int64_t v_row_stride;   /* elements between value rows; 0 = Hkv * Dv */
    int64_t out_row_stride; /* elements between output rows; 0 = Hq * Dv */
    opp_algo_t algo;        /* OPP_ALGO_AUTO (the default), EXACT, FAST or TF32X3 */
} opp_attention_desc_t;

/* The smallest struct_size accepted: the fields through max_seqlen_kv. */
#define OPP_ATTENTION_DESC_MIN_SIZE offsetof(opp_attention_desc_t, scale)

/*! opp_attention_desc_init() (a macro) :
 * Sets struct_size to sizeof(opp_attention_desc_t) of the caller's build and
 * every field to its default: dtypes UNDEFINED, all counts, totals and
 * strides 0, scale 0 (default scale), is_causal 0, softcap 0 (off),
 * algo OPP_ALGO_AUTO (padding bytes 0). The caller then sets dtypes, batch,
 * num_heads, head_size, totals and max_seqlens. Does nothing when desc is
 * NULL. */
#define opp_attention_desc_init(desc) \
    opp_attention_desc_init_sized((desc), sizeof(opp_attention_desc_t))

/*! opp_attention_desc_init_sized() :
 * opp_attention_desc_init() for a struct of struct_size bytes (the caller's
 * sizeof): writes struct_size and the defaults of the fields that lie within
 * it, and no byte at or past struct_size (nor past the library's sizeof).
 * Does nothing when desc is NULL or struct_size < sizeof(size_t). */
void opp_attention_desc_init_sized(opp_attention_desc_t *desc, size_t struct_size);

/*! opp_attention_desc_init() (the function, for bindings without the
 * macro) : opp_attention_desc_init_sized(desc, the LIBRARY's sizeof). */
void(opp_attention_desc_init)(opp_attention_desc_t *desc);

/*! opp_attention_claim_check() :
 * The claim-time query: checks only what a runtime knows when it decides
 * whether to hand a node to liboppacked - dtypes, num_heads, kv_num_heads,
 * head_size, v_head_size, scale, is_causal, softcap and algo - and ignores
 * batch, totals, max_seqlens and strides. Pure host code: never touches a GPU.
 * Supported means: some kernel of the requested algorithm serves these
 * fields on some GPU architecture the library supports (use
 * opp_attention_kernel_query() for a given architecture).
 * @return : OPP_STATUS_SUCCESS if supported; BAD_PARAM_NULL_POINTER,
 *           BAD_PARAM_NOT_INITIALISED or NOT_SUPPORTED_VERSION for desc
 *           itself (see "Descriptors"); a BAD_PARAM_* status if a field
 *           is invalid; a NOT_SUPPORTED_* status if valid but unsupported
 *           (dtype, head size, algo). opp_last_error_message() says which
 *           field and value, and what the library offers instead. */
opp_status_t opp_attention_claim_check(const opp_attention_desc_t *desc);

/*! opp_attention_desc_check() :
 * Validates the whole descriptor (everything opp_attention_claim_check
 * checks, plus batch, totals, max_seqlens and strides) without touching a
 * GPU. Returns exactly what the run path would return for desc.
 * @return : OPP_STATUS_SUCCESS, or the first failing status: for desc
 *           itself BAD_PARAM_NULL_POINTER, BAD_PARAM_NOT_INITIALISED,
 *           NOT_SUPPORTED_VERSION; then BAD_PARAM_* / NOT_SUPPORTED_* with a
 *           message naming field and value. */
opp_status_t opp_attention_desc_check(const opp_attention_desc_t *desc);

/*! opp_varlen_check() :
 * Validates HOST copies of the cu_seqlens arrays against desc: each has
 * batch + 1 entries, starts at 0, never decreases, ends at or below total_q /
 * total_kv, and no sequence is longer than max_seqlen_q / max_seqlen_kv.
 * desc itself is checked first (as opp_attention_desc_check).
 * cu_seqlens_q  : host, int32 [cu_seqlens_q_count]
 * cu_seqlens_kv : host, int32 [cu_seqlens_kv_count]
 * @return : OPP_STATUS_SUCCESS, or BAD_PARAM_NULL_POINTER,
 *           BAD_PARAM_SEQLENS_COUNT_MISMATCH, BAD_PARAM_SEQLENS_COUNT,
 *           BAD_PARAM_SEQLENS_START, BAD_PARAM_SEQLENS_DECREASING,
 *           BAD_PARAM_SEQLENS_TOTAL, BAD_PARAM_MAX_SEQLEN (first failure
 *           only); the message names array, index and values, e.g.
 *           "cu_seqlens_kv[3] = 17 < cu_seqlens_kv[2] = 20". */
opp_status_t opp_varlen_check(const opp_attention_desc_t *desc, const int32_t *cu_seqlens_q,
                              size_t cu_seqlens_q_count, const int32_t *cu_seqlens_kv,
                              size_t cu_seqlens_kv_count);

/*! opp_attention_kernel_query() :
 * Which kernel the run path would launch for desc on a GPU of compute
 * capability sm_arch (major * 10 + minor, e.g. 80, 86, 89, 90; see
 * opp_device_sm_arch() for the current device's). Pure host code: the
 * answer comes from the same dispatch table the run path uses.
 * kernel_name : host; set to a static, readable name such as
 *               "exact_bf16_d128_bm64", or NULL on failure (when not NULL).
 * @return : OPP_STATUS_SUCCESS; the status of opp_attention_desc_check();
 *           then BAD_PARAM (sm_arch <= 0); BAD_PARAM_NULL_POINTER
 *           (kernel_name); or the
 *           NOT_SUPPORTED_* status with the reason a runtime would log at
 *           claim time (e.g. "no FAST kernel for head_size = 102, ...: FAST
 *           needs multiples of 4" for f32; NOT_SUPPORTED_ARCH for
 *           OPP_ALGO_TF32X3 on any sm_arch but 90). */
opp_status_t opp_attention_kernel_query(const opp_attention_desc_t *desc, int32_t sm_arch,
                                        const char **kernel_name);

/* ======   Run path (GPU)   ======
 * The stream type is CUDA's cudaStream_t (struct CUstream_st *), declared
 * here without CUDA headers so this header stays plain C; pass a
 * cudaStream_t (or 0 for the legacy default stream) directly. */
struct CUstream_st;

/* Device arrays that describe the packed batch. */
typedef struct opp_varlen {
    const int32_t *cu_seqlens_q;  /* device, int32 [batch + 1] */
    const int32_t *cu_seqlens_kv; /* device, int32 [batch + 1] */
} opp_varlen_t;

/*! opp_packed_attention_workspace_size() :
 * Bytes of device workspace opp_packed_attention_fwd() needs for desc,
 * computed by the same planner that lays the workspace out. Pure host code.
 * The size: 256 bytes (the device guard's record), plus, for shapes the
 * FAST path splits (f16/bf16, D and Dv <= 128, G = num_heads / kv_num_heads
 * <= 64; whatever desc->algo, so the size does not change with the
 * algorithm) when some sequence may have more than T keys (max_seqlen_kv >
 * T; T = 1024, or 512 when G >= 4), the split-KV partials (decode): R rows
 * of num_heads * (v_head_size + 2) floats, 256-byte aligned, with
 *   R = min(ceil(max_seqlen_kv / 1024) * min(total_q, batch * floor(64 / G)),
 *           (floor(total_kv / 1024) + batch) * floor(64 / G)).
 * (A build with the A/B switch OPP__SPLIT_SLICE_ITEMS N > 0, kernels/
 * split_config.h, needs 4 R rows where ceil(max_seqlen_kv / 1024) * batch
 * * kv_num_heads <= N; the shipped library has N = 0.)
 * It depends only on the descriptor, never on the device lengths, so one
 * workspace serves every batch the descriptor's extents allow (graph replay).
 * @return : OPP_STATUS_SUCCESS (with *workspace_bytes set), or the status of
 *           opp_attention_desc_check(), then BAD_PARAM_NULL_POINTER
 *           (workspace_bytes). */
opp_status_t opp_packed_attention_workspace_size(const opp_attention_desc_t *desc,
                                                 size_t *workspace_bytes);

/*! opp_packed_attention_fwd() :
 * out = PackedVarlenAttention(q, k, v) on the GPU (see the file comment).
 * q [total_q, Hq, D], k [total_kv, Hkv, D], v [total_kv, Hkv, Dv],
 * out [total_q, Hq, Dv]: device, desc->*_dtype, row strides from desc,
 * 16-byte aligned base pointers (a tensor with no rows may be NULL).
 * varlen: device cu_seqlens (see opp_varlen_t), int32-aligned.
 * workspace: device, 256-byte aligned, >= opp_packed_attention_workspace_size.
 * Enqueues on stream and returns: no allocation, no host synchronization, no
 * host copy of cu_seqlens; CUDA-graph capturable. With OPP_ALGO_EXACT the
 * output is bit-identical to the CPU reference.
 * Graph replay with changing batches: total_q / total_kv are the capacity
 * (rows allocated) and max_seqlen_q / max_seqlen_kv only upper bounds (the
 * grid is sized from min(max_seqlen, total): a loose bound costs idle
 * blocks, never correctness), so one captured graph can be replayed with
 * new device cu_seqlens of the same batch count. Rows t >= cu_seqlens_q[batch]
 * of out are written as zeros; key rows past cu_seqlens_kv[batch] are never
 * read. Each run is bit-identical to a run of the same batch with
 * tight totals and bounds.
 * The run validates cu_seqlens on the device first: if they are
 * inconsistent with desc (start, order, [batch] above the total, a length
 * above max_seqlen) nothing is read or written out of bounds, every out
 * element within [total_q, Hq, Dv] becomes a quiet NaN (0x7FC00000,
 * 0x7E00 or 0x7FC0; the gaps of a row stride are never written), and the
 * finding is recorded in the workspace for opp_attention_device_status().
 * Every argument is checked on the host before the first CUDA call.
 * @return : OPP_STATUS_SUCCESS when the work was enqueued; the status of
 *           opp_attention_desc_check(); BAD_PARAM_NULL_POINTER;
 *           BAD_PARAM_WORKSPACE; BAD_PARAM_MISALIGNED; NO_DEVICE when there
 *           is no usable CUDA device (no device, or no driver);
 *           NOT_SUPPORTED_* when no kernel serves desc on this device;
 *           CUDA_ERROR if a CUDA call or launch failed. */
opp_status_t opp_packed_attention_fwd(const opp_attention_desc_t *desc, const opp_varlen_t *varlen,
                                      const void *q, const void *k, const void *v, void *out,
                                      void *workspace, size_t workspace_bytes,
                                      struct CUstream_st *stream);

/*! opp_packed_attention_fwd_lse() :
 * opp_packed_attention_fwd() that also writes the log-sum-exp of every
 * query row's softmax:
 * lse : device, float32 [Hq, total_q] (FlashAttention's varlen layout:
 *       element (head h, token t) at lse[h * total_q + t]), 4-byte aligned,
 *       or NULL (not written). Natural log of sum_j exp(x_j) over the visible
 *       scores x_j (after scale and softcap); -inf for a row that sees no
 *       key and for rows t >= cu_seqlens_q[batch] (whose out rows are
 *       zeros). When the device guard finds bad cu_seqlens, every element
 *       of lse becomes a quiet NaN, as out does.
 * @return : as opp_packed_attention_fwd(); BAD_PARAM_MISALIGNED for lse. */
opp_status_t opp_packed_attention_fwd_lse(const opp_attention_desc_t *desc,
                                          const opp_varlen_t *varlen, const void *q, const void *k,
                                          const void *v, void *out, float *lse, void *workspace,
                                          size_t workspace_bytes, struct CUstream_st *stream);

/*! opp_device_sm_arch() :
 * The compute capability of the current CUDA device as major * 10 + minor
 * (e.g. 90 for an H100/H200), for opp_attention_kernel_query(). Looked up
 * once per device and cached; never synchronizes.
 * @return : OPP_STATUS_SUCCESS, NO_DEVICE, CUDA_ERROR, or
 *           BAD_PARAM_NULL_POINTER. */
opp_status_t opp_device_sm_arch(int32_t *sm_arch);

/*! opp_attention_device_status() :
 * Reads what the device-side guard of the last run on this workspace found
 * (either entry: opp_packed_attention_fwd*() or opp_attention24_nonpad_fwd*()).
 * A run whose guard found something has already filled its out / y (and
 * lse) with quiet NaN, so a caller that never asks still sees the failure.
 * Copies 256 bytes from workspace and SYNCHRONIZES stream (not for the hot
 * path: call it when you want to know, e.g. in debug builds or after a
 * failure).
 * @return : OPP_STATUS_SUCCESS if the guard found nothing; else the status
 *           the host-side opp_varlen_check() would give (e.g.
 *           BAD_PARAM_SEQLENS_DECREASING, BAD_PARAM_NONPAD), with a message
 *           such as "cu_seqlens_kv[3] = 17 < cu_seqlens_kv[2] = 20 (found on
 *           the device)"; BAD_PARAM_NULL_POINTER, BAD_PARAM_MISALIGNED,
 *           BAD_PARAM_WORKSPACE for the arguments; BAD_PARAM when the
 *           workspace holds no guard record; NO_DEVICE without a usable
 *           CUDA device; CUDA_ERROR if the copy failed; INTERNAL_ERROR for
 *           a record this library did not write. */
opp_status_t opp_attention_device_status(const void *workspace, size_t workspace_bytes,
                                         struct CUstream_st *stream);

/*! opp_packed_attention_device_status() : the former name of
 * opp_attention_device_status(), kept as an alias (same behaviour). */
opp_status_t opp_packed_attention_device_status(const void *workspace, size_t workspace_bytes,
                                                struct CUstream_st *stream);

/* ======   Attention-24 layout (padded, nonpad_kv_seqlen)   ======
 * The same kernels on ONNX Attention-24's padded layout without mask or past:
 *   4D: Q [B, Hq, S_q, D], K [B, Hkv, S_kv, D], V [B, Hkv, S_kv, Dv],
 *       Y [B, Hq, S_q, Dv]
 *   3D: Q [B, S_q, Hq*D], K [B, S_kv, Hkv*D], V [B, S_kv, Hkv*Dv],
 *       Y [B, S_q, Hq*Dv]
 * Sequence b has L_q = S_q query rows and L_kv = nonpad_kv_seqlen[b] keys;
 * causal is ONNX's offset nonpad[b] - S_q (tail-aligned). Keys at
 * j >= nonpad[b] are never read. Every Y row is written. */
typedef struct opp_attention24_desc {
    size_t struct_size;                               /* set by opp_attention24_desc_init() */
    opp_dtype_t q_dtype, k_dtype, v_dtype, out_dtype; /* must be equal */
    int32_t input_rank;                               /* 3 or 4 */
    int32_t batch;                                    /* B >= 1 */
    int32_t num_heads;                                /* Hq */
    int32_t kv_num_heads;                             /* Hkv; 0 means Hq */
    int32_t head_size;                                /* D */
    int32_t v_head_size;                              /* Dv; 0 means D */
    int32_t q_seqlen;                                 /* S_q >= 0 */
    int32_t kv_seqlen;                                /* S_kv >= 0 */
    /* Every field below has a default, taken when struct_size ends before it. */
    float scale;       /* 0 means 1/sqrt(D) */
    int32_t is_causal; /* 0 or 1 */
    float softcap;     /* 0 is off */
    opp_algo_t algo;   /* OPP_ALGO_AUTO (default), EXACT, FAST or TF32X3 */
} opp_attention24_desc_t;

/* The smallest struct_size accepted: the fields through kv_seqlen. */
#define OPP_ATTENTION24_DESC_MIN_SIZE offsetof(opp_attention24_desc_t, scale)

/*! opp_attention24_desc_init() (a macro) : struct_size = sizeof of the
 * caller's build and defaults (input_rank 4, AUTO, every other field and
 * padding byte 0). Does nothing when desc is NULL. */
#define opp_attention24_desc_init(desc) \
    opp_attention24_desc_init_sized((desc), sizeof(opp_attention24_desc_t))

/*! opp_attention24_desc_init_sized() : as opp_attention_desc_init_sized(). */
void opp_attention24_desc_init_sized(opp_attention24_desc_t *desc, size_t struct_size);

/*! opp_attention24_desc_init() (the function, for bindings without the
 * macro) : opp_attention24_desc_init_sized(desc, the LIBRARY's sizeof). */
void(opp_attention24_desc_init)(opp_attention24_desc_t *desc);

/*! opp_attention24_desc_check() : validates desc without touching a GPU,
 * in the order: desc itself (NULL, struct_size), the claim-time fields as
 * opp_attention_claim_check(), input_rank, batch, q_seqlen, kv_seqlen,
 * tensor extents.
 * @return : OPP_STATUS_SUCCESS or the first BAD_PARAM_* / NOT_SUPPORTED_*
 *           (BAD_PARAM_NOT_INITIALISED, NOT_SUPPORTED_VERSION for desc). */
opp_status_t opp_attention24_desc_check(const opp_attention24_desc_t *desc);

/*! opp_attention24_kernel_query() : opp_attention_kernel_query() for the
 * Attention-24 layout descriptor.
 * @return : as opp_attention_kernel_query(), with the status of
 *           opp_attention24_desc_check() for desc. */
opp_status_t opp_attention24_kernel_query(const opp_attention24_desc_t *desc, int32_t sm_arch,
                                          const char **kernel_name);

/*! opp_attention24_nonpad_workspace_size() : as the packed one, with
 * batch = B, total_q = B * S_q, total_kv = B * S_kv, max_seqlen_kv = S_kv.
 * @return : the status of opp_attention24_desc_check(), then
 *           BAD_PARAM_NULL_POINTER (workspace_bytes), else SUCCESS. */
opp_status_t opp_attention24_nonpad_workspace_size(const opp_attention24_desc_t *desc,
                                                   size_t *workspace_bytes);

/*! opp_attention24_nonpad_fwd() :
 * y = ONNX Attention-24(q, k, v, nonpad_kv_seqlen) on the GPU.
 * nonpad_kv_seqlen: device, int64 [B], each in 0..S_kv (checked on the
 * device: a bad value is recorded for opp_attention_device_status(),
 * nothing is read out of bounds, and every element of y (and lse) becomes a
 * quiet NaN). Other pointers and the stream as in opp_packed_attention_fwd().
 * @return : as opp_packed_attention_fwd(). */
opp_status_t opp_attention24_nonpad_fwd(const opp_attention24_desc_t *desc,
                                        const int64_t *nonpad_kv_seqlen, const void *q,
                                        const void *k, const void *v, void *y, void *workspace,
                                        size_t workspace_bytes, struct CUstream_st *stream);

/*! opp_attention24_nonpad_fwd_lse() :
 * opp_attention24_nonpad_fwd() that also writes the log-sum-exp of every
 * query row (see opp_packed_attention_fwd_lse()):
 * lse : device, float32 [B, Hq, S_q] (element (b, h, i) at
 *       lse[(b * Hq + h) * S_q + i]), 4-byte aligned, or NULL.
 * @return : as opp_attention24_nonpad_fwd(). */
opp_status_t opp_attention24_nonpad_fwd_lse(const opp_attention24_desc_t *desc,
                                            const int64_t *nonpad_kv_seqlen, const void *q,
                                            const void *k, const void *v, void *y, float *lse,
                                            void *workspace, size_t workspace_bytes,
                                            struct CUstream_st *stream);

/* ======   Merge attention states   ======
 * Combines partial attention results over DISJOINT key sets into the result
 * over their union (the combine step of split-KV / flash-decoding, offered
 * as FlashInfer's merge_states): an engine that splits a sequence's keys
 * across devices or cache tiers runs attention once per part, with the LSE
 * (opp_packed_attention_fwd_lse()), and merges the parts here.
 * A state i is a pair (o_i, lse_i): o_i the normalised attention output of
 * the rows over key set K_i, lse_i = log sum_{j in K_i} exp(x_j), natural
 * log, -inf when the row saw no key of K_i (as the *_fwd_lse() entries write
 * it). Per (row, head), with n = num_states:
 *   M   = max_i lse_i
 *   w_i = exp(lse_i - M), in float32; a state with w_i == 0 (lse_i = -inf,
 *         or lse_i below M by more than ~104) is SKIPPED: its o_i is never
 *         read into the sum, so NaN or inf there cannot reach the output
 *   out = (sum_i w_i o_i) / (sum_i w_i), both sums in ascending i, fp32
 *         accumulation (fmaf), one IEEE division per element, rounded once
 *         (RNE) to the storage dtype
 *   lse = M + log(sum_i w_i)
 *   every lse_i = -inf  ->  out = +0 exactly, lse = -inf (a row that saw no
 *                           key at all, as the attention entries write it)
 *   some lse_i NaN or +inf  ->  out and lse quiet NaN (the weights are
 *                           undefined; a NaN-filled state from a failed run
 *                           stays loud)
 * The bits depend only on the inputs (no atomics; the grid never changes
 * the order), and equal those of the same call on any batch of rows that
 * contains these. Accuracy: within a few float32 ulps of max_i |o_i| before
 * the final rounding (tests/merge_states_gpu_test.c states the bound). */

/*! opp_merge_attention_states_check() :
 * Validates the shape arguments of opp_merge_attention_states() without
 * touching a GPU: dtype F32, F16 or BF16; num_states >= 1; rows >= 0;
 * num_heads >= 1; v_head_size >= 1; and the largest tensor,
 * num_states * rows * num_heads * v_head_size elements, addressable in
 * int64 bytes.
 * @return : OPP_STATUS_SUCCESS; BAD_PARAM_DTYPE (not an ONNX type),
 *           NOT_SUPPORTED_DTYPE (an ONNX type other than F32/F16/BF16),
 *           BAD_PARAM_SHAPE (num_states, rows, or the sizes overflow),
 *           BAD_PARAM_NUM_HEADS, BAD_PARAM_V_HEAD_SIZE; the message names
 *           the argument and its value. */
opp_status_t opp_merge_attention_states_check(opp_dtype_t dtype, int32_t num_states, int64_t rows,
                                              int32_t num_heads, int32_t v_head_size);

/*! opp_merge_attention_states() :
 * Merges num_states partial states into one (see the section comment).
 * states_out : device, dtype [num_states, rows, num_heads, v_head_size],
 *              dense (state i is an `out` of opp_packed_attention_fwd_lse()
 *              with total_q = rows), 16-byte aligned
 * states_lse : device, float32 [num_states, num_heads, rows] (state i is an
 *              `lse` of opp_packed_attention_fwd_lse(), FlashAttention's
 *              varlen layout: element (i, h, t) at
 *              states_lse[(i * num_heads + h) * rows + t]), 4-byte aligned
 * out        : device, dtype [rows, num_heads, v_head_size], dense,
 *              16-byte aligned; every element is written
 * lse_out    : device, float32 [num_heads, rows], 4-byte aligned, or NULL
 *              (not written)
 * out and lse_out must not overlap states_out, states_lse or each other
 * (checked). Pointers may be NULL only when rows == 0, which enqueues
 * nothing. Enqueues one kernel on stream and returns: no allocation, no
 * workspace, no host synchronization; CUDA-graph capturable. Every
 * argument is checked on the host before the first CUDA call.
 * @return : OPP_STATUS_SUCCESS when the work was enqueued (or rows == 0);
 *           the status of opp_merge_attention_states_check();
 *           BAD_PARAM_NULL_POINTER; BAD_PARAM_MISALIGNED; BAD_PARAM (an
 *           output overlaps an input or the other output); CUDA_ERROR if
 *           the launch failed. */
opp_status_t opp_merge_attention_states(opp_dtype_t dtype, int32_t num_states, int64_t rows,
                                        int32_t num_heads, int32_t v_head_size,
                                        const void *states_out, const float *states_lse, void *out,
                                        float *lse_out, struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif
#endif /* OPPACKED_H */
