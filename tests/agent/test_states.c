/*
 * Tests for agent/states against a real API server in-process: the agent sees only its own
 * node's pods, Node, NodeSLO and NodeMetric (field selectors), follows additions, changes and
 * deletions, and tells its callbacks. The NodeMetric is read from the slo.koordinator.sh CRD here
 * (what --report-mode=crd reads); the manager's API is exercised end to end in tests/e2e.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/states/states.h"
#include "api/api.h"
#include "api/crd.h"
#include "kube/informer.h"
#include "kube/kubetest.h"
#include "testutil.h"

#define DEADLINE_S 60.0

static const struct kube_resource res_crds = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
static const struct kube_resource res_crd_nodemetrics = {"slo.koordinator.sh", "v1alpha1",
                                                         "nodemetrics", "NodeMetric", false};

struct env {
    struct kt_server *srv;
    struct kube_client *c;
    struct states *st;
    atomic_uint pods, slos, metrics; /* callback counts */
};

static void create(struct env *e, const struct kube_resource *r, const char *ns, const char *json)
{
    cJSON *o = J(json);
    int rc = kube_create(e->c, r, ns, o, NULL, NULL);

    cJSON_Delete(o);
    if (rc != 0)
        fail_msg("create %s %s: %d", r->plural, json, rc);
}

static void install_crd(struct env *e, const char *kind)
{
    cJSON *crd = NULL;

    for (const struct api_kind *const *k = api_kinds(); *k; k++)
        if ((*k)->crd && !strcmp((*k)->kind, kind))
            assert_int_equal(api_crd_build(*k, &crd), 0);
    assert_non_null(crd);
    assert_int_equal(kube_create(e->c, &res_crds, NULL, crd, NULL, NULL), 0);
    cJSON_Delete(crd);
}

static void on_pods(void *ud)
{
    atomic_fetch_add(&((struct env *)ud)->pods, 1);
}

static void on_slo(void *ud)
{
    atomic_fetch_add(&((struct env *)ud)->slos, 1);
}

static void on_metric(void *ud)
{
    atomic_fetch_add(&((struct env *)ud)->metrics, 1);
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    install_crd(e, "NodeSLO");
    install_crd(e, "NodeMetric");
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    states_free(e->st);
    kube_client_free(e->c);
    kt_server_free(e->srv);
    free(e);
    return 0;
}

static const char pod_fmt[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                              "\"%s\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":"
                              "\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";

/* Creates a pod; its UID (the server's) into uid. */
static void add_pod(struct env *e, const char *name, const char *node, char uid[64])
{
    char json[512];
    cJSON *o = NULL, *made = NULL;

    (void)snprintf(json, sizeof(json), pod_fmt, name, node);
    o = J(json);
    assert_int_equal(kube_create(e->c, &kube_res_pods, "default", o, &made, NULL), 0);
    (void)snprintf(
        uid, 64, "%s",
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(made, "metadata"), "uid")));
    cJSON_Delete(o);
    cJSON_Delete(made);
}

static size_t npods(struct states *st)
{
    struct kube_object **v = NULL;
    size_t n = states_pods(st, &v);

    kube_objects_free(v, n);
    return n;
}

struct swap {
    struct env *e;
    const char *gone, *added; /* UIDs */
};

static bool swapped(void *arg)
{
    struct swap *w = arg;
    struct kube_object *g = states_pod_by_uid(w->e->st, w->gone);
    struct kube_object *a = states_pod_by_uid(w->e->st, w->added);
    bool ok = !g && a;

    (void)kube_object_unref(g);
    (void)kube_object_unref(a);
    return ok;
}

/* A callback count reached at least n (callbacks run just after the cache changed). */
struct told {
    atomic_uint *count;
    unsigned n;
};

static bool told(void *arg)
{
    struct told *t = arg;
    return atomic_load(t->count) >= t->n;
}

static bool have_slo_and_metric(void *arg)
{
    struct env *e = arg;
    struct kube_object *slo = states_nodeslo(e->st), *nm = states_nodemetric(e->st);
    bool ok = slo && nm;

    (void)kube_object_unref(slo);
    (void)kube_object_unref(nm);
    return ok;
}

