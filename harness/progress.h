/*
 * progress.h - one progress format for the long tools (oppbench over its
 * workloads, oppcheck --onnx-test over its cases; tools/opp_progress.py is
 * the same for Python's testdata/regenerate.py): after each item one line
 *
 *   TOOL [ 3/66]   4.5% elapsed 1.2s eta 25.2s: NAME
 *
 * and at the end one summary line
 *
 *   TOOL done: 66 items in 27.0s (409.1 ms per item)
 *
 * The ETA is elapsed * (work left / work done): work is the item count, or
 * a weight the caller gives per item (oppbench: the workload's FLOPs).
 * Durations are "12.3s" below a minute, "4m05s" below an hour, else "1h02m".
 * Host C, no CUDA; tested by tests/progress_test.c.
 */
#ifndef OPP_HARNESS_PROGRESS_H
#define OPP_HARNESS_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

typedef struct opp_progress {
    FILE *out;         /* where the lines go */
    const char *tool;  /* first word of every line */
    int total_items;   /* items announced */
    double total_work; /* their summed weight (> 0) */
    int done_items;
    double done_work;
    double start_s; /* monotonic clock at start */
} opp_progress_t;

/*! opp_progress_now_s() : @return : a monotonic clock, in seconds. */
double opp_progress_now_s(void);

/*! opp_progress_start() :
 * Starts the clock for total_items items of summed weight total_work
 * (<= 0: each item weighs 1). Prints nothing. */
void opp_progress_start(opp_progress_t *p, FILE *out, const char *tool, int total_items,
                        double total_work);

/*! opp_progress_item() :
 * Counts one finished item of weight work (ignored when start was given no
 * total_work) and prints its line, NAME = name. */
void opp_progress_item(opp_progress_t *p, double work, const char *name);

/*! opp_progress_done() : prints the summary line. */
void opp_progress_done(const opp_progress_t *p);

/*! opp_progress_format_item() :
 * The item line (no newline) for done_items of total_items, done_work of
 * total_work, elapsed seconds, into buf; the pure half of
 * opp_progress_item(), for tests.
 * @return : buf. */
char *opp_progress_format_item(char *buf, size_t size, const char *tool, int done_items,
                               int total_items, double done_work, double total_work,
                               double elapsed_s, const char *name);

/*! opp_progress_format_done() : the summary line (no newline) into buf.
 * @return : buf. */
char *opp_progress_format_done(char *buf, size_t size, const char *tool, int items,
                               double elapsed_s);

/*! opp_progress_duration() : seconds as "12.3s", "4m05s" or "1h02m"
 * (negative or not finite: "?").
 * @return : buf. */
char *opp_progress_duration(char *buf, size_t size, double seconds);

#endif /* OPP_HARNESS_PROGRESS_H */
