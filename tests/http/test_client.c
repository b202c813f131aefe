/*
 * Tests for http/client against the project's own HTTP server: buffered bodies with status,
 * content type and Retry-After; the max_body bound; a streamed body through on_data; a request
 * blocked waiting for bytes is cancelled at once by its token (what stops an informer's
 * watch), and a fired token fails later requests; nothing listening is -ECONNREFUSED. Pulled
 * responses (http_client_open): head first, then the body as it trickles in, cancelled while
 * waiting; CONNECT_TO sends a request for one name to another address.
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

#include "base/base.h"
#include "base/strbuf.h"
#include "http/client.h"
#include "http/server.h"

struct srv {
    struct http_server *http;
    char url[64];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool release; /* ends the blocking stream */
    bool entered; /* the blocking stream started */
    int trickled; /* reads of /trickle so far */
};

static long block_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct srv *s = ud;

    (void)st;
    (void)buf;
    (void)max;
    (void)pthread_mutex_lock(&s->lock);
    s->entered = true;
    (void)pthread_cond_broadcast(&s->cond);
    while (!s->release)
        (void)pthread_cond_wait(&s->cond, &s->lock);
    (void)pthread_mutex_unlock(&s->lock);
    return 0;
}

/* "a", then nothing until released, then "b". */
static long trickle_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct srv *s = ud;
    long n = 0;

    (void)st;
    (void)max;
    (void)pthread_mutex_lock(&s->lock);
    if (s->trickled == 0) {
        buf[0] = 'a';
        n = 1;
    } else if (s->trickled == 1) {
        s->entered = true;
        (void)pthread_cond_broadcast(&s->cond);
        while (!s->release)
            (void)pthread_cond_wait(&s->cond, &s->lock);
        buf[0] = 'b';
        n = 1;
    }
    s->trickled++;
    (void)pthread_mutex_unlock(&s->lock);
    return n;
}

static void handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    const char *path = http_request_path(req);

    if (!strcmp(path, "/trickle")) {
        resp->status = 202;
        http_response_header(resp, "X-Trickle", "yes");
        resp->stream = trickle_read;
        resp->stream_blocking = true;
        resp->stream_userdata = ud;
        return;
    }
    if (!strcmp(path, "/block")) {
        resp->status = 200;
        resp->stream = block_read;
        resp->stream_blocking = true;
        resp->stream_userdata = ud;
        return;
    }
    if (!strcmp(path, "/busy")) {
        resp->status = 429;
        http_response_header(resp, "Retry-After", "7");
        strbuf_addstr(&resp->body, "{\"kind\":\"Status\"}");
        return;
    }
    resp->status = 200;
    resp->content_type = "text/plain";
    strbuf_addf(&resp->body, "%s %s", http_request_method(req), path);
    {
        size_t len;
        const char *b = http_request_body(req, &len);
        if (len)
            strbuf_add(&resp->body, b, len);
    }
}

static int setup(void **state)
{
    struct srv *s = xcalloc(1, sizeof(*s));
    struct http_server_opts o = {.host = "127.0.0.1"};

    CHECK(pthread_mutex_init(&s->lock, NULL) == 0);
    CHECK(pthread_cond_init(&s->cond, NULL) == 0);
    if (http_server_start(&o, handle, s, &s->http) < 0)
        return -1;
    (void)snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%u", http_server_port(s->http));
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    struct srv *s = *state;

    (void)pthread_mutex_lock(&s->lock);
    s->release = true;
    (void)pthread_cond_broadcast(&s->cond);
    (void)pthread_mutex_unlock(&s->lock);
    http_server_stop(s->http);
    (void)pthread_cond_destroy(&s->cond);
    (void)pthread_mutex_destroy(&s->lock);
    free(s);
    return 0;
}

