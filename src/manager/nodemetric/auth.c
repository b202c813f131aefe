/*
 * Authentication and authorization of the NodeMetric API: see auth.h. The token cache is a
 * key-sorted array of refcounted identities (binary search; a request holds a reference for
 * its lifetime, so eviction never pulls strings from under it).
 */
#include "manager/nodemetric/auth.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "apiserver/apiserver.h"
#include "apiserver/auth.h"
#include "apiserver/reqinfo.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "http/tls.h"
#include "kube/client.h"

#define DEFAULT_TTL_MS       10000
#define DEFAULT_CACHE_MAX    10000
#define DEFAULT_REVIEW_QPS   200
#define DEFAULT_REVIEW_BURST 400
#define MAX_GROUPS           64
#define MAX_TOKEN            (64u << 10) /* larger bearer tokens are refused, not reviewed */
#define NODE_EXTRA           "authentication.kubernetes.io/node-name"
#define NODE_USER_PREFIX     "system:node:"

/* An identity an external authenticator vouched for; the priv of a struct api_user. */
struct ident {
    atomic_uint refs;
    unsigned char key[32]; /* SHA-256 of the token (cache entries) */
    int64_t expires_ms;
    bool authenticated;
    char *name, *uid, *node; /* node: the node-name extra, or NULL */
    char **groups;           /* NULL-terminated */
};

struct nodemetric_auth {
    struct apiserver_auth hooks;
    struct http_ca_list *client_ca, *rh_ca; /* parsed once, used per request */
    char *admin_group;
    char **allowed; /* NULL-terminated, may be empty */
    struct kube_client *tr;
    long ttl_ms;
    size_t cache_max;
    atomic_ulong reviews;
    atomic_ulong throttled;     /* tokens refused unreviewed: the bucket was empty */
    atomic_ulong cached_denied; /* requests answered 401 from the cache */

    pthread_mutex_t lock; /* the cache and the bucket */
    struct ident **cache; /* sorted by key */
    size_t n, alloc;
    double qps, burst; /* the TokenReview bucket: refills qps per second up to burst */
    double tokens;
    int64_t refilled_ms;
};

static int64_t now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct ident *ident_new(const char *name, const char *uid)
{
    struct ident *id = xcalloc(1, sizeof(*id));

    atomic_init(&id->refs, 1);
    id->name = xstrdup(name ? name : "");
    id->uid = xstrdup(uid ? uid : "");
    id->groups = xcalloc(MAX_GROUPS + 1, sizeof(char *));
    return id;
}

static void ident_add_group(struct ident *id, const char *g)
{
    size_t i = 0;

    while (id->groups[i] && i < MAX_GROUPS)
        i++;
    if (i < MAX_GROUPS && g && *g)
        id->groups[i] = xstrdup(g);
}

static struct ident *ident_ref(struct ident *id)
{
    atomic_fetch_add(&id->refs, 1);
    return id;
}

static void ident_unref(struct ident *id)
{
    if (!id || atomic_fetch_sub(&id->refs, 1) != 1)
        return;
    for (size_t i = 0; id->groups[i]; i++)
        free(id->groups[i]);
    free(id->groups);
    free(id->name);
    free(id->uid);
    free(id->node);
    free(id);
}

static void fill_user(struct ident *id, struct api_user *ret)
{
    *ret = (struct api_user){
        .name = id->name, .uid = id->uid, .groups = (const char *const *)id->groups, .priv = id};
}

/* ---- the token cache ---- */

