/*
 * Tests for apiserver/reqinfo: request paths and methods to Kubernetes request info, row by
 * row from reference kubernetes-api.md 1.1-1.2 (and apiserver's requestinfo_test.go cases).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/reqinfo.h"
#include "base/base.h"

struct row {
    const char *method, *path, *watch, *fsel;
    bool resource;
    const char *verb, *group, *version, *ns, *resource_name, *sub, *name;
};

static const struct row rows[] = {
    /* discovery and other non-resource paths: the verb is the lower-case method */
    {"GET", "/", NULL, NULL, false, "get", "", "", "", "", "", ""},
    {"GET", "/api", NULL, NULL, false, "get", "", "", "", "", "", ""},
    {"GET", "/api/v1", NULL, NULL, false, "get", "", "", "", "", "", ""},
    {"GET", "/apis", NULL, NULL, false, "get", "", "", "", "", "", ""},
    {"GET", "/apis/slo.koordinator.sh", NULL, NULL, false, "get", "", "", "", "", "", ""},
    {"GET", "/apis/slo.koordinator.sh/v1alpha1", NULL, NULL, false, "get", "", "", "", "", "", ""},
    {"GET", "/version", NULL, NULL, false, "get", "", "", "", "", "", ""},
    {"POST", "/healthz", NULL, NULL, false, "post", "", "", "", "", "", ""},
    {"GET", "/openapi/v3/apis/slo.koordinator.sh/v1alpha1", NULL, NULL, false, "get", "", "", "",
     "", "", ""},
    /* core group */
    {"GET", "/api/v1/namespaces/default/pods/web-0", NULL, NULL, true, "get", "", "v1", "default",
     "pods", "", "web-0"},
    {"HEAD", "/api/v1/namespaces/default/pods/web-0", NULL, NULL, true, "get", "", "v1", "default",
     "pods", "", "web-0"},
    {"GET", "/api/v1/namespaces/default/pods", NULL, NULL, true, "list", "", "v1", "default",
     "pods", "", ""},
    {"GET", "/api/v1/pods", NULL, NULL, true, "list", "", "v1", "", "pods", "", ""},
    {"GET", "/api/v1/pods", "true", NULL, true, "watch", "", "v1", "", "pods", "", ""},
    {"GET", "/api/v1/pods", "1", NULL, true, "watch", "", "v1", "", "pods", "", ""},
    {"GET", "/api/v1/pods", "false", NULL, true, "list", "", "v1", "", "pods", "", ""},
    {"GET", "/api/v1/pods", "0", NULL, true, "list", "", "v1", "", "pods", "", ""},
    {"POST", "/api/v1/namespaces/default/pods", NULL, NULL, true, "create", "", "v1", "default",
     "pods", "", ""},
    {"PUT", "/api/v1/namespaces/default/pods/web-0/status", NULL, NULL, true, "update", "", "v1",
     "default", "pods", "status", "web-0"},
    {"POST", "/api/v1/namespaces/default/pods/web-0/binding", NULL, NULL, true, "create", "", "v1",
     "default", "pods", "binding", "web-0"},
    {"POST", "/api/v1/namespaces/default/pods/web-0/eviction", NULL, NULL, true, "create", "", "v1",
     "default", "pods", "eviction", "web-0"},
    {"PATCH", "/api/v1/nodes/n1", NULL, NULL, true, "patch", "", "v1", "", "nodes", "", "n1"},
    {"DELETE", "/api/v1/nodes/n1", NULL, NULL, true, "delete", "", "v1", "", "nodes", "", "n1"},
    {"DELETE", "/api/v1/namespaces/default/pods", NULL, NULL, true, "deletecollection", "", "v1",
     "default", "pods", "", ""},
    /* namespaces are special: the object and its status/finalize subresources */
    {"GET", "/api/v1/namespaces", NULL, NULL, true, "list", "", "v1", "", "namespaces", "", ""},
    {"GET", "/api/v1/namespaces/kube-system", NULL, NULL, true, "get", "", "v1", "kube-system",
     "namespaces", "", "kube-system"},
    {"PUT", "/api/v1/namespaces/ns1/status", NULL, NULL, true, "update", "", "v1", "ns1",
     "namespaces", "status", "ns1"},
    {"PUT", "/api/v1/namespaces/ns1/finalize", NULL, NULL, true, "update", "", "v1", "ns1",
     "namespaces", "finalize", "ns1"},
    /* named groups */
    {"GET", "/apis/slo.koordinator.sh/v1alpha1/nodemetrics/node-1", NULL, NULL, true, "get",
     "slo.koordinator.sh", "v1alpha1", "", "nodemetrics", "", "node-1"},
    {"PUT", "/apis/slo.koordinator.sh/v1alpha1/nodemetrics/node-1/status", NULL, NULL, true,
     "update", "slo.koordinator.sh", "v1alpha1", "", "nodemetrics", "status", "node-1"},
    {"GET", "/apis/coordination.k8s.io/v1/namespaces/koordinator-system/leases", "true", NULL, true,
     "watch", "coordination.k8s.io", "v1", "koordinator-system", "leases", "", ""},
    {"POST", "/apis/authentication.k8s.io/v1/tokenreviews", NULL, NULL, true, "create",
     "authentication.k8s.io", "v1", "", "tokenreviews", "", ""},
    /* the deprecated watch path */
    {"GET", "/apis/scheduling.koordinator.sh/v1alpha1/watch/reservations", NULL, NULL, true,
     "watch", "scheduling.koordinator.sh", "v1alpha1", "", "reservations", "", ""},
    {"GET", "/api/v1/watch/namespaces/default/pods/web-0", NULL, NULL, true, "watch", "", "v1",
     "default", "pods", "", "web-0"},
    /* a list pinned to one name is authorized as that name */
    {"GET", "/api/v1/nodes", "1", "metadata.name=n1", true, "watch", "", "v1", "", "nodes", "",
     "n1"},
    {"GET", "/api/v1/nodes", NULL, "spec.unschedulable=false,metadata.name==n2", true, "list", "",
     "v1", "", "nodes", "", "n2"},
    {"GET", "/api/v1/nodes", NULL, "metadata.name!=n1", true, "list", "", "v1", "", "nodes", "",
     ""},
    {"GET", "/api/v1/nodes", NULL, "metadata.name=a/b", true, "list", "", "v1", "", "nodes", "",
     ""},
    /* repeated and trailing slashes collapse */
    {"GET", "//api/v1//nodes/n1/", NULL, NULL, true, "get", "", "v1", "", "nodes", "", "n1"},
    {"OPTIONS", "/api/v1/nodes", NULL, NULL, true, "", "", "v1", "", "nodes", "", ""},
};

