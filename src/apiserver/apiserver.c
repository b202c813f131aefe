/*
 * REST verbs over the store (see apiserver.h). Objects are stored in their canonical encoding
 * without metadata.resourceVersion, under "/<group|core>/<plural>/<namespace>/<name>"; the
 * revision of the row becomes the resourceVersion on the way out.
 */
#include "apiserver/apiserver.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "api/api.h"
#include "api/crd.h"
#include "api/labels.h"
#include "api/patchmeta.h"
#include "api/rfc3339.h"
#include "api/workloads.h"
#include "apiserver/admit.h"
#include "apiserver/aggregator.h"
#include "apiserver/apply.h"
#include "apiserver/auth.h"
#include "apiserver/authz.h"
#include "apiserver/body.h"
#include "apiserver/disruption.h"
#include "apiserver/lifecycle.h"
#include "apiserver/metrics.h"
#include "apiserver/negotiate.h"
#include "apiserver/openapi.h"
#include "apiserver/pods.h"
#include "apiserver/registry.h"
#include "apiserver/reqinfo.h"
#include "apiserver/reviews.h"
#include "apiserver/serviceaccounts.h"
#include "apiserver/status.h"
#include "apiserver/store.h"
#include "apiserver/table.h"
#include "apiserver/tokens.h"
#include "apiserver/watch.h"
#include "apiserver/webhook.h"
#include "base/base.h"
#include "base/base64.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "codec/smp.h"
#include "http/server.h"

#define CRD_PREFIX   "/apiextensions.k8s.io/customresourcedefinitions/"
#define MAX_LIST     100000 /* objects one list request may return */
#define KUBE_VERSION "v1.33.0"

struct apiserver {
    struct store *store;
    pthread_mutex_t admit_lock; /* serialises writes admit_serialized() names */
    struct api_metrics *metrics;
    struct api_registry *reg;
    struct watch_hub *hub;
    bool require_certs;
    const struct api_tokens *tokens;
    const struct apiserver_auth *auth; /* external authentication and authorization, or NULL */
    struct api_authz *authz;           /* the built-in authorizer chain (authz.h) */
    struct api_satokens *sat;          /* service-account token signer, or NULL */
    unsigned bookmark_ms;              /* idle time before a watch sends a BOOKMARK */
    struct aggregator *agg;            /* APIService proxying, when enabled */
    struct webhooks *webhooks;         /* dynamic admission (webhook.h) */
    bool status_splice;                /* apiserver_opts.status_splice */
    bool expired_watch_status;         /* apiserver_opts.expired_watch_status */
    atomic_ulong status_splices;       /* writes it made (/metrics) */
    struct lifecycle *lifecycle;       /* namespace and pod deletion (lifecycle.h), or NULL */
    struct openapi *openapi;           /* the /openapi documents (openapi.h) */
};

/* Everything one request needs, released in one place. */
struct call {
    struct apiserver *srv;
    const struct http_request *req;
    struct http_response *resp;
    struct api_reqinfo ri;
    const struct api_resource *res;
    struct api_status_target target;
    struct strbuf key;
    struct api_user user;        /* valid when user.name is set */
    struct api_ident *ident;     /* owns user's strings when the server made them (authz.h) */
    const char *node;            /* the node a node identity speaks for, else NULL */
    bool check_objects;          /* node identity: every object touched must be about c->node */
    bool dry_run;                /* dryRun=All: everything but the write */
    bool as_scale;               /* answer a CRD's objects as their Scale (do_scale) */
    struct negotiate_output out; /* the form of the answer the Accept header asked for */
    struct strbuf warnings;      /* the Warning values of the last validation, one a line: a write
                                  * retried on a newer object answers with that attempt's */
    struct strbuf wh_warnings;   /* the admission webhooks' Warning values, likewise */
    struct strbuf dups;          /* paths of keys the body repeated, one a line (body.h) */
    bool applied;                /* an apply patch: managedFields already set (apply.h) */
    const char *mf_subresource;  /* the subresource managedFields record when a write runs as
                                  * the main resource's (scale), else NULL */
};

static bool node_may(struct call *c, const cJSON *obj);
static bool admit(struct call *c, const cJSON *old, cJSON *obj);
static bool parse_dry_run(struct call *c, const char *v);
static bool field_validation_valid(struct call *c);

/* The PartialObjectMetadata of o, for answers built as trees (negotiate_partial() is the same
 * for bytes). It takes o's metadata: o is left to be deleted. */
static cJSON *partial_tree(cJSON *o, const char *api_version)
{
    cJSON *p = cJSON_CreateObject(), *meta = cJSON_DetachItemFromObjectCaseSensitive(o, "metadata");

    CHECK(p);
    CHECK(cJSON_AddStringToObject(p, "kind", "PartialObjectMetadata"));
    CHECK(cJSON_AddStringToObject(p, "apiVersion", api_version));
    if (!meta)
        CHECK(meta = cJSON_CreateObject());
    CHECK(cJSON_AddItemToObject(p, "metadata", meta));
    return p;
}

/* One Warning header per line of lines, which is emptied. */
static void add_warning_headers(struct call *c, struct strbuf *lines)
{
    for (const char *w = lines->buf; *w;) {
        const char *eol = strchr(w, '\n');
        struct strbuf v = STRBUF_INIT;

        strbuf_add(&v, w, (size_t)(eol - w));
        http_response_header(c->resp, "Warning", v.buf);
        strbuf_release(&v);
        w = eol + 1;
    }
    strbuf_reset(lines);
}

/* The answer the client asked for in one place for every tree: a one-object answer becomes its
 * PartialObjectMetadata when that was negotiated (lists are converted as they are built); a
 * Status never is. */
static cJSON *scale_of(const struct api_resource *res, const cJSON *obj);
static void restamp(const struct api_resource *res, cJSON *obj);

static void reply(struct call *c, int code, cJSON *body)
{
    const char *kind;

    if (c->as_scale && body && code >= 200 && code < 300 &&
        !strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "kind"))
                    ? cJSON_GetObjectItemCaseSensitive(body, "kind")->valuestring
                    : "",
                c->res->kind)) {
        cJSON *sc = scale_of(c->res, body);
        cJSON_Delete(body);
        body = sc;
    }
    add_warning_headers(c, &c->wh_warnings);
    add_warning_headers(c, &c->warnings);
    kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "kind"));
    if (c->res && kind && !strcmp(kind, c->res->kind))
        restamp(c->res, body);
    if (body && c->out.as == NEGOTIATE_PARTIAL && code >= 200 && code < 300 &&
        !(kind && !strcmp(kind, "Status"))) {
        cJSON *p = partial_tree(body, c->out.api_version);
        cJSON_Delete(body);
        body = p;
    }
    c->resp->status = code;
    c->resp->content_type = "application/json";
    if (body && json_print(body, &c->resp->body) < 0)
        c->resp->status = 500;
    cJSON_Delete(body);
}

static void reply_status(struct call *c, cJSON *status)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "status"));

    /* A Success status without a code is a 200 (reference 2.5). */
    reply(c,
          cJSON_IsNumber(code)           ? code->valueint
          : st && !strcmp(st, "Success") ? 200
                                         : 500,
          status);
}

static void reply_not_served(struct call *c)
{
    reply_status(c, api_status_failure(404, "NotFound",
                                       "the server could not find the requested resource", NULL));
}

static void reply_bad_request(struct call *c, const char *msg)
{
    reply_status(c, api_status_failure(400, "BadRequest", msg, NULL));
}

/* ---- keys and objects ---- */

static void object_key(struct strbuf *key, const struct api_resource *res, const char *ns,
                       const char *name)
{
    strbuf_reset(key);
    strbuf_addf(key, "/%s/%s/%s/%s", *res->group ? res->group : "core", res->plural,
                res->namespaced ? ns : "", name);
}

static void api_version_of(const struct api_resource *res, struct strbuf *out)
{
    if (*res->group)
        strbuf_addf(out, "%s/", res->group);
    strbuf_addstr(out, res->version);
}

static cJSON *meta_of(cJSON *obj)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (!cJSON_IsObject(m)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
        m = cJSON_AddObjectToObject(obj, "metadata");
        CHECK(m);
    }
    return m;
}

static void set_string(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddStringToObject(o, k, v));
}

static const char *get_string(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* A stored object with its resourceVersion filled in; NULL when the bytes do not parse. */
static cJSON *decode_stored(const char *value, size_t len, uint64_t rv)
{
    cJSON *o = NULL;
    char buf[24];

    if (json_parse(value, len, NULL, &o, NULL) < 0)
        return NULL;
    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    set_string(meta_of(o), "resourceVersion", buf);
    return o;
}

/* ,"resourceVersion":"N" (without the comma when first), without printf. */
static void add_rv_member(struct strbuf *out, bool comma, uint64_t rv)
{
    char digits[24];
    size_t n = sizeof(digits);

    do {
        digits[--n] = (char)('0' + rv % 10);
        rv /= 10;
    } while (rv);
    if (comma)
        strbuf_addch(out, ',');
    strbuf_add(out, "\"resourceVersion\":\"", 19);
    strbuf_add(out, digits + n, sizeof(digits) - n);
    strbuf_addch(out, '"');
}

/*
 * The bytes decode_stored() + json_print() would give, without the parse and the print:
 * stored objects are our own compact JSON without a resourceVersion (encode_for_store()), so
 * it goes in as the last member of metadata, at the point store_obj_new() found once; with
 * partial set (an apiVersion), only the PartialObjectMetadata of them, cut from the same bytes.
 * With api_version set (a CRD serving several versions), the object's leading apiVersion
 * member is written as api_version. false (out untouched) when the bytes lack apiVersion, kind
 * or metadata (or api_version is set and they do not start with the apiVersion), so the caller
 * takes the slow path. This is what keeps a list of 10000 objects, and a watch event sent to
 * 100 watchers, cheap (bench/apiserver).
 */
static bool splice_bytes(const char *value, size_t len, size_t splice_at, bool comma, uint64_t rv,
                         const char *partial, const char *api_version, struct strbuf *out)
{
    static const char lead[] = "{\"apiVersion\":\"";
    size_t start = out->len, from = 0;

    if (!splice_at)
        return false;
    if (!partial) {
        if (api_version) {
            const char *q;
            if (len < sizeof(lead) - 1 || memcmp(value, lead, sizeof(lead) - 1) ||
                !(q = memchr(value + sizeof(lead) - 1, '"', splice_at - (sizeof(lead) - 1))))
                return false;
            strbuf_add(out, lead, sizeof(lead) - 1);
            strbuf_addstr(out, api_version);
            from = (size_t)(q - value);
        }
        strbuf_add(out, value + from, splice_at - from);
        add_rv_member(out, comma, rv);
        strbuf_add(out, value + splice_at, len - splice_at);
        return true;
    }
    /* The PartialObjectMetadata ends with the metadata's closing brace (at splice_at in the
     * stored bytes) and its own: the resourceVersion goes in front of those two. */
    if (negotiate_partial(value, len, partial, out) < 0 || out->len - start < 2 ||
        memcmp(out->buf + out->len - 2, "}}", 2)) {
        strbuf_setlen(out, start);
        return false;
    }
    strbuf_setlen(out, out->len - 2);
    add_rv_member(out, comma, rv);
    strbuf_add(out, "}}", 2);
    return true;
}

/* splice_bytes() of a stored object: the object, or its PartialObjectMetadata when partial is
 * the apiVersion for one; api_version as there. */
static bool splice_stored(const struct store_obj *o, uint64_t rv, const char *partial,
                          const char *api_version, struct strbuf *out)
{
    return splice_bytes(o->value, o->len, o->splice_at, o->splice_comma, rv, partial, api_version,
                        out);
}

/* The apiVersion answers of res carry when stored objects may hold another (a CRD serving
 * several versions, registry.h multi_version), else NULL: nothing to rewrite. */
static const char *restamp_version(const struct api_resource *res, struct strbuf *buf)
{
    if (!res->multi_version)
        return NULL;
    strbuf_reset(buf);
    if (*res->group)
        strbuf_addf(buf, "%s/", res->group);
    strbuf_addstr(buf, res->version);
    return buf->buf;
}

/* Gives obj, an object of res, res's apiVersion when objects of res may be stored at another
 * version of their CRD (conversion None: nothing else changes). */
static void restamp(const struct api_resource *res, cJSON *obj)
{
    struct strbuf av = STRBUF_INIT;
    const char *v = restamp_version(res, &av);

    if (v && cJSON_IsObject(obj)) {
        cJSON *s = cJSON_CreateString(v);
        CHECK(s);
        if (cJSON_GetObjectItemCaseSensitive(obj, "apiVersion"))
            CHECK(cJSON_ReplaceItemInObjectCaseSensitive(obj, "apiVersion", s));
        else
            CHECK(cJSON_AddItemToObject(obj, "apiVersion", s));
    }
    strbuf_release(&av);
}

static int encode_for_store(cJSON *obj, struct strbuf *out)
{
    cJSON_DeleteItemFromObjectCaseSensitive(meta_of(obj), "resourceVersion");
    return json_print(obj, out);
}

void apiserver_random_uid(char buf[37])
{
    unsigned char b[16];

    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        CHECK(!"getrandom failed");
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    (void)snprintf(buf, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                   b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                   b[13], b[14], b[15]);
}

/* generateName: the prefix (cut to 58) and 5 random characters (apiserver names/generate.go). */
static char *generate_name(const char *prefix)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char r[5];
    struct strbuf sb = STRBUF_INIT;

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        CHECK(!"getrandom failed");
    strbuf_add(&sb, prefix, strlen(prefix) > 58 ? 58 : strlen(prefix));
    for (size_t i = 0; i < sizeof(r); i++)
        strbuf_addch(&sb, alphabet[r[i] % (sizeof(alphabet) - 1)]);
    return strbuf_detach(&sb, NULL);
}

/* ---- validation ---- */

/* Kubernetes' warning header for an unknown field: 299 - "unknown field \"spec.x\"". */
static void add_warnings(struct call *c, const struct field_errors *errs)
{
    strbuf_reset(&c->warnings);
    for (size_t i = 0; i < errs->n; i++) {
        if (errs->v[i].type != FIELD_WARNING)
            continue;
        strbuf_addstr(&c->warnings, "299 - ");
        strbuf_add_json_str(&c->warnings, errs->v[i].detail);
        strbuf_addch(&c->warnings, '\n');
    }
}

/*
 * Validates obj for the resource: the description, metadata, and for CRDs the CRD rules, with
 * the fieldValidation query parameter deciding about unknown fields (Warn by default: a
 * Warning header; Strict: 400 "strict decoding error"; Ignore: silence). Replies and returns
 * false when the object is refused.
 */
static bool validate(struct call *c, cJSON *obj)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    const char *name = get_string(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
    const char *fv = http_request_query(c->req, "fieldValidation");
    unsigned flags = fv && !strcmp(fv, "Strict") ? API_V_STRICT : 0;
    struct strbuf unknown = STRBUF_INIT;
    size_t n;

    if (c->res->builtin) {
        (void)api_object_validate(obj, flags, NULL, &errs);
    } else {
        struct strbuf why = STRBUF_INIT;
        api_validate(c->res->schema, obj, "", flags, &errs);
        if (!name || !*name)
            field_error_add(&errs, FIELD_REQUIRED, "metadata.name", NULL,
                            "name or generateName is required");
        else if (labels_check_dns1123_subdomain(name, &why) < 0) {
            struct strbuf v = STRBUF_INIT;
            strbuf_add_json_str(&v, name);
            field_error_add(&errs, FIELD_INVALID, "metadata.name", v.buf, "%s", why.buf);
            strbuf_release(&v);
        }
        strbuf_release(&why);
        if (!strcmp(c->res->plural, "customresourcedefinitions"))
            (void)api_crd_check(obj, &errs);
    }
    /* Keys the body repeated: what sigs.k8s.io/json's strict decoding reports. */
    for (const char *d = c->dups.buf; *d;) {
        const char *eol = strchr(d, '\n');
        struct strbuf f = STRBUF_INIT;

        strbuf_add(&f, d, (size_t)(eol - d));
        field_error_add(&errs, flags & API_V_STRICT ? FIELD_UNKNOWN : FIELD_WARNING, f.buf, NULL,
                        "duplicate field \"%s\"", f.buf);
        strbuf_release(&f);
        d = eol + 1;
    }
    if (!fv || strcmp(fv, "Ignore") != 0)
        add_warnings(c, &errs);
    for (size_t i = 0; i < errs.n; i++)
        if (errs.v[i].type == FIELD_UNKNOWN)
            strbuf_addf(&unknown, "%s%s",
                        unknown.len ? ", " : "strict decoding error: ", errs.v[i].detail);
    n = field_errors_count(&errs);
    if (unknown.len)
        reply_bad_request(c, unknown.buf);
    else if (n)
        reply_status(c, api_status_invalid(c->res->kind, c->res->group, name ? name : "", &errs));
    strbuf_release(&unknown);
    field_errors_release(&errs);
    return n == 0;
}

/* ---- admission webhooks (webhook.h) ---- */

/* What the webhooks are told about this request; op and old (the stored object) as given. */
static void wh_attrs(const struct call *c, enum webhook_op op, const cJSON *old,
                     struct webhook_attrs *a)
{
    *a = (struct webhook_attrs){
        .op = op,
        .group = c->res->group,
        .version = c->res->version,
        .resource = c->res->plural,
        .subresource = c->ri.subresource,
        .kind_group = c->res->group,
        .kind_version = c->res->version,
        .kind = c->res->kind,
        .ns = c->res->namespaced ? c->ri.namespace : "",
        .name = c->ri.name,
        .namespaced = c->res->namespaced,
        .dry_run = c->dry_run,
        .user = c->user.name ? &c->user : NULL,
        .old = old,
    };
}

/* The defaults of the resource's description, without the canonical encoding: what webhooks
 * are shown, as kube-apiserver shows them defaulted objects. */
static void apply_defaults(const struct call *c, cJSON *obj)
{
    int r = c->res->builtin ? api_object_default(c->res->builtin, obj, 0)
                            : api_default(c->res->schema, obj, 0);
    CHECK(r == 0);
}

/* Replies with a webhook's refusal; keeps its warnings for the answer. */
static bool wh_outcome(struct call *c, int r, struct webhook_outcome *out)
{
    strbuf_add(&c->wh_warnings, out->warnings.buf, out->warnings.len);
    if (r < 0) {
        reply_status(c, out->status);
        out->status = NULL;
    }
    webhook_outcome_release(out);
    return r == 0;
}

/* The mutating webhooks over *obj (possibly replaced); replies and returns false on refusal. */
static bool wh_mutate(struct call *c, const struct webhook_attrs *a, cJSON **obj)
{
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;

    if (!webhooks_wanted(c->srv->webhooks, a))
        return true;
    if (obj && *obj)
        apply_defaults(c, *obj);
    return wh_outcome(c, webhooks_mutate(c->srv->webhooks, a, obj, &out), &out);
}

/* The validating webhooks over obj; replies and returns false on refusal. */
static bool wh_validate(struct call *c, const struct webhook_attrs *a, const cJSON *obj)
{
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;

    if (!webhooks_wanted(c->srv->webhooks, a))
        return true;
    return wh_outcome(c, webhooks_validate(c->srv->webhooks, a, obj, &out), &out);
}

/* ---- non-resource paths ---- */

static void reply_text(struct call *c, int code, const char *text)
{
    c->resp->status = code;
    c->resp->content_type = "text/plain; charset=utf-8";
    strbuf_addstr(&c->resp->body, text);
    http_response_header(c->resp, "X-Content-Type-Options", "nosniff");
}

/* The checks behind /healthz, /livez and /readyz (apiserver healthz.go names its first two
 * the same; "storage" stands for kube's "etcd"): all pass while the server answers at all. */
static const char *const health_checks[] = {"ping", "log", "storage"};

struct health_query {
    bool verbose;
    struct strbuf excluded; /* NUL-separated names from ?exclude= */
};

static int health_query_param(void *ud, const char *name, const char *value)
{
    struct health_query *q = ud;

    if (!strcmp(name, "verbose"))
        q->verbose = true;
    else if (!strcmp(name, "exclude") && value)
        strbuf_add(&q->excluded, value, strlen(value) + 1);
    return 0;
}

/*
 * GET /<endpoint> and /<endpoint>/<check> (healthz.go InstallPathHandler): "ok", or with
 * ?verbose one "[+]<check> ok" line per check ("[+]<check> excluded: ok" for ?exclude=<check>,
 * and a warning line for excluded names that match none) and "<endpoint> check passed".
 * false when rest names no check (the caller answers 404).
 */
static bool serve_health(struct call *c, const char *endpoint, const char *rest)
{
    struct health_query q = {.excluded = STRBUF_INIT};
    struct strbuf out = STRBUF_INIT;
    bool unmatched = false;

    if (*rest) {
        for (size_t i = 0; i < ARRAY_SIZE(health_checks); i++)
            if (!strcmp(rest + 1, health_checks[i]) && rest[0] == '/') {
                reply_text(c, 200, "ok");
                return true;
            }
        return false;
    }
    http_request_foreach_query(c->req, health_query_param, &q);
    for (size_t i = 0; i < ARRAY_SIZE(health_checks); i++) {
        bool excluded = false;
        for (size_t off = 0; off < q.excluded.len; off += strlen(q.excluded.buf + off) + 1)
            excluded |= !strcmp(q.excluded.buf + off, health_checks[i]);
        strbuf_addf(&out, "[+]%s %sok\n", health_checks[i], excluded ? "excluded: " : "");
    }
    for (size_t off = 0; off < q.excluded.len; off += strlen(q.excluded.buf + off) + 1) {
        bool known = false;
        for (size_t i = 0; i < ARRAY_SIZE(health_checks); i++)
            known |= !strcmp(q.excluded.buf + off, health_checks[i]);
        if (known)
            continue;
        strbuf_addstr(&out, unmatched ? ","
                                      : "warn: some health checks cannot be excluded: "
                                        "no matches for ");
        strbuf_add_json_str(&out, q.excluded.buf + off);
        unmatched = true;
    }
    if (unmatched)
        strbuf_addch(&out, '\n');
    strbuf_addf(&out, "%s check passed\n", endpoint);
    reply_text(c, 200, q.verbose ? out.buf : "ok");
    strbuf_release(&out);
    strbuf_release(&q.excluded);
    return true;
}

/* version.Info (apimachinery pkg/version/types.go), every field; the build facts come from
 * CMake (KOORD_GIT_COMMIT, KOORD_GIT_TREE_STATE, KOORD_BUILD_DATE, set at configure time). */
