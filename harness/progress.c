/*
 * progress.c - the progress lines of the long tools (format in progress.h).
 */
#include "harness/progress.h"

#include <math.h>
#include <time.h>

double opp_progress_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

char *opp_progress_duration(char *buf, size_t size, double s) {
    if (!(s >= 0.0) || !isfinite(s)) {
        snprintf(buf, size, "?");
    } else if (s < 59.95) {
        snprintf(buf, size, "%.1fs", s);
    } else if (s < 3599.5) {
        const long t = lround(s);
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    } else {
        const long m = lround(s / 60.0);
        snprintf(buf, size, "%ldh%02ldm", m / 60, m % 60);
    }
    return buf;
}

char *opp_progress_format_item(char *buf, size_t size, const char *tool, int done_items,
                               int total_items, double done_work, double total_work,
                               double elapsed_s, const char *name) {
    const double frac = total_work > 0.0 ? done_work / total_work : 0.0;
    const double eta = done_work > 0.0 ? elapsed_s * (total_work - done_work) / done_work : -1.0;
    char el[32], et[32];
    int width = 1;
    for (int t = total_items; t >= 10; t /= 10) {
        ++width;
    }
    snprintf(buf, size, "%s [%*d/%d] %5.1f%% elapsed %s eta %s: %s", tool, width, done_items,
             total_items, 100.0 * frac, opp_progress_duration(el, sizeof el, elapsed_s),
             opp_progress_duration(et, sizeof et, eta > 0.0 ? eta : 0.0), name);
    return buf;
}

char *opp_progress_format_done(char *buf, size_t size, const char *tool, int items,
                               double elapsed_s) {
    char el[32];
    snprintf(buf, size, "%s done: %d item%s in %s (%.1f ms per item)", tool, items,
             items == 1 ? "" : "s", opp_progress_duration(el, sizeof el, elapsed_s),
             items > 0 ? 1e3 * elapsed_s / items : 0.0);
    return buf;
}

void opp_progress_start(opp_progress_t *p, FILE *out, const char *tool, int total_items,
                        double total_work) {
    p->out = out;
    p->tool = tool;
    p->total_items = total_items;
    p->total_work = total_work > 0.0 ? total_work : 0.0; /* 0: count items */
    p->done_items = 0;
    p->done_work = 0.0;
    p->start_s = opp_progress_now_s();
}

void opp_progress_item(opp_progress_t *p, double work, const char *name) {
    char line[1024];
    ++p->done_items;
    p->done_work += p->total_work > 0.0 ? work : 1.0;
    const double total = p->total_work > 0.0 ? p->total_work : (double)p->total_items;
    opp_progress_format_item(line, sizeof line, p->tool, p->done_items, p->total_items,
                             p->done_work, total, opp_progress_now_s() - p->start_s, name);
    fprintf(p->out, "%s\n", line);
    fflush(p->out);
}

void opp_progress_done(const opp_progress_t *p) {
    char line[256];
    opp_progress_format_done(line, sizeof line, p->tool, p->done_items,
                             opp_progress_now_s() - p->start_s);
    fprintf(p->out, "%s\n", line);
    fflush(p->out);
}
