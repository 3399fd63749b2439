/*
 * hopper_epilogue.cuh - the epilogue of one item of the FAST path's Hopper
 * kernel (kernels/hopper_attention.cuh), run by each consumer warpgroup on
 * its 64 rows once the item's last P V retired: O / l and the LSE, only
 * rows of the sequence, columns < Dv.
 *   out [total_q | B*S_q rows, Hq, Dv]   lse [Hq, total_q] or [B, Hq, S_q]
 * At DB <= 128 (TMA_O), with out's map, G dividing 64 and all of this
 * consumer's 64 / G tokens in the sequence (of this launch): O / l into
 * this consumer's part of the O tile in shared memory, then one TMA store
 * per panel (box {64 columns, G heads, 64 / G tokens}: the tensor's bounds
 * clip columns >= Dv), so no register waits on the stores; else from
 * registers, row by row. Either way the same values: pack(o inv) of
 * flash_store_row (kernels/softmax_rows.cuh).
 */
#ifndef OPP_KERNELS_HOPPER_EPILOGUE_CUH
#define OPP_KERNELS_HOPPER_EPILOGUE_CUH

#include <stdint.h>

#include "kernels/flash_config.cuh"
#include "kernels/hopper_config.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/hopper_trace.cuh"
#include "kernels/softmax_rows.cuh"

/* Consumer c's thread ctid (0 .. CTHREADS - 1; lane: quad row qr, column
 * pair qc; warp wq of the consumer) stores its rows rbase and rbase + 8 of
 * the item whose slot is sa: o [DB / 8][4] fp32 accumulators, f and l the
 * rows' frame (flash_row_frame) and sum in it (l summed over the quad
 * here), lr the rounded P's row sums (C::LSUM, kernels/hopper_products.cuh).
 * base: the block's aligned shared memory; g, bmt: the GQA group and the
 * tokens a tile. tr / tlead: the trace. */
template <int DT, class C>
__device__ __forceinline__ void
hop_epilogue(const hop_maps &maps, const flash_args &a, uint32_t base, uint32_t sa,
             const float (&o)[C::DB / 2], const float (&f)[2], const float (&l)[2],
             const float (&lr)[4], int c, int ctid, int wq, int qr, int qc, int32_t rbase,
             int32_t g, int32_t bmt, hop_tracer &tr, bool tlead) {
    const int4 who = hop_ld_shared_v4(sa), geo = hop_ld_shared_v4(sa + 16);
    const int32_t r0 = who.x, thk = who.y, t0 = geo.z, ntok = geo.w;
    const bool packed = a.cu_q != NULL;
    const int64_t lse_base = packed ? (int64_t)r0 : (int64_t)r0 * a.lse_batch;
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float sum = flash_quad_sum(l[h]);
        /* the divisor (C::LSUM): the fp32 P's sum, the rounded P's (lr, a
         * whole row's already), or their mean; the LSE takes the first */
        inv[h] = flash_row_inv(C::LSUM == 0   ? sum
                               : C::LSUM == 1 ? lr[2 * h]
                                              : 0.5f * (sum + lr[2 * h]));
        const int32_t r = rbase + 8 * h;
        const int32_t tt = r / g, hg = r - tt * g;
        const int64_t tok = (int64_t)t0 + tt;
        if (a.lse != NULL && qc == 0 && tt < bmt && tok < ntok) {
            a.lse[lse_base + (int64_t)(thk * g + hg) * a.lse_head + tok] =
                flash_frame_lse(f[h], sum);
        }
    }
    if (tlead) {
        tr.ev(HT_EPI_LSE, 0);
    }
    const int32_t wtok = 64 / g; /* tokens of this consumer's rows when G divides 64 */
    if (C::TMA_O && maps.o_ok != 0 && wtok * g == 64 && t0 + (c + 1) * wtok <= ntok) {
        const uint32_t ot = base + C::O_OFF + (uint32_t)c * C::PANELS * C::O_PANEL;
        const bool lead = (ctid & 127) == 0;
        if (lead) {
            hop_bulk_wait<true>(); /* this consumer's last store read the tile */
        }
        hop_bar_sync(C::EPI_BAR + c, 128);
        if (tlead) {
            tr.ev(HT_EPI_BAR, 0);
        }
        const float(&of)[C::DB / 8][4] = reinterpret_cast<const float(&)[C::DB / 8][4]>(o);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const uint32_t rw = (uint32_t)(wq * 16 + qr + 8 * h); /* row of the half */
#pragma unroll
            for (int n = 0; n < C::DB / 8; ++n) {
                const uint32_t addr = ot + (uint32_t)(n / 8) * C::O_PANEL + rw * 128u +
                                      (((uint32_t)(n % 8) ^ (rw & 7u)) << 4) + 4u * qc;
                const uint32_t v =
                    flash_type<DT>::pack(of[n][2 * h] * inv[h], of[n][2 * h + 1] * inv[h]);
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
            }
        }
        hop_fence_proxy_async();
        hop_bar_sync(C::EPI_BAR + c, 128);
        if (tlead) {
            tr.ev(HT_EPI_ST, 0);
        }
        if (lead) {
            const int32_t row = (packed ? r0 : 0) + t0 + c * wtok;
#pragma unroll
            for (int p = 0; p < C::PANELS; ++p) {
                hop_tma_store_4d(&maps.o, ot + p * C::O_PANEL, p * 64, thk * g, row,
                                 packed ? 0 : r0);
            }
            hop_bulk_commit();
        }
    } else {
        const int64_t ob = packed ? (int64_t)r0 * a.out.row : (int64_t)r0 * a.out.batch;
        uint16_t *og = (uint16_t *)a.out.ptr + ob + (int64_t)thk * g * a.out.head;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int32_t r = rbase + 8 * h;
            const int32_t tt = r / g, hg = r - tt * g;
            const int64_t tok = (int64_t)t0 + tt;
            if (tt >= bmt || tok >= ntok) {
                continue;
            }
            flash_store_row<DT>(og + tok * a.out.row + hg * a.out.head,
                                reinterpret_cast<const float(&)[C::DB / 8][4]>(o), h, inv[h], qc,
                                a.dv);
        }
    }
}

#endif /* OPP_KERNELS_HOPPER_EPILOGUE_CUH */
