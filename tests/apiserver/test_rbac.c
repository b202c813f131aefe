/*
 * Tests for apiserver/rbac: rule matching (verbs, groups, resources with subresources and
 * wildcards, resource names, non-resource URLs with prefixes), subjects (User, Group,
 * ServiceAccount with and without a namespace, system:authenticated), the bindings that apply
 * in a namespace, the reason of an allow, rule coverage as the escalation check uses it,
 * aggregation over a real memory store (admin <- edit <- view chains), and the bootstrap policy
 * never overwriting what an admin changed.
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
#include "apiserver/rbac.h"
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

/* A resource request info from "verb group resource[/sub] ns name" (use - for empty). */
static void ri_res(struct api_reqinfo *ri, const char *verb, const char *group, const char *res,
                   const char *ns, const char *name)
{
    const char *slash = strchr(res, '/');

    *ri = (struct api_reqinfo){
        .is_resource = true,
        .verb = xstrdup(verb),
        .path = xstrdup(""),
        .api_prefix = xstrdup(*group ? "apis" : "api"),
        .group = xstrdup(group),
        .version = xstrdup("v1"),
        .namespace = xstrdup(ns),
        .resource = slash ? xstrndup(res, (size_t)(slash - res)) : xstrdup(res),
        .subresource = xstrdup(slash ? slash + 1 : ""),
        .name = xstrdup(name),
    };
}

static void ri_path(struct api_reqinfo *ri, const char *verb, const char *path)
{
    *ri = (struct api_reqinfo){.verb = xstrdup(verb),
                               .path = xstrdup(path),
                               .api_prefix = xstrdup(""),
                               .group = xstrdup(""),
                               .version = xstrdup(""),
                               .namespace = xstrdup(""),
                               .resource = xstrdup(""),
                               .subresource = xstrdup(""),
                               .name = xstrdup("")};
}

static void test_rule_allows(void **state)
{
    static const struct {
        const char *rule;
        const char *verb, *group, *res, *name;
        bool want;
    } rows[] = {
        {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}", "get", "", "pods",
         "", true},
        {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}", "list", "", "pods",
         "", false},
        {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}", "get", "apps",
         "pods", "", false},
        /* a subresource needs its own entry, or "*" or "*\/sub" */
        {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}", "get", "",
         "pods/status", "", false},
        {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods/status\"]}", "get", "",
         "pods/status", "", true},
        {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"*/status\"]}", "get", "",
         "nodes/status", "", true},
        {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"*/status\"]}", "get", "",
         "nodes", "", false},
        {"{\"verbs\":[\"*\"],\"apiGroups\":[\"*\"],\"resources\":[\"*\"]}", "delete", "apps",
         "deployments/scale", "x", true},
        /* resourceNames restrict to named objects: a list (no name) is not allowed */
        {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
         "\"resourceNames\":[\"cfg\"]}",
         "get", "", "configmaps", "cfg", true},
        {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
         "\"resourceNames\":[\"cfg\"]}",
         "get", "", "configmaps", "other", false},
        {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
         "\"resourceNames\":[\"cfg\"]}",
         "list", "", "configmaps", "", false},
        /* a non-resource rule never matches resources */
        {"{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"*\"]}", "get", "", "pods", "", false},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        cJSON *rule = parse(rows[i].rule);
        struct api_reqinfo ri;
        ri_res(&ri, rows[i].verb, rows[i].group, rows[i].res, "default", rows[i].name);
        if (rbac_rule_allows(rule, &ri) != rows[i].want)
            fail_msg("row %zu: %s %s %s", i, rows[i].verb, rows[i].res, rows[i].rule);
        api_reqinfo_release(&ri);
        cJSON_Delete(rule);
    }
}

static void test_rule_urls(void **state)
{
    cJSON *rule = parse("{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/apis/*\",\"/healthz\"]}");
    static const struct {
        const char *verb, *path;
        bool want;
    } rows[] = {
        {"get", "/healthz", true}, {"get", "/healthz/ping", false}, {"get", "/apis/x/v1", true},
        {"get", "/apis", false},   {"post", "/healthz", false},     {"get", "/api", false},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct api_reqinfo ri;
        ri_path(&ri, rows[i].verb, rows[i].path);
        if (rbac_rule_allows(rule, &ri) != rows[i].want)
            fail_msg("row %zu: %s %s", i, rows[i].verb, rows[i].path);
        api_reqinfo_release(&ri);
    }
    cJSON_Delete(rule);
}

