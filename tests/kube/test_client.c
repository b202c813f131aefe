/*
 * Tests for kube/client: Status decoding and the errno table (unit), then the REST calls
 * against a real koord API server over TLS with the client certificate from the kubeconfig it
 * wrote: create/get/list (paging, selectors)/update (409 on a stale resourceVersion)/
 * patch (merge, JSON, strategic)/delete, typed calls, errors as the server reports them, a
 * transport failure, the client-side rate limit, requests from several threads at once, and
 * writes whose answer the caller does not read asking for the metadata only, and a rotated
 * token file read again after the 401 its old token gets.
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

#include "apiserver/tokens.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kubetest.h"
#include "testutil.h"

static void test_status_decode(void **state)
{
    static const struct {
        int code;
        const char *reason;
        int want;
    } table[] = {
        {400, "BadRequest", -EINVAL},
        {401, "Unauthorized", -EACCES},
        {403, "Forbidden", -EACCES},
        {404, "NotFound", -ENOENT},
        {405, "MethodNotAllowed", -EOPNOTSUPP},
        {406, "NotAcceptable", -EPROTO},
        {409, "AlreadyExists", -EEXIST},
        {409, "Conflict", -ESTALE},
        {410, "Expired", -ERANGE},
        {413, "RequestEntityTooLarge", -E2BIG},
        {415, "UnsupportedMediaType", -EPROTO},
        {422, "Invalid", -EINVAL},
        {429, "TooManyRequests", -EAGAIN},
        {500, "InternalError", -EIO},
        {503, "ServiceUnavailable", -EAGAIN},
        {504, "Timeout", -ETIMEDOUT},
        {502, "", -EIO},
        {418, "", -EPROTO},
    };
    struct kube_status st;
    struct strbuf body = STRBUF_INIT;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
        strbuf_reset(&body);
        strbuf_addf(&body,
                    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                    "\"status\":\"Failure\",\"message\":\"m%zu\",\"reason\":\"%s\","
                    "\"details\":{\"retryAfterSeconds\":3},\"code\":%d}",
                    i, table[i].reason, table[i].code);
        assert_int_equal(kube_status_decode(table[i].code, body.buf, body.len, &st), table[i].want);
        assert_int_equal(st.code, table[i].code);
        assert_string_equal(st.reason, table[i].reason);
        assert_int_equal(st.retry_after_s, 3);
        assert_int_equal(strncmp(st.message, "m", 1), 0);
    }
    /* Not a Status: mapped by the code, the body is the message. */
    assert_int_equal(kube_status_decode(404, "page not found", 14, &st), -ENOENT);
    assert_string_equal(st.reason, "");
    assert_string_equal(st.message, "page not found");
    assert_int_equal(kube_status_decode(409, NULL, 0, &st), -ESTALE);
    assert_int_equal(kube_status_decode(200, "{}", 2, &st), 0);
    assert_int_equal(kube_status_decode(500, "{\"kind\":\"Status\"", 16, NULL), -EIO);
    assert_true(kube_status_is_expired(-ERANGE, NULL));
    st.code = 200;
    (void)snprintf(st.reason, sizeof(st.reason), "Gone");
    assert_true(kube_status_is_expired(-EIO, &st));
    strbuf_release(&body);
}

