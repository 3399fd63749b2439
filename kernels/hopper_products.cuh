/*
 * hopper_products.cuh - the two matrix products of a consumer warpgroup of
 * the FAST path's Hopper kernel (kernels/hopper_attention.cuh), issued and
 * committed as one wgmma group each, not waited for:
 *   S  = Q K^T       SS-wgmma m64nBNk16 (m64n64 for the trimmed block's
 *                    first 64 keys), D / 16 steps, Q and K from shared memory
 *   O += P V         RS-wgmma m64nDBk16, P (the storage type) from registers,
 *                    V N-major from shared memory, BN / 16 steps (BN / 32);
 *                    with C::LSUM also lr += P 1, m64n8k16 of the same
 *                    fragments against 128 bytes of ones (no swizzle, both
 *                    core matrices the same): the rows' sums of the rounded P
 *                    (with C::LSUM_AHEAD in a group of their own, issued
 *                    before the next block's Q K^T: hop_issue_lsum)
 * With C::UNIFORM_DESC the consumer and the stage are made compile-time
 * indices (hop_uniform_switch): the descriptors are then uniform, one
 * uniform add a k16 step (hop_desc_at), no per-operand R2UR; else they are
 * built at each issue from the fenced addresses.
 */
#ifndef OPP_KERNELS_HOPPER_PRODUCTS_CUH
#define OPP_KERNELS_HOPPER_PRODUCTS_CUH

#include <stdint.h>

#include "kernels/hopper_config.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/wgmma_ops.cuh"

/* S = Q K^T of consumer c's 64 rows (sc: [BN / 2] fp32 accumulators)
 * against the keys in stage s; HALF: their first 64 only. */
template <int DT, class C, bool HALF>
__device__ __forceinline__ void hop_issue_qk(float (&sc)[C::BN / 2], const hop_smem<C> &smem, int c,
                                             uint32_t s) {
    const uint32_t sq = smem.sq();
    /* qk's arguments: the descriptors' low words (LOW), else the
     * addresses (the per-issue form, and the trimmed product) */
    constexpr bool LOW = C::UNIFORM_DESC && !HALF;
    auto qk = [&](uint32_t qb, uint32_t kb) {
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < C::DB / 16; ++ks) {
            const uint32_t qo = (ks / 4) * C::Q_PANEL + (ks % 4) * 32,
                           ko = (ks / 4) * C::KV_PANEL + (ks % 4) * 32;
            uint64_t da, db;
            if constexpr (LOW) {
                da = hop_desc_at<1024>(qb, qo);
                db = hop_desc_at<1024>(kb, ko);
            } else {
                da = hop_desc_at<1024>(hop_desc_lo(qb + qo, 16), 0);
                db = hop_desc_at<1024>(hop_desc_lo(kb + ko, 16), 0);
            }
            if constexpr (HALF) { /* the first 64 keys */
                wgmma_ss_n64<DT>(reinterpret_cast<float(&)[32]>(sc), da, db, ks > 0 ? 1 : 0);
            } else if constexpr (C::BN == 128) {
                wgmma_ss_n128<DT>(sc, da, db, ks > 0 ? 1 : 0);
            } else if constexpr (C::BN == 96) {
                wgmma_ss_n96<DT>(sc, da, db, ks > 0 ? 1 : 0);
            } else {
                wgmma_ss_n64<DT>(sc, da, db, ks > 0 ? 1 : 0);
            }
        }
        wgmma_commit();
    };
    if constexpr (LOW) {
        hop_uniform_switch<C::NC>((uint32_t)c, [&](auto ci) {
            hop_uniform_switch<C::STAGES>(s, [&](auto si) {
                qk(hop_desc_lo(sq + decltype(ci)::value * 64 * 128, 16),
                   hop_desc_lo(smem.sk(decltype(si)::value), 16));
            });
        });
    } else { /* qk on the addresses */
        uint32_t qb = sq + c * 64 * 128, kb = smem.sk(s);
        hop_fence_reg(qb);
        hop_fence_reg(kb);
        qk(qb, kb);
    }
}

/* The descriptor of the 128 bytes of ones: address field only (no
 * swizzle; leading and stride byte offsets 0, so both core matrices of a
 * k16 step are the same 128 bytes). */
template <class C> __device__ __forceinline__ uint64_t hop_ones_desc(const hop_smem<C> &smem) {
    return (uint64_t)((smem.ones() & 0x3FFFFu) >> 4);
}

/* O += P V: o [DB / 2] fp32 accumulators, pa the A fragments of P (the
 * storage type), V in stage s; HALF: its first 64 keys only. With LSUM
 * (C::LSUM), lr [4] += the rows' sums of those P (lr[0], lr[1]: row lane /
 * 4 of the warp's 16, lr[2], lr[3]: that + 8), one m64n8k16 after each k16
 * step. */
template <int DT, class C, bool HALF, bool LSUM>
__device__ __forceinline__ void hop_issue_pv(float (&o)[C::DB / 2], float (&lr)[4],
                                             const uint32_t (&pa)[C::BN / 16][4],
                                             const hop_smem<C> &smem, uint32_t s) {
    const uint64_t d1 = hop_ones_desc(smem);
    auto pv = [&](uint32_t vb) {
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < (HALF ? C::BN / 32 : C::BN / 16); ++kk) {
            const uint64_t db =
                C::UNIFORM_DESC ? hop_desc_at<1024>(vb, kk * 2048)
                                : hop_desc_at<1024>(hop_desc_lo(vb + kk * 2048, C::KV_PANEL), 0);
            if constexpr (C::DB == 64) {
                wgmma_rs_n64<DT>(o, pa[kk], db, 1);
            } else if constexpr (C::DB == 128) {
                wgmma_rs_n128<DT>(o, pa[kk], db, 1);
            } else {
                wgmma_rs_n256<DT>(o, pa[kk], db, 1);
            }
            if constexpr (LSUM) {
                wgmma_rs_n8<DT>(lr, pa[kk], d1, 1);
            }
        }
        wgmma_commit();
    };
    if constexpr (C::UNIFORM_DESC) { /* pv on the descriptor's low word */
        hop_uniform_switch<C::STAGES>(
            s, [&](auto si) { pv(hop_desc_lo(smem.sv(decltype(si)::value), C::KV_PANEL)); });
    } else { /* pv on the address */
        uint32_t vb = smem.sv(s);
        hop_fence_reg(vb);
        pv(vb);
    }
}

/* lr += P 1 alone (C::LSUM_AHEAD): the rows' sums of the whole block's P
 * (pa), its own wgmma group, issued and committed, not waited for. */
template <int DT, class C>
__device__ __forceinline__ void hop_issue_lsum(float (&lr)[4], const uint32_t (&pa)[C::BN / 16][4],
                                               const hop_smem<C> &smem) {
    const uint64_t d1 = hop_ones_desc(smem);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C::BN / 16; ++kk) {
        wgmma_rs_n8<DT>(lr, pa[kk], d1, 1);
    }
    wgmma_commit();
}

#endif /* OPP_KERNELS_HOPPER_PRODUCTS_CUH */
