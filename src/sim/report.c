/*
 * The outcome as CSV and as the text summary (report.h). The summary's rows are one table
 * (rows[]) so the CSV, the text and the HTML report show the same metrics with the same names.
 */
#include "sim/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "sim/report-int.h"

#define MIB (1024.0 * 1024.0)

static void fmt_pct(struct strbuf *sb, double v)
{
    strbuf_addf(sb, "%.1f%%", v * 100.0);
}

static void fmt_cores(struct strbuf *sb, double milli)
{
    strbuf_addf(sb, "%.1f cores", milli / 1000.0);
}

static void fmt_gib(struct strbuf *sb, double bytes)
{
    strbuf_addf(sb, "%.1f GiB", bytes / MIB / 1024.0);
}

static void fmt_dist(struct strbuf *sb, const struct sim_dist *d)
{
    if (!d->n)
        strbuf_addstr(sb, "-");
    else
        strbuf_addf(sb, "%.2f / %.2f / %.2f s", d->p50, d->p95, d->max);
}

static void row_cpu_mean(struct strbuf *sb, const struct sim_run *r)
{
    fmt_pct(sb, r->cpu_util_mean);
}
static void row_cpu_p95(struct strbuf *sb, const struct sim_run *r)
{
    fmt_pct(sb, r->cpu_util_p95);
}
static void row_mem_mean(struct strbuf *sb, const struct sim_run *r)
{
    fmt_pct(sb, r->mem_util_mean);
}
static void row_mem_p95(struct strbuf *sb, const struct sim_run *r)
{
    fmt_pct(sb, r->mem_util_p95);
}
static void row_bca(struct strbuf *sb, const struct sim_run *r)
{
    fmt_cores(sb, r->batch_cpu_allocatable_mean);
}
static void row_bcu(struct strbuf *sb, const struct sim_run *r)
{
    fmt_cores(sb, r->batch_cpu_used_mean);
}
static void row_bma(struct strbuf *sb, const struct sim_run *r)
{
    fmt_gib(sb, r->batch_mem_allocatable_mean);
}
static void row_bmu(struct strbuf *sb, const struct sim_run *r)
{
    fmt_gib(sb, r->batch_mem_used_mean);
}
static void row_pods(struct strbuf *sb, const struct sim_run *r)
{
    strbuf_addf(sb, "%" PRId32 " LS, %" PRId32 " BE", r->ls_pods, r->be_pods);
}
static void row_be_completed(struct strbuf *sb, const struct sim_run *r)
{
    strbuf_addf(sb, "%" PRId32, r->be_completed);
}
static void row_be_wait(struct strbuf *sb, const struct sim_run *r)
{
    fmt_dist(sb, &r->be_wait);
}
static void row_ls_evicted(struct strbuf *sb, const struct sim_run *r)
{
    strbuf_addf(sb, "%" PRId32 " / %" PRId32, r->ls_evicted, r->ls_suppressed);
}
static void row_be_evicted(struct strbuf *sb, const struct sim_run *r)
{
    const struct sim_evictions *e = &r->be_evicted;
    strbuf_addf(sb,
                "%" PRId32 " (cpu %" PRId32 ", memory %" PRId32 ", node memory %" PRId32
                ", other %" PRId32 ")",
                e->be_cpu + e->be_memory + e->memory + e->other, e->be_cpu, e->be_memory, e->memory,
                e->other);
}
static void row_ls_lat(struct strbuf *sb, const struct sim_run *r)
{
    fmt_dist(sb, &r->ls_sched_latency);
}
static void row_be_lat(struct strbuf *sb, const struct sim_run *r)
{
    fmt_dist(sb, &r->be_sched_latency);
}
static void row_over(struct strbuf *sb, const struct sim_run *r)
{
    strbuf_addf(sb, "%.0f node-s", r->ls_over_threshold_s);
}

const struct sim_report_row sim_report_rows[] = {
    {"pods created", row_pods},
    {"CPU utilisation, mean", row_cpu_mean},
    {"CPU utilisation, p95", row_cpu_p95},
    {"memory utilisation, mean", row_mem_mean},
    {"memory utilisation, p95", row_mem_p95},
    {"batch CPU advertised, mean", row_bca},
    {"batch CPU used by BE pods, mean", row_bcu},
    {"batch memory advertised, mean", row_bma},
    {"batch memory used by BE pods, mean", row_bmu},
    {"BE pods completed", row_be_completed},
    {"BE wait for a node, p50 / p95 / max", row_be_wait},
    {"LS pods evicted / suppressed", row_ls_evicted},
    {"BE pods evicted", row_be_evicted},
    {"LS scheduling latency, p50 / p95 / max", row_ls_lat},
    {"BE scheduling latency, p50 / p95 / max", row_be_lat},
    {"LS usage above the suppress threshold", row_over},
};
const size_t sim_report_nrows = sizeof(sim_report_rows) / sizeof(sim_report_rows[0]);

int sim_report_flush(FILE *f, struct strbuf *out)
{
    int r = fwrite(out->buf, 1, out->len, f) == out->len && fflush(f) == 0 ? 0 : -EIO;
    strbuf_release(out);
    return r;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180). */
static void csv_field(struct strbuf *o, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        strbuf_addstr(o, s);
        return;
    }
    strbuf_addch(o, '"');
    for (; *s; s++) {
        if (*s == '"')
            strbuf_addch(o, '"');
        strbuf_addch(o, *s);
    }
    strbuf_addch(o, '"');
}

