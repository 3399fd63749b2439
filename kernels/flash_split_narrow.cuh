/*
 * flash_split_narrow.cuh - the split launch's tile for an item with at most
 * 16 split rows (a decode or short speculative sequence: ts G <= 16), run
 * by all four warps of the block instead of the one warp that owns those
 * rows in the split tile (flash_tile<.., SPLIT>), with the same bits.
 * Included by flash_attention.cuh after flash_tile.
 *
 *   shared (16-bit elements, flash_narrow_layout): Q [16][DB+8], K [BN][DB+8],
 *   V [BN][DB+8], P [16][BN+8] in the storage type, P [16][BN] float,
 *   row maxima [4 warps][16] float
 *   part_o [P, Hq, Dv] float32, part_ml [P, Hq] float2 (flash_split.cuh)
 *
 * Why: on decode the split tile's work per key block (S = Q K^T, 64 keys,
 * the softmax, O += P V) all falls on warp 0 while three warps only load;
 * the split launch is bound by that one warp (bench/RESULTS.md, twelfth
 * session). Here, per key block j of BN keys:
 *   A  warp w: S for keys 16w .. 16w+15 of the block (the same mma, k16
 *      steps in order, as the split tile's n-tiles 2w, 2w+1; Q's fragments
 *      by ldmatrix each step, as there: in registers across the key loop
 *      they cost the launch ~280 more bytes of spill), softcap, masks, its
 *      row maxima -> shared;
 *   B  every warp: the block's row max over the four (a max is exact in
 *      any order), alpha and the frame f as flash_softmax_rows computes them
 *      (flash_row_frame), p = 2^(s sl - f) for its keys -> shared, as float
 *      and in the storage type;
 *   C  warp 0: each of its threads adds the p of the keys it holds in the
 *      split tile (n-tiles 0 .. BN/8-1, pairs in order), l = l alpha + sum;
 *      every warp: O of its quarter of the Dv columns rescaled by alpha,
 *      then O += P V_j over the k16 steps in order (P read back with
 *      ldmatrix: the A fragments the split tile packs in registers).
 * Every stored value is computed by the same operations in the same order
 * as in the split tile (with OPP__SPLIT_SLICES 4, the key blocks in the
 * split's slice order, each slice folded as the split tile folds it), so
 * a row's partial is the same bit for bit on either tile, and an item may take this one by its own
 * ts G: packed and padded (where L_q = S_q gives more split rows, so the other tile) agree
 * (DESIGN.md section 4); and a launch whose items all take this tile
 * (max_seqlen_q small enough) runs an instance of the split kernel that
 * holds it alone (flash_launch_split: 110 registers at DB 128 against 168,
 * four blocks an SM against three). Loads keep the split tile's schedule (one K and
 * one V buffer: V_j loads during A and B, K_{j+1} during B and C).
 */
#ifndef OPP_KERNELS_FLASH_SPLIT_NARROW_CUH
#define OPP_KERNELS_FLASH_SPLIT_NARROW_CUH

static_assert(OPP__SPLIT_NARROW_ROWS == 16, "one m16 tile (kernels/split_config.h)");

/* Offsets (16-bit elements) of the narrow tile's shared memory, for the
 * split tile's configuration C (its BN and PITCH); TMA: without K and V
 * (the TMA split kernel's ring holds them). */
