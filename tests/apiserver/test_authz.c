/*
 * Tests for apiserver/authz: the mode list (kube's flag values, duplicates and unknown names
 * refused), the chain's order (system:masters first; the node rule decisive for nodes; RBAC
 * allowing or passing on; AlwaysAllow/AlwaysDeny; nothing decided = refused), an RBAC write
 * seen by the next decision, ClusterRole aggregation on write, the rules a user is told it
 * holds, and the admission of RBAC writes: subjects' apiGroup defaulted, roleRef immutable,
 * escalation refused unless the author holds the rules or may escalate/bind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/auth.h"
#include "apiserver/authz.h"
#include "apiserver/registry.h"
#include "apiserver/reqinfo.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "base/base.h"
#include "codec/codec.h"

static cJSON *parse(const char *text)
{
    cJSON *o = NULL;

    assert_int_equal(json_parse(text, strlen(text), NULL, &o, NULL), 0);
    return o;
}

static void uid(char u[37])
{
    static int n;
    (void)snprintf(u, 37, "00000000-0000-0000-0000-%012d", ++n);
}

static void test_modes(void **state)
{
    static const struct {
        const char *modes;
        int want;
        const char *why;
    } rows[] = {
        {"Node,RBAC", 0, ""},
        {"RBAC", 0, ""},
        {"AlwaysAllow", 0, ""},
        {"Node,AlwaysDeny", 0, ""},
        {"", -EINVAL, "at least one authorization mode must be passed"},
        {"Node,rbac", -EINVAL,
         "authorization-mode \"rbac\" is not a valid mode (Node, RBAC, AlwaysAllow, AlwaysDeny)"},
        {"RBAC,RBAC", -EINVAL, "authorization-mode \"RBAC\" has already been specified"},
        {"Node,", -EINVAL, "empty authorization mode"},
        {"Webhook", -EINVAL,
         "authorization-mode \"Webhook\" is not a valid mode (Node, RBAC, AlwaysAllow, "
         "AlwaysDeny)"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct api_authz *az = api_authz_new(NULL);
        struct strbuf why = STRBUF_INIT;
        if (api_authz_set_modes(az, rows[i].modes, &why) != rows[i].want)
            fail_msg("row %zu: %s", i, rows[i].modes);
        assert_string_equal(why.buf, rows[i].why);
        assert_int_equal(api_authz_rbac_enabled(az),
                         rows[i].want == 0 && strstr(rows[i].modes, "RBAC") != NULL);
        strbuf_release(&why);
        api_authz_free(az);
    }
}

static void ri_res(struct api_reqinfo *ri, const char *verb, const char *group, const char *res,
                   const char *ns, const char *name)
{
    *ri = (struct api_reqinfo){
        .is_resource = true,
        .verb = xstrdup(verb),
        .path = xstrdup(""),
        .api_prefix = xstrdup("api"),
        .group = xstrdup(group),
        .version = xstrdup("v1"),
        .namespace = xstrdup(ns),
        .resource = xstrdup(res),
        .subresource = xstrdup(""),
        .name = xstrdup(name),
    };
}

static enum api_authz_decision decide(struct api_authz *az, const struct api_user *u,
                                      const char *verb, const char *res, const char *ns)
{
    struct api_reqinfo ri;
    enum api_authz_decision d;

    ri_res(&ri, verb, "", res, ns, "x");
    d = api_authz_decide(az, u, &ri, NULL);
    api_reqinfo_release(&ri);
    return d;
}

struct env {
    struct store *store;
    struct api_authz *az;
};

static struct env env_new(const char *modes)
{
    struct env e = {0};
    struct strbuf why = STRBUF_INIT;

    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &e.store), 0);
    e.az = api_authz_new(e.store);
    assert_int_equal(api_authz_set_modes(e.az, modes, &why), 0);
    assert_int_equal(api_authz_bootstrap(e.az, "2026-01-01T00:00:00Z", uid), 0);
    strbuf_release(&why);
    return e;
}

static void env_free(struct env *e)
{
    api_authz_free(e->az);
    store_close(e->store);
}

static void put(struct env *e, const char *plural, const char *ns, const char *name,
                const char *text)
{
    char key[256];

    (void)snprintf(key, sizeof(key), "/rbac.authorization.k8s.io/%s/%s/%s", plural, ns, name);
    assert_int_equal(store_create(e->store, key, text, strlen(text), NULL), 0);
    api_authz_note_write(e->az, "rbac.authorization.k8s.io", plural);
}

static const char *const masters[] = {"system:masters", NULL};
static const char *const nodes[] = {"system:nodes", NULL};
static const struct api_user admin = {.name = "admin", .uid = "", .groups = masters};
static const struct api_user alice = {.name = "alice", .uid = ""};
static const struct api_user node = {.name = "system:node:n1", .uid = "", .groups = nodes};

static void test_default_chain(void **state)
{
    struct api_authz *az = api_authz_new(NULL);
    (void)state;

    /* Node,AlwaysAllow: everyone but a node may do everything */
    assert_int_equal(decide(az, &alice, "delete", "pods", "default"), API_AUTHZ_DECISION_ALLOW);
    assert_int_equal(decide(az, &node, "delete", "configmaps", "default"), API_AUTHZ_DECISION_DENY);
    assert_int_equal(decide(az, &node, "update", "pods", "default"),
                     API_AUTHZ_DECISION_ALLOW_CHECK_OBJECTS);
    assert_int_equal(decide(az, &node, "get", "secrets", "default"), API_AUTHZ_DECISION_ALLOW);
    api_authz_free(az);
}

