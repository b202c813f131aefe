/*
 * Small things every benchmark needs (see bench.h): percentiles, CPU time, option values, the
 * example and CRD files of the source tree, and the NodeMetric status both bench/codec and
 * bench/nodemetric send, so that they measure the same document.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/api.h"
#include "api/schema.h"
#include "base/base.h"
#include "bench.h"
#include "codec/codec.h"

static atomic_int failures;

void bench_fail(const char *what, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;

    strbuf_addf(&sb, "%s: FAIL %s: ", program_invocation_short_name, what);
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    strbuf_addch(&sb, '\n');
    (void)fputs(sb.buf, stderr);
    strbuf_release(&sb);
    atomic_fetch_add(&failures, 1);
}

int bench_failures(void)
{
    return atomic_load(&failures);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct dist bench_dist(double *v, size_t n)
{
    struct dist d = {0};

    if (!n)
        return d;
    qsort(v, n, sizeof(*v), cmp_double);
    d.p50 = v[(n * 50 + 99) / 100 - 1];
    d.p99 = v[(n * 99 + 99) / 100 - 1];
    d.max = v[n - 1];
    return d;
}

double bench_self_cpu(void)
{
    struct rusage ru;

    (void)getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

double bench_machine_cpu(void)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "re");
    int n = 0;

    if (f) {
        /* cpu user nice system idle iowait irq softirq steal */
        n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
        (void)fclose(f);
    }
    if (n != 8)
        return 0;
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

int bench_parse_size(const char *s, size_t min, size_t max, size_t *ret)
{
    int64_t v;

    if (parse_i64(s, &v) < 0 || v < (int64_t)min || v > (int64_t)max)
        return -EINVAL;
    *ret = (size_t)v;
    return 0;
}

cJSON *bench_read_doc(const char *rel)
{
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
    struct codec_error err = {0};
    cJSON **docs = NULL, *doc = NULL;
    size_t n = 0;

    strbuf_addf(&path, "%s/%s", KOORD_SOURCE_DIR, rel);
    if (codec_read_file(path.buf, 1u << 20, &text) == 0 &&
        yaml_parse_stream(text.buf, text.len, NULL, &docs, &n, &err) == 0 && n == 1) {
        doc = docs[0];
        docs[0] = NULL;
    } else {
        (void)fprintf(stderr, "%s: cannot read %s\n", program_invocation_short_name, path.buf);
    }
    codec_docs_free(docs, n);
    strbuf_release(&path);
    strbuf_release(&text);
    return doc;
}

char **bench_crd_paths(const char *const *names)
{
    size_t n = 0;
    char **v;

    while (names[n])
        n++;
    v = xcalloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        struct strbuf p = STRBUF_INIT;
        strbuf_addf(&p, "%s/deploy/crds/%s", KOORD_SOURCE_DIR, names[i]);
        v[i] = strbuf_detach(&p, NULL);
    }
    return v;
}

void bench_paths_free(char **paths)
{
    for (size_t i = 0; paths && paths[i]; i++)
        free(paths[i]);
    free(paths);
}

bool bench_runnable(const char *name)
{
    const char *path = getenv("PATH");
    struct strbuf p = STRBUF_INIT;
    bool ok = false;

    if (strchr(name, '/'))
        return access(name, X_OK) == 0;
    while (path && *path && !ok) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        strbuf_reset(&p);
        strbuf_add(&p, path, n);
        strbuf_addf(&p, "/%s", name);
        ok = access(p.buf, X_OK) == 0;
        path = colon ? colon + 1 : NULL;
    }
    strbuf_release(&p);
    return ok;
}

static void usage_map(struct strbuf *sb, int cpu_m, int mem_mi)
{
    strbuf_addf(sb, "{\"resources\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}}", cpu_m, mem_mi);
}

void bench_nodemetric_usage(struct strbuf *out, int pods, const char *node_cpu)
{
    static const char *const aggs[] = {"avg", "p50", "p90", "p95", "p99"};
    static const char *const durs[] = {"5m0s", "10m0s", "30m0s"};
    const struct api_kind *k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric");
    struct strbuf sb = STRBUF_INIT;
    cJSON *doc = NULL;

    /* Fields in the order of upstream's Go structs, as koordlet's encoder writes them. */
    strbuf_addf(&sb,
                "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"%s\",\"memory\":"
                "\"30720Mi\"}}",
                node_cpu);
    strbuf_addstr(&sb, ",\"aggregatedNodeUsages\":[");
    for (size_t d = 0; d < ARRAY_SIZE(durs); d++) {
        strbuf_addf(&sb, "%s{\"usage\":{", d ? "," : "");
        for (size_t a = 0; a < ARRAY_SIZE(aggs); a++) {
            strbuf_addf(&sb, "%s\"%s\":", a ? "," : "", aggs[a]);
            usage_map(&sb, 7000 + (int)a * 500, 29000 + (int)a * 512);
        }
        strbuf_addf(&sb, "},\"duration\":\"%s\"}", durs[d]);
    }
    strbuf_addstr(&sb, "],\"systemUsage\":");
    usage_map(&sb, 500, 2048);
    strbuf_addstr(&sb, "},\"podsMetric\":[");
    for (int i = 0; i < pods; i++) {
        strbuf_addf(&sb,
                    "%s{\"namespace\":\"team-%d\",\"name\":\"web-%d-7d9f8c6b5-x%04d\","
                    "\"podUsage\":",
                    i ? "," : "", i % 7, i, i);
        usage_map(&sb, 100 + i * 13, 128 + i * 7);
        strbuf_addf(&sb, ",\"priority\":\"%s\",\"qos\":\"%s\"}",
                    i % 3 ? "koord-prod" : "koord-batch", i % 3 ? "LS" : "BE");
    }
    strbuf_addstr(&sb, "]}");
    /* Quantities as resource.Quantity marshals them ("7000m" is "7", "2048Mi" is "2Gi"). */
    CHECK(k && json_parse(sb.buf, sb.len, NULL, &doc, NULL) == 0);
    CHECK(api_canonicalize(k->status, doc) == 0);
    strbuf_reset(&sb);
    CHECK(json_print(doc, &sb) == 0);
    strbuf_add(out, sb.buf + 1, sb.len - 2); /* the members, without the braces */
    cJSON_Delete(doc);
    strbuf_release(&sb);
}
