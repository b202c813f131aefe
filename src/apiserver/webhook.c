/*
 * Dynamic admission webhooks (webhook.h): the configuration snapshot, matching, the
 * AdmissionReview exchange, JSONPatch application, reinvocation and the metrics. Matching,
 * review building and answer checking are pure functions (table-tested in
 * tests/apiserver/test_webhook.c); the dispatcher around them reads the store and calls out.
 */
#include "apiserver/webhook.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/labels.h"
#include "apiserver/apiserver.h"
#include "apiserver/auth.h"
#include "apiserver/status.h"
#include "apiserver/store.h"
#include "apiserver/svcref.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "http/client.h"

#define GROUP          "admissionregistration.k8s.io"
#define MUTATING_KEY   "/" GROUP "/mutatingwebhookconfigurations/"
#define VALIDATING_KEY "/" GROUP "/validatingwebhookconfigurations/"
#define MAX_ANSWER     (16u << 20) /* bytes of one webhook answer */
#define MAX_PATCH_OPS  10000
#define MAX_SERIES     4096 /* metric series kept; more are not recorded */

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNull(c) ? NULL : c;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsString(c) ? c->valuestring : "";
}

static const char *const op_names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

/* ---- one webhook, as loaded ---- */

struct hook {
    char *name;
    bool mutating;
    cJSON *spec; /* the webhook object (its rules are read from here) */
    struct label_selector *ns_sel, *obj_sel;
    bool fail;            /* failurePolicy Fail */
    bool if_needed;       /* reinvocationPolicy IfNeeded */
    bool no_side_effects; /* sideEffects None or NoneOnDryRun */
    int timeout_s;        /* timeoutSeconds */
    const char *url;      /* clientConfig.url (in spec), or NULL */
    const char *svc_ns;   /* clientConfig.service (in spec) */
    const char *svc_name;
    const char *svc_path;
    int svc_port;
    char *ca_file;      /* caBundle written out, or NULL */
    char *config_error; /* why it cannot be called (bad caBundle, selector), or NULL */
    struct http_client *client;
};

static void hook_release(struct hook *h)
{
    http_client_free(h->client);
    if (h->ca_file)
        (void)unlink(h->ca_file);
    free(h->ca_file);
    free(h->config_error);
    label_selector_free(h->ns_sel);
    label_selector_free(h->obj_sel);
    cJSON_Delete(h->spec);
    free(h->name);
}

/* All configured webhooks at one moment: mutating ones first, each part in configuration name
 * order and then in the order of the configuration. Immutable once built. */
struct snapshot {
    atomic_uint refs;
    struct hook *v;
    size_t n, nmut;
};

static void snapshot_unref(struct snapshot *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (size_t i = 0; i < s->n; i++)
        hook_release(&s->v[i]);
    free(s->v);
    free(s);
}

/* ---- metrics ---- */

static const double buckets[] = {0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25};
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

enum series_kind { S_DURATION, S_REQUEST, S_REJECTION, S_FAIL_OPEN };

struct series {
    enum series_kind kind;
    char *labels;
    double count, sum;
    double b[NBUCKETS];
};

struct webhooks {
    struct store *store;
    pthread_mutex_t lock;  /* snap, dir, seq */
    struct snapshot *snap; /* NULL before the first load */
    atomic_ulong want;     /* bumped by every configuration write */
    atomic_ulong have;     /* the value of want snap was loaded at */
    atomic_bool empty;     /* snap holds no webhook */
    char *dir;             /* private directory of the caBundle files, made when needed */
    unsigned seq;
    pthread_mutex_t mlock; /* series */
    struct series *series;
    size_t nseries;
};

static void metric_add(struct webhooks *w, enum series_kind kind, const char *labels, double v)
{
    struct series *s = NULL;

    CHECK(pthread_mutex_lock(&w->mlock) == 0);
    for (size_t i = 0; i < w->nseries && !s; i++)
        if (w->series[i].kind == kind && !strcmp(w->series[i].labels, labels))
            s = &w->series[i];
    if (!s && w->nseries < MAX_SERIES) {
        w->series = xrealloc(w->series, (w->nseries + 1) * sizeof(*w->series));
        s = &w->series[w->nseries++];
        *s = (struct series){.kind = kind, .labels = xstrdup(labels)};
    }
    if (s) {
        s->count += 1;
        s->sum += v;
        for (size_t i = 0; i < NBUCKETS; i++)
            if (v <= buckets[i])
                s->b[i] += 1;
    }
    CHECK(pthread_mutex_unlock(&w->mlock) == 0);
}

/* One finished call: what kube's ObserveWebhook and ObserveWebhookRejection record. */
static void observe(struct webhooks *w, const struct hook *h, enum webhook_op op, double seconds,
                    bool rejected, int code, const char *error_type, int rejection_code)
{
    struct strbuf l = STRBUF_INIT;
    const char *type = h->mutating ? "admit" : "validating";

    strbuf_addstr(&l, "name=");
    strbuf_add_json_str(&l, h->name);
    strbuf_addf(&l, ",operation=\"%s\",rejected=\"%s\",type=\"%s\"", op_names[op],
                rejected ? "true" : "false", type);
    metric_add(w, S_DURATION, l.buf, seconds);
    strbuf_reset(&l);
    strbuf_addstr(&l, "code=");
    strbuf_addf(&l, "\"%d\",name=", code);
    strbuf_add_json_str(&l, h->name);
    strbuf_addf(&l, ",operation=\"%s\",rejected=\"%s\",type=\"%s\"", op_names[op],
                rejected ? "true" : "false", type);
    metric_add(w, S_REQUEST, l.buf, 0);
    if (error_type) {
        strbuf_reset(&l);
        strbuf_addf(&l, "error_type=\"%s\",name=", error_type);
        strbuf_add_json_str(&l, h->name);
        strbuf_addf(&l, ",operation=\"%s\",rejection_code=\"%d\",type=\"%s\"", op_names[op],
                    rejection_code > 600 ? 600 : rejection_code, type);
        metric_add(w, S_REJECTION, l.buf, 0);
    }
    strbuf_release(&l);
}

