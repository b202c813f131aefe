/*
 * The authorizer chain, impersonation, service-account authentication and the admission of
 * RBAC writes (see authz.h). The RBAC snapshot is rebuilt on the first decision after an RBAC
 * write; requests hold a reference to the one they started with.
 */
#include "apiserver/authz.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/rfc3339.h"
#include "apiserver/auth.h"
#include "apiserver/rbac.h"
#include "apiserver/registry.h"
#include "apiserver/reqinfo.h"
#include "apiserver/satoken.h"
#include "apiserver/store.h"
#include "apiserver/tokens.h"
#include "base/base.h"
#include "base/log.h"
#include "codec/codec.h"
#include "http/server.h"

#define MAX_MODES     4
#define MAX_IMP       ((size_t)64) /* Impersonate-Group / -Extra values one request may carry */
#define SA_PREFIX     "system:serviceaccount:"
#define MASTERS_GROUP "system:masters"

enum mode { MODE_NODE, MODE_RBAC, MODE_ALLOW, MODE_DENY };

static const char *const mode_names[] = {"Node", "RBAC", "AlwaysAllow", "AlwaysDeny"};

struct api_authz {
    struct store *store;
    enum mode modes[MAX_MODES];
    size_t nmodes;
    bool rbac;
    struct api_satokens *sat;
    pthread_mutex_t lock;        /* guards snap */
    struct rbac_snapshot *snap;  /* NULL until loaded, or after an RBAC write */
    atomic_uint rbac_generation; /* bumped by every RBAC write */
    unsigned snap_generation;    /* the generation snap was loaded at */
};

struct api_ident {
    char *name, *uid;
    char **groups; /* NULL-terminated */
    char **extra;  /* NULL-terminated key, value pairs */
};

struct api_authz *api_authz_new(struct store *store)
{
    struct api_authz *az = xcalloc(1, sizeof(*az));

    az->store = store;
    az->modes[0] = MODE_NODE;
    az->modes[1] = MODE_ALLOW;
    az->nmodes = 2;
    CHECK(pthread_mutex_init(&az->lock, NULL) == 0);
    return az;
}

void api_authz_free(struct api_authz *az)
{
    if (!az)
        return;
    (void)rbac_snapshot_unref(az->snap);
    (void)pthread_mutex_destroy(&az->lock);
    free(az);
}

int api_authz_set_modes(struct api_authz *az, const char *modes, struct strbuf *why)
{
    enum mode m[MAX_MODES];
    size_t n = 0;
    const char *p = modes;

    if (!*modes) {
        strbuf_addstr(why, "at least one authorization mode must be passed");
        return -EINVAL;
    }
    while (*p) {
        size_t len = strcspn(p, ","), i;
        for (i = 0; i < ARRAY_SIZE(mode_names); i++)
            if (strlen(mode_names[i]) == len && !strncmp(p, mode_names[i], len))
                break;
        if (i == ARRAY_SIZE(mode_names)) {
            strbuf_addf(why,
                        "authorization-mode \"%.*s\" is not a valid mode (Node, RBAC, "
                        "AlwaysAllow, AlwaysDeny)",
                        (int)len, p);
            return -EINVAL;
        }
        for (size_t j = 0; j < n; j++)
            if (m[j] == (enum mode)i) {
                strbuf_addf(why, "authorization-mode \"%s\" has already been specified",
                            mode_names[i]);
                return -EINVAL;
            }
        m[n++] = (enum mode)i;
        p += len;
        if (*p == ',' && *++p == '\0') {
            strbuf_addstr(why, "empty authorization mode");
            return -EINVAL;
        }
    }
    memcpy(az->modes, m, n * sizeof(m[0]));
    az->nmodes = n;
    az->rbac = false;
    for (size_t i = 0; i < n; i++)
        az->rbac |= m[i] == MODE_RBAC;
    return 0;
}

bool api_authz_rbac_enabled(const struct api_authz *az)
{
    return az->rbac;
}

int api_authz_bootstrap(struct api_authz *az, const char *now, void (*new_uid)(char uid[37]))
{
    int r;

    if (!az->rbac)
        return 0;
    r = rbac_bootstrap(az->store, now, new_uid);
    atomic_fetch_add(&az->rbac_generation, 1);
    return r;
}

void api_authz_set_satokens(struct api_authz *az, struct api_satokens *sat)
{
    az->sat = sat;
}

