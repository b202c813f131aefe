/*
 * Tests for http/server's event loop (issue 20): connections held without threads, handlers on
 * a worker pool that a blocking handler does not stall, polled streams that wait holding no
 * thread and are woken by http_stream_wake() or their wake time, a client that hangs up on a
 * sleeping stream, the per-address cap and the short timeout of connections never served.
 * Driven over raw sockets with HTTP/1.1 written by hand, so each test controls exactly which
 * connections exist. Every wait polls for its condition with a deadline; no test sleeps and
 * hopes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "http/server.h"

#define DEADLINE_MS 10000

/* The server's state the handlers and streams share with the test. */
struct fixture {
    struct http_server *srv;
    uint16_t port;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool release;               /* /block returns */
    int blocked;                /* handlers inside /block */
    struct http_stream *stream; /* the last /wait stream, once it waited */
    bool data_ready;            /* /wait has its line to send */
    atomic_int streams_freed;
    atomic_int stream_calls;
};

struct wait_stream {
    struct fixture *f;
    bool sent;
    bool timed; /* /timed: wake by time, not by the test */
    int64_t due;
};

static long wait_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct wait_stream *ws = ud;
    struct fixture *f = ws->f;
    long n = HTTP_STREAM_WAIT;

    atomic_fetch_add(&f->stream_calls, 1);
    if (ws->sent)
        return 0;
    if (ws->timed) {
        if (http_monotonic_ms() >= ws->due) {
            ws->sent = true;
            return (long)snprintf(buf, max, "timed\n");
        }
        http_stream_wake_at(st, ws->due);
        return HTTP_STREAM_WAIT;
    }
    CHECK(pthread_mutex_lock(&f->lock) == 0);
    if (f->data_ready) {
        ws->sent = true;
        n = (long)snprintf(buf, max, "woken\n");
    } else {
        f->stream = st;
        (void)pthread_cond_broadcast(&f->cond);
    }
    CHECK(pthread_mutex_unlock(&f->lock) == 0);
    return n;
}

static void wait_free(void *ud)
{
    struct wait_stream *ws = ud;

    atomic_fetch_add(&ws->f->streams_freed, 1);
    CHECK(pthread_mutex_lock(&ws->f->lock) == 0);
    if (ws->f->stream && !ws->timed)
        ws->f->stream = NULL;
    CHECK(pthread_mutex_unlock(&ws->f->lock) == 0);
    free(ws);
}

static void handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    struct fixture *f = ud;
    const char *path = http_request_path(req);

    resp->status = 200;
    resp->content_type = "text/plain";
    if (!strcmp(path, "/block")) {
        CHECK(pthread_mutex_lock(&f->lock) == 0);
        f->blocked++;
        (void)pthread_cond_broadcast(&f->cond);
        while (!f->release)
            CHECK(pthread_cond_wait(&f->cond, &f->lock) == 0);
        f->blocked--;
        CHECK(pthread_mutex_unlock(&f->lock) == 0);
        strbuf_addstr(&resp->body, "released");
    } else if (!strcmp(path, "/wait") || !strcmp(path, "/timed")) {
        struct wait_stream *ws = xcalloc(1, sizeof(*ws));
        ws->f = f;
        ws->timed = path[1] == 't';
        ws->due = http_monotonic_ms() + 300;
        resp->stream = wait_read;
        resp->stream_userdata = ws;
        resp->stream_free = wait_free;
    } else if (!strcmp(path, "/forbidden")) {
        resp->status = 403;
        strbuf_addstr(&resp->body, "no");
    } else {
        strbuf_addstr(&resp->body, "ok");
    }
}

static struct fixture *start(const struct http_server_opts *opts)
{
    struct fixture *f = xcalloc(1, sizeof(*f));

    CHECK(pthread_mutex_init(&f->lock, NULL) == 0);
    CHECK(pthread_cond_init(&f->cond, NULL) == 0);
    assert_int_equal(http_server_start(opts, handle, f, &f->srv), 0);
    f->port = http_server_port(f->srv);
    return f;
}

static void stop(struct fixture *f)
{
    CHECK(pthread_mutex_lock(&f->lock) == 0);
    f->release = true;
    (void)pthread_cond_broadcast(&f->cond);
    CHECK(pthread_mutex_unlock(&f->lock) == 0);
    http_server_stop(f->srv);
    (void)pthread_cond_destroy(&f->cond);
    (void)pthread_mutex_destroy(&f->lock);
    free(f);
}

static int64_t now_ms(void)
{
    return http_monotonic_ms();
}