/* A snapshot of objects given as JSON texts. */
static struct rbac_snapshot *snap(const char *const *objs)
{
    struct rbac_snapshot *s = rbac_snapshot_new();

    for (; *objs; objs++)
        rbac_snapshot_add(s, parse(*objs));
    rbac_snapshot_seal(s);
    return s;
}

#define ROLE(ns, name, rules)                                                                      \
    "{\"kind\":\"Role\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\"},"            \
    "\"rules\":" rules "}"
#define CROLE(name, rules)                                                                         \
    "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"" name "\"},\"rules\":" rules "}"
#define RB(ns, name, kind, role, subjects)                                                         \
    "{\"kind\":\"RoleBinding\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\"},"     \
    "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"" kind                     \
    "\",\"name\":\"" role "\"},\"subjects\":" subjects "}"
#define CRB(name, role, subjects)                                                                  \
    "{\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"" name "\"},\"roleRef\":{"          \
    "\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"" role "\"},"  \
    "\"subjects\":" subjects "}"
#define READ_PODS "[{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]"
#define ALL_CM    "[{\"verbs\":[\"*\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"]}]"

static bool allowed(const struct rbac_snapshot *s, const struct api_user *u, const char *verb,
                    const char *res, const char *ns, struct strbuf *reason)
{
    struct api_reqinfo ri;
    bool ok;

    ri_res(&ri, verb, "", res, ns, "");
    ok = rbac_authorize(s, u, &ri, reason);
    api_reqinfo_release(&ri);
    return ok;
}

static void test_authorize(void **state)
{
    static const char *const objs[] = {
        ROLE("team-a", "reader", READ_PODS),
        ROLE("team-b", "reader", ALL_CM),
        CROLE("cm-admin", ALL_CM),
        /* a binding to a role of another namespace's name resolves in its own namespace */
        RB("team-a", "alice-reads", "Role", "reader",
           "[{\"kind\":\"User\",\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"alice\"}]"),
        RB("team-b", "devs-cm", "ClusterRole", "cm-admin",
           "[{\"kind\":\"Group\",\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"dev\"}]"),
        RB("team-b", "robot", "Role", "reader", "[{\"kind\":\"ServiceAccount\",\"name\":\"bot\"}]"),
        CRB("everyone-reads", "cm-admin",
            "[{\"kind\":\"ServiceAccount\",\"name\":\"ci\",\"namespace\":\"tools\"}]"),
        /* a binding to a missing role grants nothing */
        CRB("dangling", "nope",
            "[{\"kind\":\"Group\",\"apiGroup\":\"rbac.authorization.k8s.io\","
            "\"name\":\"system:authenticated\"}]"),
        NULL,
    };
    static const char *const dev[] = {"dev", NULL};
    struct rbac_snapshot *s = snap(objs);
    const struct api_user alice = {.name = "alice", .uid = ""};
    const struct api_user bob = {.name = "bob", .uid = "", .groups = dev};
    const struct api_user bot = {.name = "system:serviceaccount:team-b:bot", .uid = ""};
    const struct api_user bot_a = {.name = "system:serviceaccount:team-a:bot", .uid = ""};
    const struct api_user ci = {.name = "system:serviceaccount:tools:ci", .uid = ""};
    struct strbuf reason = STRBUF_INIT;
    (void)state;

    assert_true(allowed(s, &alice, "list", "pods", "team-a", &reason));
    assert_string_equal(reason.buf, "RBAC: allowed by RoleBinding \"alice-reads/team-a\" of Role "
                                    "\"reader\" to User \"alice\"");
    assert_false(allowed(s, &alice, "delete", "pods", "team-a", NULL));
    assert_false(allowed(s, &alice, "list", "pods", "team-b", NULL));
    assert_false(allowed(s, &alice, "list", "pods", "", NULL)); /* all namespaces */
    assert_true(allowed(s, &bob, "delete", "configmaps", "team-b", NULL));
    assert_false(allowed(s, &bob, "delete", "configmaps", "team-a", NULL));
    assert_true(allowed(s, &bot, "create", "configmaps", "team-b", NULL));
    assert_false(allowed(s, &bot_a, "create", "configmaps", "team-b", NULL));
    strbuf_reset(&reason);
    assert_true(allowed(s, &ci, "get", "configmaps", "anywhere", &reason));
    assert_string_equal(reason.buf, "RBAC: allowed by ClusterRoleBinding \"everyone-reads\" of "
                                    "ClusterRole \"cm-admin\" to User "
                                    "\"system:serviceaccount:tools:ci\"");
    assert_false(allowed(s, &ci, "get", "pods", "anywhere", NULL));
    assert_false(rbac_authorize(NULL, &alice, NULL, NULL));
    {
        cJSON *rules = cJSON_CreateArray();
        rbac_rules_for(s, &bob, "team-b", rules);
        assert_int_equal(cJSON_GetArraySize(rules), 1);
        cJSON_Delete(rules);
        rules = cJSON_CreateArray();
        rbac_rules_for(s, &bob, "", rules);
        assert_int_equal(cJSON_GetArraySize(rules), 0);
        cJSON_Delete(rules);
    }
    strbuf_release(&reason);
    (void)rbac_snapshot_unref(s);
}