#ifndef KOORD_GIT_COMMIT
#define KOORD_GIT_COMMIT ""
#endif
#ifndef KOORD_GIT_TREE_STATE
#define KOORD_GIT_TREE_STATE ""
#endif
#ifndef KOORD_BUILD_DATE
#define KOORD_BUILD_DATE ""
#endif
#if defined(__x86_64__)
#define KOORD_PLATFORM "linux/amd64"
#elif defined(__aarch64__)
#define KOORD_PLATFORM "linux/arm64"
#else
#define KOORD_PLATFORM "linux/unknown"
#endif
#if defined(__clang__)
#define KOORD_COMPILER "clang"
#else
#define KOORD_COMPILER "gcc"
#endif

static cJSON *version_info(void)
{
    cJSON *doc = cJSON_CreateObject();

    CHECK(doc);
    CHECK(cJSON_AddStringToObject(doc, "major", "1"));
    CHECK(cJSON_AddStringToObject(doc, "minor", "33"));
    CHECK(cJSON_AddStringToObject(doc, "emulationMajor", "1"));
    CHECK(cJSON_AddStringToObject(doc, "emulationMinor", "33"));
    CHECK(cJSON_AddStringToObject(doc, "minCompatibilityMajor", "1"));
    CHECK(cJSON_AddStringToObject(doc, "minCompatibilityMinor", "32"));
    CHECK(cJSON_AddStringToObject(doc, "gitVersion", KUBE_VERSION "-koord-" KOORD_VERSION));
    CHECK(cJSON_AddStringToObject(doc, "gitCommit", KOORD_GIT_COMMIT));
    CHECK(cJSON_AddStringToObject(doc, "gitTreeState", KOORD_GIT_TREE_STATE));
    CHECK(cJSON_AddStringToObject(doc, "buildDate", KOORD_BUILD_DATE));
    /* Not a Go program: the C compiler's version takes goVersion's place. */
    CHECK(cJSON_AddStringToObject(doc, "goVersion", KOORD_COMPILER " " __VERSION__));
    CHECK(cJSON_AddStringToObject(doc, "compiler", KOORD_COMPILER));
    CHECK(cJSON_AddStringToObject(doc, "platform", KOORD_PLATFORM));
    return doc;
}

static void serve_nonresource(struct call *c)
{
    const char *path = http_request_path(c->req);
    cJSON *doc = NULL;
    char group[256];

    for (const char *const *ep = (const char *const[]){"healthz", "livez", "readyz", NULL}; *ep;
         ep++) {
        size_t n = strlen(*ep);
        if (path[0] == '/' && !strncmp(path + 1, *ep, n) && (!path[n + 1] || path[n + 1] == '/')) {
            if (!serve_health(c, *ep, path + n + 1))
                reply_not_served(c);
            return;
        }
    }
    if (!strcmp(path, "/metrics")) {
        c->resp->status = 200;
        c->resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
        api_metrics_render(c->srv->metrics, store_revision(c->srv->store), &c->resp->body);
        webhooks_render_metrics(c->srv->webhooks, &c->resp->body);
        return;
    }
    if (!strcmp(path, "/version") || !strcmp(path, "/version/")) {
        reply(c, 200, version_info());
        return;
    }
    if (!strncmp(path, "/openapi/", 9) &&
        openapi_serve(c->srv->openapi, c->srv->agg, c->req, c->resp))
        return;
    if (!strcmp(path, "/api") || !strcmp(path, "/api/"))
        doc = api_registry_api_versions(c->srv->reg);
    else if (!strcmp(path, "/apis") || !strcmp(path, "/apis/")) {
        doc = api_registry_group_list(c->srv->reg);
        aggregator_discovery(c->srv->agg, NULL, &doc);
    } else if (!strcmp(path, "/api/v1"))
        doc = api_registry_resource_list(c->srv->reg, "", "v1");
    else if (sscanf(path, "/apis/%255[^/]", group) == 1) {
        const char *rest = path + 6 + strlen(group);
        if (!*rest || !strcmp(rest, "/")) {
            doc = api_registry_group(c->srv->reg, group);
            aggregator_discovery(c->srv->agg, group, &doc);
        } else if (rest[0] == '/' && !strchr(rest + 1, '/'))
            doc = api_registry_resource_list(c->srv->reg, group, rest + 1);
    }
    if (!doc) {
        reply_not_served(c);
        return;
    }
    reply(c, 200, doc);
}

/* ---- Table output (reference 10.3) ---- */

/* Whether the client asked for a meta.k8s.io Table (kubectl get sends
 * "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"). */
static bool wants_table(const struct call *c)
{
    return c->out.as == NEGOTIATE_TABLE;
}

/* The apiVersion of the PartialObjectMetadata a one-object answer is to be, or NULL. */
static const char *partial_of(const struct call *c)
{
    return c->out.as == NEGOTIATE_PARTIAL ? c->out.api_version : NULL;
}

/* The static description behind a resource, also for the Koordinator kinds served from their
 * CRDs (their printer columns come from the same tables). */
static const struct api_kind *kind_of(const struct api_resource *res)
{
    struct strbuf av = STRBUF_INIT;
    const struct api_kind *k;

    if (res->builtin)
        return res->builtin;
    api_version_of(res, &av);
    k = api_kind_find(av.buf, res->kind);
    strbuf_release(&av);
    return k;
}

/* The Table of objects of res: a CRD's own printer columns (whatever kind it serves), else
 * the printer of its kind k. */
static cJSON *build_table(const struct api_resource *res, const struct api_kind *k,
                          const cJSON *const *objs, size_t n, const char *rv, const char *cont,
                          enum table_include inc)
{
    if (res->crd_name)
        return table_build_crd(res->columns, res->ncolumns, objs, n, rv, cont, (int64_t)time(NULL),
                               inc);
    if (!k && !strcmp(res->group, "apiextensions.k8s.io"))
        return table_build_default(objs, n, rv, cont, (int64_t)time(NULL), inc);
    return table_build(k, objs, n, rv, cont, (int64_t)time(NULL), inc);
}

static void reply_table(struct call *c, const cJSON *const *objs, size_t n, const char *rv,
                        const char *cont)
{
    const char *inc = http_request_query(c->req, "includeObject");
    enum table_include mode = TABLE_INCLUDE_METADATA;

    if (inc && !strcmp(inc, "Object"))
        mode = TABLE_INCLUDE_OBJECT;
    else if (inc && !strcmp(inc, "None"))
        mode = TABLE_INCLUDE_NONE;
    reply(c, 200, build_table(c->res, kind_of(c->res), objs, n, rv, cont, mode));
}

/* ---- get and list ---- */

static void do_get(struct call *c)
{
    struct store_item it = {0};
    struct strbuf av = STRBUF_INIT;
    int r = store_get(c->srv->store, c->key.buf, &it);
    bool spliced;
    cJSON *o;

    if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, &c->target));
        return;
    }
    spliced =
        !c->as_scale && !wants_table(c) &&
        splice_stored(it.obj, it.rv, partial_of(c), restamp_version(c->res, &av), &c->resp->body);
    strbuf_release(&av);
    if (spliced) {
        c->resp->status = 200;
        c->resp->content_type = "application/json";
        store_item_release(&it);
        return;
    }
    o = decode_stored(it.value, it.len, it.rv);
    store_item_release(&it);
    if (!o) {
        reply_status(c, api_status_from_errno(-EIO, "stored object is corrupt", NULL));
        return;
    }
    if (wants_table(c) && !c->as_scale) {
        const cJSON *one[1] = {o};
        reply_table(c, one, 1, get_string(cJSON_GetObjectItem(o, "metadata"), "resourceVersion"),
                    NULL);
        cJSON_Delete(o);
        return;
    }
    reply(c, 200, o);
}

/* One field selector requirement: key, operator (= or !=), unescaped value. */
struct field_req {
    char *key;
    bool neq;
    char *value;
};

/* Parses "k=v,k2!=v2" with \\ , = escapes (fields/selector.go). -EINVAL on syntax. */
static int parse_field_selector(const char *s, struct field_req **ret, size_t *ret_n)
{
    struct field_req *v = NULL;
    size_t n = 0;
    const char *p = s;
    int r = 0;

    while (p && *p) {
        struct strbuf k = STRBUF_INIT, val = STRBUF_INIT;
        bool neq = false, have_op = false;

        for (; *p && *p != ','; p++) {
            if (!have_op && (*p == '=' || (*p == '!' && p[1] == '='))) {
                neq = *p == '!';
                p += neq ? 1 : (p[1] == '=' ? 1 : 0);
                have_op = true;
                continue;
            }
            if (*p == '\\' && p[1]) {
                p++;
            }
            strbuf_addch(have_op ? &val : &k, *p);
        }
        if (!have_op || !k.len) {
            strbuf_release(&k);
            strbuf_release(&val);
            r = -EINVAL;
            break;
        }
        v = xrealloc(v, (n + 1) * sizeof(*v));
        v[n].key = strbuf_detach(&k, NULL);
        v[n].value = strbuf_detach(&val, NULL);
        v[n].neq = neq;
        n++;
        if (*p == ',')
            p++;
    }
    if (r < 0) {
        for (size_t i = 0; i < n; i++) {
            free(v[i].key);
            free(v[i].value);
        }
        free(v);
        return r;
    }
    *ret = v;
    *ret_n = n;
    return 0;
}

static void field_reqs_free(struct field_req *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
    free(v);
}

/* The field keys each resource supports besides metadata.name and metadata.namespace. */
static bool field_supported(const struct api_resource *res, const char *key)
{
    static const char *const pod_fields[] = {"spec.nodeName",
                                             "spec.restartPolicy",
                                             "spec.schedulerName",
                                             "spec.serviceAccountName",
                                             "status.phase",
                                             "status.podIP",
                                             "status.nominatedNodeName",
                                             NULL};
    static const char *const event_fields[] = {"involvedObject.kind",
                                               "involvedObject.namespace",
                                               "involvedObject.name",
                                               "involvedObject.uid",
                                               "involvedObject.apiVersion",
                                               "involvedObject.resourceVersion",
                                               "involvedObject.fieldPath",
                                               "reason",
                                               "source",
                                               "type",
                                               "reportingComponent",
                                               NULL};
    /* The other kinds' SelectableFields (registry/<group>/<kind>/strategy.go). */
    static const struct {
        const char *group, *plural, *field;
    } more[] = {
        {"apps", "replicasets", "status.replicas"},
        {"batch", "jobs", "status.successful"},
        {"events.k8s.io", "events", "regarding.kind"},
        {"events.k8s.io", "events", "regarding.namespace"},
        {"events.k8s.io", "events", "regarding.name"},
        {"events.k8s.io", "events", "regarding.uid"},
        {"events.k8s.io", "events", "reason"},
        {"events.k8s.io", "events", "type"},
        {"events.k8s.io", "events", "reportingController"},
    };
    const char *const *list = NULL;

    if (!strcmp(key, "metadata.name") || !strcmp(key, "metadata.namespace"))
        return true;
    for (size_t i = 0; i < ARRAY_SIZE(more); i++)
        if (!strcmp(res->group, more[i].group) && !strcmp(res->plural, more[i].plural) &&
            !strcmp(key, more[i].field))
            return true;
    if (!*res->group && !strcmp(res->plural, "pods"))
        list = pod_fields;
    else if (!*res->group && !strcmp(res->plural, "events"))
        list = event_fields;
    for (; list && *list; list++)
        if (!strcmp(*list, key))
            return true;
    return false;
}

/* The value of a dotted field path as a string ("" when absent); events' "source" is the
 * source component; counters (a Job's status.successful) are their decimal text, 0 when
 * absent, as strconv.Itoa writes the Go field. */
static const char *field_value(const cJSON *obj, const char *key)
{
    static _Thread_local char num[24];
    char path[128];
    const cJSON *v = obj;

    if (!strcmp(key, "source"))
        key = "source.component";
    if (!strcmp(key, "status.successful") || !strcmp(key, "status.replicas")) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(
            st, strcmp(key, "status.successful") ? "replicas" : "succeeded");
        (void)snprintf(num, sizeof(num), "%lld",
                       cJSON_IsNumber(n) ? (long long)n->valuedouble : 0LL);
        return num;
    }
    (void)snprintf(path, sizeof(path), "%s", key);
    for (char *seg = path, *dot; seg && v; seg = dot ? dot + 1 : NULL) {
        dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        v = cJSON_GetObjectItemCaseSensitive(v, seg);
    }
    return v && cJSON_IsString(v) ? v->valuestring : "";
}

/* The labelSelector and fieldSelector of a list or watch; replies 400 and returns false when
 * either is malformed or names a field the resource does not support. */
static bool parse_selectors(struct call *c, struct label_selector **ret_labels,
                            struct field_req **ret_fields, size_t *ret_n)
{
    const char *ls = http_request_query(c->req, "labelSelector");
    const char *fs = http_request_query(c->req, "fieldSelector");
    struct strbuf err = STRBUF_INIT;
    bool ok = false;

    if (ls && *ls && label_selector_parse(ls, ret_labels, &err) < 0) {
        reply_bad_request(c, err.buf);
        goto out;
    }
    if (fs && *fs) {
        if (parse_field_selector(fs, ret_fields, ret_n) < 0) {
            strbuf_addf(&err, "invalid field selector: \"%s\"", fs);
            reply_bad_request(c, err.buf);
            goto out;
        }
        for (size_t i = 0; i < *ret_n; i++)
            if (!field_supported(c->res, (*ret_fields)[i].key)) {
                strbuf_addf(&err, "field label not supported: %s", (*ret_fields)[i].key);
                reply_bad_request(c, err.buf);
                goto out;
            }
    }
    ok = true;
out:
    strbuf_release(&err);
    return ok;
}

/* Whether obj passes the label and field selectors. */
static bool selected(const cJSON *obj, const struct label_selector *labels,
                     const struct field_req *fields, size_t n)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    if (labels && !label_selector_matches(labels, cJSON_GetObjectItem(meta, "labels")))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(field_value(obj, fields[i].key), fields[i].value) == fields[i].neq)
            return false;
    return true;
}

struct list_ctx {
    struct call *c;
    struct label_selector *labels;
    struct field_req *fields;
    size_t nfields;
    cJSON *items;            /* decoded items (selectors, Table) */
    struct store_obj **objs; /* raw: the store's shared objects, streamed as they are */
    size_t count, limit;
    char *last_key;
    bool more;
    bool raw;           /* no selectors, no Table: items are spliced stored bytes */
    bool count_rest;    /* a limit without selectors: count what the page leaves out */
    uint64_t remaining; /* counted: the list's remainingItemCount */
    int err;
};

static int list_item(const struct store_item *it, void *ud)
{
    struct list_ctx *l = ud;
    cJSON *o = NULL;

    if (l->more) {
        l->remaining++; /* past a full page: only counted (count_rest) */
        return 0;
    }
    if (!l->raw || !it->obj->splice_at) {
        o = decode_stored(it->value, it->len, it->rv);
        if (!o)
            return 0; /* a corrupt row is skipped, not fatal to the list */
        if (!l->raw && !selected(o, l->labels, l->fields, l->nfields)) {
            cJSON_Delete(o);
            return 0;
        }
    }
    if (l->limit && l->count == l->limit) {
        /* Without selectors every object left is an item of a later page: kube reports how
         * many (ListMeta.remainingItemCount); with them it cannot know, nor can we. */
        l->more = true;
        l->remaining = 1;
        cJSON_Delete(o);
        return l->count_rest ? 0 : 1;
    }
    if (l->raw) {
        cJSON_Delete(o); /* only checked: the stream decodes it again */
        if ((l->count & (l->count - 1)) == 0)
            l->objs = xrealloc(l->objs, (l->count ? l->count * 2 : 1) * sizeof(struct store_obj *));
        l->objs[l->count] = store_obj_ref(it->obj);
    } else {
        CHECK(cJSON_AddItemToArray(l->items, o));
    }
    l->count++;
    free(l->last_key);
    l->last_key = xstrdup(it->key);
    if (l->count >= MAX_LIST) {
        l->more = true; /* the rest comes with the continue token */
        return 1;
    }
    return 0;
}

/*
 * A list body streamed as it is encoded: the envelope, then each object spliced straight from
 * the store's shared bytes, a buffer at a time. Nothing of the size of the list is ever built,
 * and the first bytes leave before the last object is encoded.
 */
struct list_stream {
    struct strbuf pending; /* encoded, not yet handed out */
    size_t off;
    struct store_obj **objs; /* each released once encoded */
    size_t n, next;
    bool closed;
    char *kind, *api_version; /* for objects that must be decoded */
    const char *partial;      /* PartialObjectMetadataList: the items' apiVersion, else NULL */
    bool restamp;             /* items answer with api_version (registry.h multi_version) */
};

static void list_stream_free(void *ud)
{
    struct list_stream *ls = ud;

    for (size_t i = ls->next; i < ls->n; i++)
        store_obj_unref(ls->objs[i]);
    free(ls->objs);
    strbuf_release(&ls->pending);
    free(ls->kind);
    free(ls->api_version);
    free(ls);
}

/* Appends one item: spliced, or decoded and printed when its bytes do not allow splicing. */
static void list_stream_item(struct list_stream *ls, const struct store_obj *o)
{
    cJSON *d;

    if (splice_stored(o, o->rv, ls->partial, ls->restamp ? ls->api_version : NULL, &ls->pending))
        return;
    d = decode_stored(o->value, o->len, o->rv);
    if (!d) {
        strbuf_addstr(&ls->pending, "{}"); /* checked when listed: cannot happen */
        return;
    }
    if (!cJSON_GetObjectItemCaseSensitive(d, "kind"))
        CHECK(cJSON_AddStringToObject(d, "kind", ls->kind));
    if (ls->restamp)
        cJSON_DeleteItemFromObjectCaseSensitive(d, "apiVersion");
    if (!cJSON_GetObjectItemCaseSensitive(d, "apiVersion"))
        CHECK(cJSON_AddStringToObject(d, "apiVersion", ls->api_version));
    if (ls->partial) {
        cJSON *p = partial_tree(d, ls->partial);
        cJSON_Delete(d);
        d = p;
    }
    CHECK(json_print(d, &ls->pending) == 0);
    cJSON_Delete(d);
}

static long list_stream_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct list_stream *ls = ud;
    size_t n = 0;

    (void)st;
    while (n < max) {
        if (ls->off < ls->pending.len) {
            size_t k = ls->pending.len - ls->off;
            if (k > max - n)
                k = max - n;
            memcpy(buf + n, ls->pending.buf + ls->off, k);
            ls->off += k;
            n += k;
            continue;
        }
        strbuf_reset(&ls->pending);
        ls->off = 0;
        if (ls->next < ls->n) {
            if (ls->next)
                strbuf_addch(&ls->pending, ',');
            list_stream_item(ls, ls->objs[ls->next]);
            ls->objs[ls->next] = store_obj_unref(ls->objs[ls->next]);
            ls->next++;
        } else if (!ls->closed) {
            strbuf_addstr(&ls->pending, "]}");
            ls->closed = true;
        } else {
            break;
        }
    }
    return (long)n;
}

/* Hands the list to a stream: list (owned, with an empty "items" last) gives the envelope. */
static void reply_list_stream(struct call *c, struct list_ctx *l, cJSON *list, const char *av)
{
    struct list_stream *ls = xcalloc(1, sizeof(*ls));

    strbuf_init(&ls->pending);
    CHECK(json_print(list, &ls->pending) == 0);
    cJSON_Delete(list);
    /* The envelope ends with "items":[]} : keep it open for the items. */
    CHECK(ls->pending.len >= 2 && !strcmp(ls->pending.buf + ls->pending.len - 2, "]}"));
    strbuf_setlen(&ls->pending, ls->pending.len - 2);
    ls->objs = l->objs;
    ls->n = l->count;
    l->objs = NULL;
    l->count = 0;
    ls->kind = xstrdup(c->res->kind);
    ls->api_version = xstrdup(av);
    ls->restamp = c->res->multi_version;
    if (c->out.as == NEGOTIATE_PARTIAL_LIST)
        ls->partial = c->out.api_version;
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    c->resp->stream = list_stream_read;
    /* Encoding thousands of items is long work: on a worker, not an I/O thread. */
    c->resp->stream_blocking = true;
    c->resp->stream_userdata = ls;
    c->resp->stream_free = list_stream_free;
}

/* ---- list: resourceVersion and paging (reference 3.2, 5) ---- */

/*
 * Continue tokens are base64url of {"v":"meta.k8s.io/v1","rv":R,"after":"<last key returned,
 * relative to the list's prefix>"}, the shape of kube-apiserver's (storage.EncodeContinue):
 * opaque to clients, carrying the revision every page of the sequence is read at. rv -1 means
 * "continue at the latest revision", the inconsistent continue a 410 offers.
 */
static void continue_encode(const char *prefix, const char *last_key, int64_t rv,
                            struct strbuf *out)
{
    size_t plen = strlen(prefix);
    struct strbuf js = STRBUF_INIT;
    cJSON *t = cJSON_CreateObject();

    CHECK(t);
    CHECK(cJSON_AddStringToObject(t, "v", "meta.k8s.io/v1"));
    CHECK(cJSON_AddNumberToObject(t, "rv", (double)rv));
    CHECK(cJSON_AddStringToObject(t, "after",
                                  strncmp(last_key, prefix, plen) ? last_key : last_key + plen));
    CHECK(json_print(t, &js) == 0);
    base64url_encode(js.buf, js.len, out);
    strbuf_release(&js);
    cJSON_Delete(t);
}

/* The full key after which to go on and the revision (-1 = latest); replies 400 as
 * kube-apiserver does ("invalid continue token: ...") and returns false when malformed. */
static bool continue_decode(struct call *c, const char *tok, const char *prefix, char **ret_after,
                            int64_t *ret_rv)
{
    struct strbuf js = STRBUF_INIT, msg = STRBUF_INIT;
    const char *why = NULL, *after;
    cJSON *t = NULL, *rv;
    bool ok = false;

    if (base64url_decode(tok, &js) < 0 || json_parse(js.buf, js.len, NULL, &t, NULL) < 0) {
        why = "not an encoded token";
        goto out;
    }
    rv = cJSON_GetObjectItemCaseSensitive(t, "rv");
    after = get_string(t, "after");
    if (!get_string(t, "v") || strcmp(get_string(t, "v"), "meta.k8s.io/v1")) {
        why = "server does not recognize this encoded version";
        goto out;
    }
    if (!cJSON_IsNumber(rv) || (rv->valuedouble != -1 && rv->valuedouble < 1) ||
        rv->valuedouble > 9007199254740992.0 ||
        rv->valuedouble != (double)(int64_t)rv->valuedouble) {
        why = "incorrect encoded start resourceVersion (version meta.k8s.io/v1)";
        goto out;
    }
    if (!after || !*after) {
        why = "encoded key is empty";
        goto out;
    }
    for (const char *p = after; *p; p++)
        if (*p < 0x21 || *p > 0x7e) {
            why = "encoded key is malformed";
            goto out;
        }
    *ret_rv = (int64_t)rv->valuedouble;
    strbuf_addf(&msg, "%s%s", prefix, after);
    *ret_after = strbuf_detach(&msg, NULL);
    ok = true;
out:
    if (!ok) {
        strbuf_addf(&msg, "invalid continue token: continue key is not valid: %s", why);
        reply_bad_request(c, msg.buf);
    }
    strbuf_release(&js);
    strbuf_release(&msg);
    cJSON_Delete(t);
    return ok;
}

