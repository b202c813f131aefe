/*
 * Tests for manager/nodeslo against a real koord API server (tests/kube/kubetest.h) with the
 * NodeSLO CRD installed: a ConfigMap yields one NodeSLO per Node carrying exactly the spec
 * slo_render_spec() computes for it; nothing is written when nothing changed (a Node change
 * that renders the same, ConfigMap updates that change nothing effective, a restart); a key
 * that fails to decode records a Warning Event on the ConfigMap and leaves the NodeSLOs alone
 * until it is fixed; a label change re-renders that node only; a Node's deletion deletes its
 * NodeSLO, a deleted NodeSLO comes back and an edited one is put back; the ConfigMap's absence
 * means the defaults. And the NodeMetric side: the spec source, the node list, the colocation
 * error state. Conditions are awaited by polling the API with a deadline, never by sleeping.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "base/base.h"
#include "base/log.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/kubetest.h"
#include "manager/nodeslo/nodeslo.h"
#include "slo/slo.h"
#include "testutil.h"

#define NS   SLO_DEFAULT_NAMESPACE
#define NAME SLO_DEFAULT_NAME

/* Generous for valgrind on a loaded 2-core machine; a passing run never waits this long. */
#define DEADLINE_S 60.0

static const struct kube_resource res_crds = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
static const struct kube_resource res_namespaces = {"", "v1", "namespaces", "Namespace", false};

struct env {
    struct kt_server *srv;
    struct kube_client *c;
    struct nodeslo_controller *ctl;
    cJSON *data; /* the ConfigMap data last written (NULL: no ConfigMap) */
    pthread_mutex_t lock;
    unsigned node_adds, node_deletes; /* from on_node */
    struct strbuf why;                /* what the last failed condition saw, for messages */
};

/* ---- API helpers ---- */

static void create(struct env *e, const struct kube_resource *r, const char *ns, const char *json)
{
    cJSON *o = J(json);
    int rc = kube_create(e->c, r, ns, o, NULL, NULL);

    cJSON_Delete(o);
    if (rc != 0 && rc != -EEXIST)
        fail_msg("create %s %s: %d", r->plural, json, rc);
}

static void install_crd(struct env *e)
{
    cJSON *crd = NULL;

    for (const struct api_kind *const *k = api_kinds(); *k; k++)
        if ((*k)->crd && !strcmp((*k)->kind, "NodeSLO"))
            assert_int_equal(api_crd_build(*k, &crd), 0);
    assert_non_null(crd);
    assert_int_equal(kube_create(e->c, &res_crds, NULL, crd, NULL, NULL), 0);
    cJSON_Delete(crd);
}

static void add_node(struct env *e, const char *name, const char *labels)
{
    char json[512];

    (void)snprintf(json, sizeof(json),
                   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
                   "\"labels\":%s},\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}",
                   name, labels ? labels : "{}");
    create(e, &kube_res_nodes, NULL, json);
}

/* The object, or NULL when it does not exist (caller frees). */
static cJSON *get(struct env *e, const struct kube_resource *r, const char *ns, const char *name)
{
    cJSON *o = NULL;
    int rc = kube_get(e->c, r, ns, name, &o, NULL);

    if (rc == -ENOENT)
        return NULL;
    if (rc != 0)
        fail_msg("get %s %s: %d", r->plural, name, rc);
    return o;
}

/* Merge-patches an object with the JSON text patch. */
static void patch(struct env *e, const struct kube_resource *r, const char *ns, const char *name,
                  const char *json)
{
    cJSON *p = J(json);
    int rc = kube_patch(e->c, r, ns, name, NULL, KUBE_PATCH_MERGE, p, NULL, NULL);

    cJSON_Delete(p);
    if (rc != 0)
        fail_msg("patch %s %s with %s: %d", r->plural, name, json, rc);
}

/* Creates or replaces the ConfigMap's data with d (taken over, e.g. from data_of()); remembers
 * it. */