static void observe_fail_open(struct webhooks *w, const struct hook *h)
{
    struct strbuf l = STRBUF_INIT;

    strbuf_addstr(&l, "name=");
    strbuf_add_json_str(&l, h->name);
    strbuf_addf(&l, ",type=\"%s\"", h->mutating ? "admit" : "validating");
    metric_add(w, S_FAIL_OPEN, l.buf, 0);
    strbuf_release(&l);
}

static void render_family(struct webhooks *w, enum series_kind kind, const char *name,
                          const char *type, const char *help, struct strbuf *out)
{
    strbuf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (size_t i = 0; i < w->nseries; i++) {
        const struct series *s = &w->series[i];
        if (s->kind != kind)
            continue;
        if (kind != S_DURATION) {
            strbuf_addf(out, "%s{%s} %.0f\n", name, s->labels, s->count);
            continue;
        }
        for (size_t b = 0; b < NBUCKETS; b++)
            strbuf_addf(out, "%s_bucket{%s,le=\"%g\"} %.0f\n", name, s->labels, buckets[b],
                        s->b[b]);
        strbuf_addf(out, "%s_bucket{%s,le=\"+Inf\"} %.0f\n", name, s->labels, s->count);
        strbuf_addf(out, "%s_sum{%s} %.9g\n%s_count{%s} %.0f\n", name, s->labels, s->sum, name,
                    s->labels, s->count);
    }
}

void webhooks_render_metrics(struct webhooks *w, struct strbuf *out)
{
    if (!w)
        return;
    CHECK(pthread_mutex_lock(&w->mlock) == 0);
    render_family(w, S_DURATION, "apiserver_admission_webhook_admission_duration_seconds",
                  "histogram", "Admission webhook latency in seconds, by webhook.", out);
    render_family(w, S_REQUEST, "apiserver_admission_webhook_request_total", "counter",
                  "Admission webhook requests, by webhook and the HTTP status it answered.", out);
    render_family(w, S_REJECTION, "apiserver_admission_webhook_rejection_count", "counter",
                  "Admission webhook rejections, by webhook and error type.", out);
    render_family(w, S_FAIL_OPEN, "apiserver_admission_webhook_fail_open_count", "counter",
                  "Admission webhook calls that failed and were ignored (failurePolicy Ignore).",
                  out);
    CHECK(pthread_mutex_unlock(&w->mlock) == 0);
}

/* ---- matching (predicates/rules/rules.go, namespace and object matchers) ---- */

static bool list_has(const cJSON *list, const char *v)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, list)
    {
        if (cJSON_IsString(it) && (!strcmp(it->valuestring, "*") || !strcmp(it->valuestring, v)))
            return true;
    }
    return false;
}

/* Matcher.resource: "res" or "res/sub", either part possibly "*". */
static bool resources_match(const cJSON *list, const char *res, const char *sub)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, list)
    {
        const char *s = cJSON_IsString(it) ? it->valuestring : "", *slash = strchr(s, '/');
        size_t rlen = slash ? (size_t)(slash - s) : strlen(s);
        const char *rs = slash ? slash + 1 : "";
        bool rm = (rlen == 1 && s[0] == '*') || (strlen(res) == rlen && !strncmp(s, res, rlen));
        bool sm = !strcmp(rs, "*") || !strcmp(rs, sub);
        if (rm && sm)
            return true;
    }
    return false;
}

/* Matcher.scope: a Namespace is cluster-scoped; other objects by their namespace. */
static bool scope_matches(const char *scope, const struct webhook_attrs *a)
{
    bool is_ns = !*a->group && !strcmp(a->resource, "namespaces");

    if (!strcmp(scope, "Namespaced"))
        return !is_ns && *a->ns;
    if (!strcmp(scope, "Cluster"))
        return is_ns || !*a->ns;
    return true;
}

static bool rule_matches(const cJSON *rule, const struct webhook_attrs *a)
{
    return scope_matches(get_str(rule, "scope"), a) &&
           list_has(get(rule, "operations"), op_names[a->op]) &&
           list_has(get(rule, "apiGroups"), a->group) &&
           list_has(get(rule, "apiVersions"), a->version) &&
           resources_match(get(rule, "resources"), a->resource, a->subresource);
}

/* Whether any rule of the webhook object wh matches a. */
static bool rules_match(const cJSON *wh, const struct webhook_attrs *a)
{
    const cJSON *rule;

    cJSON_ArrayForEach(rule, get(wh, "rules"))
    {
        if (rule_matches(rule, a))
            return true;
    }
    return false;
}

/* Configurations are exempt from webhooks, so a bad webhook can always be removed. */
static bool exempt(const struct webhook_attrs *a)
{
    return !strcmp(a->group, GROUP) && (!strcmp(a->resource, "mutatingwebhookconfigurations") ||
                                        !strcmp(a->resource, "validatingwebhookconfigurations"));
}