static void test_buffered(void **state)
{
    struct srv *s = *state;
    struct http_client *c = NULL;
    struct http_client_opts o = {0};
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct strbuf url = STRBUF_INIT;
    struct http_client_req req = {.method = "PUT", .body = "xyz", .body_len = 3};

    assert_int_equal(http_client_new(&o, &c), 0);
    strbuf_addf(&url, "%s/a", s->url);
    req.url = url.buf;
    assert_int_equal(http_client_do(c, &req, &resp), 0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.body.buf, "PUT /axyz");
    assert_string_equal(resp.content_type, "text/plain");

    /* The same handle, connection reused, for the next request. */
    strbuf_reset(&url);
    strbuf_addf(&url, "%s/busy", s->url);
    req = (struct http_client_req){.method = "GET", .url = url.buf};
    assert_int_equal(http_client_do(c, &req, &resp), 0);
    assert_int_equal(resp.status, 429);
    assert_int_equal(resp.retry_after_s, 7);

    strbuf_reset(&url);
    strbuf_addf(&url, "%s/0123456789", s->url);
    req = (struct http_client_req){.method = "GET", .url = url.buf, .max_body = 8};
    assert_int_equal(http_client_do(c, &req, &resp), -E2BIG);

    http_client_resp_release(&resp);
    strbuf_release(&url);
    http_client_free(c);
}

static int collect(void *ud, long status, const char *data, size_t len)
{
    assert_int_equal(status, 200);
    strbuf_add(ud, data, len);
    return 0;
}

struct blocked {
    struct http_client *c;
    struct http_client_cancel *k;
    const char *url;
    atomic_int result;
};

static void *blocked_get(void *arg)
{
    struct blocked *b = arg;
    struct strbuf sink = STRBUF_INIT;
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct http_client_req req = {
        .method = "GET", .url = b->url, .on_data = collect, .userdata = &sink, .cancel = b->k};

    atomic_store(&b->result, http_client_do(b->c, &req, &resp));
    http_client_resp_release(&resp);
    strbuf_release(&sink);
    return NULL;
}

static void test_stream_and_cancel(void **state)
{
    struct srv *s = *state;
    struct http_client_opts o = {0};
    struct strbuf url = STRBUF_INIT, sink = STRBUF_INIT;
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct blocked b = {.result = 1};
    pthread_t t;

    assert_int_equal(http_client_new(&o, &b.c), 0);
    b.k = http_client_cancel_new();
    strbuf_addf(&url, "%s/streamed", s->url);
    {
        struct http_client_req req = {
            .method = "GET", .url = url.buf, .on_data = collect, .userdata = &sink};
        assert_int_equal(http_client_do(b.c, &req, &resp), 0);
        assert_string_equal(sink.buf, "GET /streamed");
        assert_int_equal(resp.body.len, 0);
    }

    /* A request waiting for bytes that never come returns once the token fires. */
    strbuf_reset(&url);
    strbuf_addf(&url, "%s/block", s->url);
    b.url = url.buf;
    assert_int_equal(pthread_create(&t, NULL, blocked_get, &b), 0);
    (void)pthread_mutex_lock(&s->lock);
    while (!s->entered)
        (void)pthread_cond_wait(&s->cond, &s->lock);
    (void)pthread_mutex_unlock(&s->lock);
    http_client_cancel_fire(b.k);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(atomic_load(&b.result), -ECANCELED);
    assert_true(http_client_cancel_fired(b.k));
    /* And later requests with the fired token do not start. */
    blocked_get(&b);
    assert_int_equal(atomic_load(&b.result), -ECANCELED);

    http_client_cancel_free(b.k);
    http_client_free(b.c);
    http_client_resp_release(&resp);
    strbuf_release(&url);
    strbuf_release(&sink);
}

static void release(struct srv *s)
{
    (void)pthread_mutex_lock(&s->lock);
    s->release = true;
    (void)pthread_cond_broadcast(&s->cond);
    (void)pthread_mutex_unlock(&s->lock);
}

static bool has_header(struct http_client_stream *st, const char *line)
{
    for (const char *const *h = http_client_stream_headers(st); *h; h++)
        if (!strcmp(*h, line))
            return true;
    return false;
}

