/*
 * dispatch.c - the dispatch table and its one selection function
 * (lib/internal/dispatch.h). Pure host C: no CUDA symbol, so the claim and
 * descriptor checks and the kernel query link without cudart.
 *
 * The rows come from kernels/kernel_list.h (the list that also generates
 * the kernel instantiations). Selection filters the rows of an algorithm
 * family step by step - dtype, head sizes, alignment, strides, architecture
 * - and the first step that leaves no row names the reason, so a runtime
 * can log why it falls back.
 */
#include <inttypes.h>
#include <stdio.h>

#include "lib/internal/check.h"
#include "lib/internal/dispatch.h"

// --- the table

#define OPP__KERNEL_ROW_(name, ALGO, DTYPE, DMAX, ALIGN, SM, BM, BN, THREADS, SMEM) \
    {OPP__KERNEL_##name,                                                            \
     OPP_ALGO_##ALGO,                                                               \
     OPP_DTYPE_##DTYPE,                                                             \
     DMAX,                                                                          \
     ALIGN,                                                                         \
     SM,                                                                            \
     BM,                                                                            \
     BN,                                                                            \
     THREADS,                                                                       \
     SMEM,                                                                          \
     #name},
const opp__kernel_row_t opp__kernel_table[] = {OPP__KERNEL_LIST(OPP__KERNEL_ROW_)};
#undef OPP__KERNEL_ROW_

size_t opp__arch_smem_limit(int32_t sm) {
    if (sm < 80) {
        return 0;
    }
    if (sm == 90) {
        return 232448; /* 227 KB */
    }
    if (sm == 80 || sm == 87) {
        return 166912; /* 163 KB */
    }
    return 101376; /* 99 KB: sm_86, sm_89 and, conservatively, newer GPUs */
}

// --- selection

static const char *algo_name(opp_algo_t algo) {
    switch (algo) {
    case OPP_ALGO_EXACT:
        return "EXACT";
    case OPP_ALGO_FAST:
        return "FAST";
    case OPP_ALGO_TF32X3:
        return "TF32X3";
    default:
        return "AUTO";
    }
}

/* The steps a row must pass, in the order their failures are reported.
 * STEP_VARIANT (lowest: never the reported reason) is a Hopper FAST row that
 * does not apply - another GPU, G > BM, or strides beyond a TMA tensor map -
 * where the family's next rows serve. */
typedef enum step {
    STEP_VARIANT,
    STEP_DTYPE,
    STEP_HEAD_SIZE,
    STEP_ALIGN,
    STEP_STRIDE,
    STEP_ARCH,
    STEP_OK
} step_t;

static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

/* 1 if every stride of p's tensors is a multiple of align elements. */
static int strides_aligned(const opp__problem_t *p, int32_t align) {
    const opp__tensor_t *t[4] = {&p->q, &p->k, &p->v, &p->out};
    for (int i = 0; i < 4; ++i) {
        if (t[i]->row % align != 0 || t[i]->head % align != 0 || t[i]->batch % align != 0) {
            return 0;
        }
    }
    return 1;
}

/* 1 if every stride of q, k and v is below 2^40 bytes at 16 bits per element:
 * the limit of a TMA tensor map (OPP__TMA_STRIDE_BYTES_LIMIT), through which
 * the SM 90 rows load them (a larger stride, which validation accepts, takes
 * a flash row). */
static int tma_strides_fit(const opp__problem_t *p) {
    const int64_t limit = OPP__TMA_STRIDE_BYTES_LIMIT / 2;
    const opp__tensor_t *t[3] = {&p->q, &p->k, &p->v};
    for (int i = 0; i < 3; ++i) {
        if (t[i]->row >= limit || t[i]->head >= limit || t[i]->batch >= limit) {
            return 0;
        }
    }
    return 1;
}

/* 1 if row r's code runs on compute capability sm (0: some architecture):
 * an SM 90 row (sm_90a code) only on 9.0. Shared memory is checked apart. */
static int row_runs_on(const opp__kernel_row_t *r, int32_t sm) {
    return r->sm != 90 || sm == 0 || sm == 90;
}

/* 1 if row r is a Hopper FAST row (kernels/hopper_attention.cuh): it loads
 * through TMA tensor maps and packs at most BM query heads of a group, and
 * the flash rows after it serve what it does not. The TF32X3 rows, also
 * sm_90a code, load with cp.async (any G, any stride) and have no
 * fallback: only row_runs_on() applies to them. */
static int row_is_hopper_fast(const opp__kernel_row_t *r) {
    return r->sm == 90 && r->algo == OPP_ALGO_FAST;
}

/* How far row r gets for problem p on sm (0: any architecture). */
static step_t row_step(const opp__kernel_row_t *r, const opp__problem_t *p, int32_t sm) {
    if (r->dtype != p->a.dtype) {
        return STEP_DTYPE;
    }
    if (max64(p->a.d, p->a.dv) > r->dmax) {
        return STEP_HEAD_SIZE;
    }
    if (p->a.d % r->align != 0 || p->a.dv % r->align != 0) {
        return STEP_ALIGN;
    }
    if (p->batch > 0 && !strides_aligned(p, r->align)) {
        return STEP_STRIDE;
    }
    if (row_is_hopper_fast(r) && (!row_runs_on(r, sm) || p->a.g > r->bm || !tma_strides_fit(p))) {
        return STEP_VARIANT;
    }
    if (!row_runs_on(r, sm)) {
        return STEP_ARCH; /* reason(): the architecture the row's code needs */
    }
    if (sm != 0 && r->smem_bytes > opp__arch_smem_limit(sm)) {
        return STEP_ARCH;
    }
    return STEP_OK;
}

/* Selection within one algorithm family: the first row that passes every
 * step (*out), else NULL with *best the row that got furthest (NULL when
 * the family has no row) and its step. Records nothing. */
static void select_family(opp_algo_t algo, const opp__problem_t *p, int32_t sm,
                          const opp__kernel_row_t **out, const opp__kernel_row_t **best,
                          step_t *best_step) {
    *out = NULL;
    *best = NULL;
    *best_step = STEP_VARIANT;
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *r = &opp__kernel_table[i];
        if (r->algo != algo) {
            continue;
        }
        const step_t s = row_step(r, p, sm);
        if (s == STEP_OK) {
            *out = r;
            return;
        }
        if (*best == NULL || s > *best_step ||
            (s == STEP_ARCH && *best_step == STEP_ARCH && r->smem_bytes < (*best)->smem_bytes)) {
            *best = r;
            *best_step = s;
        }
    }
}

