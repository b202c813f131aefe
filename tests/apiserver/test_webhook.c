/*
 * Tests for apiserver/webhook: rule matching (operations, groups, versions, the resource and
 * subresource forms, scope), namespace and object selectors, the reinvocation decision, the
 * AdmissionReview built and the answers accepted or refused (VerifyAdmissionResponse), the
 * denial wording (ToStatusErr), and the dispatcher end to end against an in-process HTTPS
 * webhook: configuration order, JSONPatch, IfNeeded reinvocation, failurePolicy, reloads after
 * a configuration write. The configuration kinds' validation is checked here too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/pki.h"
#include "apiserver/store_memory.h"
#include "apiserver/webhook.c" /* the static matching, review and answer functions */
#include "http/server.h"
#include "http/tls.h"
#include "testutil.h"

#define expect_json(obj, key, want) assert_json_eq(cJSON_GetObjectItem((obj), (key)), (want))
#define expect_tree(t, want)        assert_json_eq((t), (want))

/* Fails unless one error of errs renders with want in it. */
static void expect_error(const struct field_errors *errs, const char *want)
{
    for (size_t i = 0; i < errs->n; i++) {
        struct strbuf sb = STRBUF_INIT;
        bool hit;
        field_error_format(&errs->v[i], &sb);
        hit = strstr(sb.buf, want) != NULL;
        strbuf_release(&sb);
        if (hit)
            return;
    }
    fail_with_errors(errs, "no error contains \"%s\"", want);
}

/* ---- matching ---- */

static struct webhook_attrs attrs(enum webhook_op op, const char *group, const char *resource,
                                  const char *sub, const char *ns)
{
    return (struct webhook_attrs){.op = op,
                                  .group = group,
                                  .version = "v1",
                                  .resource = resource,
                                  .subresource = sub,
                                  .kind_group = group,
                                  .kind_version = "v1",
                                  .kind = "Pod",
                                  .ns = ns,
                                  .name = "x"};
}

static void test_rule_matching(void **state)
{
    static const struct {
        const char *rule;
        enum webhook_op op;
        const char *group, *resource, *sub, *ns;
        bool want;
    } cases[] = {
        {"{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
         "\"resources\":[\"pods\"]}",
         WEBHOOK_CREATE, "", "pods", "", "ns", true},
        {"{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
         "\"resources\":[\"pods\"]}",
         WEBHOOK_UPDATE, "", "pods", "", "ns", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
         "\"resources\":[\"pods\"]}",
         WEBHOOK_DELETE, "", "pods", "", "ns", true},
        /* "pods" is the main resource only. */
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
         "\"resources\":[\"pods\"]}",
         WEBHOOK_UPDATE, "", "pods", "status", "ns", false},
        {"{\"operations\":[\"UPDATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
         "\"resources\":[\"pods/status\"]}",
         WEBHOOK_UPDATE, "", "pods", "status", "ns", true},
        {"{\"operations\":[\"UPDATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
         "\"resources\":[\"pods/status\"]}",
         WEBHOOK_UPDATE, "", "pods", "", "ns", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"pods/*\"]}",
         WEBHOOK_CREATE, "", "pods", "binding", "ns", true},
        /* rules.go: a wildcard subresource also matches the pod itself (no subresource). */
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"pods/*\"]}",
         WEBHOOK_CREATE, "", "pods", "", "ns", true},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"pods/*\"]}",
         WEBHOOK_CREATE, "", "nodes", "", "", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*/status\"]}",
         WEBHOOK_UPDATE, "", "nodes", "status", "", true},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*/status\"]}",
         WEBHOOK_UPDATE, "", "nodes", "", "", false},
        /* "*" is every resource, no subresource. */
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"]}",
         WEBHOOK_CREATE, "apps", "deployments", "", "ns", true},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"]}",
         WEBHOOK_CREATE, "", "pods", "eviction", "ns", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*/*\"]}",
         WEBHOOK_CREATE, "", "pods", "eviction", "ns", true},
        /* Groups and versions. */
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
         "\"resources\":[\"*\"]}",
         WEBHOOK_CREATE, "apps", "deployments", "", "ns", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"v2\"],"
         "\"resources\":[\"*\"]}",
         WEBHOOK_CREATE, "", "pods", "", "ns", false},
        /* Scope: a Namespace is cluster-scoped. */
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"],\"scope\":\"Namespaced\"}",
         WEBHOOK_CREATE, "", "pods", "", "ns", true},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"],\"scope\":\"Namespaced\"}",
         WEBHOOK_CREATE, "", "nodes", "", "", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"],\"scope\":\"Namespaced\"}",
         WEBHOOK_UPDATE, "", "namespaces", "", "ns", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"],\"scope\":\"Cluster\"}",
         WEBHOOK_UPDATE, "", "namespaces", "", "ns", true},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"],\"scope\":\"Cluster\"}",
         WEBHOOK_CREATE, "", "pods", "", "ns", false},
        {"{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
         "\"resources\":[\"*\"],\"scope\":\"*\"}",
         WEBHOOK_CREATE, "", "nodes", "", "", true},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *rule = J(cases[i].rule);
        struct webhook_attrs a =
            attrs(cases[i].op, cases[i].group, cases[i].resource, cases[i].sub, cases[i].ns);
        bool got = rule_matches(rule, &a);
        cJSON_Delete(rule);
        if (got != cases[i].want)
            fail_msg("case %zu: %s on %s/%s: got %d", i, cases[i].rule, cases[i].resource,
                     cases[i].sub, got);
    }
}