/* The options validation of list (apimachinery internalversion/validation ValidateListOptions):
 * replies 422 and returns false when it fails. */
static bool list_options_valid(struct call *c, const char *rvs, const char *rvm, const char *cont)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    bool ok;

    if (rvm && *rvm) {
        if (!rvs || !*rvs)
            field_error_add(&errs, FIELD_FORBIDDEN, "resourceVersionMatch", NULL, "%s",
                            "resourceVersionMatch is forbidden unless resourceVersion is provided");
        if (cont && *cont)
            field_error_add(&errs, FIELD_FORBIDDEN, "resourceVersionMatch", NULL, "%s",
                            "resourceVersionMatch is forbidden when continue is provided");
        if (strcmp(rvm, "Exact") && strcmp(rvm, "NotOlderThan")) {
            struct strbuf v = STRBUF_INIT;
            strbuf_add_json_str(&v, rvm);
            field_error_add(&errs, FIELD_NOT_SUPPORTED, "resourceVersionMatch", v.buf, "%s",
                            "supported values: \"Exact\", \"NotOlderThan\"");
            strbuf_release(&v);
        }
        if (!strcmp(rvm, "Exact") && rvs && !strcmp(rvs, "0"))
            field_error_add(&errs, FIELD_FORBIDDEN, "resourceVersionMatch", NULL, "%s",
                            "resourceVersionMatch \"exact\" is forbidden for resourceVersion "
                            "\"0\"");
    }
    if (http_request_query(c->req, "sendInitialEvents"))
        field_error_add(&errs, FIELD_FORBIDDEN, "sendInitialEvents", NULL, "%s",
                        "sendInitialEvents is forbidden for list");
    ok = field_errors_count(&errs) == 0;
    if (!ok)
        reply_status(c, api_status_invalid("ListOptions", "meta.k8s.io", "", &errs));
    field_errors_release(&errs);
    return ok;
}

/* 504 for a resourceVersion the store has not reached (storage.NewTooLargeResourceVersionError):
 * client-go's reflector relists from scratch on the ResourceVersionTooLarge cause. */
static void reply_too_large(struct call *c, uint64_t rv, uint64_t current)
{
    char msg[96];
    cJSON *st, *d, *causes, *cause;

    (void)snprintf(msg, sizeof(msg), "Too large resource version: %llu, current: %llu",
                   (unsigned long long)rv, (unsigned long long)current);
    st = api_status_failure(504, "Timeout", msg, NULL);
    cJSON_DeleteItemFromObjectCaseSensitive(st, "details");
    d = cJSON_AddObjectToObject(st, "details");
    CHECK(d);
    causes = cJSON_AddArrayToObject(d, "causes");
    cause = cJSON_CreateObject();
    CHECK(causes && cause);
    CHECK(cJSON_AddStringToObject(cause, "reason", "ResourceVersionTooLarge"));
    CHECK(cJSON_AddStringToObject(cause, "message", "Too large resource version"));
    CHECK(cJSON_AddItemToArray(causes, cause));
    CHECK(cJSON_AddNumberToObject(d, "retryAfterSeconds", 1));
    http_response_header(c->resp, "Retry-After", "1");
    reply_status(c, st);
}

/* 410 for a continue token whose revision left the history: kube-apiserver's message, and a
 * token that goes on at the latest revision for clients that accept an inconsistent list. */
static void reply_continue_expired(struct call *c, const char *prefix, const char *after)
{
    struct strbuf tok = STRBUF_INIT;
    cJSON *st = api_status_failure(
        410, "Expired",
        "The provided continue parameter is too old to display a consistent list result. You "
        "can start a new list without the continue parameter, or use the continue token in this "
        "response to retrieve the remainder of the results. Continuing with the provided token "
        "results in an inconsistent list - objects that were created, modified, or deleted "
        "between the time the first chunk was returned and now may show up in the list.",
        NULL);

    continue_encode(prefix, after, -1, &tok);
    CHECK(cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(st, "metadata"), "continue",
                                  tok.buf));
    strbuf_release(&tok);
    reply_status(c, st);
}

static void do_list(struct call *c)
{
    const char *limit = http_request_query(c->req, "limit");
    const char *cont = http_request_query(c->req, "continue");
    const char *rvs = http_request_query(c->req, "resourceVersion");
    const char *rvm = http_request_query(c->req, "resourceVersionMatch");
    struct list_ctx l = {.c = c};
    struct strbuf prefix = STRBUF_INIT, err = STRBUF_INIT, av = STRBUF_INIT, tok = STRBUF_INIT;
    cJSON *list = NULL, *meta;
    char *after = NULL;
    bool partial = c->out.as == NEGOTIATE_PARTIAL_LIST;
    uint64_t rv = 0, at = 0;
    int64_t lim = 0, want_rv = 0, cont_rv = 0;
    char buf[24];

    if (!list_options_valid(c, rvs, rvm, cont))
        goto out;
    if (cont && *cont && rvs && *rvs && strcmp(rvs, "0")) {
        reply_bad_request(c, "specifying resource version is not allowed when using continue");
        goto out;
    }
    if (rvs && *rvs && (parse_i64(rvs, &want_rv) < 0 || want_rv < 0)) {
        strbuf_addf(&err, "invalid resource version: \"%s\"", rvs);
        reply_bad_request(c, err.buf);
        goto out;
    }
    if (!parse_selectors(c, &l.labels, &l.fields, &l.nfields))
        goto out;
    if (limit && parse_i64(limit, &lim) < 0) {
        reply_bad_request(c, "limit must be an integer");
        goto out;
    }
    l.limit = lim > 0 ? (size_t)lim : 0; /* 0 or less: no limit (ListOptions.Limit) */
    l.count_rest = l.limit && !l.labels && !l.nfields;
    strbuf_addf(&prefix, "/%s/%s/", *c->res->group ? c->res->group : "core", c->res->plural);
    if (c->res->namespaced && *c->ri.namespace)
        strbuf_addf(&prefix, "%s/", c->ri.namespace);
    if (cont && *cont) {
        if (!continue_decode(c, cont, prefix.buf, &after, &cont_rv))
            goto out;
        at = cont_rv > 0 ? (uint64_t)cont_rv : 0;
    } else if (want_rv > 0) {
        /* "N" with a limit and no match, or Exact: that revision; otherwise not older than N
         * (reference 5), which the current state always is once the store has reached N. */
        bool exact = (rvm && !strcmp(rvm, "Exact")) || (l.limit && (!rvm || !*rvm));
        uint64_t current = store_revision(c->srv->store);
        if ((uint64_t)want_rv > current) {
            reply_too_large(c, (uint64_t)want_rv, current);
            goto out;
        }
        at = exact ? (uint64_t)want_rv : 0;
    }
    l.raw = !l.labels && !l.nfields && !wants_table(c) && !c->out.yaml;
    l.items = cJSON_CreateArray();
    CHECK(l.items);
    l.err = store_list_at(c->srv->store, prefix.buf, after, at, 0, list_item, &l, &rv);
    if (l.err < 0) {
        cJSON_Delete(l.items);
        if (l.err == -ERANGE && after)
            reply_continue_expired(c, prefix.buf, after);
        else if (l.err == -ERANGE)
            reply_status(c, api_status_expired((unsigned long long)at,
                                               (unsigned long long)store_oldest(c->srv->store)));
        else if (l.err == -EOVERFLOW)
            reply_too_large(c, at, store_revision(c->srv->store));
        else
            reply_status(c, api_status_from_errno(l.err, NULL, NULL));
        goto out;
    }
    list = cJSON_CreateObject();
    CHECK(list);
    strbuf_addf(&av, "%sList", c->res->kind);
    CHECK(cJSON_AddStringToObject(list, "kind", partial ? "PartialObjectMetadataList" : av.buf));
    strbuf_reset(&av);
    api_version_of(c->res, &av);
    CHECK(cJSON_AddStringToObject(list, "apiVersion", partial ? c->out.api_version : av.buf));
    meta = cJSON_AddObjectToObject(list, "metadata");
    CHECK(meta);
    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    CHECK(cJSON_AddStringToObject(meta, "resourceVersion", buf));
    if (l.more && l.last_key) {
        continue_encode(prefix.buf, l.last_key, (int64_t)rv, &tok);
        CHECK(cJSON_AddStringToObject(meta, "continue", tok.buf));
        if (l.count_rest && l.count == l.limit)
            CHECK(cJSON_AddNumberToObject(meta, "remainingItemCount", (double)l.remaining));
    }
    CHECK(cJSON_AddItemToObject(list, "items", l.items));
    if (l.raw) {
        reply_list_stream(c, &l, list, av.buf);
        goto out;
    }
    /* Items carry kind and apiVersion, as dynamic clients expect them. */
    {
        cJSON *item, *next;
        for (item = l.items->child; item; item = next) {
            next = item->next;
            if (partial) {
                CHECK(cJSON_ReplaceItemViaPointer(l.items, item,
                                                  partial_tree(item, c->out.api_version)));
                continue;
            }
            if (!cJSON_GetObjectItemCaseSensitive(item, "kind"))
                CHECK(cJSON_AddStringToObject(item, "kind", c->res->kind));
            if (!cJSON_GetObjectItemCaseSensitive(item, "apiVersion"))
                CHECK(cJSON_AddStringToObject(item, "apiVersion", av.buf));
            restamp(c->res, item);
        }
    }
    if (wants_table(c)) {
        size_t n = (size_t)cJSON_GetArraySize(l.items), i = 0;
        const cJSON **objs = xcalloc(n ? n : 1, sizeof(const cJSON *));
        const cJSON *item;
        cJSON_ArrayForEach(item, l.items) objs[i++] = item;
        reply_table(c, objs, n, buf, get_string(meta, "continue"));
        free(objs);
        cJSON_Delete(list);
    } else {
        reply(c, 200, list);
    }
out:
    label_selector_free(l.labels);
    field_reqs_free(l.fields, l.nfields);
    free(l.last_key);
    for (size_t i = 0; i < (l.raw ? l.count : 0); i++)
        store_obj_unref(l.objs[i]);
    free(l.objs);
    free(after);
    strbuf_release(&prefix);
    strbuf_release(&err);
    strbuf_release(&av);
    strbuf_release(&tok);
}

/* ---- writes ---- */

/* Parses the body as one JSON object of this resource's kind; replies 400 when it is not. */
/* The request body is JSON by its Content-Type (none counts as JSON). */
static bool json_body(const struct call *c)
{
    const char *ct = http_request_header(c->req, "Content-Type");
    return !ct || !strncmp(ct, "application/json", 16);
}

/* The body as a tree, whatever its Content-Type (body.h); replies 400 or 415 and returns NULL
 * when it does not decode. */
static cJSON *decode_body(struct call *c)
{
    struct body_error err;
    size_t len;
    const char *body = http_request_body(c->req, &len);
    cJSON *o = NULL;

    if (body_decode(http_request_header(c->req, "Content-Type"), body, len, &o, &err) < 0) {
        reply_status(c, api_status_failure(err.status, err.reason, err.msg, NULL));
        return NULL;
    }
    /* Repeated keys: the last wins, as in Go; validate() reports them. */
    strbuf_reset(&c->dups);
    body_dedupe_keys(o, &c->dups);
    return o;
}

static cJSON *read_body(struct call *c)
{
    struct strbuf av = STRBUF_INIT, msg = STRBUF_INIT;
    const char *kind, *api_version;
    cJSON *o = decode_body(c);

    if (!o)
        goto out;
    if (!cJSON_IsObject(o)) {
        reply_bad_request(c, "the request body must be a JSON object");
        goto err;
    }
    api_version_of(c->res, &av);
    kind = get_string(o, "kind");
    api_version = get_string(o, "apiVersion");
    if ((kind && strcmp(kind, c->res->kind)) || (api_version && strcmp(api_version, av.buf))) {
        strbuf_addf(&msg,
                    "the API version in the data (%s) does not match the expected API "
                    "version (%s) or the kind (%s) does not match %s",
                    api_version ? api_version : "", av.buf, kind ? kind : "", c->res->kind);
        reply_bad_request(c, msg.buf);
        goto err;
    }
    if (!kind)
        CHECK(cJSON_AddStringToObject(o, "kind", c->res->kind));
    if (!api_version)
        CHECK(cJSON_AddStringToObject(o, "apiVersion", av.buf));
    goto out;
err:
    cJSON_Delete(o);
    o = NULL;
out:
    strbuf_release(&av);
    strbuf_release(&msg);
    return o;
}

/* Namespace in the body versus the URL (reference 2.1). Replies 400 and returns false on a
 * mismatch. */
static bool reconcile_namespace(struct call *c, cJSON *meta, bool create)
{
    const char *ns = get_string(meta, "namespace");
    char msg[256];

    if (!c->res->namespaced) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
        return true;
    }
    if (!ns || !*ns) {
        set_string(meta, "namespace", c->ri.namespace);
        return true;
    }
    if (!strcmp(ns, c->ri.namespace))
        return true;
    if (create)
        (void)snprintf(msg, sizeof(msg),
                       "the namespace of the provided object does not match the namespace sent "
                       "on the request");
    else
        (void)snprintf(msg, sizeof(msg),
                       "the namespace of the object (%s) does not match the namespace on the "
                       "request (%s)",
                       ns, c->ri.namespace);
    reply_bad_request(c, msg);
    return false;
}

static void set_now(cJSON *meta, const char *key)
{
    char ts[RFC3339_STR_MAX];
    (void)rfc3339_format((int64_t)time(NULL), ts);
    set_string(meta, key, ts);
}

static bool has_status_subresource(const struct api_resource *res)
{
    for (const char *const *s = res->subresources; s && *s; s++)
        if (!strcmp(*s, "status"))
            return true;
    return false;
}

/* Defaults and the canonical encoding through the resource's description. */
static int finish_object(struct call *c, cJSON *obj)
{
    int r = c->res->builtin ? api_object_default(c->res->builtin, obj, 0)
                            : api_default(c->res->schema, obj, 0);
    if (r == 0)
        r = c->res->builtin ? api_object_canonicalize(c->res->builtin, obj)
                            : api_canonicalize(c->res->schema, obj);
    return r;
}

static bool is_pods(const struct api_resource *res)
{
    return !*res->group && !strcmp(res->plural, "pods");
}

static bool is_namespaces(const struct api_resource *res)
{
    return !*res->group && !strcmp(res->plural, "namespaces");
}

/* PUT namespaces/<name>/finalize (namespaceFinalizeStrategy): an update of the namespace that
 * keeps its status and, unlike the main resource, takes spec.finalizers from the client. */
static bool is_ns_finalize(const struct call *c)
{
    return is_namespaces(c->res) && !strcmp(c->ri.subresource, "finalize");
}

/*
 * kube's NamespaceLifecycle admission: nothing new in a namespace being deleted (reviews
 * aside: nothing is stored). Replies 403 with the NamespaceTerminating cause and returns
 * true when ns (the stored namespace) is terminating.
 */
static bool namespace_terminating(struct call *c, const struct store_item *ns, const cJSON *obj)
{
    cJSON *o = c->res->create_only ? NULL : decode_stored(ns->value, ns->len, ns->rv);
    const char *name = get_string(cJSON_GetObjectItem(obj, "metadata"), "name");
    struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;
    cJSON *st, *details, *causes, *cause;
    bool refused = o && lifecycle_ns_terminating(o);

    cJSON_Delete(o);
    if (!refused)
        return false;
    strbuf_addstr(&msg, c->res->plural);
    if (*c->res->group)
        strbuf_addf(&msg, ".%s", c->res->group);
    if (name && *name)
        strbuf_addf(&msg, " \"%s\"", name);
    strbuf_addf(&msg,
                " is forbidden: unable to create new content in namespace %s because it is being "
                "terminated",
                c->ri.namespace);
    st = api_status_failure(
        403, "Forbidden", msg.buf,
        &(struct api_status_target){c->res->group, c->res->plural, name && *name ? name : NULL});
    details = cJSON_GetObjectItem(st, "details");
    if (!details)
        CHECK(details = cJSON_AddObjectToObject(st, "details"));
    CHECK(causes = cJSON_AddArrayToObject(details, "causes"));
    CHECK(cause = cJSON_CreateObject());
    CHECK(cJSON_AddItemToArray(causes, cause));
    strbuf_addf(&why, "namespace %s is being terminated", c->ri.namespace);
    CHECK(cJSON_AddStringToObject(cause, "reason", "NamespaceTerminating"));
    CHECK(cJSON_AddStringToObject(cause, "message", why.buf));
    CHECK(cJSON_AddStringToObject(cause, "field", "metadata.namespace"));
    reply_status(c, st);
    strbuf_release(&msg);
    strbuf_release(&why);
    return true;
}

/*
 * Whether an update completes a deletion (the generic store's shouldDeleteDuringUpdate): the
 * object was deleted while finalizers held it (deletionGracePeriodSeconds 0, or absent as
 * earlier koord versions stored it) and the update removes the last one. A pod in its grace
 * period stays. A namespace stays too: the lifecycle worker removes it once its spec and
 * metadata finalizers and its content are all gone (lifecycle.h), so that an update (a
 * finalize) that empties them never leaves content behind.
 */
static bool deletes_during_update(const struct api_resource *res, const cJSON *old,
                                  const cJSON *obj)
{
    const cJSON *om = cJSON_GetObjectItem(old, "metadata"),
                *nm = cJSON_GetObjectItem(obj, "metadata");
    const cJSON *g = cJSON_GetObjectItem(om, "deletionGracePeriodSeconds");

    if (!cJSON_GetObjectItem(om, "deletionTimestamp") ||
        cJSON_GetArraySize(cJSON_GetObjectItem(nm, "finalizers")) > 0 ||
        (g && (!cJSON_IsNumber(g) || g->valuedouble != 0)))
        return false;
    return !is_namespaces(res);
}

static bool is_pdb(const struct api_resource *res)
{
    return !strcmp(res->group, "policy") && !strcmp(res->plural, "poddisruptionbudgets");
}

static bool is_crd_resource(const struct api_resource *res)
{
    return !strcmp(res->group, "apiextensions.k8s.io") &&
           !strcmp(res->plural, "customresourcedefinitions");
}

/* Adds a CRD's kinds to reg; replies 422 and returns false when it cannot be served. */
static bool add_crd_to(struct call *c, struct api_registry *reg, const cJSON *crd)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    int r = api_registry_add_crd(reg, crd, &errs);

    if (r < 0)
        reply_status(c, api_status_invalid(c->res->kind, c->res->group,
                                           get_string(cJSON_GetObjectItem(crd, "metadata"), "name"),
                                           &errs));
    field_errors_release(&errs);
    return r == 0;
}

/* The status kube's CRD controllers would write once the CRD is served (api_crd_set_status):
 * koord serves a CRD as it stores it, so it is written with it. */
static void crd_set_status(cJSON *crd)
{
    char ts[RFC3339_STR_MAX];

    (void)rfc3339_format((int64_t)time(NULL), ts);
    api_crd_set_status(crd, ts);
}

/* Serves a stored CRD's kinds. */
static bool serve_crd(struct call *c, const cJSON *crd)
{
    return add_crd_to(c, c->srv->reg, crd);
}

/* uid / resourceVersion preconditions of a Binding or DeleteOptions; replies 409. */
static bool preconditions_hold(struct call *c, const cJSON *pre, const cJSON *pod, uint64_t rv)
{
    const char *uid = get_string(pre, "uid"), *rvs = get_string(pre, "resourceVersion");
    const char *puid = get_string(cJSON_GetObjectItem(pod, "metadata"), "uid");
    char buf[24];

    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    if ((uid && *uid && (!puid || strcmp(uid, puid))) || (rvs && *rvs && strcmp(rvs, buf))) {
        reply_status(c, api_status_conflict(&c->target));
        return false;
    }
    return true;
}

/* Whether a CRD about to be stored can be served: the same checks against a scratch
 * registry, so nothing served changes unless the write succeeds. */
static bool crd_servable(struct call *c, const cJSON *crd)
{
    struct api_registry *probe = api_registry_new();
    bool ok = add_crd_to(c, probe, crd);

    api_registry_free(probe);
    return ok;
}

/*
 * The answer to a create from the bytes just stored, with the resourceVersion spliced in as a
 * GET answers: what reply() would print of the object, without printing it again. false (and
 * nothing sent) when reply() has more to do: a Scale, a CRD's objects stored at several
 * versions, or bytes without the members the splice needs.
 */
static bool reply_created_spliced(struct call *c, const struct strbuf *bytes, uint64_t rv)
{
    bool comma = false;
    size_t at;

    if (c->as_scale || c->res->multi_version || wants_table(c))
        return false;
    at = store_splice_point(bytes->buf, bytes->len, &comma);
    if (!at ||
        !splice_bytes(bytes->buf, bytes->len, at, comma, rv, partial_of(c), NULL, &c->resp->body))
        return false;
    add_warning_headers(c, &c->wh_warnings);
    add_warning_headers(c, &c->warnings);
    c->resp->status = 201;
    c->resp->content_type = "application/json";
    return true;
}

/*
 * The managedFields a write leaves on obj (apply.h), computed from the client's object before
 * admission as kube's handlers do; *ret_mf is set on the object just before validation. An
 * apply brought its own. Replies 422 and returns false for a bad fieldManager or malformed
 * managedFields.
 */