static const cJSON *labels_of(const cJSON *o)
{
    return get(get(o, "metadata"), "labels");
}

/* MatchObjectSelector: the new or the old object's labels, either matching. */
static bool object_selected(const struct label_selector *sel, const cJSON *obj, const cJSON *old)
{
    if (!sel || label_selector_is_empty(sel))
        return true;
    return (obj && label_selector_matches(sel, labels_of(obj))) ||
           (old && label_selector_matches(sel, labels_of(old)));
}

/* MatchNamespaceSelector: ns_labels are the labels the namespace of the request has. */
static bool namespace_selected(const struct label_selector *sel, const struct webhook_attrs *a,
                               const cJSON *ns_labels)
{
    bool is_ns = !*a->group && !strcmp(a->resource, "namespaces");

    if (!*a->ns && !is_ns)
        return true;
    if (!sel || label_selector_is_empty(sel))
        return true;
    return label_selector_matches(sel, ns_labels);
}

/*
 * Reinvocation (mutating/dispatcher.go, reinvocation.go): after the first round, a webhook
 * with IfNeeded that was called runs again when a webhook after it changed the object.
 */
static void reinvoke_set(size_t n, const bool *if_needed, const bool *called, const bool *changed,
                         bool *out)
{
    bool later = false;

    for (size_t i = n; i-- > 0;) {
        out[i] = if_needed[i] && called[i] && later;
        later |= changed[i];
    }
}

/* ---- the review and its answer (request/admissionreview.go) ---- */

static cJSON *gvk(const char *g, const char *v, const char *k, const char *kkey)
{
    cJSON *o = cJSON_CreateObject();

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "group", g));
    CHECK(cJSON_AddStringToObject(o, "version", v));
    CHECK(cJSON_AddStringToObject(o, kkey, k));
    return o;
}

static void add_dup(cJSON *o, const char *k, const cJSON *v)
{
    cJSON *d = v ? cJSON_Duplicate(v, true) : cJSON_CreateNull();
    CHECK(d);
    CHECK(cJSON_AddItemToObject(o, k, d));
}

/* The options object of a request that gave none: its kind and the dry run. */
static cJSON *default_options(const struct webhook_attrs *a)
{
    static const char *const kinds[] = {"CreateOptions", "UpdateOptions", "DeleteOptions",
                                        "ConnectOptions"};
    cJSON *o = cJSON_CreateObject();

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "kind", kinds[a->op]));
    CHECK(cJSON_AddStringToObject(o, "apiVersion", "meta.k8s.io/v1"));
    if (a->dry_run) {
        cJSON *dr = cJSON_CreateArray();
        CHECK(dr);
        CHECK(cJSON_AddItemToArray(dr, cJSON_CreateString("All")));
        CHECK(cJSON_AddItemToObject(o, "dryRun", dr));
    }
    return o;
}

/* The admission.k8s.io/v1 AdmissionReview for a and obj (NULL for none), with uid. */
static cJSON *review_build(const struct webhook_attrs *a, const cJSON *obj, const char *uid)
{
    cJSON *r = cJSON_CreateObject(), *req = cJSON_CreateObject(), *ui, *groups;

    CHECK(r && req);
    CHECK(cJSON_AddStringToObject(r, "kind", "AdmissionReview"));
    CHECK(cJSON_AddStringToObject(r, "apiVersion", "admission.k8s.io/v1"));
    CHECK(cJSON_AddItemToObject(r, "request", req));
    CHECK(cJSON_AddStringToObject(req, "uid", uid));
    CHECK(cJSON_AddItemToObject(req, "kind", gvk(a->kind_group, a->kind_version, a->kind, "kind")));
    CHECK(
        cJSON_AddItemToObject(req, "resource", gvk(a->group, a->version, a->resource, "resource")));
    if (*a->subresource)
        CHECK(cJSON_AddStringToObject(req, "subResource", a->subresource));
    CHECK(cJSON_AddItemToObject(req, "requestKind",
                                gvk(a->kind_group, a->kind_version, a->kind, "kind")));
    CHECK(cJSON_AddItemToObject(req, "requestResource",
                                gvk(a->group, a->version, a->resource, "resource")));
    if (*a->subresource)
        CHECK(cJSON_AddStringToObject(req, "requestSubResource", a->subresource));
    if (*a->name)
        CHECK(cJSON_AddStringToObject(req, "name", a->name));
    if (*a->ns)
        CHECK(cJSON_AddStringToObject(req, "namespace", a->ns));
    CHECK(cJSON_AddStringToObject(req, "operation", op_names[a->op]));
    CHECK(ui = cJSON_AddObjectToObject(req, "userInfo"));
    if (a->user && a->user->name) {
        CHECK(cJSON_AddStringToObject(ui, "username", a->user->name));
        if (a->user->uid && *a->user->uid)
            CHECK(cJSON_AddStringToObject(ui, "uid", a->user->uid));
        CHECK(groups = cJSON_AddArrayToObject(ui, "groups"));
        for (const char *const *g = a->user->groups; g && *g; g++)
            CHECK(cJSON_AddItemToArray(groups, cJSON_CreateString(*g)));
        CHECK(cJSON_AddItemToArray(groups, cJSON_CreateString("system:authenticated")));
    } else {
        CHECK(cJSON_AddStringToObject(ui, "username", "system:anonymous"));
        CHECK(groups = cJSON_AddArrayToObject(ui, "groups"));
        CHECK(cJSON_AddItemToArray(groups, cJSON_CreateString("system:unauthenticated")));
    }
    add_dup(req, "object", obj);
    add_dup(req, "oldObject", a->old);
    CHECK(cJSON_AddBoolToObject(req, "dryRun", a->dry_run));
    if (a->options)
        add_dup(req, "options", a->options);
    else
        CHECK(cJSON_AddItemToObject(req, "options", default_options(a)));
    return r;
}