/* The current snapshot (a reference), loading it after a write; NULL when the store fails. */
static struct rbac_snapshot *snapshot(struct api_authz *az)
{
    struct rbac_snapshot *s = NULL;
    unsigned gen;

    CHECK(pthread_mutex_lock(&az->lock) == 0);
    gen = atomic_load(&az->rbac_generation);
    if (!az->snap || az->snap_generation != gen) {
        az->snap = rbac_snapshot_unref(az->snap);
        if (rbac_snapshot_load(az->store, &az->snap) < 0)
            az->snap = NULL;
        az->snap_generation = gen;
    }
    if (az->snap)
        s = rbac_snapshot_ref(az->snap);
    CHECK(pthread_mutex_unlock(&az->lock) == 0);
    return s;
}

static bool is_master(const struct api_user *u)
{
    for (const char *const *g = u->groups; g && *g; g++)
        if (!strcmp(*g, MASTERS_GROUP))
            return true;
    return false;
}

enum api_authz_decision api_authz_decide(struct api_authz *az, const struct api_user *u,
                                         const struct api_reqinfo *ri, struct strbuf *reason)
{
    const char *node = api_user_node(u);

    if (is_master(u))
        return API_AUTHZ_DECISION_ALLOW;
    for (size_t i = 0; i < az->nmodes; i++) {
        switch (az->modes[i]) {
        case MODE_NODE:
            if (!node)
                break;
            switch (api_authz_node_request(node, ri)) {
            case API_AUTHZ_ALLOW:
                return API_AUTHZ_DECISION_ALLOW;
            case API_AUTHZ_CHECK_OBJECTS:
                return API_AUTHZ_DECISION_ALLOW_CHECK_OBJECTS;
            case API_AUTHZ_DENY:
                return API_AUTHZ_DECISION_DENY;
            }
            break;
        case MODE_RBAC: {
            struct rbac_snapshot *s = snapshot(az);
            bool ok = rbac_authorize(s, u, ri, reason);
            (void)rbac_snapshot_unref(s);
            if (ok)
                return API_AUTHZ_DECISION_ALLOW;
            break;
        }
        case MODE_ALLOW:
            return API_AUTHZ_DECISION_ALLOW;
        case MODE_DENY:
            return API_AUTHZ_DECISION_DENY;
        }
    }
    return API_AUTHZ_DECISION_NO_OPINION;
}

/* Appends a rule; each argument is a comma-separated list or NULL. */
static void add_rule(cJSON *list, const char *verbs, const char *groups, const char *resources,
                     const char *urls)
{
    cJSON *r = cJSON_CreateObject();
    const char *const v[] = {verbs, groups, resources, urls};
    const char *const keys[] = {"verbs", "apiGroups", "resources", "nonResourceURLs"};

    CHECK(r);
    for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
        cJSON *a;
        if (!v[i])
            continue;
        CHECK(a = cJSON_AddArrayToObject(r, keys[i]));
        for (const char *p = v[i];;) {
            size_t len = strcspn(p, ",");
            char *item = xstrndup(p, len);
            CHECK(cJSON_AddItemToArray(a, cJSON_CreateString(item)));
            free(item);
            if (!p[len])
                break;
            p += len + 1;
        }
    }
    CHECK(cJSON_AddItemToArray(list, r));
}

bool api_authz_rules(struct api_authz *az, const struct api_user *u, const char *ns,
                     cJSON *resource_rules, cJSON *non_resource_rules)
{
    const char *node = api_user_node(u);
    bool incomplete = false;

    if (is_master(u) && !az->rbac) {
        add_rule(resource_rules, "*", "*", "*", NULL);
        add_rule(non_resource_rules, "*", NULL, NULL, "*");
        return false;
    }
    for (size_t i = 0; i < az->nmodes; i++) {
        switch (az->modes[i]) {
        case MODE_NODE:
            if (!node)
                break;
            /* The node rule reads everything and writes only its own objects; the second part
             * is not a list of rules. */
            add_rule(resource_rules, "get,list,watch", "*", "*", NULL);
            return true;
        case MODE_RBAC: {
            struct rbac_snapshot *s = snapshot(az);
            cJSON *rules = cJSON_CreateArray(), *r;
            CHECK(rules);
            rbac_rules_for(s, u, ns, rules);
            (void)rbac_snapshot_unref(s);
            cJSON_ArrayForEach(r, rules)
            {
                cJSON *c = cJSON_Duplicate(r, true);
                CHECK(c);
                if (cJSON_GetArraySize(cJSON_GetObjectItem(r, "nonResourceURLs")) > 0) {
                    cJSON_DeleteItemFromObject(c, "apiGroups");
                    cJSON_DeleteItemFromObject(c, "resources");
                    cJSON_DeleteItemFromObject(c, "resourceNames");
                    CHECK(cJSON_AddItemToArray(non_resource_rules, c));
                } else {
                    cJSON_DeleteItemFromObject(c, "nonResourceURLs");
                    CHECK(cJSON_AddItemToArray(resource_rules, c));
                }
            }
            cJSON_Delete(rules);
            break;
        }
        case MODE_ALLOW:
            add_rule(resource_rules, "*", "*", "*", NULL);
            add_rule(non_resource_rules, "*", NULL, NULL, "*");
            return incomplete;
        case MODE_DENY:
            return incomplete;
        }
    }
    return incomplete;
}