static bool managed_fields(struct call *c, const cJSON *live, const cJSON *obj, cJSON **ret_mf)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf manager = STRBUF_INIT;
    const char *q = http_request_query(c->req, "fieldManager");
    char now[RFC3339_STR_MAX];
    bool ok;
    int r = 0;

    *ret_mf = NULL;
    /* Read-only kinds (the manager's NodeMetrics, written only by their agents' status reports
     * on the ingest path, which splices bytes) keep whatever entries they have. */
    if (c->applied || c->res->read_only) {
        const cJSON *mf = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
        if (mf)
            CHECK(*ret_mf = cJSON_Duplicate(mf, true));
        return true;
    }
    apply_check_field_manager(q, &errs);
    if (!field_errors_count(&errs)) {
        apply_field_manager(q, http_request_header(c->req, "User-Agent"), &manager);
        (void)rfc3339_format((int64_t)time(NULL), now);
        r = apply_update_managed_fields(c->res,
                                        c->mf_subresource ? c->mf_subresource : c->ri.subresource,
                                        live, obj, manager.buf, now, ret_mf, &errs);
    }
    ok = r == 0 && !field_errors_count(&errs);
    if (!ok)
        reply_status(c, api_status_invalid(c->res->kind, c->res->group,
                                           get_string(cJSON_GetObjectItem(obj, "metadata"), "name"),
                                           &errs));
    strbuf_release(&manager);
    field_errors_release(&errs);
    return ok;
}

/* Puts mf (taken) as obj's metadata.managedFields, or removes them when NULL. */
static void set_managed_fields(cJSON *obj, cJSON *mf)
{
    cJSON *meta = meta_of(obj);

    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    if (mf)
        CHECK(cJSON_AddItemToObject(meta, "managedFields", mf));
}

static void create_object(struct call *c, cJSON *obj);

static void do_create(struct call *c)
{
    cJSON *obj = read_body(c);

    if (obj)
        create_object(c, obj);
}

/* Create of obj (taken): a POST's body, or the object an apply creates. */
static void create_object(struct call *c, cJSON *obj)
{
    cJSON *meta, *mf = NULL;
    struct webhook_attrs wa;
    const char *name, *gen;
    struct strbuf bytes = STRBUF_INIT;
    char uid[37];
    uint64_t rv = 0;
    int r;

    if (is_crd_resource(c->res))
        api_crd_default(obj);
    if (*c->ri.subresource) {
        reply_status(c,
                     api_status_failure(405, "MethodNotAllowed",
                                        "create is not supported on this subresource", &c->target));
        goto out;
    }
    meta = meta_of(obj);
    if (get_string(meta, "resourceVersion") && *get_string(meta, "resourceVersion")) {
        reply_status(c, api_status_failure(500, "InternalError",
                                           "resourceVersion should not be set on objects to be "
                                           "created",
                                           NULL));
        goto out;
    }
    if (!reconcile_namespace(c, meta, true))
        goto out;
    if (c->res->namespaced) {
        struct strbuf nskey = STRBUF_INIT;
        struct store_item ns = {0};
        strbuf_addf(&nskey, "/core/namespaces//%s", c->ri.namespace);
        r = store_get(c->srv->store, nskey.buf, &ns);
        strbuf_release(&nskey);
        if (r < 0) {
            struct api_status_target t = {"", "namespaces", c->ri.namespace};
            store_item_release(&ns);
            reply_status(c, api_status_from_errno(r, NULL, &t));
            goto out;
        }
        r = namespace_terminating(c, &ns, obj);
        store_item_release(&ns);
        if (r)
            goto out;
    }
    name = get_string(meta, "name");
    gen = get_string(meta, "generateName");
    if ((!name || !*name) && gen && *gen) {
        char *g = generate_name(gen);
        set_string(meta, "name", g);
        free(g);
    }
    if (!managed_fields(c, NULL, obj, &mf))
        goto out;
    if (!node_may(c, obj) || !admit(c, NULL, obj))
        goto out;
    wh_attrs(c, WEBHOOK_CREATE, NULL, &wa);
    wa.name = get_string(meta, "name") ? get_string(meta, "name") : "";
    if (!wh_mutate(c, &wa, &obj))
        goto out;
    meta = meta_of(obj);
    /* A webhook may not move the object to another namespace. */
    if (!reconcile_namespace(c, meta, true) || !node_may(c, obj))
        goto out;
    /* The system fields and the strategy's PrepareForCreate come before validation, as in
     * kube's BeforeCreate (a Job's generated selector names its uid). */
    apiserver_random_uid(uid);
    set_string(meta, "uid", uid);
    if (c->res->builtin && c->res->builtin->prepare_create)
        c->res->builtin->prepare_create(obj);
    if (is_namespaces(c->res))
        lifecycle_ns_prepare_create(obj);
    set_managed_fields(obj, mf);
    mf = NULL;
    if (!validate(c, obj))
        goto out;
    meta = meta_of(obj);
    name = get_string(meta, "name");
    set_now(meta, "creationTimestamp");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "generation");
    CHECK(cJSON_AddNumberToObject(meta, "generation", 1));
    /* Status is not set by create on resources that have a status subresource. */
    if (has_status_subresource(c->res) && !c->res->builtin)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    if (is_pods(c->res)) {
        char ts[RFC3339_STR_MAX];
        (void)rfc3339_format((int64_t)time(NULL), ts);
        pods_prepare_create(obj, ts);
    }
    if ((r = finish_object(c, obj)) < 0) {
        reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (is_crd_resource(c->res))
        crd_set_status(obj);
    c->target.name = name;
    object_key(&c->key, c->res, c->ri.namespace, name);
    if (is_pdb(c->res) && (r = disruption_refresh(c->srv->store, obj, (int64_t)time(NULL))) < 0) {
        reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (is_crd_resource(c->res) && !crd_servable(c, obj))
        goto out;
    wa.name = name;
    if (!wh_validate(c, &wa, obj))
        goto out;
    if (encode_for_store(obj, &bytes) < 0) {
        reply_status(c, api_status_from_errno(-ENOMEM, NULL, NULL));
        goto out;
    }
    if (c->dry_run) {
        /* Everything but the write: the name must still be free. */
        struct store_item cur = {0};
        r = store_get(c->srv->store, c->key.buf, &cur);
        store_item_release(&cur);
        r = r == 0 ? -EEXIST : r == -ENOENT ? 0 : r;
    } else {
        r = store_create(c->srv->store, c->key.buf, bytes.buf, bytes.len, &rv);
    }
    if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (c->dry_run) {
        reply(c, 201, obj); /* no resourceVersion: nothing was stored */
        obj = NULL;
        goto out;
    }
    if (is_crd_resource(c->res))
        (void)serve_crd(c, obj); /* checked by crd_servable: cannot fail now */
    else if (reply_created_spliced(c, &bytes, rv))
        goto out;
    {
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
        set_string(meta_of(obj), "resourceVersion", buf);
    }
    reply(c, 201, obj);
    obj = NULL;
out:
    strbuf_release(&bytes);
    cJSON_Delete(obj);
    cJSON_Delete(mf);
}

/* The object's "spec", made when missing. */
static cJSON *member_spec(cJSON *obj)
{
    cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    if (!cJSON_IsObject(s)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
        CHECK(s = cJSON_AddObjectToObject(obj, "spec"));
    }
    return s;
}

/* Copies key k from src to dst (replacing), or removes it from dst when src lacks it. */
static void carry(cJSON *dst, const cJSON *src, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, k);
    cJSON_DeleteItemFromObjectCaseSensitive(dst, k);
    if (v)
        CHECK(cJSON_AddItemToObject(dst, k, cJSON_Duplicate(v, true)));
}

/* Reads the object a request acts on, with its revision; replies 404 when absent. */
static cJSON *read_current(struct call *c, uint64_t *ret_rv)
{
    struct store_item it = {0};
    int r = store_get(c->srv->store, c->key.buf, &it);
    cJSON *pod;

    if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, &c->target));
        return NULL;
    }
    pod = decode_stored(it.value, it.len, it.rv);
    *ret_rv = it.rv;
    store_item_release(&it);
    restamp(c->res, pod);
    if (!pod)
        reply_status(c, api_status_from_errno(-EIO, "stored object is corrupt", NULL));
    return pod;
}

/*
 * PUT semantics for a complete new object (owned), shared by update and patch. The client's
 * metadata.resourceVersion, when there is one, is its precondition (409 when stale). Without
 * one the write is unconditional (kube's AllowUnconditionalUpdate), and a write racing ours is
 * not the client's conflict: with `based_on` (the revision obj was computed from, for a patch)
 * or else the revision read here, such a race returns true without replying when `may_retry`,
 * for the caller to do it again over the newer object, as kube's GuaranteedUpdate does.
 */
static bool update_once(struct call *c, cJSON *obj, uint64_t based_on, bool may_retry)
{
    cJSON *meta, *old = NULL, *old_meta, *prev = NULL, *mf = NULL;
    struct webhook_attrs wa;
    struct store_item it = {0};
    struct strbuf bytes = STRBUF_INIT;
    const char *name, *rvs;
    uint64_t expect = 0, rv = 0;
    int64_t v;
    bool by_client = false, again = false;
    double old_gen = 1;
    int r;
    char msg[256];

    strbuf_reset(&c->wh_warnings);
    if (is_crd_resource(c->res))
        api_crd_default(obj);
    meta = meta_of(obj);
    name = get_string(meta, "name");
    if (!name || strcmp(name, c->ri.name)) {
        (void)snprintf(msg, sizeof(msg),
                       "the name of the object (%s) does not match the name on the URL (%s)",
                       name ? name : "", c->ri.name);
        reply_bad_request(c, msg);
        goto out;
    }
    if (!reconcile_namespace(c, meta, false))
        goto out;
    rvs = get_string(meta, "resourceVersion");
    if (rvs && *rvs) {
        if (parse_i64(rvs, &v) < 0 || v <= 0) {
            reply_bad_request(c, "metadata.resourceVersion is not a valid resource version");
            goto out;
        }
        expect = (uint64_t)v;
        by_client = true;
    } else {
        expect = based_on;
    }
    r = store_get(c->srv->store, c->key.buf, &it);
    if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    old = decode_stored(it.value, it.len, it.rv);
    if (!old) {
        reply_status(c, api_status_from_errno(-EIO, "stored object is corrupt", NULL));
        goto out;
    }
    if (expect && expect != it.rv) {
        if (!by_client && may_retry)
            again = true;
        else
            reply_status(c, api_status_conflict(&c->target));
        goto out;
    }
    expect = it.rv;
    old_meta = meta_of(old);
    {
        const cJSON *gen = cJSON_GetObjectItemCaseSensitive(old_meta, "generation");
        old_gen = cJSON_IsNumber(gen) ? gen->valuedouble : 1;
    }
    if (!managed_fields(c, old, obj, &mf))
        goto out;
    wh_attrs(c, WEBHOOK_UPDATE, NULL, &wa);
    if (!strcmp(c->ri.subresource, "status") && webhooks_wanted(c->srv->webhooks, &wa))
        CHECK(prev = cJSON_Duplicate(old, true)); /* the status write takes old over */
    if (!strcmp(c->ri.subresource, "status")) {
        /* /status writes change only status: the stored object with the new status, used as
         * it is (no copy: nothing below needs the old one, as nothing else changes). */
        cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(obj, "status");
        cJSON_Delete(obj);
        obj = old;
        old = NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        if (st)
            CHECK(cJSON_AddItemToObject(obj, "status", st));
        meta = meta_of(obj);
    } else if (*c->ri.subresource && !is_ns_finalize(c)) {
        reply_not_served(c);
        goto out;
    } else if (has_status_subresource(c->res)) {
        carry(obj, old, "status"); /* the main resource ignores status changes */
    }
    if ((old && !node_may(c, old)) || !node_may(c, obj))
        goto out;
    /* Server-owned metadata stays as it was (a status write kept it all). */
    if (old) {
        carry(meta, old_meta, "uid");
        carry(meta, old_meta, "creationTimestamp");
        carry(meta, old_meta, "deletionTimestamp");
        carry(meta, old_meta, "deletionGracePeriodSeconds");
        if (is_namespaces(c->res) && !*c->ri.subresource)
            carry(member_spec(obj), cJSON_GetObjectItem(old, "spec"), "finalizers");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "generation");
        CHECK(cJSON_AddNumberToObject(meta, "generation", old_gen));
    }
    if (!*c->ri.subresource && !admit(c, old, obj))
        goto out;
    wa.old = old ? old : prev;
    if (!wh_mutate(c, &wa, &obj))
        goto out;
    /* What the strategies' PrepareForUpdate does after mutating admission: a status write
     * keeps only the status a webhook left, a write of the main resource the stored status. */
    if (prev) {
        cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(obj, "status");
        cJSON_Delete(obj);
        CHECK(obj = cJSON_Duplicate(prev, true));
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        if (st)
            CHECK(cJSON_AddItemToObject(obj, "status", st));
    } else if ((!*c->ri.subresource || is_ns_finalize(c)) && has_status_subresource(c->res)) {
        carry(obj, old, "status");
    }
    meta = meta_of(obj);
    name = get_string(meta, "name");
    if (!name || strcmp(name, c->ri.name)) {
        reply_bad_request(c, "an admission webhook changed the name of the object");
        goto out;
    }
    if (!reconcile_namespace(c, meta, false))
        goto out;
    if (is_pods(c->res) && !*c->ri.subresource) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        pods_default_tolerations(obj);
        pods_validate_update(old, obj, &errs);
        if (field_errors_count(&errs)) {
            reply_status(c, api_status_invalid(c->res->kind, "", c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        field_errors_release(&errs);
    }
    set_managed_fields(obj, mf);
    mf = NULL;
    if (!validate(c, obj))
        goto out;
    if ((r = finish_object(c, obj)) < 0) {
        reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (old) {
        /* The generation counts spec changes (the strategies' PrepareForUpdate), compared
         * after defaulting so that a field left to its default is no change. */
        const cJSON *ns = cJSON_GetObjectItem(obj, "spec"), *os = cJSON_GetObjectItem(old, "spec");
        cJSON *m = meta_of(obj);
        cJSON_DeleteItemFromObjectCaseSensitive(m, "generation");
        CHECK(cJSON_AddNumberToObject(
            m, "generation", (ns || os) && !json_value_equal(ns, os) ? old_gen + 1 : old_gen));
    }
    if (c->res->builtin && c->res->builtin->prepare_update && old && !*c->ri.subresource)
        c->res->builtin->prepare_update(old, obj);
    if (c->res->builtin && c->res->builtin->check_update && old && !*c->ri.subresource) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        c->res->builtin->check_update(old, obj, &errs);
        if (field_errors_count(&errs)) {
            reply_status(c, api_status_invalid(c->res->kind, c->res->group, c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        field_errors_release(&errs);
    }
    if (is_pods(c->res) && !*c->ri.subresource) {
        /* After defaulting, so that fields the client left to their defaults compare equal. */
        struct field_errors errs = FIELD_ERRORS_INIT;
        pods_check_spec_update(old, obj, &errs);
        if (field_errors_count(&errs)) {
            reply_status(c, api_status_invalid(c->res->kind, "", c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        field_errors_release(&errs);
    }
    if (is_crd_resource(c->res))
        crd_set_status(obj);
    /* A budget's status follows its spec at once (disruption.h), as the controller's would. */
    if (is_pdb(c->res) && !*c->ri.subresource &&
        (r = disruption_refresh(c->srv->store, obj, (int64_t)time(NULL))) < 0) {
        reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (is_crd_resource(c->res) && !crd_servable(c, obj))
        goto out;
    if (!wh_validate(c, &wa, obj))
        goto out;
    if (encode_for_store(obj, &bytes) < 0) {
        reply_status(c, api_status_from_errno(-ENOMEM, NULL, NULL));
        goto out;
    }
    if (c->dry_run) {
        /* Everything but the write: the answer carries the stored revision. */
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)expect);
        set_string(meta_of(obj), "resourceVersion", buf);
        reply(c, 200, obj);
        obj = NULL;
        goto out;
    }
    if (old && deletes_during_update(c->res, old, obj)) {
        /* The last finalizer is gone: the deletion completes now. */
        r = store_delete(c->srv->store, c->key.buf, expect, NULL, &rv);
        if (r < 0)
            reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                         : api_status_from_errno(r, NULL, &c->target));
        else
            reply(c, 200, obj);
        obj = NULL;
        goto out;
    }
    r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, expect, &rv);
    if (r == -ESTALE && !by_client && may_retry) {
        again = true;
        goto out;
    }
    if (r < 0) {
        reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                     : api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (is_crd_resource(c->res))
        (void)serve_crd(c, obj);
    /* A terminating namespace may have lost its last finalizer: the worker looks now. */
    if (is_namespaces(c->res) && lifecycle_ns_terminating(obj))
        lifecycle_kick(c->srv->lifecycle);
    {
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
        set_string(meta_of(obj), "resourceVersion", buf);
    }
    reply(c, 200, obj);
    obj = NULL;
out:
    store_item_release(&it);
    strbuf_release(&bytes);
    cJSON_Delete(obj);
    cJSON_Delete(old);
    cJSON_Delete(prev);
    cJSON_Delete(mf);
    return again;
}

/* The operations a JSON patch may have (kube's maxJSONPatchOperations). */
#define MAX_PATCH_OPS 10000

/* ---- scale (a CRD's subresources.scale) ---- */

/* The member at a CRD's JSON path (".spec.replicas") in o, or NULL. With make, the objects on
 * the way are made and the last member is replaced by v (taken over). */
static cJSON *path_member(cJSON *o, const char *path, cJSON *v)
{
    char *copy = xstrdup(*path == '.' ? path + 1 : path), *save = NULL, *k, *next;
    cJSON *cur = o;

    for (k = strtok_r(copy, ".", &save); k && cur; k = next) {
        next = strtok_r(NULL, ".", &save);
        if (!next) {
            if (v) {
                cJSON_DeleteItemFromObjectCaseSensitive(cur, k);
                CHECK(cJSON_AddItemToObject(cur, k, v));
                cur = v;
            } else {
                cur = cJSON_GetObjectItemCaseSensitive(cur, k);
            }
            break;
        }
        if (v && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cur, k))) {
            cJSON_DeleteItemFromObjectCaseSensitive(cur, k);
            CHECK(cJSON_AddObjectToObject(cur, k));
        }
        cur = cJSON_GetObjectItemCaseSensitive(cur, k);
    }
    if (!k) {
        cJSON_Delete(v); /* an empty path names nothing */
        cur = NULL;
    }
    free(copy);
    return cur;
}

/* autoscaling/v1 Scale of a custom resource (apiextensions-apiserver's scaleFromCustomResource)
 * or of an apps/v1 workload (scaleFromDeployment and its siblings): the replicas at its paths
 * (0 when absent), the selector string when it has one. */
static cJSON *scale_of(const struct api_resource *res, const cJSON *obj)
{
    static const char *const keep[] = {"name", "namespace", "uid", "resourceVersion",
                                       "creationTimestamp"};
    cJSON *sc = cJSON_CreateObject(), *md, *x;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *sel = NULL;
    struct strbuf selector = STRBUF_INIT;

    CHECK(sc && cJSON_AddStringToObject(sc, "kind", "Scale") &&
          cJSON_AddStringToObject(sc, "apiVersion", "autoscaling/v1"));
    CHECK(md = cJSON_AddObjectToObject(sc, "metadata"));
    for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
        if ((x = cJSON_GetObjectItemCaseSensitive(m, keep[i])))
            CHECK(cJSON_AddItemToObject(md, keep[i], cJSON_Duplicate(x, true)));
    x = path_member((cJSON *)obj, res->scale_spec_path, NULL);
    CHECK(cJSON_AddNumberToObject(cJSON_AddObjectToObject(sc, "spec"), "replicas",
                                  cJSON_IsNumber(x) ? x->valuedouble : 0));
    CHECK(x = cJSON_AddObjectToObject(sc, "status"));
    {
        const cJSON *st = path_member((cJSON *)obj, res->scale_status_path, NULL);
        CHECK(cJSON_AddNumberToObject(x, "replicas", cJSON_IsNumber(st) ? st->valuedouble : 0));
    }
    if (res->scale_selector_path) {
        const cJSON *s = path_member((cJSON *)obj, res->scale_selector_path, NULL);
        /* A built-in workload names its LabelSelector; a CRD a selector string. */
        if (cJSON_IsObject(s) && api_selector_string(s, &selector) == 0)
            sel = selector.buf;
        else
            sel = cJSON_GetStringValue(s);
    }
    if (sel && *sel)
        CHECK(cJSON_AddStringToObject(x, "selector", sel));
    strbuf_release(&selector);
    return sc;
}

/*
 * GET, PUT and PATCH of <resource>/<name>/scale: the Scale of the object, and a write of
 * spec.replicas to its specReplicasPath through the update path (same admission, conflicts
 * and answer, given as the Scale).
 */
static void do_scale(struct call *c)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *obj = NULL, *sc = NULL, *patch = NULL, *rep;
    struct codec_error err = {0};
    char *sub = c->ri.subresource;
    uint64_t rv = 0;
    const char *want_rv;

    c->as_scale = true;
    if (!strcmp(c->ri.verb, "get")) {
        do_get(c);
        return;
    }
    if (strcmp(c->ri.verb, "update") && strcmp(c->ri.verb, "patch")) {
        reply_status(c, api_status_failure(405, "MethodNotAllowed",
                                           "the server does not allow this method on the "
                                           "requested resource",
                                           &c->target));
        return;
    }
    if (!(obj = read_current(c, &rv)))
        return;
    if (!strcmp(c->ri.verb, "update")) {
        if (!(sc = read_body(c)))
            goto out;
    } else {
        const char *ct = http_request_header(c->req, "Content-Type");
        size_t len;
        const char *body = http_request_body(c->req, &len);
        bool json_patch = ct && !strncmp(ct, "application/json-patch+json", 27);
        int r;

        sc = scale_of(c->res, obj);
        if (json_parse(body, len, NULL, &patch, &err) < 0) {
            reply_bad_request(c, "the patch is not valid JSON");
            goto out;
        }
        /* A Scale has no lists: a strategic merge patch is a merge patch. */
        r = json_patch ? json_patch_apply(&sc, patch, MAX_PATCH_OPS, &err)
                       : merge_patch_apply(&sc, patch, &err);
        if (r < 0) {
            reply_status(c, api_status_failure(422, "Invalid", err.msg, &c->target));
            goto out;
        }
    }
    rep =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sc, "spec"), "replicas");
    if (!cJSON_IsNumber(rep) || rep->valuedouble < 0 || rep->valuedouble > INT32_MAX ||
        rep->valuedouble != (double)(int32_t)rep->valuedouble) {
        field_error_add(&errs, FIELD_INVALID, "spec.replicas", NULL,
                        "must be an integer greater than or equal to 0");
        reply_status(c, api_status_invalid("Scale", "autoscaling", c->ri.name, &errs));
        goto out;
    }
    (void)path_member(obj, c->res->scale_spec_path, cJSON_CreateNumber(rep->valuedouble));
    /* The Scale's resourceVersion, when given, is the write's precondition. */
    want_rv = get_string(cJSON_GetObjectItemCaseSensitive(sc, "metadata"), "resourceVersion");
    set_string(meta_of(obj), "resourceVersion", want_rv ? want_rv : "");
    if (!want_rv || !*want_rv)
        cJSON_DeleteItemFromObjectCaseSensitive(meta_of(obj), "resourceVersion");
    c->ri.subresource = (char *)"";
    c->mf_subresource = "scale";
    (void)update_once(c, obj, want_rv && *want_rv ? 0 : rv, false);
    c->mf_subresource = NULL;
    c->ri.subresource = sub;
    obj = NULL;
out:
    field_errors_release(&errs);
    cJSON_Delete(obj);
    cJSON_Delete(sc);
    cJSON_Delete(patch);
}

