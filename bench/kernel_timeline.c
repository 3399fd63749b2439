/*
 * kernel_timeline.c - libopp_timeline.so: a CUDA injection library that records
 * the GPU timeline of any CUDA program (oppbench mainly) with the CUPTI Activity
 * API, for the GPU machine, which has no nsys. A development tool, not part of
 * the library.
 *
 * The CUDA driver loads it when CUDA_INJECTION64_PATH names it and calls
 * InitializeInjection() once, inside cuInit. That registers CUPTI's buffer
 * callbacks (8 MiB host buffers), atexit()s the writer and enables the activity
 * kinds CONCURRENT_KERNEL, MEMSET and MEMCPY. Each completed buffer is copied
 * into a table of records (kernel names interned: CUPTI owns its strings). At
 * exit the writer forces CUPTI's flush (cuptiActivityFlushAll(1)) and writes
 * every kept record, oldest first, as CSV with this header, to $OPP_TIMELINE
 * (default opp_timeline.csv in the working directory):
 *
 *   kind,name,start_ns,end_ns,stream,grid_x,grid_y,grid_z,block_x,dyn_smem,correlation,bytes
 *
 *   kind         kernel | memset | memcpy
 *   name         the kernel's name as CUPTI gives it (mangled, _Z...), "memset",
 *                or memcpy_<HtoD|DtoH|DtoD|HtoH|PtoP|...>; double-quoted when it
 *                holds a comma or a quote (RFC 4180)
 *   start/end    CUPTI timestamps in ns (the GPU's timer, on CUPTI's time base)
 *   grid_*, block_x, dyn_smem (bytes)   kernels only, else 0
 *   correlation  CUPTI's correlation id (ties a record to its API call)
 *   bytes        memset / memcpy size in bytes, 0 for kernels
 *
 * bench/timeline.py splits the file into oppbench's timed runs (each starts with
 * the L2-flush memset) and prints each kernel's start, duration and gap.
 * $OPP_TIMELINE_MAX (default 200000) caps the records kept in memory: past it
 * the oldest are overwritten, so a long run keeps its last records.
 *
 * Output: stderr only, lines starting "opp_timeline:" (stdout is the host
 * program's; oppbench's is parsed). A failing CUPTI call is reported with its
 * name and cuptiGetResultString's text, and the host program carries on,
 * untraced or partly traced; InitializeInjection returns 1 on success and 0
 * when tracing could not start (the CUPTI samples' convention), and then
 * nothing is written at exit.
 *
 * Build:  bazel build -c opt //bench:libopp_timeline.so       (manual)
 * Run:    LD_LIBRARY_PATH=<dir of libcupti.so.13>:$LD_LIBRARY_PATH \
 *         CUDA_INJECTION64_PATH=$PWD/libopp_timeline.so OPP_TIMELINE=tl.csv prog ...
 *         (bench/README.md, "Kernel timeline (CUPTI)")
 */
#include <cupti.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_BUFFER_BYTES ((size_t)8 << 20)
#define TL_BUFFER_ALIGN 8 /* CUPTI's ACTIVITY_RECORD_ALIGNMENT */
#define TL_DEFAULT_MAX  200000
#define TL_DEFAULT_PATH "opp_timeline.csv"

/* The driver finds this by name (dlsym); exported from the .so. */
__attribute__((visibility("default"))) int InitializeInjection(void);

enum { TL_KERNEL, TL_MEMSET, TL_MEMCPY };
static const char *const kind_names[] = {"kernel", "memset", "memcpy"};

typedef struct tl_record {
    const char *name; /* interned copy, or a string literal */
    uint64_t start_ns, end_ns, bytes;
    uint32_t stream, correlation;
    int32_t grid[3], block_x, dyn_smem;
    int kind;
} tl_record_t;

/* Everything below is guarded by lock: CUPTI may complete buffers on its own
 * thread while the program runs, and the writer runs at exit. */