/* ---- identities ---- */

void api_ident_free(struct api_ident *id)
{
    if (!id)
        return;
    free(id->name);
    free(id->uid);
    for (size_t i = 0; id->groups && id->groups[i]; i++)
        free(id->groups[i]);
    free(id->groups);
    for (size_t i = 0; id->extra && id->extra[i]; i++)
        free(id->extra[i]);
    free(id->extra);
    free(id);
}

static void ident_user(const struct api_ident *id, struct api_user *u)
{
    *u = (struct api_user){.name = id->name,
                           .uid = id->uid ? id->uid : "",
                           .groups = (const char *const *)id->groups,
                           .extra = (const char *const *)id->extra};
}

static char **strv_new(size_t n)
{
    return xcalloc(n + 1, sizeof(char *));
}

/* How long a bound object may have been deleting before its tokens stop working (kube's
 * pkg/serviceaccount/claims.go: deletionTimestamp more than 60 s in the past). */
#define BOUND_DELETE_GRACE 60
/* Extras of a service-account identity, keys and values: pod-name, pod-uid, credential-id,
 * node-name, node-uid. */
#define MAX_SA_EXTRA ((size_t)2 * 5)

/*
 * Whether the object a token is bound to (at key, with uid) is still there as it was: present,
 * the same uid, and not deleting for longer than BOUND_DELETE_GRACE. A pod replaced by another
 * of the same name has another uid, so the old pod's tokens stop working.
 */
static bool bound_object_valid(struct api_authz *az, const char *key, const char *uid, int64_t now)
{
    struct store_item it = {0};
    cJSON *o = NULL;
    const cJSON *meta;
    const char *got, *del;
    int64_t t;
    int32_t nsec;
    bool ok = false;

    if (store_get(az->store, key, &it) < 0 || json_parse(it.value, it.len, NULL, &o, NULL) < 0)
        goto out;
    meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    got = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "uid"));
    del = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp"));
    if (!got || strcmp(got, uid))
        goto out;
    if (del && rfc3339_parse(del, &t, &nsec) == 0 && t + BOUND_DELETE_GRACE < now)
        goto out;
    ok = true;
out:
    cJSON_Delete(o);
    store_item_release(&it);
    return ok;
}

/* Adds key = value to a NULL-terminated key, value list with room for it. */
static void extra_add(char **kv, size_t *n, const char *key, const char *value)
{
    kv[(*n)++] = xstrdup(key);
    kv[(*n)++] = xstrdup(value);
}

/*
 * The identity of a service-account token, or -EINVAL/-EACCES as api_satokens_verify. A token
 * bound to objects (satoken.h) is good only while they exist as they were when it was issued
 * (the pod, secret, or node of a node-bound token; a pod-bound token's node is not checked, as
 * kube does not), and carries them as extras: pod-name, pod-uid, node-name, node-uid
 * (k8s.io/apiserver/pkg/authentication/serviceaccount ServiceAccountInfo.UserInfo).
 */
static int sa_authenticate(struct api_authz *az, const char *token, const char *const *audiences,
                           struct api_ident **ret)
{
    struct api_satoken_claims c = {0};
    struct strbuf why = STRBUF_INIT, key = STRBUF_INIT, val = STRBUF_INIT;
    struct store_item it = {0};
    struct api_ident *id;
    cJSON *sa = NULL;
    const char *uid;
    int64_t now = (int64_t)time(NULL);
    size_t n = 0;
    int r = api_satokens_verify(az->sat, token, audiences, now, &c, &why);