/* What one verified answer says. */
struct answer {
    bool allowed;
    cJSON *status;   /* response.status (owned), or NULL */
    cJSON *patch;    /* the decoded JSON patch (owned), or NULL */
    cJSON *warnings; /* response.warnings (owned), or NULL */
};

static void answer_release(struct answer *an)
{
    cJSON_Delete(an->status);
    cJSON_Delete(an->patch);
    cJSON_Delete(an->warnings);
    *an = (struct answer){0};
}

/* VerifyAdmissionResponse for a v1 answer: 0 with an filled, or -EINVAL with why. */
static int answer_parse(const char *body, size_t len, const char *uid, bool mutating,
                        struct answer *an, struct strbuf *why)
{
    cJSON *doc = NULL, *resp;
    const cJSON *patch, *pt;
    struct codec_error err = {0};
    int r = -EINVAL;

    *an = (struct answer){0};
    if (json_parse(body, len, NULL, &doc, &err) < 0 || !cJSON_IsObject(doc)) {
        strbuf_addf(why, "failed to call webhook: the answer is not a JSON object%s%s",
                    err.msg[0] ? ": " : "", err.msg);
        goto out;
    }
    if (strcmp(get_str(doc, "apiVersion"), "admission.k8s.io/v1") ||
        strcmp(get_str(doc, "kind"), "AdmissionReview")) {
        strbuf_addf(why,
                    "received invalid webhook response: expected webhook response of "
                    "admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s",
                    get_str(doc, "apiVersion"), get_str(doc, "kind"));
        goto out;
    }
    resp = cJSON_GetObjectItemCaseSensitive(doc, "response");
    if (!cJSON_IsObject(resp)) {
        strbuf_addstr(why, "received invalid webhook response: webhook response was absent");
        goto out;
    }
    if (strcmp(get_str(resp, "uid"), uid)) {
        strbuf_addf(why,
                    "received invalid webhook response: expected response.uid=\"%s\", got \"%s\"",
                    uid, get_str(resp, "uid"));
        goto out;
    }
    patch = get(resp, "patch");
    pt = get(resp, "patchType");
    if (!mutating && (patch || pt)) {
        strbuf_addstr(why, "received invalid webhook response: validating webhook may not return "
                           "response.patch or response.patchType");
        goto out;
    }
    if (patch && !pt) {
        strbuf_addstr(why, "received invalid webhook response: webhook returned response.patch "
                           "but not response.patchType");
        goto out;
    }
    if (pt && !patch) {
        strbuf_addstr(why, "received invalid webhook response: webhook returned "
                           "response.patchType but not response.patch");
        goto out;
    }
    if (pt && (!cJSON_IsString(pt) || strcmp(pt->valuestring, "JSONPatch"))) {
        strbuf_addf(why,
                    "received invalid webhook response: expected patchType \"JSONPatch\", got %s",
                    cJSON_IsString(pt) ? pt->valuestring : "a non-string");
        goto out;
    }
    if (patch) {
        gnutls_datum_t in, dec = {NULL, 0};
        bool ok = cJSON_IsString(patch);
        if (ok) {
            in = (gnutls_datum_t){(unsigned char *)patch->valuestring,
                                  (unsigned)strlen(patch->valuestring)};
            ok = gnutls_base64_decode2(&in, &dec) >= 0;
        }
        if (ok)
            ok = json_parse((const char *)dec.data, dec.size, NULL, &an->patch, NULL) == 0 &&
                 cJSON_IsArray(an->patch);
        gnutls_free(dec.data);
        if (!ok) {
            strbuf_addstr(why, "received invalid webhook response: response.patch is not the "
                               "base64 encoding of a JSON patch");
            goto out;
        }
    }
    an->allowed = cJSON_IsTrue(get(resp, "allowed"));
    if (cJSON_IsObject(get(resp, "status")))
        an->status = cJSON_Duplicate(get(resp, "status"), true);
    if (cJSON_IsArray(get(resp, "warnings")))
        an->warnings = cJSON_Duplicate(get(resp, "warnings"), true);
    r = 0;
out:
    if (r < 0)
        answer_release(an);
    cJSON_Delete(doc);
    return r;
}

/* ToStatusErr (errors/statuserror.go): the Status of a denial by webhook name. */
static cJSON *denial_status(const char *name, const cJSON *result)
{
    const cJSON *code = get(result, "code");
    const char *msg = get_str(result, "message"), *reason = get_str(result, "reason");
    struct strbuf m = STRBUF_INIT;
    int c = cJSON_IsNumber(code) ? code->valueint : 0;
    cJSON *st;

    strbuf_addf(&m, "admission webhook \"%s\" denied the request", name);
    if (*msg)
        strbuf_addf(&m, ": %s", msg);
    else if (*reason)
        strbuf_addf(&m, ": %s", reason);
    else
        strbuf_addstr(&m, " without explanation");
    st = api_status_failure(c < 400 ? 400 : c, reason, m.buf, NULL);
    if (cJSON_IsObject(get(result, "details")))
        add_dup(st, "details", get(result, "details"));
    strbuf_release(&m);
    return st;
}