static void test_pulled(void **state)
{
    struct srv *s = *state;
    struct http_client *c = NULL;
    struct http_client_opts o = {0};
    struct http_client_stream *st = NULL;
    struct strbuf url = STRBUF_INIT, body = STRBUF_INIT, to = STRBUF_INIT;
    struct http_client_req req = {.method = "POST", .body = "xyz", .body_len = 3};
    char buf[4];
    long n;

    assert_int_equal(http_client_new(&o, &c), 0);
    /* Buffered by the server: head, body in small reads, end. A name that does not resolve
     * reaches the server through connect_to. */
    strbuf_addf(&url, "http://backend.test.svc:%s/x", strrchr(s->url, ':') + 1);
    strbuf_addf(&to, "backend.test.svc:%s:127.0.0.1:%s", strrchr(s->url, ':') + 1,
                strrchr(s->url, ':') + 1);
    req.url = url.buf;
    req.connect_to = to.buf;
    assert_int_equal(http_client_open(c, &req, &st), 0);
    assert_int_equal(http_client_stream_status(st), 200);
    assert_true(has_header(st, "Content-Type: text/plain"));
    while ((n = http_client_stream_read(st, buf, sizeof(buf))) > 0)
        strbuf_add(&body, buf, (size_t)n);
    assert_int_equal(n, 0);
    assert_string_equal(body.buf, "POST /xxyz");
    http_client_stream_close(st);

    /* Streamed: the first byte is there before the rest exists. */
    strbuf_reset(&url);
    strbuf_addf(&url, "%s/trickle", s->url);
    req = (struct http_client_req){.method = "GET", .url = url.buf};
    assert_int_equal(http_client_open(c, &req, &st), 0);
    assert_int_equal(http_client_stream_status(st), 202);
    assert_true(has_header(st, "X-Trickle: yes"));
    assert_int_equal(http_client_stream_read(st, buf, sizeof(buf)), 1);
    assert_int_equal(buf[0], 'a');
    release(s);
    assert_int_equal(http_client_stream_read(st, buf, sizeof(buf)), 1);
    assert_int_equal(buf[0], 'b');
    assert_int_equal(http_client_stream_read(st, buf, sizeof(buf)), 0);
    http_client_stream_close(st);

    /* Nothing listening: no stream. */
    req = (struct http_client_req){.method = "GET", .url = "http://127.0.0.1:1/"};
    assert_int_equal(http_client_open(c, &req, &st), -ECONNREFUSED);

    strbuf_release(&url);
    strbuf_release(&to);
    strbuf_release(&body);
    http_client_free(c);
}

struct puller {
    struct http_client_stream *st;
    atomic_long result;
};

static void *pull(void *arg)
{
    struct puller *p = arg;
    char buf[4];

    atomic_store(&p->result, http_client_stream_read(p->st, buf, sizeof(buf)));
    return NULL;
}

/* A read waiting for bytes ends at once when the token fires; close then drops the
 * connection mid-body. */
static void test_pulled_cancel(void **state)
{
    struct srv *s = *state;
    struct http_client *c = NULL;
    struct http_client_opts o = {0};
    struct http_client_cancel *k = http_client_cancel_new();
    struct strbuf url = STRBUF_INIT;
    struct http_client_req req = {.method = "GET", .cancel = k};
    struct puller p = {.result = 1};
    char buf[4];
    pthread_t t;

    assert_int_equal(http_client_new(&o, &c), 0);
    strbuf_addf(&url, "%s/trickle", s->url);
    req.url = url.buf;
    assert_int_equal(http_client_open(c, &req, &p.st), 0);
    assert_int_equal(http_client_stream_read(p.st, buf, sizeof(buf)), 1);
    assert_int_equal(pthread_create(&t, NULL, pull, &p), 0);
    (void)pthread_mutex_lock(&s->lock);
    while (!s->entered)
        (void)pthread_cond_wait(&s->cond, &s->lock);
    (void)pthread_mutex_unlock(&s->lock);
    http_client_cancel_fire(k);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(atomic_load(&p.result), -ECANCELED);
    http_client_stream_close(p.st);
    release(s);
    http_client_cancel_free(k);
    http_client_free(c);
    strbuf_release(&url);
}

static void test_refused(void **state)
{
    struct http_client_opts o = {0};
    struct http_client *c = NULL;
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct http_client_req req = {.method = "GET", .url = "http://127.0.0.1:1/"};

    (void)state;
    assert_int_equal(http_client_new(&o, &c), 0);
    assert_int_equal(http_client_do(c, &req, &resp), -ECONNREFUSED);
    http_client_resp_release(&resp);
    http_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_buffered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_and_cancel, setup, teardown),
        cmocka_unit_test(test_refused),
        cmocka_unit_test_setup_teardown(test_pulled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pulled_cancel, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
