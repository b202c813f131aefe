/*
 * Helpers shared by the QoS runner tests (tests/agent/test_qos_runner*.c): Pod, Node and NodeSLO
 * JSON with the fields the strategies read, a source whose objects a test swaps between ticks,
 * and file contents without their trailing newline. Include after <cmocka.h> and cgtest.h.
 */
#ifndef KOORD_TESTS_AGENT_QOSRUN_H
#define KOORD_TESTS_AGENT_QOSRUN_H

#ifndef cmocka_unit_test
#error "include <cmocka.h> before qosrun.h"
#endif

#include <cjson/cJSON.h>
#include <string.h>

#include "agent/qos/runner.h"
#include "base/base.h"
#include "base/strbuf.h"

#define QR_GI ((int64_t)1 << 30)

/*
 * A Pod in namespace default: QoS label qos ("" for none), status.qosClass kube, one running
 * container "c" with containerID cid ("" for none) and resources (a JSON object text).
 */
static inline cJSON *qr_pod(const char *name, const char *uid, const char *qos, const char *kube,
                            const char *cid, const char *resources)
{
    struct strbuf s = STRBUF_INIT;
    cJSON *o;

    strbuf_addf(&s,
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"default\",\"uid\":\"%s\",\"labels\":{%s%s%s}},"
                "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                "\"resources\":%s}]},"
                "\"status\":{\"phase\":\"Running\",\"qosClass\":\"%s\",\"containerStatuses\":"
                "[{\"name\":\"c\",\"containerID\":\"%s\",\"state\":{\"running\":{}}}]}}",
                name, uid, *qos ? "\"koordinator.sh/qosClass\":\"" : "", qos, *qos ? "\"" : "",
                resources, kube, cid);
    o = cJSON_Parse(s.buf);
    assert_non_null(o);
    strbuf_release(&s);
    return o;
}

/* A Node n1 with capacity = allocatable = cpu cores and memory. */
static inline cJSON *qr_node(const char *cpu, const char *memory)
{
    struct strbuf s = STRBUF_INIT;
    cJSON *o;

    strbuf_addf(&s,
                "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
                "\"status\":{\"capacity\":{\"cpu\":\"%s\",\"memory\":\"%s\"},"
                "\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\"}}}",
                cpu, memory, cpu, memory);
    o = cJSON_Parse(s.buf);
    assert_non_null(o);
    strbuf_release(&s);
    return o;
}

/* A NodeSLO n1 whose spec is the JSON text spec. */
static inline cJSON *qr_nodeslo(const char *spec)
{
    struct strbuf s = STRBUF_INIT;
    cJSON *o;

    strbuf_addf(&s,
                "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
                "\"metadata\":{\"name\":\"n1\"},\"spec\":%s}",
                spec);
    o = cJSON_Parse(s.buf);
    assert_non_null(o);
    strbuf_release(&s);
    return o;
}

/* What the runner's callbacks hand out: copies of these trees (each may be NULL). */
struct qr_source {
    cJSON *pods; /* array */
    cJSON *node;
    cJSON *nodeslo;
};

static inline cJSON *qr_dup(const cJSON *o)
{
    return o ? cJSON_Duplicate(o, 1) : NULL;
}

static inline cJSON *qr_get_pods(void *ctx)
{
    return qr_dup(((struct qr_source *)ctx)->pods);
}

static inline cJSON *qr_get_node(void *ctx)
{
    return qr_dup(((struct qr_source *)ctx)->node);
}

static inline cJSON *qr_get_nodeslo(void *ctx)
{
    return qr_dup(((struct qr_source *)ctx)->nodeslo);
}

/* Runner options reading src, on layout l (and the metric cache mc, NULL for none). */
static inline void qr_opts(struct qos_runner_opts *o, const struct cg_layout *l, struct mc *mc,
                           struct qr_source *src, bool dry_run, uint32_t features)
{
    qos_runner_opts_init(o);
    o->layout = l;
    o->metrics = mc;
    o->dry_run = dry_run;
    o->get_pods = qr_get_pods;
    o->get_node = qr_get_node;
    o->get_nodeslo = qr_get_nodeslo;
    o->source_ctx = src;
    o->features = features;
}

static inline void qr_set(cJSON **slot, cJSON *o)
{
    cJSON_Delete(*slot);
    *slot = o;
}

static inline void qr_source_release(struct qr_source *s)
{
    cJSON_Delete(s->pods);
    cJSON_Delete(s->node);
    cJSON_Delete(s->nodeslo);
    memset(s, 0, sizeof(*s));
}

/* <dir>/<rel> without its trailing newline, into buf[256]. */
static inline const char *qr_file(const char *dir, const char *rel, char *buf)
{
    size_t n;

    cgt_get(dir, rel, buf, 256);
    n = strlen(buf);
    while (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    return buf;
}

#endif
