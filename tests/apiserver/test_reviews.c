/*
 * Tests for apiserver/reviews: SelfSubjectAccessReview answers for the asking user,
 * SubjectAccessReview for the user it names, LocalSubjectAccessReview only in its namespace, with
 * kube's validation messages; SelfSubjectRulesReview and SelfSubjectReview; TokenReview of a
 * static token (API audience only) and of a service-account token issued by TokenRequest, which
 * stops verifying once its account is replaced; TokenRequest's expiration and binding rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "apiserver/auth.h"
#include "apiserver/authz.h"
#include "apiserver/registry.h"
#include "apiserver/reqinfo.h"
#include "apiserver/reviews.h"
#include "apiserver/satoken.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "apiserver/tokens.h"
#include "base/base.h"
#include "codec/codec.h"

static cJSON *parse(const char *text)
{
    cJSON *o = NULL;

    assert_int_equal(json_parse(text, strlen(text), NULL, &o, NULL), 0);
    return o;
}

static const char *at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool bool_at(const cJSON *o, const char *a, const char *b)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b));
}

struct env {
    struct store *store;
    struct api_authz *az;
    struct api_satokens *sat;
    struct api_tokens *tokens;
    struct api_reqinfo ri;
    char ns[8];
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    static const char tok[] = "t0k3n,alice,1001,\"dev\"\n";

    if (store_memory_new(&(struct store_memory_opts){.epoch = 1}, &e->store) < 0)
        return -1;
    e->az = api_authz_new(e->store);
    memcpy(e->ns, "team-a", 7);
    e->sat = api_satokens_new("0123456789abcdef0123456789abcdef", 32);
    api_authz_set_satokens(e->az, e->sat);
    if (api_tokens_parse(tok, strlen(tok), &e->tokens, NULL) < 0)
        return -1;
    e->ri = (struct api_reqinfo){.namespace = e->ns};
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    api_tokens_free(e->tokens);
    api_satokens_free(e->sat);
    api_authz_free(e->az);
    store_close(e->store);
    free(e);
    return 0;
}

static const struct api_resource *kind(const char *k)
{
    static struct api_resource r;

    for (const struct api_review_kind *rk = api_review_kinds; rk->kind; rk++)
        if (!strcmp(rk->kind, k))
            r = (struct api_resource){.group = rk->group, .plural = rk->plural, .kind = rk->kind};
    return &r;
}

/* Runs a review; returns its result, the answer in *ret (NULL on error). */
static int review(struct env *e, const char *k, const struct api_user *u, const char *body,
                  cJSON **ret, struct field_errors *errs, struct strbuf *why)
{
    cJSON *b = parse(body);
    int r;

    *ret = NULL;
    r = api_review(e->az, e->tokens, kind(k), &e->ri, u, b, ret, errs, why);
    cJSON_Delete(b);
    return r;
}

static const char *const node_groups[] = {"system:nodes", NULL};
static const struct api_user node = {.name = "system:node:n1", .uid = "", .groups = node_groups};

