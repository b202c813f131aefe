/*
 * Tests for the status splice of apiserver.c (apiserver_opts.status_splice, what koord manager
 * serves NodeMetric reports with) against objects planted in a real memory store: the splice
 * replaces the stored status only when status is the stored object's last member, which it
 * knows from the members in front of it; a stored object with a member after status, or
 * without one of the kind's other properties, takes the decoding path and loses nothing.
 */
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

#define AV   "metrics.koordinator.sh/v1alpha1"
#define PATH "/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/"
#define KEY  "/metrics.koordinator.sh/nodemetrics//"
#define META                                                                                       \
    "\"metadata\":{\"name\":\"n\",\"uid\":\"u-1\",\"creationTimestamp\":\"2024-05-01T10:00:00Z\"}"
#define SPEC "\"spec\":{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300}}"
#define OLD  "\"status\":{\"updateTime\":\"2024-05-01T10:00:00Z\"}"
#define REPORT                                                                                     \
    "{\"updateTime\":\"2024-05-01T10:05:00Z\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":{"      \
    "\"cpu\":\"1\"}}}}"

struct env {
    struct store *store;
    struct apiserver *api;
    struct http_server *http;
    char base[64];
};

static int setup(void **state)
{
    static const struct api_kind *kinds[2];
    struct env *e = xcalloc(1, sizeof(*e));
    struct http_server_opts o = {.host = "127.0.0.1"};

    kinds[0] = api_kind_find(AV, "NodeMetric");
    if (!kinds[0] || store_memory_new(&(struct store_memory_opts){.epoch = 1}, &e->store) < 0 ||
        apiserver_new_opts(e->store,
                           &(struct apiserver_opts){.kinds = kinds, .status_splice = true},
                           &e->api) < 0 ||
        http_server_start(&o, apiserver_handle, e->api, &e->http) < 0)
        return -1;
    (void)snprintf(e->base, sizeof(e->base), "http://127.0.0.1:%u", http_server_port(e->http));
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    http_server_stop(e->http);
    apiserver_free(e->api);
    store_close(e->store);
    free(e);
    return 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

/* One request; the HTTP code, the body into out. */
static long call(struct env *e, const char *method, const char *path, const char *body,
                 struct strbuf *out)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    long code = 0;

    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    if (body)
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    return code;
}

static unsigned long splices(struct env *e)
{
    static const char name[] = "\nkoord_apiserver_status_splice_writes_total ";
    struct strbuf m = STRBUF_INIT;
    const char *p;
    unsigned long n;

    apiserver_render_metrics(e->api, &m);
    p = strstr(m.buf, name);
    assert_non_null(p);
    n = strtoul(p + strlen(name), NULL, 10);
    strbuf_release(&m);
    return n;
}

/*
 * Plants the stored object {apiVersion, kind, <members>} for node n, PUTs the report to its
 * status, and checks the answer was spliced (or not), the stored status is the report, and
 * every planted member other than status is still there.
 */
static void report_over_at(struct env *e, const char *members, bool spliced, int line)
{
    struct strbuf obj = STRBUF_INIT, body = STRBUF_INIT, out = STRBUF_INIT;
    unsigned long before = splices(e);
    cJSON *planted, *got, *m;
    long code;

    strbuf_addf(&obj, "{\"apiVersion\":\"" AV "\",\"kind\":\"NodeMetric\",%s}", members);
    (void)store_delete(e->store, KEY "n", 0, NULL, NULL);
    assert_int_equal(store_create(e->store, KEY "n", obj.buf, obj.len, NULL), 0);
    strbuf_addstr(&body, "{\"apiVersion\":\"" AV "\",\"kind\":\"NodeMetric\"," META
                         ",\"status\":" REPORT "}");
    code = call(e, "PUT", PATH "n/status", body.buf, &out);
    if (code != 200 || splices(e) != before + (spliced ? 1 : 0))
        fail_msg("line %d: HTTP %ld, %lu splices (want %d more): %s", line, code,
                 splices(e) - before, spliced, out.buf);
    strbuf_reset(&out);
    assert_int_equal(call(e, "GET", PATH "n", NULL, &out), 200);
    got = J(out.buf);
    planted = J(obj.buf);
    assert_json_eq_at(cJSON_GetObjectItemCaseSensitive(got, "status"), REPORT, line);
    cJSON_ArrayForEach(m, planted)
    {
        if (!strcmp(m->string, "status") || !strcmp(m->string, "metadata"))
            continue;
        if (!cJSON_Compare(m, cJSON_GetObjectItemCaseSensitive(got, m->string), true))
            fail_msg("line %d: %s lost: %s", line, m->string, out.buf);
    }
    cJSON_Delete(got);
    cJSON_Delete(planted);
    strbuf_release(&obj);
    strbuf_release(&body);
    strbuf_release(&out);
}
#define report_over(e, members, spliced) report_over_at((e), (members), (spliced), __LINE__)

static void test_splice_only_when_status_is_last(void **state)
{
    struct env *e = *state;

    /* canonical: every other property, then status */
    report_over(e, META "," SPEC "," OLD, true);
    /* spec after status: replacing up to the closing brace would drop it */
    report_over(e, META "," OLD "," SPEC, false);
    /* no spec: nothing shows that status is last */
    report_over(e, META "," OLD, false);
    /* and again canonical, after the decoding path wrote it */
    report_over(e, META "," SPEC "," OLD, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_splice_only_when_status_is_last, setup, teardown),
    };
    int r;

    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