/* Warning header values of an answer's warnings. */
static void add_warnings(const cJSON *warnings, struct strbuf *out)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, warnings)
    {
        if (!cJSON_IsString(it) || !*it->valuestring)
            continue;
        strbuf_addstr(out, "299 - ");
        strbuf_add_json_str(out, it->valuestring);
        strbuf_addch(out, '\n');
    }
}

/* ---- loading ---- */

static void hook_init(struct webhooks *w, struct hook *h, const cJSON *wh, bool mutating)
{
    const cJSON *cc, *svc, *t;
    const char *ca;
    struct strbuf why = STRBUF_INIT;
    struct http_client_opts o = {0};

    h->spec = cJSON_Duplicate(wh, true);
    CHECK(h->spec);
    h->name = xstrdup(get_str(h->spec, "name"));
    h->mutating = mutating;
    h->fail = strcmp(get_str(h->spec, "failurePolicy"), "Ignore") != 0;
    h->if_needed = mutating && !strcmp(get_str(h->spec, "reinvocationPolicy"), "IfNeeded");
    h->no_side_effects = !strcmp(get_str(h->spec, "sideEffects"), "None") ||
                         !strcmp(get_str(h->spec, "sideEffects"), "NoneOnDryRun");
    t = get(h->spec, "timeoutSeconds");
    h->timeout_s = cJSON_IsNumber(t) && t->valueint >= 1 && t->valueint <= 30 ? t->valueint : 10;
    cc = get(h->spec, "clientConfig");
    svc = get(cc, "service");
    if (cJSON_IsString(get(cc, "url"))) {
        h->url = get_str(cc, "url");
    } else {
        const cJSON *port = get(svc, "port");
        h->svc_ns = get_str(svc, "namespace");
        h->svc_name = get_str(svc, "name");
        h->svc_path = get_str(svc, "path");
        h->svc_port = cJSON_IsNumber(port) ? port->valueint : 443;
    }
    /* An absent selector is {} (everything); one that does not parse matches nothing. */
    if (get(h->spec, "namespaceSelector") &&
        label_selector_from_json(get(h->spec, "namespaceSelector"), &h->ns_sel, &why) < 0)
        goto bad;
    if (get(h->spec, "objectSelector") &&
        label_selector_from_json(get(h->spec, "objectSelector"), &h->obj_sel, &why) < 0)
        goto bad;
    ca = get_str(cc, "caBundle");
    if (*ca) {
        if (!w->dir) {
            const char *tmp = getenv("TMPDIR");
            struct strbuf d = STRBUF_INIT;
            strbuf_addf(&d, "%s/koord-webhooks-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            if (mkdtemp(d.buf))
                w->dir = strbuf_detach(&d, NULL);
            else
                strbuf_addf(&why, "cannot make a directory for caBundle files: %s",
                            err_str(-errno));
            strbuf_release(&d);
            if (!w->dir)
                goto bad;
        }
        h->ca_file =
            svcref_write_ca(w->dir, "webhook", w->seq++, ca, "clientConfig.caBundle", &why);
        if (!h->ca_file)
            goto bad;
    }
    o.ca_file = h->ca_file;
    o.connect_timeout_ms = (long)h->timeout_s * 1000;
    if (http_client_new(&o, &h->client) < 0) {
        strbuf_addstr(&why, "cannot create an HTTP client");
        goto bad;
    }
    strbuf_release(&why);
    return;
bad:
    h->config_error = strbuf_detach(&why, NULL);
}

struct load_ctx {
    struct webhooks *w;
    struct snapshot *s;
    bool mutating;
};

static int load_item(const struct store_item *it, void *ud)
{
    struct load_ctx *l = ud;
    cJSON *cfg = NULL;
    const cJSON *wh;

    if (json_parse(it->value, it->len, NULL, &cfg, NULL) < 0) {
        log_warn("apiserver", "stored webhook configuration %s does not parse, ignoring", it->key);
        return 0;
    }
    cJSON_ArrayForEach(wh, get(cfg, "webhooks"))
    {
        l->s->v = xrealloc(l->s->v, (l->s->n + 1) * sizeof(*l->s->v));
        l->s->v[l->s->n] = (struct hook){0};
        hook_init(l->w, &l->s->v[l->s->n], wh, l->mutating);
        l->s->n++;
    }
    cJSON_Delete(cfg);
    return 0;
}

/* The current snapshot (a reference; NULL when nothing is configured). */
static struct snapshot *snapshot_get(struct webhooks *w)
{
    struct snapshot *s;
    unsigned long want = atomic_load(&w->want);

    if (atomic_load(&w->have) == want && atomic_load(&w->empty))
        return NULL;
    CHECK(pthread_mutex_lock(&w->lock) == 0);
    want = atomic_load(&w->want);
    if (atomic_load(&w->have) != want || !w->snap) {
        struct snapshot *n = xcalloc(1, sizeof(*n));
        struct load_ctx l = {w, n, true};
        int r;
        atomic_init(&n->refs, 1);
        r = store_list(w->store, MUTATING_KEY, NULL, 0, load_item, &l, NULL);
        n->nmut = n->n;
        l.mutating = false;
        if (r == 0)
            r = store_list(w->store, VALIDATING_KEY, NULL, 0, load_item, &l, NULL);
        if (r < 0) {
            /* Keep what was loaded before; the next request tries again. */
            log_warn("apiserver", "cannot load webhook configurations: %s", err_str(r));
            snapshot_unref(n);
        } else {
            snapshot_unref(w->snap);
            w->snap = n;
            atomic_store(&w->empty, n->n == 0);
            atomic_store(&w->have, want);
        }
    }
    s = w->snap;
    if (s && s->n == 0)
        s = NULL;
    if (s)
        atomic_fetch_add(&s->refs, 1);
    CHECK(pthread_mutex_unlock(&w->lock) == 0);
    return s;
}

int webhooks_new(struct store *store, struct webhooks **ret)
{
    struct webhooks *w = xcalloc(1, sizeof(*w));

    w->store = store;
    CHECK(pthread_mutex_init(&w->lock, NULL) == 0);
    CHECK(pthread_mutex_init(&w->mlock, NULL) == 0);
    atomic_init(&w->want, 1);
    atomic_init(&w->have, 0);
    atomic_init(&w->empty, false);
    *ret = w;
    return 0;
}

void webhooks_free(struct webhooks *w)
{
    if (!w)
        return;
    snapshot_unref(w->snap);
    if (w->dir)
        (void)rmdir(w->dir);
    free(w->dir);
    for (size_t i = 0; i < w->nseries; i++)
        free(w->series[i].labels);
    free(w->series);
    (void)pthread_mutex_destroy(&w->lock);
    (void)pthread_mutex_destroy(&w->mlock);
    free(w);
}

void webhooks_note_write(struct webhooks *w, const char *group, const char *plural)
{
    if (!w || strcmp(group, GROUP) ||
        (strcmp(plural, "mutatingwebhookconfigurations") &&
         strcmp(plural, "validatingwebhookconfigurations")))
        return;
    atomic_fetch_add(&w->want, 1);
}

bool webhooks_wanted(struct webhooks *w, const struct webhook_attrs *a)
{
    struct snapshot *s;
    bool any = false;

    if (!w || exempt(a) || !(s = snapshot_get(w)))
        return false;
    for (size_t i = 0; i < s->n && !any; i++)
        any = rules_match(s->v[i].spec, a);
    snapshot_unref(s);
    return any;
}

void webhook_outcome_release(struct webhook_outcome *o)
{
    cJSON_Delete(o->status);
    o->status = NULL;
    strbuf_release(&o->warnings);
}

/* ---- calling ---- */

static double now_s(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Go's wording of a transport failure of a POST to host:port. */
static void transport_reason(int r, const char *host, int port, struct strbuf *out)
{
    if (r == -ECONNREFUSED) {
        strbuf_addstr(out, "dial tcp ");
        svcref_add_host_port(out, host, port);
        strbuf_addstr(out, ": connect: connection refused");
    } else if (r == -ETIMEDOUT) {
        strbuf_addstr(out, "context deadline exceeded");
    } else if (r == -EPROTO) {
        strbuf_addstr(out, "tls: failed to verify certificate: the serving certificate or the "
                           "TLS handshake did not verify");
    } else if (r == -EHOSTUNREACH) {
        strbuf_addf(out, "dial tcp: lookup %s: no such host", host);
    } else {
        strbuf_addstr(out, err_str(r));
    }
}

/* The host and port a URL names (for messages): "https://host[:port]/...", IPv6 in brackets. */
static void url_host_port(const char *url, struct strbuf *host, int *port)
{
    const char *h = url + 8, *end = h + strcspn(h, "/?#"), *colon = NULL;

    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(end - h));
        strbuf_add(host, h + 1, rb ? (size_t)(rb - h - 1) : 0);
        colon = rb && rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
        strbuf_add(host, h, (size_t)((colon ? colon : end) - h));
    }
    *port = colon ? 0 : 443;
    for (const char *p = colon ? colon + 1 : end; p < end && *port < 65536; p++)
        *port = *port * 10 + (*p - '0');
}

