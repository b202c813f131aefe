/*
 * Tests for apiserver/apply.c as wired into the verbs, over real HTTP and a real SQLite store:
 * server-side apply (create, re-apply, no write when nothing changes, fields a manager stops
 * applying removed), conflicts answered 409 with kube's message and FieldManagerConflict causes,
 * force taking fields over, Update entries named by fieldManager or the user agent, a client's
 * managedFields replacing or clearing the stored ones, before-first-apply, and the refusals
 * (no fieldManager, CBOR, managedFields in the configuration, kind or name mismatch, duplicate
 * list keys, force on another patch), and the cap of ten Update entries (ancient-changes). Expected
 * texts follow kube-apiserver's (fieldmanager's conflict.go, ValidatePatchOptions).
 */
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/apienv.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define CM "/api/v1/namespaces/default/configmaps/c"

/* One request with a Content-Type and User-Agent; *ret the parsed answer. */
static long call(struct env *e, const char *method, const char *path, const char *ctype,
                 const char *ua, const char *body, cJSON **ret)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, out = STRBUF_INIT, ct = STRBUF_INIT;
    struct curl_slist *hdrs;
    long code = 0;

    strbuf_addf(&ct, "Content-Type: %s", ctype);
    hdrs = curl_slist_append(NULL, ct.buf);
    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_USERAGENT, ua ? ua : "koord-test/1.0 (linux)");
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    if (body)
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (getenv("KOORD_TEST_DEBUG"))
        print_error("%s %s -> %ld %s\n", method, path, code, out.buf);
    *ret = cJSON_Parse(out.buf);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&out);
    strbuf_release(&ct);
    return code;
}

static long apply(struct env *e, const char *query, const char *yaml, cJSON **ret)
{
    struct strbuf path = STRBUF_INIT;
    long code;

    strbuf_addf(&path, "%s%s", CM, query);
    code = call(e, "PATCH", path.buf, "application/apply-patch+yaml", NULL, yaml, ret);
    strbuf_release(&path);
    return code;
}

/* The compact JSON of the value at path compared with want. */
static void expect_json(const cJSON *o, const char *path, const char *want)
{
    char *p = cJSON_PrintUnformatted(at(o, path));

    if (!p || strcmp(p, want))
        fail_msg("%s = %s, want %s", path, p ? p : "(absent)", want);
    cJSON_free(p);
}

static const char cm_v1[] = "apiVersion: v1\n"
                            "kind: ConfigMap\n"
                            "metadata:\n"
                            "  name: c\n"
                            "  labels: {app: web, tier: front}\n"
                            "data:\n"
                            "  a: \"1\"\n"
                            "  b: \"2\"\n";

static void test_apply_creates_and_updates(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;
    char rv[32];

    assert_int_equal(apply(e, "?fieldManager=mgr", cm_v1, &b), 201);
    expect_str(b, "data.b", "2");
    expect_str(b, "metadata.managedFields.0.manager", "mgr");
    expect_str(b, "metadata.managedFields.0.operation", "Apply");
    expect_str(b, "metadata.managedFields.0.apiVersion", "v1");
    expect_str(b, "metadata.managedFields.0.fieldsType", "FieldsV1");
    expect_json(b, "metadata.managedFields.0.fieldsV1",
                "{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:metadata\":{\"f:labels\":{\"f:app\":{},"
                "\"f:tier\":{}}}}");
    assert_null(at(b, "metadata.managedFields.1"));
    assert_non_null(at(b, "metadata.managedFields.0.time"));
    (void)snprintf(rv, sizeof(rv), "%s", cJSON_GetStringValue(at(b, "metadata.resourceVersion")));
    cJSON_Delete(b);

    /* The same configuration again: nothing changes, nothing is written. */
    assert_int_equal(apply(e, "?fieldManager=mgr", cm_v1, &b), 200);
    expect_str(b, "metadata.resourceVersion", rv);
    cJSON_Delete(b);

    /* Without label tier and key b, with key c: what mgr stops applying goes. */
    assert_int_equal(
        apply(e, "?fieldManager=mgr",
              "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
              "\"c\",\"labels\":{\"app\":\"web\"}},\"data\":{\"a\":\"1\",\"c\":\"3\"}}",
              &b),
        200);
    expect_json(b, "data", "{\"a\":\"1\",\"c\":\"3\"}");
    expect_json(b, "metadata.labels", "{\"app\":\"web\"}");
    expect_json(
        b, "metadata.managedFields.0.fieldsV1",
        "{\"f:data\":{\"f:a\":{},\"f:c\":{}},\"f:metadata\":{\"f:labels\":{\"f:app\":{}}}}");
    cJSON_Delete(b);
}

