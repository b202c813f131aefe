/*
 * Tests for the protocol details of apiserver/apiserver.c that clients notice (issue 17 section
 * 6), over real HTTP and a real SQLite store, each as kube-apiserver behaves:
 *  - /version and /version/ with every field of version.Info;
 *  - /healthz, /livez, /readyz: /<endpoint>/ping, ?verbose lists, ?exclude;
 *  - a control character in the path (%00 included) is refused, never cut short;
 *  - a BOOKMARK shortly before a watch's timeoutSeconds ends;
 *  - remainingItemCount on unfiltered paged lists, limit <= 0 as no limit;
 *  - duplicate JSON keys: a Warning by default (the last value wins), an error under Strict;
 *    an unsupported fieldValidation value refused;
 *  - Table columns of ConfigMaps, Namespaces, Leases, Events and CRDs.
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
#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

/* GET path as text; the Content-Type into ctype when given. */
static long get_text(struct env *e, const char *method, const char *path, struct strbuf *out)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT;
    long code = 0;

    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    return code;
}

static void expect_text(struct env *e, const char *path, long code, const char *want)
{
    struct strbuf out = STRBUF_INIT;

    assert_int_equal(get_text(e, "GET", path, &out), code);
    if (want && strcmp(out.buf, want))
        fail_msg("GET %s: got\n%s\nwant\n%s", path, out.buf, want);
    strbuf_release(&out);
}

static void test_version_and_health(void **state)
{
    static const char *const fields[] = {"major",     "minor",        "gitVersion",
                                         "gitCommit", "gitTreeState", "buildDate",
                                         "goVersion", "compiler",     "platform"};
    struct env *e = *state;

    for (int slash = 0; slash < 2; slash++) {
        cJSON *b = NULL;
        assert_int_equal(req(e, "GET", slash ? "/version/" : "/version", NULL, NULL, &b, NULL),
                         200);
        for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
            if (!cJSON_IsString(at(b, fields[i])))
                fail_msg("/version lacks %s", fields[i]);
        expect_str(b, "major", "1");
        assert_non_null(strstr(cJSON_GetStringValue(at(b, "gitVersion")), "-koord-"));
        assert_true(*cJSON_GetStringValue(at(b, "buildDate")) != '\0');
        cJSON_Delete(b);
    }

    expect_text(e, "/healthz", 200, "ok");
    expect_text(e, "/healthz/ping", 200, "ok");
    expect_text(e, "/livez/ping", 200, "ok");
    expect_text(e, "/readyz/ping", 200, "ok");
    expect_text(e, "/livez/log", 200, "ok");
    expect_text(e, "/healthz/bogus", 404, NULL);
    expect_text(e, "/healthzz", 404, NULL);
    expect_text(e, "/healthz?verbose", 200,
                "[+]ping ok\n[+]log ok\n[+]storage ok\nhealthz check passed\n");
    expect_text(e, "/readyz?verbose=1&exclude=log", 200,
                "[+]ping ok\n[+]log excluded: ok\n[+]storage ok\nreadyz check passed\n");
    expect_text(e, "/livez?verbose&exclude=nope", 200,
                "[+]ping ok\n[+]log ok\n[+]storage ok\n"
                "warn: some health checks cannot be excluded: no matches for \"nope\"\n"
                "livez check passed\n");
}

static void test_control_characters_in_paths(void **state)
{
    struct env *e = *state;
    struct strbuf out = STRBUF_INIT;
    cJSON *b = NULL;

    assert_int_equal(req(e, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                         "{\"metadata\":{\"name\":\"a\"}}", &b, NULL),
                     201);
    cJSON_Delete(b);
    /* Neither read nor deleted as "a": refused. */
    for (const char *const *m = (const char *const[]){"GET", "DELETE", "PUT", NULL}; *m; m++) {
        assert_int_equal(get_text(e, *m, "/api/v1/namespaces/default/configmaps/a%00b", &out), 400);
        strbuf_reset(&out);
    }
    assert_int_equal(get_text(e, "GET", "/api/v1/namespaces/default/configmaps/a%01b", &out), 400);
    strbuf_reset(&out);
    assert_int_equal(get_text(e, "GET", "/api/v1/namespaces/default/configmaps/a%7f", &out), 400);
    strbuf_reset(&out);
    assert_int_equal(get_text(e, "GET", "/api/v1/namespaces/default%00/configmaps", &out), 400);
    strbuf_reset(&out);
    /* The object is untouched. */
    assert_int_equal(get_text(e, "GET", "/api/v1/namespaces/default/configmaps/a", &out), 200);
    strbuf_release(&out);
}