static struct {
    pthread_mutex_t lock;
    tl_record_t *recs; /* a ring once count == max: recs[head] is the oldest */
    size_t cap, count, head, max;
    uint64_t overwritten, dropped, incomplete, no_buffer;
    char **names; /* open-addressing set of interned names */
    size_t names_cap, names_count;
    const char *path;
    int started, tracing;
} tl = {.lock = PTHREAD_MUTEX_INITIALIZER};

// --- helpers

/* Reports a failed CUPTI call on stderr. @return 1 when r is CUPTI_SUCCESS. */
static int cupti_ok(CUptiResult r, const char *call) {
    if (r == CUPTI_SUCCESS) {
        return 1;
    }
    const char *text = NULL;
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == NULL) {
        text = "(no text)";
    }
    fprintf(stderr, "opp_timeline: %s failed: %s (CUptiResult %d)\n", call, text, (int)r);
    return 0;
}

static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; ++s) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

/* The set's copy of s (made on first sight). Caller holds the lock.
 * @return never NULL: "?" when memory ran out. */
static const char *intern(const char *s) {
    if (s == NULL) {
        return "?";
    }
    if (2 * (tl.names_count + 1) > tl.names_cap) {
        const size_t ncap = tl.names_cap ? 2 * tl.names_cap : 256;
        char **n = calloc(ncap, sizeof *n);
        if (n == NULL) {
            return "?";
        }
        for (size_t i = 0; i < tl.names_cap; ++i) {
            if (tl.names[i] != NULL) {
                size_t j = fnv1a(tl.names[i]) & (ncap - 1);
                while (n[j] != NULL) {
                    j = (j + 1) & (ncap - 1);
                }
                n[j] = tl.names[i];
            }
        }
        free(tl.names);
        tl.names = n;
        tl.names_cap = ncap;
    }
    size_t j = fnv1a(s) & (tl.names_cap - 1);
    while (tl.names[j] != NULL) {
        if (strcmp(tl.names[j], s) == 0) {
            return tl.names[j];
        }
        j = (j + 1) & (tl.names_cap - 1);
    }
    char *copy = strdup(s);
    if (copy == NULL) {
        return "?";
    }
    tl.names[j] = copy;
    ++tl.names_count;
    return copy;
}

/* Keeps r: appended while under max, else over the oldest. Caller holds the lock. */
static void keep(const tl_record_t *r) {
    if (tl.count == tl.cap && tl.cap < tl.max) {
        size_t ncap = tl.cap ? 2 * tl.cap : 4096;
        if (ncap > tl.max) {
            ncap = tl.max;
        }
        tl_record_t *n = realloc(tl.recs, ncap * sizeof *n);
        if (n == NULL) {
            fprintf(stderr,
                    "opp_timeline: out of memory at %zu records; keeping the last %zu from "
                    "now on\n",
                    tl.count, tl.count);
            tl.max = tl.count; /* a ring of what there is */
        } else {
            tl.recs = n;
            tl.cap = ncap;
        }
    }
    if (tl.count < tl.cap) {
        tl.recs[tl.count++] = *r;
    } else if (tl.count > 0) {
        tl.recs[tl.head] = *r;
        tl.head = (tl.head + 1) % tl.count;
        ++tl.overwritten;
    }
}

static const char *memcpy_name(uint8_t copy_kind) {
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "memcpy_HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "memcpy_DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return "memcpy_HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return "memcpy_AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
        return "memcpy_AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
        return "memcpy_AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return "memcpy_DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "memcpy_DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "memcpy_HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "memcpy_PtoP";
    default:
        return "memcpy";
    }
}

/* The fields every kept kind has, from CUPTI record x (a kernel, memset or
 * memcpy struct: their members share these names). */
#define TL_COMMON(r, x)                                                               \
    ((r)->start_ns = (x)->start, (r)->end_ns = (x)->end, (r)->stream = (x)->streamId, \
     (r)->correlation = (x)->correlationId)

