/*
 * The HTML report (report.h): one self-contained page (no request leaves it), the replay's
 * parameters and the side-by-side summary.
 */
#include <errno.h>
#include <stdio.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "sim/report-int.h"
#include "sim/report.h"

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

int sim_report_html(FILE *f, const struct sim_report_meta *meta, const struct sim_run *runs,
                    size_t nruns)
{
    struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT, *o = &out;

    strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<title>koord sim report</title></head><body>\n<h1>koord sim</h1>\n<p>");
    html_text(o, meta->trace);
    strbuf_addstr(o, " on ");
    html_text(o, meta->nodes);
    strbuf_addf(o, ": %zu nodes, %zu pods, seed %llu, speed %.0fx</p>\n<p>model: ", meta->nnodes,
                meta->npods, meta->seed, meta->speed);
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
    strbuf_addstr(o, "</table>\n</body></html>\n");
    strbuf_release(&sb);
    return sim_report_flush(f, &out);
}
