/*
 * REST verbs over the store (see apiserver.h). Objects are stored in their canonical encoding
 * without metadata.resourceVersion, under "/<group|core>/<plural>/<namespace>/<name>"; the
 * revision of the row becomes the resourceVersion on the way out.
 *
 * This file creates and frees the server and routes each request: authentication and
 * authorization, the non-resource paths (health, version, discovery, /metrics), the checks every
 * resource request passes, then the verb. The verbs live in handle_<verb>.c (apiserver-int.h).
 */
#include "apiserver/apiserver.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/rfc3339.h"
#include "apiserver/admit.h"
#include "apiserver/aggregator.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/authz.h"
#include "apiserver/body.h"
#include "apiserver/lifecycle.h"
#include "apiserver/metrics.h"
#include "apiserver/openapi.h"
#include "apiserver/registry.h"
#include "apiserver/serviceaccounts.h"
#include "apiserver/watch.h"
#include "base/base.h"
#include "base/log.h"
#include "codec/codec.h"

#define CRD_PREFIX   "/apiextensions.k8s.io/customresourcedefinitions/"
#define KUBE_VERSION "v1.33.0"

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

/* ---- non-resource paths ---- */

static void reply_text(struct apiserver__call *c, int code, const char *text)
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
static bool serve_health(struct apiserver__call *c, const char *endpoint, const char *rest)
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

static void serve_nonresource(struct apiserver__call *c)
{
    const char *path = http_request_path(c->req);
    cJSON *doc = NULL;
    char group[256];

    for (const char *const *ep = (const char *const[]){"healthz", "livez", "readyz", NULL}; *ep;
         ep++) {
        size_t n = strlen(*ep);
        if (path[0] == '/' && !strncmp(path + 1, *ep, n) && (!path[n + 1] || path[n + 1] == '/')) {
            if (!serve_health(c, *ep, path + n + 1))
                apiserver__reply_not_served(c);
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
        apiserver__reply(c, 200, version_info());
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
        apiserver__reply_not_served(c);
        return;
    }
    apiserver__reply(c, 200, doc);
}

void apiserver_set_bookmark_interval(struct apiserver *s, unsigned ms)
{
    s->bookmark_ms = ms ? ms : APISERVER__DEFAULT_BOOKMARK_MS;
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
bool apiserver__parse_dry_run(struct apiserver__call *c, const char *v)
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
    apiserver__reply_status(c,
                            api_status_invalid(options_kind(c->ri.verb), "meta.k8s.io", "", &errs));
    strbuf_release(&bad);
    field_errors_release(&errs);
    return false;
}

/* fieldValidation of a create, update or patch: "", Ignore, Warn (the default) or Strict;
 * anything else is 422 as ValidateFieldValidation answers. Other verbs ignore it, as kube. */
static bool field_validation_valid(struct apiserver__call *c)
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
    apiserver__reply_status(c,
                            api_status_invalid(options_kind(c->ri.verb), "meta.k8s.io", "", &errs));
    strbuf_release(&bad);
    field_errors_release(&errs);
    return false;
}

/* The embedding program's rules (struct apiserver_auth): 401 or 403, or true. */
static bool admit_user_external(struct apiserver__call *c)
{
    const struct apiserver_auth *a = c->srv->auth;
    struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;
    int r = a->authenticate(a->userdata, c->req, &c->user);

    if (r < 0)
        c->user = (struct api_user){0};
    if (r == -EACCES || (r < 0 && !is_open_path(http_request_path(c->req)))) {
        apiserver__reply_status(c, api_status_failure(401, "Unauthorized", "Unauthorized", NULL));
        return false;
    }
    if (r < 0 || !c->ri.is_resource || !a->authorize ||
        a->authorize(a->userdata, &c->user, &c->ri, &why) == 0) {
        strbuf_release(&why);
        return true;
    }
    api_authz_forbidden_message(c->user.name, &c->ri, c->ri.name, why.len ? why.buf : NULL, &msg);
    apiserver__reply_status(c, api_status_failure(403, "Forbidden", msg.buf,
                                                  &(struct api_status_target){
                                                      c->ri.group, c->ri.resource, c->ri.name}));
    strbuf_release(&msg);
    strbuf_release(&why);
    return false;
}

/* Authentication, impersonation, then the authorizer chain (authz.h); replies 400/401/403 and
 * returns false when refused. */