/*
 * What client-go says of a non-200 answer (rest/request.go transformResponse and
 * apimachinery's NewGenericServerResponse): a Status body's message, else the text of the
 * status code, with a text body quoted for the codes that have none.
 */
static void status_reason(const struct http_client_resp *resp, struct strbuf *out)
{
    cJSON *st = NULL;
    const char *msg = NULL;

    if (json_parse(resp->body.buf, resp->body.len, NULL, &st, NULL) == 0 &&
        !strcmp(get_str(st, "kind"), "Status") && *get_str(st, "message"))
        msg = get_str(st, "message");
    if (msg) {
        strbuf_addstr(out, msg);
    } else if (resp->status == 400) {
        strbuf_addstr(out, "the server rejected our request for an unknown reason");
    } else if (resp->status == 401) {
        strbuf_addstr(out, "the server has asked for the client to provide credentials");
    } else if (resp->status == 404) {
        strbuf_addstr(out, "the server could not find the requested resource");
    } else if (resp->status == 409) {
        strbuf_addstr(out, "the server reported a conflict");
    } else if (resp->status == 429) {
        strbuf_addstr(out, "the server has received too many requests and has asked us to try "
                           "again later");
    } else if (resp->status == 503) {
        strbuf_addstr(out, "the server is currently unable to handle the request");
    } else if (resp->status == 504) {
        strbuf_addstr(out, "the server was unable to return a response in the time allotted, "
                           "but may still be processing the request");
    } else {
        /* A short text body is quoted, as client-go does; anything else is "unknown". */
        bool text = !strncmp(resp->content_type, "text/", 5) && resp->body.len <= 256;
        strbuf_addstr(out, "an error on the server (");
        strbuf_add_json_str(out, text ? resp->body.buf : "unknown");
        strbuf_addstr(out, ") has prevented the request from succeeding");
    }
    cJSON_Delete(st);
}

