/*
 * hopper_ops.cuh - the sm_90a building blocks of the Hopper kernel
 * (kernels/hopper_attention.cuh), as inline PTX: mbarriers, TMA tensor
 * loads, proxy fences, named barriers, register reallocation, and the wgmma
 * shared-memory descriptors and group control (the wgmma instructions
 * themselves: kernels/wgmma_ops.cuh). Compiled for sm_90a only.
 *
 * Shared-memory tiles are 128-byte-swizzled panels as TMA writes them with
 * CU_TENSOR_MAP_SWIZZLE_128B: a panel holds 64 16-bit columns of R rows,
 * row r at byte 128 r, 16-byte chunk c of a row at chunk c ^ (r % 8); every
 * panel starts on a 1024-byte boundary (the swizzle atom: 8 rows).
 */
#ifndef OPP_KERNELS_HOPPER_OPS_CUH
#define OPP_KERNELS_HOPPER_OPS_CUH

#include <stdint.h>

#include <type_traits>

// --- mbarriers (64-bit, in shared memory; addresses are shared-space)

__device__ __forceinline__ void hop_mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* Makes the initialisations visible to the async proxy (TMA). */
__device__ __forceinline__ void hop_mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* Arrives once and adds `bytes` to the transaction count of the phase. */
__device__ __forceinline__ void hop_mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void hop_mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* Waits until the phase of parity `parity` has completed (a fresh barrier
 * counts its phase "1" as completed, so a producer's first lap waits on
 * parity 1 and passes). */
__device__ __forceinline__ void hop_mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

// --- TMA

/* One box of a rank-4 tensor map -> shared memory at dst, completing
 * `bytes` (the whole box, out-of-bounds zeros included) on bar.
 * Coordinates are elements, innermost first. */
__device__ __forceinline__ void hop_tma_load_4d(uint32_t dst, const void *tmap, uint32_t bar,
                                                int32_t c0, int32_t c1, int32_t c2, int32_t c3) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"((uint64_t)tmap), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}

/* TMA store of the box at {c0, c1, c2, c3} from shared memory `src` (the
 * writes to it fenced by hop_fence_proxy_async and a barrier first), in
 * this thread's bulk group; rows and columns past the tensor are not
 * written. */
__device__ __forceinline__ void hop_tma_store_4d(const void *tmap, uint32_t src, int32_t c0,
                                                 int32_t c1, int32_t c2, int32_t c3) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group"
                 " [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"((uint64_t)tmap),
                 "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}

/* Closes this thread's bulk group of stores. */
__device__ __forceinline__ void hop_bulk_commit() {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/* A relaxed load of a counter other blocks change (no ordering; a value
 * at most as new as the latest). */
__device__ __forceinline__ unsigned long long hop_ld_relaxed(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* Waits until this thread's committed bulk stores have read their shared
 * memory (READ) or are complete (else). */
template <bool READ> __device__ __forceinline__ void hop_bulk_wait() {
    if constexpr (READ) {
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    } else {
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
}

__device__ __forceinline__ void hop_tma_prefetch(const void *tmap) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)tmap) : "memory");
}

// --- shared memory words (32-bit shared addresses: no generic pointer)

__device__ __forceinline__ void hop_st_shared_v4(uint32_t addr, int32_t x, int32_t y, int32_t z,
                                                 int32_t w) {
    asm volatile("st.shared.v4.s32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x), "r"(y), "r"(z),
                 "r"(w)
                 : "memory");
}

