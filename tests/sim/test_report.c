/*
 * Tests for sim/outcome and sim/report: the percentiles and means the summary shows (worked out
 * by hand from the samples below), the CSV's shape and quoting, the text table, the HTML's
 * escaping, and that the three files are written whole into a new directory.
 */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "sim/outcome.h"
#include "sim/report.h"
#include "web/web.h"

static void test_dist(void **state)
{
    double v[] = {5, 1, 4, 2, 3, 10, 9, 8, 7, 6};
    struct sim_dist d;

    (void)state;
    d = sim_dist_of(v, 10);
    assert_int_equal(d.n, 10);
    assert_true(d.mean == 5.5);
    assert_true(d.p50 == 5);  /* rank ceil(5) = 5th smallest */
    assert_true(d.p95 == 10); /* rank ceil(9.5) = 10th */
    assert_true(d.p99 == 10);
    assert_true(d.max == 10);
    d = sim_dist_of(v, 0);
    assert_int_equal(d.n, 0);
    assert_true(d.mean == 0 && d.p95 == 0);
}

/* Two samples of 1000 m capacity using 100 m then 300 m; the second has BE usage 200 m. */
static void two_samples(struct sim_run *r, const char *name)
{
    memset(r, 0, sizeof(*r));
    r->name = name;
    r->samples = xcalloc(3, sizeof(*r->samples));
    r->nsamples = 3;
    r->samples[0] = (struct sim_sample){.trace_s = 0,
                                        .cpu_capacity = 1000,
                                        .cpu_used = 100,
                                        .mem_capacity = 4096,
                                        .mem_used = 1024,
                                        .batch_cpu_allocatable = 600};
    r->samples[1] = (struct sim_sample){.trace_s = 60,
                                        .cpu_capacity = 1000,
                                        .cpu_used = 300,
                                        .mem_capacity = 4096,
                                        .mem_used = 2048,
                                        .be_cpu_used = 200,
                                        .batch_cpu_allocatable = 400};
    /* No capacity yet (no node registered): left out of the utilisation. */
    r->samples[2] = (struct sim_sample){.trace_s = 120};
}

static void test_summarise(void **state)
{
    struct sim_run r;

    (void)state;
    two_samples(&r, "on");
    assert_int_equal(sim_run_summarise(&r), 0);
    assert_true(r.cpu_util_mean > 0.1999 && r.cpu_util_mean < 0.2001);
    assert_true(r.cpu_util_p95 > 0.2999 && r.cpu_util_p95 < 0.3001);
    assert_true(r.mem_util_mean > 0.3749 && r.mem_util_mean < 0.3751);
    /* Means over every sample, the empty one included: (600 + 400 + 0) / 3. */
    assert_true(r.batch_cpu_allocatable_mean > 333.3 && r.batch_cpu_allocatable_mean < 333.4);
    assert_true(r.batch_cpu_used_mean > 66.6 && r.batch_cpu_used_mean < 66.7);
    sim_run_release(&r);
    assert_null(r.samples);
}

