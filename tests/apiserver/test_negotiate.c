/*
 * Tests for apiserver/negotiate (the answer's form from the Accept header) and for what
 * apiserver.c does with it over real HTTP and a real SQLite store: PartialObjectMetadata for
 * one object (get and writes, the object still written whole), PartialObjectMetadataList for
 * lists (streamed and selected), metadata-only watch events, Status answers left alone, and
 * 406 NotAcceptable before anything is written. Expected answers follow kube-apiserver's
 * (handlers/response.go, negotiation/negotiate.go).
 */
#include <curl/curl.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/apiserver.h"
#include "apiserver/negotiate.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

#define PARTIAL      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
#define PARTIAL_LIST "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
/* kube-controller-manager's metadata informers (reference 6.8) */
#define GC_LIST                                                                                    \
    ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"        \
     "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
#define GC_WATCH                                                                                   \
    ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"            \
     "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
#define KUBECTL_TABLE                                                                              \
    ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"           \
     "g=meta.k8s.io,application/json")

/* ---- negotiate_output ---- */

static void expect_as_at(const char *accept, bool list, int want, const char *want_av, int line)
{
    struct negotiate_output o;
    int r = negotiate_output(accept, list, &o);

    if (want < 0) {
        if (r != -EINVAL)
            fail_msg("line %d: \"%s\" (list %d): accepted as %d, want 406", line,
                     accept ? accept : "(null)", list, (int)o.as);
        return;
    }
    if (r != 0 || (int)o.as != want ||
        (want_av ? !o.api_version || strcmp(o.api_version, want_av) : o.api_version != NULL))
        fail_msg("line %d: \"%s\" (list %d): r %d as %d av %s, want as %d av %s", line,
                 accept ? accept : "(null)", list, r, (int)o.as,
                 o.api_version ? o.api_version : "-", want, want_av ? want_av : "-");
}
#define expect_as(accept, list, want, av) expect_as_at((accept), (list), (want), (av), __LINE__)
#define V1                                "meta.k8s.io/v1"
#define V1BETA1                           "meta.k8s.io/v1beta1"
#define REFUSED                           (-1)

static void test_negotiate_output(void **state)
{
    (void)state;
    /* plain JSON, however it is asked for */
    expect_as(NULL, false, NEGOTIATE_OBJECT, NULL);
    expect_as("", true, NEGOTIATE_OBJECT, NULL);
    expect_as("  ", false, NEGOTIATE_OBJECT, NULL);
    expect_as("application/json", false, NEGOTIATE_OBJECT, NULL);
    expect_as("*/*", true, NEGOTIATE_OBJECT, NULL);
    expect_as("application/*", false, NEGOTIATE_OBJECT, NULL);
    expect_as("Application/JSON; charset=utf-8", false, NEGOTIATE_OBJECT, NULL);
    expect_as("application/vnd.kubernetes.protobuf,application/json", false, NEGOTIATE_OBJECT,
              NULL);
    expect_as("text/html, */*;q=0.8", false, NEGOTIATE_OBJECT, NULL);

    /* the meta.k8s.io forms */
    expect_as(KUBECTL_TABLE, true, NEGOTIATE_TABLE, V1);
    expect_as(KUBECTL_TABLE, false, NEGOTIATE_TABLE, V1);
    expect_as("application/json;as=Table;v=v1beta1;g=meta.k8s.io", true, NEGOTIATE_TABLE, V1BETA1);
    expect_as(GC_LIST, true, NEGOTIATE_PARTIAL_LIST, V1);
    expect_as(GC_WATCH, false, NEGOTIATE_PARTIAL, V1);
    expect_as(PARTIAL ",application/json", false, NEGOTIATE_PARTIAL, V1);
    expect_as("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", false,
              NEGOTIATE_PARTIAL, V1BETA1);
    expect_as("application/json ; AS=\"PartialObjectMetadataList\" ; G=meta.k8s.io ; V=\"v1\"",
              true, NEGOTIATE_PARTIAL_LIST, V1);
    expect_as("*/*;as=Table;g=meta.k8s.io;v=v1", false, NEGOTIATE_TABLE, V1);

    /* a form that does not fit the answer is passed over, for the next range */
    expect_as(GC_LIST, false, NEGOTIATE_OBJECT, NULL);
    expect_as(GC_WATCH, true, NEGOTIATE_OBJECT, NULL);
    expect_as(PARTIAL, true, REFUSED, NULL);
    expect_as(PARTIAL_LIST, false, REFUSED, NULL);

    /* q first (0 never), then the more specific range, then the order written */
    expect_as("application/json;q=0.5," PARTIAL, false, NEGOTIATE_PARTIAL, V1);
    expect_as(PARTIAL ";q=0,application/json", false, NEGOTIATE_OBJECT, NULL);
    expect_as("*/*;as=Table;g=meta.k8s.io;v=v1,application/json", false, NEGOTIATE_OBJECT, NULL);
    expect_as("application/json," PARTIAL, false, NEGOTIATE_OBJECT, NULL);
    expect_as("application/json;q=0", false, REFUSED, NULL);
    expect_as("application/json;q=abc", false, REFUSED, NULL);

    /* nothing this server writes */
    expect_as("application/vnd.kubernetes.protobuf", false, REFUSED, NULL);
    expect_as("application/yaml;q=0", false, REFUSED, NULL);
    expect_as("text/html", true, REFUSED, NULL);
    expect_as("application/json;as=Table", true, REFUSED, NULL);
    expect_as("application/json;v=v1", false, REFUSED, NULL);
    expect_as("application/json;as=Foo;g=meta.k8s.io;v=v1", false, REFUSED, NULL);
    expect_as("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2", false, REFUSED, NULL);
    expect_as("application/json;as=PartialObjectMetadata;g=apps;v=v1", false, REFUSED, NULL);
    expect_as(",", false, REFUSED, NULL);
}

