/*
 * hopper_split_tile.cuh - the TMA split kernel's tile for sliced splits
 * (OPP__SPLIT_SLICES 4, kernels/split_config.h): an item (split, sequence,
 * kv head) of at most 16 split rows, one m16 tile, whose four consumer
 * warps each run one slice of the split's key blocks on their own, with no
 * barrier between them until the item's end. Included by
 * kernels/hopper_split.cuh.
 *
 *   ring      the TMA split kernel's K / V ring (flash_narrow_ring): stage
 *             n % STAGES holds key block n of the block's count, 128-byte
 *             swizzled 64-column panels of 64 keys, K then V
 *   shared    (hop_slice_layout) Q [16][DB+8] 16-bit; the slices' partials
 *             O [4 slices][DB/8][4][32 lanes] float and (frame, sum)
 *             [4][2 rows][32 lanes] float2, in fragment order
 *   part_o [P, Hq, Dv] float32, part_ml [P, Hq] float2 (flash_split.cuh)
 *
 * Why: on small-batch decode the narrow tile's chain of work per key block
 * (three block barriers; S, the softmax and P V in turn, each spread over
 * the four warps) set the split kernel's time: 1.6 us a 64-key block on an
 * H100 (bench/RESULTS.md, thirty-ninth session), far below the bandwidth.
 * Here warp w takes slice w's blocks jb + w, jb + w + 4, ... in turn, from
 * the ring in the order the producer fills it, and runs on each the split
 * tile's own work for one m16 tile (kernels/flash_attention.cuh,
 * flash_tile<.., SPLIT>): S = Q K^T by flash_qk_at (k16 steps in order),
 * softcap, masks, flash_softmax_rows, O rescaled, P in the storage type,
 * O += P V (k16 steps in order), each value by the same operations in the
 * same order; the V rows past the sequence (another sequence's keys) are
 * zeroed first, as the cp.async loads leave them. Each warp releases its
 * stage when done with it (every lane arrives: empty barrier count 32).
 * The ring's stages are a multiple of four (kernels/split_config.h), so
 * within an item stage s serves one warp, which consumed the stage's
 * previous fill itself: its wait on the full barrier's phase parity is
 * never two fills ahead. At the item's end each
 * warp writes its slice's partial (O, its frame, its sum over the quad) to
 * shared memory, and after one barrier every warp folds the four slices in
 * order (flash_slice_fold) for its quarter of the columns - the fold the
 * split tile and the cp.async narrow tile run after each slice - so a
 * row's partial is the same bit for bit on every tile.
 */
#ifndef OPP_KERNELS_HOPPER_SPLIT_TILE_CUH
#define OPP_KERNELS_HOPPER_SPLIT_TILE_CUH

#include <stdint.h>

#include "kernels/flash_attention.cuh"
#include "kernels/hopper_ops.cuh"

/* The tile's shared memory for the split configuration C (bytes from its
 * base, 16-byte aligned): Q, then the slices' O, then their (frame, sum). */
template <class C> struct hop_slice_layout {
    static constexpr int SLICES = OPP__SPLIT_SLICES, N8 = C::DB / 8;
    static constexpr uint32_t Q = 0;
    static constexpr uint32_t O = (Q + OPP__SPLIT_NARROW_ROWS * C::PITCH * 2 + 15u) & ~15u;
    static constexpr uint32_t ML = O + (uint32_t)SLICES * N8 * 4 * 32 * 4;
    static constexpr uint32_t BYTES = ML + (uint32_t)SLICES * 2 * 32 * 8;
    static_assert(C::THREADS == 128 && N8 % 4 == 0, "four warps, whole 8-column groups each");
};

/* Item w of the split launch, whose split rows number at most 16, by the
 * four consumer warps (threads 0 .. 127; the block's other warps never
 * call it); smem: hop_slice_layout<C>::BYTES; red: 32 int64 of shared
 * memory; ring: the consumers' copy of the ring (ring->n: the key blocks
 * taken before this item, the same in every consumer thread). */