    if (r < 0)
        goto out;
    /* The account must still exist as the one the token was issued to. */
    strbuf_addf(&key, "/core/serviceaccounts/%s/%s", c.ns, c.name);
    r = store_get(az->store, key.buf, &it);
    if (r == 0 && json_parse(it.value, it.len, NULL, &sa, NULL) == 0) {
        uid = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(sa, "metadata"), "uid"));
        r = uid && !strcmp(uid, c.uid) ? 0 : -EACCES;
    } else {
        r = -EACCES;
    }
    if (r < 0)
        goto out;
    /* And the object it is bound to. */
    strbuf_reset(&key);
    if (c.bound.pod.name) {
        strbuf_addf(&key, "/core/pods/%s/%s", c.ns, c.bound.pod.name);
        uid = c.bound.pod.uid;
    } else if (c.bound.secret.name) {
        strbuf_addf(&key, "/core/secrets/%s/%s", c.ns, c.bound.secret.name);
        uid = c.bound.secret.uid;
    } else if (c.bound.node.name) {
        strbuf_addf(&key, "/core/nodes//%s", c.bound.node.name);
        uid = c.bound.node.uid;
    }
    if (key.len && !bound_object_valid(az, key.buf, uid, now)) {
        r = -EACCES;
        goto out;
    }
    id = xcalloc(1, sizeof(*id));
    strbuf_addf(&val, SA_PREFIX "%s:%s", c.ns, c.name);
    id->name = strbuf_detach(&val, NULL);
    id->uid = xstrdup(c.uid);
    id->groups = strv_new(2);
    id->groups[0] = xstrdup("system:serviceaccounts");
    strbuf_addf(&val, "system:serviceaccounts:%s", c.ns);
    id->groups[1] = strbuf_detach(&val, NULL);
    id->extra = strv_new(MAX_SA_EXTRA);
    if (c.bound.pod.name) {
        extra_add(id->extra, &n, "authentication.kubernetes.io/pod-name", c.bound.pod.name);
        extra_add(id->extra, &n, "authentication.kubernetes.io/pod-uid", c.bound.pod.uid);
    }
    strbuf_addf(&val, "JTI=%s", c.jti ? c.jti : "");
    extra_add(id->extra, &n, "authentication.kubernetes.io/credential-id", val.buf);
    if (c.bound.node.name) {
        extra_add(id->extra, &n, "authentication.kubernetes.io/node-name", c.bound.node.name);
        extra_add(id->extra, &n, "authentication.kubernetes.io/node-uid", c.bound.node.uid);
    }
    *ret = id;
out:
    cJSON_Delete(sa);
    store_item_release(&it);
    api_satoken_claims_release(&c);
    strbuf_release(&why);
    strbuf_release(&key);
    strbuf_release(&val);
    return r;
}

int api_authz_authenticate(struct api_authz *az, const struct http_request *req,
                           const struct api_tokens *tokens, struct api_user *ret,
                           struct api_ident **ret_ident)
{
    const char *auth = http_request_header(req, "Authorization");
    struct api_ident *id = NULL;
    int r = api_authenticate(req, tokens, ret);

    if (r != -EACCES || !az->sat || !auth || strncasecmp(auth, "Bearer ", 7))
        return r;
    auth += 7;
    while (*auth == ' ')
        auth++;
    if (sa_authenticate(az, auth, NULL, &id) < 0)
        return -EACCES;
    ident_user(id, ret);
    *ret_ident = id;
    return 0;
}

int api_authz_review_token(struct api_authz *az, const struct api_tokens *tokens, const char *token,
                           const char *const *audiences, struct api_user *ret,
                           struct api_ident **ret_ident)
{
    const struct api_token_user *tu = NULL;
    bool api_aud = !audiences || !*audiences;
    struct api_ident *id = NULL;

    for (const char *const *a = audiences; a && *a; a++)
        api_aud |= !strcmp(*a, API_SA_ISSUER);
    /* Static tokens are not audience-aware: good for the API's own audience only. */
    if (api_aud && tokens && (tu = api_tokens_lookup(tokens, token))) {
        *ret = (struct api_user){.name = tu->user, .uid = tu->uid, .groups = tu->groups};
        return 0;
    }
    if (!az->sat || sa_authenticate(az, token, audiences, &id) < 0)
        return -EACCES;
    ident_user(id, ret);
    *ret_ident = id;
    return 0;
}