/* application/yaml: the same forms written as YAML; JSON and YAML ranked as equals */
static void expect_yaml_at(const char *accept, bool want_yaml, int want_as, int line)
{
    struct negotiate_output o;

    if (negotiate_output(accept, false, &o) != 0 || o.yaml != want_yaml || (int)o.as != want_as)
        fail_msg("line %d: \"%s\": got yaml %d as %d, want yaml %d as %d", line, accept,
                 (int)o.yaml, (int)o.as, (int)want_yaml, want_as);
}
#define expect_yaml(a, y, as) expect_yaml_at((a), (y), (as), __LINE__)

static void test_negotiate_yaml(void **state)
{
    (void)state;
    expect_yaml("application/yaml", true, NEGOTIATE_OBJECT);
    expect_yaml("Application/YAML; charset=utf-8", true, NEGOTIATE_OBJECT);
    expect_yaml("application/yaml,application/json", true, NEGOTIATE_OBJECT);
    expect_yaml("application/json,application/yaml", false, NEGOTIATE_OBJECT);
    expect_yaml("application/json;q=0.5,application/yaml", true, NEGOTIATE_OBJECT);
    expect_yaml("*/*,application/yaml", true, NEGOTIATE_OBJECT);
    expect_yaml("application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", true,
                NEGOTIATE_PARTIAL);
    expect_yaml("application/vnd.kubernetes.protobuf,application/yaml", true, NEGOTIATE_OBJECT);
    expect_yaml("*/*", false, NEGOTIATE_OBJECT);
}

/* ---- negotiate_partial ---- */

static void expect_partial_at(const char *obj, int want_r, const char *want, int line)
{
    struct strbuf out = STRBUF_INIT;
    int r = negotiate_partial(obj, strlen(obj), V1, &out);

    if (r != want_r || (want && strcmp(out.buf, want)) || (!want && out.len))
        fail_msg("line %d: %s -> %d \"%s\", want %d \"%s\"", line, obj, r, out.buf, want_r,
                 want ? want : "");
    strbuf_release(&out);
}
#define expect_partial(obj, r, want) expect_partial_at((obj), (r), (want), __LINE__)

static void test_negotiate_partial(void **state)
{
    (void)state;
    expect_partial("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
                   "\"resourceVersion\":\"7\"},\"data\":{\"k\":\"v\"}}",
                   0,
                   "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
                   "\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\"}}");
    /* any member order and spacing; the metadata's bytes as they are */
    expect_partial("{ \"data\" : {}, \"metadata\" : { \"name\" : \"b\" } , \"kind\" : \"X\" }", 0,
                   "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
                   "\"metadata\":{ \"name\" : \"b\" }}");
    expect_partial("{\"kind\":\"X\"}", 0,
                   "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
                   "\"metadata\":{}}");
    expect_partial("{}", 0,
                   "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
                   "\"metadata\":{}}");
    expect_partial("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"code\":404}",
                   -ENOENT, NULL);
    expect_partial("{\"metadata\":{},\"kind\":\"Status\"}", -ENOENT, NULL);
    expect_partial("[1]", -EINVAL, NULL);
    expect_partial("\"x\"", -EINVAL, NULL);
    expect_partial("{\"kind\":\"X\",\"data\":", -EINVAL, NULL);
}