template <class C, bool TMA = false> struct flash_narrow_layout {
    static constexpr int NWARPS = 4;
    static constexpr int PS_PITCH = C::BN + 8; /* 16-byte aligned rows for ldmatrix */
    static constexpr size_t Q = 0;
    static constexpr size_t K = Q + (size_t)OPP__SPLIT_NARROW_ROWS * C::PITCH;
    static constexpr size_t V = K + (TMA ? 0 : C::KV_ELEMS);
    static constexpr size_t PS = V + (TMA ? 0 : C::KV_ELEMS);
    static constexpr size_t PF = PS + (size_t)OPP__SPLIT_NARROW_ROWS * PS_PITCH;  /* floats */
    static constexpr size_t MX = PF + (size_t)OPP__SPLIT_NARROW_ROWS * C::BN * 2; /* floats */
    static constexpr size_t ELEMS = MX + (size_t)NWARPS * OPP__SPLIT_NARROW_ROWS * 2;
    static constexpr size_t BYTES = ELEMS * 2;
    static_assert(C::THREADS == 32 * NWARPS && C::BN == 16 * NWARPS, "a warp per 16 keys");
    static_assert(K % 8 == 0 && PS % 8 == 0 && PF % 8 == 0 && MX % 8 == 0, "16-byte aligned");
    /* Dv columns: warp w owns the 16-column pairs w NQ .. w NQ + NQ - 1 */
    static constexpr int NQ = (C::DB / 16 + NWARPS - 1) / NWARPS;
};

/* The K / V ring of the TMA split kernel (kernels/hopper_split.cuh), as
 * its producer fills it and the narrow tile reads it, for the split tile's
 * configuration C: the stage of key block count n (n % STAGES, phase n /
 * STAGES % 2) holds K's DB / 64 panels of BN keys x 128 bytes (128-byte
 * swizzle: 16-byte chunk c of key row r at chunk c ^ (r % 8)), then V's;
 * full[s] completes when TMA has written stage s, empty[s] when the four
 * consumer warps are done with it (the sliced tile, OPP__SPLIT_SLICE_TILE:
 * the one warp that took it, kernels/hopper_split_tile.cuh). n counts the
 * key blocks a side has taken (each side keeps its own). */
template <class C> struct flash_narrow_ring {
    static constexpr uint32_t STAGES =
        OPP__SPLIT_SLICE_TILE
            ? (C::DB > 64 ? OPP__SPLIT_TMA_STAGES_SL128 : OPP__SPLIT_TMA_STAGES_SL64)
            : OPP__SPLIT_TMA_STAGES;
    static constexpr uint32_t PANEL = C::BN * 128u;    /* 64 columns of BN keys */
    static constexpr uint32_t KV = C::DB / 64 * PANEL; /* K (or V) of a key block */
    static constexpr uint32_t STAGE = 2 * KV;          /* K then V */
    uint32_t ring, bars; /* shared-space addresses: the stages; full[STAGES], empty[STAGES] */
    uint8_t *gring;      /* the stages, generic */
    uint32_t n;
    __device__ __forceinline__ uint32_t stage() const {
        return n % STAGES;
    }
    __device__ __forceinline__ uint32_t phase() const {
        return (n / STAGES) & 1u;
    }
    __device__ __forceinline__ uint32_t k(uint32_t s) const {
        return ring + s * STAGE;
    }
    __device__ __forceinline__ uint32_t v(uint32_t s) const {
        return ring + s * STAGE + KV;
    }
    __device__ __forceinline__ uint32_t full(uint32_t s) const {
        return bars + 8u * s;
    }
    __device__ __forceinline__ uint32_t empty(uint32_t s) const {
        return bars + 8u * (STAGES + s);
    }
    /* the address of 16-byte chunk `chunk` (8 columns) of key row `row` in
     * the K or V tile at `tile` */
    static __device__ __forceinline__ uint32_t swz(uint32_t tile, int row, int chunk) {
        return tile + (uint32_t)(chunk >> 3) * PANEL + (uint32_t)row * 128u +
               ((uint32_t)((chunk & 7) ^ (row & 7)) << 4);
    }
};