static void test_conflicts_and_force(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    /* Created by a plain POST: the user agent's name is its manager. */
    assert_int_equal(call(e, "POST", "/api/v1/namespaces/default/configmaps", "application/json",
                          "tool/2.1 (linux/amd64)",
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\"},\"data\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}}",
                          &b),
                     201);
    expect_str(b, "metadata.managedFields.0.manager", "tool");
    expect_str(b, "metadata.managedFields.0.operation", "Update");
    cJSON_Delete(b);

    /* One field with another value: 409, kube's message, one cause. */
    assert_int_equal(apply(e, "?fieldManager=mine",
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"c\"},\"data\":{\"a\":\"9\",\"b\":\"2\"}}",
                           &b),
                     409);
    expect_str(b, "reason", "Conflict");
    expect_str(b, "message",
               "Apply failed with 1 conflict: conflict with \"tool\" using v1: .data.a");
    expect_str(b, "details.causes.0.reason", "FieldManagerConflict");
    expect_str(b, "details.causes.0.message", "conflict with \"tool\" using v1");
    expect_str(b, "details.causes.0.field", ".data.a");
    assert_null(at(b, "details.causes.1"));
    cJSON_Delete(b);

    /* Two: the list form. */
    assert_int_equal(apply(e, "?fieldManager=mine&force=false",
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"c\"},\"data\":{\"a\":\"9\",\"c\":\"9\"}}",
                           &b),
                     409);
    expect_str(b, "message",
               "Apply failed with 2 conflicts: conflicts with \"tool\" using v1:\n- .data.a\n- "
               ".data.c");
    expect_str(b, "details.causes.1.field", ".data.c");
    cJSON_Delete(b);

    /* Forced: mine takes a; b, applied with its value, is shared; tool keeps b and c. */
    assert_int_equal(apply(e, "?fieldManager=mine&force=true",
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"c\"},\"data\":{\"a\":\"9\",\"b\":\"2\"}}",
                           &b),
                     200);
    expect_json(b, "data", "{\"a\":\"9\",\"b\":\"2\",\"c\":\"3\"}");
    expect_str(b, "metadata.managedFields.0.manager", "tool");
    expect_json(b, "metadata.managedFields.0.fieldsV1", "{\"f:data\":{\"f:b\":{},\"f:c\":{}}}");
    expect_str(b, "metadata.managedFields.1.manager", "mine");
    expect_json(b, "metadata.managedFields.1.fieldsV1", "{\"f:data\":{\"f:a\":{},\"f:b\":{}}}");
    cJSON_Delete(b);

    /* An update by another manager takes what it changes from everyone (no conflicts). */
    assert_int_equal(call(e, "PATCH", CM "?fieldManager=editor", "application/merge-patch+json",
                          NULL, "{\"data\":{\"a\":\"10\"}}", &b),
                     200);
    expect_json(b, "metadata.managedFields.1.fieldsV1", "{\"f:data\":{\"f:b\":{}}}");
    expect_str(b, "metadata.managedFields.2.manager", "editor");
    expect_str(b, "metadata.managedFields.2.operation", "Update");
    expect_json(b, "metadata.managedFields.2.fieldsV1", "{\"f:data\":{\"f:a\":{}}}");
    cJSON_Delete(b);
}

static void test_client_managed_fields(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    /* An empty list on create: no entries at all. */
    assert_int_equal(call(e, "POST", "/api/v1/namespaces/default/configmaps", "application/json",
                          NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\",\"managedFields\":[]},\"data\":{\"a\":\"1\"}}",
                          &b),
                     201);
    assert_null(at(b, "metadata.managedFields"));
    cJSON_Delete(b);

    /* Nobody owns it: what is there belongs to before-first-apply. */
    assert_int_equal(apply(e, "?fieldManager=mine",
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"c\"},\"data\":{\"a\":\"2\"}}",
                           &b),
                     409);
    expect_str(b, "details.causes.0.message", "conflict with \"before-first-apply\" using v1");
    cJSON_Delete(b);

    /* A client's entries replace the stored ones (then this update is recorded over them). */
    assert_int_equal(call(e, "PUT", CM, "application/json", "kubectl-edit/1.0",
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\",\"managedFields\":[{\"manager\":\"someone\",\"operation\":"
                          "\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
                          "\"fieldsV1\":{\"f:data\":{\"f:a\":{}}}}]},\"data\":{\"a\":\"1\","
                          "\"b\":\"2\"}}",
                          &b),
                     200);
    expect_str(b, "metadata.managedFields.0.manager", "someone");
    expect_json(b, "metadata.managedFields.0.fieldsV1", "{\"f:data\":{\"f:a\":{}}}");
    expect_str(b, "metadata.managedFields.1.manager", "kubectl-edit");
    expect_json(b, "metadata.managedFields.1.fieldsV1", "{\"f:data\":{\"f:b\":{}}}");
    cJSON_Delete(b);

    /* Malformed entries: 422, nothing written. */
    assert_int_equal(call(e, "PUT", CM, "application/json", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\",\"managedFields\":[{\"manager\":\"x\",\"operation\":\"Patch\","
                          "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{}}]},\"data\":{}}",
                          &b),
                     422);
    expect_str(b, "details.causes.0.field", "metadata.managedFields[0]");
    cJSON_Delete(b);
    assert_int_equal(call(e, "PUT", CM, "application/json", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\",\"managedFields\":[{\"manager\":\"x\",\"operation\":\"Update\","
                          "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"x:y\":{}}}]},\"data\":{}}",
                          &b),
                     422);
    cJSON_Delete(b);
    assert_int_equal(call(e, "GET", CM, "application/json", NULL, NULL, &b), 200);
    expect_json(b, "data", "{\"a\":\"1\",\"b\":\"2\"}");
    cJSON_Delete(b);

    /* An empty list on update clears them. */
    assert_int_equal(call(e, "PATCH", CM, "application/merge-patch+json", NULL,
                          "{\"metadata\":{\"managedFields\":[]}}", &b),
                     200);
    assert_null(at(b, "metadata.managedFields"));
    cJSON_Delete(b);
}