/* Tries of an unconditional write that keeps losing races before it answers 409. Every lost
 * race is another writer's success, so this bounds only a pathological stream of writers
 * (kube's GuaranteedUpdate retries until the request's deadline). */
#define UPDATE_TRIES 64

static int first_key(const struct store_item *it, void *ud)
{
    char **k = ud;
    *k = xstrdup(it->key);
    return 1;
}

/* A member's raw value is exactly the JSON string "want". */
static bool member_is_string(const char *body, const struct json_member *m, const char *want)
{
    size_t n = strlen(want);

    return m->end - m->start == n + 2 && body[m->start] == '"' && body[m->end - 1] == '"' &&
           !memcmp(body + m->start + 1, want, n);
}

static bool member_named(const struct json_member *m, const char *name)
{
    return m->key_len == strlen(name) && !memcmp(m->key, name, m->key_len);
}

/*
 * Where the stored object's status value starts, or 0 unless it is the object's last member:
 * the new status then goes in up to the closing brace and nothing after it can be lost. Stored
 * objects hold the kind's properties only, once each (writes are validated and pruned), so
 * status is last when every other property of the schema came before it: that is checked on
 * the small members in front, without walking the status (17 KB in a report) to its end.
 */
static size_t stored_status_start(const struct store_item *it, const struct api_schema *schema)
{
    struct json_member m;
    size_t pos = 0, nprops = 0;
    uint64_t seen = 0, all;

    if (!schema->props || (schema->flags & API_S_PRESERVE))
        return 0; /* unknown members may be stored too */
    for (const struct api_prop *p = schema->props; p->name; p++)
        nprops++;
    if (nprops > 64)
        return 0;
    all = nprops == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nprops) - 1;
    while (json_member_key(it->value, it->len, &pos, &m) == 0) {
        const struct api_prop *p;
        uint64_t bit;

        for (p = schema->props; p->name && !member_named(&m, p->name); p++)
            ;
        if (!p->name)
            return 0;
        bit = (uint64_t)1 << (p - schema->props);
        if (seen & bit)
            return 0;
        seen |= bit;
        if (!strcmp(p->name, "status"))
            return seen == all && it->value[it->len - 1] == '}' ? m.start : 0;
        if (!(pos = json_value_end(it->value, it->len, m.start)))
            return 0;
    }
    return 0;
}

/* Whether body[pos..len) holds only the object's closing brace, with whitespace around it:
 * after the last member, what json_parse() accepts. */
static bool only_closing_brace(const char *body, size_t len, size_t pos)
{
    bool brace = false;

    for (; pos < len; pos++) {
        if (body[pos] == '}' && !brace)
            brace = true;
        else if (body[pos] != ' ' && body[pos] != '\t' && body[pos] != '\n' && body[pos] != '\r')
            return false;
    }
    return brace;
}

/*
 * A /status PUT whose status is already in canonical form (api_canonical_check) when the
 * server was made with apiserver_opts.status_splice: the request's status bytes replace the
 * stored object's, no tree is built of either, and the answer is the new bytes with the
 * resourceVersion spliced in. These are the bytes update_once() would write and answer.
 * Returns false having replied nothing whenever the request needs update_once(): any other
 * body shape (members other than apiVersion, kind, metadata, spec and status, or any twice), a
 * resourceVersion that is not the stored one, a node identity whose objects must be checked,
 * a dry run, a write that lost a race. That path then also writes every error.
 */
static bool splice_status_write(struct call *c)
{
    enum { AV = 1, KIND = 2, META = 4, SPEC = 8, STATUS = 16 };
    const char *body, *name, *rvs, *ns;
    const struct api_schema *schema =
        c->res->builtin ? api_kind_schema(c->res->builtin) : c->res->schema;
    const struct api_prop *sp = schema ? api_schema_prop(schema, "status") : NULL;
    struct strbuf av = STRBUF_INIT, bytes = STRBUF_INIT;
    struct json_member m, st = {0};
    struct store_item it = {0};
    size_t len, pos = 0, ss, se, vlen;
    unsigned seen = 0, bit;
    uint64_t expect = 0, rv;
    cJSON *meta = NULL;
    bool done = false;
    int64_t v;
    int r;

    if (!c->srv->status_splice || c->dry_run || c->check_objects || !sp ||
        is_crd_resource(c->res) || c->res->multi_version || !json_body(c))
        return false;
    body = http_request_body(c->req, &len);
    /* json_parse's limits (a value takes two bytes at least): its errors, not ours */
    if (len > codec_default_limits.max_bytes || len / 2 >= codec_default_limits.max_nodes)
        return false;
    api_version_of(c->res, &av);
    while ((r = json_member_key(body, len, &pos, &m)) == 0) {
        bit = member_named(&m, "apiVersion") ? AV
              : member_named(&m, "kind")     ? KIND
              : member_named(&m, "metadata") ? META
              : member_named(&m, "spec")     ? SPEC
              : member_named(&m, "status")   ? STATUS
                                             : 0;
        if (!bit || (seen & bit))
            goto out;
        seen |= bit;
        /* status is checked where it lies (that one walk finds its end), the rest skipped */
        if (bit == STATUS) {
            if (!api_canonical_prefix(sp->schema, body + m.start, len - m.start, 0, &vlen))
                goto out;
            m.end = m.start + vlen;
            st = m;
        } else if (!(m.end = json_value_end(body, len, m.start))) {
            goto out;
        }
        pos = m.end;
        if ((bit == AV && !member_is_string(body, &m, av.buf)) ||
            (bit == KIND && !member_is_string(body, &m, c->res->kind)))
            goto out;
        if (bit == META && json_parse(body + m.start, m.end - m.start, NULL, &meta, NULL) < 0)
            goto out;
        if (bit == SPEC) { /* ignored, as by update_once(), but it must be JSON */
            cJSON *spec = NULL;
            r = json_parse(body + m.start, m.end - m.start, NULL, &spec, NULL);
            cJSON_Delete(spec);
            if (r < 0)
                goto out;
        }
    }
    /* trailing bytes are the general path's 400, never stored */
    if (r != -ENOENT || !only_closing_brace(body, len, pos) || !(seen & STATUS) ||
        !cJSON_IsObject(meta))
        goto out;
    name = get_string(meta, "name");
    ns = get_string(meta, "namespace");
    rvs = get_string(meta, "resourceVersion");
    if (!name || strcmp(name, c->ri.name) ||
        (c->res->namespaced && ns && *ns && strcmp(ns, c->ri.namespace)))
        goto out;
    if (rvs && *rvs) {
        if (parse_i64(rvs, &v) < 0 || v <= 0)
            goto out;
        expect = (uint64_t)v;
    }
    if (store_get(c->srv->store, c->key.buf, &it) < 0 || (expect && expect != it.rv) ||
        !it.obj->splice_at || !(ss = stored_status_start(&it, schema)) || ss < it.obj->splice_at)
        goto out;
    se = it.len - 1;
    strbuf_add(&bytes, it.value, ss);
    strbuf_add(&bytes, body + st.start, st.end - st.start);
    strbuf_add(&bytes, it.value + se, it.len - se);
    if (store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, it.rv, &rv) < 0)
        goto out;
    /* metadata, and so the splice point, come before status and are unchanged */
    CHECK(splice_bytes(bytes.buf, bytes.len, it.obj->splice_at, it.obj->splice_comma, rv,
                       partial_of(c), NULL, &c->resp->body));
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    atomic_fetch_add_explicit(&c->srv->status_splices, 1, memory_order_relaxed);
    done = true;
out:
    store_item_release(&it);
    strbuf_release(&av);
    strbuf_release(&bytes);
    cJSON_Delete(meta);
    return done;
}

static void do_update(struct call *c)
{
    struct webhook_attrs wa;

    wh_attrs(c, WEBHOOK_UPDATE, NULL, &wa);
    /* The fast path admits nothing: taken only when no webhook wants the write. */
    if (!strcmp(c->ri.subresource, "status") && !webhooks_wanted(c->srv->webhooks, &wa) &&
        splice_status_write(c))
        return;
    /* The body is decoded again for another try (rare) rather than copied for one each time. */
    for (int i = 1;; i++) {
        cJSON *obj = read_body(c);

        if (!obj || !update_once(c, obj, 0, i < UPDATE_TRIES))
            break;
    }
}

/* ---- patch (reference 3.5) ---- */

static bool patch_sets_rv(const cJSON *patch, bool json_patch)
{
    const cJSON *op;

    if (!json_patch)
        return cJSON_GetObjectItem(cJSON_GetObjectItem(patch, "metadata"), "resourceVersion") !=
               NULL;
    cJSON_ArrayForEach(op, patch)
    {
        const char *path = get_string(op, "path");
        if (path && !strcmp(path, "/metadata/resourceVersion"))
            return true;
    }
    return false;
}

/*
 * Server-side apply (apply.h): PATCH with Content-Type application/apply-patch+yaml. The body
 * is the applied configuration in YAML or JSON; fieldManager is required (422 on PatchOptions
 * otherwise, as ValidatePatchOptions); force=true takes conflicting fields over. The object is
 * created when absent (201), left unwritten when nothing changes, and otherwise written
 * through the update path (admission, validation, optimistic concurrency with retries).
 */
static void do_apply(struct call *c)
{
    const char *fm = http_request_query(c->req, "fieldManager");
    const char *fs = http_request_query(c->req, "force");
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct codec_error err = {0};
    struct strbuf msg = STRBUF_INIT, want = STRBUF_INIT;
    size_t len, ndocs = 0;
    const char *body = http_request_body(c->req, &len), *av, *kind, *name;
    cJSON **docs = NULL, *config, *obj = NULL, *st = NULL;
    bool force = fs && (!strcmp(fs, "true") || !strcmp(fs, "1"));
    char now[RFC3339_STR_MAX];
    int r;

    if (!fm || !*fm)
        field_error_add(&errs, FIELD_REQUIRED, "fieldManager", NULL, "is required for apply patch");
    apply_check_field_manager(fm, &errs);
    if (fs && !force && strcmp(fs, "false") && strcmp(fs, "0"))
        field_error_add(&errs, FIELD_INVALID, "force", fs, "must be true or false");
    if (field_errors_count(&errs)) {
        reply_status(c, api_status_invalid("PatchOptions", "meta.k8s.io", "", &errs));
        goto out;
    }
    if (yaml_parse_stream(body, len, NULL, &docs, &ndocs, &err) < 0 || ndocs != 1 ||
        !cJSON_IsObject(docs[0])) {
        strbuf_addf(&msg, "error decoding YAML: %s",
                    err.msg[0] ? err.msg : "the body must hold exactly one object");
        reply_bad_request(c, msg.buf);
        goto out;
    }
    config = docs[0];
    av = get_string(config, "apiVersion");
    kind = get_string(config, "kind");
    strbuf_addf(&want, "%s%s%s", c->res->group, *c->res->group ? "/" : "", c->res->version);
    if (!kind || !*kind || !av || !*av) {
        strbuf_addf(&msg, "Object '%s' is missing in the applied configuration",
                    !kind || !*kind ? "Kind" : "apiVersion");
        reply_bad_request(c, msg.buf);
        goto out;
    }
    if (strcmp(av, want.buf) || strcmp(kind, c->res->kind)) {
        strbuf_addf(&msg,
                    "the apiVersion and kind of the applied configuration (%s, %s) do not match "
                    "the resource (%s, %s)",
                    av, kind, want.buf, c->res->kind);
        reply_bad_request(c, msg.buf);
        goto out;
    }
    name = get_string(cJSON_GetObjectItem(config, "metadata"), "name");
    if (!name || strcmp(name, c->ri.name)) {
        strbuf_addf(&msg, "the name of the object (%s) does not match the name on the URL (%s)",
                    name ? name : "", c->ri.name);
        reply_bad_request(c, msg.buf);
        goto out;
    }
    for (int i = 1;; i++) {
        struct store_item it = {0};
        cJSON *live = NULL;
        bool unchanged = false;

        r = store_get(c->srv->store, c->key.buf, &it);
        if (r < 0 && r != -ENOENT) {
            reply_status(c, api_status_from_errno(r, NULL, &c->target));
            break;
        }
        if (r == 0 && !(live = decode_stored(it.value, it.len, it.rv))) {
            store_item_release(&it);
            reply_status(c, api_status_from_errno(-EIO, "stored object is corrupt", NULL));
            break;
        }
        restamp(c->res, live);
        (void)rfc3339_format((int64_t)time(NULL), now);
        r = apply_patch(c->res, c->ri.subresource, live, config, fm, force, now, &obj, &unchanged,
                        &st);
        cJSON_Delete(live);
        if (r < 0) {
            store_item_release(&it);
            reply_status(c, st);
            break;
        }
        if (unchanged) {
            store_item_release(&it);
            reply(c, 200, obj);
            obj = NULL;
            break;
        }
        c->applied = true;
        /* Only a resourceVersion the configuration itself sets is a precondition. */
        if (!get_string(cJSON_GetObjectItem(config, "metadata"), "resourceVersion"))
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(obj, "metadata"),
                                                    "resourceVersion");
        if (!it.value) {
            if (*c->ri.subresource) {
                reply_status(c, api_status_not_found(&c->target));
                break;
            }
            create_object(c, obj);
            obj = NULL;
            break;
        }
        r = update_once(c, obj, it.rv, i < UPDATE_TRIES);
        obj = NULL;
        store_item_release(&it);
        if (!r)
            break;
    }
out:
    cJSON_Delete(obj);
    codec_docs_free(docs, ndocs);
    field_errors_release(&errs);
    strbuf_release(&msg);
    strbuf_release(&want);
}

static void do_patch(struct call *c)
{
    const char *ct = http_request_header(c->req, "Content-Type");
    struct codec_error err = {0};
    struct strbuf msg = STRBUF_INIT;
    size_t len;
    const char *body = http_request_body(c->req, &len);
    cJSON *patch = NULL, *obj = NULL;
    const struct api_patch_meta *meta = NULL;
    uint64_t rv = 0;
    bool json_patch = ct && !strncmp(ct, "application/json-patch+json", 27);
    bool merge = ct && !strncmp(ct, "application/merge-patch+json", 28);
    bool smp = ct && !strncmp(ct, "application/strategic-merge-patch+json", 38);
    int r;

    if (ct && !strncmp(ct, "application/apply-patch+yaml", 28)) {
        do_apply(c);
        return;
    }
    if (!json_patch && !merge && !smp) {
        /* application/apply-patch+cbor included: koord has no CBOR codec. */
        reply_status(c, api_status_failure(415, "UnsupportedMediaType",
                                           "the body of the request was in an unknown format - "
                                           "accepted media types include: "
                                           "application/json-patch+json, "
                                           "application/merge-patch+json, "
                                           "application/apply-patch+yaml, "
                                           "application/strategic-merge-patch+json",
                                           NULL));
        return;
    }
    if (http_request_query(c->req, "force")) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        field_error_add(&errs, FIELD_FORBIDDEN, "force", NULL,
                        "may not be specified for non-apply patch");
        reply_status(c, api_status_invalid("PatchOptions", "meta.k8s.io", "", &errs));
        field_errors_release(&errs);
        return;
    }
    if (json_parse(body, len, NULL, &patch, &err) < 0) {
        strbuf_addf(&msg, "the patch is not valid JSON: %s", err.msg);
        reply_bad_request(c, msg.buf);
        goto out;
    }
    /* Built-in kinds only, as kube-apiserver: custom resources have no patch metadata. */
    if (smp &&
        !(meta = c->res->crd_name ? NULL : api_patch_meta_find(c->res->group, c->res->kind))) {
        reply_status(c, api_status_failure(415, "UnsupportedMediaType",
                                           "strategic merge patch is not supported for custom "
                                           "resources; use application/merge-patch+json or "
                                           "application/json-patch+json",
                                           NULL));
        goto out;
    }
    if (json_patch && !cJSON_IsArray(patch)) {
        reply_bad_request(c, "a JSON patch must be an array of operations");
        goto out;
    }
    if (json_patch && cJSON_GetArraySize(patch) > MAX_PATCH_OPS) {
        reply_status(c, api_status_failure(413, "RequestEntityTooLarge",
                                           "the JSON patch has more than 10000 operations", NULL));
        goto out;
    }
    /* Applied to the object read; done again over a newer one when a write raced ours
     * (update_once), unless the patch itself names the resourceVersion. */
    for (int i = 1;; i++) {
        if (!(obj = read_current(c, &rv)))
            goto out;
        if (json_patch)
            r = json_patch_apply(&obj, patch, MAX_PATCH_OPS, &err);
        else if (smp)
            r = strategic_merge_patch_apply(&obj, patch, api_patch_meta_lookup, meta, &err);
        else
            r = merge_patch_apply(&obj, patch, &err);
        if (r == -ENOMEM || r == -E2BIG) {
            reply_status(c, api_status_from_errno(r, err.msg, NULL));
            goto out;
        }
        /* A strategic merge patch that does not apply is malformed (smp.h). */
        if (r < 0 && smp) {
            reply_bad_request(c, err.msg);
            goto out;
        }
        if (r < 0) {
            struct field_errors errs = FIELD_ERRORS_INIT;
            field_error_add(&errs, FIELD_INVALID, "", NULL, "%s", err.msg);
            reply_status(c, api_status_invalid(c->res->kind, c->res->group, c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        if (!cJSON_IsObject(obj)) {
            reply_bad_request(c, "the patched object is not a JSON object");
            goto out;
        }
        /* Only a resourceVersion the patch itself sets is a precondition (reference 3.5). */
        if (!patch_sets_rv(patch, json_patch))
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(obj, "metadata"),
                                                    "resourceVersion");
        r = update_once(c, obj, rv, i < UPDATE_TRIES);
        obj = NULL;
        if (!r)
            break;
    }
out:
    cJSON_Delete(patch);
    cJSON_Delete(obj);
    strbuf_release(&msg);
}

/* Removes every object under prefix (the objects of a deleted namespace or CRD). */
static void delete_all(struct apiserver *srv, const char *prefix)
{
    char *key = NULL;

    while (store_list(srv->store, prefix, NULL, 1, first_key, &key, NULL) == 0 && key) {
        int r = store_delete(srv->store, key, 0, NULL, NULL);
        FREE_AND_NULL(key);
        if (r < 0 && r != -ENOENT) {
            log_warn("apiserver", "cannot delete under \"%s\": %s, ignoring", prefix, err_str(r));
            break;
        }
    }
    free(key);
}

/* DeleteOptions.gracePeriodSeconds from the body or the query; -1 when not given. */
static int64_t requested_grace(struct call *c, const cJSON *opts)
{
    const cJSON *g = cJSON_GetObjectItem(opts, "gracePeriodSeconds");
    const char *q = http_request_query(c->req, "gracePeriodSeconds");
    char *end = NULL;
    long long v;

    if (cJSON_IsNumber(g))
        return g->valuedouble < 0 ? 1 : (int64_t)g->valuedouble;
    if (!q || !*q)
        return -1;
    v = strtoll(q, &end, 10);
    return *end ? -1 : v < 0 ? 1 : (int64_t)v;
}

/* DELETE on a collection: every object passing the selectors goes, or with finalizers gets its
 * deletionTimestamp (as a single delete would). Answers a Success status. */
struct doomed {
    char **keys;
    size_t n;
    struct label_selector *labels;
    struct field_req *fields;
    size_t nfields;
};

static int collect_doomed(const struct store_item *it, void *ud)
{
    struct doomed *d = ud;
    cJSON *o = decode_stored(it->value, it->len, it->rv);

    if (o && selected(o, d->labels, d->fields, d->nfields)) {
        d->keys = xrealloc(d->keys, (d->n + 1) * sizeof(char *));
        d->keys[d->n++] = xstrdup(it->key);
    }
    cJSON_Delete(o);
    return d->n >= MAX_LIST ? 1 : 0;
}

static void do_deletecollection(struct call *c)
{
    struct doomed d = {0};
    struct strbuf prefix = STRBUF_INIT;
    int64_t grace = -1, now = (int64_t)time(NULL);
    int r;

    if (!parse_selectors(c, &d.labels, &d.fields, &d.nfields))
        goto out;
    {
        /* DeleteOptions: its dryRun counts as the query's does */
        size_t len;
        cJSON *opts = NULL;
        const cJSON *dr;
        bool ok = true;
        if (http_request_body(c->req, &len) && len && !(opts = decode_body(c)))
            goto out;
        dr = cJSON_GetObjectItem(opts, "dryRun");
        for (int i = 0; ok && i < cJSON_GetArraySize(dr); i++) {
            const cJSON *v = cJSON_GetArrayItem(dr, i);
            ok = parse_dry_run(c, cJSON_IsString(v) ? v->valuestring : "");
        }
        grace = requested_grace(c, opts);
        cJSON_Delete(opts);
        if (!ok)
            goto out;
    }
    strbuf_addf(&prefix, "/%s/%s/", *c->res->group ? c->res->group : "core", c->res->plural);
    if (c->res->namespaced && *c->ri.namespace)
        strbuf_addf(&prefix, "%s/", c->ri.namespace);
    r = store_list(c->srv->store, prefix.buf, NULL, 0, collect_doomed, &d, NULL);
    if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    for (size_t i = 0; i < d.n && !c->dry_run; i++) {
        struct store_item it = {0};
        cJSON *o;
        if (store_get(c->srv->store, d.keys[i], &it) < 0)
            continue;
        o = decode_stored(it.value, it.len, it.rv);
        if (o) {
            /* What a single delete would refuse stays (admit_delete()). */
            struct strbuf why = STRBUF_INIT;
            int ar = admit_delete(c->srv->store, c->res, o, &why);
            struct webhook_attrs wa;
            strbuf_release(&why);
            wh_attrs(c, WEBHOOK_DELETE, o, &wa);
            wa.name = get_string(meta_of(o), "name") ? get_string(meta_of(o), "name") : "";
            wa.ns = c->res->namespaced && get_string(meta_of(o), "namespace")
                        ? get_string(meta_of(o), "namespace")
                        : "";
            if (ar == 0 && webhooks_wanted(c->srv->webhooks, &wa)) {
                struct webhook_outcome wo = WEBHOOK_OUTCOME_INIT;
                ar = webhooks_mutate(c->srv->webhooks, &wa, NULL, &wo);
                if (ar == 0)
                    ar = webhooks_validate(c->srv->webhooks, &wa, NULL, &wo);
                webhook_outcome_release(&wo);
            }
            if (ar < 0) {
                cJSON_Delete(o);
                store_item_release(&it);
                continue;
            }
        }
        if (o && is_pods(c->res) && lifecycle_pod_grace(o, grace) > 0) {
            /* Bound pods stop gracefully, as a single delete would. */
            struct strbuf bytes = STRBUF_INIT;
            if (lifecycle_pod_mark(o, lifecycle_pod_grace(o, grace), now) &&
                encode_for_store(o, &bytes) == 0)
                (void)store_update(c->srv->store, d.keys[i], bytes.buf, bytes.len, it.rv, NULL);
            strbuf_release(&bytes);
            lifecycle_kick(c->srv->lifecycle);
        } else if (o && cJSON_GetArraySize(cJSON_GetObjectItem(meta_of(o), "finalizers")) > 0) {
            struct strbuf bytes = STRBUF_INIT;
            if (!cJSON_GetObjectItem(meta_of(o), "deletionTimestamp")) {
                set_now(meta_of(o), "deletionTimestamp");
                cJSON_DeleteItemFromObjectCaseSensitive(meta_of(o), "deletionGracePeriodSeconds");
                CHECK(cJSON_AddNumberToObject(meta_of(o), "deletionGracePeriodSeconds", 0));
            }
            if (encode_for_store(o, &bytes) == 0)
                (void)store_update(c->srv->store, d.keys[i], bytes.buf, bytes.len, it.rv, NULL);
            strbuf_release(&bytes);
        } else {
            (void)store_delete(c->srv->store, d.keys[i], it.rv, NULL, NULL);
        }
        cJSON_Delete(o);
        store_item_release(&it);
    }
    reply_status(c, api_status_success(200, NULL, NULL));
out:
    for (size_t i = 0; i < d.n; i++)
        free(d.keys[i]);
    free(d.keys);
    label_selector_free(d.labels);
    field_reqs_free(d.fields, d.nfields);
    strbuf_release(&prefix);
}

static void delete_in_namespace(const struct api_resource *res, void *ud)
{
    struct call *c = ud;
    struct strbuf prefix = STRBUF_INIT;

    if (!res->namespaced)
        return;
    strbuf_addf(&prefix, "/%s/%s/%s/", *res->group ? res->group : "core", res->plural, c->ri.name);
    delete_all(c->srv, prefix.buf);
    strbuf_release(&prefix);
}

/*
 * Writes a deletion that keeps the object (finalizers, a namespace's content, a pod's grace
 * period) and answers it, 200 as kube does (202 only for orphanDependents=false).
 */
static void delete_marked(struct call *c, cJSON **old, uint64_t rv_was)
{
    struct strbuf bytes = STRBUF_INIT;
    uint64_t rv = rv_was;
    int r = encode_for_store(*old, &bytes);

    if (r == 0 && !c->dry_run)
        r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, rv_was, &rv);
    strbuf_release(&bytes);
    if (r < 0) {
        reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                     : api_status_from_errno(r, NULL, &c->target));
        return;
    }
    {
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
        set_string(meta_of(*old), "resourceVersion", buf);
    }
    reply(c, 200, *old);
    *old = NULL;
    if (!c->dry_run)
        lifecycle_kick(c->srv->lifecycle);
}