static void test_exempt(void **state)
{
    struct webhook_attrs a =
        attrs(WEBHOOK_CREATE, GROUP, "validatingwebhookconfigurations", "", "");
    (void)state;

    assert_true(exempt(&a));
    a.resource = "mutatingwebhookconfigurations";
    assert_true(exempt(&a));
    a.group = "";
    a.resource = "pods";
    assert_false(exempt(&a));
}

static struct label_selector *sel(const char *json)
{
    cJSON *j = J(json);
    struct label_selector *s = NULL;

    assert_int_equal(label_selector_from_json(j, &s, NULL), 0);
    cJSON_Delete(j);
    return s;
}

static void test_selectors(void **state)
{
    struct label_selector *on = sel("{\"matchLabels\":{\"wh\":\"on\"}}"), *all = sel("{}");
    cJSON *yes = J("{\"wh\":\"on\"}"), *no = J("{\"wh\":\"off\"}");
    cJSON *obj_yes = J("{\"metadata\":{\"labels\":{\"wh\":\"on\"}}}");
    cJSON *obj_no = J("{\"metadata\":{\"name\":\"x\"}}");
    struct webhook_attrs pod = attrs(WEBHOOK_CREATE, "", "pods", "", "ns");
    struct webhook_attrs node = attrs(WEBHOOK_CREATE, "", "nodes", "", "");
    struct webhook_attrs nsobj = attrs(WEBHOOK_CREATE, "", "namespaces", "", "");
    (void)state;

    /* namespaceSelector: the namespace's labels; cluster-scoped objects always match. */
    assert_true(namespace_selected(on, &pod, yes));
    assert_false(namespace_selected(on, &pod, no));
    assert_false(namespace_selected(on, &pod, NULL));
    assert_true(namespace_selected(all, &pod, NULL));
    assert_true(namespace_selected(on, &node, NULL));
    assert_false(namespace_selected(on, &nsobj, no)); /* a Namespace is judged by its labels */
    assert_true(namespace_selected(on, &nsobj, yes));
    /* objectSelector: the new or the old object. */
    assert_true(object_selected(on, obj_yes, NULL));
    assert_false(object_selected(on, obj_no, NULL));
    assert_true(object_selected(on, obj_no, obj_yes));
    assert_true(object_selected(on, NULL, obj_yes)); /* a delete */
    assert_false(object_selected(on, NULL, NULL));
    assert_true(object_selected(all, NULL, NULL));
    label_selector_free(on);
    label_selector_free(all);
    cJSON_Delete(yes);
    cJSON_Delete(no);
    cJSON_Delete(obj_yes);
    cJSON_Delete(obj_no);
}

static void test_reinvoke_set(void **state)
{
    static const struct {
        bool if_needed[4], called[4], changed[4];
        bool want[4];
    } cases[] = {
        /* Nothing changed: nothing runs again. */
        {{1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}},
        /* The last one changed it: every IfNeeded one before it runs again. */
        {{1, 0, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 1}, {1, 0, 1, 0}},
        /* Its own change does not call a webhook back. */
        {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 0, 0, 0}, {0, 0, 0, 0}},
        /* A change in the middle: only those before it. */
        {{1, 1, 1, 1}, {1, 1, 1, 1}, {0, 1, 0, 0}, {1, 0, 0, 0}},
        /* Not called (did not match): not called again. */
        {{1, 1, 1, 1}, {0, 1, 1, 1}, {0, 0, 1, 0}, {0, 1, 0, 0}},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        bool out[4];
        reinvoke_set(4, cases[i].if_needed, cases[i].called, cases[i].changed, out);
        for (size_t k = 0; k < 4; k++)
            if (out[k] != cases[i].want[k])
                fail_msg("case %zu: webhook %zu: got %d", i, k, out[k]);
    }
}

/* ---- the review ---- */