__device__ __forceinline__ int4 hop_ld_shared_v4(uint32_t addr) {
    int4 v;
    asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

// --- fences and barriers

/* Orders this thread's generic-proxy shared-memory writes before later
 * async-proxy (wgmma, TMA) accesses; a barrier must follow. */
__device__ __forceinline__ void hop_fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Rows from .. to - 1 of each of PANELS panels (PANEL bytes apart, rows of
 * 128 bytes) of the tile at byte offset off0 of gbase become zeros - whole
 * rows, so the swizzle does not matter - by thread tid of NT; then the
 * writes are fenced for the async proxy (a barrier must follow). The rows
 * past a sequence's keys in its last K / V block: another sequence's
 * values or padding, which P = 0 must not meet (0 x NaN). The TMA split
 * kernel's narrow tile calls it; the Hopper kernel's last block still
 * writes the same loop out (kernels/hopper_attention.cuh): calling this
 * there changed ptxas's schedule of the D 256 kernel, which no GPU run
 * has checked yet. */
template <int PANELS, uint32_t PANEL, int NT>
__device__ __forceinline__ void hop_zero_rows(uint8_t *gbase, uint32_t off0, int32_t from,
                                              int32_t to, int tid) {
    const uint32_t chunks = (uint32_t)(to - from) * 8u;
    for (uint32_t i = tid; i < chunks * PANELS; i += NT) {
        const uint32_t p = i / chunks, r = i % chunks;
        const uint32_t off = off0 + p * PANEL + from * 128u + r * 16u;
        *(uint4 *)(gbase + off) = make_uint4(0, 0, 0, 0);
    }
    hop_fence_proxy_async();
}

/* Named barrier `id` (1..15) over `count` threads (a multiple of 32). */
__device__ __forceinline__ void hop_bar_sync(uint32_t id, uint32_t count) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* Arrives on named barrier `id` without waiting (the partner syncs). */
__device__ __forceinline__ void hop_bar_arrive(uint32_t id, uint32_t count) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// --- register reallocation (whole warpgroup; needs __launch_bounds__(.., 1))

template <int N> __device__ __forceinline__ void hop_regs_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N> __device__ __forceinline__ void hop_regs_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// --- wgmma group control

/* Orders earlier register accesses before the next wgmma batch. */
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Waits until at most N committed groups are in flight. */
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Keeps the compiler from moving accesses of r across a wgmma region. */
__device__ __forceinline__ void hop_fence_reg(float &r) {
    asm volatile("" : "+f"(r)::"memory");
}
__device__ __forceinline__ void hop_fence_reg(uint32_t &r) {
    asm volatile("" : "+r"(r)::"memory");
}

/* f(std::integral_constant<uint32_t, I>{}) for the I == v of 0 .. N - 1
 * (v < N, the same on every lane of the warp): a run-time index made a
 * compile-time one, so that what f computes from it (shared addresses,
 * wgmma descriptors) is uniform and ptxas keeps it in uniform registers
 * (no per-operand R2UR). Each test is a warp vote, a predicate ptxas knows
 * to be uniform: a wgmma in a branch it cannot prove uniform would be
 * serialized (C7520). */
template <uint32_t N, uint32_t I = 0, class F>
__device__ __forceinline__ void hop_uniform_switch(uint32_t v, F &&f) {
    if constexpr (I + 1 < N) {
        if (__all_sync(0xFFFFFFFFu, v == I)) {
            f(std::integral_constant<uint32_t, I>{});
        } else {
            hop_uniform_switch<N, I + 1>(v, f);
        }
    } else {
        f(std::integral_constant<uint32_t, I>{});
    }
}

// --- shared-memory matrix descriptors (128-byte swizzle)

/* Descriptor of a swizzled operand at shared address base + off: lbo / sbo
 * are the leading / stride byte offsets (PTX ISA, "matrix descriptor"):
 *   K-major (Q, K): sbo = 1024 (next 8 rows), lbo unused (16);
 *                   a k16 step inside a panel is +32 bytes of address
 *   N-major (V):    sbo = 1024 (next 8 keys), lbo = the distance between
 *                   64-column panels; a k16 step is +2048 bytes
 * In two parts, so that the k16 steps of one product cost one add each:
 * hop_desc_lo(base, lbo) is the low word (address field: bits 0-13 =
 * address / 16; lbo field: bits 16-29), computed once per product;
 * hop_desc_at<SBO>(lo, off) adds off / 16 to it and the constant high word
 * (sbo field, 128-byte swizzle at bit 62). Shared addresses are below 2^18,
 * so base + off's address field is base's plus off / 16, with no carry out
 * of its 14 bits: the same 64 bits as the whole formula at base + off. */
__device__ __forceinline__ uint32_t hop_desc_lo(uint32_t base, uint32_t lbo) {
    return ((base & 0x3FFFFu) >> 4) | (((lbo & 0x3FFFFu) >> 4) << 16);
}
template <uint32_t SBO> __device__ __forceinline__ uint64_t hop_desc_at(uint32_t lo, uint32_t off) {
    constexpr uint32_t hi = ((SBO & 0x3FFFFu) >> 4) | (1u << 30);
    return (uint64_t)(lo + (off >> 4)) | ((uint64_t)hi << 32);
}

#endif /* OPP_KERNELS_HOPPER_OPS_CUH */