/* Item w = (split, sequence b, kv head hk) of the split launch, whose split
 * rows number at most 16; smem: flash_narrow_layout<C>::BYTES; red: 32 int64
 * of shared memory. Every thread of the block calls it. TMA: the TMA split
 * kernel's consumers (threads 0 .. 127; the producer warp beside them
 * fills `ring`): K and V come from the ring, not by cp.async, the block's
 * barriers are named barrier 1 of 128 threads, and V rows past the
 * sequence (another sequence's keys) become zeros before P V; every product
 * and stored value is the same. slice >= 0 (TMA, OPP__SPLIT_SLICE_ITEMS):
 * a slice item, slice `slice` of the split alone (its blocks may be none),
 * its partial (the fold of that slice: flash_slice_fold from the start)
 * at row OPP__SPLIT_SLICES P + slice. */
template <int DT, class C, bool TMA = false>
__device__ __forceinline__ void
flash_split_narrow(const flash_args &a, uint16_t *smem, int64_t w, long long *red,
                   flash_narrow_ring<C> *ring = nullptr, int32_t slice = -1) {
    typedef flash_narrow_layout<C, TMA> L;
    static_assert(!TMA || !OPP__SPLIT_SLICE_TILE,
                  "sliced splits: the TMA split kernel's per-warp tile (hopper_split_tile.cuh)");
    constexpr bool SLICED = OPP__SPLIT_SLICES > 1;
    /* the slice of a slice item, else -1 (a constant without them) */
    const int32_t sli = TMA && OPP__SPLIT_SLICE_ITEMS > 0 ? slice : -1;
    /* the block after j in this tile's order */
    auto next_block = [&](int32_t j, int32_t jb, int32_t je) {
        return sli >= 0 ? j + OPP__SPLIT_SLICES : opp__split_next_block(j, jb, je);
    };
    const int64_t per = (int64_t)a.batch * a.hkv;
    const int32_t split = (int32_t)(w / per);
    const int32_t b = (int32_t)((w % per) / a.hkv), hk = (int32_t)(w % a.hkv);
    const int32_t g = a.g;
    const flash_seq seq = flash_seq_of(a, b);
    const int32_t lq = seq.lq, lkv = seq.lkv;
    const int32_t ts = flash_split_tokens(lq, lkv, g, a.split_min_kv);
    const int64_t nrows = (int64_t)lq * g;
    const int64_t r0 = (int64_t)(lq - ts) * g; /* nrows - r0 = ts G <= 16 (the caller's test) */
    if (r0 >= nrows || (int64_t)split * OPP__SPLIT_KEYS >= lkv) {
        return; /* uniform: no split rows, or past the keys */
    }
    /* the split tile's key range and masks, for the same rows (the blocks:
     * opp__split_blocks of kernels/split_rule.h, which the TMA split
     * kernel's producer calls; written out here, where the call changed
     * ptxas's schedule of the default kernels) */
    const bool causal = a.is_causal != 0;
    const int32_t kend_tile = flash_key_end(causal, (nrows - 1) / g, lq, lkv);
    const int32_t kfull = flash_key_end(causal, r0 / g, lq, lkv); /* visible to every row */
    const int32_t nkb = (int32_t)(((int64_t)kend_tile + C::BN - 1) / C::BN);
    const int32_t jb = split * (OPP__SPLIT_KEYS / C::BN);
    const int32_t je = jb + OPP__SPLIT_KEYS / C::BN < nkb ? jb + OPP__SPLIT_KEYS / C::BN : nkb;
    /* the block's barrier: every thread, or the TMA kernel's consumers */
    constexpr int SYNC_THREADS = TMA ? 128 : 0;
    auto sync = [] { flash_sync_n<SYNC_THREADS>(); };
    const int64_t part0 = flash_seq_src{a.cu_q, a.cu_kv, a.nonpad, a.q_seqlen, g, a.split_min_kv}
                              .template split_offset<SYNC_THREADS>(b, red) +
                          (int64_t)split * ts;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int qr = lane >> 2, qc = lane & 3; /* fragment row / column pair */
    const uint16_t *qg = (const uint16_t *)a.q.ptr + seq.qb + (int64_t)hk * g * a.q.head;
    const uint16_t *kg = (const uint16_t *)a.k.ptr + seq.kb0 + (int64_t)hk * a.k.head;
    const uint16_t *vg = (const uint16_t *)a.v.ptr + seq.vb0 + (int64_t)hk * a.v.head;
    uint16_t *sq = smem + L::Q, *sk = smem + L::K, *sv = smem + L::V, *ps = smem + L::PS;
    float *pf = (float *)(smem + L::PF), *mxs = (float *)(smem + L::MX);

    const int ld_r = tid / C::CP, ld_c = tid % C::CP;
    const int64_t t0 = r0 / g;
    const int32_t rem0 = (int32_t)(r0 - t0 * g);
    /* Q's 16 rows (past the sequence, columns past D: zeros) */
    flash_load_q<C, OPP__SPLIT_NARROW_ROWS>(sq, qg, a.q.row, a.q.head, a.d, r0, nrows, t0, rem0, g,
                                            a.fd_g, ld_r, ld_c);
    if (!TMA && jb < je) {
        flash_load_kv<C>(sk, kg, a.k.row, a.d, jb, lkv, ld_r, ld_c);
    }
    flash_cp_async_commit();

    /* state: m and f for every warp (the same values), l in warp 0, O by
     * column quarter */
    float m[2] = {-INFINITY, -INFINITY}, f[2] = {0.0f, 0.0f}, l[2] = {0.0f, 0.0f};
    float o[2 * L::NQ][4];
#pragma unroll
    for (int n = 0; n < 2 * L::NQ; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            o[n][e] = 0.0f;
        }
    }
    /* (OPP__SPLIT_SLICES > 1) the fold of the slices so far: O by column
     * quarter, the frame in every warp, the sum in warp 0 */
    float ao[2 * L::NQ][4], af[2], al[2];
    if constexpr (SLICED) {
        flash_slice_start(ao, af, al);
    }
    const float sl = a.cap_log2 != 0.0f ? 1.0f : a.scale_log2;
    const uint32_t k_lane =
        flash_smem_addr(sk + ((lane & 7) + (lane >> 4) * 8) * C::PITCH + ((lane >> 3) & 1) * 8);
    const uint32_t v_lane =
        flash_smem_addr(sv + ((lane & 7) + ((lane >> 3) & 1) * 8) * C::PITCH + (lane >> 4) * 8);
    const uint32_t p_lane = flash_smem_addr(ps + (lane & 15) * L::PS_PITCH + (lane >> 4) * 8);
    const uint32_t q_lane = flash_smem_addr(sq + (lane & 15) * C::PITCH + (lane >> 4) * 8);
    /* V's column pairs of this warp (a pair past the tile, whose products
     * are skipped, reads the tile's last pair: no load leaves V) */
    uint32_t v_col[L::NQ];
