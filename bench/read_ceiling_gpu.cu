/*
 * read_ceiling_gpu.cu - the device side of bench/read_ceiling (header:
 * bench/read_ceiling.h): K and V filled with rc_word, and the three read
 * patterns as kernels that sum the 32-bit words they read.
 *
 *   k, v  [total_kv, Hkv, D] 16-bit (2 bytes an element), packed
 *   cu    [B + 1] int32, the sequences' key offsets
 *   sum   one uint64 (atomicAdd of each warp's sum)
 *
 * Items, as the split launch (kernels/flash_launch.cuh flash_launch_split):
 * w = (s B + b) Hkv + hk for split s < ceil(max L_kv / S), S the split
 * size (OPP__SPLIT_KEYS, or read_ceiling's --split-keys); an item covers
 * keys [s S, min((s+1) S, L_kv)) of sequence b, kv head hk (none past
 * L_kv: the block returns). sm_90a only (TMA); the program refuses other
 * devices.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "bench/read_ceiling.h"
#include "kernels/flash_tile.cuh"
#include "kernels/hopper_maps.cuh"
#include "kernels/hopper_ops.cuh"
#include "kernels/kernel_list.h"

#define RC_CUDA(call)                                                                            \
    do {                                                                                         \
        const cudaError_t rc_e = (call);                                                         \
        if (rc_e != cudaSuccess) {                                                               \
            snprintf(err, err_size, "%s: %s (%s:%d)", #call, cudaGetErrorString(rc_e), __FILE__, \
                     __LINE__);                                                                  \
            return -1;                                                                           \
        }                                                                                        \
    } while (0)

namespace {

constexpr int RC_THREADS = 128; /* cpasync's block; tma's consumers (plus a producer warp) */

/* What the item kernels share. */
struct rc_args {
    const uint16_t *k, *v;
    const int32_t *cu;
    int32_t batch, hkv, d;
    int32_t split_keys; /* keys an item (rc_gpu_set_split_keys) */
    int32_t heads;      /* adjacent kv heads an item (tma: rc_case_t.heads; else 1) */
    int64_t items;
    unsigned long long *sum;
    unsigned long long *next; /* tma persistent: the next item to claim (zeroed a run) */
};

/* Item w: false when its split starts past the sequence's keys; else its
 * (first) kv head, first key row (token index into K / V) and keys. */
__device__ __forceinline__ bool rc_item(const rc_args &a, int64_t w, int32_t *hk, int64_t *row0,
                                        int32_t *nkeys) {
    const int32_t groups = a.hkv / a.heads; /* items a (split, sequence) */
    const int64_t per = (int64_t)a.batch * groups;
    const int64_t s = w / per;
    const int32_t b = (int32_t)((w % per) / groups);
    *hk = (int32_t)(w % groups) * a.heads;
    const int32_t lkv = a.cu[b + 1] - a.cu[b];
    const int64_t k0 = s * a.split_keys;
    if (k0 >= lkv) {
        return false;
    }
    *row0 = a.cu[b] + k0;
    *nkeys = (int32_t)(lkv - k0 < a.split_keys ? lkv - k0 : a.split_keys);
    return true;
}

__device__ __forceinline__ uint64_t rc_words(uint4 x) {
    return (uint64_t)x.x + x.y + (uint64_t)x.z + x.w;
}

/* The block's warps add their lanes' sums to *sum (lane 0 of each warp). */
__device__ __forceinline__ void rc_add(uint64_t acc, unsigned long long *sum) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        acc += __shfl_xor_sync(0xFFFFFFFFu, (unsigned long long)acc, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(sum, (unsigned long long)acc);
    }
}

/* p[i] = rc_word(i, t), i < words. */
__global__ void rc_fill_kernel(uint32_t *p, uint64_t words, uint32_t t) {
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += step) {
        p[i] = rc_word(i, t);
    }
}

/* flat: 16-byte chunks 0 .. 2 n16 - 1 (K's, then V's), four in flight a
 * thread. */
