/*
 * ref_threads.c - the thread count of the exact CPU references
 * (opp_ref_set_threads / opp_ref_threads, OPP_REF_THREADS) and the runner
 * that spreads a reference call's items over POSIX threads (ref_threads.h).
 */
#include "reference/ref_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/internal/check.h"
#include "reference/opp_reference.h"

/* ---  thread count  --- */

static atomic_int g_threads; /* set by opp_ref_set_threads; 0: default */

static int clamp_threads(long n) {
    return n < 1 ? 1 : (n > OPP_REF_MAX_THREADS ? OPP_REF_MAX_THREADS : (int)n);
}

void opp_ref_set_threads(int n) {
    atomic_store(&g_threads, n > 0 ? clamp_threads(n) : 0);
}

int opp_ref_threads(void) {
    const int set = atomic_load(&g_threads);
    if (set > 0) {
        return set;
    }
    const char *env = getenv("OPP_REF_THREADS");
    if (env != NULL) {
        char *end = NULL;
        const long n = strtol(env, &end, 10);
        if (end != env && *end == '\0' && n >= 1) {
            return clamp_threads(n);
        }
    }
    return clamp_threads(sysconf(_SC_NPROCESSORS_ONLN));
}

/* ---  runner  --- */

enum { GROUP_EMPTY = 0, GROUP_LOADING, GROUP_READY, GROUP_FAILED };

typedef struct group_state {
    int state;         /* GROUP_*, under run_state.mu */
    atomic_llong left; /* items not finished yet; the last one frees mem */
    double *mem;
    opp__exact_kv_t kv;
} group_state_t;

typedef struct run_state {
    const opp__ref_work_t *w;
    int64_t *item_end; /* [n_groups] inclusive prefix sums of group_items */
    int64_t n_items;
    group_state_t *groups;
    atomic_llong next;
    atomic_int failed;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a group left GROUP_LOADING */
} run_state_t;

typedef struct worker {
    run_state_t *rs;
    double *scratch;
    pthread_t tid;
} worker_t;

/* The group of item: the smallest g with item_end[g] > item. */
static int64_t group_of(const run_state_t *rs, int64_t item) {
    int64_t lo = 0, hi = rs->w->n_groups - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (rs->item_end[mid] > item) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* Group g's widened keys and values, loaded by the first caller; NULL if
 * they could not be allocated. */
static const opp__exact_kv_t *acquire(run_state_t *rs, int64_t g) {
    const opp__ref_work_t *w = rs->w;
    group_state_t *gs = &rs->groups[g];
    pthread_mutex_lock(&rs->mu);
    while (gs->state == GROUP_LOADING) {
        pthread_cond_wait(&rs->cv, &rs->mu);
    }
    if (gs->state == GROUP_EMPTY) {
        gs->state = GROUP_LOADING;
        pthread_mutex_unlock(&rs->mu);
        const int32_t n = w->group_keys(w->ctx, g);
        double *mem = malloc(opp__exact_kv_doubles(n, w->d, w->dv) * sizeof(double));
        if (mem != NULL) {
            opp__exact_kv_init(&gs->kv, mem, n, w->d, w->dv);
            w->load(w->ctx, g, &gs->kv);
        }
        pthread_mutex_lock(&rs->mu);
        gs->mem = mem;
        gs->state = mem != NULL ? GROUP_READY : GROUP_FAILED;
        pthread_cond_broadcast(&rs->cv);
    }
    const int ready = gs->state == GROUP_READY;
    pthread_mutex_unlock(&rs->mu);
    return ready ? &gs->kv : NULL;
}

static void release(run_state_t *rs, int64_t g) {
    group_state_t *gs = &rs->groups[g];
    if (atomic_fetch_sub(&gs->left, 1) == 1) {
        free(gs->mem);
        gs->mem = NULL;
    }
}

static void *worker_main(void *arg) {
    worker_t *wk = arg;
    run_state_t *rs = wk->rs;
    const opp__ref_work_t *w = rs->w;
    while (!atomic_load(&rs->failed)) {
        const int64_t item = atomic_fetch_add(&rs->next, 1);
        if (item >= rs->n_items) {
            break;
        }
        const int64_t g = group_of(rs, item);
        const int64_t first = g > 0 ? rs->item_end[g - 1] : 0;
        const opp__exact_kv_t *kv = acquire(rs, g);
        if (kv == NULL) {
            atomic_store(&rs->failed, 1);
        } else {
            w->run(w->ctx, g, item - first, kv, wk->scratch);
        }
        release(rs, g);
    }
    return NULL;
}

/* Spawns workers 1 .. n-1 (fewer if the system refuses), works as worker 0,
 * joins them. The result does not depend on how many actually ran. */
static void run_workers(run_state_t *rs, worker_t *wk, int n) {
    int started = 1;
    while (started < n && pthread_create(&wk[started].tid, NULL, worker_main, &wk[started]) == 0) {
        ++started;
    }
    worker_main(&wk[0]);
    for (int i = 1; i < started; ++i) {
        pthread_join(wk[i].tid, NULL);
    }
}

opp_status_t opp__ref_run(const opp__ref_work_t *w) {
    if (w->n_groups <= 0) {
        return OPP_STATUS_SUCCESS;
    }
    run_state_t rs;
    rs.w = w;
    rs.item_end = malloc(sizeof(int64_t) * (size_t)w->n_groups);
    rs.groups = calloc((size_t)w->n_groups, sizeof(group_state_t));
    if (rs.item_end == NULL || rs.groups == NULL) {
        free(rs.item_end);
        free(rs.groups);
        OPP_RETURN_IF(1, OPP_STATUS_HOST_ALLOC_FAILED, "cannot allocate the state of %lld groups",
                      (long long)w->n_groups);
    }
    rs.n_items = 0;
    for (int64_t g = 0; g < w->n_groups; ++g) {
        const int64_t items = w->group_items(w->ctx, g);
        atomic_init(&rs.groups[g].left, items);
        rs.n_items += items;
        rs.item_end[g] = rs.n_items;
    }
    const int n = (int)(rs.n_items < opp_ref_threads() ? rs.n_items : opp_ref_threads());
    worker_t *wk = calloc((size_t)(n > 0 ? n : 1), sizeof(worker_t));
    int ok = wk != NULL;
    for (int i = 0; ok && i < n; ++i) {
        wk[i].rs = &rs;
        wk[i].scratch = malloc((w->scratch_doubles > 0 ? w->scratch_doubles : 1) * sizeof(double));
        ok = wk[i].scratch != NULL;
    }
    if (ok && n > 0) {
        atomic_init(&rs.next, 0);
        atomic_init(&rs.failed, 0);
        pthread_mutex_init(&rs.mu, NULL);
        pthread_cond_init(&rs.cv, NULL);
        run_workers(&rs, wk, n);
        pthread_mutex_destroy(&rs.mu);
        pthread_cond_destroy(&rs.cv);
        ok = !atomic_load(&rs.failed);
        for (int64_t g = 0; g < w->n_groups; ++g) {
            free(rs.groups[g].mem); /* groups a failure left unfinished */
        }
    }
    for (int i = 0; wk != NULL && i < n; ++i) {
        free(wk[i].scratch);
    }
    free(wk);
    free(rs.item_end);
    free(rs.groups);
    OPP_RETURN_IF(!ok, OPP_STATUS_HOST_ALLOC_FAILED,
                  "cannot allocate host scratch (%zu doubles per thread, %d threads) or the "
                  "widened keys and values of a (sequence, kv head)",
                  w->scratch_doubles, n);
    return OPP_STATUS_SUCCESS;
}
