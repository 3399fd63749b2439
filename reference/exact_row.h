/*
 * exact_row.h - query rows of exact attention on the host, in the fixed
 * order of numerics/exact_order.h. Shared by both CPU references, so the
 * packed and the padded reference differ only in how they lay out and mask
 * the keys - which is exactly what the L0 agreement test checks.
 *
 * The keys and values of one (sequence, kv head) are widened to double once
 * into an opp__exact_kv_t and then shared, read-only, by every query row and
 * every thread that works on them:
 *   kt : [ceil(n / OPP__EXACT_KB), D, OPP__EXACT_KB] scaled keys, blocks of
 *        OPP__EXACT_KB keys stored column-interleaved (key j of a block is
 *        lane j % OPP__EXACT_KB) so several dot products run side by side;
 *        the lanes past n are zero.
 *   vd : [n, dv_pad] values, dv_pad = Dv rounded up to OPP__EXACT_KB; the
 *        columns past Dv are zero.
 * The layout changes where operands sit, never the order in which a sum is
 * formed: each x_j and each y_v is still one fma chain in exact_order.h's
 * order, so every kernel variant (portable C, AVX2+FMA) gives the same bits.
 */
#ifndef OPP_REFERENCE_EXACT_ROW_H
#define OPP_REFERENCE_EXACT_ROW_H

#include <stddef.h>
#include <stdint.h>

/* Keys per interleaved block of opp__exact_kv_t.kt (also dv_pad's multiple). */
#define OPP__EXACT_KB 8

/* Query rows the kernels take at once (they share every K tile and V chunk
 * they read). */
#define OPP__EXACT_MAX_ROWS 16

/* Widened keys and values of one (sequence, kv head); see the file comment. */
typedef struct opp__exact_kv {
    int32_t n;              /* keys (and value rows) */
    int32_t d, dv, dv_pad;  /* D, Dv, Dv rounded up to OPP__EXACT_KB */
    int32_t last_nonfinite; /* largest j whose scaled key row has a NaN or inf; -1: none */
    double *kt;             /* [ceil(n / KB), D, KB] */
    double *vd;             /* [n, dv_pad] */
} opp__exact_kv_t;

/* Doubles of memory an opp__exact_kv_t of n keys needs (>= 1). */
size_t opp__exact_kv_doubles(int32_t n, int32_t d, int32_t dv);

/* Lays kv out over mem (opp__exact_kv_doubles(n, d, dv) doubles) and zeroes
 * it: until set, a key or value row is zero. */
void opp__exact_kv_init(opp__exact_kv_t *kv, double *mem, int32_t n, int32_t d, int32_t dv);

/* Key j = (double)src[d] * s, d < D (src: host, D elements of dtype);
 * updates last_nonfinite. */
void opp__exact_kv_set_key(opp__exact_kv_t *kv, int32_t j, const void *src, int dtype, double s);

/* Value row j = (double)src[v], v < Dv. */
void opp__exact_kv_set_value(opp__exact_kv_t *kv, int32_t j, const void *src, int dtype);

/* Scales and widens one row: dst[d] = (double)src[d] * s, d < n.
 * src: host, n elements of dtype (ONNX value 1, 10 or 16).
 * @return : 1 if every dst[d] is finite, else 0. */
int opp__exact_load_scaled(double *dst, const void *src, int32_t n, int dtype, double s);

/* The row kernels. One set of portable C and, on x86-64 CPUs with AVX2 and
 * FMA, one set with vector intrinsics; both follow exact_order.h and give
 * identical bits. opp__exact_row_ops() picks the fastest one this CPU runs,
 * unless the environment variable OPP_REF_SIMD is "0" (portable C only). */
typedef struct opp__exact_row_ops {
    /* Scores of a block of `rows` (<= OPP__EXACT_MAX_ROWS) query rows:
     * x[r * ld + j] = softcap(dot(qs + r * D, key j)) for j < n[r] <= kv->n;
     * c: the softcap (0: off). qs: [rows, D] scaled query rows. */
    void (*scores)(const double *qs, int32_t rows, const int32_t *n, const opp__exact_kv_t *kv,
                   double c, double *x, size_t ld);
    /* Per row r: softmax over x[r * ld + 0 .. n[r]) and y = P V in the fixed
     * chunked order.
     * x  : [rows, ld] final logits; x == -inf marks a key that is not
     *      visible: its V row is never read. n[r] <= kv->n.
     * y  : [rows, kv->dv_pad] outputs (double, before the final rounding).
     * p  : [rows, ld], required: receives the probabilities (0 for keys that
     *      are not visible); also the scratch for e_j.
     * A row with no visible key (or whose max is -inf) gets y and p all +0. */
    void (*softmax_pv)(const double *x, int32_t rows, const int32_t *n, const opp__exact_kv_t *kv,
                       double *y, double *p, size_t ld);
} opp__exact_row_ops_t;

const opp__exact_row_ops_t *opp__exact_row_ops(void);

/* The two kernel sets (exact_kernels.c, exact_kernels_avx2.c); the AVX2 one
 * is NULL where it is not compiled in. Use opp__exact_row_ops(). */
extern const opp__exact_row_ops_t *const opp__exact_row_ops_portable;
extern const opp__exact_row_ops_t *const opp__exact_row_ops_avx2;

#endif /* OPP_REFERENCE_EXACT_ROW_H */