__global__ void rc_flat_kernel(const uint4 *k, const uint4 *v, int64_t n16,
                               unsigned long long *sum) {
    const int64_t total = 2 * n16, step = (int64_t)gridDim.x * blockDim.x;
    auto ld = [&](int64_t i) { return i < n16 ? __ldcs(k + i) : __ldcs(v + (i - n16)); };
    uint64_t acc = 0;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * step < total; i += 4 * step) {
        const uint4 x0 = ld(i), x1 = ld(i + step), x2 = ld(i + 2 * step), x3 = ld(i + 3 * step);
        acc += rc_words(x0) + rc_words(x1) + rc_words(x2) + rc_words(x3);
    }
    for (; i < total; i += step) {
        acc += rc_words(ld(i));
    }
    rc_add(acc, sum);
}

/* cpasync: a block per item; tiles of ROWS keys x D columns of K and of V
 * by 16-byte cp.async (keys past the item: zeros) into STAGES stages, the
 * next STAGES - 1 in flight while one is summed; each thread sums chunks
 * another thread copied, so the two barriers a tile are needed, as in the
 * split kernel. */
template <int ROWS, int STAGES>
__global__ void __launch_bounds__(RC_THREADS) rc_cpasync_kernel(const rc_args a) {
    extern __shared__ __align__(16) uint4 rc_ring[];
    int32_t hk, nkeys;
    int64_t row0;
    if (!rc_item(a, blockIdx.x, &hk, &row0, &nkeys)) {
        return;
    }
    const int ch = a.d / 8;                     /* 16-byte chunks a row */
    const int tile = ROWS * ch;                 /* chunks a tile of one tensor */
    const int64_t pitch = (int64_t)a.hkv * a.d; /* elements a key row */
    const int32_t ntiles = (nkeys + ROWS - 1) / ROWS;
    auto issue = [&](int32_t t) {
        uint4 *st = rc_ring + (size_t)(t % STAGES) * 2 * tile;
        for (int i = threadIdx.x; i < tile; i += RC_THREADS) {
            const int r = i / ch, c = i % ch;
            const bool ok = t * ROWS + r < nkeys;
            const int64_t off = (row0 + t * ROWS + r) * pitch + (int64_t)hk * a.d + c * 8;
            flash_cp_async16(flash_smem_addr(st + i), ok ? a.k + off : a.k, ok);
            flash_cp_async16(flash_smem_addr(st + tile + i), ok ? a.v + off : a.v, ok);
        }
    };
#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
        if (t < ntiles) {
            issue(t);
        }
        flash_cp_async_commit();
    }
    uint64_t acc = 0;
    const int rot = (threadIdx.x + 32) % RC_THREADS; /* another warp's chunks */
    for (int32_t t = 0; t < ntiles; ++t) {
        if (t + STAGES - 1 < ntiles) {
            issue(t + STAGES - 1); /* into tile t - 1's stage, summed before the last barrier */
        }
        flash_cp_async_commit();
        flash_cp_async_wait<STAGES - 1>(); /* tile t landed */
        __syncthreads();
        const uint4 *st = rc_ring + (size_t)(t % STAGES) * 2 * tile;
        for (int i = rot; i < 2 * tile; i += RC_THREADS) {
            acc += rc_words(st[i]);
        }
        __syncthreads();
    }
    rc_add(acc, a.sum);
}

/* tma: warps 0-3 consume, warp 4 lane 0 produces. Stages of K then V, each
 * d / 64 panels of rows x 128 bytes (the Hopper kernel's swizzled boxes),
 * from the 1024-byte-aligned base; full[s] / empty[s] and the stages'
 * headers (the tile's valid keys, -1: no tile left) after them. The
 * producer takes items - this block's one (a block an item: the grid is
 * the items), or claimed from *a.next one at a time (persistent) - and
 * writes each tile's header before its loads (the full barrier's arrive
 * releases it); a consumer sums rows < the header's keys of every panel
 * (a row's 128 bytes, in whatever chunk order the swizzle left them). */