static char *slurp(FILE *f)
{
    long n;
    char *s;

    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    rewind(f);
    s = xmalloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    return s;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_csv(void **state)
{
    struct sim_run r[2];
    FILE *f = tmpfile();
    char *s;

    (void)state;
    two_samples(&r[0], "colocation off");
    two_samples(&r[1], "a \"quoted\", name");
    assert_non_null(f);
    assert_int_equal(sim_report_csv(f, r, 2), 0);
    s = slurp(f);
    assert_int_equal(count_lines(s), 1 + 3 + 3);
    assert_true(!strncmp(s, "run,trace_s,", 12));
    assert_non_null(strstr(s, "\ncolocation off,60.000,"));
    assert_non_null(strstr(s, "\n\"a \"\"quoted\"\", name\",0.000,"));
    free(s);
    fclose(f);
    sim_run_release(&r[0]);
    sim_run_release(&r[1]);
}

static void test_summary(void **state)
{
    struct sim_run r[2];
    FILE *f = tmpfile();
    char *s;

    (void)state;
    two_samples(&r[0], "colocation off");
    two_samples(&r[1], "colocation on");
    r[1].be_evicted = (struct sim_evictions){.be_cpu = 2, .be_memory = 1};
    r[1].ls_pods = 7;
    r[1].be_pods = 9;
    assert_int_equal(sim_run_summarise(&r[0]), 0);
    assert_int_equal(sim_run_summarise(&r[1]), 0);
    assert_int_equal(sim_report_summary(f, r, 2), 0);
    s = slurp(f);
    assert_non_null(strstr(s, "colocation off"));
    assert_non_null(strstr(s, "20.0%"));
    assert_non_null(strstr(s, "7 LS, 9 BE"));
    assert_non_null(strstr(s, "3 (cpu 2, memory 1, node memory 0, other 0)"));
    free(s);
    fclose(f);
    sim_run_release(&r[0]);
    sim_run_release(&r[1]);
}

static void test_write_dir(void **state)
{
    char dir[] = "/tmp/koord-sim-report-XXXXXX", path[256];
    struct sim_run r;
    struct sim_report_meta meta = {.trace = "t<1>.csv",
                                   .nodes = "n.csv",
                                   .nnodes = 2,
                                   .npods = 3,
                                   .seed = 7,
                                   .speed = 100,
                                   .model = "m & m"};
    const char *why = NULL;
    FILE *f;
    char *s;

    (void)state;
    assert_non_null(mkdtemp(dir));
    two_samples(&r, "<on>");
    snprintf(path, sizeof(path), "%s/out", dir);
    assert_int_equal(sim_report_write(path, &meta, &r, 1, &why), 0);
    snprintf(path, sizeof(path), "%s/out/report.html", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    s = slurp(f);
    fclose(f);
    assert_non_null(strstr(s, "t&lt;1&gt;.csv"));
    assert_non_null(strstr(s, "m &amp; m"));
    assert_non_null(strstr(s, "<th>&lt;on&gt;</th>"));
    assert_null(strstr(s, "<on>"));
    free(s);
    for (int i = 0; i < 3; i++) {
        static const char *const names[] = {"timeseries.csv", "summary.csv", "report.html"};
        snprintf(path, sizeof(path), "%s/out/%s", dir, names[i]);
        assert_int_equal(access(path, R_OK), 0);
        assert_int_equal(unlink(path), 0);
    }
    snprintf(path, sizeof(path), "%s/out", dir);
    assert_int_equal(rmdir(path), 0);
    /* A path whose parent is missing: an error naming the directory, nothing written. */
    snprintf(path, sizeof(path), "%s/missing/out", dir);
    assert_int_equal(sim_report_write(path, &meta, &r, 1, &why), -ENOENT);
    assert_string_equal(why, path);
    assert_int_equal(rmdir(dir), 0);
    sim_run_release(&r);
}

static size_t count_of(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* The charts: the library and the chart script inlined, the samples as JSON in the page, and a
 * run name that tries to close the data's <script> element stays inside it. */
static void test_html_charts(void **state)
{
    static const char *const evil = "</script><script>alert(1)</script>";
    const struct web_asset *lib = web_asset_find("uplot/uPlot.iife.min.js");
    const struct web_asset *css = web_asset_find("uplot/uPlot.min.css");
    struct sim_report_meta meta = {.trace = "t.csv", .nodes = "n.csv", .model = "m"};
    struct sim_run r[2];
    FILE *f = tmpfile();
    const char *from, *to;
    cJSON *data, *runs, *run;
    char *s, *json;

    (void)state;
    assert_non_null(lib);
    assert_non_null(css);
    two_samples(&r[0], "colocation off");
    two_samples(&r[1], evil);
    r[1].samples[1].be_running = 4;
    r[1].samples[1].be_pending = 2;
    r[1].samples[1].batch_cpu_requested = 300;
    assert_non_null(f);
    assert_int_equal(sim_report_html(f, &meta, r, 2), 0);
    s = slurp(f);
    fclose(f);
    /* Self-contained: the library and its CSS are in the page, nothing is fetched. */
    assert_non_null(strstr(s, (const char *)lib->data));
    assert_non_null(strstr(s, (const char *)css->data));
    assert_non_null(strstr(s, (const char *)web_asset_find("uplot/LICENSE")->data));
    assert_null(strstr(s, "<script src"));
    assert_null(strstr(s, "<link"));
    for (size_t i = 0; i < 5; i++) {
        static const char *const ids[] = {"chart-cpu", "chart-mem", "chart-batch-cpu",
                                          "chart-batch-mem", "chart-be"};
        char div[64];
        snprintf(div, sizeof(div), "<div class=\"chart\" id=\"%s\">", ids[i]);
        assert_non_null(strstr(s, div));
    }
    /* Three script elements (library, data, chart script), each closed once: the run's name
     * closed none of them. */
    assert_int_equal(count_of(s, "<script"), 3);
    assert_int_equal(count_of(s, "</script"), 3);
    assert_non_null(strstr(s, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
    assert_non_null(strstr(s, "<th>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</th>"));
    /* The data element's text is the runs' samples as JSON. */
    from = strstr(s, "<script type=\"application/json\" id=\"sim-data\">");
    assert_non_null(from);
    from = strchr(from, '>') + 1;
    to = strstr(from, "</script>");
    assert_non_null(to);
    json = xstrndup(from, (size_t)(to - from));
    data = cJSON_Parse(json);
    assert_non_null(data);
    runs = cJSON_GetObjectItem(data, "runs");
    assert_int_equal(cJSON_GetArraySize(runs), 2);
    run = cJSON_GetArrayItem(runs, 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(run, "name")), evil);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(run, "t")), 3);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "t"), 1)->valuedouble == 60);
    /* 100 m of 1000 m, 300 m of 1000 m, and no capacity: null, not a division by zero. */
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "cpu_util"), 0)->valuedouble == 0.1);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "cpu_util"), 1)->valuedouble == 0.3);
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "cpu_util"), 2)));
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "mem_util"), 1)->valuedouble == 0.5);
    assert_true(
        cJSON_GetArrayItem(cJSON_GetObjectItem(run, "batch_cpu_allocatable"), 0)->valuedouble ==
        600);
    assert_true(
        cJSON_GetArrayItem(cJSON_GetObjectItem(run, "batch_cpu_requested"), 1)->valuedouble == 300);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "be_cpu_used"), 1)->valuedouble == 200);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "be_running"), 1)->valuedouble == 4);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "be_pending"), 1)->valuedouble == 2);
    cJSON_Delete(data);
    free(json);
    free(s);
    sim_run_release(&r[0]);
    sim_run_release(&r[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dist),      cmocka_unit_test(test_summarise),
        cmocka_unit_test(test_csv),       cmocka_unit_test(test_summary),
        cmocka_unit_test(test_write_dir), cmocka_unit_test(test_html_charts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
