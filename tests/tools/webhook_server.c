/*
 * A real HTTPS admission webhook for the end-to-end tests of `koord apiserver`'s dynamic
 * admission (tests/e2e/test_apiserver_webhooks.sh). Built for the tests only. It answers
 * admission.k8s.io/v1 AdmissionReviews the way a webhook author's server would, choosing what to
 * do from the request path:
 *
 *   /allow       allowed
 *   /deny        refused with status {code 403, reason Forbidden, message "pods named bad-*
 *                are not welcome"}
 *   /deny-bare   refused without a status
 *   /label       allowed with a JSONPatch setting the label webhook=mutated
 *   /label-again allowed with a JSONPatch setting the label seen=<count of labels it saw>
 *                (what a reinvoked webhook changes)
 *   /warn        allowed with the warning "koord test warning"
 *   /slow        allowed after 3 s (beyond a 1 s timeoutSeconds)
 *   /broken      HTTP 500 with the text body "broken on purpose"
 *
 * Every review received is appended to --log as one JSON line {"path":..., "request":...}, so
 * a test can check what the API server sent. The serving certificate comes from
 * apiserver_pki_serving() in --cert-dir (webhook.crt, signed by webhook-ca.crt, valid for
 * localhost, 127.0.0.1 and each --dns-name); the bound port is written to --ready-file.
 *
 * Usage: koord_test_webhook --cert-dir DIR --ready-file FILE --log FILE [--dns-name NAME]...
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apiserver/pki.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "http/tls.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *log_path;

static void log_review(const char *path, const cJSON *req)
{
    struct strbuf line = STRBUF_INIT;
    cJSON *o = cJSON_CreateObject();
    FILE *f;

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "path", path));
    CHECK(cJSON_AddItemToObject(o, "request", cJSON_Duplicate(req, true)));
    if (json_print(o, &line) == 0) {
        CHECK(pthread_mutex_lock(&log_lock) == 0);
        if ((f = fopen(log_path, "a"))) {
            (void)fprintf(f, "%s\n", line.buf);
            (void)fclose(f);
        }
        CHECK(pthread_mutex_unlock(&log_lock) == 0);
    }
    cJSON_Delete(o);
    strbuf_release(&line);
}

/* Standard base64 (what []byte is on the wire). */
static void base64_std(const char *s, struct strbuf *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        char c3 = '=', c4 = '=';

        strbuf_addch(out, tab[v >> 18 & 63]);
        strbuf_addch(out, tab[v >> 12 & 63]);
        if (i + 1 < n)
            c3 = tab[v >> 6 & 63];
        if (i + 2 < n)
            c4 = tab[v & 63];
        strbuf_addch(out, c3);
        strbuf_addch(out, c4);
    }
}

/* A JSONPatch setting metadata.labels[key] = value on obj. */
static void add_label_patch(cJSON *resp, const cJSON *obj, const char *key, const char *value)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "labels");
    struct strbuf p = STRBUF_INIT, b = STRBUF_INIT;

    if (cJSON_IsObject(labels))
        strbuf_addf(&p, "[{\"op\":\"add\",\"path\":\"/metadata/labels/%s\",\"value\":\"%s\"}]", key,
                    value);
    else
        strbuf_addf(&p,
                    "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"%s\":\"%s\"}}]",
                    key, value);
    base64_std(p.buf, &b);
    CHECK(cJSON_AddStringToObject(resp, "patchType", "JSONPatch"));
    CHECK(cJSON_AddStringToObject(resp, "patch", b.buf));
    strbuf_release(&p);
    strbuf_release(&b);
}