static void test_review_build(void **state)
{
    static const char *const groups[] = {"system:masters", NULL};
    struct api_user u = {.name = "admin", .uid = "u-1", .groups = groups};
    cJSON *obj = J("{\"metadata\":{\"name\":\"p\"}}"), *old = J("{\"metadata\":{\"name\":\"o\"}}");
    struct webhook_attrs a = attrs(WEBHOOK_UPDATE, "", "pods", "status", "ns");
    cJSON *r, *req;
    (void)state;

    a.user = &u;
    a.old = old;
    a.dry_run = true;
    r = review_build(&a, obj, "uid-1");
    req = cJSON_GetObjectItem(r, "request");
    expect_json(r, "apiVersion", "\"admission.k8s.io/v1\"");
    expect_json(r, "kind", "\"AdmissionReview\"");
    expect_json(req, "uid", "\"uid-1\"");
    expect_json(req, "kind", "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"}");
    expect_json(req, "resource", "{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"}");
    expect_json(req, "requestResource",
                "{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"}");
    expect_json(req, "subResource", "\"status\"");
    expect_json(req, "requestSubResource", "\"status\"");
    expect_json(req, "name", "\"x\"");
    expect_json(req, "namespace", "\"ns\"");
    expect_json(req, "operation", "\"UPDATE\"");
    expect_json(req, "userInfo",
                "{\"username\":\"admin\",\"uid\":\"u-1\",\"groups\":[\"system:masters\","
                "\"system:authenticated\"]}");
    expect_json(req, "object", "{\"metadata\":{\"name\":\"p\"}}");
    expect_json(req, "oldObject", "{\"metadata\":{\"name\":\"o\"}}");
    expect_json(req, "dryRun", "true");
    expect_json(req, "options",
                "{\"kind\":\"UpdateOptions\",\"apiVersion\":\"meta.k8s.io/v1\","
                "\"dryRun\":[\"All\"]}");
    cJSON_Delete(r);

    /* A create without subresource, by nobody in particular: no subResource, no oldObject. */
    a = attrs(WEBHOOK_CREATE, "", "pods", "", "ns");
    r = review_build(&a, obj, "uid-2");
    req = cJSON_GetObjectItem(r, "request");
    assert_null(cJSON_GetObjectItem(req, "subResource"));
    expect_json(req, "oldObject", "null");
    expect_json(req, "dryRun", "false");
    expect_json(req, "userInfo",
                "{\"username\":\"system:anonymous\",\"groups\":[\"system:unauthenticated\"]}");
    expect_json(req, "options", "{\"kind\":\"CreateOptions\",\"apiVersion\":\"meta.k8s.io/v1\"}");
    cJSON_Delete(r);
    cJSON_Delete(obj);
    cJSON_Delete(old);
}

/* base64 of [{"op":"add","path":"/metadata/labels","value":{"a":"b"}}] */
#define PATCH_B64 "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscyIsInZhbHVlIjp7ImEiOiJiIn19XQ=="

static void test_answer_parse(void **state)
{
#define ANS(resp)                                                                                  \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":" resp "}"
    static const struct {
        const char *body;
        bool mutating;
        const char *err; /* NULL: accepted */
    } cases[] = {
        {ANS("{\"uid\":\"u\",\"allowed\":true}"), false, NULL},
        {ANS("{\"uid\":\"u\",\"allowed\":false,\"status\":{\"code\":403}}"), false, NULL},
        {ANS("{\"uid\":\"v\",\"allowed\":true}"), false,
         "received invalid webhook response: expected response.uid=\"u\", got \"v\""},
        {"{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
         "\"response\":{\"uid\":\"u\",\"allowed\":true}}",
         false,
         "received invalid webhook response: expected webhook response of "
         "admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, "
         "Kind=AdmissionReview"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", false,
         "received invalid webhook response: webhook response was absent"},
        {"not json", false, "failed to call webhook: the answer is not a JSON object"},
        {ANS("{\"uid\":\"u\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"" PATCH_B64
             "\"}"),
         true, NULL},
        {ANS("{\"uid\":\"u\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"" PATCH_B64
             "\"}"),
         false,
         "received invalid webhook response: validating webhook may not return response.patch "
         "or response.patchType"},
        {ANS("{\"uid\":\"u\",\"allowed\":true,\"patch\":\"" PATCH_B64 "\"}"), true,
         "received invalid webhook response: webhook returned response.patch but not "
         "response.patchType"},
        {ANS("{\"uid\":\"u\",\"allowed\":true,\"patchType\":\"JSONPatch\"}"), true,
         "received invalid webhook response: webhook returned response.patchType but not "
         "response.patch"},
        {ANS("{\"uid\":\"u\",\"allowed\":true,\"patchType\":\"MergePatch\",\"patch\":\"" PATCH_B64
             "\"}"),
         true,
         "received invalid webhook response: expected patchType \"JSONPatch\", got MergePatch"},
        {ANS("{\"uid\":\"u\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"!!\"}"), true,
         "received invalid webhook response: response.patch is not the base64 encoding of a JSON "
         "patch"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct answer an;
        struct strbuf why = STRBUF_INIT;
        int r =
            answer_parse(cases[i].body, strlen(cases[i].body), "u", cases[i].mutating, &an, &why);
        if (!cases[i].err && r != 0)
            fail_msg("case %zu refused: %s", i, why.buf);
        if (cases[i].err && (r == 0 || strncmp(why.buf, cases[i].err, strlen(cases[i].err))))
            fail_msg("case %zu: got %d \"%s\", want \"%s\"", i, r, why.buf, cases[i].err);
        answer_release(&an);
        strbuf_release(&why);
    }
    {
        /* What an accepted answer carries. */
        const char *b = ANS("{\"uid\":\"u\",\"allowed\":true,\"patchType\":\"JSONPatch\","
                            "\"patch\":\"" PATCH_B64 "\",\"warnings\":[\"w1\",\"\",\"w\\\"2\"]}");
        struct answer an;
        struct strbuf why = STRBUF_INIT, w = STRBUF_INIT;
        assert_int_equal(answer_parse(b, strlen(b), "u", true, &an, &why), 0);
        assert_true(an.allowed);
        expect_tree(an.patch, "[{\"op\":\"add\",\"path\":\"/metadata/labels\","
                              "\"value\":{\"a\":\"b\"}}]");
        add_warnings(an.warnings, &w);
        assert_string_equal(w.buf, "299 - \"w1\"\n299 - \"w\\\"2\"\n");
        answer_release(&an);
        strbuf_release(&why);
        strbuf_release(&w);
    }
#undef ANS
}

static void test_denial_status(void **state)
{
    static const struct {
        const char *result; /* response.status, or NULL */
        int code;
        const char *reason, *message;
    } cases[] = {
        {"{\"code\":403,\"reason\":\"Forbidden\",\"message\":\"no\"}", 403, "Forbidden",
         "admission webhook \"w.x.y\" denied the request: no"},
        {"{\"message\":\"no\"}", 400, NULL, "admission webhook \"w.x.y\" denied the request: no"},
        {"{\"code\":200,\"message\":\"no\"}", 400, NULL,
         "admission webhook \"w.x.y\" denied the request: no"},
        {"{\"code\":422,\"reason\":\"Invalid\"}", 422, "Invalid",
         "admission webhook \"w.x.y\" denied the request: Invalid"},
        {NULL, 400, NULL, "admission webhook \"w.x.y\" denied the request without explanation"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *res = cases[i].result ? J(cases[i].result) : NULL;
        cJSON *st = denial_status("w.x.y", res);
        assert_int_equal(cJSON_GetObjectItem(st, "code")->valueint, cases[i].code);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(st, "status")), "Failure");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(st, "message")),
                            cases[i].message);
        if (cases[i].reason)
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(st, "reason")),
                                cases[i].reason);
        cJSON_Delete(st);
        cJSON_Delete(res);
    }
}