static void put_configmap(struct env *e, cJSON *d)
{
    cJSON *cm;
    int rc;

    cJSON_Delete(e->data);
    e->data = d;
    cm = get(e, &kube_res_configmaps, NS, NAME);
    if (!cm) {
        cm = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" NAME
               "\",\"namespace\":\"" NS "\"}}");
        cJSON_AddItemToObject(cm, "data", cJSON_Duplicate(d, true));
        rc = kube_create(e->c, &kube_res_configmaps, NS, cm, NULL, NULL);
    } else {
        cJSON_DeleteItemFromObject(cm, "data");
        cJSON_AddItemToObject(cm, "data", cJSON_Duplicate(d, true));
        rc = kube_update(e->c, &kube_res_configmaps, NS, cm, NULL, NULL, NULL);
    }
    cJSON_Delete(cm);
    assert_int_equal(rc, 0);
}

static void delete_configmap(struct env *e)
{
    assert_int_equal(kube_delete(e->c, &kube_res_configmaps, NS, NAME, NULL), 0);
    cJSON_Delete(e->data);
    e->data = NULL;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* resourceVersion of NodeSLO name into buf ("" when absent). */
static void slo_rv(struct env *e, const char *name, char buf[32])
{
    cJSON *o = get(e, &kube_res_nodeslos, NULL, name);

    (void)snprintf(buf, 32, "%s", str_at(o, "metadata", "resourceVersion"));
    cJSON_Delete(o);
}

/* ---- waiting ---- */

typedef bool cond_fn(struct env *e, const void *arg);

/* Retries cond every 20 ms until it holds; fails the test at the deadline. */
static void wait_until_at(struct env *e, cond_fn *cond, const void *arg, const char *what, int line)
{
    double end = kt_now() + DEADLINE_S;
    struct timespec step = {0, 20000000};

    strbuf_reset(&e->why);
    while (!cond(e, arg)) {
        if (kt_now() > end)
            fail_msg("line %d: timed out waiting for %s: %s", line, what, e->why.buf);
        (void)nanosleep(&step, NULL);
    }
}
#define wait_until(e, cond, arg) wait_until_at((e), (cond), (arg), #cond, __LINE__)

/* The spec node name must have: slo_render_spec() over the ConfigMap data last written. */
static cJSON *expected_spec(struct env *e, const char *name)
{
    struct slo_config *cfg = slo_config_new();
    cJSON *node = get(e, &kube_res_nodes, NULL, name), *spec = NULL;

    assert_non_null(node);
    if (e->data)
        assert_int_equal(slo_config_update(cfg, e->data, NULL, NULL), 0);
    else
        assert_int_equal(slo_config_absent(cfg, NULL), 0);
    assert_int_equal(slo_render_spec(cfg, node, NULL, &spec), 0);
    cJSON_Delete(node);
    slo_config_free(cfg);
    return spec;
}

/*
 * spec in canonical form (taken over): inside a NodeSLO, CRD defaults applied, Go-client
 * encoding, as the API server stores objects. That server also drops the empty "Object" map of
 * spec.extensions (it serves the CRD from its OpenAPI schema, where an empty map is omitted),
 * which Go decodes the same as {"Object": {}}: an absent or null "Object" counts as {}.
 */
static cJSON *canonical_spec(cJSON *spec)
{
    const struct api_kind *k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeSLO");
    cJSON *o = cJSON_CreateObject(), *ret, *ext;

    if (spec)
        cJSON_AddItemToObject(o, "spec", spec);
    assert_int_equal(api_object_default(k, o, 0), 0);
    assert_int_equal(api_object_canonicalize(k, o), 0);
    ret = cJSON_DetachItemFromObjectCaseSensitive(o, "spec");
    cJSON_Delete(o);
    ext = cJSON_GetObjectItemCaseSensitive(ret, "extensions");
    if (ext && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ext, "Object"))) {
        cJSON_DeleteItemFromObjectCaseSensitive(ext, "Object");
        cJSON_AddObjectToObject(ext, "Object");
    }
    return ret;
}

