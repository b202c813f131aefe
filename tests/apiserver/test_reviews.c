/*
 * Tests for apiserver/reviews: SelfSubjectAccessReview answers for the asking user,
 * SubjectAccessReview for the user it names, LocalSubjectAccessReview only in its namespace, with
 * kube's validation messages; SelfSubjectRulesReview and SelfSubjectReview; TokenReview of a
 * static token (API audience only) and of a service-account token issued by TokenRequest, which
 * stops verifying once its account is replaced; TokenRequest's expiration and binding rules;
 * tokens bound to a pod, secret or node and the extras they carry.
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

static int token_request(struct env *e, const cJSON *sa, const cJSON *req, cJSON **ret,
                         struct field_errors *errs, cJSON **ret_status, struct strbuf *why)
{
    return api_token_request(e->sat, e->store, sa, req, time(NULL), ret, errs, ret_status, why);
}

static void test_tokens(void **state)
{
    struct env *e = *state;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT, body = STRBUF_INIT;
    cJSON *sa =
        parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"robot\",\"uid\":\"u1\"}}");
    cJSON *req, *tr = NULL, *a, *st = NULL;
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
    assert_int_equal(token_request(e, sa, req, &tr, &errs, &st, &why), -EINVAL);
    assert_string_equal(errs.v[0].detail, "may not specify a duration less than 10 minutes");
    field_errors_release(&errs);
    cJSON_Delete(req);
    req = parse("{\"spec\":{\"boundObjectRef\":\"p\"}}");
    assert_int_equal(token_request(e, sa, req, &tr, &errs, &st, &why), -EINVAL);
    assert_string_equal(errs.v[0].field, "spec.boundObjectRef");
    field_errors_release(&errs);
    assert_int_equal(api_token_request(NULL, e->store, sa, req, time(NULL), &tr, &errs, &st, &why),
                     -ENOTSUP);
    cJSON_Delete(req);
    strbuf_reset(&why);

    /* a token for vault, one hour by default */
    req = parse("{\"spec\":{\"audiences\":[\"vault\"]}}");
    assert_int_equal(token_request(e, sa, req, &tr, &errs, &st, &why), 0);
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

/* put(e, key, json): creates or replaces the object at key. */
static void put(struct env *e, const char *key, const char *json)
{
    struct store_item it = {0};

    if (store_get(e->store, key, &it) == 0)
        assert_int_equal(store_update(e->store, key, json, strlen(json), it.rv, NULL), 0);
    else
        assert_int_equal(store_create(e->store, key, json, strlen(json), NULL), 0);
    store_item_release(&it);
}

/* The TokenReview of token for the API's audience: the answer's status.user, owned by *keep. */
static const cJSON *review_user(struct env *e, const char *token, cJSON **keep)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT, body = STRBUF_INIT;
    const cJSON *status;

    strbuf_addf(&body, "{\"spec\":{\"token\":\"%s\"}}", token);
    assert_int_equal(review(e, "TokenReview", NULL, body.buf, keep, &errs, &why), 0);
    strbuf_release(&why);
    strbuf_release(&body);
    status = cJSON_GetObjectItem(*keep, "status");
    return cJSON_IsTrue(cJSON_GetObjectItem(status, "authenticated"))
               ? cJSON_GetObjectItem(status, "user")
               : NULL;
}

/* The single value of extra key of user, or NULL. */
static const char *extra_of(const cJSON *user, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(user, "extra"), key);
    return cJSON_GetArraySize(v) == 1 ? cJSON_GetStringValue(cJSON_GetArrayItem(v, 0)) : NULL;
}

/* Issues a token for team-a/robot bound by ref (JSON); 0 with the token in out, or the HTTP
 * code of the Status kube would answer (its message in why). */
