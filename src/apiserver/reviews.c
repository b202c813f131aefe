/* Reviews and TokenRequest (see reviews.h). */
#include "apiserver/reviews.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/rfc3339.h"
#include "apiserver/auth.h"
#include "apiserver/authz.h"
#include "apiserver/registry.h"
#include "apiserver/reqinfo.h"
#include "apiserver/satoken.h"
#include "apiserver/status.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "codec/codec.h"

#define MAX_AUDIENCES ((size_t)64)

const struct api_review_kind api_review_kinds[] = {
    {"authentication.k8s.io", "tokenreviews", "TokenReview", false},
    {"authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", false},
    {"authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", false},
    {"authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", true},
    {"authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false},
    {"authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false},
    {NULL, NULL, NULL, false},
};

static const char *str(const cJSON *o, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    return v ? v : "";
}

/* The answer: the request with fresh metadata (kept: name, namespace) and status. */
static cJSON *answer(const cJSON *body, cJSON **ret_status)
{
    cJSON *a = cJSON_Duplicate(body, true), *meta, *old;

    CHECK(a);
    old = cJSON_DetachItemFromObjectCaseSensitive(a, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(a, "status");
    CHECK(meta = cJSON_AddObjectToObject(a, "metadata"));
    if (*str(old, "name"))
        CHECK(cJSON_AddStringToObject(meta, "name", str(old, "name")));
    if (*str(old, "namespace"))
        CHECK(cJSON_AddStringToObject(meta, "namespace", str(old, "namespace")));
    cJSON_Delete(old);
    CHECK(*ret_status = cJSON_AddObjectToObject(a, "status"));
    return a;
}

/* A NULL-terminated list of the strings of arr (borrowed), at most MAX_AUDIENCES. */
static const char **strings(const cJSON *arr)
{
    const char **v = xcalloc(MAX_AUDIENCES + 1, sizeof(char *));
    const cJSON *e;
    size_t n = 0;

    cJSON_ArrayForEach(e, arr) if (cJSON_IsString(e) && n < MAX_AUDIENCES) v[n++] = e->valuestring;
    return v;
}

static int token_review(struct api_authz *az, const struct api_tokens *tokens, const cJSON *body,
                        cJSON **ret, struct strbuf *why)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(body, "spec");
    const cJSON *aud = cJSON_GetObjectItemCaseSensitive(spec, "audiences");
    const char *token = str(spec, "token");
    const char **audiences;
    struct api_ident *id = NULL;
    struct api_user u = {0};
    cJSON *status, *a;

    if (!*token) {
        strbuf_addstr(why, "token is required for TokenReview in authentication");
        return -EINVAL;
    }
    audiences = strings(aud);
    a = answer(body, &status);
    if (api_authz_review_token(az, tokens, token, audiences, &u, &id) == 0) {
        cJSON *out = cJSON_CreateArray();
        CHECK(out);
        CHECK(cJSON_AddBoolToObject(status, "authenticated", true));
        CHECK(cJSON_AddItemToObject(status, "user", api_authz_user_info(&u)));
        if (!*audiences)
            CHECK(cJSON_AddItemToArray(out, cJSON_CreateString(API_SA_ISSUER)));
        for (const char **p = audiences; *p; p++)
            CHECK(cJSON_AddItemToArray(out, cJSON_CreateString(*p)));
        CHECK(cJSON_AddItemToObject(status, "audiences", out));
    } else {
        CHECK(cJSON_AddObjectToObject(status, "user"));
    }
    api_ident_free(id);
    free(audiences);
    *ret = a;
    return 0;
}

/* The request attributes a SubjectAccessReview asks about, as a request info (owned). */
static int attributes(const cJSON *spec, bool local, const char *url_ns, struct api_reqinfo *ri,
                      struct field_errors *errs)
{
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(spec, "resourceAttributes");
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(spec, "nonResourceAttributes");

    if (cJSON_IsObject(ra) == cJSON_IsObject(na)) {
        field_error_add(errs, FIELD_INVALID, "spec.resourceAttributes", NULL,
                        "exactly one of nonResourceAttributes or resourceAttributes must be "
                        "specified");
        return -EINVAL;
    }
    if (local && na) {
        field_error_add(errs, FIELD_INVALID, "spec.nonResourceAttributes", NULL,
                        "disallowed on this kind of request");
        return -EINVAL;
    }
    if (local && strcmp(str(ra, "namespace"), url_ns)) {
        field_error_add(errs, FIELD_INVALID, "spec.resourceAttributes.namespace", NULL,
                        "must match metadata.namespace");
        return -EINVAL;
    }
    *ri = (struct api_reqinfo){
        .is_resource = ra != NULL,
        .verb = xstrdup(str(ra ? ra : na, "verb")),
        .path = xstrdup(ra ? "" : str(na, "path")),
        .api_prefix = xstrdup(ra ? (*str(ra, "group") ? "apis" : "api") : ""),
        .group = xstrdup(str(ra, "group")),
        .version = xstrdup(str(ra, "version")),
        .namespace = xstrdup(str(ra, "namespace")),
        .resource = xstrdup(str(ra, "resource")),
        .subresource = xstrdup(str(ra, "subresource")),
        .name = xstrdup(str(ra, "name")),
    };
    return 0;
}

static void decide(struct api_authz *az, const struct api_user *u, const struct api_reqinfo *ri,
                   cJSON *status)
{
    struct strbuf reason = STRBUF_INIT;
    enum api_authz_decision d = api_authz_decide(az, u, ri, &reason);

    /* denied: an authorizer refused it, rather than none allowing it. */
    CHECK(cJSON_AddBoolToObject(status, "allowed",
                                d == API_AUTHZ_DECISION_ALLOW ||
                                    d == API_AUTHZ_DECISION_ALLOW_CHECK_OBJECTS));
    if (d == API_AUTHZ_DECISION_DENY)
        CHECK(cJSON_AddBoolToObject(status, "denied", true));
    if (reason.len)
        CHECK(cJSON_AddStringToObject(status, "reason", reason.buf));
    strbuf_release(&reason);
}

static int access_review(struct api_authz *az, const struct api_resource *res,
                         const struct api_reqinfo *req, const struct api_user *self,
                         const cJSON *body, cJSON **ret, struct field_errors *errs)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(body, "spec");
    bool is_self = !strcmp(res->kind, "SelfSubjectAccessReview");
    struct api_reqinfo ri = {0};
    const char **groups = NULL, **extra = NULL;
    struct api_user u = {0};
    cJSON *status;
    int r =
        attributes(spec, !strcmp(res->kind, "LocalSubjectAccessReview"), req->namespace, &ri, errs);

    if (r < 0)
        return r;
    if (is_self) {
        u = *self;
    } else {
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(spec, "extra"), *k, *v;
        size_t n = 0;
        groups = strings(cJSON_GetObjectItemCaseSensitive(spec, "groups"));
        if (!*str(spec, "user") && !*groups) {
            field_error_add(errs, FIELD_INVALID, "spec.user", NULL,
                            "at least one of user or group must be specified");
            r = -EINVAL;
            goto out;
        }
        extra = xcalloc(2 * MAX_AUDIENCES + 1, sizeof(char *));
        cJSON_ArrayForEach(k, ex)
        {
            cJSON_ArrayForEach(v, k) if (cJSON_IsString(v) && n < 2 * MAX_AUDIENCES)
            {
                extra[n++] = k->string;
                extra[n++] = v->valuestring;
            }
        }
        u = (struct api_user){.name = str(spec, "user"),
                              .uid = str(spec, "uid"),
                              .groups = groups,
                              .extra = extra,
                              .groups_exact = true};
    }
    *ret = answer(body, &status);
    decide(az, &u, &ri, status);
out:
    free(groups);
    free(extra);
    api_reqinfo_release(&ri);
    return r;
}

static int rules_review(struct api_authz *az, const struct api_user *u, const cJSON *body,
                        cJSON **ret)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(body, "spec");
    cJSON *status, *rr, *nr;
    bool incomplete;

    *ret = answer(body, &status);
    CHECK(rr = cJSON_AddArrayToObject(status, "resourceRules"));
    CHECK(nr = cJSON_AddArrayToObject(status, "nonResourceRules"));
    incomplete = api_authz_rules(az, u, str(spec, "namespace"), rr, nr);
    CHECK(cJSON_AddBoolToObject(status, "incomplete", incomplete));
    return 0;
}