static void test_groups(void **state)
{
    static const char *const g[] = {"a", "b", NULL};
    const struct api_user u = {.name = "u", .groups = g};
    const struct api_user anon = {.name = "system:anonymous"};
    (void)state;

    assert_true(rbac_user_in_group(&u, "b"));
    assert_false(rbac_user_in_group(&u, "c"));
    assert_true(rbac_user_in_group(&u, "system:authenticated"));
    assert_false(rbac_user_in_group(&anon, "system:authenticated"));
    {
        /* a SubjectAccessReview's user has only the groups it lists */
        const struct api_user exact = {.name = "u", .groups = g, .groups_exact = true};
        assert_false(rbac_user_in_group(&exact, "system:authenticated"));
        assert_true(rbac_user_in_group(&exact, "a"));
    }
}

static void test_cover(void **state)
{
    static const struct {
        const char *owner, *rules;
        bool want;
        const char *missing;
    } rows[] = {
        {READ_PODS, "[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]", true,
         ""},
        {READ_PODS, "[{\"verbs\":[\"delete\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]",
         false, "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}"},
        /* a literal "*" is only covered by "*" */
        {READ_PODS, "[{\"verbs\":[\"*\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]", false,
         "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"*\"]}"},
        {"[{\"verbs\":[\"*\"],\"apiGroups\":[\"*\"],\"resources\":[\"*\"]}]",
         "[{\"verbs\":[\"*\"],\"apiGroups\":[\"apps\"],\"resources\":[\"deployments/scale\"]}]",
         true, ""},
        {"[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods/*\"]}]",
         "[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods/log\"]}]", true, ""},
        /* named objects are covered by an unrestricted rule, not the other way round */
        {READ_PODS,
         "[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
         "\"resourceNames\":[\"p\"]}]",
         true, ""},
        {"[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
         "\"resourceNames\":[\"p\"]}]",
         READ_PODS, false,
         "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}\n"
         "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"list\"]}"},
        {"[{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/metrics*\"]}]",
         "[{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/metrics/cadvisor\",\"/logs\"]}]", false,
         "{NonResourceURLs:[\"/logs\"], Verbs:[\"get\"]}"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        cJSON *o = parse(rows[i].owner), *r = parse(rows[i].rules);
        struct strbuf missing = STRBUF_INIT;
        if (rbac_rules_cover(o, r, &missing) != rows[i].want)
            fail_msg("row %zu: want %d", i, rows[i].want);
        assert_string_equal(missing.buf, rows[i].missing);
        strbuf_release(&missing);
        cJSON_Delete(o);
        cJSON_Delete(r);
    }
}

static void put(struct store *s, const char *plural, const char *name, const char *text)
{
    char key[256];

    (void)snprintf(key, sizeof(key), "/rbac.authorization.k8s.io/%s//%s", plural, name);
    assert_int_equal(store_create(s, key, text, strlen(text), NULL), 0);
}

static cJSON *get_cr(struct store *s, const char *name)
{
    struct store_item it = {0};
    char key[256];
    cJSON *o;

    (void)snprintf(key, sizeof(key), "/rbac.authorization.k8s.io/clusterroles//%s", name);
    assert_int_equal(store_get(s, key, &it), 0);
    o = parse(it.value);
    store_item_release(&it);
    return o;
}

static void uid(char u[37])
{
    static int n;
    (void)snprintf(u, 37, "00000000-0000-0000-0000-%012d", ++n);
}

static void test_aggregate(void **state)
{
    struct store *s;
    cJSON *o;
    (void)state;

    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &s), 0);
    put(s, "clusterroles", "top",
        "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"top\"},\"aggregationRule\":{"
        "\"clusterRoleSelectors\":[{\"matchLabels\":{\"to-top\":\"true\"}}]}}");
    put(s, "clusterroles", "mid",
        "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"mid\",\"labels\":{\"to-top\":"
        "\"true\"}},\"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":{\"to-mid\":"
        "\"true\"}}]}}");
    put(s, "clusterroles", "leaf",
        "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"leaf\",\"labels\":{\"to-mid\":"
        "\"true\"}},\"rules\":" READ_PODS "}");
    put(s, "clusterroles", "other",
        "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"other\",\"labels\":{\"to-top\":"
        "\"true\"}},\"rules\":" READ_PODS "}");
    /* mid takes leaf's rule, then top takes it through mid and other (once) */
    assert_true(rbac_aggregate(s) >= 2);
    o = get_cr(s, "top");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "rules")), 1);
    cJSON_Delete(o);
    o = get_cr(s, "mid");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "rules")), 1);
    cJSON_Delete(o);
    /* a fixed point: nothing more to write */
    assert_int_equal(rbac_aggregate(s), 0);
    store_close(s);
}