static size_t cache_find(const struct nodemetric_auth *a, const unsigned char key[32], bool *found)
{
    size_t lo = 0, hi = a->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = memcmp(a->cache[mid]->key, key, 32);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static void cache_remove_at(struct nodemetric_auth *a, size_t i)
{
    ident_unref(a->cache[i]);
    memmove(&a->cache[i], &a->cache[i + 1], (a->n - i - 1) * sizeof(struct ident *));
    a->n--;
}

/* Makes room for one more entry: expired entries go first, then the one expiring soonest. */
static void cache_evict(struct nodemetric_auth *a, int64_t now)
{
    size_t soonest = 0;

    for (size_t i = a->n; i-- > 0;)
        if (a->cache[i]->expires_ms <= now)
            cache_remove_at(a, i);
    if (a->n < a->cache_max)
        return;
    for (size_t i = 1; i < a->n; i++)
        if (a->cache[i]->expires_ms < a->cache[soonest]->expires_ms)
            soonest = i;
    cache_remove_at(a, soonest);
}

/* A cached answer for key (a reference), or NULL. */
static struct ident *cache_get(struct nodemetric_auth *a, const unsigned char key[32])
{
    struct ident *id = NULL;
    bool found;
    size_t i;

    (void)pthread_mutex_lock(&a->lock);
    i = cache_find(a, key, &found);
    if (found && a->cache[i]->expires_ms > now_ms())
        id = ident_ref(a->cache[i]);
    else if (found)
        cache_remove_at(a, i);
    (void)pthread_mutex_unlock(&a->lock);
    return id;
}

static void cache_put(struct nodemetric_auth *a, struct ident *id)
{
    int64_t now = now_ms();
    bool found;
    size_t i;

    id->expires_ms = now + a->ttl_ms;
    (void)pthread_mutex_lock(&a->lock);
    i = cache_find(a, id->key, &found);
    if (found) {
        ident_unref(a->cache[i]);
        a->cache[i] = ident_ref(id);
    } else {
        if (a->n >= a->cache_max) {
            cache_evict(a, now);
            i = cache_find(a, id->key, &found);
        }
        if (a->n == a->alloc) {
            a->alloc = a->alloc ? a->alloc * 2 : 64;
            a->cache = xrealloc(a->cache, a->alloc * sizeof(struct ident *));
        }
        memmove(&a->cache[i + 1], &a->cache[i], (a->n - i) * sizeof(struct ident *));
        a->cache[i] = ident_ref(id);
        a->n++;
    }
    (void)pthread_mutex_unlock(&a->lock);
}

/* Takes one TokenReview from the bucket; false when it is empty. */
static bool bucket_take(struct nodemetric_auth *a)
{
    int64_t now = now_ms();
    bool ok;

    (void)pthread_mutex_lock(&a->lock);
    a->tokens += (double)(now - a->refilled_ms) * a->qps / 1000.0;
    if (a->tokens > a->burst)
        a->tokens = a->burst;
    a->refilled_ms = now;
    ok = a->tokens >= 1.0;
    if (ok)
        a->tokens -= 1.0;
    (void)pthread_mutex_unlock(&a->lock);
    return ok;
}

/* ---- authenticators ---- */

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The identity in a TokenReview answer's status, or NULL when it says not authenticated. */
static struct ident *ident_from_review(const cJSON *review)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(review, "status");
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(status, "user");
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(user, "groups");
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(user, "extra");
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(extra, NODE_EXTRA), *g;
    struct ident *id;

    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "authenticated")) ||
        !str_of(user, "username") || !*str_of(user, "username"))
        return NULL;
    id = ident_new(str_of(user, "username"), str_of(user, "uid"));
    cJSON_ArrayForEach(g, groups)
    {
        if (cJSON_IsString(g))
            ident_add_group(id, g->valuestring);
    }
    if (cJSON_IsArray(node) && cJSON_IsString(cJSON_GetArrayItem(node, 0)) &&
        *cJSON_GetArrayItem(node, 0)->valuestring)
        id->node = xstrdup(cJSON_GetArrayItem(node, 0)->valuestring);
    id->authenticated = true;
    return id;
}

/* TokenReview (reference 6.6): 0 with a reference in *ret, -EACCES when the token is not
 * valid or cannot be checked now. */