static void test_access_reviews(void **state)
{
    struct env *e = *state;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT;
    cJSON *a;

    /* the node rule answers for a node: it may read, not delete configmaps */
    assert_int_equal(review(e, "SelfSubjectAccessReview", &node,
                            "{\"spec\":{\"resourceAttributes\":{\"verb\":\"delete\",\"resource\":"
                            "\"configmaps\",\"namespace\":\"default\"}}}",
                            &a, &errs, &why),
                     0);
    assert_false(bool_at(a, "status", "allowed"));
    assert_true(bool_at(a, "status", "denied")); /* the node rule refuses, explicitly */
    assert_non_null(cJSON_GetObjectItem(a, "metadata"));
    cJSON_Delete(a);
    assert_int_equal(review(e, "SubjectAccessReview", NULL,
                            "{\"spec\":{\"user\":\"system:node:n1\",\"resourceAttributes\":{"
                            "\"verb\":\"get\",\"resource\":\"configmaps\"}}}",
                            &a, &errs, &why),
                     0);
    assert_true(bool_at(a, "status", "allowed"));
    cJSON_Delete(a);
    /* non-resource attributes */
    assert_int_equal(review(e, "SelfSubjectAccessReview", &node,
                            "{\"spec\":{\"nonResourceAttributes\":{\"verb\":\"get\",\"path\":"
                            "\"/healthz\"}}}",
                            &a, &errs, &why),
                     0);
    assert_true(bool_at(a, "status", "allowed"));
    cJSON_Delete(a);
    /* exactly one kind of attributes */
    assert_int_equal(review(e, "SelfSubjectAccessReview", &node, "{\"spec\":{}}", &a, &errs, &why),
                     -EINVAL);
    assert_null(a);
    assert_string_equal(errs.v[0].field, "spec.resourceAttributes");
    assert_string_equal(errs.v[0].detail, "exactly one of nonResourceAttributes or "
                                          "resourceAttributes must be specified");
    field_errors_release(&errs);
    /* a SubjectAccessReview names someone */
    assert_int_equal(review(e, "SubjectAccessReview", &node,
                            "{\"spec\":{\"resourceAttributes\":{\"verb\":\"get\"}}}", &a, &errs,
                            &why),
                     -EINVAL);
    assert_string_equal(errs.v[0].detail, "at least one of user or group must be specified");
    field_errors_release(&errs);
    /* a local one stays in its namespace */
    assert_int_equal(review(e, "LocalSubjectAccessReview", &node,
                            "{\"spec\":{\"user\":\"u\",\"resourceAttributes\":{\"verb\":\"get\","
                            "\"namespace\":\"team-b\"}}}",
                            &a, &errs, &why),
                     -EINVAL);
    assert_string_equal(errs.v[0].field, "spec.resourceAttributes.namespace");
    field_errors_release(&errs);
    assert_int_equal(review(e, "LocalSubjectAccessReview", &node,
                            "{\"spec\":{\"user\":\"u\",\"resourceAttributes\":{\"verb\":\"get\","
                            "\"namespace\":\"team-a\"}}}",
                            &a, &errs, &why),
                     0);
    cJSON_Delete(a);
    strbuf_release(&why);
}

static void test_self_reviews(void **state)
{
    struct env *e = *state;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT;
    cJSON *a, *ui;

    assert_int_equal(
        review(e, "SelfSubjectReview", &node, "{\"metadata\":{\"name\":\"x\"}}", &a, &errs, &why),
        0);
    ui = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "status"), "userInfo");
    assert_string_equal(at(a, "metadata", "name"), "x");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ui, "username")),
                        "system:node:n1");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ui, "groups")), 2);
    cJSON_Delete(a);
    /* unauthenticated: system:anonymous */
    assert_int_equal(review(e, "SelfSubjectReview", NULL, "{}", &a, &errs, &why), 0);
    ui = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "status"), "userInfo");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ui, "username")),
                        "system:anonymous");
    cJSON_Delete(a);
    assert_int_equal(review(e, "SelfSubjectRulesReview", &node,
                            "{\"spec\":{\"namespace\":\"default\"}}", &a, &errs, &why),
                     0);
    assert_true(bool_at(a, "status", "incomplete"));
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "status"), "resourceRules")),
        1);
    cJSON_Delete(a);
    strbuf_release(&why);
}

static void put_sa(struct env *e, const char *uid, bool replace)
{
    char v[256];
    struct store_item it = {0};

    (void)snprintf(v, sizeof(v),
                   "{\"kind\":\"ServiceAccount\",\"metadata\":{\"namespace\":\"team-a\","
                   "\"name\":\"robot\",\"uid\":\"%s\"}}",
                   uid);
    if (replace) {
        assert_int_equal(store_get(e->store, "/core/serviceaccounts/team-a/robot", &it), 0);
        assert_int_equal(
            store_update(e->store, "/core/serviceaccounts/team-a/robot", v, strlen(v), it.rv, NULL),
            0);
        store_item_release(&it);
    } else {
        assert_int_equal(
            store_create(e->store, "/core/serviceaccounts/team-a/robot", v, strlen(v), NULL), 0);
    }
}

