/*
 * onnx_attention_case.h - an ONNX Attention case folder (tools/onnx) mapped
 * onto the CPU Attention-24 reference (reference/opp_reference.h), plus the
 * reader of the golden cases' logical_batch.txt sidecar (testdata/README.md).
 *
 * Mapping:  node input slots 0 Q, 1 K, 2 V, 3 attn_mask, 4 past_key,
 *           5 past_value, 6 nonpad_kv_seqlen; output slots 0 Y,
 *           1 present_key, 2 present_value, 3 qk_matmul_output. The input
 *           pointers of the tensors struct point INTO the case's buffers (the
 *           case must outlive them); output buffers come from
 *           opp_onnx_attention_alloc_outputs() (malloc'ed, freed with
 *           opp_onnx_attention_free_outputs()).
 * Scale:    an absent scale attribute maps to desc.scale = 0 (the default
 *           1/sqrt(D)); an explicit scale of exactly 0.0 is rejected ("scale =
 *           0 is reserved for the default"), by this project's convention.
 * Errors:   every function returns 0 on success and -1 on failure after writing
 *           a NUL-terminated message into err (err may be NULL). Nothing here
 *           prints, exits or aborts. Host only, no CUDA.
 * Used by tests/conformance_test.c, tests/golden_test.c and tools/oppcheck.
 */
#ifndef OPP_HARNESS_ONNX_ATTENTION_CASE_H
#define OPP_HARNESS_ONNX_ATTENTION_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "harness/compare.h"
#include "lib/oppacked.h"
#include "reference/opp_reference.h"
#include "tools/onnx/onnx_io.h"

/* Node slots of Attention-23/24. */
enum {
    OPP_A24_IN_Q = 0,
    OPP_A24_IN_K = 1,
    OPP_A24_IN_V = 2,
    OPP_A24_IN_MASK = 3,
    OPP_A24_IN_PAST_KEY = 4,
    OPP_A24_IN_PAST_VALUE = 5,
    OPP_A24_IN_NONPAD = 6,
    OPP_A24_OUT_Y = 0,
    OPP_A24_OUT_PRESENT_KEY = 1,
    OPP_A24_OUT_PRESENT_VALUE = 2,
    OPP_A24_OUT_QK = 3,
    OPP_A24_NUM_OUTPUTS = 4
};

/*! Maps a loaded case to the reference's descriptor and host input pointers.
 * Checks op_type "Attention" in the default domain at opset 23 or 24, every
 * shape and dtype, and the attributes (unknown ones are an error naming them).
 * Finally runs opp_ref_attention24_check() on the descriptor.
 * @desc, @host_tensors : written on success (outputs left NULL); zeroed on
 *                        failure.
 * @return : 0 on success, -1 with a message in err. */
int opp_onnx_attention_map(const opp_onnx_case_t *c, opp_ref_attention24_desc_t *desc,
                           opp_ref_attention24_tensors_t *host_tensors, char *err, size_t err_size);

/*! The ONNX shape of output slot (OPP_A24_OUT_*) for desc: Y [B,Hq,S_q,Dv]
 * (3D: [B,S_q,Hq*Dv]), present_key [B,Hkv,P+S_kv,D], present_value
 * [B,Hkv,P+S_kv,Dv], qk_matmul_output [B,Hq,S_q,P+S_kv].
 * @return : the rank (3 or 4) with dims written, or -1 for a bad slot. */
int opp_onnx_attention_output_shape(const opp_ref_attention24_desc_t *desc, int slot,
                                    int64_t dims[4]);

/*! Allocates host buffers for the outputs the case's node names (Y always,
 * present_key, present_value, qk_matmul_output when named) with the shapes of
 * opp_onnx_attention_output_shape(), filled with all-ones bytes (NaN in every
 * float dtype) so an element the reference does not write shows up. Checks
 * each expected output of the case: dtype == desc->dtype and same shape.
 * @t      : its output pointers are set (inputs untouched); on failure every
 *           output pointer is NULL and nothing is allocated.
 * @return : 0 on success, -1 with a message in err. */
int opp_onnx_attention_alloc_outputs(const opp_onnx_case_t *c,
                                     const opp_ref_attention24_desc_t *desc,
                                     opp_ref_attention24_tensors_t *t, char *err, size_t err_size);

/*! Loads case_dir (data set 0), maps it and allocates its outputs: the three
 * steps every runner of a case does first. On failure everything is freed.
 * @return : 0 on success (free with opp_onnx_attention_free_outputs() and
 *           opp_onnx_case_free()), -1 with the loader's / mapper's message. */
int opp_onnx_attention_prepare(const char *case_dir, opp_onnx_case_t *c,
                               opp_ref_attention24_desc_t *desc, opp_ref_attention24_tensors_t *t,
                               char *err, size_t err_size);

/*! The output buffer of slot in t (y, present_key, ...); NULL if none. */
void *opp_onnx_attention_output_ptr(const opp_ref_attention24_tensors_t *t, int slot);

/*! Short name of output slot: "Y", "present_key", "present_value",
 * "qk_matmul_output" ("?" otherwise). */
const char *opp_onnx_attention_output_name(int slot);