static void test_refusals(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    assert_int_equal(apply(e, "", cm_v1, &b), 422);
    expect_str(b, "message",
               "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
               "value: is required for apply patch");
    cJSON_Delete(b);
    assert_int_equal(
        call(e, "PATCH", CM "?fieldManager=m", "application/apply-patch+cbor", NULL, "\xa0", &b),
        415);
    cJSON_Delete(b);
    assert_int_equal(apply(e, "?fieldManager=m",
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"c\",\"managedFields\":[]}}",
                           &b),
                     400);
    expect_str(b, "message", "metadata.managedFields must be nil");
    cJSON_Delete(b);
    assert_int_equal(apply(e, "?fieldManager=m",
                           "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                           "\"c\"}}",
                           &b),
                     400);
    cJSON_Delete(b);
    assert_int_equal(apply(e, "?fieldManager=m",
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"other\"}}",
                           &b),
                     400);
    expect_str(b, "message",
               "the name of the object (other) does not match the name on the URL (c)");
    cJSON_Delete(b);
    assert_int_equal(apply(e, "?fieldManager=m", "a: [", &b), 400);
    cJSON_Delete(b);
    assert_int_equal(call(e, "PATCH", "/api/v1/namespaces/default/pods/p?fieldManager=m",
                          "application/apply-patch+yaml", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                          "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"},{\"name\":"
                          "\"a\",\"image\":\"y\"}]}}",
                          &b),
                     422);
    expect_str(b, "message",
               "failed to create typed patch object (/v1, Kind=Pod): "
               ".spec.containers: duplicate entries for key [name=\"a\"]");
    cJSON_Delete(b);
    /* Nothing was created by any of them. */
    assert_int_equal(call(e, "GET", CM, "application/json", NULL, NULL, &b), 404);
    cJSON_Delete(b);
    assert_int_equal(apply(e, "?fieldManager=m", cm_v1, &b), 201);
    cJSON_Delete(b);
    assert_int_equal(call(e, "PATCH", CM "?force=true", "application/merge-patch+json", NULL,
                          "{\"data\":{\"a\":\"2\"}}", &b),
                     422);
    expect_str(b, "details.causes.0.field", "force");
    cJSON_Delete(b);
}

/* Twelve writers: the oldest Update entries fold into ancient-changes, ten Update entries stay. */
static void test_update_managers_capped(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;
    const cJSON *it;
    size_t updates = 0;
    bool ancient = false;

    assert_int_equal(apply(e, "?fieldManager=owner", cm_v1, &b), 201);
    cJSON_Delete(b);
    for (int i = 0; i < 12; i++) {
        char path[128], body[64];
        (void)snprintf(path, sizeof(path), CM "?fieldManager=writer-%02d", i);
        (void)snprintf(body, sizeof(body), "{\"data\":{\"k%02d\":\"v\"}}", i);
        assert_int_equal(call(e, "PATCH", path, "application/merge-patch+json", NULL, body, &b),
                         200);
        cJSON_Delete(b);
    }
    assert_int_equal(call(e, "GET", CM, "application/json", NULL, NULL, &b), 200);
    cJSON_ArrayForEach(it, at(b, "metadata.managedFields"))
    {
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(it, "manager"));
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "operation")), "Update"))
            continue;
        updates++;
        assert_string_not_equal(m, "writer-00");
        assert_string_not_equal(m, "writer-01");
        assert_string_not_equal(m, "writer-02");
        if (!strcmp(m, "ancient-changes")) {
            /* The union of the three oldest writers' fields. */
            expect_json(it, "fieldsV1", "{\"f:data\":{\"f:k00\":{},\"f:k01\":{},\"f:k02\":{}}}");
            ancient = true;
        }
    }
    assert_int_equal(updates, 10);
    assert_true(ancient);
    expect_str(b, "metadata.managedFields.0.manager", "owner");
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_apply_creates_and_updates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflicts_and_force, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_managed_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_managers_capped, setup, teardown),
    };
    int r;

    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