/*
 * One exchange with h about review body (request uid): 0 with an filled, or -EIO with why
 * (what follows `failed calling webhook "<name>": `). *http_code is the answer's status or 0.
 */
static int exchange(struct webhooks *w, const struct hook *h, const char *body, size_t len,
                    const char *uid, struct answer *an, struct strbuf *why, int *http_code)
{
    static const char *const headers[] = {"Content-Type: application/json",
                                          "Accept: application/json", NULL};
    struct strbuf url = STRBUF_INIT, connect_to = STRBUF_INIT, host = STRBUF_INIT;
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct http_client_req req = {
        .method = "POST",
        .headers = headers,
        .body = body,
        .body_len = len,
        .timeout_ms = (long)h->timeout_s * 1000,
        .max_body = MAX_ANSWER,
    };
    int port = 0, r = -EIO;

    *http_code = 0;
    if (h->config_error) {
        strbuf_addf(why, "could not get REST client: %s", h->config_error);
        goto out;
    }
    if (h->url) {
        strbuf_addf(&url, "%s?timeout=%ds", h->url, h->timeout_s);
        url_host_port(h->url, &host, &port);
    } else {
        enum svcref_fail f;
        strbuf_addf(&url, "https://%s.%s.svc:%d%s?timeout=%ds", h->svc_name, h->svc_ns, h->svc_port,
                    h->svc_path, h->timeout_s);
        f = svcref_resolve(w->store, h->svc_ns, h->svc_name, h->svc_port, &host, &port, NULL);
        if (f != SVCREF_OK) {
            strbuf_addf(why, "failed to call webhook: Post \"%s\": ", url.buf);
            if (f == SVCREF_NO_SERVICE)
                strbuf_addf(why, "service \"%s\" not found", h->svc_name);
            else if (f == SVCREF_NO_PORT)
                strbuf_addf(why, "no service port %d found for service \"%s\"", h->svc_port,
                            h->svc_name);
            else if (f == SVCREF_NO_ENDPOINTS)
                strbuf_addf(why, "endpoints \"%s\" not found", h->svc_name);
            else
                strbuf_addf(why, "no endpoints available for service \"%s\"", h->svc_name);
            goto out;
        }
        strbuf_addf(&connect_to, "%s.%s.svc:%d:", h->svc_name, h->svc_ns, h->svc_port);
        svcref_add_host_port(&connect_to, host.buf, port);
        req.connect_to = connect_to.buf;
    }
    req.url = url.buf;
    r = http_client_do(h->client, &req, &resp);
    if (r < 0) {
        strbuf_addf(why, "failed to call webhook: Post \"%s\": ", url.buf);
        transport_reason(r, host.buf, port, why);
        r = -EIO;
        goto out;
    }
    *http_code = (int)resp.status;
    if (resp.status != 200) {
        strbuf_addstr(why, "failed to call webhook: ");
        status_reason(&resp, why);
        r = -EIO;
        goto out;
    }
    r = answer_parse(resp.body.buf, resp.body.len, uid, h->mutating, an, why) < 0 ? -EIO : 0;
out:
    http_client_resp_release(&resp);
    strbuf_release(&url);
    strbuf_release(&connect_to);
    strbuf_release(&host);
    return r;
}

/* The labels of the request's namespace (owned; NULL for none), for namespaceSelectors. */
static cJSON *namespace_labels(struct webhooks *w, const struct webhook_attrs *a, const cJSON *obj)
{
    bool is_ns = !*a->group && !strcmp(a->resource, "namespaces");
    const char *name = is_ns ? a->name : a->ns;
    struct strbuf key = STRBUF_INIT;
    struct store_item it = {0};
    cJSON *ns = NULL, *labels = NULL;

    if (is_ns && !*a->subresource && (a->op == WEBHOOK_CREATE || a->op == WEBHOOK_UPDATE)) {
        const cJSON *l = labels_of(obj);
        return l ? cJSON_Duplicate(l, true) : NULL;
    }
    if (!*name)
        return NULL;
    strbuf_addf(&key, "/core/namespaces//%s", name);
    if (store_get(w->store, key.buf, &it) == 0 &&
        json_parse(it.value, it.len, NULL, &ns, NULL) == 0 && labels_of(ns))
        labels = cJSON_DetachItemFromObjectCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(ns, "metadata"), "labels");
    cJSON_Delete(ns);
    store_item_release(&it);
    strbuf_release(&key);
    return labels;
}

/* Refuses with 500 Internal error occurred: <msg>. */
static void internal_error(struct webhook_outcome *out, const char *msg)
{
    struct strbuf m = STRBUF_INIT;

    strbuf_addf(&m, "Internal error occurred: %s", msg);
    cJSON_Delete(out->status);
    out->status = api_status_failure(500, "InternalError", m.buf, NULL);
    strbuf_release(&m);
}

/*
 * Calls h about obj (which a patch may replace, mutating webhooks on create and update only):
 * 0 when admitted (*changed says whether the object changed), -EACCES with out->status when
 * refused.
 */
