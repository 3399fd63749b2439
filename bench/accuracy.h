/*
 * accuracy.h - how far a FAST output is from the EXACT one (DESIGN.md
 * section 4: the fast path is not bit-identical; its error against the
 * exact result is measured), on host buffers of f32 / f16 / bf16, in
 * double. Host code, no CUDA; CPU-tested by tests/bench_accuracy_test.c.
 *
 * The check that oppbench applies before it times FAST: no NaN or inf in
 * the FAST output, and max |fast - exact| <= BENCH_ERR_REL * max |exact| +
 * BENCH_ERR_ABS. A correct fp32-accumulating kernel stays around one
 * rounding of the output dtype (~4e-3 relative for bf16); a wrong one
 * (a missed key block, a wrong mask, a wrong scale) gives O(1) errors.
 */
#ifndef OPP_BENCH_ACCURACY_H
#define OPP_BENCH_ACCURACY_H

#include <stddef.h>

#include "lib/oppacked.h"

#define BENCH_ERR_REL 0.05
#define BENCH_ERR_ABS 1e-3

typedef struct bench_err {
    size_t n;         /* elements compared */
    size_t nonfinite; /* NaN or inf in the tested output */
    size_t want_bad;  /* NaN or inf in the exact output (never, once validated) */
    size_t worst;     /* index of the largest |got - want| */
    double max_abs;   /* max |got - want| over finite pairs */
    double rms;       /* sqrt(mean((got - want)^2)) over finite pairs */
    double want_max;  /* max |want| */
    double bound;     /* BENCH_ERR_REL * want_max + BENCH_ERR_ABS */
} bench_err_t;

/*! bench_err_measure() :
 * Compares n elements of got (the tested output) with want (the exact one),
 * both host buffers of dtype (F32, F16 or BF16), and fills e.
 * @return : 1 when got passes the check in the file comment, else 0. */
int bench_err_measure(const void *got, const void *want, size_t n, opp_dtype_t dtype,
                      bench_err_t *e);

/*! bench_err_describe() :
 * One line for a validation column: "ok: max_abs 3.9e-03 rms 4.1e-04" or
 * "FAILED: 12 NaN/inf of 1024 elems" or "FAILED: max_abs 0.71 > bound
 * 0.053 (elem 17; rms 0.2)". ok is bench_err_measure()'s result. */
void bench_err_describe(const bench_err_t *e, int ok, char *buf, size_t size);

/*! bench_count_nonfinite() :
 * @return : how many of the n dtype elements at buf are NaN or inf. */
size_t bench_count_nonfinite(const void *buf, size_t n, opp_dtype_t dtype);

#endif /* OPP_BENCH_ACCURACY_H */