static void test_bookmark_before_timeout(void **state)
{
    struct env *e = *state;
    struct strbuf out = STRBUF_INIT;

    /* The idle interval is a minute: the one bookmark comes from the 3 s timeout (at ~1 s). */
    assert_int_equal(get_text(e, "GET",
                              "/api/v1/namespaces/default/configmaps?watch=1&"
                              "allowWatchBookmarks=true&timeoutSeconds=3",
                              &out),
                     200);
    if (!strstr(out.buf, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\""))
        fail_msg("no bookmark before the timeout: %s", out.buf);
    strbuf_reset(&out);
    /* Without allowWatchBookmarks, none. */
    assert_int_equal(
        get_text(e, "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=3", &out),
        200);
    assert_null(strstr(out.buf, "BOOKMARK"));
    strbuf_release(&out);
}

static void test_paging_and_limits(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;
    char path[512];

    for (int i = 0; i < 5; i++) {
        char body[128];
        (void)snprintf(body, sizeof(body),
                       "{\"metadata\":{\"name\":\"c%d\",\"labels\":{\"i\":\"%d\"}}}", i, i % 2);
        assert_int_equal(
            req(e, "POST", "/api/v1/namespaces/default/configmaps", NULL, body, &b, NULL), 201);
        cJSON_Delete(b);
    }
    assert_int_equal(
        req(e, "GET", "/api/v1/namespaces/default/configmaps?limit=2", NULL, NULL, &b, NULL), 200);
    assert_int_equal(cJSON_GetArraySize(at(b, "items")), 2);
    assert_int_equal(at(b, "metadata.remainingItemCount")->valueint, 3);
    (void)snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?limit=2&continue=%s",
                   cJSON_GetStringValue(at(b, "metadata.continue")));
    cJSON_Delete(b);
    assert_int_equal(req(e, "GET", path, NULL, NULL, &b, NULL), 200);
    assert_int_equal(at(b, "metadata.remainingItemCount")->valueint, 1);
    cJSON_Delete(b);
    /* A filtered list cannot know: no remainingItemCount. */
    assert_int_equal(req(e, "GET",
                         "/api/v1/namespaces/default/configmaps?limit=1&labelSelector=i%3D0", NULL,
                         NULL, &b, NULL),
                     200);
    assert_non_null(at(b, "metadata.continue"));
    assert_null(at(b, "metadata.remainingItemCount"));
    cJSON_Delete(b);
    /* limit 0 or less: no limit. */
    for (const char *const *l = (const char *const[]){"0", "-1", NULL}; *l; l++) {
        (void)snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?limit=%s", *l);
        assert_int_equal(req(e, "GET", path, NULL, NULL, &b, NULL), 200);
        assert_int_equal(cJSON_GetArraySize(at(b, "items")), 5);
        assert_null(at(b, "metadata.continue"));
        assert_null(at(b, "metadata.remainingItemCount"));
        cJSON_Delete(b);
    }
}

static void test_field_validation(void **state)
{
    struct env *e = *state;
    struct strbuf warn = STRBUF_INIT;
    cJSON *b = NULL;
    const char *dup = "{\"metadata\":{\"name\":\"d1\",\"name\":\"d2\"},"
                      "\"data\":{\"k\":\"1\",\"k\":\"2\"}}";

    /* Warn (the default): accepted with the last values, one Warning per repeated key. */
    assert_int_equal(req(e, "POST", "/api/v1/namespaces/default/configmaps", NULL, dup, &b, &warn),
                     201);
    expect_str(b, "metadata.name", "d2");
    expect_str(b, "data.k", "2");
    cJSON_Delete(b);
    if (!strstr(warn.buf, "duplicate field \\\"metadata.name\\\"") ||
        !strstr(warn.buf, "duplicate field \\\"data.k\\\""))
        fail_msg("warnings: %s", warn.buf);
    strbuf_reset(&warn);
    /* Ignore: silence. */
    assert_int_equal(req(e, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Ignore",
                         NULL, "{\"metadata\":{\"name\":\"d3\",\"name\":\"d3\"}}", &b, &warn),
                     201);
    cJSON_Delete(b);
    assert_int_equal(warn.len, 0);
    /* Strict: 400 strict decoding error. */
    assert_int_equal(req(e, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
                         NULL, "{\"metadata\":{\"name\":\"d4\",\"name\":\"d4\"}}", &b, NULL),
                     400);
    expect_str(b, "message", "strict decoding error: duplicate field \"metadata.name\"");
    cJSON_Delete(b);
    /* An unknown fieldValidation value is refused (ValidateFieldValidation: 422). */
    assert_int_equal(req(e, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Bogus",
                         NULL, "{\"metadata\":{\"name\":\"d5\"}}", &b, NULL),
                     422);
    expect_str(b, "message",
               "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: "
               "\"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
    cJSON_Delete(b);
    assert_int_equal(
        req(e, "GET", "/api/v1/namespaces/default/configmaps/d5", NULL, NULL, &b, NULL), 404);
    cJSON_Delete(b);
    strbuf_release(&warn);
}

#define TABLE "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

/* The header names and the first row's cells of a Table, "A|B|C" and "x|y|z". */
static void table_text(const cJSON *t, struct strbuf *cols, struct strbuf *cells)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, at(t, "columnDefinitions"))
    {
        strbuf_addf(cols, "%s%s%s", cols->len ? "|" : "", cJSON_GetStringValue(at(c, "name")),
                    cJSON_GetNumberValue(at(c, "priority")) > 0 ? "*" : "");
    }
    cJSON_ArrayForEach(c, at(t, "rows.0.cells"))
    {
        char *v = cJSON_IsString(c) ? NULL : cJSON_PrintUnformatted(c);
        strbuf_addf(cells, "%s%s", cells->len ? "|" : "", v ? v : c->valuestring);
        cJSON_free(v);
    }
}