int api_review(struct api_authz *az, const struct api_tokens *tokens,
               const struct api_resource *res, const struct api_reqinfo *ri,
               const struct api_user *u, const cJSON *body, cJSON **ret, struct field_errors *errs,
               struct strbuf *why)
{
    static const char *const unauth_groups[] = {"system:unauthenticated", NULL};
    const struct api_user anonymous = {
        .name = "system:anonymous", .uid = "", .groups = unauth_groups};

    if (!u || !u->name)
        u = &anonymous;
    if (!strcmp(res->kind, "TokenReview"))
        return token_review(az, tokens, body, ret, why);
    if (!strcmp(res->kind, "SelfSubjectReview")) {
        cJSON *status;
        *ret = answer(body, &status);
        CHECK(cJSON_AddItemToObject(status, "userInfo", api_authz_user_info(u)));
        return 0;
    }
    if (!strcmp(res->kind, "SelfSubjectRulesReview"))
        return rules_review(az, u, body, ret);
    return access_review(az, res, ri, u, body, ret, errs);
}

/* The stored object at key, parsed; NULL when absent or unreadable (*ret_r says which). */
static cJSON *get_object(struct store *store, const char *key, int *ret_r)
{
    struct store_item it = {0};
    cJSON *o = NULL;

    *ret_r = store_get(store, key, &it);
    if (*ret_r == 0 && json_parse(it.value, it.len, NULL, &o, NULL) < 0)
        *ret_r = -EIO;
    store_item_release(&it);
    return o;
}