static void test_url_host_port(void **state)
{
    struct strbuf h = STRBUF_INIT;
    int port;
    (void)state;

    url_host_port("https://127.0.0.1:8443/x", &h, &port);
    assert_string_equal(h.buf, "127.0.0.1");
    assert_int_equal(port, 8443);
    strbuf_reset(&h);
    url_host_port("https://hook.example.com/x", &h, &port);
    assert_string_equal(h.buf, "hook.example.com");
    assert_int_equal(port, 443);
    strbuf_reset(&h);
    url_host_port("https://[::1]:9443", &h, &port);
    assert_string_equal(h.buf, "::1");
    assert_int_equal(port, 9443);
    strbuf_release(&h);
}

/* ---- the configuration kinds ---- */

static void expect_invalid(const char *webhook, const char *want)
{
    struct strbuf doc = STRBUF_INIT;
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *o;

    strbuf_addf(&doc,
                "{\"apiVersion\":\"admissionregistration.k8s.io/v1\","
                "\"kind\":\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":\"c\"},"
                "\"webhooks\":[%s]}",
                webhook);
    o = J(doc.buf);
    (void)api_object_validate(o, 0, NULL, &errs);
    expect_error(&errs, want);
    field_errors_release(&errs);
    cJSON_Delete(o);
    strbuf_release(&doc);
}

#define OK_HOOK_PREFIX                                                                             \
    "\"name\":\"a.b.c\",\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"],"

