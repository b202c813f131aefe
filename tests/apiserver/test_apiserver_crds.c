/*
 * Tests for the CustomResourceDefinition paths of apiserver/apiserver.c over real HTTP and a real
 * SQLite store (issue 17 section 2), following apiextensions-apiserver:
 *  - a hand-written CRD whose schema lists neither apiVersion, kind nor metadata still stores
 *    its objects with all three (kube never prunes them), metadata validated as ObjectMeta;
 *  - spec.names defaults (singular, listKind) and the status kube's CRD controllers write
 *    (NamesAccepted, Established, acceptedNames, storedVersions);
 *  - several versions with conversion None: each served version answers the same objects with
 *    its own apiVersion, unserved ones are not served;
 *  - additionalPrinterColumns in Tables (priority and format kept), x-kubernetes-list-type
 *    set/map checks, and the Warning that x-kubernetes-validations rules are not enforced.
 */
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

struct env {
    char dir[64];
    char db[128];
    struct store *backend, *store; /* SQLite, and the watch cache over it */
    struct apiserver *api;
    struct http_server *http;
    char base[64];
};

static void env_start(struct env *e)
{
    struct http_server_opts o = {.host = "127.0.0.1"};

    assert_int_equal(store_sqlite_open(e->db, 64, &e->backend), 0);
    assert_int_equal(store_cache_new(e->backend, &e->store), 0);
    assert_int_equal(apiserver_new(e->store, &e->api), 0);
    assert_int_equal(http_server_start(&o, apiserver_handle, e->api, &e->http), 0);
    (void)snprintf(e->base, sizeof(e->base), "http://127.0.0.1:%u", http_server_port(e->http));
}

static void env_stop(struct env *e)
{
    apiserver_stop_watches(e->api);
    http_server_stop(e->http);
    apiserver_free(e->api);
    store_close(e->store);
    store_close(e->backend);
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    (void)snprintf(e->dir, sizeof(e->dir), "/tmp/koord-crd-XXXXXX");
    if (!mkdtemp(e->dir))
        return -1;
    (void)snprintf(e->db, sizeof(e->db), "%s/db", e->dir);
    env_start(e);
    *state = e;
    return 0;
}

static int teardown(void **state)
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

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    if (!strncasecmp(p, "Warning:", 8))
        strbuf_add(ud, p, size * n);
    return size * n;
}

/* One request with a JSON body (or none) and an optional Accept; returns the HTTP code, *ret
 * the parsed body, warnings the Warning header lines. */
static long req(struct env *e, const char *method, const char *path, const char *accept,
                const char *body, cJSON **ret, struct strbuf *warnings)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, out = STRBUF_INIT, acc = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    long code = 0;

    if (accept) {
        strbuf_addf(&acc, "Accept: %s", accept);
        hdrs = curl_slist_append(hdrs, acc.buf);
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
    return code;
}

/* The value at a dotted path ("status.conditions.0.type"; numbers index arrays). */
static const cJSON *at(const cJSON *o, const char *path)
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

static void expect_str(const cJSON *o, const char *path, const char *want)
{
    const char *got = cJSON_GetStringValue(at(o, path));
    if (!got || strcmp(got, want)) {
        char *txt = cJSON_PrintUnformatted(o);
        print_error("%s\n", txt ? txt : "(null)");
        cJSON_free(txt);
        fail_msg("%s = %s, want %s", path, got ? got : "(absent)", want);
    }
}

#define CRDS "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

