/*
 * Tests for http/server and http/tls: a real server on 127.0.0.1 with a port the kernel picks,
 * driven by libcurl. Plain HTTP echoes method, path, query, headers and body; every header and
 * query parameter can be walked (what a proxy forwards), response header names are the
 * handler's own, a Content-Type header stands in for content_type; oversized bodies get 413;
 * over TLS the serving certificate verifies against the generated CA, and client certificates
 * yield their CN and O as the identity only when the client CA signed them.
 */
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "http/tls.h"

/* Echoes the request as JSON-ish text the tests compare against. */
static void echo(const struct http_request *req, struct http_response *resp, void *ud)
{
    const char *x = http_request_header(req, "X-Test");
    const char *q = http_request_query(req, "watch");
    const char *user = NULL;
    const char *const *groups = NULL;
    size_t len;
    const char *body = http_request_body(req, &len);
    int cert = http_request_client_cert(req, &user, &groups);
    (void)ud;

    resp->status = 200;
    resp->content_type = "text/plain";
    strbuf_addf(&resp->body, "%s %s watch=%s x=%s body=%.*s cert=%d", http_request_method(req),
                http_request_path(req), q ? q : "-", x ? x : "-", (int)len, body, cert);
    if (cert == 0) {
        strbuf_addf(&resp->body, " user=%s", user);
        for (const char *const *g = groups; *g; g++)
            strbuf_addf(&resp->body, " group=%s", *g);
    }
    http_response_header(resp, "X-Reply", "yes");
}

static int add_kv(void *ud, const char *name, const char *value)
{
    struct strbuf *sb = ud;

    strbuf_addf(sb, "[%s=%s]", name, value ? value : "(null)");
    return 0;
}

/* Lists every query parameter and the X- headers, in a header of a name made up at run time. */
static void walk(const struct http_request *req, struct http_response *resp, void *ud)
{
    struct strbuf q = STRBUF_INIT, h = STRBUF_INIT, name = STRBUF_INIT;
    (void)ud;

    http_request_foreach_query(req, add_kv, &q);
    http_request_foreach_header(req, add_kv, &h);
    resp->status = 201;
    resp->content_type = NULL;
    strbuf_addf(&name, "X-%s", "Made-Up");
    http_response_header(resp, name.buf, "1");
    http_response_header(resp, "Content-Type", "application/vnd.x+json");
    strbuf_addf(&resp->body, "%s|%s", q.buf, strstr(h.buf, "[X-Test=") ? "x-test" : "none");
    strbuf_release(&q);
    strbuf_release(&h);
    strbuf_release(&name);
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    if (!strncmp(p, "X-Reply: yes", 12))
        *(int *)ud = 1;
    return size * n;
}

struct call {
    const char *url, *method, *body;
    const char *cafile, *certfile, *keyfile;
    long code;
    struct strbuf out;
    int saw_reply_header;
};

static CURLcode do_call(struct call *c)
{
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = curl_slist_append(NULL, "X-Test: hello");
    CURLcode rc;

    strbuf_init(&c->out);
    (void)curl_easy_setopt(h, CURLOPT_URL, c->url);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &c->out);
    (void)curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    (void)curl_easy_setopt(h, CURLOPT_HEADERDATA, &c->saw_reply_header);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    if (c->method)
        (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
    if (c->body)
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
    if (c->cafile)
        (void)curl_easy_setopt(h, CURLOPT_CAINFO, c->cafile);
    if (c->certfile) {
        (void)curl_easy_setopt(h, CURLOPT_SSLCERT, c->certfile);
        (void)curl_easy_setopt(h, CURLOPT_SSLKEY, c->keyfile);
    }
    rc = curl_easy_perform(h);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return rc;
}

static void test_plain(void **state)
{
    struct http_server_opts o = {.host = "127.0.0.1", .port = 0, .max_body = 64};
    struct http_server *s = NULL;
    char url[128];
    struct call c = {0};
    uint16_t port;
    (void)state;

    assert_int_equal(http_server_start(&o, echo, NULL, &s), 0);
    port = http_server_port(s);
    assert_true(port > 0);

    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/pods?watch=1", port);
    c.url = url;
    assert_int_equal(do_call(&c), CURLE_OK);
    assert_int_equal(c.code, 200);
    assert_string_equal(c.out.buf, "GET /api/v1/pods watch=1 x=hello body= cert=-2");
    assert_true(c.saw_reply_header);
    strbuf_release(&c.out);

    /* A percent-encoded path arrives decoded; a body arrives whole. */
    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/a%%20b", port);
    c = (struct call){.url = url, .method = "PUT", .body = "{\"k\":1}"};
    assert_int_equal(do_call(&c), CURLE_OK);
    assert_int_equal(c.code, 200);
    assert_string_equal(c.out.buf, "PUT /a b watch=- x=hello body={\"k\":1} cert=-2");
    strbuf_release(&c.out);

    /* Bodies past max_body: 413 with a Status, the handler never runs. */
    c = (struct call){.url = url,
                      .method = "POST",
                      .body = "0123456789012345678901234567890123456789012345678901234567890123"
                              "456789"};
    assert_int_equal(do_call(&c), CURLE_OK);
    assert_int_equal(c.code, 413);
    assert_non_null(strstr(c.out.buf, "\"reason\":\"RequestEntityTooLarge\""));
    strbuf_release(&c.out);

    http_server_stop(s);
}