static void test_configuration_validation(void **state)
{
    (void)state;
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],"
                   "\"apiVersions\":[\"v1\"],\"resources\":[\"pods/*\",\"pods/status\"]}]}",
                   "webhooks[0].rules[0].resources[1]: Invalid value: \"pods/status\": if "
                   "'pods/*' is present, must not specify pods/status");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],"
                   "\"apiVersions\":[\"v1\"],\"resources\":[\"*/status\",\"pods/status\"]}]}",
                   "webhooks[0].rules[0].resources[1]: Invalid value: \"pods/status\": if "
                   "'*/status' is present, must not specify pods/status");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],"
                   "\"apiVersions\":[\"v1\"],\"resources\":[\"*\",\"pods\"]}]}",
                   "if '*' is present, must not specify other resources without subresources");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"rules\":[{\"operations\":[\"PATCH\"],\"apiGroups\":[\"\"],"
                   "\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"]}]}",
                   "webhooks[0].rules[0].operations[0]: Unsupported value: \"PATCH\"");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[],"
                   "\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"],\"scope\":\"Everywhere\"}]}",
                   "webhooks[0].rules[0].apiGroups: Required value");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],"
                   "\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"],\"scope\":\"Everywhere\"}]}",
                   "webhooks[0].rules[0].scope: Unsupported value: \"Everywhere\"");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://u@h/x\"}}",
                   "webhooks[0].clientConfig.url: Invalid value: \"https://u@h/x\": user "
                   "information is not permitted in the URL");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x#f\"}}",
                   "fragments are not permitted in the URL");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"service\":{\"namespace\":\"n\","
                   "\"name\":\"s\",\"port\":0,\"path\":\"x\"}}}",
                   "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"service\":{\"namespace\":\"n\","
                   "\"name\":\"s\",\"path\":\"x\"}}}",
                   "webhooks[0].clientConfig.service.path: Invalid value: \"x\": must start with "
                   "a '/'");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\",\"caBundle\":"
                   "\"%%%\"}}",
                   "webhooks[0].clientConfig.caBundle: Invalid value");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"failurePolicy\":\"Sometimes\"}",
                   "webhooks[0].failurePolicy: Unsupported value: \"Sometimes\"");
    expect_invalid("{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
                   "\"reinvocationPolicy\":\"Always\"}",
                   "webhooks[0].reinvocationPolicy: Unsupported value: \"Always\"");
    expect_invalid(
        "{" OK_HOOK_PREFIX "\"clientConfig\":{\"url\":\"https://h/x\"},"
        "\"objectSelector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}}",
        "webhooks[0].objectSelector.matchExpressions[0].values");
    expect_invalid("{\"name\":\"a.b.c\",\"sideEffects\":\"None\",\"admissionReviewVersions\":"
                   "[\"v1\",\"v1\"],\"clientConfig\":{\"url\":\"https://h/x\"}}",
                   "webhooks[0].admissionReviewVersions[1]: Duplicate value: \"v1\"");
}

static void test_configuration_defaults(void **state)
{
    cJSON *o = J("{\"apiVersion\":\"admissionregistration.k8s.io/v1\","
                 "\"kind\":\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":\"c\"},"
                 "\"webhooks\":[{" OK_HOOK_PREFIX "\"clientConfig\":{\"service\":{\"namespace\":"
                 "\"n\",\"name\":\"s\"}},\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":"
                 "[\"\"],\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"]}]}]}");
    struct field_errors errs = FIELD_ERRORS_INIT;
    const struct api_kind *k = NULL;
    const cJSON *wh;
    (void)state;

    assert_int_equal(api_object_validate(o, 0, &k, &errs), 0);
    assert_non_null(k);
    assert_int_equal(api_object_default(k, o, 0), 0);
    wh = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "webhooks"), 0);
    expect_json(wh, "failurePolicy", "\"Fail\"");
    expect_json(wh, "matchPolicy", "\"Equivalent\"");
    expect_json(wh, "timeoutSeconds", "10");
    expect_json(wh, "reinvocationPolicy", "\"Never\"");
    expect_json(wh, "namespaceSelector", "{}");
    expect_json(wh, "objectSelector", "{}");
    expect_json(cJSON_GetArrayItem(cJSON_GetObjectItem(wh, "rules"), 0), "scope", "\"*\"");
    expect_json(cJSON_GetObjectItem(wh, "clientConfig"), "service",
                "{\"namespace\":\"n\",\"name\":\"s\",\"port\":443}");
    field_errors_release(&errs);
    cJSON_Delete(o);
}

/* ---- the dispatcher against a real HTTPS webhook ---- */

struct fixture {
    struct store *store;
    struct webhooks *w;
    struct http_server *srv;
    char dir[64];
    char ca_b64[8192];
    int port;
    int calls_first, calls_second;
};

/* /first sets first=<number of labels seen>; /second sets second=yes; /deny refuses. */
static void handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    struct fixture *f = ud;
    size_t len;
    const char *body = http_request_body(req, &len), *path = http_request_path(req);
    cJSON *rv = NULL, *labels;
    struct strbuf patch = STRBUF_INIT, b64 = STRBUF_INIT;
    const char *uid;
    gnutls_datum_t in, out = {NULL, 0};

    CHECK(json_parse(body, len, NULL, &rv, NULL) == 0);
    uid = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(rv, "request"), "uid"));
    labels = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(rv, "request"), "object"),
                            "metadata"),
        "labels");
    if (!labels && strcmp(path, "/deny")) {
        /* Labels first, so both webhooks below can add theirs. */
        strbuf_addstr(&patch, "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{}},");
    } else {
        strbuf_addch(&patch, '[');
    }
    if (!strcmp(path, "/first")) {
        f->calls_first++;
        strbuf_addf(&patch,
                    "{\"op\":\"add\",\"path\":\"/metadata/labels/first\",\"value\":\"%d\"}]",
                    cJSON_GetArraySize(labels));
    } else if (!strcmp(path, "/second")) {
        f->calls_second++;
        strbuf_addstr(&patch,
                      "{\"op\":\"add\",\"path\":\"/metadata/labels/second\",\"value\":\"yes\"}]");
    } else {
        strbuf_reset(&patch);
    }
    if (patch.len) {
        in = (gnutls_datum_t){(unsigned char *)patch.buf, (unsigned)patch.len};
        CHECK(gnutls_base64_encode2(&in, &out) == 0);
        strbuf_add(&b64, out.data, out.size);
        gnutls_free(out.data);
    }
    strbuf_addf(&resp->body,
                "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                "\"response\":{\"uid\":\"%s\",\"allowed\":%s",
                uid, strcmp(path, "/deny") ? "true" : "false");
    if (b64.len)
        strbuf_addf(&resp->body, ",\"patchType\":\"JSONPatch\",\"patch\":\"%s\"", b64.buf);
    strbuf_addstr(&resp->body, "}}");
    resp->status = 200;
    cJSON_Delete(rv);
    strbuf_release(&patch);
    strbuf_release(&b64);
}

