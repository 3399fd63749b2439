/*
 * table.c - the result table of oppcheck: one row per comparison (or timed
 * run) with elements compared, bit-identical %, max ulp and milliseconds.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tools/oppcheck/oppcheck.h"

double oppcheck_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

oppcheck_row_t *oppcheck_table_add(oppcheck_table_t *t, const char *name) {
    if (t->count >= (int)(sizeof(t->rows) / sizeof(t->rows[0]))) {
        return &t->rows[t->count - 1]; /* full: reuse the last row (never happens) */
    }
    oppcheck_row_t *r = &t->rows[t->count++];
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->ok = 1;
    return r;
}

void oppcheck_table_print(const oppcheck_table_t *t) {
    printf("\n%-58s %12s %10s %8s %10s\n", "comparison", "elements", "bit-ident", "max ulp", "ms");
    for (int i = 0; i < t->count; ++i) {
        const oppcheck_row_t *r = &t->rows[i];
        if (r->err.compared > 0) { /* an approximate path: its error, not its bits */
            printf("%-58s %12zu max abs err %.3g, rms %.3g, %zu non-finite %10.1f%s\n", r->name,
                   r->err.compared, r->err.max_abs, opp_err_rms(&r->err), r->err.nonfinite, r->ms,
                   r->ok ? "" : "  DISAGREES");
            continue;
        }
        if (r->cmp.compared == 0) {
            printf("%-58s %12s %10s %8s %10.1f\n", r->name, "-", "-", "-", r->ms);
            continue;
        }
        char ulp[24];
        if (r->cmp.max_ulp == UINT64_MAX) {
            snprintf(ulp, sizeof(ulp), "NaN");
        } else {
            snprintf(ulp, sizeof(ulp), "%llu", (unsigned long long)r->cmp.max_ulp);
        }
        printf("%-58s %12zu %9.4f%% %8s %10.1f%s\n", r->name, r->cmp.compared,
               100.0 * (double)r->cmp.identical / (double)r->cmp.compared, ulp, r->ms,
               r->ok ? "" : "  DISAGREES");
    }
}