static void test_rbac_chain(void **state)
{
    struct env e = env_new("Node,RBAC");
    struct strbuf why = STRBUF_INIT;
    (void)state;

    assert_int_equal(decide(e.az, &admin, "delete", "pods", "default"), API_AUTHZ_DECISION_ALLOW);
    assert_int_equal(decide(e.az, &alice, "list", "pods", "default"),
                     API_AUTHZ_DECISION_NO_OPINION);
    /* the node rule is decisive for nodes: RBAC cannot widen it */
    put(&e, "clusterrolebindings", "", "nodes-admin",
        "{\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"nodes-admin\"},\"roleRef\":{"
        "\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":"
        "\"cluster-admin\"},\"subjects\":[{\"kind\":\"Group\",\"apiGroup\":"
        "\"rbac.authorization.k8s.io\",\"name\":\"system:nodes\"}]}");
    assert_int_equal(decide(e.az, &node, "delete", "configmaps", "default"),
                     API_AUTHZ_DECISION_DENY);
    /* a binding written is seen by the next decision */
    put(&e, "rolebindings", "default", "alice-view",
        "{\"kind\":\"RoleBinding\",\"metadata\":{\"namespace\":\"default\",\"name\":"
        "\"alice-view\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
        "\"ClusterRole\",\"name\":\"view\"},\"subjects\":[{\"kind\":\"User\",\"apiGroup\":"
        "\"rbac.authorization.k8s.io\",\"name\":\"alice\"}]}");
    {
        struct api_reqinfo ri;
        ri_res(&ri, "list", "", "pods", "default", "");
        assert_int_equal(api_authz_decide(e.az, &alice, &ri, &why), API_AUTHZ_DECISION_ALLOW);
        assert_string_equal(why.buf, "RBAC: allowed by RoleBinding \"alice-view/default\" of "
                                     "ClusterRole \"view\" to User \"alice\"");
        api_reqinfo_release(&ri);
    }
    assert_int_equal(decide(e.az, &alice, "list", "secrets", "default"),
                     API_AUTHZ_DECISION_NO_OPINION);
    assert_int_equal(decide(e.az, &alice, "list", "pods", "kube-system"),
                     API_AUTHZ_DECISION_NO_OPINION);
    /* a new ClusterRole labelled for view widens view at once (aggregation on write) */
    put(&e, "clusterroles", "", "view-nodemetrics",
        "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"view-nodemetrics\",\"labels\":{"
        "\"rbac.authorization.k8s.io/aggregate-to-view\":\"true\"}},\"rules\":[{\"verbs\":"
        "[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"secrets\"]}]}");
    assert_int_equal(decide(e.az, &alice, "get", "secrets", "default"), API_AUTHZ_DECISION_ALLOW);
    strbuf_release(&why);
    env_free(&e);
}