/* NodeSLO name exists with exactly the expected spec (up to canonical form). */
static bool slo_matches(struct env *e, const void *arg)
{
    const char *name = arg;
    cJSON *o = get(e, &kube_res_nodeslos, NULL, name), *want, *got;
    bool ok;

    if (!o)
        return false;
    want = canonical_spec(expected_spec(e, name));
    got = canonical_spec(cJSON_DetachItemFromObjectCaseSensitive(o, "spec"));
    ok = json_value_equal(got, want);
    if (!ok) {
        char *g = cJSON_PrintUnformatted(got);
        char *w = cJSON_PrintUnformatted(want);
        strbuf_reset(&e->why);
        strbuf_addf(&e->why, "nodeslo %s\n got: %s\nwant: %s", name, g, w);
        cJSON_free(g);
        cJSON_free(w);
    }
    cJSON_Delete(got);
    cJSON_Delete(want);
    cJSON_Delete(o);
    return ok;
}

/* arg: NULL-terminated list of node names. */
static bool all_match(struct env *e, const void *arg)
{
    for (const char *const *n = arg; *n; n++)
        if (!slo_matches(e, *n))
            return false;
    return true;
}

static bool slo_absent(struct env *e, const void *arg)
{
    cJSON *o = get(e, &kube_res_nodeslos, NULL, arg);

    cJSON_Delete(o);
    return !o;
}

static struct nodeslo_stats stats(struct env *e)
{
    struct nodeslo_stats s;

    nodeslo_controller_stats(e->ctl, &s);
    return s;
}

/* A counter of the stats has reached n. The API shows a write before the controller counts
 * it, so counts are awaited too. */
struct at_least {
    size_t off; /* offsetof(struct nodeslo_stats, <counter>) */
    unsigned long n;
};

static bool counted(struct env *e, const void *arg)
{
    const struct at_least *a = arg;
    struct nodeslo_stats s = stats(e);
    unsigned long v;

    memcpy(&v, (const char *)&s + a->off, sizeof(v));
    return v >= a->n;
}
#define AT_LEAST(field, v) (&(struct at_least){offsetof(struct nodeslo_stats, field), (v)})

/* stats(e).reconciles >= *arg */
static bool reconciled(struct env *e, const void *arg)
{
    return stats(e).reconciles >= *(const unsigned long *)arg;
}

static bool config_synced(struct env *e, const void *arg)
{
    return stats(e).config_syncs >= *(const unsigned long *)arg;
}

/* A Warning Event with reason arg on the ConfigMap exists. */
static bool has_event(struct env *e, const void *arg)
{
    cJSON *list = NULL;
    const cJSON *ev;
    bool found = false;

    assert_int_equal(kube_list(e->c, &kube_res_events, NS, NULL, &list, NULL), 0);
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        if (!strcmp(str_at(ev, "reason", NULL), arg) &&
            !strcmp(str_at(ev, "type", NULL), "Warning") &&
            !strcmp(str_at(ev, "involvedObject", "kind"), "ConfigMap") &&
            !strcmp(str_at(ev, "involvedObject", "name"), NAME) &&
            !strcmp(str_at(ev, "involvedObject", "namespace"), NS))
            found = true;
    }
    cJSON_Delete(list);
    return found;
}

static bool colocation_error(struct env *e, const void *arg)
{
    return nodeslo_controller_colocation_error(e->ctl) == *(const bool *)arg;
}

/* on_node has reported at least *arg nodes present. */
static bool adds_at_least(struct env *e, const void *arg)
{
    unsigned n;

    (void)pthread_mutex_lock(&e->lock);
    n = e->node_adds;
    (void)pthread_mutex_unlock(&e->lock);
    strbuf_reset(&e->why);
    strbuf_addf(&e->why, "%u reports of present nodes", n);
    return n >= *(const unsigned *)arg;
}

/* ---- fixtures ---- */