static bool metric_changed(void *arg)
{
    struct env *e = arg;
    struct kube_object *nm = states_nodemetric(e->st);
    const cJSON *spec = nm ? cJSON_GetObjectItem(kube_object_json(nm), "spec") : NULL;
    bool ok = cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "metricCollectPolicy"),
                                  "reportIntervalSeconds") != NULL;

    (void)kube_object_unref(nm);
    return ok;
}

static void test_own_node_only(void **state)
{
    struct env *e = *state;
    struct kube_object *o;
    unsigned before;
    cJSON *nm = NULL;
    char uid_a[64], uid_b[64], uid_c[64], uid_d[64], uid_e[64];

    create(e, &kube_res_nodes, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}");
    create(e, &kube_res_nodes, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"}}");
    add_pod(e, "a", "n1", uid_a);
    add_pod(e, "b", "n2", uid_b);
    add_pod(e, "c", "n1", uid_c);
    assert_int_equal(states_start(&(struct states_opts){.client = e->c,
                                                        .nodemetric_resource = &res_crd_nodemetrics,
                                                        .node = "n1",
                                                        .on_pods = on_pods,
                                                        .on_nodeslo = on_slo,
                                                        .on_nodemetric = on_metric,
                                                        .userdata = e},
                                  &e->st),
                     0);
    assert_true(states_wait_synced(e->st, (long)(DEADLINE_S * 1000)));
    assert_int_equal(npods(e->st), 2);
    o = states_pod_by_uid(e->st, uid_c);
    assert_non_null(o);
    assert_string_equal(kube_object_name(o), "c");
    (void)kube_object_unref(o);
    assert_null(states_pod_by_uid(e->st, uid_b)); /* another node's */
    o = states_node(e->st);
    assert_non_null(o);
    assert_string_equal(kube_object_name(o), "n1");
    (void)kube_object_unref(o);
    assert_null(states_nodeslo(e->st));
    assert_true(kt_wait(told, &(struct told){&e->pods, 2}, DEADLINE_S));

    /* A pod deleted, another added: followed and told. */
    before = atomic_load(&e->pods);
    assert_int_equal(kube_delete(e->c, &kube_res_pods, "default", "a", NULL), 0);
    add_pod(e, "d", "n1", uid_d);
    add_pod(e, "e", "n2", uid_e);
    (void)uid_e;
    assert_true(kt_wait(swapped, &(struct swap){e, uid_a, uid_d}, DEADLINE_S));
    assert_int_equal(npods(e->st), 2);
    assert_true(kt_wait(told, &(struct told){&e->pods, before + 2}, DEADLINE_S));

    /* The NodeSLO and NodeMetric of this node, not another's. */
    create(e, &kube_res_nodeslos, NULL,
           "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\",\"metadata\":"
           "{\"name\":\"n2\"},\"spec\":{}}");
    create(e, &kube_res_nodeslos, NULL,
           "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\",\"metadata\":"
           "{\"name\":\"n1\"},\"spec\":{}}");
    create(e, &res_crd_nodemetrics, NULL,
           "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","
           "\"metadata\":{\"name\":\"n1\"},\"spec\":{}}");
    assert_true(kt_wait(have_slo_and_metric, e, DEADLINE_S));
    assert_true(kt_wait(told, &(struct told){&e->slos, 1}, DEADLINE_S));
    assert_true(kt_wait(told, &(struct told){&e->metrics, 1}, DEADLINE_S));
    assert_int_equal(kube_get(e->c, &res_crd_nodemetrics, NULL, "n1", &nm, NULL), 0);
    cJSON_ReplaceItemInObject(nm, "spec",
                              J("{\"metricCollectPolicy\":{\"reportIntervalSeconds\":30}}"));
    assert_int_equal(kube_update(e->c, &res_crd_nodemetrics, NULL, nm, NULL, NULL, NULL), 0);
    cJSON_Delete(nm);
    assert_true(kt_wait(metric_changed, e, DEADLINE_S));
}

static void test_bad_options(void **state)
{
    struct env *e = *state;
    struct states *st = NULL;

    assert_int_equal(states_start(&(struct states_opts){.client = e->c}, &st), -EINVAL);
    assert_int_equal(states_start(&(struct states_opts){.node = "n1"}, &st), -EINVAL);
    assert_null(st);
    states_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_own_node_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