/* One CUPTI record as ours; 0 for kinds we do not keep. Caller holds the lock. */
static int convert(const CUpti_Activity *a, tl_record_t *r) {
    memset(r, 0, sizeof *r);
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        r->kind = TL_KERNEL;
        r->name = intern(k->name);
        TL_COMMON(r, k);
        r->grid[0] = k->gridX;
        r->grid[1] = k->gridY;
        r->grid[2] = k->gridZ;
        r->block_x = k->blockX;
        r->dyn_smem = k->dynamicSharedMemory;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
        r->kind = TL_MEMSET;
        r->name = "memset";
        TL_COMMON(r, m);
        r->bytes = m->bytes;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
        r->kind = TL_MEMCPY;
        r->name = memcpy_name(m->copyKind);
        TL_COMMON(r, m);
        r->bytes = m->bytes;
        return 1;
    }
    default:
        return 0;
    }
}

// --- CUPTI's buffer callbacks

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    void *p = NULL;
    if (posix_memalign(&p, TL_BUFFER_ALIGN, TL_BUFFER_BYTES) != 0) {
        p = NULL;
    }
    *buffer = p;
    *size = p != NULL ? TL_BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
    if (p == NULL) {
        pthread_mutex_lock(&tl.lock);
        if (tl.no_buffer++ == 0) {
            fprintf(stderr, "opp_timeline: no memory for an activity buffer: CUPTI drops "
                            "records\n");
        }
        pthread_mutex_unlock(&tl.lock);
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_size) {
    pthread_mutex_lock(&tl.lock);
    if (buffer != NULL && valid_size > 0) {
        CUpti_Activity *a = NULL;
        for (;;) {
            const CUptiResult st = cuptiActivityGetNextRecord(buffer, valid_size, &a);
            if (st == CUPTI_ERROR_MAX_LIMIT_REACHED) {
                break;
            }
            if (!cupti_ok(st, "cuptiActivityGetNextRecord")) {
                break;
            }
            tl_record_t r;
            if (!convert(a, &r)) {
                continue;
            }
            if (r.start_ns == 0 || r.end_ns == 0 || r.end_ns < r.start_ns) {
                ++tl.incomplete; /* no timing collected, or cut off by the forced flush */
                continue;
            }
            keep(&r);
        }
    }
    size_t dropped = 0;
    if (cupti_ok(cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped),
                 "cuptiActivityGetNumDroppedRecords")) {
        tl.dropped += dropped;
    }
    pthread_mutex_unlock(&tl.lock);
    free(buffer);
}

// --- the writer (atexit)

static void write_name(FILE *f, const char *s) {
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"') {
            fputc('"', f);
        }
        fputc(*s, f);
    }
    fputc('"', f);
}

