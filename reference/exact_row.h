/*
 * exact_row.h - one query row of exact attention on the host, in the fixed
 * order of numerics/exact_order.h. Shared by both CPU references, so the
 * packed and the padded reference differ only in how they lay out and mask
 * the keys - which is exactly what the L0 agreement test checks.
 */
#ifndef OPP_REFERENCE_EXACT_ROW_H
#define OPP_REFERENCE_EXACT_ROW_H

#include <stdint.h>

/* Scales and widens one row: dst[d] = (double)src[d] * s, d < n.
 * src: host, n elements of dtype (ONNX value 1, 10 or 16). */
void opp__exact_load_scaled(double *dst, const void *src, int32_t n, int dtype, double s);

/* Widens one row without scaling: dst[d] = (double)src[d]. */
void opp__exact_load(double *dst, const void *src, int32_t n, int dtype);

/* Applies softcap (c > 0) to a score: c * tanh(x / c); c == 0 returns x. */
double opp__exact_softcap(double x, double c);

/* Softmax over x[0..n) and y = P V in the fixed chunked order.
 * x  : [n] final logits; x[j] == -inf marks a key that is not visible: its
 *      V row is never read.
 * vd : [n, dv] values as doubles, row j at vd + j * dv.
 * y  : [dv] output (double, before the final rounding).
 * p  : [n], required: receives the probabilities (0 for keys that are not
 *      visible); also the scratch for e_j.
 * When no key is visible (or the max is -inf), y and p are all +0. */
void opp__exact_softmax_pv(const double *x, int32_t n, const double *vd, int32_t dv, double *y,
                           double *p);

#endif /* OPP_REFERENCE_EXACT_ROW_H */