static void test_paths(void **state)
{
    struct strbuf p = STRBUF_INIT;

    (void)state;
    kube_path(&kube_res_pods, "ns", "p", "status", &p);
    assert_string_equal(p.buf, "/api/v1/namespaces/ns/pods/p/status");
    kube_path(&kube_res_pods, NULL, NULL, NULL, &p);
    assert_string_equal(p.buf, "/api/v1/pods");
    kube_path(&kube_res_nodes, "ignored", "n1", NULL, &p);
    assert_string_equal(p.buf, "/api/v1/nodes/n1");
    kube_path(&kube_res_leases, "kube-system", "l", NULL, &p);
    assert_string_equal(p.buf, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
    kube_path(&kube_res_nodeslos, NULL, "n1", NULL, &p);
    assert_string_equal(p.buf, "/apis/slo.koordinator.sh/v1alpha1/nodeslos/n1");
    strbuf_release(&p);
}

struct env {
    struct kt_server *srv;
    struct kube_client *c;
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
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

static const char *str(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_crud(void **state)
{
    struct env *e = *state;
    struct kube_status st;
    cJSON *cm = kt_configmap("default", "a", "1"), *got = NULL, *patch;
    char *rv;

    assert_int_equal(kube_create(e->c, &kube_res_configmaps, "default", cm, &got, &st), 0);
    assert_string_equal(str(got, "data", "v"), "1");
    rv = xstrdup(str(got, "metadata", "resourceVersion"));
    cJSON_Delete(got);

    assert_int_equal(kube_create(e->c, &kube_res_configmaps, "default", cm, NULL, &st), -EEXIST);
    assert_int_equal(st.code, 409);
    assert_string_equal(st.reason, "AlreadyExists");
    assert_non_null(strstr(st.message, "already exists"));

    assert_int_equal(kube_get(e->c, &kube_res_configmaps, "default", "a", &got, &st), 0);
    assert_string_equal(str(got, "metadata", "resourceVersion"), rv);
    cJSON_Delete(got);
    assert_int_equal(kube_get(e->c, &kube_res_configmaps, "default", "zz", &got, &st), -ENOENT);
    assert_string_equal(st.reason, "NotFound");

    /* Update with the current resourceVersion, then again with the stale one: Conflict. */
    cJSON_AddStringToObject(cJSON_GetObjectItem(cm, "metadata"), "resourceVersion", rv);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cm, "data"), "v", cJSON_CreateString("2"));
    assert_int_equal(kube_update(e->c, &kube_res_configmaps, "default", cm, NULL, &got, &st), 0);
    assert_string_equal(str(got, "data", "v"), "2");
    cJSON_Delete(got);
    assert_int_equal(kube_update(e->c, &kube_res_configmaps, "default", cm, NULL, NULL, &st),
                     -ESTALE);
    assert_string_equal(st.reason, "Conflict");

    /* The three patch types. */
    patch = J("{\"data\":{\"m\":\"merge\"}}");
    assert_int_equal(kube_patch(e->c, &kube_res_configmaps, "default", "a", NULL, KUBE_PATCH_MERGE,
                                patch, &got, &st),
                     0);
    assert_string_equal(str(got, "data", "m"), "merge");
    cJSON_Delete(got);
    cJSON_Delete(patch);
    patch = J("[{\"op\":\"replace\",\"path\":\"/data/v\",\"value\":\"json\"}]");
    assert_int_equal(kube_patch(e->c, &kube_res_configmaps, "default", "a", NULL, KUBE_PATCH_JSON,
                                patch, &got, &st),
                     0);
    assert_string_equal(str(got, "data", "v"), "json");
    cJSON_Delete(got);
    cJSON_Delete(patch);
    patch = J("{\"metadata\":{\"labels\":{\"k\":\"smp\"}}}");
    assert_int_equal(kube_patch(e->c, &kube_res_configmaps, "default", "a", NULL,
                                KUBE_PATCH_STRATEGIC, patch, &got, &st),
                     0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(got, "metadata"), "labels"),
                            "k")
            ->valuestring,
        "smp");
    cJSON_Delete(got);
    cJSON_Delete(patch);
    patch = J("[{\"op\":\"test\",\"path\":\"/data/v\",\"value\":\"no\"}]");
    assert_int_equal(kube_patch(e->c, &kube_res_configmaps, "default", "a", NULL, KUBE_PATCH_JSON,
                                patch, NULL, &st),
                     -EINVAL);
    assert_int_equal(st.code, 422);
    cJSON_Delete(patch);

    assert_int_equal(kube_delete(e->c, &kube_res_configmaps, "default", "a", &st), 0);
    assert_int_equal(kube_delete(e->c, &kube_res_configmaps, "default", "a", &st), -ENOENT);
    free(rv);
    cJSON_Delete(cm);
}