static const char *meta_str(const cJSON *o, const char *k)
{
    return str(cJSON_GetObjectItemCaseSensitive(o, "metadata"), k);
}

static void set_ref(struct api_satoken_ref *ref, const char *name, const cJSON *o)
{
    ref->name = xstrdup(name);
    ref->uid = xstrdup(meta_str(o, "uid"));
}

/*
 * Resolves spec.boundObjectRef (ref) of a TokenRequest for the service account ns/sa_name into
 * *bound, as pkg/registry/core/serviceaccount/storage/token.go does: a Pod (running as that
 * service account; the node it is bound to named too when that Node exists), a Secret, or a
 * Node (kube 1.32 allows it: ServiceAccountTokenNodeBinding is on by default), each of which
 * must exist and have ref.uid when one is given. 0, or -EBADMSG with *ret_status.
 */
static int resolve_bound(struct store *store, const char *ns, const char *sa_name, const cJSON *ref,
                         struct api_satoken_binding *bound, cJSON **ret_status)
{
    const char *av = str(ref, "apiVersion"), *kind = str(ref, "kind"), *name = str(ref, "name");
    const char *want_uid = str(ref, "uid"), *slash = strchr(av, '/');
    struct api_status_target t = {.group = "", .name = name};
    struct strbuf key = STRBUF_INIT, msg = STRBUF_INIT;
    struct api_satoken_ref *got = NULL;
    cJSON *o = NULL;
    int r = -EBADMSG;

    /* The group of apiVersion "v1" is core; of "g/v" it is g. */
    if (slash || (strcmp(kind, "Pod") && strcmp(kind, "Secret") && strcmp(kind, "Node"))) {
        strbuf_addf(&msg,
                    "cannot bind token for serviceaccount \"%s\" to object of type %.*s/%s, "
                    "Kind=%s",
                    sa_name, slash ? (int)(slash - av) : 0, av, slash ? slash + 1 : av, kind);
        *ret_status = api_status_failure(400, "BadRequest", msg.buf, NULL);
        goto out;
    }
    if (!*name) {
        *ret_status =
            api_status_failure(400, "BadRequest", "spec.boundObjectRef.name: Required value", NULL);
        goto out;
    }
    if (!strcmp(kind, "Pod")) {
        t.resource = "pods";
        strbuf_addf(&key, "/core/pods/%s/%s", ns, name);
        got = &bound->pod;
    } else if (!strcmp(kind, "Secret")) {
        t.resource = "secrets";
        strbuf_addf(&key, "/core/secrets/%s/%s", ns, name);
        got = &bound->secret;
    } else {
        t.resource = "nodes";
        strbuf_addf(&key, "/core/nodes//%s", name);
        got = &bound->node;
    }
    o = get_object(store, key.buf, &r);
    if (r == -ENOENT) {
        *ret_status = api_status_not_found(&t);
        r = -EBADMSG;
        goto out;
    }
    if (r < 0) {
        *ret_status = api_status_from_errno(r, NULL, &t);
        r = -EBADMSG;
        goto out;
    }
    r = -EBADMSG;
    if (!strcmp(kind, "Pod")) {
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
        const char *pod_sa = str(spec, "serviceAccountName");
        if (strcmp(*pod_sa ? pod_sa : "default", sa_name)) {
            strbuf_addf(&msg,
                        "cannot bind token for serviceaccount \"%s\" to pod running with "
                        "different serviceaccount name.",
                        sa_name);
            *ret_status = api_status_failure(400, "BadRequest", msg.buf, NULL);
            goto out;
        }
    }
    if (*want_uid && strcmp(want_uid, meta_str(o, "uid"))) {
        strbuf_addf(&msg,
                    "Operation cannot be fulfilled on %s \"%s\": the UID in the bound object "
                    "reference (%s) does not match the UID in record. The object might have been "
                    "deleted and then recreated",
                    kind, name, want_uid);
        *ret_status = api_status_failure(409, "Conflict", msg.buf, &t);
        goto out;
    }
    set_ref(got, name, o);
    if (got == &bound->pod) {
        /* The pod's node, when it is bound to one that exists (a deleted node is no error). */
        const char *node = str(cJSON_GetObjectItemCaseSensitive(o, "spec"), "nodeName");
        cJSON *n = NULL;
        int nr;
        if (*node) {
            strbuf_reset(&key);
            strbuf_addf(&key, "/core/nodes//%s", node);
            if ((n = get_object(store, key.buf, &nr)) && nr == 0)
                set_ref(&bound->node, node, n);
            cJSON_Delete(n);
        }
    }
    r = 0;
out:
    cJSON_Delete(o);
    strbuf_release(&key);
    strbuf_release(&msg);
    return r;
}