static void expect_table(struct env *e, const char *path, const char *cols, const char *cells)
{
    struct strbuf c = STRBUF_INIT, r = STRBUF_INIT;
    cJSON *b = NULL;

    assert_int_equal(req(e, "GET", path, TABLE, NULL, &b, NULL), 200);
    expect_str(b, "kind", "Table");
    table_text(b, &c, &r);
    if (strcmp(c.buf, cols) || (cells && strcmp(r.buf, cells)))
        fail_msg("%s: columns %s cells %s; want %s / %s", path, c.buf, r.buf, cols,
                 cells ? cells : "-");
    cJSON_Delete(b);
    strbuf_release(&c);
    strbuf_release(&r);
}

static void test_builtin_tables(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    assert_int_equal(req(e, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                         "{\"metadata\":{\"name\":\"cm\"},\"data\":{\"a\":\"1\",\"b\":\"2\"},"
                         "\"binaryData\":{\"c\":\"AA==\"}}",
                         &b, NULL),
                     201);
    cJSON_Delete(b);
    expect_table(e, "/api/v1/namespaces/default/configmaps/cm", "Name|Data|Age", "cm|3|0s");
    expect_table(e, "/api/v1/namespaces/default", "Name|Status|Age", NULL);

    assert_int_equal(req(e, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", NULL,
                         "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":\"me\"}}", &b,
                         NULL),
                     201);
    cJSON_Delete(b);
    expect_table(e, "/apis/coordination.k8s.io/v1/namespaces/default/leases/l", "Name|Holder|Age",
                 "l|me|0s");

    assert_int_equal(
        req(e, "POST", "/api/v1/namespaces/default/events", NULL,
            "{\"metadata\":{\"name\":\"ev\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\","
            "\"namespace\":\"default\",\"fieldPath\":\"spec.containers{c}\"},\"reason\":\"Pulled\","
            "\"message\":\"  pulled image \\n\",\"type\":\"Normal\",\"source\":{\"component\":"
            "\"kubelet\",\"host\":\"n1\"}}",
            &b, NULL),
        201);
    cJSON_Delete(b);
    /* No timestamps: <unknown> ages; no count: 1. */
    expect_table(e, "/api/v1/namespaces/default/events/ev",
                 "Last Seen|Type|Reason|Object|Subobject*|Source*|Message|First Seen*|Count*|Name*",
                 "<unknown>|Normal|Pulled|pod/p|spec.containers{c}|kubelet, n1|pulled image|"
                 "<unknown>|1|ev");

    /* CRDs: the default table, creation time as RFC 3339 text. */
    assert_int_equal(
        req(e, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", NULL,
            "{\"metadata\":{\"name\":\"bars.example.com\"},\"spec\":{\"group\":\"example.com\","
            "\"scope\":\"Cluster\",\"names\":{\"plural\":\"bars\",\"kind\":\"Bar\"},"
            "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":"
            "{\"openAPIV3Schema\":{\"type\":\"object\"}}}]}}",
            &b, NULL),
        201);
    {
        struct strbuf want = STRBUF_INIT;
        strbuf_addf(&want, "bars.example.com|%s",
                    cJSON_GetStringValue(at(b, "metadata.creationTimestamp")));
        expect_table(e, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                     "Name|Created At", want.buf);
        strbuf_release(&want);
    }
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_version_and_health, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_characters_in_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bookmark_before_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paging_and_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_field_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builtin_tables, setup, teardown),
    };
    int r;

    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