/* ---- impersonation ---- */

struct extra_ctx {
    char **kv;
    size_t n;
    bool too_many;
};

static int hexdigit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int collect_extra(void *ud, const char *name, const char *value)
{
    static const char prefix[] = "Impersonate-Extra-";
    struct extra_ctx *e = ud;
    struct strbuf key = STRBUF_INIT;

    if (strncasecmp(name, prefix, sizeof(prefix) - 1) || !name[sizeof(prefix) - 1])
        return 0;
    if (e->n >= 2 * MAX_IMP) {
        e->too_many = true;
        return 0;
    }
    if (!e->kv)
        e->kv = strv_new(2 * MAX_IMP);
    /* The key is the rest of the header name, lower-cased and %-decoded. */
    for (const char *p = name + sizeof(prefix) - 1; *p; p++) {
        int hi, lo;
        if (*p == '%' && p[1] && p[2] && (hi = hexdigit(p[1])) >= 0 && (lo = hexdigit(p[2])) >= 0) {
            strbuf_addch(&key, (char)(hi << 4 | lo));
            p += 2;
        } else {
            strbuf_addch(&key, (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p));
        }
    }
    e->kv[e->n++] = strbuf_detach(&key, NULL);
    e->kv[e->n++] = xstrdup(value);
    return 0;
}

/* One `impersonate` check; fills why with kube's message when refused. */
static bool may_impersonate(struct api_authz *az, const struct api_user *u, const char *group,
                            const char *resource, const char *ns, const char *name,
                            struct strbuf *why)
{
    struct api_reqinfo ri = {.is_resource = true,
                             .verb = (char *)"impersonate",
                             .path = (char *)"",
                             .api_prefix = (char *)"",
                             .group = (char *)group,
                             .version = (char *)"",
                             .namespace = (char *)ns,
                             .resource = (char *)resource,
                             .subresource = (char *)"",
                             .name = (char *)name};
    enum api_authz_decision d = api_authz_decide(az, u, &ri, NULL);

    if (d == API_AUTHZ_DECISION_ALLOW)
        return true;
    api_authz_forbidden_message(u->name, &ri, name, NULL, why);
    return false;
}

int api_authz_impersonate(struct api_authz *az, const struct http_request *req, struct api_user *u,
                          struct api_ident **ident, struct strbuf *why)
{
    const char *user = http_request_header(req, "Impersonate-User");
    const char *uid = http_request_header(req, "Impersonate-Uid");
    const char *groups[MAX_IMP];
    size_t ngroups = http_request_header_values(req, "Impersonate-Group", groups, MAX_IMP);
    /* kv is allocated on the first extra header: most requests impersonate nothing. */
    struct extra_ctx ex = {NULL, 0, false};
    struct api_ident *id = NULL;
    struct strbuf b = STRBUF_INIT;
    size_t pl = strlen(SA_PREFIX);
    bool sa = false, add_auth = true;
    int r = 0;