/* ---- over HTTP ---- */

struct env {
    char dir[64];
    char db[128];
    struct store *backend, *store; /* SQLite, and the watch cache over it */
    struct apiserver *api;
    struct http_server *http;
    char base[64];
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct http_server_opts o = {.host = "127.0.0.1"};

    (void)snprintf(e->dir, sizeof(e->dir), "/tmp/koord-neg-XXXXXX");
    if (!mkdtemp(e->dir))
        return -1;
    (void)snprintf(e->db, sizeof(e->db), "%s/db", e->dir);
    if (store_sqlite_open(e->db, 64, &e->backend) < 0 ||
        store_cache_new(e->backend, &e->store) < 0 || apiserver_new(e->store, &e->api) < 0 ||
        http_server_start(&o, apiserver_handle, e->api, &e->http) < 0)
        return -1;
    (void)snprintf(e->base, sizeof(e->base), "http://127.0.0.1:%u", http_server_port(e->http));
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    char p[160];

    apiserver_stop_watches(e->api);
    http_server_stop(e->http);
    apiserver_free(e->api);
    store_close(e->store);
    store_close(e->backend);
    for (const char *const *s = (const char *const[]){"", "-wal", "-shm", NULL}; *s; s++) {
        (void)snprintf(p, sizeof(p), "%s%s", e->db, *s);
        (void)unlink(p);
    }
    (void)rmdir(e->dir);
    free(e);
    return 0;
}

/* What a watch needs from the transfer: the events so far, and when to stop. */
struct sink {
    struct strbuf body;
    size_t lines, stop_after; /* 0: read to the end */
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    struct sink *s = ud;

    strbuf_add(&s->body, p, size * n);
    for (size_t i = 0; i < size * n; i++)
        s->lines += p[i] == '\n';
    return s->stop_after && s->lines >= s->stop_after ? 0 : size * n;
}

/* One request with the given Accept (NULL: none); returns the HTTP code, the body into
 * s->body. A transfer cut by s->stop_after counts as done. */
static long call(struct env *e, const char *method, const char *path, const char *accept,
                 const char *body, struct sink *s)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, acc = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    long code = 0;
    CURLcode rc;

    strbuf_addf(&acc, "Accept: %s", accept ? accept : "");
    hdrs = curl_slist_append(hdrs, acc.buf); /* "Accept:" alone drops curl's own */
    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    if (body)
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    rc = curl_easy_perform(h);
    assert_true(rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && s->stop_after));
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (getenv("KOORD_TEST_DEBUG"))
        print_error("%s %s [%s] -> %ld %s\n", method, path, accept ? accept : "", code,
                    s->body.buf);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&acc);
    return code;
}

/* call() for a one-document answer: the code, and *ret its tree. */
static long call_json(struct env *e, const char *method, const char *path, const char *accept,
                      const char *body, cJSON **ret)
{
    struct sink s = {STRBUF_INIT, 0, 0};
    long code = call(e, method, path, accept, body, &s);

    *ret = cJSON_Parse(s.body.buf);
    strbuf_release(&s.body);
    return code;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Asserts o is the PartialObjectMetadata of the object named name, nothing else in it. */
static void assert_partial_at(const cJSON *o, const char *name, int line)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");

    if (strcmp(str_at(o, "kind", NULL), "PartialObjectMetadata") ||
        strcmp(str_at(o, "apiVersion", NULL), V1) || strcmp(str_at(meta, "name", NULL), name) ||
        !*str_at(meta, "resourceVersion", NULL) || !*str_at(meta, "uid", NULL) ||
        cJSON_GetArraySize(o) != 3) {
        char *p = cJSON_PrintUnformatted(o);
        print_error("line %d: not the PartialObjectMetadata of %s: %s\n", line, name, p);
        cJSON_free(p);
        fail();
    }
}
#define assert_partial(o, name) assert_partial_at((o), (name), __LINE__)

#define CMS                     "/api/v1/namespaces/default/configmaps"
#define CM(name, label, v)                                                                         \
    ("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" name                \
     "\",\"labels\":{\"app\":\"" label "\"}},\"data\":{\"k\":\"" v "\"}}")