static void test_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        const struct row *r = &rows[i];
        struct api_reqinfo ri;
        int rc = api_reqinfo_parse(r->method, r->path, r->watch, r->fsel, &ri);

        if (rc != 0)
            fail_msg("row %zu %s %s: %d", i, r->method, r->path, rc);
        if (ri.is_resource != r->resource || strcmp(ri.verb, r->verb) ||
            strcmp(ri.group, r->group) || strcmp(ri.version, r->version) ||
            strcmp(ri.namespace, r->ns) || strcmp(ri.resource, r->resource_name) ||
            strcmp(ri.subresource, r->sub) || strcmp(ri.name, r->name))
            fail_msg("row %zu %s %s: got resource=%d verb=%s group=%s version=%s ns=%s "
                     "resource=%s sub=%s name=%s",
                     i, r->method, r->path, ri.is_resource, ri.verb, ri.group, ri.version,
                     ri.namespace, ri.resource, ri.subresource, ri.name);
        assert_string_equal(ri.path, r->path);
        api_reqinfo_release(&ri);
    }
}

static void test_bad_paths(void **state)
{
    struct api_reqinfo ri;
    char *long_path = xcalloc(API_REQINFO_MAX_PATH + 2, 1);
    (void)state;

    assert_int_equal(api_reqinfo_parse("GET", "api/v1/pods", NULL, NULL, &ri), -EINVAL);
    assert_int_equal(api_reqinfo_parse("GET", "", NULL, NULL, &ri), -EINVAL);
    assert_int_equal(api_reqinfo_parse("GET", NULL, NULL, NULL, &ri), -EINVAL);
    assert_int_equal(api_reqinfo_parse("GET", "/api/v1/../secrets", NULL, NULL, &ri), -EINVAL);
    assert_int_equal(api_reqinfo_parse("GET", "/api/v1/./pods", NULL, NULL, &ri), -EINVAL);
    memset(long_path, 'a', API_REQINFO_MAX_PATH + 1);
    long_path[0] = '/';
    assert_int_equal(api_reqinfo_parse("GET", long_path, NULL, NULL, &ri), -E2BIG);
    free(long_path);
    /* More segments than any Kubernetes path has. */
    {
        char p[1024] = "";
        for (int i = 0; i < 100; i++) {
            size_t l = strlen(p);
            (void)snprintf(p + l, sizeof(p) - l, "/x");
        }
        assert_int_equal(api_reqinfo_parse("GET", p, NULL, NULL, &ri), -E2BIG);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_bad_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