static int bound_token(struct env *e, const char *ref, struct strbuf *out, struct strbuf *why)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf body = STRBUF_INIT;
    cJSON *sa =
        parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"robot\",\"uid\":\"u1\"}}");
    cJSON *req, *tr = NULL, *st = NULL;
    int r;

    strbuf_addf(&body, "{\"spec\":{\"boundObjectRef\":%s}}", ref);
    req = parse(body.buf);
    r = token_request(e, sa, req, &tr, &errs, &st, why);
    if (r == 0) {
        strbuf_addstr(out, at(tr, "status", "token"));
        /* the reference is echoed as asked */
        assert_string_equal(
            cJSON_GetStringValue(cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(tr, "spec"), "boundObjectRef"), "name")),
            cJSON_GetStringValue(cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(req, "spec"), "boundObjectRef"), "name")));
    } else {
        assert_int_equal(r, -EBADMSG);
        assert_int_equal(field_errors_count(&errs), 0);
        strbuf_addstr(why, cJSON_GetStringValue(cJSON_GetObjectItem(st, "message")));
        r = cJSON_GetObjectItem(st, "code")->valueint;
    }
    cJSON_Delete(st);
    cJSON_Delete(tr);
    cJSON_Delete(req);
    cJSON_Delete(sa);
    strbuf_release(&body);
    return r;
}

#define POD_KEY "/core/pods/team-a/agent-x"
#define POD_JSON                                                                                   \
    "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"team-a\",\"name\":\"agent-x\","               \
    "\"uid\":\"%s\"},\"spec\":{\"serviceAccountName\":\"robot\",\"nodeName\":\"n1\"}}"

static void put_pod(struct env *e, const char *uid, const char *deletion)
{
    char v[512];
    int n = snprintf(v, sizeof(v), POD_JSON, uid);

    if (deletion) /* metadata gets a deletionTimestamp */
        (void)snprintf(v, sizeof(v),
                       "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"team-a\",\"name\":"
                       "\"agent-x\",\"uid\":\"%s\",\"deletionTimestamp\":\"%s\"},\"spec\":{"
                       "\"serviceAccountName\":\"robot\",\"nodeName\":\"n1\"}}",
                       uid, deletion);
    assert_true(n > 0 && (size_t)n < sizeof(v));
    put(e, POD_KEY, v);
}

/*
 * Tokens bound to a pod, a secret or a node (kubectl create token --bound-object-kind): what
 * TokenRequest refuses with kube's codes and messages, the extras TokenReview gives (pod name
 * and uid, the node of the pod), and that the token stops working once the pod is deleted, is
 * replaced by one with another uid, or has been deleting for more than 60 s.
 */
