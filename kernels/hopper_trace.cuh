/*
 * hopper_trace.cuh - an event trace of the Hopper kernel
 * (kernels/hopper_attention.cuh) for finding where its time goes: with
 * OPP__HOPPER_TRACE 1 (a development build only; 0, the default, compiles
 * every call away) the producer's lane 0 and each consumer's first thread
 * record (event, argument, SM clock) words into a static device buffer,
 * [block][role][HOP_TRACE_CAP], role 0 the producer, 1 .. 3 the consumers;
 * each launch overwrites it from the start and ends every role's run with
 * HT_END (argument: the events it recorded). At process exit the launcher
 * copies the buffer of the last launch to $OPP_HOP_TRACE.d<DB>
 * (hop_trace_dump); bench/hop_trace.py reads it.
 *   word = event << 56 | min(arg, 255) << 48 | clock64 & (2^48 - 1)
 */
#ifndef OPP_KERNELS_HOPPER_TRACE_CUH
#define OPP_KERNELS_HOPPER_TRACE_CUH

#include <stdint.h>

#ifndef OPP__HOPPER_TRACE
#define OPP__HOPPER_TRACE 0
#endif
#if OPP__HOPPER_TRACE
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#endif

/* the buffer's shape: a development build may set other sizes (the 3xTF32
 * kernel's trace, a block an item: more blocks, fewer events each) */
#ifndef OPP__HOPPER_TRACE_BLOCKS
#define OPP__HOPPER_TRACE_BLOCKS 144
#endif
#ifndef OPP__HOPPER_TRACE_CAP
#define OPP__HOPPER_TRACE_CAP 8192
#endif
enum {
    HOP_TRACE_BLOCKS = OPP__HOPPER_TRACE_BLOCKS,
    HOP_TRACE_ROLES = 4,
    HOP_TRACE_CAP = OPP__HOPPER_TRACE_CAP,
};

/* events: producer (role 0) */
enum {
    HT_START = 0,   /* the role's first instruction after the block's setup */
    HT_CLAIM = 1,   /* the loader waits for the next claimed item (the claim queue) */
    HT_CLAIMED = 2, /* ... has it (arg: nkb of the item, 254: past the end, 253: empty) */
    HT_QEMPTY = 3,  /* the wait for q_empty returned */
    HT_QISSUED = 4, /* Q's TMA issued */
    HT_KWAIT = 5,   /* K_j's stage free (arg j) */
    HT_VWAIT = 6,   /* V_j's stage free (arg j) */
    /* consumers (roles 1 ..) */
    HT_QFULL = 16,   /* q_full wait returned (arg nkb) */
    HT_K0 = 17,      /* block 0's K landed */
    HT_S0 = 18,      /* block 0's S retired */
    HT_P0 = 19,      /* block 0's softmax and P done */
    HT_KJ = 20,      /* step j: K_j landed (arg j) */
    HT_TURN = 21,    /* (not recorded: with it, ptxas serialised the wgmma pipeline, C7511) */
    HT_SJ = 22,      /* step j: S_j retired */
    HT_PVJ = 23,     /* step j: P_{j-1} V_{j-1} retired */
    HT_STEP = 24,    /* step j done (P_j packed) */
    HT_VLAST = 25,   /* the last V landed */
    HT_PVLAST = 26,  /* the last P V retired */
    HT_EPI = 27,     /* the epilogue done */
    HT_EPI_LSE = 28, /* epilogue: row sums and LSE done */
    HT_EPI_BAR = 29, /* epilogue: the O tile free (the last store read it), the warps met */
    HT_EPI_ST = 30,  /* epilogue: O / l in shared memory, the warps met again */
    /* the 3xTF32 kernel (kernels/tf32x3_ws.cuh); role 0 the producer */
    TT_P_LANDED = 40, /* K_j, V_j landed (arg j) */
    TT_P_KFREE = 41,  /* K's split stage free (k_empty) */
    TT_P_KDONE = 42,  /* K_j split, k_full arrived */
    TT_P_VFREE = 43,  /* V's split stage free (v_empty) */
    TT_P_VDONE = 44,  /* V_j split, v_full arrived */
    TT_C_ITEM = 48,   /* consumer: an item (arg: its key blocks) */
    TT_C_QDONE = 49,  /* its Q split */
    TT_C_KFULL = 50,  /* K_j split (k_full) */
    TT_C_SDONE = 51,  /* S_j retired */
    TT_C_PDONE = 52,  /* softmax and P's split done */
    TT_C_VFULL = 53,  /* V_j split (v_full) */
    TT_C_PVDONE = 54, /* P V_j retired */
    TT_C_REST = 55,   /* the item's blocks past its rows released */
    TT_C_EPI = 56,    /* O / l stored */
    HT_END = 255,
};

#if OPP__HOPPER_TRACE
static __device__ unsigned long long
    hop_trace_buf[HOP_TRACE_BLOCKS * HOP_TRACE_ROLES * HOP_TRACE_CAP];

struct hop_tracer {
    uint32_t n; /* role << 16 | events recorded */
    __device__ __forceinline__ void init(int role) {
        n = (uint32_t)role << 16;
    }
    __device__ __forceinline__ unsigned long long *at() const {
        return hop_trace_buf + ((size_t)blockIdx.x * HOP_TRACE_ROLES + (n >> 16)) * HOP_TRACE_CAP +
               (n & 0xFFFFu);
    }
    __device__ __forceinline__ void ev(int e, int64_t arg) {
        if (blockIdx.x < HOP_TRACE_BLOCKS && (n & 0xFFFFu) < HOP_TRACE_CAP - 1) {
            const unsigned long long a = arg < 0     ? 0ull
                                         : arg > 255 ? 255ull
                                                     : (unsigned long long)arg;
            *at() = ((unsigned long long)e << 56) | (a << 48) |
                    ((unsigned long long)clock64() & ((1ull << 48) - 1));
            ++n;
        }
    }
    __device__ __forceinline__ void end() {
        if (blockIdx.x < HOP_TRACE_BLOCKS) {
            *at() = ((unsigned long long)HT_END << 56) | (unsigned long long)(n & 0xFFFFu);
        }
    }
};

/* at exit (host): the last launch's events to $OPP_HOP_TRACE.<tag> (no-op
 * without the variable); bench/hop_trace.py and bench/tf32x3_trace.py read
 * them */
static inline void hop_trace_write(const char *tag) {
    const char *path = getenv("OPP_HOP_TRACE");
    if (path == NULL) {
        return;
    }
    const size_t n = (size_t)HOP_TRACE_BLOCKS * HOP_TRACE_ROLES * HOP_TRACE_CAP;
    unsigned long long *h = (unsigned long long *)malloc(n * 8);
    char name[512];
    snprintf(name, sizeof name, "%s.%s", path, tag);
    FILE *f = fopen(name, "wb");
    if (h != NULL && f != NULL && cudaDeviceSynchronize() == cudaSuccess &&
        cudaMemcpyFromSymbol(h, hop_trace_buf, n * 8) == cudaSuccess) {
        fwrite(h, 8, n, f);
    }
    if (f != NULL) {
        fclose(f);
    }
    free(h);
}
#else
struct hop_tracer {
    __device__ __forceinline__ void init(int) {}
    __device__ __forceinline__ void ev(int, int64_t) {}
    __device__ __forceinline__ void end() {}
};
#endif

#endif /* OPP_KERNELS_HOPPER_TRACE_CUH */