    http_request_foreach_header(req, collect_extra, &ex);
    if (!user && !ngroups && !uid && !ex.n)
        goto out;
    if (ngroups > MAX_IMP || ex.too_many) {
        strbuf_addf(why, "at most %zu Impersonate-Group and Impersonate-Extra headers", MAX_IMP);
        r = -EINVAL;
        goto out;
    }
    if (!user || !*user) {
        strbuf_addstr(why, "requested impersonation of groups, uid or extras without "
                           "impersonating a user");
        r = -EINVAL;
        goto out;
    }
    if (!strncmp(user, SA_PREFIX, pl) && strchr(user + pl, ':')) {
        const char *colon = strchr(user + pl, ':');
        strbuf_add(&b, user + pl, (size_t)(colon - user - pl));
        sa = true;
        if (!may_impersonate(az, u, "", "serviceaccounts", b.buf, colon + 1, why))
            r = -EPERM;
    } else if (!may_impersonate(az, u, "", "users", "", user, why)) {
        r = -EPERM;
    }
    for (size_t i = 0; r == 0 && i < ngroups; i++)
        if (!may_impersonate(az, u, "", "groups", "", groups[i], why))
            r = -EPERM;
    if (r == 0 && uid && !may_impersonate(az, u, "authentication.k8s.io", "uids", "", uid, why))
        r = -EPERM;
    for (size_t i = 0; r == 0 && i < ex.n; i += 2) {
        strbuf_reset(&b);
        strbuf_addf(&b, "userextras/%s", ex.kv[i]);
        if (!may_impersonate(az, u, "authentication.k8s.io", b.buf, "", ex.kv[i + 1], why))
            r = -EPERM;
    }
    if (r < 0)
        goto out;
    id = xcalloc(1, sizeof(*id));
    id->name = xstrdup(user);
    id->uid = xstrdup(uid ? uid : "");
    id->groups = strv_new(ngroups + 2);
    for (size_t i = 0; i < ngroups; i++) {
        id->groups[i] = xstrdup(groups[i]);
        add_auth &= strcmp(groups[i], "system:unauthenticated") != 0;
    }
    /* A service account impersonated without groups gets its own (impersonation.go). */
    if (sa && !ngroups) {
        const char *colon = strchr(user + pl, ':');
        strbuf_reset(&b);
        strbuf_addf(&b, "system:serviceaccounts:%.*s", (int)(colon - user - pl), user + pl);
        id->groups[0] = xstrdup("system:serviceaccounts");
        id->groups[1] = strbuf_detach(&b, NULL);
    }
    (void)add_auth; /* system:authenticated is implied for every user (auth.h) */
    id->extra = ex.kv ? ex.kv : strv_new(0);
    ex.kv = NULL;
    api_ident_free(*ident);
    *ident = id;
    ident_user(id, u);
out:
    for (size_t i = 0; ex.kv && ex.kv[i]; i++)
        free(ex.kv[i]);
    free(ex.kv);
    strbuf_release(&b);
    return r;
}

/* ---- RBAC writes ---- */

static bool is_rbac(const struct api_resource *res, const char *plural)
{
    return !strcmp(res->group, RBAC_GROUP) && !strcmp(res->plural, plural);
}

/* SetDefaults_Subject and the roleRef's group. */
static void default_binding(cJSON *obj)
{
    cJSON *ref = cJSON_GetObjectItemCaseSensitive(obj, "roleRef"), *sub;

    if (cJSON_IsObject(ref) && !cJSON_GetStringValue(cJSON_GetObjectItem(ref, "apiGroup"))) {
        cJSON_DeleteItemFromObjectCaseSensitive(ref, "apiGroup");
        CHECK(cJSON_AddStringToObject(ref, "apiGroup", RBAC_GROUP));
    }
    cJSON_ArrayForEach(sub, cJSON_GetObjectItemCaseSensitive(obj, "subjects"))
    {
        const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(sub, "kind"));
        const char *g = cJSON_GetStringValue(cJSON_GetObjectItem(sub, "apiGroup"));
        if (!cJSON_IsObject(sub) || (g && *g) || !k)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(sub, "apiGroup");
        CHECK(cJSON_AddStringToObject(sub, "apiGroup",
                                      !strcmp(k, "ServiceAccount") ? "" : RBAC_GROUP));
    }
}

static void user_desc(const struct api_user *u, struct strbuf *out)
{
    strbuf_addf(out, "user \"%s\" (groups=[", u->name);
    for (const char *const *g = u->groups; g && *g; g++)
        strbuf_addf(out, "\"%s\" ", *g);
    strbuf_addstr(out, "\"system:authenticated\"])");
}

/* Whether u may use verb on resource (e.g. escalate on roles) for the named object. */
static bool may(struct api_authz *az, const struct api_user *u, const char *verb,
                const char *resource, const char *ns, const char *name)
{
    struct api_reqinfo ri = {.is_resource = true,
                             .verb = (char *)verb,
                             .path = (char *)"",
                             .api_prefix = (char *)"apis",
                             .group = (char *)RBAC_GROUP,
                             .version = (char *)"v1",
                             .namespace = (char *)ns,
                             .resource = (char *)resource,
                             .subresource = (char *)"",
                             .name = (char *)name};

    enum api_authz_decision d = api_authz_decide(az, u, &ri, NULL);

    return d == API_AUTHZ_DECISION_ALLOW || d == API_AUTHZ_DECISION_ALLOW_CHECK_OBJECTS;
}