/* The kind rules for a delete (admit_delete()); replies and returns false on refusal. */
static bool admit_deletion(struct call *c, const cJSON *old)
{
    struct strbuf why = STRBUF_INIT;
    int r = admit_delete(c->srv->store, c->res, old, &why);

    if (r == -EACCES)
        reply_status(c, api_status_failure(400, "", why.buf, NULL));
    else if (r < 0)
        reply_status(c, api_status_from_errno(r, NULL, NULL));
    strbuf_release(&why);
    return r == 0;
}

static void do_delete(struct call *c)
{
    struct store_item it = {0};
    cJSON *old = NULL, *meta;
    uint64_t rv = 0;
    int64_t grace = -1;
    int r;

    r = store_get(c->srv->store, c->key.buf, &it);
    if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, &c->target));
        return;
    }
    old = decode_stored(it.value, it.len, it.rv);
    meta = old ? meta_of(old) : NULL;
    {
        size_t len;
        cJSON *opts = NULL;
        bool ok = true;
        /* DeleteOptions in any body form; one that does not decode is refused (400/415). */
        if (http_request_body(c->req, &len) && len && !(opts = decode_body(c)))
            goto out;
        grace = requested_grace(c, opts);
        if (opts && old) {
            const cJSON *dr = cJSON_GetObjectItem(opts, "dryRun");
            ok = preconditions_hold(c, cJSON_GetObjectItem(opts, "preconditions"), old, it.rv);
            for (int i = 0; ok && i < cJSON_GetArraySize(dr); i++) {
                const cJSON *v = cJSON_GetArrayItem(dr, i);
                ok = parse_dry_run(c, cJSON_IsString(v) ? v->valuestring : "");
            }
        }
        cJSON_Delete(opts);
        if (!ok)
            goto out;
        if (c->check_objects && !old) {
            /* A row that does not decode cannot be shown to be about the node. */
            reply_status(
                c, api_status_failure(403, "Forbidden", "stored object is unreadable", &c->target));
            goto out;
        }
        if (old && !node_may(c, old))
            goto out;
        if (old && !admit_deletion(c, old))
            goto out;
        if (old) {
            struct webhook_attrs wa;
            wh_attrs(c, WEBHOOK_DELETE, old, &wa);
            if (!wh_mutate(c, &wa, NULL) || !wh_validate(c, &wa, NULL))
                goto out;
        }
    }
    /* A namespace is emptied first (lifecycle.h); the worker removes it. */
    if (meta && is_namespaces(c->res) &&
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(old, "spec"), "finalizers")) >
            0) {
        (void)lifecycle_ns_mark(old, (int64_t)time(NULL));
        delete_marked(c, &old, it.rv);
        goto out;
    }
    /* A pod a node runs stops within its grace period, one with finalizers waits for them
     * (lifecycle.h); otherwise it goes now. */
    if (meta && is_pods(c->res) &&
        lifecycle_pod_delete(old, grace, (int64_t)time(NULL)) != LIFECYCLE_POD_REMOVE) {
        delete_marked(c, &old, it.rv);
        goto out;
    }
    /* Finalizers keep the object, marked for deletion, until they are gone. */
    if (meta && cJSON_GetArraySize(cJSON_GetObjectItem(meta, "finalizers")) > 0) {
        /* Deleted now but for the finalizers (a forced pod delete included). */
        if (!cJSON_GetObjectItem(meta, "deletionTimestamp") || is_pods(c->res)) {
            if (!cJSON_GetObjectItem(meta, "deletionTimestamp"))
                set_now(meta, "deletionTimestamp");
            cJSON_DeleteItemFromObjectCaseSensitive(meta, "deletionGracePeriodSeconds");
            CHECK(cJSON_AddNumberToObject(meta, "deletionGracePeriodSeconds", 0));
        }
        delete_marked(c, &old, it.rv);
        goto out;
    }
    if (c->dry_run) {
        reply_status(c, api_status_success(200, &c->target, get_string(meta, "uid")));
        goto out;
    }
    r = store_delete(c->srv->store, c->key.buf, it.rv, NULL, &rv);
    if (r < 0) {
        reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                     : api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (is_crd_resource(c->res)) {
        /* The CRD's kinds stop being served and their objects go with it. */
        struct strbuf prefix = STRBUF_INIT;
        const cJSON *spec = cJSON_GetObjectItem(old, "spec");
        (void)api_registry_remove_crd(c->srv->reg, c->ri.name);
        strbuf_addf(&prefix, "/%s/%s/", get_string(spec, "group") ? get_string(spec, "group") : "",
                    get_string(cJSON_GetObjectItem(spec, "names"), "plural")
                        ? get_string(cJSON_GetObjectItem(spec, "names"), "plural")
                        : "");
        delete_all(c->srv, prefix.buf);
        strbuf_release(&prefix);
    }
    if (!*c->res->group && !strcmp(c->res->plural, "namespaces")) {
        /* Deleting a namespace deletes what is in it, of every namespaced resource. */
        api_registry_foreach(c->srv->reg, delete_in_namespace, c);
    }
    reply_status(c, api_status_success(200, &c->target, meta ? get_string(meta, "uid") : NULL));
out:
    store_item_release(&it);
    cJSON_Delete(old);
}

/* ---- watch (reference 4) ---- */

#define MAX_WATCH_SECONDS   ((int64_t)6 * 3600)
#define MAX_WATCH_PENDING   (16u << 20) /* encoded initial events one watch may hold */
#define DEFAULT_BOOKMARK_MS 60000       /* kube-apiserver's cacher: about once a minute */
#define WATCH_BATCH         64          /* queued events one read takes at once */

struct watch_stream {
    struct watcher *w;
    bool too_big;                   /* the initial events outgrew MAX_WATCH_PENDING */
    const struct api_resource *res; /* a reference */
    const struct api_kind *kind;    /* for Table events */
    struct label_selector *labels;
    struct field_req *fields;
    size_t nfields;
    struct strbuf pending; /* encoded events not yet written */
    size_t off;
    uint64_t skip_upto;   /* live events up to this revision were sent already */
    int64_t deadline_ms;  /* monotonic: the watch's timeoutSeconds */
    bool notified;        /* the watcher wakes the stream */
    unsigned bookmark_ms; /* idle time before a BOOKMARK; 0 = the client did not allow them */
    int64_t last_emit_ms; /* monotonic time of the last event queued for the client */
    struct negotiate_output out; /* the objects' form: themselves, Tables or metadata */
    bool done;
    char *api_version;
    int64_t pretimeout_ms; /* monotonic time of the BOOKMARK due before the deadline, 0 = none */
};

static int64_t monotonic_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void watch_stream_free(void *ud)
{
    struct watch_stream *ws = ud;

    watcher_free(ws->w);
    (void)api_resource_unref(ws->res);
    label_selector_free(ws->labels);
    field_reqs_free(ws->fields, ws->nfields);
    strbuf_release(&ws->pending);
    free(ws->api_version);
    free(ws);
}

/*
 * Appends {"type": T, "object": obj} and a newline; obj (owned) as a Table or its
 * PartialObjectMetadata when asked for. Bookmarks are converted too, as kube-apiserver's watch
 * encoder converts every event object (handlers/response.go doTransformObject): the table's
 * metadata.resourceVersion is the bookmark's and its one row carries the bookmark's metadata.
 */
static void emit(struct watch_stream *ws, const char *type, cJSON *obj)
{
    cJSON *ev = cJSON_CreateObject();

    CHECK(ev);
    if (ws->out.as == NEGOTIATE_TABLE && strcmp(type, "ERROR")) {
        const cJSON *one[1] = {obj};
        const char *rv =
            get_string(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
        cJSON *t = build_table(ws->res, ws->kind, one, 1, rv, NULL, TABLE_INCLUDE_METADATA);
        cJSON_Delete(obj);
        obj = t;
    } else if (ws->out.as == NEGOTIATE_PARTIAL && strcmp(type, "ERROR")) {
        cJSON *p = partial_tree(obj, ws->out.api_version);
        cJSON_Delete(obj);
        obj = p;
    }
    CHECK(cJSON_AddStringToObject(ev, "type", type));
    CHECK(cJSON_AddItemToObject(ev, "object", obj));
    CHECK(json_print(ev, &ws->pending) == 0);
    strbuf_addch(&ws->pending, '\n');
    cJSON_Delete(ev);
    ws->last_emit_ms = monotonic_ms();
}

static const char *event_type(enum store_event_type t)
{
    return t == STORE_ADDED ? "ADDED" : t == STORE_MODIFIED ? "MODIFIED" : "DELETED";
}

/* An event as emit_change() writes it without selectors or Table output, spliced: the object,
 * or its PartialObjectMetadata when partial is the apiVersion for one. */
static bool encode_event_as(enum store_event_type type, uint64_t rv, const struct store_obj *obj,
                            const char *partial, const char *api_version, struct strbuf *out)
{
    size_t len = out->len;

    if (!obj->splice_at)
        return false;
    strbuf_addstr(out, type == STORE_ADDED      ? "{\"type\":\"ADDED\",\"object\":"
                       : type == STORE_MODIFIED ? "{\"type\":\"MODIFIED\",\"object\":"
                                                : "{\"type\":\"DELETED\",\"object\":");
    if (!splice_stored(obj, rv, partial, api_version, out)) {
        strbuf_setlen(out, len);
        return false;
    }
    strbuf_add(out, "}\n", 2);
    return true;
}

/*
 * The shared wire form of an event (watch_encode_fn): what emit_change() writes for a watch
 * without selectors or Table output, made once per write for every such watcher.
 */
static bool encode_event(enum store_event_type type, uint64_t rv, const struct store_obj *obj,
                         struct strbuf *out)
{
    return encode_event_as(type, rv, obj, NULL, NULL, out);
}

/* Whether member key[0..len) of a stored object is one the watch's selectors read: metadata
 * (labels; name and namespace fields), or the first segment of a field path. */
static bool selector_reads(const struct watch_stream *ws, const char *key, size_t len)
{
    if (len == 8 && !memcmp(key, "metadata", 8))
        return true;
    for (size_t i = 0; i < ws->nfields; i++) {
        const char *f = ws->fields[i].key;
        size_t seg = strcspn(f, ".");

        if (seg == len && !memcmp(f, key, len))
            return true;
    }
    return false;
}

/*
 * Whether a stored state matches the watch's selectors. Only the members they read are decoded
 * (a pod's metadata and status, not its spec, for the scheduler's status.phase selector); the
 * whole object when its bytes are not our own compact JSON.
 */
static bool stored_selected(const struct watch_stream *ws, const struct store_obj *o, uint64_t rv)
{
    cJSON *t = NULL;
    bool ok;

    if (o->splice_at) {
        struct json_member m;
        size_t pos = 0;
        int r;

        t = cJSON_CreateObject();
        CHECK(t);
        while ((r = json_member_next(o->value, o->len, &pos, &m)) == 0) {
            cJSON *v = NULL;
            char key[64];

            if (!selector_reads(ws, m.key, m.key_len) || m.key_len >= sizeof(key))
                continue;
            if (json_parse(o->value + m.start, m.end - m.start, NULL, &v, NULL) < 0)
                break;
            memcpy(key, m.key, m.key_len);
            key[m.key_len] = '\0';
            CHECK(cJSON_AddItemToObject(t, key, v));
        }
        if (r != -ENOENT) {
            cJSON_Delete(t);
            t = NULL;
        }
    }
    if (!t)
        t = decode_stored(o->value, o->len, rv);
    ok = t && selected(t, ws->labels, ws->fields, ws->nfields);
    cJSON_Delete(t);
    return ok;
}

/*
 * Emits one write as this watch sees it. With selectors a modification is judged on both
 * states, as kube-apiserver's watch cache does (storage/cacher/cache_watcher.go convertToWatch
 * Event): matching before and after is MODIFIED, only after is ADDED, only before is DELETED
 * carrying the new state (so the client drops the object), neither is nothing. prev is the
 * replaced state (NULL when unknown: then the new state alone decides, as a MODIFIED).
 */
static void emit_change(struct watch_stream *ws, enum store_event_type type,
                        const struct store_obj *obj, const struct store_obj *prev, uint64_t rv)
{
    const char *t = event_type(type);
    bool now, before;
    cJSON *o;

    if (ws->out.as != NEGOTIATE_TABLE && !ws->labels && !ws->nfields &&
        encode_event_as(type, rv, obj, ws->out.as == NEGOTIATE_PARTIAL ? ws->out.api_version : NULL,
                        ws->res->multi_version ? ws->api_version : NULL, &ws->pending)) {
        /* Spliced, not decoded: what json_print() of the decoded event would write. */
        ws->last_emit_ms = monotonic_ms();
        return;
    }
    if (ws->out.as != NEGOTIATE_TABLE && obj->splice_at) {
        /* Selectors judged on the members they read; the event spliced as above. */
        enum store_event_type out = type;

        now = stored_selected(ws, obj, rv);
        if (type == STORE_MODIFIED && prev) {
            before = stored_selected(ws, prev, rv);
            if (now && !before) {
                out = STORE_ADDED;
            } else if (!now && before) {
                out = STORE_DELETED;
                now = true;
            }
        }
        if (!now)
            return;
        if (encode_event_as(out, rv, obj,
                            ws->out.as == NEGOTIATE_PARTIAL ? ws->out.api_version : NULL,
                            ws->res->multi_version ? ws->api_version : NULL, &ws->pending)) {
            ws->last_emit_ms = monotonic_ms();
            return;
        }
    }
    o = decode_stored(obj->value, obj->len, rv);
    if (!o)
        return;
    now = selected(o, ws->labels, ws->fields, ws->nfields);
    if (type == STORE_MODIFIED && (ws->labels || ws->nfields) && prev) {
        cJSON *p = decode_stored(prev->value, prev->len, rv);
        before = p && selected(p, ws->labels, ws->fields, ws->nfields);
        cJSON_Delete(p);
        if (now && !before) {
            t = "ADDED";
        } else if (!now && before) {
            t = "DELETED";
            now = true;
        }
    }
    if (!now) {
        cJSON_Delete(o);
        return;
    }
    if (!cJSON_GetObjectItemCaseSensitive(o, "kind"))
        CHECK(cJSON_AddStringToObject(o, "kind", ws->res->kind));
    if (ws->res->multi_version)
        cJSON_DeleteItemFromObjectCaseSensitive(o, "apiVersion");
    if (!cJSON_GetObjectItemCaseSensitive(o, "apiVersion"))
        CHECK(cJSON_AddStringToObject(o, "apiVersion", ws->api_version));
    emit(ws, t, o);
}

/* One event from the hub: its shared wire bytes when this watch can use them. */
static void emit_event(struct watch_stream *ws, const struct watch_event *ev)
{
    if (ev->wire && ws->out.as == NEGOTIATE_OBJECT && !ws->labels && !ws->nfields &&
        !ws->res->multi_version) {
        strbuf_add(&ws->pending, ev->wire, ev->wire_len);
        ws->last_emit_ms = monotonic_ms();
        return;
    }
    emit_change(ws, ev->type, ev->obj, ev->prev, ev->rv);
}

/* A BOOKMARK: an object of the watched kind with only metadata.resourceVersion (and, ending
 * the initial events of a streaming list, the k8s.io/initial-events-end annotation). */
static void emit_bookmark(struct watch_stream *ws, uint64_t rv, bool initial_end)
{
    char buf[24];
    cJSON *bm = cJSON_CreateObject(), *meta;

    CHECK(bm);
    CHECK(cJSON_AddStringToObject(bm, "kind", ws->res->kind));
    CHECK(cJSON_AddStringToObject(bm, "apiVersion", ws->api_version));
    meta = cJSON_AddObjectToObject(bm, "metadata");
    CHECK(meta);
    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    CHECK(cJSON_AddStringToObject(meta, "resourceVersion", buf));
    if (initial_end) {
        cJSON *ann = cJSON_AddObjectToObject(meta, "annotations");
        CHECK(ann && cJSON_AddStringToObject(ann, "k8s.io/initial-events-end", "true"));
    }
    if (ws->pretimeout_ms && monotonic_ms() >= ws->pretimeout_ms)
        ws->pretimeout_ms = 0; /* the one before the deadline is this one */
    emit(ws, "BOOKMARK", bm);
}

/* The monotonic time the next BOOKMARK is due: after bookmark_ms of idleness, or at the
 * pre-timeout point, whichever comes first (cacher.go nextBookmarkTime: about 2 s before the
 * deadline, so a client ending its watch on the timeout resumes from a recent revision). */
static int64_t bookmark_due_at(const struct watch_stream *ws)
{
    int64_t due = ws->last_emit_ms + ws->bookmark_ms;

    if (ws->pretimeout_ms && ws->pretimeout_ms < due)
        due = ws->pretimeout_ms;
    return due;
}

/* Moves encoded bytes from pending into buf (at most max); returns how many. */
static size_t take_pending(struct watch_stream *ws, char *buf, size_t max)
{
    size_t k = ws->pending.len - ws->off;

    if (k > max)
        k = max;
    memcpy(buf, ws->pending.buf + ws->off, k);
    ws->off += k;
    if (ws->off == ws->pending.len) {
        strbuf_reset(&ws->pending);
        ws->off = 0;
    }
    return k;
}

/* The watcher has something: wake the parked stream (runs under the hub's lock). */
static void watch_notify(void *ud)
{
    http_stream_wake(ud);
}

/*
 * Fills buf with as much as is ready: everything queued for this watcher is encoded at once, so
 * a burst goes out as one chunk (one TLS record, one send) rather than one per event. Shared
 * wire bytes go straight into buf while they fit and nothing is pending before them. Never
 * waits: with nothing to send it asks to be woken by the hub (watch_notify) or at its next
 * bookmark or its end, and returns HTTP_STREAM_WAIT, holding no thread meanwhile.
 */
static long watch_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct watch_stream *ws = ud;
    bool plain =
        ws->out.as == NEGOTIATE_OBJECT && !ws->labels && !ws->nfields && !ws->res->multi_version;

    if (!ws->notified) {
        ws->notified = true;
        watcher_set_notify(ws->w, watch_notify, st);
    }
    for (;;) {
        struct watch_event *evs[WATCH_BATCH];
        int64_t now = monotonic_ms(), wake = ws->deadline_ms;
        size_t n = 0, got = 0;
        int r;

        if (ws->off < ws->pending.len)
            return (long)take_pending(ws, buf, max);
        if (ws->done || now >= ws->deadline_ms)
            return 0;
        if (ws->bookmark_ms) {
            int64_t due = bookmark_due_at(ws);
            if (due <= now) {
                /* Idle: everything up to the watcher's progress was delivered or filtered
                 * out, so the client may resume from there. */
                uint64_t rv = watcher_progress(ws->w);
                emit_bookmark(ws, rv > ws->skip_upto ? rv : ws->skip_upto, false);
                continue;
            }
            if (due < wake)
                wake = due;
        }
        r = watcher_next(ws->w, 0, evs, WATCH_BATCH, &got);
        for (size_t i = 0; i < got; i++) {
            const struct watch_event *ev = evs[i];
            if (ev->rv <= ws->skip_upto) {
                /* sent already, with the initial state or the replay */
            } else if (plain && ev->wire && !ws->pending.len && n + ev->wire_len <= max) {
                memcpy(buf + n, ev->wire, ev->wire_len);
                n += ev->wire_len;
                ws->last_emit_ms = monotonic_ms();
            } else {
                emit_event(ws, ev);
            }
            watch_event_unref(evs[i]);
        }
        if (r == -EOVERFLOW) {
            /* Too slow: tell the client to relist, as a 410 would. */
            emit(ws, "ERROR",
                 api_status_failure(410, "Expired",
                                    "the watch fell too far behind and was closed; relist", NULL));
            ws->done = true;
        } else if (r < 0) {
            ws->done = true; /* the server is stopping */
        }
        if (n) {
            if (ws->off < ws->pending.len)
                n += take_pending(ws, buf + n, max - n);
            return (long)n;
        }
        if (r == 0 && ws->off >= ws->pending.len) {
            http_stream_wake_at(st, wake);
            return HTTP_STREAM_WAIT;
        }
    }
}