static void test_list_pages_and_selectors(void **state)
{
    struct env *e = *state;
    struct kube_list_opts lo = {.limit = 2};
    struct kube_status st;
    char name[16];
    cJSON *list = NULL;
    size_t total = 0;
    char *cont = NULL;

    for (int i = 0; i < 5; i++) {
        cJSON *cm;
        (void)snprintf(name, sizeof(name), "cm-%d", i);
        cm = kt_configmap("kube-public", name, "x");
        if (i % 2)
            cJSON_AddItemToObject(cJSON_GetObjectItem(cm, "metadata"), "labels",
                                  J("{\"odd\":\"yes\"}"));
        assert_int_equal(kube_create(e->c, &kube_res_configmaps, NULL, cm, NULL, &st), -ENOENT);
        assert_int_equal(kube_create(e->c, &kube_res_configmaps, "kube-public", cm, NULL, &st), 0);
        cJSON_Delete(cm);
    }
    do {
        lo.continue_token = cont;
        assert_int_equal(kube_list(e->c, &kube_res_configmaps, "kube-public", &lo, &list, &st), 0);
        total += (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(list, "items"));
        free(cont);
        cont = str(list, "metadata", "continue") && *str(list, "metadata", "continue")
                   ? xstrdup(str(list, "metadata", "continue"))
                   : NULL;
        cJSON_Delete(list);
    } while (cont);
    assert_int_equal(total, 5);

    lo = (struct kube_list_opts){.label_selector = "odd=yes"};
    assert_int_equal(kube_list(e->c, &kube_res_configmaps, "kube-public", &lo, &list, &st), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 2);
    cJSON_Delete(list);
    lo = (struct kube_list_opts){.field_selector = "metadata.name=cm-3"};
    assert_int_equal(kube_list(e->c, &kube_res_configmaps, "kube-public", &lo, &list, &st), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 1);
    cJSON_Delete(list);
}

static void test_typed_calls(void **state)
{
    struct env *e = *state;
    struct kube_status st;
    cJSON *node = J("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}");
    cJSON *bad = J("{\"apiVersion\":\"v9\",\"kind\":\"Nope\",\"metadata\":{\"name\":\"x\"}}");
    cJSON *got = NULL;

    assert_int_equal(kube_create_object(e->c, node, &got, &st), 0);
    assert_string_equal(str(got, "kind", NULL), "Node");
    cJSON_AddItemToObject(cJSON_GetObjectItem(got, "metadata"), "labels", J("{\"a\":\"b\"}"));
    cJSON_Delete(node);
    node = got;
    assert_int_equal(kube_update_object(e->c, node, &got, &st), 0);
    assert_string_equal(str(got, "metadata", "name"), "n1");
    cJSON_Delete(got);
    assert_int_equal(kube_delete_object(e->c, node, &st), 0);
    assert_int_equal(kube_get(e->c, &kube_res_nodes, NULL, "n1", NULL, &st), -ENOENT);

    assert_int_equal(kube_create_object(e->c, bad, NULL, &st), -EINVAL);
    assert_non_null(strstr(st.message, "unknown kind \"Nope\""));
    /* Invalid object: 422 with the server's message. */
    cJSON_Delete(bad);
    bad = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"Bad_Name\","
            "\"namespace\":\"default\"}}");
    assert_int_equal(kube_create_object(e->c, bad, NULL, &st), -EINVAL);
    assert_int_equal(st.code, 422);
    assert_string_equal(st.reason, "Invalid");
    cJSON_Delete(bad);
    cJSON_Delete(node);
}

static void test_untyped_request_and_transport_errors(void **state)
{
    struct env *e = *state;
    struct kube_status st;
    struct kube_config *cfg;
    struct kube_client *c2 = NULL;
    cJSON *got = NULL;

    assert_int_equal(kube_request(e->c, "GET", "/version", NULL, NULL, &got, &st), 0);
    assert_non_null(str(got, "gitVersion", NULL));
    cJSON_Delete(got);

    /* No client certificate: the server answers 401. (A fresh client's TLS handshake has
     * taken more than the default 30 s under valgrind on a loaded 2-core machine.) */
    cfg = kube_config_new(kube_client_config(e->c)->server);
    cfg->insecure = true;
    cfg->timeout_ms = 120000;
    assert_int_equal(kube_client_new(cfg, &c2), 0);
    assert_int_equal(kube_get(c2, &kube_res_nodes, NULL, "x", NULL, &st), -EACCES);
    assert_int_equal(st.code, 401);
    kube_client_free(c2);

    /* Without trusting the server's CA, TLS verification fails. */
    cfg = kube_config_new(kube_client_config(e->c)->server);
    cfg->timeout_ms = 120000;
    assert_int_equal(kube_client_new(cfg, &c2), 0);
    assert_int_equal(kube_get(c2, &kube_res_nodes, NULL, "x", NULL, &st), -EPROTO);
    assert_int_equal(st.code, 0);
    kube_client_free(c2);

    /* Nothing listening. */
    kt_server_stop(e->srv);
    assert_int_equal(kube_get(e->c, &kube_res_nodes, NULL, "x", NULL, &st), -ECONNREFUSED);
    assert_non_null(strstr(st.message, "GET https://127.0.0.1:"));
    kt_server_start(e->srv, 0);
}