/* A CRD as people write it by hand: the schema describes spec only. */
static const char widget_crd[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.example.com\"},"
    "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
    "\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\",\"listKind\":"
    "\"WidgetList\"},"
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"
    "\"spec\":{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\"}}}}}}}]}}";

static void create_widget_crd(struct env *e)
{
    cJSON *b = NULL;

    assert_int_equal(req(e, "POST", CRDS, NULL, widget_crd, &b, NULL), 201);
    cJSON_Delete(b);
}

static void test_root_members_never_pruned(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    create_widget_crd(e);
    assert_int_equal(req(e, "POST", "/apis/example.com/v1/namespaces/default/widgets", NULL,
                         "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                         "\"metadata\":{\"name\":\"w1\",\"labels\":{\"app\":\"x\"}},"
                         "\"spec\":{\"size\":3,\"junk\":1}}",
                         &b, NULL),
                     201);
    expect_str(b, "metadata.name", "w1");
    cJSON_Delete(b);
    assert_int_equal(
        req(e, "GET", "/apis/example.com/v1/namespaces/default/widgets/w1", NULL, NULL, &b, NULL),
        200);
    expect_str(b, "apiVersion", "example.com/v1");
    expect_str(b, "kind", "Widget");
    expect_str(b, "metadata.name", "w1");
    expect_str(b, "metadata.namespace", "default");
    expect_str(b, "metadata.labels.app", "x");
    assert_non_null(cJSON_GetStringValue(at(b, "metadata.uid")));
    assert_int_equal(at(b, "spec.size")->valueint, 3);
    assert_null(at(b, "spec.junk")); /* the schema's own members are still pruned */
    cJSON_Delete(b);

    /* metadata is ObjectMeta: a bad label is refused with its path. */
    assert_int_equal(req(e, "POST", "/apis/example.com/v1/namespaces/default/widgets", NULL,
                         "{\"metadata\":{\"name\":\"w2\",\"labels\":{\"bad key!\":\"x\"}}}", &b,
                         NULL),
                     422);
    expect_str(b, "details.causes.0.field", "metadata.labels");
    cJSON_Delete(b);
}

/* The condition of type in a CRD's status, or NULL. */
static const cJSON *condition(const cJSON *crd, const char *type)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, at(crd, "status.conditions"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), type))
            return c;
    }
    return NULL;
}

static void test_names_defaults_and_status(void **state)
{
    struct env *e = *state;
    const char *crd = "{\"apiVersion\":\"apiextensions.k8s.io/v1\","
                      "\"kind\":\"CustomResourceDefinition\","
                      "\"metadata\":{\"name\":\"gadgets.example.com\"},"
                      "\"spec\":{\"group\":\"example.com\",\"scope\":\"Cluster\","
                      "\"names\":{\"plural\":\"gadgets\",\"kind\":\"Gadget\"},"
                      "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
                      "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
                      "\"x-kubernetes-preserve-unknown-fields\":true}}}]},"
                      "\"status\":{\"storedVersions\":[\"bogus\"]}}";
    cJSON *b = NULL;
    char *lt;

    assert_int_equal(req(e, "POST", CRDS, NULL, crd, &b, NULL), 201);
    expect_str(b, "spec.names.singular", "gadget");
    expect_str(b, "spec.names.listKind", "GadgetList");
    expect_str(b, "spec.conversion.strategy", "None");
    cJSON_Delete(b);

    /* The status is what kube's controllers write; a client's status on create is dropped. */
    assert_int_equal(req(e, "GET", CRDS "/gadgets.example.com", NULL, NULL, &b, NULL), 200);
    assert_non_null(condition(b, "NamesAccepted"));
    expect_str(condition(b, "NamesAccepted"), "status", "True");
    expect_str(condition(b, "NamesAccepted"), "reason", "NoConflicts");
    expect_str(condition(b, "Established"), "status", "True");
    expect_str(condition(b, "Established"), "reason", "InitialNamesAccepted");
    expect_str(b, "status.acceptedNames.kind", "Gadget");
    expect_str(b, "status.acceptedNames.listKind", "GadgetList");
    expect_str(b, "status.acceptedNames.plural", "gadgets");
    assert_int_equal(cJSON_GetArraySize(at(b, "status.storedVersions")), 1);
    expect_str(b, "status.storedVersions.0", "v1");
    lt = xstrdup(cJSON_GetStringValue(at(condition(b, "Established"), "lastTransitionTime")));
    cJSON_Delete(b);

    /* The defaulted names are served: discovery and the singular name. */
    assert_int_equal(req(e, "GET", "/apis/example.com/v1", NULL, NULL, &b, NULL), 200);
    expect_str(b, "resources.0.singularName", "gadget");
    cJSON_Delete(b);
    assert_int_equal(req(e, "POST", "/apis/example.com/v1/gadgets", NULL,
                         "{\"metadata\":{\"name\":\"g1\"},\"color\":\"red\"}", &b, NULL),
                     201);
    cJSON_Delete(b);
    assert_int_equal(req(e, "GET", "/apis/example.com/v1/gadget/g1", NULL, NULL, &b, NULL), 200);
    expect_str(b, "color", "red");
    cJSON_Delete(b);

    /* An update keeps the conditions' transition times (they stay True). */
    assert_int_equal(req(e, "GET", CRDS "/gadgets.example.com", NULL, NULL, &b, NULL), 200);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(b, "metadata"), "resourceVersion");
    cJSON_AddItemToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "names"),
                          "shortNames", J("[\"gd\"]"));
    {
        char *txt = cJSON_PrintUnformatted(b);
        cJSON *u = NULL;
        assert_int_equal(req(e, "PUT", CRDS "/gadgets.example.com", NULL, txt, &u, NULL), 200);
        expect_str(u, "status.acceptedNames.shortNames.0", "gd");
        expect_str(condition(u, "Established"), "lastTransitionTime", lt);
        assert_int_equal(cJSON_GetArraySize(at(u, "status.conditions")), 2);
        cJSON_Delete(u);
        cJSON_free(txt);
    }
    cJSON_Delete(b);
    free(lt);
}

