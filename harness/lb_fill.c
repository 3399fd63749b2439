/*
 * lb_fill.c - the logical batch generator's bulk fills (lb_fill.h). A
 * decode workload's K and V are ~0.5 G elements and their padded copies
 * twice that; filled one element at a time they cost oppbench ~20 s per
 * run on the GPU machine before any kernel runs. The random fill is cut
 * into ranges, each thread starting its splitmix64 state where the
 * sequential loop would be (opp_rng_skip, OPP_RNG_NORMALISH_DRAWS draws an
 * element), so the values are the same bits at any thread count; the
 * poison fill computes its two-element pattern once and threads copy it
 * over whole periods. fill_run is the one start / run / join of both.
 */
#include "harness/lb_fill.h"

#include <pthread.h>
#include <string.h>

#include "harness/rng.h"
#include "numerics/fp_convert.h"
#include "reference/opp_reference.h"

enum { FILL_MAX_THREADS = 64, FILL_MIN_PER_THREAD = 1 << 18 };

/* Threads for `units` of work, one per `per_thread` units at most (and at
 * least one): opp_ref_threads(), capped. */
static size_t fill_threads(size_t units, size_t per_thread) {
    size_t nt = (size_t)opp_ref_threads();
    const size_t most = units / per_thread;
    nt = nt < most ? nt : most;
    nt = nt < FILL_MAX_THREADS ? nt : FILL_MAX_THREADS;
    return nt > 0 ? nt : 1;
}

/* fn(args + t size) for t = 0 .. nt-1: range 0 here, the others on threads
 * (a thread that cannot start runs here too); returns when all are done. */
static void fill_run(size_t nt, void *(*fn)(void *), void *args, size_t size) {
    pthread_t tid[FILL_MAX_THREADS];
    int started[FILL_MAX_THREADS];
    for (size_t t = 0; t < nt; ++t) {
        started[t] = t > 0 && pthread_create(&tid[t], NULL, fn, (char *)args + t * size) == 0;
    }
    for (size_t t = 0; t < nt; ++t) {
        if (!started[t]) {
            fn((char *)args + t * size);
        }
    }
    for (size_t t = 0; t < nt; ++t) {
        if (started[t]) {
            pthread_join(tid[t], NULL);
        }
    }
}

typedef struct fill_range {
    void *dst;
    size_t i0, i1;
    int dtype;
    double amplitude;
    uint64_t state; /* the state before element i0's draws */
} fill_range_t;

static void *fill_range_run(void *arg) {
    fill_range_t *r = (fill_range_t *)arg;
    uint64_t st = r->state;
    for (size_t i = r->i0; i < r->i1; ++i) {
        opp__store_elem(r->dst, i, r->dtype, r->amplitude * opp_rng_normalish(&st));
    }
    return NULL;
}

void opp_lb_fill_values(void *dst, size_t count, opp_dtype_t dtype, double amplitude,
                        uint64_t *state) {
    const size_t nt = fill_threads(count, FILL_MIN_PER_THREAD);
    fill_range_t r[FILL_MAX_THREADS];
    for (size_t t = 0; t < nt; ++t) {
        r[t].dst = dst;
        r[t].i0 = count / nt * t;
        r[t].i1 = t + 1 == nt ? count : count / nt * (t + 1);
        r[t].dtype = (int)dtype;
        r[t].amplitude = amplitude;
        r[t].state = *state;
        opp_rng_skip(&r[t].state, (uint64_t)r[t].i0 * OPP_RNG_NORMALISH_DRAWS);
    }
    fill_run(nt, fill_range_run, r, sizeof r[0]);
    opp_rng_skip(state, (uint64_t)count * OPP_RNG_NORMALISH_DRAWS);
}

enum { PATTERN_BYTES = 1 << 16 }; /* the copied block: whole pattern periods */

typedef struct pattern_range {
    char *dst;
    size_t b0, b1;       /* byte range, b0 a multiple of the period */
    const char *pattern; /* PATTERN_BYTES bytes from a period's start */
} pattern_range_t;

static void *pattern_range_run(void *arg) {
    const pattern_range_t *r = (const pattern_range_t *)arg;
    for (size_t b = r->b0; b < r->b1;) {
        const size_t n = r->b1 - b < PATTERN_BYTES ? r->b1 - b : PATTERN_BYTES;
        memcpy(r->dst + b, r->pattern, n);
        b += n;
    }
    return NULL;
}

void opp_lb_fill_pattern2(void *dst, size_t count, opp_dtype_t dtype, double v0, double v1) {
    const size_t es = opp_dtype_size(dtype);
    static _Thread_local char pattern[PATTERN_BYTES]; /* 2 es divides it (es: 2 or 4) */
    for (size_t i = 0; i < PATTERN_BYTES / es; ++i) {
        opp__store_elem(pattern, i, (int)dtype, (i & 1) ? v1 : v0);
    }
    /* threads over ranges of whole periods: a fresh buffer's page faults
     * (the kernel zeroing each page) are most of the time, and they run
     * in parallel */
    const size_t bytes = count * es, period = 2 * es;
    const size_t nt = fill_threads(bytes, (size_t)FILL_MIN_PER_THREAD * 8);
    pattern_range_t r[FILL_MAX_THREADS];
    for (size_t t = 0; t < nt; ++t) {
        r[t].dst = (char *)dst;
        r[t].b0 = bytes / period / nt * t * period;
        r[t].b1 = t + 1 == nt ? bytes : bytes / period / nt * (t + 1) * period;
        r[t].pattern = pattern;
    }
    fill_run(nt, pattern_range_run, r, sizeof r[0]);
}