static size_t keep_header(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static void test_walk_and_headers(void **state)
{
    struct http_server_opts o = {.host = "127.0.0.1"};
    struct http_server *s = NULL;
    struct strbuf out = STRBUF_INIT, hdrs = STRBUF_INIT;
    struct curl_slist *h = curl_slist_append(NULL, "X-Test: 1");
    char url[128];
    CURL *c = curl_easy_init();
    long code = 0;
    (void)state;

    assert_int_equal(http_server_start(&o, walk, NULL, &s), 0);
    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/p?a=1&b=x%%20y&flag&a=2",
                   http_server_port(s));
    (void)curl_easy_setopt(c, CURLOPT_URL, url);
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    (void)curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, keep_header);
    (void)curl_easy_setopt(c, CURLOPT_HEADERDATA, &hdrs);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    assert_int_equal(code, 201);
    assert_string_equal(out.buf, "[a=1][b=x y][flag=(null)][a=2]|x-test");
    assert_non_null(strstr(hdrs.buf, "X-Made-Up: 1\r\n"));
    assert_non_null(strstr(hdrs.buf, "Content-Type: application/vnd.x+json\r\n"));
    assert_null(strstr(hdrs.buf, "application/json"));
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    strbuf_release(&out);
    strbuf_release(&hdrs);
    http_server_stop(s);
}

/* Sends a request with n extra headers of vlen bytes each (and a body when given); returns the
 * status, the body in *out, and whether the handler ran in *ran. */
static long call_with_headers(const char *url, int n, size_t vlen, const char *body,
                              struct strbuf *out)
{
    struct curl_slist *h = NULL;
    struct strbuf line = STRBUF_INIT;
    CURL *c = curl_easy_init();
    long code = 0;

    for (int i = 0; i < n; i++) {
        strbuf_reset(&line);
        strbuf_addf(&line, "X-Flood-%d: ", i);
        for (size_t k = 0; k < vlen; k++)
            strbuf_addch(&line, 'v');
        h = curl_slist_append(h, line.buf);
    }
    (void)curl_easy_setopt(c, CURLOPT_URL, url);
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    (void)curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    if (body)
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    strbuf_release(&line);
    return code;
}

/* Too many header fields, or too many header bytes: 431, the handler never runs. A request
 * right at the count limit is served whole. */
static void test_header_limits(void **state)
{
    struct http_server_opts o = {.host = "127.0.0.1"};
    struct http_server *s = NULL;
    struct strbuf out = STRBUF_INIT;
    char url[128];
    (void)state;

    assert_int_equal(http_server_start(&o, walk, NULL, &s), 0);
    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/p", http_server_port(s));
    /* curl adds Host and Accept */
    assert_int_equal(call_with_headers(url, HTTP_MAX_REQUEST_HEADERS - 2, 1, NULL, &out), 201);
    assert_string_equal(out.buf, "|none");
    strbuf_reset(&out);
    assert_int_equal(call_with_headers(url, HTTP_MAX_REQUEST_HEADERS - 1, 1, NULL, &out), 431);
    assert_non_null(strstr(out.buf, "\"reason\":\"RequestHeaderFieldsTooLarge\""));
    assert_non_null(strstr(out.buf, "has 257 header fields, more than 256"));
    strbuf_reset(&out);
    /* with a body, which is read and dropped */
    assert_int_equal(call_with_headers(url, 300, 1, "{\"a\":1}", &out), 431);
    strbuf_reset(&out);
    /* 100 headers of 1 KiB: past the connection's 64 KiB memory */
    assert_int_equal(call_with_headers(url, 100, 1024, NULL, &out), 431);
    strbuf_release(&out);
    http_server_stop(s);
}