static void test_bound_tokens(void **state)
{
    struct env *e = *state;
    struct strbuf why = STRBUF_INIT, tok = STRBUF_INIT;
    const cJSON *u;
    cJSON *a = NULL;
    char past[32];
    time_t t;

    put_sa(e, "u1", false);
    /* refused: kinds kube cannot bind, missing objects, another uid, another account's pod */
    assert_int_equal(
        bound_token(e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"c\"}", &tok, &why),
        400);
    assert_string_equal(why.buf, "cannot bind token for serviceaccount \"robot\" to object of "
                                 "type /v1, Kind=ConfigMap");
    strbuf_reset(&why);
    assert_int_equal(
        bound_token(e, "{\"apiVersion\":\"apps/v1\",\"kind\":\"Pod\",\"name\":\"p\"}", &tok, &why),
        400);
    assert_string_equal(why.buf, "cannot bind token for serviceaccount \"robot\" to object of "
                                 "type apps/v1, Kind=Pod");
    strbuf_reset(&why);
    assert_int_equal(
        bound_token(e, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"agent-x\"}", &tok, &why),
        404);
    assert_string_equal(why.buf, "pods \"agent-x\" not found");
    strbuf_reset(&why);
    put(e, POD_KEY,
        "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"team-a\",\"name\":\"agent-x\",\"uid\":"
        "\"p0\"},\"spec\":{\"serviceAccountName\":\"other\"}}");
    assert_int_equal(
        bound_token(e, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"agent-x\"}", &tok, &why),
        400);
    assert_string_equal(why.buf, "cannot bind token for serviceaccount \"robot\" to pod running "
                                 "with different serviceaccount name.");
    strbuf_reset(&why);
    put_pod(e, "p1", NULL);
    assert_int_equal(bound_token(e,
                                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"agent-x\","
                                 "\"uid\":\"p0\"}",
                                 &tok, &why),
                     409);
    assert_string_equal(why.buf, "Operation cannot be fulfilled on Pod \"agent-x\": the UID in "
                                 "the bound object reference (p0) does not match the UID in "
                                 "record. The object might have been deleted and then recreated");
    strbuf_reset(&why);

    /* bound to the pod, whose node n1 does not exist yet: no node in the token */
    assert_int_equal(bound_token(e,
                                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"agent-x\","
                                 "\"uid\":\"p1\"}",
                                 &tok, &why),
                     0);
    assert_non_null(u = review_user(e, tok.buf, &a));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(u, "username")),
                        "system:serviceaccount:team-a:robot");
    assert_string_equal(extra_of(u, "authentication.kubernetes.io/pod-name"), "agent-x");
    assert_string_equal(extra_of(u, "authentication.kubernetes.io/pod-uid"), "p1");
    assert_null(extra_of(u, "authentication.kubernetes.io/node-name"));
    assert_non_null(extra_of(u, "authentication.kubernetes.io/credential-id"));
    cJSON_Delete(a);

    /* with node n1: its name and uid */
    put(e, "/core/nodes//n1", "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"uid\":\"n-1\"}}");
    strbuf_reset(&tok);
    assert_int_equal(
        bound_token(e, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"agent-x\"}", &tok, &why),
        0);
    assert_non_null(u = review_user(e, tok.buf, &a));
    assert_string_equal(extra_of(u, "authentication.kubernetes.io/node-name"), "n1");
    assert_string_equal(extra_of(u, "authentication.kubernetes.io/node-uid"), "n-1");
    assert_string_equal(extra_of(u, "authentication.kubernetes.io/pod-uid"), "p1");
    cJSON_Delete(a);
    /* the node is not checked for a pod-bound token (kube does not either) */
    assert_int_equal(store_delete(e->store, "/core/nodes//n1", 0, NULL, NULL), 0);
    assert_non_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);
    /* deleting: good for 60 s after the deletionTimestamp, then not */
    t = time(NULL) - 30;
    assert_true(strftime(past, sizeof(past), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t)) > 0);
    put_pod(e, "p1", past);
    assert_non_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);
    t = time(NULL) - 90;
    assert_true(strftime(past, sizeof(past), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t)) > 0);
    put_pod(e, "p1", past);
    assert_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);
    /* replaced by a pod of the same name: another uid, not good */
    put_pod(e, "p2", NULL);
    assert_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);
    /* deleted: not good */
    put_pod(e, "p1", NULL);
    assert_non_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);
    assert_int_equal(store_delete(e->store, POD_KEY, 0, NULL, NULL), 0);
    assert_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);

    /* a secret: good while it exists, no pod or node extras */
    put(e, "/core/secrets/team-a/s", "{\"kind\":\"Secret\",\"metadata\":{\"uid\":\"s-1\"}}");
    strbuf_reset(&tok);
    assert_int_equal(
        bound_token(e, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"name\":\"s\"}", &tok, &why),
        0);
    assert_non_null(u = review_user(e, tok.buf, &a));
    assert_null(extra_of(u, "authentication.kubernetes.io/pod-name"));
    assert_null(extra_of(u, "authentication.kubernetes.io/node-name"));
    cJSON_Delete(a);
    assert_int_equal(store_delete(e->store, "/core/secrets/team-a/s", 0, NULL, NULL), 0);
    assert_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);

    /* a node: its name and uid; good while it exists */
    put(e, "/core/nodes//n2", "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\",\"uid\":\"n-2\"}}");
    strbuf_reset(&tok);
    assert_int_equal(
        bound_token(e, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n2\"}", &tok, &why), 0);
    assert_non_null(u = review_user(e, tok.buf, &a));
    assert_string_equal(extra_of(u, "authentication.kubernetes.io/node-name"), "n2");
    assert_string_equal(extra_of(u, "authentication.kubernetes.io/node-uid"), "n-2");
    assert_null(extra_of(u, "authentication.kubernetes.io/pod-name"));
    cJSON_Delete(a);
    assert_int_equal(store_delete(e->store, "/core/nodes//n2", 0, NULL, NULL), 0);
    assert_null(review_user(e, tok.buf, &a));
    cJSON_Delete(a);
    strbuf_release(&why);
    strbuf_release(&tok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_access_reviews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_reviews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bound_tokens, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