/* One CRD, three versions: v1beta1 served, v1 served and stored, v1alpha1 not served. */
static const char multi_crd[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"things.example.com\"},"
    "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
    "\"names\":{\"plural\":\"things\",\"kind\":\"Thing\"},\"conversion\":{\"strategy\":\"None\"},"
    "\"versions\":["
    "{\"name\":\"v1beta1\",\"served\":true,\"storage\":false,\"schema\":{\"openAPIV3Schema\":"
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":"
    "{\"n\":{\"type\":\"integer\"}}}}}}},"
    "{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":"
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":"
    "{\"n\":{\"type\":\"integer\"}}}}}}},"
    "{\"name\":\"v1alpha1\",\"served\":false,\"storage\":false,\"schema\":{\"openAPIV3Schema\":"
    "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* GET path as text. */
static long get_text(struct env *e, const char *path, struct strbuf *out)
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

static void test_several_versions(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;
    struct strbuf txt = STRBUF_INIT;

    assert_int_equal(req(e, "POST", CRDS, NULL, multi_crd, &b, NULL), 201);
    cJSON_Delete(b);
    /* The preferred version is the highest by kube's version priority. */
    assert_int_equal(req(e, "GET", "/apis/example.com", NULL, NULL, &b, NULL), 200);
    expect_str(b, "preferredVersion.version", "v1");
    assert_int_equal(cJSON_GetArraySize(at(b, "versions")), 2);
    cJSON_Delete(b);
    assert_int_equal(
        req(e, "GET", "/apis/example.com/v1alpha1/namespaces/default/things", NULL, NULL, &b, NULL),
        404);
    cJSON_Delete(b);

    /* Written at v1beta1, read at either served version with that version's apiVersion. */
    assert_int_equal(req(e, "POST", "/apis/example.com/v1beta1/namespaces/default/things", NULL,
                         "{\"metadata\":{\"name\":\"t1\",\"labels\":{\"a\":\"b\"}},"
                         "\"spec\":{\"n\":1}}",
                         &b, NULL),
                     201);
    expect_str(b, "apiVersion", "example.com/v1beta1");
    cJSON_Delete(b);
    for (int i = 0; i < 2; i++) {
        const char *v = i ? "v1beta1" : "v1";
        char path[128], want[64];

        (void)snprintf(want, sizeof(want), "example.com/%s", v);
        (void)snprintf(path, sizeof(path), "/apis/example.com/%s/namespaces/default/things/t1", v);
        assert_int_equal(req(e, "GET", path, NULL, NULL, &b, NULL), 200);
        expect_str(b, "apiVersion", want);
        expect_str(b, "metadata.name", "t1");
        cJSON_Delete(b);
        /* lists, spliced and decoded (a selector) */
        (void)snprintf(path, sizeof(path), "/apis/example.com/%s/namespaces/default/things", v);
        assert_int_equal(req(e, "GET", path, NULL, NULL, &b, NULL), 200);
        expect_str(b, "apiVersion", want);
        expect_str(b, "items.0.apiVersion", want);
        cJSON_Delete(b);
        (void)snprintf(path, sizeof(path),
                       "/apis/example.com/%s/namespaces/default/things?labelSelector=a%%3Db", v);
        assert_int_equal(req(e, "GET", path, NULL, NULL, &b, NULL), 200);
        expect_str(b, "items.0.apiVersion", want);
        cJSON_Delete(b);
    }
    /* A patch through v1 answers at v1. */
    {
        CURL *h = curl_easy_init();
        struct curl_slist *hdrs =
            curl_slist_append(NULL, "Content-Type: application/merge-patch+json");
        struct strbuf url = STRBUF_INIT, out = STRBUF_INIT;
        long code = 0;

        strbuf_addf(&url, "%s/apis/example.com/v1/namespaces/default/things/t1", e->base);
        (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
        (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PATCH");
        (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{\"spec\":{\"n\":2}}");
        (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
        assert_int_equal(curl_easy_perform(h), CURLE_OK);
        (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        assert_int_equal(code, 200);
        b = J(out.buf);
        expect_str(b, "apiVersion", "example.com/v1");
        assert_int_equal(at(b, "spec.n")->valueint, 2);
        cJSON_Delete(b);
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(h);
        strbuf_release(&url);
        strbuf_release(&out);
    }
    /* A watch at v1beta1 sees the object (stored by the v1 patch) at v1beta1. */
    assert_int_equal(get_text(e,
                              "/apis/example.com/v1beta1/namespaces/default/things?watch=1&"
                              "timeoutSeconds=1",
                              &txt),
                     200);
    if (!strstr(txt.buf, "\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"example.com/v1beta1\""))
        fail_msg("watch: %s", txt.buf);
    strbuf_release(&txt);

    /* The storage version is recorded; conversion webhooks are refused. */
    assert_int_equal(req(e, "GET", CRDS "/things.example.com", NULL, NULL, &b, NULL), 200);
    expect_str(b, "status.storedVersions.0", "v1");
    cJSON_Delete(b);
    {
        /* the same CRD, asking for a conversion webhook */
        cJSON *o = J(multi_crd);
        char *t;

        cJSON_ReplaceItemInObject(cJSON_GetObjectItem(o, "spec"), "conversion",
                                  J("{\"strategy\":\"Webhook\"}"));
        t = cJSON_PrintUnformatted(o);
        assert_int_equal(req(e, "PUT", CRDS "/things.example.com", NULL, t, &b, NULL), 422);
        expect_str(b, "details.causes.0.field", "spec.conversion.strategy");
        cJSON_Delete(b);
        cJSON_free(t);
        cJSON_Delete(o);
    }
}

#define TABLE "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

static void test_columns_list_types_and_rules(void **state)
{
    struct env *e = *state;
    const char *crd =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"pools.example.com\"},"
        "\"spec\":{\"group\":\"example.com\",\"scope\":\"Cluster\","
        "\"names\":{\"plural\":\"pools\",\"kind\":\"Pool\"},"
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
        "\"additionalPrinterColumns\":["
        "{\"name\":\"Size\",\"type\":\"integer\",\"jsonPath\":\".spec.size\"},"
        "{\"name\":\"Owner\",\"type\":\"string\",\"format\":\"email\",\"priority\":1,"
        "\"description\":\"who to call\",\"jsonPath\":\".spec.owner\"}],"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"
        "\"spec\":{\"type\":\"object\","
        "\"x-kubernetes-validations\":[{\"rule\":\"self.size > 0\"}],\"properties\":{"
        "\"size\":{\"type\":\"integer\"},\"owner\":{\"type\":\"string\"},"
        "\"zones\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\","
        "\"items\":{\"type\":\"string\"}},"
        "\"members\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
        "\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":\"object\","
        "\"required\":[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"}}}}"
        "}}}}}}]}}";
    struct strbuf warn = STRBUF_INIT;
    cJSON *b = NULL;

    /* The rules are accepted, with a Warning that they are not enforced. */
    assert_int_equal(req(e, "POST", CRDS, NULL, crd, &b, &warn), 201);
    cJSON_Delete(b);
    if (!strstr(warn.buf, "x-kubernetes-validations rules are not enforced"))
        fail_msg("warnings: %s", warn.buf);
    strbuf_release(&warn);

    assert_int_equal(req(e, "POST", "/apis/example.com/v1/pools", NULL,
                         "{\"metadata\":{\"name\":\"p1\"},\"spec\":{\"size\":3,"
                         "\"owner\":\"ops@example.com\",\"zones\":[\"a\",\"b\"],"
                         "\"members\":[{\"name\":\"m1\"},{\"name\":\"m2\"}]}}",
                         &b, NULL),
                     201);
    cJSON_Delete(b);
    /* Duplicates in a set or by a map's keys are refused with kube's messages. */
    assert_int_equal(req(e, "POST", "/apis/example.com/v1/pools", NULL,
                         "{\"metadata\":{\"name\":\"p2\"},\"spec\":{\"zones\":[\"a\",\"a\"],"
                         "\"members\":[{\"name\":\"m1\"},{\"name\":\"m1\"}]}}",
                         &b, NULL),
                     422);
    expect_str(b, "details.causes.0.field", "spec.zones[1]");
    expect_str(b, "details.causes.0.reason", "FieldValueDuplicate");
    expect_str(b, "details.causes.1.field", "spec.members[1]");
    if (!strstr(cJSON_GetStringValue(at(b, "message")),
                "spec.members[1]: Duplicate value: map[string]interface {}{\"name\":\"m1\"}"))
        fail_msg("message: %s", cJSON_GetStringValue(at(b, "message")));
    cJSON_Delete(b);

    /* The Table has the CRD's columns, with their type, format, description and priority. */
    assert_int_equal(req(e, "GET", "/apis/example.com/v1/pools", TABLE, NULL, &b, NULL), 200);
    expect_str(b, "kind", "Table");
    assert_int_equal(cJSON_GetArraySize(at(b, "columnDefinitions")), 3);
    expect_str(b, "columnDefinitions.0.name", "Name");
    expect_str(b, "columnDefinitions.1.name", "Size");
    expect_str(b, "columnDefinitions.1.type", "integer");
    assert_int_equal(at(b, "columnDefinitions.1.priority")->valueint, 0);
    expect_str(b, "columnDefinitions.1.description",
               "Custom resource definition column (in JSONPath format): .spec.size");
    expect_str(b, "columnDefinitions.2.name", "Owner");
    expect_str(b, "columnDefinitions.2.format", "email");
    expect_str(b, "columnDefinitions.2.description", "who to call");
    assert_int_equal(at(b, "columnDefinitions.2.priority")->valueint, 1);
    expect_str(b, "rows.0.cells.0", "p1");
    assert_int_equal(at(b, "rows.0.cells.1")->valueint, 3);
    expect_str(b, "rows.0.cells.2", "ops@example.com");
    cJSON_Delete(b);
    /* A CRD without columns has the Age column. */
    create_widget_crd(e);
    assert_int_equal(req(e, "GET", "/apis/example.com/v1/widgets", TABLE, NULL, &b, NULL), 200);
    assert_int_equal(cJSON_GetArraySize(at(b, "columnDefinitions")), 2);
    expect_str(b, "columnDefinitions.1.name", "Age");
    expect_str(b, "columnDefinitions.1.type", "date");
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_root_members_never_pruned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_defaults_and_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_several_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_columns_list_types_and_rules, setup, teardown),
    };

    int r;

    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