static void test_bad_options(void **state)
{
    struct http_server *s = NULL;
    struct http_server_opts bad_host = {.host = "not a host name!", .port = 0};
    struct http_server_opts half_tls = {.host = "127.0.0.1", .cert_pem = "x"};
    struct http_server_opts bad_cert = {.host = "127.0.0.1", .cert_pem = "x", .key_pem = "y"};
    (void)state;

    assert_int_equal(http_server_start(&bad_host, echo, NULL, &s), -EINVAL);
    assert_int_equal(http_server_start(&half_tls, echo, NULL, &s), -EINVAL);
    assert_int_equal(http_server_start(&bad_cert, echo, NULL, &s), -EINVAL);
    assert_null(s);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void test_tls_and_client_certs(void **state)
{
    static const char *const sans[] = {"localhost", "127.0.0.1", NULL};
    static const char *const groups[] = {"system:nodes", "team-a", NULL};
    struct tls_pem ca = {0}, other_ca = {0}, srv = {0}, cli = {0}, bad_cli = {0};
    struct http_server *s = NULL;
    struct http_server_opts o = {.host = "127.0.0.1"};
    char dir[] = "/tmp/koord-tls-XXXXXX", cafile[64], certfile[64], keyfile[64], badcert[64],
         badkey[64], url[128];
    struct call c;
    (void)state;

    assert_non_null(mkdtemp(dir));
    assert_int_equal(tls_make_ca("koord-ca", 365, &ca), 0);
    assert_int_equal(tls_make_ca("someone-else", 365, &other_ca), 0);
    assert_int_equal(tls_make_cert(&ca, "koord-apiserver", NULL, sans, true, 365, &srv), 0);
    assert_int_equal(tls_make_cert(&ca, "system:node:n1", groups, NULL, false, 365, &cli), 0);
    assert_int_equal(tls_make_cert(&other_ca, "intruder", NULL, NULL, false, 365, &bad_cli), 0);
    {
        static const char *const bad_sans[] = {"has space", NULL};
        struct tls_pem x = {0};
        assert_int_equal(tls_make_cert(&ca, "x", NULL, bad_sans, true, 1, &x), -EINVAL);
    }
    (void)snprintf(cafile, sizeof(cafile), "%s/ca.crt", dir);
    (void)snprintf(certfile, sizeof(certfile), "%s/c.crt", dir);
    (void)snprintf(keyfile, sizeof(keyfile), "%s/c.key", dir);
    (void)snprintf(badcert, sizeof(badcert), "%s/b.crt", dir);
    (void)snprintf(badkey, sizeof(badkey), "%s/b.key", dir);
    write_file(cafile, ca.cert);
    write_file(certfile, cli.cert);
    write_file(keyfile, cli.key);
    write_file(badcert, bad_cli.cert);
    write_file(badkey, bad_cli.key);

    o.cert_pem = srv.cert;
    o.key_pem = srv.key;
    o.client_ca_pem = ca.cert;
    assert_int_equal(http_server_start(&o, echo, NULL, &s), 0);
    (void)snprintf(url, sizeof(url), "https://127.0.0.1:%u/healthz", http_server_port(s));

    /* No client certificate: served, no identity. */
    c = (struct call){.url = url, .cafile = cafile};
    assert_int_equal(do_call(&c), CURLE_OK);
    assert_int_equal(c.code, 200);
    assert_string_equal(c.out.buf, "GET /healthz watch=- x=hello body= cert=-2");
    strbuf_release(&c.out);

    /* A client certificate from the cluster CA: its CN and O become the identity. */
    c = (struct call){.url = url, .cafile = cafile, .certfile = certfile, .keyfile = keyfile};
    assert_int_equal(do_call(&c), CURLE_OK);
    assert_string_equal(c.out.buf, "GET /healthz watch=- x=hello body= cert=0 "
                                   "user=system:node:n1 group=system:nodes group=team-a");
    strbuf_release(&c.out);

    /* One from another CA: refused as an identity (-EACCES). */
    c = (struct call){.url = url, .cafile = cafile, .certfile = badcert, .keyfile = badkey};
    assert_int_equal(do_call(&c), CURLE_OK);
    assert_string_equal(c.out.buf, "GET /healthz watch=- x=hello body= cert=-13");
    strbuf_release(&c.out);

    /* The server certificate does not verify against a foreign CA. */
    write_file(cafile, other_ca.cert);
    c = (struct call){.url = url, .cafile = cafile};
    assert_int_not_equal(do_call(&c), CURLE_OK);
    strbuf_release(&c.out);

    http_server_stop(s);
    for (const char *p = cafile, *const *list = (const char *const[]){certfile, keyfile, badcert,
                                                                      badkey, NULL};
         p; p = *list++)
        (void)unlink(p);
    (void)rmdir(dir);
    tls_pem_release(&ca);
    tls_pem_release(&other_ca);
    tls_pem_release(&srv);
    tls_pem_release(&cli);
    tls_pem_release(&bad_cli);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_walk_and_headers),
        cmocka_unit_test(test_header_limits),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_tls_and_client_certs),
    };
    int r;

    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