/* The largest DMAX of family algo's rows of dtype whose shared memory fits
 * sm (0: none fits). */
static int32_t arch_dmax(opp_algo_t algo, opp_dtype_t dtype, int32_t sm) {
    int32_t dmax = 0;
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *r = &opp__kernel_table[i];
        if (r->algo == algo && r->dtype == dtype && row_runs_on(r, sm) &&
            r->smem_bytes <= opp__arch_smem_limit(sm) && r->dmax > dmax) {
            dmax = r->dmax;
        }
    }
    return dmax;
}

/* Records why no row of family algo that serves p's head sizes fits the
 * shared memory of sm: best is the smallest of them. */
static opp_status_t arch_reason(opp_algo_t algo, const opp__problem_t *p, int32_t sm,
                                const opp__kernel_row_t *best) {
    const char *fam = algo_name(algo);
    const int32_t dmax = arch_dmax(algo, p->a.dtype, sm);
    char serves[96] = "";
    if (dmax > 0) {
        snprintf(serves, sizeof(serves), "; on it, %s serves %s head sizes up to %" PRId32, fam,
                 opp_dtype_name(p->a.dtype), dmax);
    }
    OPP_RETURN_IF(1, OPP_STATUS_NOT_SUPPORTED_ARCH,
                  "no %s kernel fits compute capability %d.%d for head_size = %" PRId32
                  ", v_head_size = %" PRId32 ": the smallest that serves them, %s, needs %zu "
                  "bytes of shared memory per block, more than the %zu it offers%s",
                  fam, sm / 10, sm % 10, p->a.d, p->a.dv, best->name, best->smem_bytes,
                  opp__arch_smem_limit(sm), serves);
    return OPP_STATUS_INTERNAL_ERROR;
}

/* buf := the dtypes family algo's rows serve, in table order ("f32 only",
 * "f32, f16, bf16"). */
static void family_dtypes(opp_algo_t algo, char *buf, size_t size) {
    int seen[32] = {0}, n = 0;
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < OPP__KERNEL_COUNT; ++i) {
        const opp__kernel_row_t *r = &opp__kernel_table[i];
        if (r->algo != algo || (unsigned)r->dtype >= 32u || seen[r->dtype]) {
            continue;
        }
        seen[r->dtype] = 1;
        const int k =
            snprintf(buf + len, size - len, "%s%s", n++ > 0 ? ", " : "", opp_dtype_name(r->dtype));
        len += k > 0 && (size_t)k < size - len ? (size_t)k : 0;
    }
    if (n == 1) {
        snprintf(buf + len, size - len, " only");
    }
}