static int fixture_setup(void **state)
{
    static const char *const names[] = {"whsvc.default.svc", NULL};
    struct fixture *f = xcalloc(1, sizeof(*f));
    struct tls_pem ca = {0}, serving = {0};
    struct http_server_opts o = {.host = "127.0.0.1"};
    gnutls_datum_t in, out = {NULL, 0};

    (void)snprintf(f->dir, sizeof(f->dir), "%s", "/tmp/koord-test-webhook-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(apiserver_pki_serving(f->dir, "wh", names, &ca, &serving), 0);
    in = (gnutls_datum_t){(unsigned char *)ca.cert, (unsigned)strlen(ca.cert)};
    assert_int_equal(gnutls_base64_encode2(&in, &out), 0);
    (void)snprintf(f->ca_b64, sizeof(f->ca_b64), "%.*s", (int)out.size, out.data);
    gnutls_free(out.data);
    o.cert_pem = serving.cert;
    o.key_pem = serving.key;
    assert_int_equal(http_server_start(&o, handle, f, &f->srv), 0);
    f->port = http_server_port(f->srv);
    tls_pem_release(&ca);
    tls_pem_release(&serving);
    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &f->store), 0);
    assert_int_equal(webhooks_new(f->store, &f->w), 0);
    *state = f;
    return 0;
}

static int fixture_teardown(void **state)
{
    struct fixture *f = *state;
    struct strbuf p = STRBUF_INIT;
    static const char *const files[] = {"wh.crt", "wh.key", "wh-ca.crt", "wh-ca.key", "wh-ca.srl"};

    webhooks_free(f->w);
    http_server_stop(f->srv);
    store_close(f->store);
    for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s", f->dir, files[i]);
        (void)unlink(p.buf);
    }
    (void)rmdir(f->dir);
    strbuf_release(&p);
    free(f);
    return 0;
}

/* Stores a mutating (or validating) configuration name with webhooks hooks[] = {name, path,
 * extra JSON members} and tells the dispatcher. */
static void put_config(struct fixture *f, bool mutating, const char *name,
                       const char *const hooks[][3], size_t n)
{
    struct strbuf key = STRBUF_INIT, v = STRBUF_INIT;

    strbuf_addf(&key, "%s/%s", mutating ? MUTATING_KEY : VALIDATING_KEY, name);
    strbuf_addf(&v, "{\"metadata\":{\"name\":\"%s\"},\"webhooks\":[", name);
    for (size_t i = 0; i < n; i++)
        strbuf_addf(&v,
                    "%s{\"name\":\"%s\",\"clientConfig\":{\"url\":\"https://127.0.0.1:%d%s\","
                    "\"caBundle\":\"%s\"},\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":"
                    "[\"\"],\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"]}],\"sideEffects\":"
                    "\"None\",\"timeoutSeconds\":5%s%s}",
                    i ? "," : "", hooks[i][0],
                    hooks[i][2] && strstr(hooks[i][2], "down") ? 1 : f->port, hooks[i][1],
                    f->ca_b64, hooks[i][2] ? "," : "", hooks[i][2] ? hooks[i][2] : "");
    strbuf_addstr(&v, "]}");
    assert_int_equal(store_create(f->store, key.buf, v.buf, v.len, NULL), 0);
    webhooks_note_write(f->w, GROUP,
                        mutating ? "mutatingwebhookconfigurations"
                                 : "validatingwebhookconfigurations");
    strbuf_release(&key);
    strbuf_release(&v);
}

static void test_dispatch_reinvocation(void **state)
{
    struct fixture *f = *state;
    static const char *const first[][3] = {
        {"first.koord.test", "/first", "\"reinvocationPolicy\":\"IfNeeded\""}};
    static const char *const second[][3] = {{"second.koord.test", "/second", NULL}};
    struct webhook_attrs a = attrs(WEBHOOK_CREATE, "", "pods", "", "ns");
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;
    cJSON *obj = J("{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"}}");

    assert_false(webhooks_wanted(f->w, &a)); /* nothing configured */
    /* Stored in the opposite order: "a-..." still runs before "b-...". */
    put_config(f, true, "b-second", second, 1);
    put_config(f, true, "a-first", first, 1);
    assert_true(webhooks_wanted(f->w, &a));
    assert_int_equal(webhooks_mutate(f->w, &a, &obj, &out), 0);
    /* first saw no label, second added one, first ran again and saw two. */
    expect_json(cJSON_GetObjectItem(obj, "metadata"), "labels",
                "{\"first\":\"2\",\"second\":\"yes\"}");
    assert_int_equal(f->calls_first, 2);
    assert_int_equal(f->calls_second, 1);
    webhook_outcome_release(&out);
    cJSON_Delete(obj);
}