__global__ void __launch_bounds__(RC_THREADS + 32)
    rc_tma_kernel(const __grid_constant__ CUtensorMap mk, const __grid_constant__ CUtensorMap mv,
                  const rc_args a, int32_t rows, int32_t stages, int32_t persistent) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) unsigned char rc_raw[];
    const uint32_t raw = flash_smem_addr(rc_raw);
    const uint32_t base = (raw + 1023u) & ~1023u;
    unsigned char *gbase = rc_raw + (base - raw);
    const int panels = a.d / 64;
    /* a panel: rows x heads x 128 bytes (the box {64, heads, rows}) */
    const uint32_t panel = (uint32_t)rows * (uint32_t)a.heads * 128u, stage = 2u * panels * panel;
    const uint32_t bars = base + (uint32_t)stages * stage;
    volatile int32_t *hdr = (volatile int32_t *)(gbase + (uint32_t)stages * (stage + 16u));
    auto full = [&](uint32_t s) { return bars + 8u * s; };
    auto empty = [&](uint32_t s) { return bars + 8u * ((uint32_t)stages + s); };
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            hop_mbar_init(full(s), 1);
            hop_mbar_init(empty(s), RC_THREADS / 32);
        }
        hop_mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == RC_THREADS) { /* the producer */
        uint32_t tc = 0;             /* tiles so far: stage tc % stages, phase (tc / stages) % 2 */
        for (int64_t n = 0;; ++n) {
            const int64_t w = persistent ? (int64_t)atomicAdd(a.next, 1ull)
                                         : (n == 0 ? (int64_t)blockIdx.x : a.items);
            int32_t hk = 0, nkeys = 0;
            int64_t row0 = 0;
            const bool last = w >= a.items;
            if (!last && !rc_item(a, w, &hk, &row0, &nkeys)) {
                continue;
            }
            const int32_t ntiles = last ? 1 : (nkeys + rows - 1) / rows;
            for (int32_t t = 0; t < ntiles; ++t, ++tc) {
                const uint32_t s = tc % (uint32_t)stages, ph = (tc / (uint32_t)stages) & 1u;
                hop_mbar_wait(empty(s), ph ^ 1u); /* a fresh barrier passes parity 1 */
                if (last) {
                    hdr[s] = -1;
                    hop_mbar_arrive(full(s));
                    break;
                }
                hdr[s] = nkeys - t * rows < rows ? nkeys - t * rows : rows;
                hop_mbar_expect_tx(full(s), stage);
                const int32_t r = (int32_t)(row0 + (int64_t)t * rows);
                for (int p = 0; p < panels; ++p) {
                    hop_tma_load_4d(base + s * stage + p * panel, &mk, full(s), 64 * p, hk, r, 0);
                    hop_tma_load_4d(base + s * stage + (panels + p) * panel, &mv, full(s), 64 * p,
                                    hk, r, 0);
                }
            }
            if (last) {
                break;
            }
        }
    } else if (threadIdx.x < RC_THREADS) { /* the consumers */
        uint64_t acc = 0;
        for (uint32_t tc = 0;; ++tc) {
            const uint32_t s = tc % (uint32_t)stages, ph = (tc / (uint32_t)stages) & 1u;
            hop_mbar_wait(full(s), ph);
            const int32_t valid = hdr[s];
            if (valid < 0) {
                break;
            }
            const uint4 *st = (const uint4 *)(gbase + s * stage);
            const int per_panel = valid * a.heads * 8; /* 16-byte chunks of the valid rows */
            for (int p = 0; p < 2 * panels; ++p) {
                const uint4 *pp = st + (size_t)p * (panel / 16);
                for (int i = threadIdx.x; i < per_panel; i += RC_THREADS) {
                    acc += rc_words(pp[i]);
                }
            }
            __syncwarp();
            if ((threadIdx.x & 31) == 0) {
                hop_mbar_arrive(empty(s));
            }
        }
        rc_add(acc, a.sum);
    }
#endif
}

} // namespace

struct rc_gpu {
    rc_shape_t shape;
    int64_t total_kv, n16; /* keys; 16-byte chunks of each tensor */
    int64_t items;
    int32_t split_keys;
    uint16_t *k, *v;
    int32_t *cu;
    unsigned long long *sum;
    void *flush; /* rc_gpu_set_flush: written before every run, NULL: none */
    size_t flush_bytes;
    int sms;
    char name[256];
    cudaStream_t stream;
    cudaEvent_t e0, e1;
    hop_encode_fn enc;
};