static int review_token(struct nodemetric_auth *a, const char *token, struct ident **ret)
{
    unsigned char key[32];
    struct strbuf body = STRBUF_INIT;
    cJSON *answer = NULL;
    struct ident *id;
    int r;

    tls_sha256(token, strlen(token), key);
    if ((id = cache_get(a, key))) {
        if (!id->authenticated)
            atomic_fetch_add(&a->cached_denied, 1);
        goto out;
    }
    /* An unknown token over the rate is refused unreviewed, and not cached: a valid one gets
     * in on a later try, when the bucket has refilled. */
    if (!bucket_take(a)) {
        atomic_fetch_add(&a->throttled, 1);
        return -EACCES;
    }
    strbuf_addstr(&body, "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\","
                         "\"spec\":{\"token\":");
    strbuf_add_json_str(&body, token);
    strbuf_addstr(&body, "}}");
    atomic_fetch_add(&a->reviews, 1);
    r = kube_request(a->tr, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body.buf,
                     "application/json", &answer, NULL);
    strbuf_release(&body);
    if (r < 0) /* not cached: the API server may answer next time */
        return -EACCES;
    id = ident_from_review(answer);
    cJSON_Delete(answer);
    if (!id)
        id = ident_new("", "");
    memcpy(id->key, key, sizeof(key));
    cache_put(a, id);
out:
    if (!id->authenticated) {
        ident_unref(id);
        return -EACCES;
    }
    *ret = id;
    return 0;
}

static bool cn_allowed(const struct nodemetric_auth *a, const char *cn)
{
    if (!a->allowed[0])
        return true;
    for (char **n = a->allowed; *n; n++)
        if (!strcmp(*n, cn))
            return true;
    return false;
}

/* The front-proxy identity from the X-Remote-* headers (6.4 step 1). */
static struct ident *ident_from_headers(const struct http_request *req, const char *user)
{
    const char *groups[MAX_GROUPS];
    size_t n = http_request_header_values(req, "X-Remote-Group", groups, MAX_GROUPS);
    struct ident *id = ident_new(user, "");
    const char *node =
        http_request_header(req, "X-Remote-Extra-Authentication.kubernetes.io%2fnode-name");

    for (size_t i = 0; i < n && i < MAX_GROUPS; i++)
        ident_add_group(id, groups[i]);
    if (node && *node)
        id->node = xstrdup(node);
    return id;
}

static int authenticate(void *ud, const struct http_request *req, struct api_user *ret)
{
    struct nodemetric_auth *a = ud;
    const char *user, *auth;
    const char *const *groups;
    struct ident *id;
    int r = http_request_client_cert(req, &user, &groups);

    if (r == 0 && a->rh_ca && http_request_client_cert_signed_by(req, a->rh_ca) == 0) {
        const char *remote = http_request_header(req, "X-Remote-User");
        if (remote && *remote) {
            if (!cn_allowed(a, user))
                return -EACCES;
            fill_user(ident_from_headers(req, remote), ret);
            return 0;
        }
    }
    /* With two CAs in the server's trust list, a certificate must come from the cluster CA. */
    if (r == 0 && a->client_ca &&
        (!a->rh_ca || http_request_client_cert_signed_by(req, a->client_ca) == 0)) {
        *ret = (struct api_user){.name = user, .uid = "", .groups = groups};
        return 0;
    }
    if (r == -EACCES)
        return -EACCES;
    auth = http_request_header(req, "Authorization");
    if (!auth || strncasecmp(auth, "Bearer ", 7))
        return r == 0 ? -EACCES : -ENOENT;
    auth += 7;
    while (*auth == ' ')
        auth++;
    if (!a->tr || !*auth || strlen(auth) > MAX_TOKEN)
        return -EACCES;
    if ((r = review_token(a, auth, &id)) < 0)
        return r;
    fill_user(id, ret);
    return 0;
}

int nodemetric_auth_token(struct nodemetric_auth *a, const char *token, struct api_user *ret)
{
    struct ident *id;
    int r;

    if (!a->tr)
        return -ENOENT;
    if (strlen(token) > MAX_TOKEN)
        return -E2BIG;
    if (!*token)
        return -EACCES;
    if ((r = review_token(a, token, &id)) < 0)
        return r;
    fill_user(id, ret);
    return 0;
}

static void release(void *ud, struct api_user *u)
{
    (void)ud;
    ident_unref(u->priv);
    u->priv = NULL;
}