static void test_dispatch_never_reinvoked(void **state)
{
    struct fixture *f = *state;
    static const char *const first[][3] = {{"first.koord.test", "/first", NULL}};
    static const char *const second[][3] = {{"second.koord.test", "/second", NULL}};
    struct webhook_attrs a = attrs(WEBHOOK_CREATE, "", "pods", "", "ns");
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;
    cJSON *obj = J("{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"}}");

    put_config(f, true, "a-first", first, 1);
    put_config(f, true, "b-second", second, 1);
    assert_int_equal(webhooks_mutate(f->w, &a, &obj, &out), 0);
    expect_json(cJSON_GetObjectItem(obj, "metadata"), "labels",
                "{\"first\":\"0\",\"second\":\"yes\"}");
    assert_int_equal(f->calls_first, 1);
    webhook_outcome_release(&out);
    cJSON_Delete(obj);
}

static void test_dispatch_failure_policy(void **state)
{
    struct fixture *f = *state;
    static const char *const hooks[][3] = {
        {"ignore.koord.test", "/allow", "\"failurePolicy\":\"Ignore\",\"down\":1"},
        {"deny.koord.test", "/deny", NULL},
    };
    static const char *const fail_hook[][3] = {{"fail.koord.test", "/allow", "\"down\":1"}};
    struct webhook_attrs a = attrs(WEBHOOK_CREATE, "", "pods", "", "ns");
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;
    cJSON *obj = J("{\"metadata\":{\"name\":\"x\"}}");
    const char *msg;

    /* The unreachable Ignore webhook is skipped; the denial comes from the next one. */
    put_config(f, false, "v", hooks, 2);
    assert_int_equal(webhooks_validate(f->w, &a, obj, &out), -EACCES);
    msg = cJSON_GetStringValue(cJSON_GetObjectItem(out.status, "message"));
    assert_string_equal(msg, "admission webhook \"deny.koord.test\" denied the request without "
                             "explanation");
    assert_int_equal(cJSON_GetObjectItem(out.status, "code")->valueint, 400);
    webhook_outcome_release(&out);
    /* Fail: 500 with kube-apiserver's words, before the denial is reached. */
    put_config(f, false, "a", fail_hook, 1);
    assert_int_equal(webhooks_validate(f->w, &a, obj, &out), -EACCES);
    msg = cJSON_GetStringValue(cJSON_GetObjectItem(out.status, "message"));
    assert_string_equal(msg,
                        "Internal error occurred: failed calling webhook \"fail.koord.test\": "
                        "failed to call webhook: Post \"https://127.0.0.1:1/allow?timeout=5s\": "
                        "dial tcp 127.0.0.1:1: connect: connection refused");
    assert_int_equal(cJSON_GetObjectItem(out.status, "code")->valueint, 500);
    webhook_outcome_release(&out);
    /* The configuration gone (and the write noted): nothing is called. */
    assert_int_equal(store_delete(f->store, VALIDATING_KEY "/a", 0, NULL, NULL), 0);
    assert_int_equal(store_delete(f->store, VALIDATING_KEY "/v", 0, NULL, NULL), 0);
    webhooks_note_write(f->w, GROUP, "validatingwebhookconfigurations");
    assert_false(webhooks_wanted(f->w, &a));
    assert_int_equal(webhooks_validate(f->w, &a, obj, &out), 0);
    webhook_outcome_release(&out);
    {
        struct strbuf m = STRBUF_INIT;
        webhooks_render_metrics(f->w, &m);
        assert_non_null(strstr(m.buf, "apiserver_admission_webhook_rejection_count{error_type="
                                      "\"calling_webhook_error\",name=\"fail.koord.test\","
                                      "operation=\"CREATE\",rejection_code=\"0\","
                                      "type=\"validating\"} 1\n"));
        assert_non_null(strstr(m.buf, "apiserver_admission_webhook_fail_open_count{name="
                                      "\"ignore.koord.test\",type=\"validating\"} 1\n"));
        strbuf_release(&m);
    }
    cJSON_Delete(obj);
}

/* sideEffects other than None/NoneOnDryRun (only storable through v1beta1) refuse dry runs. */
static void test_dispatch_dry_run_side_effects(void **state)
{
    struct fixture *f = *state;
    struct webhook_attrs a = attrs(WEBHOOK_CREATE, "", "pods", "", "ns");
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;
    struct strbuf v = STRBUF_INIT;
    cJSON *obj = J("{\"metadata\":{\"name\":\"x\"}}");

    strbuf_addf(&v,
                "{\"metadata\":{\"name\":\"s\"},\"webhooks\":[{\"name\":\"some.koord.test\","
                "\"clientConfig\":{\"url\":\"https://127.0.0.1:%d/allow\",\"caBundle\":\"%s\"},"
                "\"rules\":[{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
                "\"resources\":[\"*\"]}],\"sideEffects\":\"Some\"}]}",
                f->port, f->ca_b64);
    assert_int_equal(store_create(f->store, VALIDATING_KEY "/s", v.buf, v.len, NULL), 0);
    webhooks_note_write(f->w, GROUP, "validatingwebhookconfigurations");
    /* Not a dry run: called and allowed. */
    assert_int_equal(webhooks_validate(f->w, &a, obj, &out), 0);
    webhook_outcome_release(&out);
    a.dry_run = true;
    assert_int_equal(webhooks_validate(f->w, &a, obj, &out), -EACCES);
    assert_int_equal(cJSON_GetObjectItem(out.status, "code")->valueint, 400);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(out.status, "message")),
                        "admission webhook \"some.koord.test\" does not support dry run");
    webhook_outcome_release(&out);
    strbuf_release(&v);
    cJSON_Delete(obj);
}