/*
 * A token read from a file (in-cluster config, kubeconfig tokenFile): when the kubelet rotates
 * it and the server stops taking the old one, the 401 makes the next request read the file
 * again at once (client-go's ResetTokenOlderThan), rather than a minute later.
 */
static void test_token_file_rotation(void **state)
{
    static const char t1[] = "tok-1,agent,1\n", t2[] = "tok-2,agent,1\n";
    struct env *e = *state;
    struct api_tokens *old = NULL, *rotated = NULL;
    struct kube_status st;
    struct kube_config *cfg;
    struct kube_client *c = NULL;
    char path[128];
    cJSON *got = NULL;
    FILE *f;

    assert_int_equal(api_tokens_parse(t1, strlen(t1), &old, NULL), 0);
    assert_int_equal(api_tokens_parse(t2, strlen(t2), &rotated, NULL), 0);
    apiserver_set_tokens(e->srv->api, old);
    (void)snprintf(path, sizeof(path), "%s/token", e->srv->dir);
    assert_non_null(f = fopen(path, "w"));
    assert_true(fputs("tok-1\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    cfg = kube_config_new(kube_client_config(e->c)->server);
    cfg->timeout_ms = 120000;
    cfg->ca_file = xstrdup(kube_client_config(e->c)->ca_file);
    cfg->token = xstrdup("tok-1");
    cfg->token_file = xstrdup(path);
    assert_int_equal(kube_client_new(cfg, &c), 0);
    assert_int_equal(kube_request(c, "GET", "/api/v1/namespaces", NULL, NULL, &got, &st), 0);
    cJSON_Delete(got);
    got = NULL;

    /* rotated: the file holds the new token, the server takes only that one */
    assert_non_null(f = fopen(path, "w"));
    assert_true(fputs("tok-2\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    apiserver_set_tokens(e->srv->api, rotated);
    assert_int_equal(kube_request(c, "GET", "/api/v1/namespaces", NULL, NULL, &got, &st), -EACCES);
    assert_int_equal(st.code, 401);
    assert_int_equal(kube_request(c, "GET", "/api/v1/namespaces", NULL, NULL, &got, &st), 0);
    cJSON_Delete(got);
    apiserver_set_tokens(e->srv->api, NULL);
    kube_client_free(c);
    (void)unlink(path);
    api_tokens_free(old);
    api_tokens_free(rotated);
}

static void test_rate_limit(void **state)
{
    struct env *e = *state;
    double t0;

    /* 20 QPS, burst 1: five requests need at least four intervals of 50 ms. */
    kube_client_set_rate_limit(e->c, 20, 1);
    t0 = kt_now();
    for (int i = 0; i < 5; i++)
        assert_int_equal(kube_request(e->c, "GET", "/version", NULL, NULL, NULL, NULL), 0);
    assert_true(kt_now() - t0 >= 0.19);
    kube_client_set_rate_limit(e->c, 0, 0);
}

static void *creator(void *arg)
{
    struct env *e = arg;
    static atomic_int seq;
    char name[32];
    intptr_t fails = 0;

    for (int i = 0; i < 3; i++) {
        cJSON *cm;
        (void)snprintf(name, sizeof(name), "t-%d", atomic_fetch_add(&seq, 1));
        cm = kt_configmap("default", name, "x");
        if (kube_create(e->c, &kube_res_configmaps, "default", cm, NULL, NULL) < 0)
            fails++;
        cJSON_Delete(cm);
    }
    return (void *)fails;
}

static void test_concurrent_requests(void **state)
{
    struct env *e = *state;
    pthread_t t[3];
    cJSON *list = NULL;
    void *fails;

    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        assert_int_equal(pthread_create(&t[i], NULL, creator, e), 0);
    for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
        assert_int_equal(pthread_join(t[i], &fails), 0);
        assert_null(fails);
    }
    assert_int_equal(kube_list(e->c, &kube_res_configmaps, "default", NULL, &list, NULL), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 9);
    cJSON_Delete(list);
}

/* A plain-HTTP front on the test server's store that notes what each request asked for and
 * how big its answer was. */
struct front {
    struct apiserver *api;
    struct http_server *http;
    pthread_mutex_t lock;
    char accept[160];
    size_t answer_len;
};

static void front_handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    struct front *f = ud;
    const char *accept = http_request_header(req, "Accept");

    apiserver_handle(req, resp, f->api);
    CHECK(pthread_mutex_lock(&f->lock) == 0);
    (void)snprintf(f->accept, sizeof(f->accept), "%s", accept ? accept : "");
    f->answer_len = resp->body.len;
    CHECK(pthread_mutex_unlock(&f->lock) == 0);
}

/* Asserts the last request's Accept and that its answer was (not) the whole object. */
static void expect_answer_at(struct front *f, bool metadata_only, int line)
{
    static const char *const meta =
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

    if (strcmp(f->accept, metadata_only ? meta : "application/json") ||
        (metadata_only ? f->answer_len > 400 : f->answer_len < 2000))
        fail_msg("line %d: Accept \"%s\", %zu bytes back; want metadata only: %d", line, f->accept,
                 f->answer_len, metadata_only);
}

static void test_metadata_only_answers(void **state)
{
    struct env *e = *state;
    struct http_server_opts o = {.host = "127.0.0.1"};
    struct front f = {0};
    struct kube_client *c = NULL;
    struct strbuf big = STRBUF_INIT;
    cJSON *cm, *got = NULL, *upd = NULL;
    char url[64];

    CHECK(pthread_mutex_init(&f.lock, NULL) == 0);
    assert_int_equal(apiserver_new(e->srv->store, &f.api), 0);
    assert_int_equal(http_server_start(&o, front_handle, &f, &f.http), 0);
    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u", http_server_port(f.http));
    assert_int_equal(kube_client_new(kube_config_new(url), &c), 0);
    for (int i = 0; i < 300; i++)
        strbuf_addstr(&big, "0123456789");
    cm = kt_configmap("default", "big", big.buf);

    /* A write whose answer is not read asks for the metadata only, and gets only that. */
    assert_int_equal(kube_create(c, &kube_res_configmaps, "default", cm, NULL, NULL), 0);
    expect_answer_at(&f, true, __LINE__);
    /* One that reads it gets the whole object (a read always does). */
    assert_int_equal(kube_get(c, &kube_res_configmaps, "default", "big", &got, NULL), 0);
    expect_answer_at(&f, false, __LINE__);
    assert_int_equal(kube_update(c, &kube_res_configmaps, "default", got, NULL, &upd, NULL), 0);
    expect_answer_at(&f, false, __LINE__);
    assert_string_equal(str(upd, "data", "v"), big.buf);
    /* The update is whole all the same: only the answer was cut. */
    assert_int_equal(kube_update(c, &kube_res_configmaps, "default", upd, NULL, NULL, NULL), 0);
    expect_answer_at(&f, true, __LINE__);
    cJSON_Delete(got);
    assert_int_equal(kube_get(c, &kube_res_configmaps, "default", "big", &got, NULL), 0);
    assert_string_equal(str(got, "data", "v"), big.buf);
    assert_string_not_equal(str(got, "metadata", "resourceVersion"),
                            str(upd, "metadata", "resourceVersion"));
    cJSON_Delete(got);
    cJSON_Delete(upd);
    cJSON_Delete(cm);
    strbuf_release(&big);
    kube_client_free(c);
    http_server_stop(f.http);
    apiserver_free(f.api);
    (void)pthread_mutex_destroy(&f.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_decode),
        cmocka_unit_test(test_paths),
        cmocka_unit_test_setup_teardown(test_crud, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_pages_and_selectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untyped_request_and_transport_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_only_answers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
