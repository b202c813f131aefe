/*
 * bench/codec: the typed layer's cost. For a NodeMetric with 110 pods and a full NodeSLO it times
 * decode + validate + default + encode through the type descriptions, next to cJSON parse +
 * print of the same bytes (the baseline), in the same run. Prints µs per object (each side's
 * fastest of 7 alternating trials), MB/s and the ratio typed/baseline (target: <= 2.0). The
 * typed side canonicalises in place, as the servers do with objects they decoded. A third line
 * times api_canonical_check() of the NodeMetric's status (what koord manager does instead of
 * all that for a report already in canonical form) against cJSON on the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "common/bench.h"

static char *nodemetric_json(int pods)
{
    struct strbuf sb = STRBUF_INIT;

    strbuf_addstr(&sb, "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","
                       "\"metadata\":{\"name\":\"node-1\",\"resourceVersion\":\"12345\","
                       "\"creationTimestamp\":\"2024-03-05T08:00:00Z\"},"
                       "\"spec\":{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,"
                       "\"reportIntervalSeconds\":60,\"nodeAggregatePolicy\":{\"durations\":"
                       "[\"5m0s\",\"10m0s\",\"30m0s\"]},\"nodeMemoryCollectPolicy\":"
                       "\"usageWithoutPageCache\"}},\"status\":{\"updateTime\":"
                       "\"2024-03-05T08:00:00Z\",");
    bench_nodemetric_usage(&sb, pods, "7500m");
    strbuf_addstr(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

static char *nodeslo_json(void)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *spec = cJSON_Duplicate(api_nodeslo_default_spec(), true), *obj = cJSON_CreateObject();
    CHECK(spec && obj);
    (void)cJSON_AddStringToObject(obj, "apiVersion", "slo.koordinator.sh/v1alpha1");
    (void)cJSON_AddStringToObject(obj, "kind", "NodeSLO");
    (void)cJSON_AddStringToObject(cJSON_AddObjectToObject(obj, "metadata"), "name", "node-1");
    (void)cJSON_AddItemToObject(obj, "spec", spec);
    CHECK(json_print(obj, &sb) == 0);
    cJSON_Delete(obj);
    return strbuf_detach(&sb, NULL);
}

/* One typed round: decode, validate, default, encode. */
static size_t typed_round(const char *buf, size_t len)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    const struct api_kind *k = NULL;
    cJSON *doc = NULL;
    struct strbuf out = STRBUF_INIT;
    size_t n;

    CHECK(json_parse(buf, len, NULL, &doc, NULL) == 0);
    CHECK(api_object_validate(doc, 0, &k, &errs) == 0);
    CHECK(api_object_default(k, doc, 0) == 0);
    CHECK(api_object_canonicalize(k, doc) == 0);
    CHECK(json_print(doc, &out) == 0);
    n = out.len;
    strbuf_release(&out);
    cJSON_Delete(doc);
    field_errors_release(&errs);
    return n;
}

static const struct api_schema *status_schema;

/* One check that a status is canonical (the manager's report fast path). */
static size_t check_round(const char *buf, size_t len)
{
    CHECK(api_canonical_check(status_schema, buf, len, 0));
    return len;
}

static size_t base_round(const char *buf, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(buf, len);
    char *out;
    size_t n;

    CHECK(doc);
    out = cJSON_PrintUnformatted(doc);
    CHECK(out);
    n = strlen(out);
    cJSON_free(out);
    cJSON_Delete(doc);
    return n;
}

/* Seconds per round of f over iters rounds. */
static double time_rounds(size_t (*f)(const char *, size_t), const char *buf, size_t len, int iters,
                          size_t *sink)
{
    double t0 = now_s();
    for (int i = 0; i < iters; i++)
        *sink += f(buf, len);
    return (now_s() - t0) / iters;
}

/* Alternates baseline and typed trials and keeps each side's fastest, so a busy machine
 * disturbs both sides alike and the ratio stays stable. */
static void run(const char *name, const char *buf, size_t (*typed)(const char *, size_t),
                const char *what)
{
    enum { TRIALS = 7 };
    size_t len = strlen(buf), sink = 0;
    int iters = 0;
    double t0, tb = 1e9, tt = 1e9;

    sink += base_round(buf, len) + typed(buf, len);
    t0 = now_s();
    while (now_s() - t0 < 0.1) {
        sink += base_round(buf, len);
        iters++;
    }
    for (int t = 0; t < TRIALS; t++) {
        double b = time_rounds(base_round, buf, len, iters, &sink);
        double y = time_rounds(typed, buf, len, iters, &sink);
        tb = b < tb ? b : tb;
        tt = y < tt ? y : tt;
    }
    (void)printf("%-22s %7zu bytes  baseline cJSON parse+print %8.1f us %7.1f MB/s | "
                 "%-36s %8.1f us %7.1f MB/s | ratio %.2f%s\n",
                 name, len, tb * 1e6, (double)len / tb / 1e6, what, tt * 1e6,
                 (double)len / tt / 1e6, tt / tb, sink ? "" : " ");
}

int main(void)
{
    const struct api_kind *k;
    char *nm, *slo;
    size_t ss, se;

    codec_init();
    nm = nodemetric_json(110);
    slo = nodeslo_json();
    run("NodeMetric (110 pods)", nm, typed_round, "typed decode+validate+default+encode");
    run("NodeSLO (full spec)", slo, typed_round, "typed decode+validate+default+encode");
    k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric");
    CHECK(k);
    status_schema = k->status;
    CHECK(json_member_span(nm, strlen(nm), "status", &ss, &se) == 0);
    nm[se] = '\0';
    run("NodeMetric status", nm + ss, check_round, "api_canonical_check");
    free(nm);
    free(slo);
    return 0;
}
