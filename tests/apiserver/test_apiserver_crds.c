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

#include "apiserver/apienv.h"
#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

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