/* A connection to the server from the loopback address src (127.0.0.x). */
static int dial(uint16_t port, const char *src)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct sockaddr_in from = {.sin_family = AF_INET};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(inet_pton(AF_INET, src, &from.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0);
    assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &a.sin_addr), 1);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static void send_get(int fd, const char *path)
{
    char req[256];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path);

    assert_int_equal(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
}

/* Reads until `want` appears in what the connection sent (true), it closes or the deadline
 * passes (false). */
static bool read_until(int fd, const char *want, struct strbuf *got)
{
    int64_t end = now_ms() + DEADLINE_MS;

    while (!strstr(got->buf ? got->buf : "", want)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char buf[4096];
        ssize_t n;
        int64_t left = end - now_ms();

        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return false;
        n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0)
            return false;
        strbuf_add(got, buf, (size_t)n);
    }
    return true;
}

/* Whether the server closed fd within the deadline (reading and dropping what it sends). */
static bool closed_by_server(int fd, int deadline_ms)
{
    int64_t end = now_ms() + deadline_ms;

    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char buf[512];
        int64_t left = end - now_ms();

        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return false;
        if (recv(fd, buf, sizeof(buf), 0) <= 0)
            return true;
    }
}

/* One request on a new connection from src; the connection is returned open. */
static int request_on_new(uint16_t port, const char *src, const char *path, const char *want)
{
    struct strbuf got = STRBUF_INIT;
    int fd = dial(port, src);

    send_get(fd, path);
    assert_true(read_until(fd, want, &got));
    strbuf_release(&got);
    return fd;
}

static void wait_for(bool (*cond)(struct fixture *f), struct fixture *f)
{
    int64_t end = now_ms() + DEADLINE_MS;

    CHECK(pthread_mutex_lock(&f->lock) == 0);
    while (!cond(f)) {
        struct timespec ts;
        CHECK(clock_gettime(CLOCK_REALTIME, &ts) == 0);
        ts.tv_nsec += 20 * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        (void)pthread_cond_timedwait(&f->cond, &f->lock, &ts);
        assert_true(now_ms() < end);
    }
    CHECK(pthread_mutex_unlock(&f->lock) == 0);
}

static bool one_blocked(struct fixture *f)
{
    return f->blocked == 1;
}

static bool stream_waiting(struct fixture *f)
{
    return f->stream != NULL;
}

/* Many keep-alive connections cost no threads; a blocked handler does not stall the others. */
static void test_connections_and_pool(void **state)
{
    struct fixture *f = start(&(struct http_server_opts){.host = "127.0.0.1"});
    struct http_server_stats st;
    int fds[200], blocked;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
        fds[i] = request_on_new(f->port, "127.0.0.1", "/", "ok");
    http_server_stats(f->srv, &st);
    assert_int_equal(st.connections, ARRAY_SIZE(fds));
    assert_true(st.workers <= 8); /* the pool's minimum: connections are not threads */
    /* A handler that blocks holds one worker; a request on another connection is served. */
    blocked = dial(f->port, "127.0.0.1");
    send_get(blocked, "/block");
    wait_for(one_blocked, f);
    {
        struct strbuf got = STRBUF_INIT;
        send_get(fds[0], "/");
        assert_true(read_until(fds[0], "ok", &got));
        strbuf_release(&got);
    }
    CHECK(pthread_mutex_lock(&f->lock) == 0);
    f->release = true;
    (void)pthread_cond_broadcast(&f->cond);
    CHECK(pthread_mutex_unlock(&f->lock) == 0);
    {
        struct strbuf got = STRBUF_INIT;
        assert_true(read_until(blocked, "released", &got));
        strbuf_release(&got);
    }
    (void)close(blocked);
    for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
        (void)close(fds[i]);
    stop(f);
}

/* A stream that waits holds no thread and goes on when woken; a wake before the wait is kept. */
static void test_stream_wake(void **state)
{
    struct fixture *f = start(&(struct http_server_opts){.host = "127.0.0.1"});
    struct http_server_stats st;
    struct strbuf got = STRBUF_INIT;
    int fd = dial(f->port, "127.0.0.1");
    int64_t end = now_ms() + DEADLINE_MS;
    (void)state;

    send_get(fd, "/wait");
    wait_for(stream_waiting, f);
    do {
        http_server_stats(f->srv, &st);
        assert_true(now_ms() < end);
    } while (st.sleeping_streams != 1);
    assert_int_equal(st.queued, 0);
    CHECK(pthread_mutex_lock(&f->lock) == 0);
    f->data_ready = true;
    http_stream_wake(f->stream);
    CHECK(pthread_mutex_unlock(&f->lock) == 0);
    assert_true(read_until(fd, "woken", &got));
    /* The stream ended (0): the chunked body's last chunk follows. */
    assert_true(read_until(fd, "0\r\n\r\n", &got));
    (void)close(fd);
    strbuf_release(&got);
    stop(f);
}

