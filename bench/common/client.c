/*
 * The benchmarks' client side (see bench.h). Every server is reached the same way: HTTP/1.1
 * (libcurl would pick HTTP/2 for etcd's TLS port, which koord does not speak), TLS, one
 * keep-alive connection per thread, Nagle off, no Expect: 100-continue round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "bench.h"

double now_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t now_ns(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, data, size * n);
    return size * n;
}

void conn_init(struct conn *c, const struct server *srv)
{
    conn_init_accept(c, srv, "application/json");
}

void conn_init_accept(struct conn *c, const struct server *srv, const char *accept)
{
    struct strbuf h = STRBUF_INIT;

    memset(c, 0, sizeof(*c));
    c->srv = srv;
    strbuf_init(&c->body);
    c->h = curl_easy_init();
    CHECK(c->h);
    c->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    CHECK(c->hdrs);
    strbuf_addf(&h, "Accept: %s", accept);
    c->hdrs = curl_slist_append(c->hdrs, h.buf);
    strbuf_release(&h);
    CHECK(c->hdrs);
    c->hdrs = curl_slist_append(c->hdrs, "Expect:");
    CHECK(c->hdrs);
    if (srv->auth) {
        c->hdrs = curl_slist_append(c->hdrs, srv->auth);
        CHECK(c->hdrs);
    }
    (void)curl_easy_setopt(c->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    (void)curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdrs);
    (void)curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
    (void)curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT, 10L);
    if (srv->certfile) {
        (void)curl_easy_setopt(c->h, CURLOPT_SSLCERT, srv->certfile);
        (void)curl_easy_setopt(c->h, CURLOPT_SSLKEY, srv->keyfile);
    }
    if (srv->cafile) {
        (void)curl_easy_setopt(c->h, CURLOPT_CAINFO, srv->cafile);
    } else {
        /* etcd --auto-tls makes a self-signed certificate: encrypted, not verifiable. */
        (void)curl_easy_setopt(c->h, CURLOPT_SSL_VERIFYPEER, 0L);
        (void)curl_easy_setopt(c->h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

void conn_release(struct conn *c)
{
    if (c->h)
        curl_easy_cleanup(c->h);
    curl_slist_free_all(c->hdrs);
    strbuf_release(&c->body);
    memset(c, 0, sizeof(*c));
}

/* Sets what every request sets; the handle keeps its connection between requests. */
static void setup(struct conn *c, const char *method, const char *path, const char *body,
                  size_t len)
{
    char url[512];

    (void)snprintf(url, sizeof(url), "%s%s", c->srv->url, path);
    (void)curl_easy_setopt(c->h, CURLOPT_URL, url);
    if (!strcmp(method, "GET")) {
        (void)curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
    } else {
        (void)curl_easy_setopt(c->h, CURLOPT_POST, 1L);
        (void)curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body ? body : "");
        (void)curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
    }
    /* Any method but GET and POST (PUT, PATCH, DELETE) goes as a custom request line. */
    (void)curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST,
                           strcmp(method, "GET") && strcmp(method, "POST") ? method : NULL);
}

int conn_do(struct conn *c, const char *method, const char *path, const char *body, size_t len)
{
    CURLcode rc;

    setup(c, method, path, body, len);
    strbuf_reset(&c->body);
    c->status = 0;
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->body);
    (void)curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 1L);
    (void)curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 60L);
    rc = curl_easy_perform(c->h);
    if (rc != CURLE_OK) {
        if (c->quiet)
            return -EIO;
        (void)fprintf(stderr, "%s: %s %s%s: %s\n", program_invocation_short_name, method,
                      c->srv->url, path, curl_easy_strerror(rc));
        return -EIO;
    }
    (void)curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->status);
    {
        curl_off_t pre = 0, first = 0;
        (void)curl_easy_getinfo(c->h, CURLINFO_PRETRANSFER_TIME_T, &pre);
        (void)curl_easy_getinfo(c->h, CURLINFO_STARTTRANSFER_TIME_T, &first);
        c->ttfb = (double)(first - pre) / 1e6;
    }
    return 0;
}

struct stream {
    conn_data_fn on_data;
    conn_stop_fn should_stop;
    void *ud;
};

static size_t on_stream_data(char *data, size_t size, size_t n, void *ud)
{
    struct stream *st = ud;

    return st->on_data(st->ud, data, size * n) ? size * n : 0;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    const struct stream *st = ud;

    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return st->should_stop(st->ud) ? 1 : 0;
}

int conn_stream(struct conn *c, const char *method, const char *path, const char *body, size_t len,
                conn_data_fn on_data, conn_stop_fn should_stop, void *ud)
{
    struct stream st = {on_data, should_stop, ud};

    setup(c, method, path, body, len);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_stream_data);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &st);
    (void)curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
    (void)curl_easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION, on_progress);
    (void)curl_easy_setopt(c->h, CURLOPT_XFERINFODATA, &st);
    (void)curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 0L);
    return (int)curl_easy_perform(c->h);
}

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void b64_encode(struct strbuf *out, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i = 0, o;

    strbuf_grow(out, (len + 2) / 3 * 4);
    o = out->len;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out->buf[o++] = b64_alphabet[v >> 18];
        out->buf[o++] = b64_alphabet[(v >> 12) & 63];
        out->buf[o++] = b64_alphabet[(v >> 6) & 63];
        out->buf[o++] = b64_alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        out->buf[o++] = b64_alphabet[v >> 18];
        out->buf[o++] = b64_alphabet[(v >> 12) & 63];
        out->buf[o++] = (char)(i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=');
        out->buf[o++] = '=';
    }
    strbuf_setlen(out, o);
}

static int b64_value(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

size_t b64_decode(const char *src, size_t srclen, char *out, size_t max)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;

    for (size_t i = 0; i < srclen && n < max; i++) {
        int v = b64_value(src[i]);
        if (v < 0)
            break;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    return n;
}

int conn_expect(struct conn *c, const char *method, const char *path, const char *body, size_t len,
                long want)
{
    if (conn_do(c, method, path, body, len) < 0)
        return -EIO;
    if (c->status != want) {
        (void)fprintf(stderr, "%s: %s %s: HTTP %ld: %.300s\n", program_invocation_short_name,
                      method, path, c->status, c->body.buf);
        return -EIO;
    }
    return 0;
}

cJSON *bench_node_named(const cJSON *node, const char *name)
{
    cJSON *n = cJSON_Duplicate(node, true), *meta, *labels;

    CHECK(n);
    meta = cJSON_GetObjectItemCaseSensitive(n, "metadata");
    labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
    CHECK(cJSON_AddStringToObject(meta, "name", name));
    cJSON_DeleteItemFromObjectCaseSensitive(labels, "kubernetes.io/hostname");
    CHECK(cJSON_AddStringToObject(labels, "kubernetes.io/hostname", name));
    return n;
}