/* clientConfig.service: resolved through the Service and its Endpoints, worded when it fails. */
static void test_dispatch_service(void **state)
{
    struct fixture *f = *state;
    struct webhook_attrs a = attrs(WEBHOOK_CREATE, "", "pods", "", "ns");
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;
    struct strbuf v = STRBUF_INIT;
    cJSON *obj = J("{\"metadata\":{\"name\":\"x\"}}");
    static const struct {
        const char *svc;     /* the stored Service (NULL: none) */
        const char *ep_port; /* the port name of its Endpoints (NULL: none) */
        const char *want;    /* the message after Post "...": ; NULL: reached */
    } cases[] = {
        {NULL, NULL, "service \"whsvc\" not found"},
        {"{\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":8443}]}}", NULL,
         "no service port 443 found for service \"whsvc\""},
        {"{\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":443}]}}", NULL,
         "endpoints \"whsvc\" not found"},
        {"{\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":443}]}}", "other",
         "no endpoints available for service \"whsvc\""},
        {"{\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":443}]}}", "https", NULL},
    };

    strbuf_addf(&v,
                "{\"metadata\":{\"name\":\"s\"},\"webhooks\":[{\"name\":\"svc.koord.test\","
                "\"clientConfig\":{\"service\":{\"namespace\":\"default\",\"name\":\"whsvc\","
                "\"path\":\"/deny\"},\"caBundle\":\"%s\"},\"rules\":[{\"operations\":[\"*\"],"
                "\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],\"resources\":[\"*\"]}],"
                "\"sideEffects\":\"None\",\"timeoutSeconds\":5}]}",
                f->ca_b64);
    assert_int_equal(store_create(f->store, VALIDATING_KEY "/s", v.buf, v.len, NULL), 0);
    webhooks_note_write(f->w, GROUP, "validatingwebhookconfigurations");
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct strbuf want = STRBUF_INIT, ep = STRBUF_INIT;
        const char *msg;
        (void)store_delete(f->store, "/core/services/default/whsvc", 0, NULL, NULL);
        (void)store_delete(f->store, "/core/endpoints/default/whsvc", 0, NULL, NULL);
        if (cases[i].svc)
            assert_int_equal(store_create(f->store, "/core/services/default/whsvc", cases[i].svc,
                                          strlen(cases[i].svc), NULL),
                             0);
        if (cases[i].ep_port) {
            strbuf_addf(&ep,
                        "{\"subsets\":[{\"addresses\":[{\"ip\":\"127.0.0.1\"}],\"ports\":"
                        "[{\"name\":\"%s\",\"port\":%d}]}]}",
                        cases[i].ep_port, f->port);
            assert_int_equal(
                store_create(f->store, "/core/endpoints/default/whsvc", ep.buf, ep.len, NULL), 0);
        }
        assert_int_equal(webhooks_validate(f->w, &a, obj, &out), -EACCES);
        msg = cJSON_GetStringValue(cJSON_GetObjectItem(out.status, "message"));
        if (cases[i].want)
            strbuf_addf(
                &want,
                "Internal error occurred: failed calling webhook \"svc.koord.test\": failed "
                "to call webhook: Post \"https://whsvc.default.svc:443/deny?timeout=5s\": %s",
                cases[i].want);
        else /* reached: the certificate verified for whsvc.default.svc, the webhook refused */
            strbuf_addstr(&want, "admission webhook \"svc.koord.test\" denied the request without "
                                 "explanation");
        if (strcmp(msg, want.buf))
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, msg, want.buf);
        webhook_outcome_release(&out);
        strbuf_release(&want);
        strbuf_release(&ep);
    }
    strbuf_release(&v);
    cJSON_Delete(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_matching),
        cmocka_unit_test(test_exempt),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_reinvoke_set),
        cmocka_unit_test(test_review_build),
        cmocka_unit_test(test_answer_parse),
        cmocka_unit_test(test_denial_status),
        cmocka_unit_test(test_url_host_port),
        cmocka_unit_test(test_configuration_validation),
        cmocka_unit_test(test_configuration_defaults),
        cmocka_unit_test_setup_teardown(test_dispatch_reinvocation, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_never_reinvoked, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_failure_policy, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_dry_run_side_effects, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_service, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