static void test_bootstrap(void **state)
{
    struct store *s;
    struct rbac_snapshot *snapshot;
    static const char *const masters[] = {"system:masters", NULL};
    const struct api_user admin = {.name = "admin", .groups = masters};
    const struct api_user alice = {.name = "alice"};
    struct api_reqinfo ri;
    cJSON *o;
    (void)state;

    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &s), 0);
    /* an admin's own cluster-admin stays as it is */
    put(s, "clusterroles", "cluster-admin",
        "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"cluster-admin\"},\"rules\":" READ_PODS
        "}");
    assert_int_equal(rbac_bootstrap(s, "2026-01-01T00:00:00Z", uid), 0);
    o = get_cr(s, "cluster-admin");
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "uid"));
    cJSON_Delete(o);
    /* admin aggregates edit, which aggregates view */
    o = get_cr(s, "admin");
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(o, "rules")) > 10);
    cJSON_Delete(o);
    assert_int_equal(rbac_snapshot_load(s, &snapshot), 0);
    ri_res(&ri, "list", "", "pods", "default", "");
    assert_true(rbac_authorize(snapshot, &admin, &ri, NULL)); /* cluster-admin to masters */
    assert_false(rbac_authorize(snapshot, &alice, &ri, NULL));
    api_reqinfo_release(&ri);
    ri_path(&ri, "get", "/apis/apps/v1");
    assert_true(rbac_authorize(snapshot, &alice, &ri, NULL)); /* system:discovery */
    api_reqinfo_release(&ri);
    ri_res(&ri, "create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "");
    assert_true(rbac_authorize(snapshot, &alice, &ri, NULL)); /* system:basic-user */
    api_reqinfo_release(&ri);
    (void)rbac_snapshot_unref(snapshot);
    /* a second start creates nothing */
    {
        uint64_t rev = store_revision(s);
        assert_int_equal(rbac_bootstrap(s, "2026-01-02T00:00:00Z", uid), 0);
        assert_int_equal(store_revision(s), rev);
    }
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_allows), cmocka_unit_test(test_rule_urls),
        cmocka_unit_test(test_authorize),   cmocka_unit_test(test_groups),
        cmocka_unit_test(test_cover),       cmocka_unit_test(test_aggregate),
        cmocka_unit_test(test_bootstrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