/* The map of K or V as the Hopper kernel encodes it (kernels/hopper_maps.cuh:
 * [1][total_kv][Hkv][D], box {64, heads, rows, 1} (the Hopper kernel's:
 * heads 1), 128-byte swizzle, zeros past the last key). */
static int rc_map(rc_gpu_t *g, CUtensorMap *m, const char *name, const uint16_t *t, int32_t rows,
                  int32_t heads, char *err, size_t err_size) {
    const int64_t row = (int64_t)g->shape.hkv * g->shape.d;
    const opp__tensor_t tensor = {t, row, g->shape.d, row * g->total_kv};
    if (hop_map(g->enc, m, name, &tensor, OPP_DTYPE_BF16, g->shape.d, g->shape.hkv, g->total_kv, 1,
                (uint32_t)heads, (uint32_t)rows) != OPP_STATUS_SUCCESS) {
        snprintf(err, err_size, "%s", opp_last_error_message());
        return -1;
    }
    return 0;
}

extern "C" int rc_gpu_open(const rc_shape_t *s, rc_gpu_t **out, char *err, size_t err_size) {
    *out = NULL;
    if (s->batch <= 0 || s->hkv <= 0 || s->d <= 0 || s->d % 64 != 0 || s->d > 256) {
        snprintf(err, err_size, "shape: batch %d, hkv %d, d %d (d: 64, 128, 192 or 256)", s->batch,
                 s->hkv, s->d);
        return -1;
    }
    const int64_t total = rc_total_keys(s);
    if (total <= 0 || total >= (int64_t)1 << 31) {
        snprintf(err, err_size, "shape: %lld keys in all (1 .. 2^31 - 1)", (long long)total);
        return -1;
    }
    int dev = 0;
    cudaDeviceProp prop;
    RC_CUDA(cudaGetDevice(&dev));
    RC_CUDA(cudaGetDeviceProperties(&prop, dev));
    if (prop.major != 9 || prop.minor != 0) {
        snprintf(err, err_size,
                 "device %d (%s) is compute capability %d.%d; the tma pattern needs 9.0", dev,
                 prop.name, prop.major, prop.minor);
        return -1;
    }
    rc_gpu_t *g = (rc_gpu_t *)calloc(1, sizeof(*g));
    if (g == NULL) {
        snprintf(err, err_size, "out of host memory");
        return -1;
    }
    *out = g;
    g->shape = *s;
    g->total_kv = total;
    g->split_keys = OPP__SPLIT_KEYS;
    g->items = rc_items(s, OPP__SPLIT_KEYS);
    g->sms = prop.multiProcessorCount;
    snprintf(g->name, sizeof g->name, "%s", prop.name);
    const size_t bytes = (size_t)total * s->hkv * s->d * 2;
    g->n16 = (int64_t)(bytes / 16);
    std::vector<int32_t> cu((size_t)s->batch + 1, 0);
    for (int32_t b = 0; b < s->batch; ++b) {
        cu[b + 1] = cu[b] + s->lkv[b];
    }
    RC_CUDA(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    RC_CUDA(cudaEventCreate(&g->e0));
    RC_CUDA(cudaEventCreate(&g->e1));
    RC_CUDA(cudaMalloc((void **)&g->k, bytes));
    RC_CUDA(cudaMalloc((void **)&g->v, bytes));
    RC_CUDA(cudaMalloc((void **)&g->cu, cu.size() * sizeof(int32_t)));
    RC_CUDA(cudaMalloc((void **)&g->sum, 2 * sizeof(unsigned long long))); /* the sum, the claims */
    RC_CUDA(cudaMemcpyAsync(g->cu, cu.data(), cu.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                            g->stream));
    rc_fill_kernel<<<g->sms * 8, 256, 0, g->stream>>>((uint32_t *)g->k, bytes / 4, 0);
    RC_CUDA(cudaGetLastError());
    rc_fill_kernel<<<g->sms * 8, 256, 0, g->stream>>>((uint32_t *)g->v, bytes / 4, 1);
    RC_CUDA(cudaGetLastError());
    RC_CUDA(cudaStreamSynchronize(g->stream));
    if (hop_encoder(&g->enc) != OPP_STATUS_SUCCESS) {
        snprintf(err, err_size, "%s", opp_last_error_message());
        return -1;
    }
    return 0;
}

/* Launches case c once on g's stream (the caller zeroes the sum); *bps:
 * its blocks an SM. */
static int rc_launch(rc_gpu_t *g, const rc_case_t *c, const CUtensorMap *mk, const CUtensorMap *mv,
                     int *bps, char *err, size_t err_size) {
    rc_args a;
    a.k = g->k;
    a.v = g->v;
    a.cu = g->cu;
    a.batch = g->shape.batch;
    a.hkv = g->shape.hkv;
    a.d = g->shape.d;
    a.split_keys = g->split_keys;
    a.heads = rc_case_heads(c);
    a.items = g->items / a.heads; /* rc_gpu_run: heads divides hkv */
    a.sum = g->sum;
    a.next = g->sum + 1;
    if (c->pattern == RC_FLAT) {
        RC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(bps, rc_flat_kernel, 256, 0));
        rc_flat_kernel<<<g->sms * * bps, 256, 0, g->stream>>>((const uint4 *)g->k,
                                                              (const uint4 *)g->v, g->n16, g->sum);
    } else if (c->pattern == RC_CPASYNC) {
        const size_t smem = (size_t)c->stages * 2 * c->rows * g->shape.d * 2;
        /* the instances built (rc_case_check allows more) */
        static const struct {
            int rows, stages;
            void (*kern)(const rc_args);
        } built[] = {{32, 2, rc_cpasync_kernel<32, 2>}, {32, 4, rc_cpasync_kernel<32, 4>},
                     {64, 2, rc_cpasync_kernel<64, 2>}, {64, 3, rc_cpasync_kernel<64, 3>},
                     {64, 4, rc_cpasync_kernel<64, 4>}, {128, 2, rc_cpasync_kernel<128, 2>}};
        void (*kern)(const rc_args) = NULL;
        for (const auto &b : built) {
            if (b.rows == c->rows && b.stages == c->stages) {
                kern = b.kern;
            }
        }
        if (kern == NULL) {
            snprintf(err, err_size,
                     "cpasync: rows %d, stages %d not built (32 x 2 / 4, 64 x 2 / 3 / 4, 128 x 2)",
                     c->rows, c->stages);
            return -1;
        }
        RC_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        RC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(bps, kern, RC_THREADS, smem));
        kern<<<(unsigned)g->items, RC_THREADS, smem, g->stream>>>(a);
    } else {
        const size_t smem = 1024 +
                            (size_t)c->stages * 2 * (g->shape.d / 64) * c->rows * a.heads * 128 +
                            16 * (size_t)c->stages + 4 * (size_t)c->stages;
        RC_CUDA(cudaFuncSetAttribute(rc_tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)smem));
        RC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(bps, rc_tma_kernel, RC_THREADS + 32,
                                                              smem));
        if (*bps < 1) {
            snprintf(err, err_size,
                     "tma rows %d stages %d heads %d: %zu bytes of shared memory do not fit",
                     c->rows, c->stages, a.heads, smem);
            return -1;
        }
        const int64_t grid = c->persistent ? (int64_t)g->sms * *bps : a.items;
        rc_tma_kernel<<<(unsigned)std::min<int64_t>(grid, a.items), RC_THREADS + 32, smem,
                        g->stream>>>(*mk, *mv, a, c->rows, c->stages, c->persistent);
    }
    RC_CUDA(cudaGetLastError());
    return 0;
}