template <int DT, class C>
__device__ __forceinline__ void hop_split_tile(const flash_args &a, uint8_t *smem, int64_t w,
                                               long long *red, flash_narrow_ring<C> *ring) {
    typedef hop_slice_layout<C> L;
    typedef flash_narrow_ring<C> R;
    static_assert(sizeof(C) > 0 && OPP__SPLIT_SLICES == 4, "a slice per consumer warp");
    static_assert(R::STAGES % 4 == 0, "a stage serves one warp within an item (split_config.h)");
    constexpr int N8 = L::N8, ND = C::DB / 16, NB = C::BN / 16;
    const int64_t per = (int64_t)a.batch * a.hkv;
    const int32_t split = (int32_t)(w / per);
    const int32_t b = (int32_t)((w % per) / a.hkv), hk = (int32_t)(w % a.hkv);
    const int32_t g = a.g;
    const flash_seq seq = flash_seq_of(a, b);
    const int32_t lq = seq.lq, lkv = seq.lkv;
    const int32_t ts = flash_split_tokens(lq, lkv, g, a.split_min_kv);
    const int64_t nrows = (int64_t)lq * g;
    const int64_t r0 = (int64_t)(lq - ts) * g; /* nrows - r0 = ts G <= 16 */
    if (r0 >= nrows || (int64_t)split * OPP__SPLIT_KEYS >= lkv) {
        return; /* uniform; not reached: the producer hands out items with blocks */
    }
    /* the split tile's key range and masks, for the same rows: the narrow
     * tile's lines (kernels/flash_split_narrow.cuh). A helper shared by
     * both changed the narrow tile's machine code (tools/sass_diff.sh,
     * fortieth session), which was measured as it stands */
    const bool causal = a.is_causal != 0;
    const int32_t kend_tile = flash_key_end(causal, (nrows - 1) / g, lq, lkv);
    const int32_t kfull = flash_key_end(causal, r0 / g, lq, lkv); /* visible to every row */
    const int32_t nkb = (int32_t)(((int64_t)kend_tile + C::BN - 1) / C::BN);
    const int32_t jb = split * (OPP__SPLIT_KEYS / C::BN);
    const int32_t je = jb + OPP__SPLIT_KEYS / C::BN < nkb ? jb + OPP__SPLIT_KEYS / C::BN : nkb;
    const int64_t part0 = flash_seq_src{a.cu_q, a.cu_kv, a.nonpad, a.q_seqlen, g, a.split_min_kv}
                              .template split_offset<128>(b, red) +
                          (int64_t)split * ts;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int qr = lane >> 2, qc = lane & 3; /* fragment row / column pair */
    uint16_t *sq = (uint16_t *)(smem + L::Q);
    float *so = (float *)(smem + L::O);
    float2 *sml = (float2 *)(smem + L::ML);
    const int64_t t0 = r0 / g;
    const int32_t rem0 = (int32_t)(r0 - t0 * g);
    /* Q's 16 rows (past the sequence, columns past D: zeros); the barrier
     * also ends every warp's reads of the previous item's partials */
    const uint16_t *qg = (const uint16_t *)a.q.ptr + seq.qb + (int64_t)hk * g * a.q.head;
    flash_load_q<C, OPP__SPLIT_NARROW_ROWS>(sq, qg, a.q.row, a.q.head, a.d, r0, nrows, t0, rem0, g,
                                            a.fd_g, tid / C::CP, tid % C::CP);
    flash_cp_async_commit();
    flash_cp_async_wait<0>();
    flash_sync_n<128>();

    /* this warp's slice: running max, frame, sum (per thread, as the split
     * tile's), O of all Dv columns */
    float m[2] = {-INFINITY, -INFINITY}, f[2] = {0.0f, 0.0f}, l[2] = {0.0f, 0.0f};
    float o[N8][4];
#pragma unroll
    for (int n = 0; n < N8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            o[n][e] = 0.0f;
        }
    }
    const float sl = a.cap_log2 != 0.0f ? 1.0f : a.scale_log2;
    const uint32_t q_lane = flash_smem_addr(sq + (lane & 15) * C::PITCH + (lane >> 4) * 8);
    const uint32_t n0 = ring->n;
    for (int32_t i = warp; jb + i < je; i += OPP__SPLIT_SLICES) {
        const int32_t j = jb + i;
        const uint32_t n = n0 + (uint32_t)i, st = n % R::STAGES;
        const uint32_t tk = ring->k(st), tv = ring->v(st);
        hop_mbar_wait(ring->full(st), (n / R::STAGES) & 1u);

        /* S = Q K_j^T, the split tile's products (one m16 tile, NB key pairs) */
        float s1[1][C::BN / 8][4];
#pragma unroll
        for (int n8 = 0; n8 < C::BN / 8; ++n8) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s1[0][n8][e] = 0.0f;
            }
        }
        flash_qk_at<DT, C::DB, 1, NB, C::PITCH, false>(s1, q_lane, a.d, [&](int n2, int ks) {
            return R::swz(tk, n2 * 16 + (lane & 7) + (lane >> 4) * 8, ks * 2 + ((lane >> 3) & 1));
        });
        float(&s)[C::BN / 8][4] = s1[0];
        if (a.cap_log2 != 0.0f) {
            flash_softcap<false>(s, a.cap_log2, a.cap_scale, a.cap_x2);
        }
        if ((int64_t)(j + 1) * C::BN > kfull) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int32_t kend =
                    flash_key_end(causal, t0 + (rem0 + qr + 8 * h) / g, lq, lkv) - j * C::BN;
                flash_mask_row(s, h, kend, qc);
            }
        }
        /* V rows past the sequence: zeros, as the cp.async tile loads them */
        const int32_t left = lkv - j * C::BN;
        if (left < C::BN) {
            hop_zero_rows<C::DB / 64, R::PANEL, 32>(ring->gring, tv - ring->ring, left, C::BN,
                                                    lane);
            __syncwarp();
        }

        float alpha[2];
        flash_softmax_rows(s, m, f, l, alpha, sl);
        if (__any_sync(0xFFFFFFFFu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {
            flash_rescale_rows(o, alpha);
        }
        uint32_t pa[NB][4];
#pragma unroll
        for (int kk = 0; kk < NB; ++kk) {
            pa[kk][0] = flash_type<DT>::pack(s[2 * kk][0], s[2 * kk][1]);
            pa[kk][1] = flash_type<DT>::pack(s[2 * kk][2], s[2 * kk][3]);
            pa[kk][2] = flash_type<DT>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
            pa[kk][3] = flash_type<DT>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
        }
        /* O += P V_j: the (k16 step, column pair) groups in order, V's
         * fragments one group ahead; pairs past Dv skipped */
        auto v_at = [&](int t) {
            return R::swz(tv, t / ND * 16 + (lane & 7) + ((lane >> 3) & 1) * 8,
                          t % ND * 2 + (lane >> 4));
        };
        uint32_t vf[2][4];
        flash_ldmatrix_x4_trans(vf[0], v_at(0));
#pragma unroll
        for (int t = 0; t < NB * ND; ++t) {
            const int kk = t / ND, n2 = t % ND;
            if (t + 1 < NB * ND) {
                flash_ldmatrix_x4_trans(vf[(t + 1) & 1], v_at(t + 1));
            }
            if (n2 * 16 < a.dv) { /* uniform */
                flash_mma<DT>(o[2 * n2], pa[kk], vf[t & 1][0], vf[t & 1][1]);
                flash_mma<DT>(o[2 * n2 + 1], pa[kk], vf[t & 1][2], vf[t & 1][3]);
            }
        }
        /* every lane releases the stage itself: its reads, and its zeros
         * above, before the producer's next load into it (one lane's
         * arrival after a __syncwarp is not an order compute-sanitizer's
         * racecheck follows for the other lanes: bench/RESULTS.md,
         * thirty-eighth and fortieth sessions) */
        hop_mbar_arrive(ring->empty(st));
    }
    ring->n = n0 + (uint32_t)(je - jb);

    /* the slice's partial -> shared (fragment order: lane-contiguous) */
#pragma unroll
    for (int n = 0; n < N8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            so[((warp * N8 + n) * 4 + e) * 32 + lane] = o[n][e];
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float sum = flash_quad_sum(l[h]);
        sml[(warp * 2 + h) * 32 + lane] = make_float2(m[h] == -INFINITY ? -INFINITY : f[h], sum);
    }
    flash_sync_n<128>();

    /* the fold of slices 0 .. 3, this warp's quarter of the column groups */
    constexpr int NW8 = N8 / OPP__SPLIT_SLICES;
    const int nw0 = warp * NW8;
    float ao[NW8][4], af[2], al[2];
    flash_slice_start(ao, af, al);
#pragma unroll
    for (int sc = 0; sc < OPP__SPLIT_SLICES; ++sc) {
        float os[NW8][4], fs[2], ls[2];
#pragma unroll
        for (int n = 0; n < NW8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                os[n][e] = so[((sc * N8 + nw0 + n) * 4 + e) * 32 + lane];
            }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float2 ml = sml[(sc * 2 + h) * 32 + lane];
            fs[h] = ml.x;
            ls[h] = ml.y;
        }
        flash_slice_fold(ao, af, al, os, fs, ls);
    }

    /* the partial: this warp's columns, (frame, sum) by warp 0 */
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int32_t r = qr + 8 * h;
        if (r0 + r >= nrows) {
            continue;
        }
        const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
        const int64_t prow = (part0 + t0 + tt - (lq - ts)) * a.hq + hk * g + hg;
        float *prow_o = a.part_o + prow * a.dv;
#pragma unroll
        for (int n = 0; n < NW8; ++n) {
            const int col = (nw0 + n) * 8 + 2 * qc;
            if (col < a.dv) {
                *(float2 *)(prow_o + col) = make_float2(ao[n][2 * h], ao[n][2 * h + 1]);
            }
        }
        if (warp == 0 && qc == 0) {
            a.part_ml[prow] = make_float2(af[h], al[h]);
        }
    }
}

#endif /* OPP_KERNELS_HOPPER_SPLIT_TILE_CUH */