int sim_report_csv(FILE *f, const struct sim_run *runs, size_t nruns)
{
    struct strbuf out = STRBUF_INIT, *o = &out;
    strbuf_addstr(o, "run,trace_s,wall_s,cpu_capacity_milli,mem_capacity_bytes,cpu_used_milli,"
                     "mem_used_bytes,ls_cpu_used_milli,ls_mem_used_bytes,be_cpu_used_milli,"
                     "be_mem_used_bytes,batch_cpu_allocatable_milli,batch_mem_allocatable_bytes,"
                     "batch_cpu_requested_milli,batch_mem_requested_bytes,ls_running,ls_pending,"
                     "be_running,be_pending,be_completed,be_evicted,ls_evicted,nodes_suppressed,"
                     "nodes_ls_over_threshold\n");
    for (size_t j = 0; j < nruns; j++) {
        for (size_t i = 0; i < runs[j].nsamples; i++) {
            const struct sim_sample *s = &runs[j].samples[i];
            csv_field(o, runs[j].name);
            strbuf_addf(o,
                        ",%.3f,%.3f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                        ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                        ",%" PRId64 ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32
                        ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32 "\n",
                        s->trace_s, s->wall_s, s->cpu_capacity, s->mem_capacity, s->cpu_used,
                        s->mem_used, s->ls_cpu_used, s->ls_mem_used, s->be_cpu_used, s->be_mem_used,
                        s->batch_cpu_allocatable, s->batch_mem_allocatable, s->batch_cpu_requested,
                        s->batch_mem_requested, s->ls_running, s->ls_pending, s->be_running,
                        s->be_pending, s->be_completed, s->be_evicted, s->ls_evicted,
                        s->nodes_suppressed, s->nodes_ls_over_threshold);
        }
    }
    return sim_report_flush(f, &out);
}

int sim_report_summary_csv(FILE *f, const struct sim_run *runs, size_t nruns)
{
    struct strbuf out = STRBUF_INIT, *o = &out;
    struct strbuf sb = STRBUF_INIT;

    strbuf_addstr(o, "metric");
    for (size_t j = 0; j < nruns; j++) {
        strbuf_addch(o, ',');
        csv_field(o, runs[j].name);
    }
    strbuf_addch(o, '\n');
    for (size_t i = 0; i < sim_report_nrows; i++) {
        csv_field(o, sim_report_rows[i].name);
        for (size_t j = 0; j < nruns; j++) {
            strbuf_reset(&sb);
            sim_report_rows[i].fmt(&sb, &runs[j]);
            strbuf_addch(o, ',');
            csv_field(o, sb.buf);
        }
        strbuf_addch(o, '\n');
    }
    strbuf_release(&sb);
    return sim_report_flush(f, &out);
}

int sim_report_summary(FILE *f, const struct sim_run *runs, size_t nruns)
{
    struct strbuf out = STRBUF_INIT, *o = &out;
    struct strbuf sb = STRBUF_INIT;
    int namew = 6, colw = 0;

    for (size_t i = 0; i < sim_report_nrows; i++) {
        int w = (int)strlen(sim_report_rows[i].name);
        namew = w > namew ? w : namew;
        for (size_t j = 0; j < nruns; j++) {
            strbuf_reset(&sb);
            sim_report_rows[i].fmt(&sb, &runs[j]);
            colw = (int)sb.len > colw ? (int)sb.len : colw;
        }
    }
    for (size_t j = 0; j < nruns; j++)
        colw = (int)strlen(runs[j].name) > colw ? (int)strlen(runs[j].name) : colw;
    strbuf_addf(o, "%-*s", namew, "");
    for (size_t j = 0; j < nruns; j++)
        strbuf_addf(o, "  %-*s", colw, runs[j].name);
    strbuf_addch(o, '\n');
    for (size_t i = 0; i < sim_report_nrows; i++) {
        strbuf_addf(o, "%-*s", namew, sim_report_rows[i].name);
        for (size_t j = 0; j < nruns; j++) {
            strbuf_reset(&sb);
            sim_report_rows[i].fmt(&sb, &runs[j]);
            strbuf_addf(o, "  %-*s", colw, sb.buf);
        }
        strbuf_addch(o, '\n');
    }
    strbuf_release(&sb);
    return sim_report_flush(f, &out);
}

/* One file of the report: written to PATH.tmp and renamed, so a reader never sees half. */
static int write_one(const char *dir, const char *name, const struct sim_report_meta *meta,
                     const struct sim_run *runs, size_t nruns, int which)
{
    struct strbuf path = STRBUF_INIT, tmp = STRBUF_INIT;
    FILE *f;
    int r;

    strbuf_addf(&path, "%s/%s", dir, name);
    strbuf_addf(&tmp, "%s.tmp", path.buf);
    f = fopen(tmp.buf, "w");
    if (!f) {
        r = -errno;
        goto out;
    }
    if (which == 0)
        r = sim_report_csv(f, runs, nruns);
    else if (which == 1)
        r = sim_report_summary_csv(f, runs, nruns);
    else
        r = sim_report_html(f, meta, runs, nruns);
    if (fclose(f) != 0 && r == 0)
        r = -errno;
    if (r == 0 && rename(tmp.buf, path.buf) != 0)
        r = -errno;
    if (r != 0)
        unlink(tmp.buf);
out:
    strbuf_release(&path);
    strbuf_release(&tmp);
    return r;
}

int sim_report_write(const char *dir, const struct sim_report_meta *meta,
                     const struct sim_run *runs, size_t nruns, const char **why)
{
    static const char *const names[] = {"timeseries.csv", "summary.csv", "report.html"};
    int r;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        if (why)
            *why = dir;
        return -errno;
    }
    for (int i = 0; i < 3; i++) {
        r = write_one(dir, names[i], meta, runs, nruns, i);
        if (r < 0) {
            if (why)
                *why = names[i];
            return r;
        }
    }
    return 0;
}