/* Records why family `algo` has no row for p on sm (see select_family). */
static opp_status_t reason(opp_algo_t algo, const opp__problem_t *p, int32_t sm,
                           const opp__kernel_row_t *best, step_t best_step) {
    const char *fam = algo_name(algo);
    OPP_RETURN_IF(best == NULL, OPP_STATUS_NOT_SUPPORTED_ALGO,
                  "algo = %s: this build has no %s kernel", fam, fam);
    const opp__attrs_t *a = &p->a;
    char served[64];
    switch (best_step) {
    case STEP_DTYPE:
        family_dtypes(algo, served, sizeof(served));
        OPP_RETURN_IF(1, OPP_STATUS_NOT_SUPPORTED_DTYPE,
                      "no %s kernel for q_dtype = %s (%s serves %s)", fam, opp_dtype_name(a->dtype),
                      fam, served);
        break;
    case STEP_HEAD_SIZE:
        OPP_RETURN_IF(1, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "no %s kernel for head_size = %" PRId32 ", v_head_size = %" PRId32
                      " (%s serves head sizes up to %" PRId32 ")",
                      fam, a->d, a->dv, fam, best->dmax);
        break;
    case STEP_ALIGN:
        OPP_RETURN_IF(1, OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE,
                      "no %s kernel for head_size = %" PRId32 ", v_head_size = %" PRId32
                      ": %s needs multiples of %" PRId32,
                      fam, a->d, a->dv, fam, best->align);
        break;
    case STEP_STRIDE:
        OPP_RETURN_IF(1, OPP_STATUS_NOT_SUPPORTED_FEATURE,
                      "no %s kernel for these strides: %s needs every row stride to be a "
                      "multiple of %" PRId32 " elements (q %" PRId64 ", k %" PRId64 ", v %" PRId64
                      ", out %" PRId64 ")",
                      fam, fam, best->align, p->q.row, p->k.row, p->v.row, p->out.row);
        break;
    default:
        OPP_RETURN_IF(best_step == STEP_ARCH && !row_runs_on(best, sm),
                      OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "no %s kernel for compute capability %d.%d: %s needs compute capability "
                      "9.0 (H100 / H200; its kernels are sm_90a code)",
                      fam, sm / 10, sm % 10, fam);
        OPP_RETURN_IF(sm < 80, OPP_STATUS_NOT_SUPPORTED_ARCH,
                      "compute capability %d.%d is not supported: %s kernels need 8.0 or newer",
                      sm / 10, sm % 10, fam);
        return arch_reason(algo, p, sm, best);
    }
    return OPP_STATUS_INTERNAL_ERROR;
}

opp_status_t opp__dispatch_select(const opp__problem_t *p, int32_t sm,
                                  const opp__kernel_row_t **row) {
    const opp__kernel_row_t *best;
    step_t step;
    if (p->a.algo == OPP_ALGO_AUTO) { /* FAST when it serves p, quietly EXACT otherwise */
        select_family(OPP_ALGO_FAST, p, sm, row, &best, &step);
        if (*row != NULL) {
            return OPP_STATUS_SUCCESS;
        }
    }
    /* AUTO ends in EXACT (never TF32X3: opt-in); EXACT, FAST and TF32X3 stay
     * within their own family */
    const opp_algo_t algo = p->a.algo == OPP_ALGO_AUTO ? OPP_ALGO_EXACT : p->a.algo;
    select_family(algo, p, sm, row, &best, &step);
    return *row != NULL ? OPP_STATUS_SUCCESS : reason(algo, p, sm, best, step);
}

opp_status_t opp__dispatch_claim(const opp__attrs_t *a) {
    opp__problem_t claim = {0}; /* batch 0: attributes only */
    claim.a = *a;
    const opp__kernel_row_t *row;
    return opp__dispatch_select(&claim, 0, &row);
}

// --- the public kernel query (both descriptors)

opp_status_t opp__dispatch_query_args(int32_t sm, const char **kernel_name) {
    if (kernel_name != NULL) {
        *kernel_name = NULL;
    }
    /* parameter order: sm_arch, then kernel_name */
    OPP_RETURN_IF(sm <= 0, OPP_STATUS_BAD_PARAM,
                  "sm_arch = %" PRId32 " must be a compute capability such as 80 or 90", sm);
    OPP_RETURN_IF(kernel_name == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "kernel_name is NULL");
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp__dispatch_name(const opp__problem_t *p, int32_t sm, const char **kernel_name) {
    const opp__kernel_row_t *row;
    OPP_TRY(opp__dispatch_select(p, sm, &row));
    *kernel_name = row->name;
    return OPP_STATUS_SUCCESS;
}
