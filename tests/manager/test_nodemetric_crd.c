/*
 * Tests for manager/nodemetric/crd against a real koord API server (tests/kube/kubetest.h):
 * whether the slo.koordinator.sh NodeMetric CRD is served (not before it is installed); apply
 * creates the object with the spec and no status, writes nothing when the spec is already so
 * (same resourceVersion), updates a different spec and keeps the status an agent wrote, and
 * with keep_spec leaves an existing spec alone but still creates a missing object; delete is
 * fine for an absent object; names lists every object.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "base/base.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/kubetest.h"
#include "manager/nodemetric/crd.h"
#include "testutil.h"

static const struct kube_resource res_crds = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};

struct env {
    struct kt_server *srv;
    struct kube_client *c;
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    const char *paths[2];
    struct kube_config *cfg = NULL;

    e->srv = kt_server_new(0);
    paths[0] = e->srv->kubeconfig;
    paths[1] = NULL;
    assert_int_equal(kube_config_from_kubeconfig(paths, NULL, &cfg, NULL), 0);
    /* Generous: the first request's TLS handshake under valgrind on a loaded 2-core machine
     * has taken more than kt_client()'s 10 s. */
    cfg->timeout_ms = 120000;
    assert_int_equal(kube_client_new(cfg, &e->c), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    kube_client_free(e->c);
    kt_server_free(e->srv);
    free(e);
    return 0;
}

static void install_crd(struct env *e)
{
    cJSON *crd = NULL;

    for (const struct api_kind *const *k = api_kinds(); *k; k++)
        if ((*k)->crd && !strcmp((*k)->kind, "NodeMetric"))
            assert_int_equal(api_crd_build(*k, &crd), 0);
    assert_non_null(crd);
    assert_int_equal(kube_create(e->c, &res_crds, NULL, crd, NULL, NULL), 0);
    cJSON_Delete(crd);
}

/* The object's spec.metricCollectPolicy.reportIntervalSeconds and resourceVersion. */
static int interval_of(struct env *e, const char *node, char *rv, size_t rv_size)
{
    cJSON *o = NULL;
    const cJSON *v;
    int n;

    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, node, &o, NULL), 0);
    v = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "metricCollectPolicy"),
        "reportIntervalSeconds");
    assert_true(cJSON_IsNumber(v));
    n = v->valueint;
    (void)snprintf(rv, rv_size, "%s",
                   cJSON_GetStringValue(
                       cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "resourceVersion")));
    cJSON_Delete(o);
    return n;
}

static cJSON *spec_of(int interval)
{
    char json[256];

    (void)snprintf(json, sizeof(json),
                   "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,"
                   "\"reportIntervalSeconds\":%d,\"nodeAggregatePolicy\":{\"durations\":"
                   "[\"5m0s\"]},\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}",
                   interval);
    return J(json);
}

static void test_crd_objects(void **state)
{
    struct env *e = *state;
    cJSON *s60 = spec_of(60), *s30 = spec_of(30), *o = NULL, *patch;
    char rv1[32], rv2[32];
    char **names = NULL;

    /* not installed: not served, and nothing to keep */
    assert_int_equal(nodemetric_crd_served(e->c), 0);
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, false), -ENOENT);
    install_crd(e);
    assert_int_equal(nodemetric_crd_served(e->c), 1);

    /* created with the spec, no status */
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, false), 0);
    assert_int_equal(interval_of(e, "n1", rv1, sizeof(rv1)), 60);
    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, "n1", &o, NULL), 0);
    assert_null(cJSON_GetObjectItem(o, "status"));
    cJSON_Delete(o);
    /* the same spec again: no write */
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, false), 0);
    assert_int_equal(interval_of(e, "n1", rv2, sizeof(rv2)), 60);
    assert_string_equal(rv1, rv2);

    /* the agent reports; a new spec is written and the report stays */
    patch = J("{\"status\":{\"updateTime\":\"2026-01-01T00:00:00Z\"}}");
    assert_int_equal(kube_patch(e->c, &nodemetric_crd_resource, NULL, "n1", "status",
                                KUBE_PATCH_MERGE, patch, NULL, NULL),
                     0);
    cJSON_Delete(patch);
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s30, false), 0);
    assert_int_equal(interval_of(e, "n1", rv1, sizeof(rv1)), 30);
    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, "n1", &o, NULL), 0);
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "updateTime")),
        "2026-01-01T00:00:00Z");
    cJSON_Delete(o);

    /* keep_spec (colocation-config in error): the existing spec stays, a missing one is made */
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, true), 0);
    assert_int_equal(interval_of(e, "n1", rv2, sizeof(rv2)), 30);
    assert_string_equal(rv1, rv2);
    assert_int_equal(nodemetric_crd_apply(e->c, "n2", s60, true), 0);
    assert_int_equal(interval_of(e, "n2", rv2, sizeof(rv2)), 60);

    /* names; delete, also of what is not there */
    assert_int_equal(nodemetric_crd_names(e->c, &names), 2);
    assert_string_equal(names[0], "n1");
    assert_string_equal(names[1], "n2");
    assert_null(names[2]);
    for (size_t i = 0; names[i]; i++)
        free(names[i]);
    free(names);
    assert_int_equal(nodemetric_crd_delete(e->c, "n2"), 0);
    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, "n2", NULL, NULL), -ENOENT);
    assert_int_equal(nodemetric_crd_delete(e->c, "n2"), 0);
    cJSON_Delete(s60);
    cJSON_Delete(s30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crd_objects, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
