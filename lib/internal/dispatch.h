/*
 * dispatch.h - the host-side dispatch table: which kernel runs a problem on
 * a given architecture, or why none does. Plain C with no CUDA symbol
 * (lib/dispatch.c), so claim_check, desc_check and the kernel query link
 * without cudart. Its rows are generated from kernels/kernel_list.h, the one
 * list that also generates the kernel instantiations; support is decided
 * here and nowhere else.
 */
#ifndef OPP_INTERNAL_DISPATCH_H
#define OPP_INTERNAL_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/internal/problem.h"
#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Row ids: OPP__KERNEL_<name>, in list order. */
#define OPP__KERNEL_ID_(name, ...) OPP__KERNEL_##name,
#include "kernels/kernel_list.h"
typedef enum opp__kernel_id {
    OPP__KERNEL_LIST(OPP__KERNEL_ID_) OPP__KERNEL_COUNT
} opp__kernel_id_t;
#undef OPP__KERNEL_ID_

/* One row of the table (kernels/kernel_list.h explains the fields). */
typedef struct opp__kernel_row {
    opp__kernel_id_t id;
    opp_algo_t algo; /* EXACT, FAST or TF32X3 */
    opp_dtype_t dtype;
    int32_t dmax;  /* serves D, Dv <= dmax */
    int32_t align; /* D, Dv and strides: multiples of align elements */
    int32_t sm;    /* 80: any GPU from 8.0 whose shared memory fits; 90: 9.0 only */
    int32_t bm, bn, threads;
    size_t smem_bytes;
    const char *name;
} opp__kernel_row_t;

/* The table, OPP__KERNEL_COUNT rows in dispatch order. */
extern const opp__kernel_row_t opp__kernel_table[];

/* Largest dynamic shared memory per block (bytes) of compute capability sm
 * (major * 10 + minor): 227 KB for 9.0, 163 KB for 8.0 and 8.7, 99 KB for
 * the other 8.x and for newer architectures (which run the compute_80 PTX;
 * the conservative bound keeps every tile launchable). 0 below 8.0. */
size_t opp__arch_smem_limit(int32_t sm);

/*! opp__dispatch_select() :
 * The kernel that runs problem p (or, with p->batch == 0, only its
 * claim-time attributes) on compute capability sm; sm == 0 means "on some
 * architecture the library supports" (claim time). AUTO tries FAST rows,
 * then EXACT rows (never TF32X3 rows); EXACT, FAST and TF32X3 take only
 * their own family's rows. A row fits when algo and dtype match, D and Dv
 * are <= its DMAX, D, Dv and (for a full problem) every stride are
 * multiples of its ALIGN, its shared memory fits sm, and an SM 90 row
 * (sm_90a code) also needs sm == 90 (or 0); an SM 90 FAST row (the Hopper
 * kernel, TMA loads) also needs G <= its BM and strides a TMA tensor map
 * holds, else the family's next rows serve. The first fitting row wins.
 * @return : SUCCESS with *row set, or NOT_SUPPORTED_ALGO / _DTYPE /
 *           _HEAD_SIZE / _FEATURE / _ARCH with the reason a runtime would
 *           log (which field and value, what the library offers). */
opp_status_t opp__dispatch_select(const opp__problem_t *p, int32_t sm,
                                  const opp__kernel_row_t **row);

/* Whether some kernel serves the claim-time attributes a on some GPU the
 * library supports: opp__dispatch_select of a problem of batch 0 carrying
 * a, on sm 0 (the descriptor checks' claim-time step). @return : its
 * status. */
opp_status_t opp__dispatch_claim(const opp__attrs_t *a);

/* The kernel query's argument checks, in parameter order: sm > 0, then
 * kernel_name not NULL (set to NULL when it is not). @return : SUCCESS,
 * BAD_PARAM or BAD_PARAM_NULL_POINTER. */
opp_status_t opp__dispatch_query_args(int32_t sm, const char **kernel_name);

/* *kernel_name = the name of the row opp__dispatch_select() picks for p on
 * sm. @return : its status. */
opp_status_t opp__dispatch_name(const opp__problem_t *p, int32_t sm, const char **kernel_name);

#ifdef __cplusplus
}
#endif
#endif /* OPP_INTERNAL_DISPATCH_H */