extern "C" int rc_gpu_run(rc_gpu_t *g, const rc_case_t *c, uint64_t expect, int32_t warmup,
                          int32_t reps, rc_result_t *r, char *err, size_t err_size) {
    if (rc_case_fits(c, &g->shape, err, err_size) != 0) {
        return -1;
    }
    if (reps < 1 || warmup < 0) {
        snprintf(err, err_size, "reps %d (>= 1), warmup %d (>= 0)", reps, warmup);
        return -1;
    }
    const int32_t heads = rc_case_heads(c);
    CUtensorMap mk, mv;
    memset(&mk, 0, sizeof mk);
    memset(&mv, 0, sizeof mv);
    if (c->pattern == RC_TMA && (rc_map(g, &mk, "k", g->k, c->rows, heads, err, err_size) != 0 ||
                                 rc_map(g, &mv, "v", g->v, c->rows, heads, err, err_size) != 0)) {
        return -1;
    }
    int bps = 0;
    RC_CUDA(cudaMemsetAsync(g->sum, 0, 2 * sizeof(unsigned long long), g->stream));
    if (rc_launch(g, c, &mk, &mv, &bps, err, err_size) != 0) {
        return -1;
    }
    RC_CUDA(cudaMemcpyAsync(&r->sum, g->sum, sizeof(r->sum), cudaMemcpyDeviceToHost, g->stream));
    RC_CUDA(cudaStreamSynchronize(g->stream));
    r->blocks_per_sm = bps;
    r->ms = 0.0;
    if (r->sum != expect) {
        char name[64];
        rc_case_name(c, name, sizeof name);
        snprintf(err, err_size, "%s: the words' sum is %llu, expected %llu: not timed", name,
                 (unsigned long long)r->sum, (unsigned long long)expect);
        return 1;
    }
    std::vector<float> ms((size_t)reps);
    for (int32_t i = 0; i < warmup + reps; ++i) {
        if (g->flush != NULL) { /* L2 holds none of K and V (untimed) */
            RC_CUDA(cudaMemsetAsync(g->flush, i & 0xFF, g->flush_bytes, g->stream));
        }
        RC_CUDA(cudaMemsetAsync(g->sum, 0, 2 * sizeof(unsigned long long), g->stream));
        RC_CUDA(cudaEventRecord(g->e0, g->stream));
        if (rc_launch(g, c, &mk, &mv, &bps, err, err_size) != 0) {
            return -1;
        }
        RC_CUDA(cudaEventRecord(g->e1, g->stream));
        RC_CUDA(cudaEventSynchronize(g->e1));
        if (i >= warmup) {
            RC_CUDA(cudaEventElapsedTime(&ms[(size_t)(i - warmup)], g->e0, g->e1));
        }
    }
    std::sort(ms.begin(), ms.end());
    r->ms =
        reps % 2 ? ms[(size_t)reps / 2] : 0.5 * (ms[(size_t)reps / 2 - 1] + ms[(size_t)reps / 2]);
    return 0;
}

