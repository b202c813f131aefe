/*
 * The outcome of a replay, written out (issue 19 §3): the time series as CSV (one row per
 * sample and run, for a spreadsheet or a plotting script), the side-by-side summary as CSV and
 * as the text table `koord sim` prints, and a self-contained HTML report with charts. Every
 * writer takes the runs in the order they are shown (colocation off first).
 */
#ifndef KOORD_SIM_REPORT_H
#define KOORD_SIM_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "sim/outcome.h"

/* What the report says about the replay itself (shown in the HTML header and the summary). */
struct sim_report_meta {
    const char *trace; /* the pod trace's path, or "synthetic" */
    const char *nodes; /* the node list's path, or "N synthetic nodes" */
    size_t nnodes, npods;
    unsigned long long seed;
    double speed;      /* trace seconds per wall second */
    const char *model; /* the usage model's parameters, one line */
};

/* The time series of every run: header, then one row per sample, run name first. */
int sim_report_csv(FILE *f, const struct sim_run *runs, size_t nruns);

/* The summary as CSV: one row per metric, one column per run. */
int sim_report_summary_csv(FILE *f, const struct sim_run *runs, size_t nruns);

/* The summary as an aligned text table, one column per run (what `koord sim` prints). */
int sim_report_summary(FILE *f, const struct sim_run *runs, size_t nruns);

/*
 * Writes DIR/timeseries.csv, DIR/summary.csv and DIR/report.html (creating DIR). Returns 0 or
 * a negative errno; on failure *why (when not NULL) names the file.
 */
int sim_report_write(const char *dir, const struct sim_report_meta *meta,
                     const struct sim_run *runs, size_t nruns, const char **why);

/* The HTML report alone (report_html.c). */
int sim_report_html(FILE *f, const struct sim_report_meta *meta, const struct sim_run *runs,
                    size_t nruns);

#endif