static bool admit_user(struct apiserver__call *c)
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
        apiserver__reply_status(c, api_status_failure(401, "Unauthorized", "Unauthorized", NULL));
        return false;
    }
    if (r < 0) {
        c->user = (struct api_user){0};
        return true;
    }
    r = api_authz_impersonate(c->srv->authz, c->req, &c->user, &c->ident, &why);
    if (r == -EINVAL) {
        apiserver__reply_bad_request(c, why.buf);
        goto out;
    }
    if (r < 0) {
        apiserver__reply_status(c, api_status_failure(403, "Forbidden", why.buf, NULL));
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
        apiserver__reply_status(c, api_status_failure(403, "Forbidden", msg.buf, &t));
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

static void record(struct apiserver__call *c, double start)
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
    struct apiserver__call c = {.srv = userdata,
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
            apiserver__reply_bad_request(&c,
                                         "the request path must not contain control characters");
            goto out;
        }
    r = api_reqinfo_parse(http_request_method(req), http_request_path(req),
                          http_request_query(req, "watch"),
                          http_request_query(req, "fieldSelector"), &c.ri);
    if (r < 0) {
        apiserver__reply_bad_request(&c, "malformed request path");
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
        apiserver__reply_not_served(&c);
        goto out;
    }
    c.target = (struct api_status_target){c.res->group, c.res->plural, c.ri.name};
    /* Read-only kinds (registry.h) take writes to their status only. */
    if (c.res->read_only && strcmp(c.ri.verb, "get") && strcmp(c.ri.verb, "list") &&
        strcmp(c.ri.verb, "watch") &&
        (strcmp(c.ri.subresource, "status") ||
         (strcmp(c.ri.verb, "update") && strcmp(c.ri.verb, "patch")))) {
        apiserver__reply_status(&c,
                                api_status_failure(405, "MethodNotAllowed",
                                                   "the server does not allow this method on the "
                                                   "requested resource",
                                                   &c.target));
        goto out;
    }
    /* Before anything is written: an answer the client cannot take is refused first. */
    if (negotiate_output(http_request_header(req, "Accept"),
                         !strcmp(c.ri.verb, "list") || !strcmp(c.ri.verb, "deletecollection"),
                         &c.out) < 0) {
        apiserver__reply_status(
            &c, api_status_failure(406, "NotAcceptable", NEGOTIATE_NOT_ACCEPTABLE, NULL));
        goto out;
    }
    /* YAML has no stream framing: kube-apiserver refuses it for watches. */
    if (c.out.yaml && !strcmp(c.ri.verb, "watch")) {
        c.out.yaml = false;
        apiserver__reply_status(&c,
                                api_status_failure(406, "NotAcceptable",
                                                   "only the following media types are accepted: "
                                                   "application/json;stream=watch",
                                                   NULL));
        goto out;
    }
    if (c.res->create_only) {
        if (strcmp(c.ri.verb, "create") || *c.ri.subresource)
            apiserver__reply_status(
                &c, api_status_failure(405, "MethodNotAllowed",
                                       "the server does not allow this method on the "
                                       "requested resource",
                                       &c.target));
        else
            apiserver__do_review(&c);
        goto out;
    }
    if (!apiserver__parse_dry_run(&c, http_request_query(req, "dryRun")) ||
        !field_validation_valid(&c))
        goto out;
    /* Objects of namespaced resources live in a namespace: only list and watch span them. */
    if (c.res->namespaced && !*c.ri.namespace && strcmp(c.ri.verb, "list") &&
        strcmp(c.ri.verb, "watch")) {
        apiserver__reply_not_served(&c);
        goto out;
    }
    apiserver__object_key(&c.key, c.res, c.ri.namespace, c.ri.name);
    log_debug("apiserver", "%s %s", c.ri.verb, c.ri.path);
    serial =
        admit_serialized(c.res) && (!strcmp(c.ri.verb, "create") || !strcmp(c.ri.verb, "update") ||
                                    !strcmp(c.ri.verb, "patch") || !strcmp(c.ri.verb, "delete") ||
                                    !strcmp(c.ri.verb, "deletecollection"));
    if (serial)
        CHECK(pthread_mutex_lock(&c.srv->admit_lock) == 0);
    if (!strcmp(c.ri.subresource, "scale") && c.res->scale_spec_path)
        apiserver__do_scale(&c);
    else if (!strcmp(c.ri.subresource, "token") && !strcmp(c.ri.verb, "create"))
        apiserver__do_token_request(&c);
    else if (!strcmp(c.ri.subresource, "token") ||
             (!strcmp(c.ri.subresource, "finalize") && strcmp(c.ri.verb, "update")))
        apiserver__reply_status(&c,
                                api_status_failure(405, "MethodNotAllowed",
                                                   "the server does not allow this method on the "
                                                   "requested resource",
                                                   &c.target));
    else if (!strcmp(c.ri.verb, "get"))
        apiserver__do_get(&c);
    else if (!strcmp(c.ri.verb, "list"))
        apiserver__do_list(&c);
    else if (!strcmp(c.ri.verb, "watch"))
        apiserver__do_watch(&c);
    else if (!strcmp(c.ri.verb, "create") && apiserver__is_pods(c.res) &&
             !strcmp(c.ri.subresource, "binding"))
        apiserver__do_bind(&c);
    else if (!strcmp(c.ri.verb, "create") && apiserver__is_pods(c.res) &&
             !strcmp(c.ri.subresource, "eviction"))
        apiserver__do_evict(&c);
    else if (!strcmp(c.ri.verb, "create"))
        apiserver__do_create(&c);
    else if (!strcmp(c.ri.verb, "update"))
        apiserver__do_update(&c);
    else if (!strcmp(c.ri.verb, "patch"))
        apiserver__do_patch(&c);
    else if (!strcmp(c.ri.verb, "delete"))
        apiserver__do_delete(&c);
    else if (!strcmp(c.ri.verb, "deletecollection"))
        apiserver__do_deletecollection(&c);
    else
        apiserver__reply_status(&c,
                                api_status_failure(405, "MethodNotAllowed",
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
    s->bookmark_ms = APISERVER__DEFAULT_BOOKMARK_MS;
    s->auth = opts->auth;
    s->status_splice = opts->status_splice;
    s->expired_watch_status = opts->expired_watch_status;
    CHECK(pthread_mutex_init(&s->admit_lock, NULL) == 0);
    s->metrics = api_metrics_new();
    s->authz = api_authz_new(store);
    s->reg = opts->kinds ? api_registry_new_kinds(opts->kinds) : api_registry_new();
    s->openapi = openapi_new(s->reg);
    s->hub = watch_hub_new(apiserver__encode_event);
    watch_hub_set_index(s->hub, APISERVER__POD_INDEX_PREFIX, apiserver__pod_node_index);
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