static void on_node(void *ud, const char *node, bool added)
{
    struct env *e = ud;
    (void)node;

    (void)pthread_mutex_lock(&e->lock);
    if (added)
        e->node_adds++;
    else
        e->node_deletes++;
    (void)pthread_mutex_unlock(&e->lock);
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct nodeslo_opts o = {
        .host = "test", .retry_base_ms = 5, .retry_max_ms = 500, .on_node = on_node, .userdata = e};

    (void)pthread_mutex_init(&e->lock, NULL);
    strbuf_init(&e->why);
    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    install_crd(e);
    create(e, &res_namespaces, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" NS "\"}}");
    add_node(e, "n1", NULL);
    add_node(e, "n2", "{\"pool\":\"a\"}");
    add_node(e, "n3", "{\"pool\":\"b\"}");
    assert_int_equal(nodeslo_controller_new(e->c, &o, &e->ctl), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    nodeslo_controller_free(e->ctl);
    kube_client_free(e->c);
    kt_server_free(e->srv);
    cJSON_Delete(e->data);
    strbuf_release(&e->why);
    (void)pthread_mutex_destroy(&e->lock);
    free(e);
    return 0;
}

static const char *const all3[] = {"n1", "n2", "n3", NULL};

#define THRESHOLD(cluster, pool_a)                                                                 \
    "{\"clusterStrategy\":{\"enable\":true,\"cpuSuppressThresholdPercent\":" cluster "},"          \
    "\"nodeStrategies\":[{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},"     \
    "\"cpuSuppressThresholdPercent\":" pool_a "}]}"
#define BURST "{\"clusterStrategy\":{\"policy\":\"auto\"}}"

/* ---- tests ---- */

/* One NodeSLO per node with exactly the rendered spec; then no write for triggers that render
 * the same, nor across a restart. */
static void test_render_and_no_op(void **state)
{
    struct env *e = *state;
    char rv[3][32], now[32];
    struct nodeslo_stats s0;
    unsigned long want;

    put_configmap(
        e, data_of(SLO_KEY_THRESHOLD, THRESHOLD("60", "50"), SLO_KEY_CPU_BURST, BURST, NULL));
    assert_int_equal(nodeslo_controller_start(e->ctl), 0);
    assert_int_equal(nodeslo_controller_start(e->ctl), -EBUSY);
    wait_until(e, all_match, all3);
    for (int i = 0; i < 3; i++)
        slo_rv(e, all3[i], rv[i]);
    wait_until(e, counted, AT_LEAST(creates, 3));
    s0 = stats(e);
    assert_int_equal(s0.creates, 3);
    assert_int_equal(s0.updates, 0);
    assert_true(s0.running);

    /* A Node change that triggers a reconcile but renders the same: no write. */
    want = s0.reconciles + 1;
    patch(e, &kube_res_nodes, NULL, "n1", "{\"metadata\":{\"labels\":{\"unrelated\":\"x\"}}}");
    wait_until(e, reconciled, &want);
    /* An annotation-only change does not even trigger (2.1). */
    patch(e, &kube_res_nodes, NULL, "n3", "{\"metadata\":{\"annotations\":{\"a\":\"b\"}}}");
    /* ConfigMap updates that do not change the effective config: an unrelated key, the same
     * JSON spelt differently. */
    want = s0.config_syncs + 1;
    put_configmap(e, data_of(SLO_KEY_THRESHOLD, THRESHOLD("60", "50"), SLO_KEY_CPU_BURST, BURST,
                             "unrelated", "x", NULL));
    wait_until(e, config_synced, &want);
    want++;
    put_configmap(e, data_of(SLO_KEY_THRESHOLD, THRESHOLD("60", "50"), SLO_KEY_CPU_BURST,
                             "{ \"clusterStrategy\" : { \"policy\" : \"auto\" } }", NULL));
    wait_until(e, config_synced, &want);
    /* A restart lists and reconciles every node again, and writes nothing. */
    nodeslo_controller_stop(e->ctl);
    assert_false(stats(e).running);
    nodeslo_controller_stop(e->ctl);
    want = stats(e).reconciles + 3;
    assert_int_equal(nodeslo_controller_start(e->ctl), 0);
    wait_until(e, reconciled, &want);
    for (int i = 0; i < 3; i++) {
        slo_rv(e, all3[i], now);
        assert_string_equal(now, rv[i]);
    }
    assert_int_equal(stats(e).creates, 3);
    assert_int_equal(stats(e).updates, 0);
    assert_int_equal(stats(e).errors, 0);
    assert_true(stats(e).latency_sum_s > 0);
}

/* A key that fails to decode: Warning Event on the ConfigMap, NodeSLOs unchanged; fixed: the
 * NodeSLOs follow; the ConfigMap deleted: the defaults. */
static void test_bad_key_event(void **state)
{
    struct env *e = *state;
    char rv[3][32], now[32];
    unsigned long want;

    put_configmap(e, data_of(SLO_KEY_THRESHOLD, THRESHOLD("60", "50"), NULL));
    assert_int_equal(nodeslo_controller_start(e->ctl), 0);
    wait_until(e, all_match, all3);
    for (int i = 0; i < 3; i++)
        slo_rv(e, all3[i], rv[i]);

    want = stats(e).config_syncs + 1;
    put_configmap(e, data_of(SLO_KEY_THRESHOLD, "{\"clusterStrategy\": {", NULL));
    wait_until(e, has_event, "SLOCfgUnmarshalFailed");
    wait_until(e, config_synced, &want);
    assert_true(stats(e).config_errors >= 1);
    for (int i = 0; i < 3; i++) {
        slo_rv(e, all3[i], now);
        assert_string_equal(now, rv[i]);
    }
    {
        cJSON *list = NULL;
        const cJSON *ev;
        assert_int_equal(kube_list(e->c, &kube_res_events, NS, NULL, &list, NULL), 0);
        cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items"))
        {
            if (!strcmp(str_at(ev, "reason", NULL), "SLOCfgUnmarshalFailed"))
                assert_non_null(
                    strstr(str_at(ev, "message", NULL), "failed to unmarshal ThresholdCfg, err: "));
        }
        cJSON_Delete(list);
    }

    /* Fixed, with a new value: every NodeSLO follows. */
    put_configmap(e, data_of(SLO_KEY_THRESHOLD, THRESHOLD("55", "45"), NULL));
    wait_until(e, all_match, all3);
    for (int i = 0; i < 3; i++) {
        slo_rv(e, all3[i], now);
        assert_string_not_equal(now, rv[i]);
    }

    /* Deleted: the ConfigMap's absence, i.e. the defaults. */
    delete_configmap(e);
    wait_until(e, all_match, all3);
    assert_int_equal(stats(e).errors, 0);
}

/* Without a ConfigMap at start: defaults. Then node-level changes: a label change re-renders
 * that node only, a deleted Node takes its NodeSLO along, a deleted NodeSLO is re-created, an
 * edited one put back, a new Node gets one. */
static void test_node_changes(void **state)
{
    struct env *e = *state;
    char rv2[32], rv3[32], now[32];
    unsigned long updates;
    cJSON *o;

    assert_int_equal(nodeslo_controller_start(e->ctl), 0);
    wait_until(e, all_match, all3);
    put_configmap(e, data_of(SLO_KEY_THRESHOLD, THRESHOLD("60", "50"), NULL));
    wait_until(e, all_match, all3);
    wait_until(e, counted, AT_LEAST(updates, 3)); /* all three changed */
    slo_rv(e, "n2", rv2);
    slo_rv(e, "n3", rv3);
    updates = stats(e).updates;
    assert_int_equal(updates, 3);

    /* n1 joins pool a: only n1 is re-rendered. */
    patch(e, &kube_res_nodes, NULL, "n1", "{\"metadata\":{\"labels\":{\"pool\":\"a\"}}}");
    wait_until(e, slo_matches, "n1");
    o = get(e, &kube_res_nodeslos, NULL, "n1");
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(
                       cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"),
                                                        "resourceUsedThresholdWithBE"),
                       "cpuSuppressThresholdPercent"),
                   "50");
    cJSON_Delete(o);
    wait_until(e, counted, AT_LEAST(updates, updates + 1));
    assert_int_equal(stats(e).updates, updates + 1);
    slo_rv(e, "n2", now);
    assert_string_equal(now, rv2);
    slo_rv(e, "n3", now);
    assert_string_equal(now, rv3);

    /* Node deleted: its NodeSLO too. */
    assert_int_equal(kube_delete(e->c, &kube_res_nodes, NULL, "n3", NULL), 0);
    wait_until(e, slo_absent, "n3");
    wait_until(e, counted, AT_LEAST(deletes, 1));

    /* NodeSLO deleted by hand: re-created. */
    assert_int_equal(kube_delete(e->c, &kube_res_nodeslos, NULL, "n1", NULL), 0);
    wait_until(e, slo_matches, "n1");

    /* NodeSLO spec edited by hand: put back, by a write of the controller (the edit itself may
     * be undone before a check here could see it, so the proof is the count of writes). */
    updates = stats(e).updates;
    patch(e, &kube_res_nodeslos, NULL, "n2",
          "{\"spec\":{\"cpuBurstStrategy\":{\"cpuBurstPercent\":123}}}");
    wait_until(e, counted, AT_LEAST(updates, updates + 1));
    wait_until(e, slo_matches, "n2");

    /* A new node. */
    add_node(e, "n4", NULL);
    wait_until(e, slo_matches, "n4");
    assert_true(slo_absent(e, "n3"));
    assert_int_equal(stats(e).deletes, 1);
}