struct replay {
    struct watch_stream *ws;
    const char *prefix;
    size_t prefix_len;
    uint64_t last;
};

static int replay_event(const struct store_event *ev, void *ud)
{
    struct replay *rp = ud;

    rp->last = ev->rv;
    if (!strncmp(ev->key, rp->prefix, rp->prefix_len))
        emit_change(rp->ws, ev->type, ev->obj, ev->prev_obj, ev->rv);
    if (rp->ws->pending.len > MAX_WATCH_PENDING) {
        rp->ws->too_big = true;
        return 1;
    }
    return 0;
}

static int initial_item(const struct store_item *it, void *ud)
{
    struct watch_stream *ws = ud;

    emit_change(ws, STORE_ADDED, it->obj, NULL, it->rv);
    if (ws->pending.len > MAX_WATCH_PENDING) {
        ws->too_big = true;
        return 1;
    }
    return 0;
}

/*
 * The hub's index (watch_hub_set_index): pods by spec.nodeName, as kube-apiserver's watch cache
 * indexes them, since every kubelet and agent watches its own node's pods. A pod without a node
 * has the empty value, which is what the scheduler's `spec.nodeName=` watch asks for.
 */
#define POD_INDEX_PREFIX "/core/pods/"

static bool pod_node_index(const struct store_obj *obj, struct strbuf *out)
{
    static const char key[] = "\"nodeName\":\"";
    const char *at, *end;
    cJSON *o;
    const cJSON *node;

    /*
     * Our own compact JSON (splice_at set): the member's bytes can only be a key, since inside
     * a JSON string every quote is escaped. One occurrence with a plain value is spec.nodeName
     * (no other field of a Pod is named so); anything else is decoded. The index runs on every
     * pod write, under the store's lock, so this spares a full parse per write.
     */
    if (obj->splice_at) {
        at = memmem(obj->value, obj->len, key, sizeof(key) - 1);
        if (!at) {
            return true; /* no node: the empty value */
        }
        at += sizeof(key) - 1;
        end = memchr(at, '"', obj->len - (size_t)(at - obj->value));
        if (end && !memchr(at, '\\', (size_t)(end - at)) &&
            !memmem(end, obj->len - (size_t)(end - obj->value), key, sizeof(key) - 1)) {
            strbuf_add(out, at, (size_t)(end - at));
            return true;
        }
    }
    o = cJSON_ParseWithLength(obj->value, obj->len);
    if (!o)
        return false;
    node =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "nodeName");
    strbuf_addstr(out, cJSON_IsString(node) ? node->valuestring : "");
    cJSON_Delete(o);
    return true;
}

/* The index value a watch can be found by: its spec.nodeName=X requirement on pods; NULL when
 * it has none (it then sees every write and filters them itself). */
static const char *index_value(const struct api_resource *res, const struct watch_stream *ws)
{
    if (*res->group || strcmp(res->plural, "pods"))
        return NULL;
    for (size_t i = 0; i < ws->nfields; i++)
        if (!ws->fields[i].neq && !strcmp(ws->fields[i].key, "spec.nodeName"))
            return ws->fields[i].value;
    return NULL;
}

/* A query flag as Go's strconv.ParseBool reads the true values. */
static bool query_true(const struct call *c, const char *name)
{
    const char *v = http_request_query(c->req, name);
    return v && (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "T") ||
                 !strcmp(v, "TRUE") || !strcmp(v, "True"));
}

/*
 * Starts a watch. The watcher is registered before anything is read, so every write from then
 * on is queued; the initial state (a snapshot list) or the history replay is then read in short
 * locked chunks, so writers are not held up, and queued writes at or below the revision read up
 * to are skipped: none is lost, none is sent twice.
 */
static void do_watch(struct call *c)
{
    const char *rvs = http_request_query(c->req, "resourceVersion");
    const char *sie = http_request_query(c->req, "sendInitialEvents");
    const char *rvm = http_request_query(c->req, "resourceVersionMatch");
    const char *tos = http_request_query(c->req, "timeoutSeconds");
    bool initial_events = sie && !strcmp(sie, "true");
    struct watch_stream *ws;
    struct strbuf prefix = STRBUF_INIT, av = STRBUF_INIT;
    int64_t timeout = 1800 + (int64_t)(time(NULL) % 1800), rv = 0;
    uint64_t list_rv = 0;
    int r;

    if ((rvm && *rvm && !initial_events) ||
        (initial_events && (!rvm || strcmp(rvm, "NotOlderThan")))) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        field_error_add(&errs, FIELD_FORBIDDEN,
                        initial_events ? "sendInitialEvents" : "resourceVersionMatch", NULL, "%s",
                        initial_events
                            ? "sendInitialEvents requires resourceVersionMatch=NotOlderThan"
                            : "resourceVersionMatch is forbidden for watch unless "
                              "sendInitialEvents is provided");
        reply_status(c, api_status_invalid("ListOptions", "meta.k8s.io", "", &errs));
        field_errors_release(&errs);
        return;
    }
    if ((rvs && *rvs && (parse_i64(rvs, &rv) < 0 || rv < 0)) ||
        (tos && (parse_i64(tos, &timeout) < 0 || timeout < 0))) {
        reply_bad_request(c, "resourceVersion and timeoutSeconds must be non-negative integers");
        return;
    }
    if (!initial_events && rv > 0 && (uint64_t)rv > store_revision(c->srv->store)) {
        /* A revision this server has not reached (a client that outlived a restored data
         * dir): replaying "after" it would silently skip every write up to it. */
        reply_too_large(c, (uint64_t)rv, store_revision(c->srv->store));
        return;
    }
    ws = xcalloc(1, sizeof(*ws));
    strbuf_init(&ws->pending);
    if (!parse_selectors(c, &ws->labels, &ws->fields, &ws->nfields)) {
        watch_stream_free(ws);
        return;
    }
    ws->res = api_resource_ref(c->res);
    ws->kind = kind_of(c->res);
    ws->out = c->out;
    ws->bookmark_ms = query_true(c, "allowWatchBookmarks") ? c->srv->bookmark_ms : 0;
    api_version_of(c->res, &av);
    ws->api_version = strbuf_detach(&av, NULL);
    if (timeout <= 0 || timeout > MAX_WATCH_SECONDS)
        timeout = timeout <= 0 ? 1800 : MAX_WATCH_SECONDS;
    ws->deadline_ms = monotonic_ms() + timeout * 1000;
    if (ws->bookmark_ms && timeout > 2)
        ws->pretimeout_ms = ws->deadline_ms - 2000;
    strbuf_addf(&prefix, "/%s/%s/", *c->res->group ? c->res->group : "core", c->res->plural);
    if (c->res->namespaced && *c->ri.namespace)
        strbuf_addf(&prefix, "%s/", c->ri.namespace);
    /* Register first, then read: writes in between are queued and skipped by revision. */
    ws->w = watcher_new_indexed(c->srv->hub, prefix.buf, 0, index_value(c->res, ws));
    if (initial_events || !rvs || !*rvs || rv == 0) {
        r = store_list(c->srv->store, prefix.buf, NULL, 0, initial_item, ws, &list_rv);
        ws->skip_upto = list_rv;
        if (r == 0 && initial_events)
            emit_bookmark(ws, list_rv, true);
    } else {
        struct replay rp = {ws, prefix.buf, prefix.len, (uint64_t)rv};
        r = store_events(c->srv->store, (uint64_t)rv, replay_event, &rp);
        ws->skip_upto = rp.last;
    }
    if (r < 0 && (r != -ERANGE || c->srv->expired_watch_status)) {
        reply_status(c, r == -ERANGE
                            ? api_status_expired(rvs && *rvs ? (unsigned long long)rv : list_rv,
                                                 (unsigned long long)store_oldest(c->srv->store))
                            : api_status_from_errno(r, NULL, NULL));
        watch_stream_free(ws);
        goto out;
    }
    if (ws->too_big && c->srv->expired_watch_status) {
        watch_stream_free(ws);
        reply_status(c,
                     api_status_failure(410, "Expired",
                                        "too many changes to replay for this watch; relist", NULL));
        goto out;
    }
    if (r == -ERANGE || ws->too_big) {
        /* The start is older than the history (or writes during the read pushed it out), or
         * replaying it would outgrow the bound on a watch's memory: as kube's watch cache, the
         * answer is 200 with a single ERROR event carrying the 410 Expired Status, then the
         * end of the stream. Events read before the failure are dropped. */
        strbuf_reset(&ws->pending);
        emit(ws, "ERROR",
             r == -ERANGE
                 ? api_status_expired(rvs && *rvs ? (unsigned long long)rv : list_rv,
                                      (unsigned long long)store_oldest(c->srv->store))
                 : api_status_failure(410, "Expired",
                                      "too many changes to replay for this watch; relist", NULL));
        ws->done = true;
    }
    ws->last_emit_ms = monotonic_ms();
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    c->resp->stream = watch_read;
    c->resp->stream_userdata = ws;
    c->resp->stream_free = watch_stream_free;
out:
    strbuf_release(&prefix);
}

void apiserver_set_bookmark_interval(struct apiserver *s, unsigned ms)
{
    s->bookmark_ms = ms ? ms : DEFAULT_BOOKMARK_MS;
}

/* ---- pods/binding and pods/eviction (reference 9.1, 9.4) ---- */

/* Parses a subresource body whose metadata.name must equal the pod's; replies 400 otherwise. */
static cJSON *read_sub_body(struct call *c, const char *what)
{
    cJSON *o = decode_body(c);
    const char *name;
    char msg[128];

    if (!o)
        return NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        reply_bad_request(c, "the request body is not a valid JSON object");
        return NULL;
    }
    name = get_string(cJSON_GetObjectItem(o, "metadata"), "name");
    if (name && strcmp(name, c->ri.name)) {
        (void)snprintf(msg, sizeof(msg), "name in URL does not match name in %s object", what);
        reply_bad_request(c, msg);
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static void do_bind(struct call *c)
{
    cJSON *binding = read_sub_body(c, "Binding"), *pod = NULL;
    struct webhook_attrs wa;
    struct strbuf why = STRBUF_INIT, bytes = STRBUF_INIT, msg = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    uint64_t rv = 0;
    int r;

    if (!binding)
        return;
    if (!(pod = read_current(c, &rv)) ||
        !preconditions_hold(c, cJSON_GetObjectItem(binding, "metadata"), pod, rv))
        goto out;
    wh_attrs(c, WEBHOOK_CREATE, NULL, &wa);
    wa.kind = "Binding";
    if (!wh_mutate(c, &wa, &binding) || !wh_validate(c, &wa, binding))
        goto out;
    (void)rfc3339_format((int64_t)time(NULL), ts);
    r = pods_bind(pod, binding, ts, &why);
    if (r == -EINVAL) {
        reply_bad_request(c, why.buf);
        goto out;
    }
    if (r < 0) {
        strbuf_addf(&msg, "Operation cannot be fulfilled on pods/binding \"%s\": %s", c->ri.name,
                    why.buf);
        reply_status(c, api_status_failure(409, "Conflict", msg.buf, &c->target));
        goto out;
    }
    if ((r = encode_for_store(pod, &bytes)) == 0 && !c->dry_run)
        r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, rv, NULL);
    if (r < 0)
        reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                     : api_status_from_errno(r, NULL, &c->target));
    else
        reply_status(c, api_status_success(201, NULL, NULL));
out:
    cJSON_Delete(binding);
    cJSON_Delete(pod);
    strbuf_release(&why);
    strbuf_release(&bytes);
    strbuf_release(&msg);
}

/*
 * The Eviction's deleteOptions (propagateDryRun): dryRun values checked as DELETE checks them,
 * and one given in both the query and the body must say the same; gracePeriodSeconds into
 * *ret_grace (-1 when not given: an eviction's query parameters are CreateOptions, so only the
 * body sets it). Replies and returns false on bad options.
 */
static bool eviction_options(struct call *c, const cJSON *opts, int64_t *ret_grace)
{
    const cJSON *g = cJSON_GetObjectItem(opts, "gracePeriodSeconds");
    const cJSON *dr = cJSON_GetObjectItem(opts, "dryRun"), *v;
    const char *bad = NULL;
    bool in_query = c->dry_run;

    if (opts && !cJSON_IsNull(opts) && !cJSON_IsObject(opts))
        bad = "deleteOptions: must be an object";
    else if (g && !cJSON_IsNull(g) &&
             (!cJSON_IsNumber(g) || g->valuedouble != (double)(int64_t)g->valuedouble))
        bad = "deleteOptions.gracePeriodSeconds: must be an integer";
    else if (dr && !cJSON_IsNull(dr) && !cJSON_IsArray(dr))
        bad = "deleteOptions.dryRun: must be a list of strings";
    if (bad) {
        struct strbuf msg = STRBUF_INIT;
        strbuf_addf(&msg, "Eviction in version \"v1\" cannot be handled as a Eviction: %s", bad);
        reply_bad_request(c, msg.buf);
        strbuf_release(&msg);
        return false;
    }
    cJSON_ArrayForEach(v, dr)
    {
        if (!parse_dry_run(c, cJSON_IsString(v) ? v->valuestring : ""))
            return false;
    }
    /* The query holds one value, "All": a body list other than ["All"] differs from it. */
    if (in_query && cJSON_GetArraySize(dr) > 1) {
        reply_bad_request(c, "Non-matching dry-run options in request and content: [All] and "
                             "the deleteOptions' dryRun");
        return false;
    }
    *ret_grace = g && cJSON_IsNumber(g) ? (g->valuedouble < 0 ? 1 : (int64_t)g->valuedouble) : -1;
    return true;
}

/*
 * Deletes an evicted pod (at revision rv) as kube's addConditionAndDeletePod does: the pod gets
 * the DisruptionTarget condition, then is deleted as DELETE deletes it (lifecycle_pod_delete):
 * gracefully when a node runs it, the lifecycle worker finishing it. A pod that goes at once is
 * written with the condition first, as kube updates it before deleting, so watchers see why it
 * went. Nothing is written in a dry run. 0, or -errno of the store (-ESTALE: the pod changed).
 */
static int evict_delete(struct call *c, cJSON *pod, uint64_t rv, int64_t grace)
{
    struct strbuf bytes = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    int64_t now = (int64_t)time(NULL);
    enum lifecycle_pod_deletion d;
    bool cond;
    int r = 0;

    (void)rfc3339_format(now, ts);
    cond = pods_update_condition(pod, PODS_DISRUPTION_TARGET, "True", PODS_EVICTION_BY_API,
                                 PODS_EVICTION_BY_API_MSG, ts);
    d = lifecycle_pod_delete(pod, grace, now);
    if (c->dry_run)
        return 0;
    if (cond || d == LIFECYCLE_POD_MARKED) {
        r = encode_for_store(pod, &bytes);
        if (r == 0)
            r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, rv, &rv);
    }
    if (r == 0 && d == LIFECYCLE_POD_REMOVE)
        r = store_delete(c->srv->store, c->key.buf, rv, NULL, NULL);
    strbuf_release(&bytes);
    return r;
}

/*
 * pods/eviction (eviction.go, reference 9.4): the pod is deleted with the Eviction's
 * deleteOptions (grace period, uid/resourceVersion preconditions, dryRun) unless a
 * PodDisruptionBudget forbids it (disruption.h). A pod that is Pending, finished or already
 * terminating skips the budgets, so a second eviction of a terminating pod takes nothing from
 * them. When the pod changes between the decision and the delete (a status write), the delete
 * is tried again over the new revision, as kube retries conflicts, unless the client fixed the
 * revision; the budget is consulted at most once.
 */
static void do_evict(struct call *c)
{
    cJSON *ev = read_sub_body(c, "Eviction"), *pod = NULL, *refusal = NULL;
    const cJSON *opts, *pre;
    const char *pinned;
    struct webhook_attrs wa;
    uint64_t rv = 0;
    int64_t grace = -1;
    bool consulted = false;
    int r = 0, code = 0;

    if (!ev)
        return;
    opts = cJSON_GetObjectItem(ev, "deleteOptions");
    pre = cJSON_GetObjectItem(opts, "preconditions");
    if (!eviction_options(c, opts, &grace) || !(pod = read_current(c, &rv)) ||
        !preconditions_hold(c, pre, pod, rv) || !node_may(c, pod))
        goto out;
    wh_attrs(c, WEBHOOK_CREATE, NULL, &wa);
    wa.kind_group = "policy";
    wa.kind = "Eviction";
    if (!wh_mutate(c, &wa, &ev) || !wh_validate(c, &wa, ev))
        goto out;
    /* The webhooks may have replaced ev: what it held is read again from here on. */
    opts = cJSON_GetObjectItem(ev, "deleteOptions");
    pre = cJSON_GetObjectItem(opts, "preconditions");
    pinned = get_string(pre, "resourceVersion");
    for (int attempt = 1;; attempt++) {
        if (!consulted && !disruption_pod_exempt(pod)) {
            consulted = true;
            r = disruption_check_eviction(c->srv->store, pod, c->dry_run, (int64_t)time(NULL),
                                          &refusal, &code);
            if (r > 0) {
                const cJSON *details = cJSON_GetObjectItemCaseSensitive(refusal, "details");
                const cJSON *after = cJSON_GetObjectItemCaseSensitive(details, "retryAfterSeconds");
                if (cJSON_IsNumber(after)) {
                    char buf[24];
                    (void)snprintf(buf, sizeof(buf), "%d", (int)after->valuedouble);
                    http_response_header(c->resp, "Retry-After", buf);
                }
                reply(c, code, refusal);
                goto out;
            }
            if (r < 0)
                break;
        }
        r = evict_delete(c, pod, rv, grace);
        if (r != -ESTALE || (pinned && *pinned) || attempt >= UPDATE_TRIES)
            break;
        cJSON_Delete(pod);
        if (!(pod = read_current(c, &rv)) || !preconditions_hold(c, pre, pod, rv))
            goto out;
    }
    if (r < 0) {
        reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                     : api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (!c->dry_run)
        lifecycle_kick(c->srv->lifecycle);
    reply_status(c, api_status_success(201, NULL, NULL));
out:
    cJSON_Delete(ev);
    cJSON_Delete(pod);
}

/* ---- reviews (reference 6.6) ---- */

/* A review (reviews.h): answered, never stored. */
static void do_review(struct call *c)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT;
    cJSON *body = read_body(c), *ans = NULL;
    int r;

    if (!body)
        return;
    r = api_review(c->srv->authz, c->srv->tokens, c->res, &c->ri, c->user.name ? &c->user : NULL,
                   body, &ans, &errs, &why);
    if (r == 0)
        reply(c, 201, ans);
    else if (field_errors_count(&errs))
        reply_status(c, api_status_invalid(c->res->kind, c->res->group, "", &errs));
    else
        reply_bad_request(c, why.buf);
    cJSON_Delete(body);
    field_errors_release(&errs);
    strbuf_release(&why);
}

/* POST serviceaccounts/<name>/token: a TokenRequest for the stored account. */
static void do_token_request(struct call *c)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT;
    struct store_item it = {0};
    cJSON *body = decode_body(c), *sa = NULL, *ans = NULL, *st = NULL;
    const char *kind, *av;
    int r;

    if (!body)
        return;
    kind = get_string(body, "kind");
    av = get_string(body, "apiVersion");
    if (!cJSON_IsObject(body) || (kind && strcmp(kind, "TokenRequest")) ||
        (av && strcmp(av, "authentication.k8s.io/v1"))) {
        reply_bad_request(c, "the request body must be an authentication.k8s.io/v1 "
                             "TokenRequest");
        goto out;
    }
    r = store_get(c->srv->store, c->key.buf, &it);
    if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    sa = decode_stored(it.value, it.len, it.rv);
    r = sa ? api_token_request(c->srv->sat, c->srv->store, sa, body, (int64_t)time(NULL), &ans,
                               &errs, &st, &why)
           : -EIO;
    if (r == 0) {
        CHECK(cJSON_AddStringToObject(ans, "kind", "TokenRequest"));
        CHECK(cJSON_AddStringToObject(ans, "apiVersion", "authentication.k8s.io/v1"));
        reply(c, 201, ans);
    } else if (r == -EINVAL) {
        reply_status(
            c, api_status_invalid("TokenRequest", "authentication.k8s.io", c->ri.name, &errs));
    } else if (r == -EBADMSG) {
        reply_status(c, st);
    } else {
        reply_status(c, api_status_from_errno(r, why.len ? why.buf : NULL, NULL));
    }
out:
    store_item_release(&it);
    cJSON_Delete(sa);
    cJSON_Delete(body);
    field_errors_release(&errs);
    strbuf_release(&why);
}

/* ---- dispatch ---- */

static bool subresource_served(const struct api_resource *res, const char *sub)
{
    if (!*sub)
        return true;
    for (const char *const *s = res->subresources; s && *s; s++)
        if (!strcmp(*s, sub))
            return true;
    return false;
}

/* Paths Kubernetes serves without authentication. */
static bool is_open_path(const char *path)
{
    static const char *const open[] = {"/healthz", "/livez", "/readyz", "/version"};

    for (size_t i = 0; i < ARRAY_SIZE(open); i++)
        if (!strcmp(path, open[i]))
            return true;
    return false;
}

void apiserver_require_client_certs(struct apiserver *s, bool on)
{
    s->require_certs = on;
}

void apiserver_set_tokens(struct apiserver *s, const struct api_tokens *tokens)
{
    s->tokens = tokens;
}