/* A stream woken by its own wake time, with nobody calling http_stream_wake(). */
static void test_stream_wake_at(void **state)
{
    struct fixture *f = start(&(struct http_server_opts){.host = "127.0.0.1"});
    struct strbuf got = STRBUF_INIT;
    int fd = dial(f->port, "127.0.0.1");
    (void)state;

    send_get(fd, "/timed");
    assert_true(read_until(fd, "timed", &got));
    /* Parked between: a handful of calls, not a busy loop over 300 ms. */
    assert_true(atomic_load(&f->stream_calls) <= 5);
    (void)close(fd);
    strbuf_release(&got);
    stop(f);
}

/* A client that hangs up on a sleeping stream: the stream is freed without being woken. */
static void test_stream_hangup(void **state)
{
    struct fixture *f = start(&(struct http_server_opts){.host = "127.0.0.1"});
    int fd = dial(f->port, "127.0.0.1");
    int64_t end = now_ms() + DEADLINE_MS;
    (void)state;

    send_get(fd, "/wait");
    wait_for(stream_waiting, f);
    (void)close(fd);
    while (atomic_load(&f->streams_freed) != 1)
        assert_true(now_ms() < end);
    stop(f);
}

/* Stopping the server ends sleeping streams and frees them. */
static void test_stop_with_sleeping_streams(void **state)
{
    struct fixture *f = start(&(struct http_server_opts){.host = "127.0.0.1"});
    int fds[20];
    int64_t end = now_ms() + DEADLINE_MS;
    struct http_server_stats st;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
        fds[i] = dial(f->port, "127.0.0.1");
        send_get(fds[i], "/wait");
    }
    do {
        http_server_stats(f->srv, &st);
        assert_true(now_ms() < end);
    } while (st.sleeping_streams != ARRAY_SIZE(fds));
    http_server_stop(f->srv);
    assert_int_equal(atomic_load(&f->streams_freed), ARRAY_SIZE(fds));
    f->srv = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
        (void)close(fds[i]);
    (void)pthread_cond_destroy(&f->cond);
    (void)pthread_mutex_destroy(&f->lock);
    free(f);
}

/* One address cannot take more than its share; another address still gets in. */
static void test_per_address_cap(void **state)
{
    struct fixture *f =
        start(&(struct http_server_opts){.host = "127.0.0.1", .max_per_address = 5});
    int fds[5], extra, other;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
        fds[i] = request_on_new(f->port, "127.0.0.2", "/", "ok");
    extra = dial(f->port, "127.0.0.2");
    send_get(extra, "/");
    assert_true(closed_by_server(extra, DEADLINE_MS));
    other = request_on_new(f->port, "127.0.0.3", "/", "ok");
    (void)close(other);
    (void)close(extra);
    for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
        (void)close(fds[i]);
    stop(f);
}

/* A connection that never got a successful answer is closed after first_timeout; one that did
 * keeps the long idle timeout. */
static void test_first_timeout(void **state)
{
    struct fixture *f = start(&(struct http_server_opts){.host = "127.0.0.1", .first_timeout = 1});
    int idle = dial(f->port, "127.0.0.1");
    int refused = request_on_new(f->port, "127.0.0.1", "/forbidden", "no");
    int served = request_on_new(f->port, "127.0.0.1", "/", "ok");
    (void)state;

    assert_true(closed_by_server(idle, DEADLINE_MS));
    assert_true(closed_by_server(refused, DEADLINE_MS));
    /* Well past the first timeout, the served connection still answers. */
    assert_false(closed_by_server(served, 2500));
    {
        struct strbuf got = STRBUF_INIT;
        send_get(served, "/");
        assert_true(read_until(served, "ok", &got));
        strbuf_release(&got);
    }
    (void)close(idle);
    (void)close(refused);
    (void)close(served);
    stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connections_and_pool),
        cmocka_unit_test(test_stream_wake),
        cmocka_unit_test(test_stream_wake_at),
        cmocka_unit_test(test_stream_hangup),
        cmocka_unit_test(test_stop_with_sleeping_streams),
        cmocka_unit_test(test_per_address_cap),
        cmocka_unit_test(test_first_timeout),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
