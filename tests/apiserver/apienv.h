/*
 * The fixture of the apiserver tests that drive koord apiserver over real HTTP and a real SQLite
 * store (test_apiserver.c, test_apiserver_crds.c, test_apiserver_protocol.c,
 * test_apiserver_lifecycle.c, test_openapi.c): a server per test in a temporary directory
 * (env_stop and env_start restart it over the same store), one request with libcurl, with a
 * bearer token when asked, and reading answers by dotted path. Shared so that a fix reaches
 * every file; every helper is static inline, so a test pays nothing for what it does not use.
 * Include after <cmocka.h>; the helpers fail through cmocka, so call them from inside a test.
 */
#ifndef KOORD_TESTS_APISERVER_APIENV_H
#define KOORD_TESTS_APISERVER_APIENV_H

#ifndef cmocka_unit_test
#error "include <cmocka.h> before apienv.h"
#endif

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"

struct env {
    char dir[64];
    char db[128];
    struct store *backend, *store; /* SQLite, and the watch cache over it */
    struct apiserver *api;
    struct http_server *http;
    char base[64];
};

static inline void env_start(struct env *e)
{
    struct http_server_opts o = {.host = "127.0.0.1"};

    assert_int_equal(store_sqlite_open(e->db, 64, &e->backend), 0);
    assert_int_equal(store_cache_new(e->backend, &e->store), 0);
    assert_int_equal(apiserver_new(e->store, &e->api), 0);
    assert_int_equal(http_server_start(&o, apiserver_handle, e->api, &e->http), 0);
    (void)snprintf(e->base, sizeof(e->base), "http://127.0.0.1:%u", http_server_port(e->http));
}

static inline void env_stop(struct env *e)
{
    apiserver_stop_watches(e->api);
    http_server_stop(e->http);
    apiserver_free(e->api);
    store_close(e->store);
    store_close(e->backend);
    e->backend = NULL;
    e->http = NULL;
    e->api = NULL;
    e->store = NULL;
}

static inline int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    (void)snprintf(e->dir, sizeof(e->dir), "/tmp/koord-apitest-XXXXXX");
    if (!mkdtemp(e->dir))
        return -1;
    (void)snprintf(e->db, sizeof(e->db), "%s/db", e->dir);
    env_start(e);
    *state = e;
    return 0;
}

static inline int teardown(void **state)
{
    struct env *e = *state;
    char p[160];

    env_stop(e);
    for (const char *const *s = (const char *const[]){"", "-wal", "-shm", NULL}; *s; s++) {
        (void)snprintf(p, sizeof(p), "%s%s", e->db, *s);
        (void)unlink(p);
    }
    (void)rmdir(e->dir);
    free(e);
    return 0;
}

static inline size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static inline size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    if (!strncasecmp(p, "Warning:", 8))
        strbuf_add(ud, p, size * n);
    return size * n;
}

/* One request with a JSON body (or none), an optional Accept and, when token is set, a bearer
 * token; returns the HTTP code, *ret the parsed body (NULL when it is not JSON), warnings the
 * Warning header lines. */
static inline long req_as(struct env *e, const char *token, const char *method, const char *path,
                          const char *accept, const char *body, cJSON **ret,
                          struct strbuf *warnings)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, out = STRBUF_INIT, acc = STRBUF_INIT, auth = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    long code = 0;

    if (accept) {
        strbuf_addf(&acc, "Accept: %s", accept);
        hdrs = curl_slist_append(hdrs, acc.buf);
    }
    if (token) {
        strbuf_addf(&auth, "Authorization: Bearer %s", token);
        hdrs = curl_slist_append(hdrs, auth.buf);
    }
    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    if (warnings) {
        (void)curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        (void)curl_easy_setopt(h, CURLOPT_HEADERDATA, warnings);
    }
    if (body)
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (getenv("KOORD_TEST_DEBUG"))
        print_error("%s %s -> %ld %s\n", method, path, code, out.buf);
    if (ret)
        *ret = cJSON_Parse(out.buf);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&out);
    strbuf_release(&acc);
    strbuf_release(&auth);
    return code;
}

/* req_as without a token. */
static inline long req(struct env *e, const char *method, const char *path, const char *accept,
                       const char *body, cJSON **ret, struct strbuf *warnings)
{
    return req_as(e, NULL, method, path, accept, body, ret, warnings);
}

/* GET path with no headers of our own; the body as text appended to out. */
static inline long req_raw(struct env *e, const char *path, struct strbuf *out)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT;
    long code = 0;

    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    return code;
}

/* The value at a dotted path ("status.conditions.0.type"; numbers index arrays). */
static inline const cJSON *at(const cJSON *o, const char *path)
{
    char buf[256];
    const cJSON *v = o;

    (void)snprintf(buf, sizeof(buf), "%s", path);
    for (char *seg = buf, *dot; seg && v; seg = dot ? dot + 1 : NULL) {
        dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, (int)strtol(seg, NULL, 10))
                             : cJSON_GetObjectItemCaseSensitive(v, seg);
    }
    return v;
}

static inline void expect_str(const cJSON *o, const char *path, const char *want)
{
    const char *got = cJSON_GetStringValue(at(o, path));
    if (!got || strcmp(got, want)) {
        char *txt = cJSON_PrintUnformatted(o);
        print_error("%s\n", txt ? txt : "(null)");
        cJSON_free(txt);
        fail_msg("%s = %s, want %s", path, got ? got : "(absent)", want);
    }
}

#endif