static void test_always(void **state)
{
    struct env e = env_new("AlwaysDeny");
    (void)state;

    assert_int_equal(decide(e.az, &alice, "get", "pods", "default"), API_AUTHZ_DECISION_DENY);
    assert_int_equal(decide(e.az, &admin, "get", "pods", "default"), API_AUTHZ_DECISION_ALLOW);
    env_free(&e);
}

static void test_rules(void **state)
{
    struct api_authz *az = api_authz_new(NULL);
    cJSON *rr = cJSON_CreateArray(), *nr = cJSON_CreateArray();
    (void)state;

    assert_false(api_authz_rules(az, &alice, "default", rr, nr));
    assert_int_equal(cJSON_GetArraySize(rr), 1); /* AlwaysAllow: * on * */
    assert_int_equal(cJSON_GetArraySize(nr), 1);
    cJSON_Delete(rr);
    cJSON_Delete(nr);
    rr = cJSON_CreateArray();
    nr = cJSON_CreateArray();
    assert_true(api_authz_rules(az, &node, "default", rr, nr)); /* incomplete */
    cJSON_Delete(rr);
    cJSON_Delete(nr);
    api_authz_free(az);
}

static const struct api_resource *resource(const char *plural, bool namespaced)
{
    static struct api_resource r;
    r = (struct api_resource){.group = "rbac.authorization.k8s.io",
                              .version = "v1",
                              .plural = plural,
                              .namespaced = namespaced};
    return &r;
}