static bool is_read(const char *verb)
{
    return !strcmp(verb, "get") || !strcmp(verb, "list") || !strcmp(verb, "watch");
}

static const char *node_of(const struct api_user *u)
{
    const struct ident *id = u->priv;
    size_t n = strlen(NODE_USER_PREFIX);

    if (id && id->node)
        return id->node;
    if (u->name && !strncmp(u->name, NODE_USER_PREFIX, n) && u->name[n])
        return u->name + n;
    return NULL;
}

static int authorize(void *ud, const struct api_user *u, const struct api_reqinfo *ri,
                     struct strbuf *why)
{
    const struct nodemetric_auth *a = ud;
    const char *node = node_of(u);

    if (is_read(ri->verb))
        return 0;
    if (node) {
        if (*ri->name && !strcmp(ri->name, node))
            return 0;
        strbuf_addf(why, "node \"%s\" may only write its own NodeMetric", node);
        return -EACCES;
    }
    for (const char *const *g = u->groups; g && *g; g++)
        if (!strcmp(*g, a->admin_group))
            return 0;
    strbuf_addf(why, "only node identities and members of \"%s\" may write NodeMetrics",
                a->admin_group);
    return -EACCES;
}

/* ---- lifecycle ---- */

int nodemetric_auth_new(const struct nodemetric_auth_opts *o, struct nodemetric_auth **ret)
{
    struct nodemetric_auth *a = xcalloc(1, sizeof(*a));
    size_t n = 0;
    int r = 0;

    CHECK(pthread_mutex_init(&a->lock, NULL) == 0);
    if (o->client_ca_pem)
        r = http_ca_list_new(o->client_ca_pem, &a->client_ca);
    if (r == 0 && o->requestheader_ca_pem)
        r = http_ca_list_new(o->requestheader_ca_pem, &a->rh_ca);
    a->admin_group = xstrdup(o->admin_group ? o->admin_group : "system:masters");
    while (o->allowed_names && o->allowed_names[n])
        n++;
    a->allowed = xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        a->allowed[i] = xstrdup(o->allowed_names[i]);
    if (r < 0) {
        nodemetric_auth_free(a);
        return r;
    }
    a->tr = o->tokenreview;
    a->ttl_ms = o->cache_ttl_ms > 0 ? o->cache_ttl_ms : DEFAULT_TTL_MS;
    a->cache_max = o->cache_max ? o->cache_max : DEFAULT_CACHE_MAX;
    a->qps = o->review_qps > 0 ? o->review_qps : DEFAULT_REVIEW_QPS;
    a->burst = o->review_burst ? (double)o->review_burst : DEFAULT_REVIEW_BURST;
    if (a->burst < 1.0)
        a->burst = 1.0;
    a->tokens = a->burst;
    a->refilled_ms = now_ms();
    atomic_init(&a->reviews, 0);
    atomic_init(&a->throttled, 0);
    atomic_init(&a->cached_denied, 0);
    a->hooks = (struct apiserver_auth){authenticate, release, authorize, a};
    *ret = a;
    return 0;
}

void nodemetric_auth_free(struct nodemetric_auth *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        ident_unref(a->cache[i]);
    free(a->cache);
    for (char **n = a->allowed; *n; n++)
        free(*n);
    free(a->allowed);
    http_ca_list_free(a->client_ca);
    http_ca_list_free(a->rh_ca);
    free(a->admin_group);
    (void)pthread_mutex_destroy(&a->lock);
    free(a);
}

const struct apiserver_auth *nodemetric_auth_hooks(struct nodemetric_auth *a)
{
    return &a->hooks;
}

unsigned long nodemetric_auth_reviews(struct nodemetric_auth *a)
{
    return atomic_load(&a->reviews);
}

void nodemetric_auth_stats(struct nodemetric_auth *a, struct nodemetric_auth_stats *ret)
{
    *ret = (struct nodemetric_auth_stats){.reviews = atomic_load(&a->reviews),
                                          .throttled = atomic_load(&a->throttled),
                                          .cached_denied = atomic_load(&a->cached_denied)};
}