static void test_one_object(void **state)
{
    struct env *e = *state;
    cJSON *o = NULL, *full = NULL;
    char body[256];

    /* a create answers with the metadata; the object is stored whole */
    assert_int_equal(call_json(e, "POST", CMS, PARTIAL, CM("a", "x", "1"), &o), 201);
    assert_partial(o, "a");
    assert_int_equal(call_json(e, "GET", CMS "/a", NULL, NULL, &full), 200);
    assert_string_equal(str_at(full, "data", "k"), "1");
    assert_string_equal(str_at(full, "metadata", "resourceVersion"),
                        str_at(o, "metadata", "resourceVersion"));
    cJSON_Delete(o);

    /* so does an update, with the new resourceVersion; a get too */
    (void)snprintf(body, sizeof(body),
                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
                   "\"resourceVersion\":\"%s\"},\"data\":{\"k\":\"2\"}}",
                   str_at(full, "metadata", "resourceVersion"));
    assert_int_equal(call_json(e, "PUT", CMS "/a", GC_WATCH, body, &o), 200);
    assert_partial(o, "a");
    assert_string_not_equal(str_at(o, "metadata", "resourceVersion"),
                            str_at(full, "metadata", "resourceVersion"));
    cJSON_Delete(full);
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "GET", CMS "/a", PARTIAL, NULL, &o), 200);
    assert_partial(o, "a");
    cJSON_Delete(o);

    /* errors stay Status objects */
    assert_int_equal(call_json(e, "GET", CMS "/nope", PARTIAL, NULL, &o), 404);
    assert_string_equal(str_at(o, "kind", NULL), "Status");
    assert_string_equal(str_at(o, "reason", NULL), "NotFound");
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "POST", CMS, PARTIAL, CM("a", "x", "1"), &o), 409);
    assert_string_equal(str_at(o, "kind", NULL), "Status");
    cJSON_Delete(o);

    /* a delete's Success Status too */
    assert_int_equal(call_json(e, "POST", CMS, NULL, CM("gone", "x", "1"), &o), 201);
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "DELETE", CMS "/gone", PARTIAL, NULL, &o), 200);
    assert_string_equal(str_at(o, "kind", NULL), "Status");
    assert_string_equal(str_at(o, "status", NULL), "Success");
    cJSON_Delete(o);
}

static void test_not_acceptable(void **state)
{
    struct env *e = *state;
    cJSON *o = NULL;

    /* refused before the write: nothing is created */
    assert_int_equal(
        call_json(e, "POST", CMS, "application/vnd.kubernetes.protobuf", CM("b", "x", "1"), &o),
        406);
    assert_string_equal(str_at(o, "kind", NULL), "Status");
    assert_string_equal(str_at(o, "reason", NULL), "NotAcceptable");
    assert_string_equal(str_at(o, "message", NULL), NEGOTIATE_NOT_ACCEPTABLE);
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "GET", CMS "/b", NULL, NULL, &o), 404);
    cJSON_Delete(o);

    /* a list form for one object, and the other way round */
    assert_int_equal(call_json(e, "POST", CMS, PARTIAL_LIST, CM("b", "x", "1"), &o), 406);
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "GET", CMS "/b", NULL, NULL, &o), 404);
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "GET", CMS, PARTIAL, NULL, &o), 406);
    assert_string_equal(str_at(o, "reason", NULL), "NotAcceptable");
    cJSON_Delete(o);

    /* discovery is not a resource: its own rules (reference 1.4), never 406 here */
    assert_int_equal(call_json(e, "GET", "/api/v1", "text/html", NULL, &o), 200);
    cJSON_Delete(o);
}

/* Asserts a list answer is the PartialObjectMetadataList of exactly the names given. */
static void assert_partial_list_at(const cJSON *l, const char *const *names, size_t n, int line)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(l, "items"), *it;
    size_t i = 0;

    if (strcmp(str_at(l, "kind", NULL), "PartialObjectMetadataList") ||
        strcmp(str_at(l, "apiVersion", NULL), V1) || !*str_at(l, "metadata", "resourceVersion") ||
        cJSON_GetArraySize(items) != (int)n)
        fail_msg("line %d: not a PartialObjectMetadataList of %zu", line, n);
    cJSON_ArrayForEach(it, items) assert_partial_at(it, names[i++], line);
}