static void test_tokens(void **state)
{
    struct env *e = *state;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT, body = STRBUF_INIT;
    cJSON *sa =
        parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"robot\",\"uid\":\"u1\"}}");
    cJSON *req, *tr = NULL, *a;
    const char *token;

    /* the static token: API audience only */
    assert_int_equal(
        review(e, "TokenReview", NULL, "{\"spec\":{\"token\":\"t0k3n\"}}", &a, &errs, &why), 0);
    assert_true(bool_at(a, "status", "authenticated"));
    cJSON_Delete(a);
    assert_int_equal(review(e, "TokenReview", NULL,
                            "{\"spec\":{\"token\":\"t0k3n\",\"audiences\":[\"vault\"]}}", &a, &errs,
                            &why),
                     0);
    assert_false(bool_at(a, "status", "authenticated"));
    cJSON_Delete(a);
    assert_int_equal(review(e, "TokenReview", NULL, "{\"spec\":{}}", &a, &errs, &why), -EINVAL);
    assert_string_equal(why.buf, "token is required for TokenReview in authentication");
    strbuf_reset(&why);

    /* TokenRequest: validation */
    req = parse("{\"spec\":{\"expirationSeconds\":599}}");
    assert_int_equal(api_token_request(e->sat, sa, req, time(NULL), &tr, &errs, &why), -EINVAL);
    assert_string_equal(errs.v[0].detail, "may not specify a duration less than 10 minutes");
    field_errors_release(&errs);
    cJSON_Delete(req);
    req = parse("{\"spec\":{\"boundObjectRef\":{\"kind\":\"Pod\",\"name\":\"p\"}}}");
    assert_int_equal(api_token_request(e->sat, sa, req, time(NULL), &tr, &errs, &why), -EINVAL);
    field_errors_release(&errs);
    assert_int_equal(api_token_request(NULL, sa, req, time(NULL), &tr, &errs, &why), -ENOTSUP);
    cJSON_Delete(req);
    strbuf_reset(&why);

    /* a token for vault, one hour by default */
    req = parse("{\"spec\":{\"audiences\":[\"vault\"]}}");
    assert_int_equal(api_token_request(e->sat, sa, req, time(NULL), &tr, &errs, &why), 0);
    cJSON_Delete(req);
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(tr, "spec"), "expirationSeconds")->valueint, 3600);
    token = at(tr, "status", "token");
    assert_non_null(token);
    assert_non_null(at(tr, "status", "expirationTimestamp"));

    /* the account does not exist yet: not authenticated */
    strbuf_addf(&body, "{\"spec\":{\"token\":\"%s\",\"audiences\":[\"vault\"]}}", token);
    assert_int_equal(review(e, "TokenReview", NULL, body.buf, &a, &errs, &why), 0);
    assert_false(bool_at(a, "status", "authenticated"));
    cJSON_Delete(a);
    put_sa(e, "u1", false);
    assert_int_equal(review(e, "TokenReview", NULL, body.buf, &a, &errs, &why), 0);
    assert_true(bool_at(a, "status", "authenticated"));
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(a, "status"), "user"), "username")),
        "system:serviceaccount:team-a:robot");
    cJSON_Delete(a);
    /* for the API's own audience it is not good */
    strbuf_reset(&body);
    strbuf_addf(&body, "{\"spec\":{\"token\":\"%s\"}}", token);
    assert_int_equal(review(e, "TokenReview", NULL, body.buf, &a, &errs, &why), 0);
    assert_false(bool_at(a, "status", "authenticated"));
    cJSON_Delete(a);
    /* an account deleted and created again under the same name is another one */
    put_sa(e, "u2", true);
    strbuf_reset(&body);
    strbuf_addf(&body, "{\"spec\":{\"token\":\"%s\",\"audiences\":[\"vault\"]}}", token);
    assert_int_equal(review(e, "TokenReview", NULL, body.buf, &a, &errs, &why), 0);
    assert_false(bool_at(a, "status", "authenticated"));
    cJSON_Delete(a);
    cJSON_Delete(tr);
    cJSON_Delete(sa);
    strbuf_release(&why);
    strbuf_release(&body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_access_reviews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_reviews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