int api_authz_admit(struct api_authz *az, const struct api_user *u, const struct api_resource *res,
                    const cJSON *old, cJSON *obj, struct field_errors *errs, struct strbuf *why)
{
    bool role = is_rbac(res, "roles") || is_rbac(res, "clusterroles");
    bool binding = is_rbac(res, "rolebindings") || is_rbac(res, "clusterrolebindings");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *rules = NULL;
    const cJSON *role_obj;
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "namespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "name"));
    struct rbac_snapshot *s = NULL;
    struct strbuf missing = STRBUF_INIT;
    cJSON *owner = NULL;
    int r = 0;

    if (!role && !binding)
        return 0;
    if (!ns || !res->namespaced)
        ns = "";
    if (!name)
        name = "";
    if (binding) {
        default_binding(obj);
        if (old && !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(old, "roleRef"),
                                  cJSON_GetObjectItemCaseSensitive(obj, "roleRef"), true)) {
            field_error_add(errs, FIELD_INVALID, "roleRef", NULL, "cannot change roleRef");
            return -EINVAL;
        }
    }
    /* The escalation check (escalation_check.go) when RBAC decides, for users it binds. */
    if (!az->rbac || !u || !u->name || is_master(u))
        return 0;
    s = snapshot(az);
    if (role) {
        if (may(az, u, "escalate", res->plural, ns, name))
            goto out;
        rules = cJSON_GetObjectItemCaseSensitive(obj, "rules");
    } else {
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(obj, "roleRef");
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(ref, "kind"));
        const char *rname = cJSON_GetStringValue(cJSON_GetObjectItem(ref, "name"));
        bool cluster = kind && !strcmp(kind, "ClusterRole");
        if (!kind || !rname)
            goto out; /* validation refuses it */
        /* bindingAuthorized: `bind` asked in the binding's namespace, whatever the role's. */
        if (may(az, u, "bind", cluster ? "clusterroles" : "roles", ns, rname))
            goto out;
        role_obj = rbac_role(s, ns, kind, rname);
        if (!role_obj) {
            /* kube resolves the role first: a missing one cannot be bound without `bind`. */
            strbuf_addf(why, "%s.%s \"%s\" not found", cluster ? "clusterroles" : "roles",
                        RBAC_GROUP, rname);
            r = -EPERM;
            goto out;
        }
        rules = cJSON_GetObjectItemCaseSensitive(role_obj, "rules");
    }
    CHECK(owner = cJSON_CreateArray());
    rbac_rules_for(s, u, ns, owner);
    if (rbac_rules_cover(owner, rules, &missing))
        goto out;
    user_desc(u, why);
    strbuf_addf(why, " is attempting to grant RBAC permissions not currently held:\n%s",
                missing.buf);
    r = -EPERM;
out:
    cJSON_Delete(owner);
    (void)rbac_snapshot_unref(s);
    strbuf_release(&missing);
    return r;
}

void api_authz_note_write(struct api_authz *az, const char *group, const char *plural)
{
    int r = 0;

    if (strcmp(group, RBAC_GROUP))
        return;
    if (!strcmp(plural, "clusterroles") && (r = rbac_aggregate(az->store)) < 0)
        log_warn("apiserver", "cluster role aggregation failed: %s, ignoring", err_str(r));
    atomic_fetch_add(&az->rbac_generation, 1);
}

cJSON *api_authz_user_info(const struct api_user *u)
{
    cJSON *ui = cJSON_CreateObject(), *groups, *extra = NULL;

    CHECK(ui);
    CHECK(cJSON_AddStringToObject(ui, "username", u->name));
    if (u->uid && *u->uid)
        CHECK(cJSON_AddStringToObject(ui, "uid", u->uid));
    CHECK(groups = cJSON_AddArrayToObject(ui, "groups"));
    for (const char *const *g = u->groups; g && *g; g++)
        CHECK(cJSON_AddItemToArray(groups, cJSON_CreateString(*g)));
    if (strcmp(u->name, "system:anonymous"))
        CHECK(cJSON_AddItemToArray(groups, cJSON_CreateString("system:authenticated")));
    for (const char *const *e = u->extra; e && e[0] && e[1]; e += 2) {
        cJSON *vals;
        if (!extra)
            CHECK(extra = cJSON_AddObjectToObject(ui, "extra"));
        vals = cJSON_GetObjectItemCaseSensitive(extra, e[0]);
        if (!vals)
            CHECK(vals = cJSON_AddArrayToObject(extra, e[0]));
        CHECK(cJSON_AddItemToArray(vals, cJSON_CreateString(e[1])));
    }
    return ui;
}
