/*
 * The HTML report (report.h): one self-contained page (no request leaves it: open it from disk,
 * offline), the replay's parameters, the side-by-side summary and the charts. The charts are
 * drawn by uPlot (web.h says why that library) from the runs' samples, which the page carries
 * as JSON; the library, its CSS and the chart script (web/report/) are inlined from the assets
 * built into the binary.
 *
 * Escaping: text goes through html_text(); the JSON sits in a <script type="application/json">
 * whose content ends at the first "</script", so every '<', '>' and '&' in it is written as a
 * \u escape (JSON.parse reads them back), and a run named "</script>" cannot end the element.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "sim/report-int.h"
#include "sim/report.h"
#include "web/web.h"

static void html_text(struct strbuf *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            strbuf_addstr(o, "&amp;");
            break;
        case '<':
            strbuf_addstr(o, "&lt;");
            break;
        case '>':
            strbuf_addstr(o, "&gt;");
            break;
        case '"':
            strbuf_addstr(o, "&quot;");
            break;
        case '\'':
            strbuf_addstr(o, "&#39;");
            break;
        default:
            strbuf_addch(o, *s);
        }
    }
}

/* Appends s as a JSON string safe inside a <script> element. */
static void json_in_script(struct strbuf *o, const char *s)
{
    struct strbuf j = STRBUF_INIT;

    strbuf_add_json_str(&j, s ? s : "");
    for (size_t i = 0; i < j.len; i++) {
        char c = j.buf[i];
        if (c == '<')
            strbuf_addstr(o, "\\u003c");
        else if (c == '>')
            strbuf_addstr(o, "\\u003e");
        else if (c == '&')
            strbuf_addstr(o, "\\u0026");
        else
            strbuf_addch(o, c);
    }
    strbuf_release(&j);
}

/* One column of a run's samples as a JSON array of numbers. */
#define COLUMN(o, r, key, expr)                                                                    \
    do {                                                                                           \
        strbuf_addstr(o, ",\"" key "\":[");                                                        \
        for (size_t k_ = 0; k_ < (r)->nsamples; k_++) {                                            \
            const struct sim_sample *s = &(r)->samples[k_];                                        \
            strbuf_addf(o, "%s%.6g", k_ ? "," : "", (double)(expr));                               \
        }                                                                                          \
        strbuf_addch(o, ']');                                                                      \
    } while (0)

/* The utilisation of one sample, or JSON null without capacity (no node registered yet). */
static void util_column(struct strbuf *o, const char *key, const struct sim_run *r, bool cpu)
{
    strbuf_addf(o, ",\"%s\":[", key);
    for (size_t k = 0; k < r->nsamples; k++) {
        const struct sim_sample *s = &r->samples[k];
        int64_t cap = cpu ? s->cpu_capacity : s->mem_capacity;
        int64_t used = cpu ? s->cpu_used : s->mem_used;
        if (k)
            strbuf_addch(o, ',');
        if (cap > 0)
            strbuf_addf(o, "%.6g", (double)used / (double)cap);
        else
            strbuf_addstr(o, "null");
    }
    strbuf_addch(o, ']');
}

/* {"runs":[{"name":..., "t":[...], column: [...], ...}, ...]} (report.js reads it). */
static void runs_json(struct strbuf *o, const struct sim_run *runs, size_t nruns)
{
    strbuf_addstr(o, "{\"runs\":[");
    for (size_t j = 0; j < nruns; j++) {
        const struct sim_run *r = &runs[j];
        strbuf_addstr(o, j ? ",{\"name\":" : "{\"name\":");
        json_in_script(o, r->name);
        COLUMN(o, r, "t", s->trace_s);
        util_column(o, "cpu_util", r, true);
        util_column(o, "mem_util", r, false);
        COLUMN(o, r, "batch_cpu_allocatable", s->batch_cpu_allocatable);
        COLUMN(o, r, "batch_cpu_requested", s->batch_cpu_requested);
        COLUMN(o, r, "be_cpu_used", s->be_cpu_used);
        COLUMN(o, r, "batch_mem_allocatable", s->batch_mem_allocatable);
        COLUMN(o, r, "batch_mem_requested", s->batch_mem_requested);
        COLUMN(o, r, "be_mem_used", s->be_mem_used);
        COLUMN(o, r, "be_running", s->be_running);
        COLUMN(o, r, "be_pending", s->be_pending);
        strbuf_addch(o, '}');
    }
    strbuf_addstr(o, "]}");
}

/* An embedded asset's text; the build embeds every one named here (cmake/koord.cmake). */
static void add_asset(struct strbuf *o, const char *path)
{
    const struct web_asset *a = web_asset_find(path);

    CHECK(a);
    strbuf_add(o, a->data, a->len);
}

int sim_report_html(FILE *f, const struct sim_report_meta *meta, const struct sim_run *runs,
                    size_t nruns)
{
    static const char *const charts[] = {"chart-cpu", "chart-mem", "chart-batch-cpu",
                                         "chart-batch-mem", "chart-be"};
    struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT, *o = &out;

    strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<title>koord sim report</title>\n<style>");
    add_asset(o, "uplot/uPlot.min.css");
    add_asset(o, "report/report.css");
    strbuf_addstr(o, "</style>\n</head><body>\n<h1>koord sim</h1>\n<p class=\"params\">");
    html_text(o, meta->trace);
    strbuf_addstr(o, " on ");
    html_text(o, meta->nodes);
    strbuf_addf(o, ": %zu nodes, %zu pods, seed %llu, speed %.0fx</p>\n<p class=\"params\">model: ",
                meta->nnodes, meta->npods, meta->seed, meta->speed);
    html_text(o, meta->model);
    strbuf_addstr(o, "</p>\n<table id=\"summary\">\n<tr><th></th>");
    for (size_t j = 0; j < nruns; j++) {
        strbuf_addstr(o, "<th>");
        html_text(o, runs[j].name);
        strbuf_addstr(o, "</th>");
    }
    strbuf_addstr(o, "</tr>\n");
    for (size_t i = 0; i < sim_report_nrows; i++) {
        strbuf_addstr(o, "<tr><th>");
        html_text(o, sim_report_rows[i].name);
        strbuf_addstr(o, "</th>");
        for (size_t j = 0; j < nruns; j++) {
            strbuf_reset(&sb);
            sim_report_rows[i].fmt(&sb, &runs[j]);
            strbuf_addstr(o, "<td>");
            html_text(o, sb.buf);
            strbuf_addstr(o, "</td>");
        }
        strbuf_addstr(o, "</tr>\n");
    }
    strbuf_addstr(o, "</table>\n");
    for (size_t i = 0; i < sizeof(charts) / sizeof(charts[0]); i++)
        strbuf_addf(o, "<div class=\"chart\" id=\"%s\"></div>\n", charts[i]);
    /* uPlot is MIT-licensed: its notice goes with every copy. */
    strbuf_addstr(o, "<script>/*\n");
    add_asset(o, "uplot/LICENSE");
    strbuf_addstr(o, "*/\n");
    add_asset(o, "uplot/uPlot.iife.min.js");
    strbuf_addstr(o, "</script>\n<script type=\"application/json\" id=\"sim-data\">");
    runs_json(o, runs, nruns);
    strbuf_addstr(o, "</script>\n<script>");
    add_asset(o, "report/report.js");
    strbuf_addstr(o, "</script>\n</body></html>\n");
    strbuf_release(&sb);
    return sim_report_flush(f, &out);
}