#pragma unroll
    for (int q = 0; q < L::NQ; ++q) {
        const int n2 = warp * L::NQ + q;
        v_col[q] = v_lane + (n2 < C::DB / 16 ? n2 : C::DB / 16 - 1) * 16 * 2;
    }

    for (int32_t j = sli >= 0 ? opp__split_slice_first(jb, sli) : jb; j < je;
         j = next_block(j, jb, je)) {
        /* TMA: this block's stage (K_j, V_j) */
        const uint32_t st = TMA ? ring->stage() : 0;
        const uint32_t tk = TMA ? ring->k(st) : 0, tv = TMA ? ring->v(st) : 0;
        flash_cp_async_wait<0>();
        if constexpr (TMA) {
            hop_mbar_wait(ring->full(st), ring->phase());
        }
        sync(); /* K_j (and Q) landed; every warp is done with V_{j-1} and P */
        if constexpr (!TMA) {
            flash_load_kv<C>(sv, vg, a.v.row, a.dv, j, lkv, ld_r, ld_c);
        }
        flash_cp_async_commit();

        /* A: S for this warp's 16 keys (the split tile's n-tiles 2 warp, 2 warp + 1),
         * by the split tile's own products (flash_qk: one m16 tile, one key pair) */
        float s1[1][2][4] = {{{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}}};
        if constexpr (TMA) {
            const int krow = warp * 16 + (lane & 7) + (lane >> 4) * 8;
            flash_qk_at<DT, C::DB, 1, 1, C::PITCH>(s1, q_lane, a.d, [&](int, int ks) {
                return ring->swz(tk, krow, ks * 2 + ((lane >> 3) & 1));
            });
        } else {
            flash_qk<DT, C::DB, 1, 1, C::PITCH>(s1, q_lane, k_lane + warp * 16 * C::PITCH * 2, a.d);
        }
        float(&s)[2][4] = s1[0];
        if (a.cap_log2 != 0.0f) {
            flash_softcap<false>(s, a.cap_log2, a.cap_scale, a.cap_x2);
        }
        if ((int64_t)(j + 1) * C::BN > kfull) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int32_t kend =
                    flash_key_end(causal, t0 + (rem0 + qr + 8 * h) / g, lq, lkv) - j * C::BN;
                flash_mask_row(s, h, kend - warp * 16, qc);
            }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float mx =
                fmaxf(fmaxf(s[0][2 * h], s[0][2 * h + 1]), fmaxf(s[1][2 * h], s[1][2 * h + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
            if (qc == 0) {
                mxs[warp * OPP__SPLIT_NARROW_ROWS + qr + 8 * h] = mx;
            }
        }
        sync(); /* the maxima are visible; every warp is done with K_j */
        if (!TMA && opp__split_next_block(j, jb, je) < je) {
            flash_load_kv<C>(sk, kg, a.k.row, a.d, opp__split_next_block(j, jb, je), lkv, ld_r,
                             ld_c);
        }
        flash_cp_async_commit();

        /* B: the block's row max (exact in any order), alpha and the frame
         * as flash_softmax_rows (flash_row_frame) */
        float alpha[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = qr + 8 * h;
            float bm = -INFINITY;
#pragma unroll
            for (int w4 = 0; w4 < L::NWARPS; ++w4) {
                bm = fmaxf(bm, mxs[w4 * OPP__SPLIT_NARROW_ROWS + row]);
            }
            alpha[h] = flash_row_frame(m[h], f[h], bm, sl);
            const float fr = f[h];
#pragma unroll
            for (int n = 0; n < 2; ++n) {
                const float p0 = flash_exp2(fmaf(s[n][2 * h], sl, -fr));
                const float p1 = flash_exp2(fmaf(s[n][2 * h + 1], sl, -fr));
                const int key = warp * 16 + n * 8 + 2 * qc;
                *(float2 *)(pf + row * C::BN + key) = make_float2(p0, p1);
                *(uint32_t *)(ps + row * L::PS_PITCH + key) = flash_type<DT>::pack(p0, p1);
            }
        }
        if constexpr (TMA) {
            /* V rows past the sequence: zeros, as the cp.async tile loads them */
            const int32_t left = lkv - j * C::BN;
            if (left < C::BN) {
                hop_zero_rows<C::DB / 64, flash_narrow_ring<C>::PANEL, 128>(
                    ring->gring, tv - ring->ring, left, C::BN, tid);
            }
        } else {
            flash_cp_async_wait<1>();
        }
        sync(); /* V_j landed (K_{j+1} may not have); P is visible */

        /* C: l in warp 0, in the split tile's order of this thread's keys */
        if (warp == 0) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float *prow = pf + (qr + 8 * h) * C::BN + 2 * qc;
                float sum = 0.0f;
#pragma unroll
                for (int n = 0; n < C::BN / 8; ++n) {
                    const float2 p = *(const float2 *)(prow + n * 8);
                    sum += p.x;
                    sum += p.y;
                }
                l[h] = l[h] * alpha[h] + sum;
            }
        }
        if (__any_sync(0xFFFFFFFFu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {
            flash_rescale_rows(o, alpha);
        }
        /* O += P V_j on this warp's columns: the (k16 step, column pair)
         * groups in order, fragments one group ahead */
        constexpr int VT = C::BN / 16 * L::NQ;
        uint32_t pa[2][4], vf[2][4];
        /* V's ldmatrix address of (k16 step kk, this warp's pair q) */
        auto v_at = [&](int kk, int q) {
            if constexpr (TMA) {
                const int n2 = warp * L::NQ + q;
                return ring->swz(tv, kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8,
                                 (n2 < C::DB / 16 ? n2 : C::DB / 16 - 1) * 2 + (lane >> 4));
            } else {
                return v_col[q] + kk * 16 * C::PITCH * 2;
            }
        };
        flash_ldmatrix_x4(pa[0], p_lane);
        flash_ldmatrix_x4_trans(vf[0], v_at(0, 0));
#pragma unroll
        for (int t = 0; t < VT; ++t) {
            const int kk = t / L::NQ, q = t % L::NQ;
            if (t + 1 < VT) {
                const int kk1 = (t + 1) / L::NQ, q1 = (t + 1) % L::NQ;
                if (q1 == 0) {
                    flash_ldmatrix_x4(pa[kk1 & 1], p_lane + kk1 * 16 * 2);
                }
                flash_ldmatrix_x4_trans(vf[(t + 1) & 1], v_at(kk1, q1));
            }
            const int n2 = warp * L::NQ + q;
            if (n2 < C::DB / 16 && n2 * 16 < a.dv) { /* uniform */
                flash_mma<DT>(o[2 * q], pa[kk & 1], vf[t & 1][0], vf[t & 1][1]);
                flash_mma<DT>(o[2 * q + 1], pa[kk & 1], vf[t & 1][2], vf[t & 1][3]);
            }
        }
        if constexpr (TMA) { /* this warp is done with the stage */
            __syncwarp();
            if (lane == 0) {
                hop_mbar_arrive(ring->empty(st));
            }
            ++ring->n;
        }
        if constexpr (SLICED) {
            if (opp__split_slice_ends(j, je)) { /* j ends its slice: fold, reset */
                flash_slice_end(ao, af, al, o, m, f, l);
            }
        }
    }
    flash_cp_async_wait<0>();

    /* the unnormalised O (each warp its columns) and (f, l) (warp 0) */
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float sum = SLICED ? al[h] : flash_quad_sum(l[h]);
        const int32_t r = qr + 8 * h;
        if (r0 + r >= nrows) {
            continue;
        }
        const int32_t tt = (rem0 + r) / g, hg = (rem0 + r) - tt * g;
        const int64_t prow0 = (part0 + t0 + tt - (lq - ts)) * a.hq + hk * g + hg;
        const int64_t prow = sli >= 0 ? prow0 * OPP__SPLIT_SLICES + sli : prow0;
        float *prow_o = a.part_o + prow * a.dv;
#pragma unroll
        for (int n = 0; n < 2 * L::NQ; ++n) {
            const int col = (warp * L::NQ + n / 2) * 16 + (n % 2) * 8 + 2 * qc;
            if (col < a.dv && col < C::DB) {
                const float(&on)[4] = SLICED ? ao[n] : o[n];
                *(float2 *)(prow_o + col) = make_float2(on[2 * h], on[2 * h + 1]);
            }
        }
        if (warp == 0 && qc == 0) {
            a.part_ml[prow] = make_float2(SLICED              ? af[h]
                                          : m[h] == -INFINITY ? -INFINITY
                                                              : f[h],
                                          sum);
        }
    }
    sync(); /* shared memory is reused by the block's next item */
}

#endif /* OPP_KERNELS_FLASH_SPLIT_NARROW_CUH */