static void test_admit(void **state)
{
    struct env e = env_new("Node,RBAC");
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT;
    cJSON *old, *obj;
    (void)state;

    /* alice may write roles and rolebindings in team-a and read pods there */
    put(&e, "roles", "team-a", "rbac-writer",
        "{\"kind\":\"Role\",\"metadata\":{\"namespace\":\"team-a\",\"name\":\"rbac-writer\"},"
        "\"rules\":[{\"verbs\":[\"create\",\"update\"],\"apiGroups\":[\"rbac.authorization.k8s."
        "io\"],"
        "\"resources\":[\"roles\",\"rolebindings\"]},{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],"
        "\"resources\":[\"pods\"]}]}");
    put(&e, "rolebindings", "team-a", "alice",
        "{\"kind\":\"RoleBinding\",\"metadata\":{\"namespace\":\"team-a\",\"name\":\"alice\"},"
        "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":"
        "\"rbac-writer\"},\"subjects\":[{\"kind\":\"User\",\"apiGroup\":"
        "\"rbac.authorization.k8s.io\",\"name\":\"alice\"}]}");

    /* a role within her rights */
    obj = parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"r\"},\"rules\":[{\"verbs\":"
                "[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]}");
    assert_int_equal(api_authz_admit(e.az, &alice, resource("roles", true), NULL, obj, &errs, &why),
                     0);
    cJSON_Delete(obj);
    /* beyond them */
    obj = parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"r\"},\"rules\":[{\"verbs\":"
                "[\"get\",\"delete\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]}");
    assert_int_equal(api_authz_admit(e.az, &alice, resource("roles", true), NULL, obj, &errs, &why),
                     -EPERM);
    assert_string_equal(why.buf, "user \"alice\" (groups=[\"system:authenticated\"]) is "
                                 "attempting to grant RBAC permissions not currently held:\n"
                                 "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}");
    strbuf_reset(&why);
    /* the admin (system:masters) may grant anything */
    assert_int_equal(api_authz_admit(e.az, &admin, resource("roles", true), NULL, obj, &errs, &why),
                     0);
    cJSON_Delete(obj);
    /* binding edit (more than she holds) is refused; binding a missing role too */
    obj = parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"b\"},\"roleRef\":{\"kind\":"
                "\"ClusterRole\",\"name\":\"edit\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
                "\"bob\"},{\"kind\":\"ServiceAccount\",\"name\":\"sa\"}]}");
    assert_int_equal(
        api_authz_admit(e.az, &alice, resource("rolebindings", true), NULL, obj, &errs, &why),
        -EPERM);
    /* defaults applied on the way */
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "roleRef"), "apiGroup")),
        "rbac.authorization.k8s.io");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "subjects"), 0), "apiGroup")),
        "rbac.authorization.k8s.io");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "subjects"), 1), "apiGroup")),
        "");
    strbuf_reset(&why);
    cJSON_Delete(obj);
    obj = parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"b\"},\"roleRef\":{\"kind\":"
                "\"Role\",\"name\":\"missing\"},\"subjects\":[]}");
    assert_int_equal(
        api_authz_admit(e.az, &alice, resource("rolebindings", true), NULL, obj, &errs, &why),
        -EPERM);
    assert_string_equal(why.buf, "roles.rbac.authorization.k8s.io \"missing\" not found");
    strbuf_reset(&why);
    cJSON_Delete(obj);
    /* with `bind` on edit she may */
    put(&e, "roles", "team-a", "binder",
        "{\"kind\":\"Role\",\"metadata\":{\"namespace\":\"team-a\",\"name\":\"binder\"},"
        "\"rules\":[{\"verbs\":[\"bind\"],\"apiGroups\":[\"rbac.authorization.k8s.io\"],"
        "\"resources\":[\"clusterroles\"],\"resourceNames\":[\"edit\"]}]}");
    put(&e, "rolebindings", "team-a", "alice-binds",
        "{\"kind\":\"RoleBinding\",\"metadata\":{\"namespace\":\"team-a\",\"name\":\"alice-binds\"}"
        ","
        "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":"
        "\"binder\"},\"subjects\":[{\"kind\":\"User\",\"apiGroup\":"
        "\"rbac.authorization.k8s.io\",\"name\":\"alice\"}]}");
    obj = parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"b\"},\"roleRef\":{\"kind\":"
                "\"ClusterRole\",\"name\":\"edit\"},\"subjects\":[]}");
    assert_int_equal(
        api_authz_admit(e.az, &alice, resource("rolebindings", true), NULL, obj, &errs, &why), 0);
    /* roleRef cannot change */
    old = cJSON_Duplicate(obj, true);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(obj, "roleRef"), "name",
                              cJSON_CreateString("view"));
    assert_int_equal(
        api_authz_admit(e.az, &admin, resource("rolebindings", true), old, obj, &errs, &why),
        -EINVAL);
    assert_int_equal(field_errors_count(&errs), 1);
    cJSON_Delete(old);
    cJSON_Delete(obj);
    /* other resources pass untouched */
    assert_int_equal(api_authz_admit(e.az, &alice,
                                     &(struct api_resource){.group = "", .plural = "pods"}, NULL,
                                     NULL, &errs, &why),
                     0);
    field_errors_release(&errs);
    strbuf_release(&why);
    env_free(&e);
}

static void test_user_info(void **state)
{
    static const char *const g[] = {"dev", NULL};
    static const char *const extra[] = {"scopes", "a", "scopes", "b", NULL};
    const struct api_user u = {.name = "alice", .uid = "1", .groups = g, .extra = extra};
    cJSON *ui = api_authz_user_info(&u);
    struct strbuf out = STRBUF_INIT;
    (void)state;

    assert_int_equal(json_print(ui, &out), 0);
    assert_string_equal(out.buf, "{\"username\":\"alice\",\"uid\":\"1\",\"groups\":[\"dev\","
                                 "\"system:authenticated\"],\"extra\":{\"scopes\":[\"a\",\"b\"]}}");
    strbuf_release(&out);
    cJSON_Delete(ui);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes),      cmocka_unit_test(test_default_chain),
        cmocka_unit_test(test_rbac_chain), cmocka_unit_test(test_always),
        cmocka_unit_test(test_rules),      cmocka_unit_test(test_admit),
        cmocka_unit_test(test_user_info),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