/*! Frees the output buffers of t and sets them to NULL. Accepts NULL. */
void opp_onnx_attention_free_outputs(opp_ref_attention24_tensors_t *t);

/* ======   Finding and comparing cases   ====== */

/*! The case folders of dir: dir itself when it holds a model.onnx, else its
 * subfolders that hold one, sorted by name (none is not an error).
 * @paths  : set to a malloc'ed array of malloc'ed paths ("dir/name"); free
 *           with opp_onnx_case_list_free(). NULL when none or on failure.
 * @return : the number of cases, or -1 with a message in err when dir cannot
 *           be read. */
int opp_onnx_case_list(const char *dir, char ***paths, char *err, size_t err_size);

void opp_onnx_case_list_free(char **paths, int n);

/*! Where a test finds its data folder: $env_var when set and non-empty (even
 * if missing), else $TEST_SRCDIR/$TEST_WORKSPACE/rel (workspace "oppacked"
 * when TEST_WORKSPACE is unset) when that is a folder, else rel relative to
 * the current directory.
 * @return : buf (the path may not exist; the caller checks and fails loudly). */
const char *opp_onnx_data_dir(const char *env_var, const char *rel, char *buf, size_t size);

/*! The case folders a test must find: dir = opp_onnx_data_dir(env_var, rel),
 * then opp_onnx_case_list(dir). With fewer than min_cases (or an unreadable
 * dir) nothing is kept and err says which folder, why, and which variable to
 * set; a test fails loudly on it instead of passing having read nothing.
 * @return : the number of cases (>= min_cases, *paths set: free with
 *           opp_onnx_case_list_free()), or -1 with a message in err. */
int opp_onnx_case_folder(const char *env_var, const char *rel, int min_cases, char *dir,
                         size_t dir_size, char ***paths, char *err, size_t err_size);

/*! The last component of a case path ("dir/name" -> "name"). */
const char *opp_onnx_case_name(const char *path);

/* What opp_onnx_attention_compare() found. */
typedef struct opp_onnx_attention_result {
    int n_compared;                             /* outputs compared */
    int slots[OPP_A24_NUM_OUTPUTS];             /* their slots, ascending */
    opp_cmp_stats_t stats[OPP_A24_NUM_OUTPUTS]; /* per compared output */
    size_t mismatches;                          /* elements differing in bits, all outputs */
    uint64_t max_ulp;                           /* largest ulp distance, all outputs */
} opp_onnx_attention_result_t;

/*! Compares every output the case expects (Y and the named optional ones)
 * with the buffers in t, bit for bit (+0 and -0 differ; any NaN equals any
 * NaN), recording the ulp distances. Prints the first max_reported mismatches
 * of each output to stderr as "<prefix><output>[index]: got .. want .. ulp n".
 * @return : 0 all bit-identical, 1 some element differs, -1 with a message in
 *           err when an expected output has no buffer in t. */
int opp_onnx_attention_compare(const opp_onnx_case_t *c, const opp_ref_attention24_desc_t *desc,
                               const opp_ref_attention24_tensors_t *t, const char *prefix,
                               size_t max_reported, opp_onnx_attention_result_t *r, char *err,
                               size_t err_size);

/*! One-line text of r: "Y, present_key: bit-identical" or
 * "Y, qk_matmul_output: 3 mismatches, max 2 ulp (qk_matmul_output 3)". */
void opp_onnx_attention_result_str(const opp_onnx_attention_result_t *r, char *buf, size_t size);

/* ======   logical_batch.txt (testdata/README.md)   ====== */

typedef struct opp_onnx_sidecar {
    int32_t format; /* 1 */
    char name[OPP_ONNX_NAME_MAX];
    uint64_t seed;
    opp_dtype_t dtype;  /* f32, f16 or bf16 */
    int32_t input_rank; /* layout: 4d -> 4, 3d -> 3 */
    int32_t batch, num_heads, kv_num_heads, head_size, v_head_size;
    float scale; /* 0: default */
    int32_t is_causal;
    float softcap;     /* 0: off */
    int32_t *lq, *lkv; /* [batch], malloc'ed */
    double q_poison;   /* magnitude P as stored in the dtype */
    double kv_poison;
} opp_onnx_sidecar_t;

/*! Reads a logical_batch.txt. Every key of the format must appear exactly
 * once, in order; values are separated by single spaces; numbers must parse
 * completely and be in range (lengths >= 0, batch/heads/sizes >= 1, scale and
 * softcap float32 values >= 0, poison finite > 0).
 * @out    : written on success; zeroed on failure. Free with
 *           opp_onnx_sidecar_free().
 * @return : 0 on success, -1 with "<path>:<line>: <key>: <reason>" in err. */
int opp_onnx_sidecar_load(const char *path, opp_onnx_sidecar_t *out, char *err, size_t err_size);

/*! As opp_onnx_sidecar_load on len bytes of text; where names the source. */
int opp_onnx_sidecar_parse(const char *text, size_t len, const char *where, opp_onnx_sidecar_t *out,
                           char *err, size_t err_size);

/*! Frees lq/lkv and zeroes *s. Accepts NULL and zeroed structs. */
void opp_onnx_sidecar_free(opp_onnx_sidecar_t *s);

#endif /* OPP_HARNESS_ONNX_ATTENTION_CASE_H */