/* The NodeMetric side: the spec source, the node list and on_node, the colocation state. */
static void test_nodemetric_source(void **state)
{
    struct env *e = *state;
    struct kube_object **v = NULL;
    cJSON *spec = NULL, *node, *want = NULL;
    struct slo_config *cfg;
    unsigned adds;
    bool err;
    size_t n;

    /* Not running: nothing to serve. */
    assert_int_equal(nodeslo_controller_nodemetric_spec(e->ctl, "n1", &spec), -EAGAIN);
    assert_int_equal(nodeslo_controller_nodes(e->ctl, &v), 0);
    assert_false(nodeslo_controller_colocation_error(e->ctl));

    put_configmap(e, data_of(SLO_KEY_COLOCATION,
                             "{\"enable\":true,\"metricReportIntervalSeconds\":30,"
                             "\"metricAggregatePolicy\":{\"durations\":[\"15m\"]}}",
                             NULL));
    assert_int_equal(nodeslo_controller_start(e->ctl), 0);
    assert_false(nodeslo_controller_colocation_error(e->ctl));
    assert_int_equal(nodeslo_controller_nodemetric_spec(e->ctl, "n2", &spec), 0);
    cfg = slo_config_new();
    assert_int_equal(slo_config_update(cfg, e->data, NULL, NULL), 0);
    node = get(e, &kube_res_nodes, NULL, "n2");
    assert_int_equal(slo_render_nodemetric_spec(cfg, node, &want), 0);
    assert_true(json_value_equal(spec, want));
    assert_json_eq(spec, "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,"
                         "\"reportIntervalSeconds\":30,\"nodeAggregatePolicy\":{\"durations\":"
                         "[\"15m0s\"]},\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}");
    cJSON_Delete(want);
    cJSON_Delete(node);
    cJSON_Delete(spec);
    slo_config_free(cfg);
    assert_int_equal(nodeslo_controller_nodemetric_spec(e->ctl, "nope", &spec), -ENOENT);

    n = nodeslo_controller_nodes(e->ctl, &v);
    assert_int_equal(n, 3);
    kube_objects_free(v, n);
    /* Each of the 3 nodes is reported present when listed, and again after each reconcile;
     * a configuration change that alters what nodes get reconciles, so reports, every node
     * again (the NodeMetric specs follow it). No deletes were reported. */
    adds = 3;
    wait_until(e, adds_at_least, &adds);
    (void)pthread_mutex_lock(&e->lock);
    adds = e->node_adds + 3;
    assert_int_equal(e->node_deletes, 0);
    (void)pthread_mutex_unlock(&e->lock);
    put_configmap(e, data_of(SLO_KEY_COLOCATION,
                             "{\"enable\":true,\"metricReportIntervalSeconds\":20,"
                             "\"metricAggregatePolicy\":{\"durations\":[\"15m\"]}}",
                             NULL));
    wait_until(e, adds_at_least, &adds);

    /* A colocation-config that fails to decode: in error, with its Event. */
    put_configmap(e, data_of(SLO_KEY_COLOCATION, "{\"enable\":", NULL));
    wait_until(e, has_event, "ColocationCfgUnmarshalFailed");
    err = true;
    wait_until(e, colocation_error, &err);
    put_configmap(e, data_of(SLO_KEY_COLOCATION, "{\"enable\":false}", NULL));
    err = false;
    wait_until(e, colocation_error, &err);

    nodeslo_controller_stop(e->ctl);
    assert_int_equal(nodeslo_controller_nodemetric_spec(e->ctl, "n1", &spec), -EAGAIN);
    assert_false(nodeslo_controller_colocation_error(e->ctl));
}