static void test_lists(void **state)
{
    struct env *e = *state;
    const char *const both[] = {"a", "b"}, *const only_b[] = {"b"};
    cJSON *o = NULL;

    assert_int_equal(call_json(e, "POST", CMS, NULL, CM("a", "x", "1"), &o), 201);
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "POST", CMS, NULL, CM("b", "y", "2"), &o), 201);
    cJSON_Delete(o);

    /* streamed from the stored bytes, as the garbage collector asks */
    assert_int_equal(call_json(e, "GET", CMS, GC_LIST, NULL, &o), 200);
    assert_partial_list_at(o, both, 2, __LINE__);
    cJSON_Delete(o);
    /* built from trees when a selector picks the items */
    assert_int_equal(call_json(e, "GET", CMS "?labelSelector=app%3Dy", PARTIAL_LIST, NULL, &o),
                     200);
    assert_partial_list_at(o, only_b, 1, __LINE__);
    cJSON_Delete(o);
    /* an empty one has items [] */
    assert_int_equal(
        call_json(e, "GET", "/api/v1/namespaces/kube-system/configmaps", GC_LIST, NULL, &o), 200);
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "items")));
    assert_partial_list_at(o, NULL, 0, __LINE__);
    cJSON_Delete(o);
    /* v1beta1 names its own version */
    assert_int_equal(
        call_json(e, "GET", CMS,
                  "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1", NULL,
                  &o),
        200);
    assert_string_equal(str_at(o, "apiVersion", NULL), V1BETA1);
    assert_string_equal(str_at(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "items"), 0),
                               "apiVersion", NULL),
                        V1BETA1);
    cJSON_Delete(o);
    /* and the plain list is unchanged by all this */
    assert_int_equal(call_json(e, "GET", CMS, GC_WATCH, NULL, &o), 200);
    assert_string_equal(str_at(o, "kind", NULL), "ConfigMapList");
    assert_string_equal(
        str_at(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "items"), 1), "data", "k"),
        "2");
    cJSON_Delete(o);
}

/* Every line of a watch body is an event whose object is the PartialObjectMetadata of
 * names[i], of type types[i]. */
static void assert_partial_events_at(const char *body, const char *const *types,
                                     const char *const *names, size_t n, int line)
{
    const char *p = body;

    for (size_t i = 0; i < n; i++) {
        const char *eol = strchr(p, '\n');
        cJSON *ev;

        if (!eol)
            fail_msg("line %d: %zu events, want %zu: %s", line, i, n, body);
        ev = cJSON_ParseWithLength(p, (size_t)(eol - p));
        if (strcmp(str_at(ev, "type", NULL), types[i]))
            fail_msg("line %d: event %zu is %s, want %s", line, i, str_at(ev, "type", NULL),
                     types[i]);
        assert_partial_at(cJSON_GetObjectItemCaseSensitive(ev, "object"), names[i], line);
        cJSON_Delete(ev);
        p = eol + 1;
    }
}

static void test_watch(void **state)
{
    struct env *e = *state;
    const char *const types[] = {"ADDED", "MODIFIED"}, *const names[] = {"w", "w"};
    struct sink s = {STRBUF_INIT, 0, 2};
    char path[160], body[256];
    cJSON *o = NULL;
    const char *rv0;

    assert_int_equal(call_json(e, "GET", CMS, NULL, NULL, &o), 200);
    rv0 = str_at(o, "metadata", "resourceVersion");
    (void)snprintf(path, sizeof(path), CMS "?watch=1&resourceVersion=%s", rv0);
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "POST", CMS, NULL, CM("w", "x", "1"), &o), 201);
    (void)snprintf(body, sizeof(body),
                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"w\","
                   "\"labels\":{\"app\":\"x\"},\"resourceVersion\":\"%s\"},\"data\":{\"k\":\"2\"}}",
                   str_at(o, "metadata", "resourceVersion"));
    cJSON_Delete(o);
    assert_int_equal(call_json(e, "PUT", CMS "/w", NULL, body, &o), 200);
    cJSON_Delete(o);

    /* the history replayed as metadata, the transfer cut once both events are in */
    assert_int_equal(call(e, "GET", path, GC_WATCH, NULL, &s), 200);
    assert_partial_events_at(s.body.buf, types, names, 2, __LINE__);
    strbuf_release(&s.body);

    /* with a selector the events are built from trees: the same answer */
    s = (struct sink){STRBUF_INIT, 0, 2};
    {
        char sel[200];
        (void)snprintf(sel, sizeof(sel), "%s&labelSelector=app%%3Dx", path);
        assert_int_equal(call(e, "GET", sel, PARTIAL, NULL, &s), 200);
    }
    assert_partial_events_at(s.body.buf, types, names, 2, __LINE__);
    strbuf_release(&s.body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negotiate_output),
        cmocka_unit_test(test_negotiate_yaml),
        cmocka_unit_test(test_negotiate_partial),
        cmocka_unit_test_setup_teardown(test_one_object, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_acceptable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
    };

    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