static void handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    const char *path = http_request_path(req);
    size_t len;
    const char *body = http_request_body(req, &len);
    cJSON *review = NULL, *out, *r;
    const cJSON *request, *obj;
    (void)ud;

    if (!strcmp(path, "/broken")) {
        resp->status = 500;
        resp->content_type = "text/plain";
        strbuf_addstr(&resp->body, "broken on purpose");
        return;
    }
    if (json_parse(body, len, NULL, &review, NULL) < 0 ||
        !cJSON_IsObject(request = cJSON_GetObjectItemCaseSensitive(review, "request"))) {
        resp->status = 400;
        strbuf_addstr(&resp->body, "{\"error\":\"not an AdmissionReview\"}");
        cJSON_Delete(review);
        return;
    }
    log_review(path, request);
    obj = cJSON_GetObjectItemCaseSensitive(request, "object");
    CHECK(out = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(out, "apiVersion", "admission.k8s.io/v1"));
    CHECK(cJSON_AddStringToObject(out, "kind", "AdmissionReview"));
    CHECK(r = cJSON_AddObjectToObject(out, "response"));
    CHECK(cJSON_AddStringToObject(
        r, "uid", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(request, "uid"))));
    CHECK(cJSON_AddBoolToObject(r, "allowed", strncmp(path, "/deny", 5) != 0));
    if (!strcmp(path, "/deny")) {
        cJSON *st = cJSON_AddObjectToObject(r, "status");
        CHECK(st);
        CHECK(cJSON_AddNumberToObject(st, "code", 403));
        CHECK(cJSON_AddStringToObject(st, "reason", "Forbidden"));
        CHECK(cJSON_AddStringToObject(st, "message", "pods named bad-* are not welcome"));
    } else if (!strcmp(path, "/label")) {
        add_label_patch(r, obj, "webhook", "mutated");
    } else if (!strcmp(path, "/label-again")) {
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "labels");
        char n[16];
        (void)snprintf(n, sizeof(n), "%d", cJSON_GetArraySize(labels));
        add_label_patch(r, obj, "seen", n);
    } else if (!strcmp(path, "/warn")) {
        cJSON *w = cJSON_AddArrayToObject(r, "warnings");
        CHECK(w);
        CHECK(cJSON_AddItemToArray(w, cJSON_CreateString("koord test warning")));
    } else if (!strcmp(path, "/slow")) {
        struct timespec ts = {3, 0};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    CHECK(json_print(out, &resp->body) == 0);
    cJSON_Delete(out);
    cJSON_Delete(review);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"cert-dir", required_argument, NULL, 'c'},
        {"ready-file", required_argument, NULL, 'r'},
        {"log", required_argument, NULL, 'l'},
        {"dns-name", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = NULL, *ready = NULL, *names[9] = {NULL};
    size_t nnames = 0;
    struct tls_pem ca = {0}, serving = {0};
    struct http_server_opts o = {.host = "127.0.0.1"};
    struct http_server *srv = NULL;
    sigset_t sigs;
    int c, sig, r;
    FILE *f;

    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'c')
            dir = optarg;
        else if (c == 'r')
            ready = optarg;
        else if (c == 'l')
            log_path = optarg;
        else if (c == 'n' && nnames < 8)
            names[nnames++] = optarg;
        else
            return 2;
    }
    if (!dir || !ready || !log_path) {
        (void)fputs("usage: koord_test_webhook --cert-dir DIR --ready-file FILE --log FILE "
                    "[--dns-name NAME]...\n",
                    stderr);
        return 2;
    }
    (void)sigemptyset(&sigs);
    (void)sigaddset(&sigs, SIGTERM);
    (void)sigaddset(&sigs, SIGINT);
    (void)pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    if ((r = apiserver_pki_serving(dir, "webhook", names, &ca, &serving)) < 0) {
        (void)fprintf(stderr, "cannot make the serving certificate: %s\n", err_str(r));
        return 1;
    }
    o.cert_pem = serving.cert;
    o.key_pem = serving.key;
    if ((r = http_server_start(&o, handle, NULL, &srv)) < 0) {
        (void)fprintf(stderr, "cannot listen: %s\n", err_str(r));
        return 1;
    }
    if (!(f = fopen(ready, "w"))) {
        http_server_stop(srv);
        return 1;
    }
    (void)fprintf(f, "%u\n", http_server_port(srv));
    (void)fclose(f);
    (void)sigwait(&sigs, &sig);
    http_server_stop(srv);
    tls_pem_release(&ca);
    tls_pem_release(&serving);
    return 0;
}