static int setup_no_crd(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    (void)pthread_mutex_init(&e->lock, NULL);
    strbuf_init(&e->why);
    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    *state = e;
    return 0;
}

struct starter {
    struct nodeslo_controller *ctl;
    int r;
    atomic_bool done;
};

static void *start_thread(void *arg)
{
    struct starter *s = arg;

    s->r = nodeslo_controller_start(s->ctl);
    atomic_store(&s->done, true);
    return NULL;
}

/* Without the NodeSLO CRD the NodeSLO cache never syncs: start gives up after its timeout and
 * leaves nothing running; a stop from another thread cancels a waiting start at once. */
static void test_start_timeout_and_cancel(void **state)
{
    struct env *e = *state;
    struct nodeslo_opts o = {.sync_timeout_ms = 200};
    struct starter s = {0};
    double end;
    pthread_t t;

    assert_int_equal(nodeslo_controller_new(e->c, &o, &e->ctl), 0);
    assert_int_equal(nodeslo_controller_start(e->ctl), -ETIMEDOUT);
    assert_false(stats(e).running);
    nodeslo_controller_free(e->ctl);

    o.sync_timeout_ms = 600000;
    assert_int_equal(nodeslo_controller_new(e->c, &o, &e->ctl), 0);
    s.ctl = e->ctl;
    atomic_init(&s.done, false);
    assert_int_equal(pthread_create(&t, NULL, start_thread, &s), 0);
    /* A stop that runs before the start took over is a no-op: repeat until the start ends. */
    end = kt_now() + DEADLINE_S;
    while (!atomic_load(&s.done)) {
        struct timespec step = {0, 20000000};
        nodeslo_controller_stop(e->ctl);
        if (kt_now() > end)
            fail_msg("start was not cancelled");
        (void)nanosleep(&step, NULL);
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(s.r, -ECANCELED);
    assert_false(stats(e).running);
}

/* Names go into a field selector: one that could add a requirement is refused. */
static void test_new_rejects_bad_names(void **state)
{
    struct nodeslo_controller *c = NULL;
    struct nodeslo_opts o = {.config_name = "x,metadata.namespace=y"};
    (void)state;

    assert_int_equal(nodeslo_controller_new(NULL, &o, &c), -EINVAL);
    o.config_name = NULL;
    o.config_namespace = "";
    assert_int_equal(nodeslo_controller_new(NULL, &o, &c), -EINVAL);
    assert_null(c);
    nodeslo_controller_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_render_and_no_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_key_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodemetric_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_timeout_and_cancel, setup_no_crd, teardown),
        cmocka_unit_test(test_new_rejects_bad_names),
    };

    (void)log_set_level("error");
    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