extern "C" int rc_gpu_set_split_keys(rc_gpu_t *g, int32_t keys, char *err, size_t err_size) {
    if (rc_split_keys_check(keys, err, err_size) != 0) {
        return -1;
    }
    g->split_keys = keys;
    g->items = rc_items(&g->shape, keys);
    return 0;
}

extern "C" int rc_gpu_set_flush(rc_gpu_t *g, size_t bytes, char *err, size_t err_size) {
    if (g->flush != NULL) {
        RC_CUDA(cudaFree(g->flush));
        g->flush = NULL;
    }
    g->flush_bytes = bytes;
    if (bytes > 0) {
        RC_CUDA(cudaMalloc(&g->flush, bytes));
    }
    return 0;
}

extern "C" const char *rc_gpu_name(const rc_gpu_t *g) {
    return g->name;
}

extern "C" void rc_gpu_close(rc_gpu_t *g) {
    if (g == NULL) {
        return;
    }
    cudaFree(g->k);
    cudaFree(g->v);
    cudaFree(g->cu);
    cudaFree(g->sum);
    cudaFree(g->flush);
    if (g->e0 != NULL) {
        cudaEventDestroy(g->e0);
    }
    if (g->e1 != NULL) {
        cudaEventDestroy(g->e1);
    }
    if (g->stream != NULL) {
        cudaStreamDestroy(g->stream);
    }
    free(g);
}