static void tl_write_at_exit(void) {
    pthread_mutex_lock(&tl.lock);
    const int tracing = tl.tracing;
    pthread_mutex_unlock(&tl.lock);
    if (!tracing) {
        return; /* InitializeInjection said why */
    }
    cupti_ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
             "cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)");
    pthread_mutex_lock(&tl.lock);
    size_t per_kind[3] = {0, 0, 0};
    FILE *f = fopen(tl.path, "w");
    if (f == NULL) {
        fprintf(stderr, "opp_timeline: cannot write %s: %s (%zu records lost)\n", tl.path,
                strerror(errno), tl.count);
    } else {
        fputs("kind,name,start_ns,end_ns,stream,grid_x,grid_y,grid_z,block_x,dyn_smem,"
              "correlation,bytes\n",
              f);
        for (size_t i = 0; i < tl.count; ++i) {
            const tl_record_t *r = &tl.recs[(tl.head + i) % tl.count];
            ++per_kind[r->kind];
            fprintf(f, "%s,", kind_names[r->kind]);
            write_name(f, r->name);
            fprintf(f,
                    ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRId32 ",%" PRId32 ",%" PRId32
                    ",%" PRId32 ",%" PRId32 ",%" PRIu32 ",%" PRIu64 "\n",
                    r->start_ns, r->end_ns, r->stream, r->grid[0], r->grid[1], r->grid[2],
                    r->block_x, r->dyn_smem, r->correlation, r->bytes);
        }
        const int bad = ferror(f);
        if (fclose(f) != 0 || bad) {
            fprintf(stderr, "opp_timeline: writing %s failed: %s\n", tl.path, strerror(errno));
        } else {
            fprintf(stderr,
                    "opp_timeline: %zu records (%zu kernels, %zu memsets, %zu memcpys) "
                    "written to %s\n",
                    tl.count, per_kind[TL_KERNEL], per_kind[TL_MEMSET], per_kind[TL_MEMCPY],
                    tl.path);
        }
    }
    if (tl.dropped > 0) {
        fprintf(stderr, "opp_timeline: CUPTI dropped %" PRIu64 " records (no buffer space)\n",
                tl.dropped);
    }
    if (tl.overwritten > 0) {
        fprintf(stderr,
                "opp_timeline: the oldest %" PRIu64 " records were overwritten "
                "(OPP_TIMELINE_MAX %zu)\n",
                tl.overwritten, tl.max);
    }
    if (tl.incomplete > 0) {
        fprintf(stderr, "opp_timeline: %" PRIu64 " records had no timestamps (left out)\n",
                tl.incomplete);
    }
    pthread_mutex_unlock(&tl.lock);
}

// --- entry point

/* Called once by the CUDA driver (CUDA_INJECTION64_PATH) inside cuInit.
 * @return 1 when tracing started, 0 when it could not (reported on stderr). */
int InitializeInjection(void) {
    pthread_mutex_lock(&tl.lock);
    if (tl.started) {
        pthread_mutex_unlock(&tl.lock);
        return 1; /* the driver calls it once; a second call changes nothing */
    }
    tl.started = 1;
    const char *path = getenv("OPP_TIMELINE");
    tl.path = path != NULL && path[0] != '\0' ? path : TL_DEFAULT_PATH;
    tl.max = TL_DEFAULT_MAX;
    const char *max = getenv("OPP_TIMELINE_MAX");
    if (max != NULL && max[0] != '\0') {
        char *end = NULL;
        errno = 0;
        const unsigned long long v = strtoull(max, &end, 10);
        if (errno != 0 || *end != '\0' || v == 0 || v > (1ull << 32) || max[0] == '-') {
            fprintf(stderr,
                    "opp_timeline: OPP_TIMELINE_MAX=%s is not a count in 1..2^32; using %d\n", max,
                    TL_DEFAULT_MAX);
        } else {
            tl.max = (size_t)v;
        }
    }
    pthread_mutex_unlock(&tl.lock);
    if (!cupti_ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                  "cuptiActivityRegisterCallbacks")) {
        fprintf(stderr, "opp_timeline: not tracing\n");
        return 0;
    }
    if (atexit(tl_write_at_exit) != 0) {
        fprintf(stderr, "opp_timeline: atexit failed: not tracing\n");
        return 0;
    }
    if (!cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                  "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)")) {
        fprintf(stderr, "opp_timeline: not tracing\n");
        return 0;
    }
    const int memset_ok = cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET),
                                   "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET)");
    const int memcpy_ok = cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY),
                                   "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY)");
    pthread_mutex_lock(&tl.lock);
    tl.tracing = 1;
    pthread_mutex_unlock(&tl.lock);
    fprintf(stderr, "opp_timeline: tracing kernels%s%s; written to %s at exit (at most %zu)\n",
            memset_ok ? ", memsets" : "", memcpy_ok ? ", memcpys" : "", tl.path, tl.max);
    return 1;
}
