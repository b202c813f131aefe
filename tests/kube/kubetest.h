/*
 * The real API server the kube client tests talk to: `koord apiserver`'s library started
 * in-process with its generated PKI, TLS, client certificates required, and the admin
 * kubeconfig it writes, which the client then loads like any kubeconfig. It can be stopped and
 * started again on the same port with a different watch history, which is how the informer
 * tests produce a real 410. Include after <cmocka.h>; helpers fail the running test.
 */
#ifndef KOORD_TESTS_KUBE_KUBETEST_H
#define KOORD_TESTS_KUBE_KUBETEST_H

#ifndef cmocka_unit_test
#error "include <cmocka.h> before kubetest.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apiserver/apiserver.h"
#include "apiserver/pki.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/config.h"

struct kt_server {
    char dir[64];
    char db[96];
    char kubeconfig[96];
    struct apiserver_pki pki;
    struct store *backend; /* SQLite */
    struct store *store;   /* the watch cache over it, what the server uses */
    struct apiserver *api;
    struct http_server *http;
    uint16_t port;
};

/* Starts serving on s->port (0 = any) with a watch history of history events (0 = default). */
static inline void kt_server_start(struct kt_server *s, size_t history)
{
    struct http_server_opts o = {.host = "127.0.0.1"};
    char url[64];

    assert_int_equal(store_sqlite_open(s->db, history, &s->backend), 0);
    assert_int_equal(store_cache_new(s->backend, &s->store), 0);
    assert_int_equal(apiserver_new(s->store, &s->api), 0);
    apiserver_require_client_certs(s->api, true);
    o.port = s->port;
    o.cert_pem = s->pki.serving.cert;
    o.key_pem = s->pki.serving.key;
    o.client_ca_pem = s->pki.ca.cert;
    assert_int_equal(http_server_start(&o, apiserver_handle, s->api, &s->http), 0);
    s->port = http_server_port(s->http);
    (void)snprintf(url, sizeof(url), "https://127.0.0.1:%u", s->port);
    assert_int_equal(apiserver_write_kubeconfig(s->kubeconfig, url, &s->pki), 0);
}

static inline void kt_server_stop(struct kt_server *s)
{
    if (s->api)
        apiserver_stop_watches(s->api);
    http_server_stop(s->http);
    apiserver_free(s->api);
    store_close(s->store);
    store_close(s->backend);
    s->backend = NULL;
    s->http = NULL;
    s->api = NULL;
    s->store = NULL;
}

static inline void kt_rm(const char *dir, const char *name)
{
    char p[160];

    (void)snprintf(p, sizeof(p), "%s/%s", dir, name);
    (void)unlink(p);
}

/* One PKI per test process: generating keys and certificates is the slowest part of starting
 * a server under valgrind, and every server of a test file can share them. */
static char kt_pki_dir[64];

static inline void kt_pki_remove(void)
{
    static const char *const files[] = {"ca.crt",
                                        "ca.key",
                                        "apiserver.crt",
                                        "apiserver.key",
                                        "admin.crt",
                                        "admin.key",
                                        "front-proxy-ca.crt",
                                        "front-proxy-ca.key",
                                        "front-proxy-client.crt",
                                        "front-proxy-client.key"};

    for (size_t i = 0; i < ARRAY_SIZE(files); i++)
        kt_rm(kt_pki_dir, files[i]);
    (void)rmdir(kt_pki_dir);
}

static inline struct kt_server *kt_server_new(size_t history)
{
    struct kt_server *s = xcalloc(1, sizeof(*s));

    if (!kt_pki_dir[0]) {
        (void)snprintf(kt_pki_dir, sizeof(kt_pki_dir), "/tmp/koord-kube-pki-XXXXXX");
        assert_non_null(mkdtemp(kt_pki_dir));
        assert_int_equal(atexit(kt_pki_remove), 0);
    }
    (void)snprintf(s->dir, sizeof(s->dir), "/tmp/koord-kube-test-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    (void)snprintf(s->db, sizeof(s->db), "%s/db", s->dir);
    (void)snprintf(s->kubeconfig, sizeof(s->kubeconfig), "%s/kubeconfig", s->dir);
    assert_int_equal(apiserver_pki_load(kt_pki_dir, &s->pki), 0);
    kt_server_start(s, history);
    return s;
}

static inline void kt_server_free(struct kt_server *s)
{
    if (!s)
        return;
    kt_server_stop(s);
    apiserver_pki_release(&s->pki);
    kt_rm(s->dir, "db");
    kt_rm(s->dir, "db-wal");
    kt_rm(s->dir, "db-shm");
    kt_rm(s->dir, "kubeconfig");
    (void)rmdir(s->dir);
    free(s);
}

/* A client configured from the server's kubeconfig, as a component would be. */
static inline struct kube_client *kt_client(struct kt_server *s)
{
    const char *paths[] = {s->kubeconfig, NULL};
    struct kube_config *cfg = NULL;
    struct kube_client *c = NULL;
    struct strbuf err = STRBUF_INIT;
    int r = kube_config_from_kubeconfig(paths, NULL, &cfg, &err);

    if (r < 0)
        fail_msg("kubeconfig: %s", err.buf);
    strbuf_release(&err);
    cfg->timeout_ms = 10000;
    assert_int_equal(kube_client_new(cfg, &c), 0);
    return c;
}

static inline double kt_now(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits (in 5 ms steps, up to seconds) until cond(arg) holds; returns whether it did. The
 * condition is checked first and last, so a fast path costs nothing. */
static inline bool kt_wait(bool (*cond)(void *), void *arg, double seconds)
{
    double end = kt_now() + seconds;
    struct timespec step = {0, 5000000};

    while (!cond(arg)) {
        if (kt_now() > end)
            return cond(arg);
        (void)nanosleep(&step, NULL);
    }
    return true;
}

/* A ConfigMap object (caller frees). */
static inline cJSON *kt_configmap(const char *ns, const char *name, const char *value)
{
    cJSON *o = cJSON_CreateObject(), *m, *d;

    cJSON_AddStringToObject(o, "apiVersion", "v1");
    cJSON_AddStringToObject(o, "kind", "ConfigMap");
    m = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "namespace", ns);
    d = cJSON_AddObjectToObject(o, "data");
    cJSON_AddStringToObject(d, "v", value);
    return o;
}

#endif