static int run_one(struct webhooks *w, const struct hook *h, const struct webhook_attrs *a,
                   cJSON **obj, bool *changed, struct webhook_outcome *out)
{
    struct answer an = {0};
    struct strbuf why = STRBUF_INIT, body = STRBUF_INIT;
    const double start = now_s();
    char uid[37];
    cJSON *review;
    int code = 0, r = 0;

    *changed = false;
    if (a->dry_run && !h->no_side_effects) {
        strbuf_addf(&why, "admission webhook \"%s\" does not support dry run", h->name);
        out->status = api_status_failure(400, "BadRequest", why.buf, NULL);
        r = -EACCES;
        goto out;
    }
    apiserver_random_uid(uid);
    review = review_build(a, obj ? *obj : NULL, uid);
    r = json_print(review, &body);
    cJSON_Delete(review);
    if (r == 0)
        r = exchange(w, h, body.buf, body.len, uid, &an, &why, &code);
    if (r < 0) {
        struct strbuf m = STRBUF_INIT;
        strbuf_addf(&m, "failed calling webhook \"%s\": %s", h->name, why.buf);
        if (!h->fail) {
            log_warn("apiserver", "%s (failurePolicy Ignore: admitted)", m.buf);
            observe(w, h, a->op, now_s() - start, false, code, NULL, 0);
            observe_fail_open(w, h);
            r = 0;
        } else {
            internal_error(out, m.buf);
            observe(w, h, a->op, now_s() - start, true, code, "calling_webhook_error", 0);
            r = -EACCES;
        }
        strbuf_release(&m);
        goto out;
    }
    add_warnings(an.warnings, &out->warnings);
    if (!an.allowed) {
        out->status = denial_status(h->name, an.status);
        code = cJSON_GetObjectItem(out->status, "code")->valueint;
        observe(w, h, a->op, now_s() - start, true, 200, "no_error", code);
        r = -EACCES;
        goto out;
    }
    if (an.patch && obj && *obj && (a->op == WEBHOOK_CREATE || a->op == WEBHOOK_UPDATE)) {
        cJSON *next = cJSON_Duplicate(*obj, true);
        struct codec_error err = {0};
        CHECK(next);
        if (json_patch_apply(&next, an.patch, MAX_PATCH_OPS, &err) < 0 || !cJSON_IsObject(next)) {
            internal_error(out, err.msg[0] ? err.msg : "the patched object is not an object");
            cJSON_Delete(next);
            observe(w, h, a->op, now_s() - start, true, 200, "apiserver_internal_error", 500);
            r = -EACCES;
            goto out;
        }
        *changed = !json_value_equal(next, *obj);
        cJSON_Delete(*obj);
        *obj = next;
    }
    observe(w, h, a->op, now_s() - start, false, 200, NULL, 0);
out:
    answer_release(&an);
    strbuf_release(&why);
    strbuf_release(&body);
    return r;
}

/* Whether h is to be called for a and obj (ns_labels: the namespace's labels). */
static bool hook_matches(const struct hook *h, const struct webhook_attrs *a, const cJSON *obj,
                         const cJSON *ns_labels)
{
    return rules_match(h->spec, a) && namespace_selected(h->ns_sel, a, ns_labels) &&
           object_selected(h->obj_sel, obj, a->old);
}

int webhooks_mutate(struct webhooks *w, const struct webhook_attrs *a, cJSON **obj,
                    struct webhook_outcome *out)
{
    struct snapshot *s;
    cJSON *ns_labels = NULL;
    bool *if_needed = NULL, *called = NULL, *changed = NULL, *again = NULL, any_again = false;
    int r = 0;

    if (!w || exempt(a) || !(s = snapshot_get(w)))
        return 0;
    if (s->nmut == 0)
        goto out;
    ns_labels = namespace_labels(w, a, obj ? *obj : NULL);
    if_needed = xcalloc(s->nmut, sizeof(bool));
    called = xcalloc(s->nmut, sizeof(bool));
    changed = xcalloc(s->nmut, sizeof(bool));
    again = xcalloc(s->nmut, sizeof(bool));
    for (size_t i = 0; i < s->nmut && r == 0; i++) {
        const struct hook *h = &s->v[i];
        if_needed[i] = h->if_needed;
        if (!hook_matches(h, a, obj ? *obj : NULL, ns_labels))
            continue;
        called[i] = true;
        r = run_one(w, h, a, obj, &changed[i], out);
    }
    if (r < 0)
        goto out;
    reinvoke_set(s->nmut, if_needed, called, changed, again);
    for (size_t i = 0; i < s->nmut; i++)
        any_again |= again[i];
    for (size_t i = 0; i < s->nmut && r == 0 && any_again; i++) {
        bool ch;
        if (again[i] && hook_matches(&s->v[i], a, obj ? *obj : NULL, ns_labels))
            r = run_one(w, &s->v[i], a, obj, &ch, out);
    }
out:
    free(if_needed);
    free(called);
    free(changed);
    free(again);
    cJSON_Delete(ns_labels);
    snapshot_unref(s);
    return r;
}

int webhooks_validate(struct webhooks *w, const struct webhook_attrs *a, const cJSON *obj,
                      struct webhook_outcome *out)
{
    struct snapshot *s;
    cJSON *ns_labels = NULL;
    int r = 0;

    if (!w || exempt(a) || !(s = snapshot_get(w)))
        return 0;
    if (s->nmut < s->n)
        ns_labels = namespace_labels(w, a, obj);
    for (size_t i = s->nmut; i < s->n && r == 0; i++) {
        const struct hook *h = &s->v[i];
        cJSON *o = (cJSON *)obj; /* not changed: validating webhooks cannot patch */
        bool ch;
        if (hook_matches(h, a, obj, ns_labels))
            r = run_one(w, h, a, obj ? &o : NULL, &ch, out);
    }
    cJSON_Delete(ns_labels);
    snapshot_unref(s);
    return r;
}