int apiserver_set_authorization_mode(struct apiserver *s, const char *modes, struct strbuf *why)
{
    char ts[RFC3339_STR_MAX];
    int r = api_authz_set_modes(s->authz, modes, why);

    if (r < 0)
        return r;
    (void)rfc3339_format((int64_t)time(NULL), ts);
    r = api_authz_bootstrap(s->authz, ts, apiserver_random_uid);
    if (r < 0)
        strbuf_addf(why, "cannot create the bootstrap RBAC roles: %s", err_str(r));
    return r;
}

/* The default ServiceAccounts (serviceaccounts.h), when service-account tokens are on. */
static void ensure_default_serviceaccounts(struct apiserver *s)
{
    char ts[RFC3339_STR_MAX];
    int r;

    if (!s->sat)
        return;
    (void)rfc3339_format((int64_t)time(NULL), ts);
    r = api_serviceaccounts_ensure_defaults(s->store, ts, apiserver_random_uid);
    if (r < 0)
        log_warn("apiserver", "cannot create default service accounts: %s, ignoring", err_str(r));
}

void apiserver_set_satokens(struct apiserver *s, struct api_satokens *sat)
{
    s->sat = sat;
    api_authz_set_satokens(s->authz, sat);
    ensure_default_serviceaccounts(s);
}

/* The options kind a write verb's dryRun belongs to, as kube-apiserver names it in errors. */
static const char *options_kind(const char *verb)
{
    if (!strcmp(verb, "update"))
        return "UpdateOptions";
    if (!strcmp(verb, "patch"))
        return "PatchOptions";
    if (!strcmp(verb, "delete") || !strcmp(verb, "deletecollection"))
        return "DeleteOptions";
    return "CreateOptions";
}

/* dryRun (query or DeleteOptions): "All" is the only value Kubernetes defines; anything else
 * is 422 as ValidateDryRun answers. Reads ignore it, as kube-apiserver does. */
static bool parse_dry_run(struct call *c, const char *v)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf bad = STRBUF_INIT;

    if (!v || !strcmp(c->ri.verb, "get") || !strcmp(c->ri.verb, "list") ||
        !strcmp(c->ri.verb, "watch"))
        return true;
    if (!strcmp(v, "All")) {
        c->dry_run = true;
        return true;
    }
    strbuf_add_json_str(&bad, v);
    field_error_add(&errs, FIELD_NOT_SUPPORTED, "dryRun", bad.buf, "supported values: \"All\"");
    reply_status(c, api_status_invalid(options_kind(c->ri.verb), "meta.k8s.io", "", &errs));
    strbuf_release(&bad);
    field_errors_release(&errs);
    return false;
}

/* fieldValidation of a create, update or patch: "", Ignore, Warn (the default) or Strict;
 * anything else is 422 as ValidateFieldValidation answers. Other verbs ignore it, as kube. */
static bool field_validation_valid(struct call *c)
{
    const char *v = http_request_query(c->req, "fieldValidation");
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf bad = STRBUF_INIT;

    if (!v || !*v || !strcmp(v, "Ignore") || !strcmp(v, "Warn") || !strcmp(v, "Strict") ||
        (strcmp(c->ri.verb, "create") && strcmp(c->ri.verb, "update") &&
         strcmp(c->ri.verb, "patch")))
        return true;
    strbuf_add_json_str(&bad, v);
    field_error_add(&errs, FIELD_NOT_SUPPORTED, "fieldValidation", bad.buf,
                    "supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
    reply_status(c, api_status_invalid(options_kind(c->ri.verb), "meta.k8s.io", "", &errs));
    strbuf_release(&bad);
    field_errors_release(&errs);
    return false;
}

/* The kind rules of admit.h; replies and returns false when they refuse the write. */
static bool admit(struct call *c, const cJSON *old, cJSON *obj)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT, msg = STRBUF_INIT;
    const char *name = get_string(cJSON_GetObjectItem(obj, "metadata"), "name");
    int r = old ? admit_update(c->srv->store, c->res, old, obj, &errs, &why)
                : admit_create(c->srv->store, c->res, obj, &errs, &why);

    if (r == 0 && !strcmp(c->res->group, "apiregistration.k8s.io"))
        r = aggregator_admit(c->srv->reg, old, obj, &errs);
    if (r == 0)
        r = api_authz_admit(c->srv->authz, c->user.name ? &c->user : NULL, c->res, old, obj, &errs,
                            &why);

    if (r == -EINVAL) {
        reply_status(c, api_status_invalid(c->res->kind, c->res->group, name ? name : "", &errs));
    } else if (r == -EPERM) {
        if (*c->res->group)
            strbuf_addf(&msg, "%s.%s", c->res->plural, c->res->group);
        else
            strbuf_addstr(&msg, c->res->plural);
        strbuf_addf(&msg, " \"%s\" is forbidden: %s", name ? name : "", why.buf);
        reply_status(c, api_status_failure(403, "Forbidden", msg.buf, &c->target));
    } else if (r == -EACCES) {
        reply_status(c, api_status_failure(400, "", why.buf, NULL));
    } else if (r == -ENOSPC) {
        strbuf_addf(&msg, "Internal error occurred: %s", why.buf);
        reply_status(c, api_status_failure(500, "InternalError", msg.buf, NULL));
    } else if (r < 0) {
        reply_status(c, api_status_from_errno(r, NULL, NULL));
    }
    field_errors_release(&errs);
    strbuf_release(&why);
    strbuf_release(&msg);
    return r == 0;
}

/* 403 for a node identity writing an object that is not about its node (auth.h). */
static bool node_may(struct call *c, const cJSON *obj)
{
    struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;
    const char *name;

    if (!c->check_objects || api_authz_node_object(c->node, &c->ri, obj))
        return true;
    name = get_string(cJSON_GetObjectItem(obj, "metadata"), "name");
    strbuf_addf(&why, "node \"%s\" may only write objects about itself", c->node);
    api_authz_forbidden_message(c->user.name, &c->ri, name ? name : c->ri.name, why.buf, &msg);
    reply_status(c, api_status_failure(403, "Forbidden", msg.buf, &c->target));
    strbuf_release(&msg);
    strbuf_release(&why);
    return false;
}

/* The embedding program's rules (struct apiserver_auth): 401 or 403, or true. */
static bool admit_user_external(struct call *c)
{
    const struct apiserver_auth *a = c->srv->auth;
    struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;
    int r = a->authenticate(a->userdata, c->req, &c->user);

    if (r < 0)
        c->user = (struct api_user){0};
    if (r == -EACCES || (r < 0 && !is_open_path(http_request_path(c->req)))) {
        reply_status(c, api_status_failure(401, "Unauthorized", "Unauthorized", NULL));
        return false;
    }
    if (r < 0 || !c->ri.is_resource || !a->authorize ||
        a->authorize(a->userdata, &c->user, &c->ri, &why) == 0) {
        strbuf_release(&why);
        return true;
    }
    api_authz_forbidden_message(c->user.name, &c->ri, c->ri.name, why.len ? why.buf : NULL, &msg);
    reply_status(c, api_status_failure(
                        403, "Forbidden", msg.buf,
                        &(struct api_status_target){c->ri.group, c->ri.resource, c->ri.name}));
    strbuf_release(&msg);
    strbuf_release(&why);
    return false;
}

/* Authentication, impersonation, then the authorizer chain (authz.h); replies 400/401/403 and
 * returns false when refused. */
static bool admit_user(struct call *c)
{
    struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;
    const struct api_status_target t = {c->ri.group, c->ri.resource, c->ri.name};
    bool ok = false;
    int r;

    if (c->srv->auth)
        return admit_user_external(c);
    r = api_authz_authenticate(c->srv->authz, c->req, c->srv->tokens, &c->user, &c->ident);
    if (r == -EACCES ||
        (r < 0 && c->srv->require_certs && !is_open_path(http_request_path(c->req)))) {
        reply_status(c, api_status_failure(401, "Unauthorized", "Unauthorized", NULL));
        return false;
    }
    if (r < 0) {
        c->user = (struct api_user){0};
        return true;
    }
    r = api_authz_impersonate(c->srv->authz, c->req, &c->user, &c->ident, &why);
    if (r == -EINVAL) {
        reply_bad_request(c, why.buf);
        goto out;
    }
    if (r < 0) {
        reply_status(c, api_status_failure(403, "Forbidden", why.buf, NULL));
        goto out;
    }
    strbuf_reset(&why);
    switch (api_authz_decide(c->srv->authz, &c->user, &c->ri, &why)) {
    case API_AUTHZ_DECISION_ALLOW:
        ok = true;
        break;
    case API_AUTHZ_DECISION_ALLOW_CHECK_OBJECTS:
        c->check_objects = true;
        ok = true;
        break;
    case API_AUTHZ_DECISION_DENY:
    case API_AUTHZ_DECISION_NO_OPINION:
        /* The health and version endpoints stay open to everyone, as Kubernetes serves them. */
        ok = !c->ri.is_resource && is_open_path(http_request_path(c->req));
        break;
    }
    if (!ok) {
        api_authz_forbidden_message(c->user.name, &c->ri, c->ri.name, why.len ? why.buf : NULL,
                                    &msg);
        reply_status(c, api_status_failure(403, "Forbidden", msg.buf, &t));
    }
    c->node = api_user_node(&c->user);
out:
    strbuf_release(&msg);
    strbuf_release(&why);
    return ok;
}

/* A streamed response (a watch) counted in apiserver_longrunning_requests while it lasts. */
struct counted_stream {
    http_stream_fn fn;
    void (*free_fn)(void *ud);
    void *ud;
    struct api_metrics *metrics;
};

static long counted_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct counted_stream *cs = ud;
    return cs->fn(cs->ud, st, buf, max);
}

static void counted_free(void *ud)
{
    struct counted_stream *cs = ud;

    api_metrics_watch(cs->metrics, -1);
    if (cs->free_fn)
        cs->free_fn(cs->ud);
    free(cs);
}

static double now_seconds(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void record(struct call *c, double start)
{
    struct http_response *resp = c->resp;

    if (!c->res)
        return; /* unserved paths are not counted: clients could mint label values */
    api_metrics_request(c->srv->metrics, &c->ri, resp->status, now_seconds() - start);
    if (resp->stream && !strcmp(c->ri.verb, "watch")) {
        struct counted_stream *cs = xcalloc(1, sizeof(*cs));
        *cs = (struct counted_stream){resp->stream, resp->stream_free, resp->stream_userdata,
                                      c->srv->metrics};
        api_metrics_watch(c->srv->metrics, 1);
        resp->stream = counted_read;
        resp->stream_free = counted_free;
        resp->stream_userdata = cs;
    }
}

void apiserver_handle(const struct http_request *req, struct http_response *resp, void *userdata)
{
    const double start = now_seconds();
    struct call c = {.srv = userdata,
                     .req = req,
                     .resp = resp,
                     .key = STRBUF_INIT,
                     .warnings = STRBUF_INIT,
                     .wh_warnings = STRBUF_INIT,
                     .dups = STRBUF_INIT};
    bool serial;
    int r;

    /* A control character in the path (NUL arrives as DEL, http/server.h) names nothing: kube
     * compares such names byte for byte and finds no object; here it would be cut short. */
    for (const char *p = http_request_path(req); *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            reply_bad_request(&c, "the request path must not contain control characters");
            goto out;
        }
    r = api_reqinfo_parse(http_request_method(req), http_request_path(req),
                          http_request_query(req, "watch"),
                          http_request_query(req, "fieldSelector"), &c.ri);
    if (r < 0) {
        reply_bad_request(&c, "malformed request path");
        goto out;
    }
    if (!admit_user(&c))
        goto out;
    if (aggregator_handle(c.srv->agg, req, c.user.name ? &c.user : NULL,
                          c.check_objects ? c.node : NULL, resp))
        goto out;
    if (!c.ri.is_resource) {
        serve_nonresource(&c);
        goto out;
    }
    c.res = api_registry_lookup(c.srv->reg, c.ri.group, c.ri.version, c.ri.resource);
    if (!c.res || (!c.res->namespaced && *c.ri.namespace && strcmp(c.ri.resource, "namespaces")) ||
        !subresource_served(c.res, c.ri.subresource)) {
        reply_not_served(&c);
        goto out;
    }
    c.target = (struct api_status_target){c.res->group, c.res->plural, c.ri.name};
    /* Read-only kinds (registry.h) take writes to their status only. */
    if (c.res->read_only && strcmp(c.ri.verb, "get") && strcmp(c.ri.verb, "list") &&
        strcmp(c.ri.verb, "watch") &&
        (strcmp(c.ri.subresource, "status") ||
         (strcmp(c.ri.verb, "update") && strcmp(c.ri.verb, "patch")))) {
        reply_status(&c, api_status_failure(405, "MethodNotAllowed",
                                            "the server does not allow this method on the "
                                            "requested resource",
                                            &c.target));
        goto out;
    }
    /* Before anything is written: an answer the client cannot take is refused first. */
    if (negotiate_output(http_request_header(req, "Accept"),
                         !strcmp(c.ri.verb, "list") || !strcmp(c.ri.verb, "deletecollection"),
                         &c.out) < 0) {
        reply_status(&c, api_status_failure(406, "NotAcceptable", NEGOTIATE_NOT_ACCEPTABLE, NULL));
        goto out;
    }
    /* YAML has no stream framing: kube-apiserver refuses it for watches. */
    if (c.out.yaml && !strcmp(c.ri.verb, "watch")) {
        c.out.yaml = false;
        reply_status(&c, api_status_failure(406, "NotAcceptable",
                                            "only the following media types are accepted: "
                                            "application/json;stream=watch",
                                            NULL));
        goto out;
    }
    if (c.res->create_only) {
        if (strcmp(c.ri.verb, "create") || *c.ri.subresource)
            reply_status(&c, api_status_failure(405, "MethodNotAllowed",
                                                "the server does not allow this method on the "
                                                "requested resource",
                                                &c.target));
        else
            do_review(&c);
        goto out;
    }
    if (!parse_dry_run(&c, http_request_query(req, "dryRun")) || !field_validation_valid(&c))
        goto out;
    /* Objects of namespaced resources live in a namespace: only list and watch span them. */
    if (c.res->namespaced && !*c.ri.namespace && strcmp(c.ri.verb, "list") &&
        strcmp(c.ri.verb, "watch")) {
        reply_not_served(&c);
        goto out;
    }
    object_key(&c.key, c.res, c.ri.namespace, c.ri.name);
    log_debug("apiserver", "%s %s", c.ri.verb, c.ri.path);
    serial =
        admit_serialized(c.res) && (!strcmp(c.ri.verb, "create") || !strcmp(c.ri.verb, "update") ||
                                    !strcmp(c.ri.verb, "patch") || !strcmp(c.ri.verb, "delete") ||
                                    !strcmp(c.ri.verb, "deletecollection"));
    if (serial)
        CHECK(pthread_mutex_lock(&c.srv->admit_lock) == 0);
    if (!strcmp(c.ri.subresource, "scale") && c.res->scale_spec_path)
        do_scale(&c);
    else if (!strcmp(c.ri.subresource, "token") && !strcmp(c.ri.verb, "create"))
        do_token_request(&c);
    else if (!strcmp(c.ri.subresource, "token") ||
             (!strcmp(c.ri.subresource, "finalize") && strcmp(c.ri.verb, "update")))
        reply_status(&c, api_status_failure(405, "MethodNotAllowed",
                                            "the server does not allow this method on the "
                                            "requested resource",
                                            &c.target));
    else if (!strcmp(c.ri.verb, "get"))
        do_get(&c);
    else if (!strcmp(c.ri.verb, "list"))
        do_list(&c);
    else if (!strcmp(c.ri.verb, "watch"))
        do_watch(&c);
    else if (!strcmp(c.ri.verb, "create") && is_pods(c.res) && !strcmp(c.ri.subresource, "binding"))
        do_bind(&c);
    else if (!strcmp(c.ri.verb, "create") && is_pods(c.res) &&
             !strcmp(c.ri.subresource, "eviction"))
        do_evict(&c);
    else if (!strcmp(c.ri.verb, "create"))
        do_create(&c);
    else if (!strcmp(c.ri.verb, "update"))
        do_update(&c);
    else if (!strcmp(c.ri.verb, "patch"))
        do_patch(&c);
    else if (!strcmp(c.ri.verb, "delete"))
        do_delete(&c);
    else if (!strcmp(c.ri.verb, "deletecollection"))
        do_deletecollection(&c);
    else
        reply_status(&c, api_status_failure(405, "MethodNotAllowed",
                                            "the server does not allow this method on the "
                                            "requested resource yet",
                                            &c.target));
    if (serial)
        CHECK(pthread_mutex_unlock(&c.srv->admit_lock) == 0);
out:
    if (c.out.yaml)
        body_answer_yaml(resp);
    if (c.res && resp->status >= 200 && resp->status < 300 && strcmp(c.ri.verb, "get") &&
        strcmp(c.ri.verb, "list") && strcmp(c.ri.verb, "watch")) {
        aggregator_note_write(c.srv->agg, c.res->group, c.res->plural);
        webhooks_note_write(c.srv->webhooks, c.res->group, c.res->plural);
        api_authz_note_write(c.srv->authz, c.res->group, c.res->plural);
        if (!*c.res->group && !strcmp(c.res->plural, "namespaces"))
            ensure_default_serviceaccounts(c.srv);
    }
    record(&c, start);
    if (c.srv->auth && c.srv->auth->release && c.user.name)
        c.srv->auth->release(c.srv->auth->userdata, &c.user);
    api_ident_free(c.ident);
    (void)api_resource_unref(c.res);
    api_reqinfo_release(&c.ri);
    strbuf_release(&c.key);
    strbuf_release(&c.warnings);
    strbuf_release(&c.wh_warnings);
    strbuf_release(&c.dups);
}

static int load_crd(const struct store_item *it, void *ud)
{
    struct apiserver *s = ud;
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *crd = NULL;

    if (json_parse(it->value, it->len, NULL, &crd, NULL) == 0 &&
        api_registry_add_crd(s->reg, crd, &errs) < 0)
        log_warn("apiserver", "stored CRD %s cannot be served, ignoring", it->key);
    field_errors_release(&errs);
    cJSON_Delete(crd);
    return 0;
}

/* The namespaces that exist from the start (issue "koord apiserver"). */
static int ensure_namespace(struct store *store, const char *name)
{
    struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
    char uid[37], ts[RFC3339_STR_MAX];
    int r;

    apiserver_random_uid(uid);
    (void)rfc3339_format((int64_t)time(NULL), ts);
    strbuf_addf(&key, "/core/namespaces//%s", name);
    strbuf_addf(&val,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\","
                "\"uid\":\"%s\",\"creationTimestamp\":\"%s\",\"generation\":1,\"labels\":"
                "{\"kubernetes.io/metadata.name\":\"%s\"}},\"spec\":{\"finalizers\":"
                "[\"kubernetes\"]},\"status\":{\"phase\":\"Active\"}}",
                name, uid, ts, name);
    r = store_create(store, key.buf, val.buf, val.len, NULL);
    strbuf_release(&key);
    strbuf_release(&val);
    return r == -EEXIST ? 0 : r;
}

int apiserver_new(struct store *store, struct apiserver **ret)
{
    return apiserver_new_opts(store, &(struct apiserver_opts){0}, ret);
}

int apiserver_new_opts(struct store *store, const struct apiserver_opts *opts,
                       struct apiserver **ret)
{
    static const char *const initial_namespaces[] = {"default", "kube-system", "kube-public",
                                                     "kube-node-lease", "koordinator-system"};
    struct apiserver *s = xcalloc(1, sizeof(*s));
    int r = 0;

    s->store = store;
    s->bookmark_ms = DEFAULT_BOOKMARK_MS;
    s->auth = opts->auth;
    s->status_splice = opts->status_splice;
    s->expired_watch_status = opts->expired_watch_status;
    CHECK(pthread_mutex_init(&s->admit_lock, NULL) == 0);
    s->metrics = api_metrics_new();
    s->authz = api_authz_new(store);
    s->reg = opts->kinds ? api_registry_new_kinds(opts->kinds) : api_registry_new();
    s->openapi = openapi_new(s->reg);
    s->hub = watch_hub_new(encode_event);
    watch_hub_set_index(s->hub, POD_INDEX_PREFIX, pod_node_index);
    CHECK(webhooks_new(store, &s->webhooks) == 0);
    store_set_observer(store, watch_hub_observe, s->hub);
    if (opts->kinds) {
        *ret = s;
        return 0;
    }
    for (size_t i = 0; i < ARRAY_SIZE(initial_namespaces) && r == 0; i++)
        r = ensure_namespace(store, initial_namespaces[i]);
    if (r == 0) {
        char ts[RFC3339_STR_MAX];
        (void)rfc3339_format((int64_t)time(NULL), ts);
        r = admit_bootstrap(store, ts, apiserver_random_uid);
    }
    if (r == 0)
        r = store_list(store, CRD_PREFIX, NULL, 0, load_crd, s, NULL);
    if (r == 0)
        r = lifecycle_start(store, s->reg, &s->lifecycle);
    if (r < 0) {
        apiserver_free(s);
        return r;
    }
    *ret = s;
    return 0;
}

void apiserver_render_metrics(struct apiserver *s, struct strbuf *out)
{
    api_metrics_render(s->metrics, store_revision(s->store), out);
    if (s->status_splice)
        strbuf_addf(out,
                    "# HELP koord_apiserver_status_splice_writes_total Status writes whose "
                    "canonical status bytes were stored as sent, without decoding.\n"
                    "# TYPE koord_apiserver_status_splice_writes_total counter\n"
                    "koord_apiserver_status_splice_writes_total %lu\n",
                    atomic_load_explicit(&s->status_splices, memory_order_relaxed));
}

int apiserver_enable_aggregation(struct apiserver *s, const struct aggregator_opts *opts)
{
    if (s->agg)
        return -EEXIST;
    return aggregator_new(s->store, s->reg, opts, &s->agg);
}

void apiserver_stop_watches(struct apiserver *s)
{
    if (!s)
        return;
    aggregator_stop(s->agg);
    lifecycle_stop(s->lifecycle);
    s->lifecycle = NULL;
    /* The hub stays until apiserver_free: requests still arriving find it closed. */
    store_set_observer(s->store, NULL, NULL);
    watch_hub_close(s->hub);
}

void apiserver_free(struct apiserver *s)
{
    if (!s)
        return;
    apiserver_stop_watches(s);
    aggregator_free(s->agg);
    webhooks_free(s->webhooks);
    watch_hub_free(s->hub);
    openapi_free(s->openapi);
    api_registry_free(s->reg);
    api_authz_free(s->authz);
    (void)pthread_mutex_destroy(&s->admit_lock);
    api_metrics_free(s->metrics);
    free(s);
}