int api_token_request(const struct api_satokens *sat, struct store *store, const cJSON *sa,
                      const cJSON *body, int64_t now, cJSON **ret, struct field_errors *errs,
                      cJSON **ret_status, struct strbuf *why)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(body, "spec");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(spec, "expirationSeconds");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(spec, "boundObjectRef");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(sa, "metadata");
    struct api_satoken_binding bound = {0};
    const char **audiences;
    struct strbuf token = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    int64_t seconds = API_SA_DEFAULT_EXPIRATION;
    cJSON *a, *status, *s, *m;
    int r;

    if (!sat) {
        strbuf_addstr(why, "the server issues no service account tokens");
        return -ENOTSUP;
    }
    if (exp && !cJSON_IsNull(exp)) {
        char v[32];
        (void)snprintf(v, sizeof(v), "%.0f", cJSON_IsNumber(exp) ? exp->valuedouble : 0.0);
        if (!cJSON_IsNumber(exp) || exp->valuedouble < API_SA_MIN_EXPIRATION) {
            field_error_add(errs, FIELD_INVALID, "spec.expirationSeconds", v,
                            "may not specify a duration less than 10 minutes");
            return -EINVAL;
        }
        if (exp->valuedouble > (1LL << 32)) {
            field_error_add(errs, FIELD_TOO_LONG, "spec.expirationSeconds", v,
                            "may not specify a duration larger than 2^32 seconds");
            return -EINVAL;
        }
        seconds = (int64_t)exp->valuedouble;
        if (seconds > API_SA_MAX_EXPIRATION)
            seconds = API_SA_MAX_EXPIRATION;
    }
    if (ref && !cJSON_IsNull(ref)) {
        if (!cJSON_IsObject(ref)) {
            field_error_add(errs, FIELD_INVALID, "spec.boundObjectRef", NULL, "must be an object");
            return -EINVAL;
        }
        r = resolve_bound(store, str(meta, "namespace"), str(meta, "name"), ref, &bound,
                          ret_status);
        if (r < 0)
            return r;
    }
    audiences = strings(cJSON_GetObjectItemCaseSensitive(spec, "audiences"));
    if (!*audiences)
        audiences[0] = API_SA_ISSUER;
    api_satokens_issue(sat, str(meta, "namespace"), str(meta, "name"), str(meta, "uid"), &bound,
                       audiences, now, seconds, &token);
    a = cJSON_Duplicate(body, true);
    CHECK(a);
    cJSON_DeleteItemFromObjectCaseSensitive(a, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(a, "status");
    cJSON_DeleteItemFromObjectCaseSensitive(a, "spec");
    CHECK(m = cJSON_AddObjectToObject(a, "metadata"));
    CHECK(cJSON_AddStringToObject(m, "name", str(meta, "name")));
    CHECK(cJSON_AddStringToObject(m, "namespace", str(meta, "namespace")));
    CHECK(s = cJSON_AddObjectToObject(a, "spec"));
    {
        cJSON *aud = cJSON_AddArrayToObject(s, "audiences");
        CHECK(aud);
        for (const char **p = audiences; *p; p++)
            CHECK(cJSON_AddItemToArray(aud, cJSON_CreateString(*p)));
    }
    CHECK(cJSON_AddNumberToObject(s, "expirationSeconds", (double)seconds));
    if (cJSON_IsObject(ref)) {
        cJSON *copy = cJSON_Duplicate(ref, true);
        CHECK(copy);
        CHECK(cJSON_AddItemToObject(s, "boundObjectRef", copy));
    } else {
        CHECK(cJSON_AddNullToObject(s, "boundObjectRef"));
    }
    CHECK(status = cJSON_AddObjectToObject(a, "status"));
    CHECK(cJSON_AddStringToObject(status, "token", token.buf));
    (void)rfc3339_format(now + seconds, ts);
    CHECK(cJSON_AddStringToObject(status, "expirationTimestamp", ts));
    free(audiences);
    strbuf_release(&token);
    api_satoken_binding_release(&bound);
    *ret = a;
    return 0;
}
