/*
 * RBAC evaluation over a snapshot of the store's roles and bindings, aggregation and the
 * bootstrap policy (see rbac.h). The snapshot keeps the decoded objects in arrays sorted by
 * "<namespace>/<name>", the order the store lists them in, so roles are found by binary search.
 */
#include "apiserver/rbac.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "apiserver/auth.h"
#include "apiserver/reqinfo.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"

#define SA_PREFIX      "system:serviceaccount:"
#define CR_PREFIX      "/" RBAC_GROUP "/clusterroles/"
#define MAX_AGG_PASSES 8

struct entry {
    char *key; /* "<namespace>/<name>" ("/<name>" when cluster-scoped) */
    cJSON *obj;
};

struct table {
    struct entry *v;
    size_t n, alloc;
};

enum { T_ROLE, T_CLUSTER_ROLE, T_BINDING, T_CLUSTER_BINDING, T_COUNT };

struct rbac_snapshot {
    atomic_int refs;
    struct table t[T_COUNT];
};

static const char *const kinds[T_COUNT] = {"Role", "ClusterRole", "RoleBinding",
                                           "ClusterRoleBinding"};
static const char *const plurals[T_COUNT] = {"roles", "clusterroles", "rolebindings",
                                             "clusterrolebindings"};

static const char *str(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *meta_str(const cJSON *o, const char *k)
{
    return str(cJSON_GetObjectItemCaseSensitive(o, "metadata"), k);
}

struct rbac_snapshot *rbac_snapshot_new(void)
{
    struct rbac_snapshot *s = xcalloc(1, sizeof(*s));

    atomic_init(&s->refs, 1);
    return s;
}

void rbac_snapshot_add(struct rbac_snapshot *s, cJSON *obj)
{
    const char *kind = str(obj, "kind"), *name = meta_str(obj, "name"),
               *ns = meta_str(obj, "namespace");
    struct strbuf key = STRBUF_INIT;
    struct table *t = NULL;

    for (size_t i = 0; kind && i < T_COUNT; i++)
        if (!strcmp(kind, kinds[i]))
            t = &s->t[i];
    if (!t || !name) {
        cJSON_Delete(obj);
        return;
    }
    strbuf_addf(&key, "%s/%s", ns && (t == &s->t[T_ROLE] || t == &s->t[T_BINDING]) ? ns : "", name);
    if (t->n == t->alloc) {
        t->alloc = t->alloc ? t->alloc * 2 : 16;
        t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
    }
    t->v[t->n++] = (struct entry){strbuf_detach(&key, NULL), obj};
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->key, ((const struct entry *)b)->key);
}

void rbac_snapshot_seal(struct rbac_snapshot *s)
{
    for (size_t i = 0; i < T_COUNT; i++)
        if (s->t[i].n)
            qsort(s->t[i].v, s->t[i].n, sizeof(struct entry), entry_cmp);
}

struct load_ctx {
    struct rbac_snapshot *s;
    const char *kind;
};

static int load_one(const struct store_item *it, void *ud)
{
    struct load_ctx *l = ud;
    cJSON *o = NULL;

    if (json_parse(it->value, it->len, NULL, &o, NULL) < 0)
        return 0;
    /* Stored objects carry their kind; set it anyway so the table is certain. */
    cJSON_DeleteItemFromObjectCaseSensitive(o, "kind");
    CHECK(cJSON_AddStringToObject(o, "kind", l->kind));
    rbac_snapshot_add(l->s, o);
    return 0;
}

int rbac_snapshot_load(struct store *store, struct rbac_snapshot **ret)
{
    struct rbac_snapshot *s = rbac_snapshot_new();
    struct strbuf prefix = STRBUF_INIT;
    int r = 0;

    for (size_t i = 0; i < T_COUNT && r >= 0; i++) {
        struct load_ctx l = {s, kinds[i]};
        strbuf_reset(&prefix);
        strbuf_addf(&prefix, "/%s/%s/", RBAC_GROUP, plurals[i]);
        r = store_list(store, prefix.buf, NULL, 0, load_one, &l, NULL);
    }
    strbuf_release(&prefix);
    if (r < 0) {
        (void)rbac_snapshot_unref(s);
        return r;
    }
    rbac_snapshot_seal(s);
    *ret = s;
    return 0;
}

struct rbac_snapshot *rbac_snapshot_ref(struct rbac_snapshot *s)
{
    atomic_fetch_add(&s->refs, 1);
    return s;
}

struct rbac_snapshot *rbac_snapshot_unref(struct rbac_snapshot *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return NULL;
    for (size_t i = 0; i < T_COUNT; i++) {
        for (size_t j = 0; j < s->t[i].n; j++) {
            free(s->t[i].v[j].key);
            cJSON_Delete(s->t[i].v[j].obj);
        }
        free(s->t[i].v);
    }
    free(s);
    return NULL;
}

/* ---- matching (evaluation_helpers.go) ---- */

static bool has(const cJSON *list, const char *v)
{
    const cJSON *e;

    if (!v)
        return false;
    cJSON_ArrayForEach(e, list) if (cJSON_IsString(e) && !strcmp(e->valuestring, v)) return true;
    return false;
}

static bool matches(const cJSON *list, const char *v)
{
    return has(list, "*") || has(list, v);
}

static bool resource_matches(const cJSON *rule_resources, const char *resource, const char *sub)
{
    const cJSON *e;
    size_t rl = strlen(resource), sl = strlen(sub);

    cJSON_ArrayForEach(e, rule_resources)
    {
        const char *r = cJSON_GetStringValue(e);
        if (!r)
            continue;
        if (!strcmp(r, "*"))
            return true;
        if (!*sub && !strcmp(r, resource))
            return true;
        if (*sub && !strncmp(r, resource, rl) && r[rl] == '/' && !strcmp(r + rl + 1, sub))
            return true;
        /* "*\/status" matches the status subresource of every resource. */
        if (*sub && strlen(r) == sl + 2 && !strncmp(r, "*/", 2) && !strcmp(r + 2, sub))
            return true;
    }
    return false;
}

static bool url_matches(const cJSON *urls, const char *path)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, urls)
    {
        const char *u = cJSON_GetStringValue(e);
        size_t n = u ? strlen(u) : 0;
        if (!u)
            continue;
        if (!strcmp(u, "*") || !strcmp(u, path))
            return true;
        if (n && u[n - 1] == '*' && !strncmp(u, path, n - 1))
            return true;
    }
    return false;
}

bool rbac_rule_allows(const cJSON *rule, const struct api_reqinfo *ri)
{
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(rule, "resourceNames");

    if (!matches(cJSON_GetObjectItemCaseSensitive(rule, "verbs"), ri->verb))
        return false;
    if (!ri->is_resource)
        return url_matches(cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs"), ri->path);
    if (!matches(cJSON_GetObjectItemCaseSensitive(rule, "apiGroups"), ri->group) ||
        !resource_matches(cJSON_GetObjectItemCaseSensitive(rule, "resources"), ri->resource,
                          ri->subresource))
        return false;
    return cJSON_GetArraySize(names) == 0 || (*ri->name && has(names, ri->name));
}

bool rbac_user_in_group(const struct api_user *u, const char *group)
{
    if (!strcmp(group, "system:authenticated") && !u->groups_exact)
        return strcmp(u->name, "system:anonymous") != 0;
    for (const char *const *g = u->groups; g && *g; g++)
        if (!strcmp(*g, group))
            return true;
    return false;
}

/* appliesToUser: the subject of a binding in namespace ns (for service accounts without one). */
static bool subject_applies(const cJSON *sub, const struct api_user *u, const char *ns)
{
    const char *kind = str(sub, "kind"), *name = str(sub, "name"), *sns = str(sub, "namespace");
    size_t pl = strlen(SA_PREFIX);

    if (!kind || !name)
        return false;
    if (!strcmp(kind, "User"))
        return !strcmp(u->name, name);
    if (!strcmp(kind, "Group"))
        return rbac_user_in_group(u, name);
    if (strcmp(kind, "ServiceAccount"))
        return false;
    if (!sns || !*sns)
        sns = ns;
    if (!sns || strncmp(u->name, SA_PREFIX, pl))
        return false;
    {
        /* system:serviceaccount:<ns>:<name> */
        const char *rest = u->name + pl;
        size_t nl = strlen(sns);
        return !strncmp(rest, sns, nl) && rest[nl] == ':' && !strcmp(rest + nl + 1, name);
    }
}

static const struct entry *find(const struct table *t, const char *key)
{
    struct entry k = {(char *)key, NULL};

    if (!t->n)
        return NULL;
    return bsearch(&k, t->v, t->n, sizeof(struct entry), entry_cmp);
}

const cJSON *rbac_role(const struct rbac_snapshot *s, const char *ns, const char *kind,
                       const char *name)
{
    struct strbuf key = STRBUF_INIT;
    const struct entry *e;
    bool cluster = kind && !strcmp(kind, "ClusterRole");

    if (!kind || !name || (!cluster && strcmp(kind, "Role")))
        return NULL;
    strbuf_addf(&key, "%s/%s", cluster ? "" : ns, name);
    e = find(&s->t[cluster ? T_CLUSTER_ROLE : T_ROLE], key.buf);
    strbuf_release(&key);
    return e ? e->obj : NULL;
}

/* Calls fn for every rule u holds through the bindings that apply in ns (cluster bindings
 * always, role bindings of ns when ns is not empty) until it returns true. */
typedef bool (*rule_fn)(void *ud, const cJSON *rule, const struct entry *binding, bool cluster);

static bool visit(const struct rbac_snapshot *s, const struct api_user *u, const char *ns,
                  rule_fn fn, void *ud)
{
    for (int pass = 0; pass < 2; pass++) {
        const struct table *t = &s->t[pass == 0 ? T_CLUSTER_BINDING : T_BINDING];
        size_t nl = strlen(ns);

        if (pass == 1 && !*ns)
            break;
        for (size_t i = 0; i < t->n; i++) {
            const cJSON *b = t->v[i].obj, *subs = cJSON_GetObjectItemCaseSensitive(b, "subjects");
            const cJSON *ref = cJSON_GetObjectItemCaseSensitive(b, "roleRef"), *sub, *rule;
            bool applies = false;

            if (pass == 1 && (strncmp(t->v[i].key, ns, nl) || t->v[i].key[nl] != '/'))
                continue;
            cJSON_ArrayForEach(sub, subs) if ((applies = subject_applies(sub, u, ns))) break;
            if (!applies)
                continue;
            cJSON_ArrayForEach(rule,
                               cJSON_GetObjectItemCaseSensitive(
                                   rbac_role(s, ns, pass == 0 ? "ClusterRole" : str(ref, "kind"),
                                             str(ref, "name")),
                                   "rules"))
            {
                if (fn(ud, rule, &t->v[i], pass == 0))
                    return true;
            }
        }
    }
    return false;
}

struct authorize_ctx {
    const struct api_reqinfo *ri;
    const struct api_user *u;
    struct strbuf *reason;
};

static bool allow_fn(void *ud, const cJSON *rule, const struct entry *binding, bool cluster)
{
    struct authorize_ctx *a = ud;
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(binding->obj, "roleRef");
    const char *name = meta_str(binding->obj, "name"), *ns = meta_str(binding->obj, "namespace");

    if (!rbac_rule_allows(rule, a->ri))
        return false;
    if (a->reason) {
        /* rbac.go's describe: a RoleBinding as "<name>/<namespace>". */
        strbuf_addf(a->reason, "RBAC: allowed by %s \"%s%s%s\"",
                    cluster ? "ClusterRoleBinding" : "RoleBinding", name ? name : "",
                    cluster ? "" : "/", cluster ? "" : (ns ? ns : ""));
        strbuf_addf(a->reason, " of %s \"%s\" to User \"%s\"",
                    str(ref, "kind") ? str(ref, "kind") : "",
                    str(ref, "name") ? str(ref, "name") : "", a->u->name);
    }
    return true;
}

bool rbac_authorize(const struct rbac_snapshot *s, const struct api_user *u,
                    const struct api_reqinfo *ri, struct strbuf *reason)
{
    struct authorize_ctx a = {ri, u, reason};

    return s && visit(s, u, ri->is_resource ? ri->namespace : "", allow_fn, &a);
}

static bool collect_fn(void *ud, const cJSON *rule, const struct entry *binding, bool cluster)
{
    (void)binding;
    (void)cluster;
    CHECK(cJSON_AddItemToArray(ud, cJSON_Duplicate(rule, true)));
    return false;
}

void rbac_rules_for(const struct rbac_snapshot *s, const struct api_user *u, const char *ns,
                    cJSON *rules)
{
    if (s)
        (void)visit(s, u, ns ? ns : "", collect_fn, rules);
}

/* ---- coverage (policy_comparator.go): literal strings, "*" only covered by "*" ---- */

static bool covers_resource(const cJSON *owner, const char *res)
{
    const char *slash = res ? strchr(res, '/') : NULL;
    struct strbuf b = STRBUF_INIT;
    bool ok;

    if (!res)
        return false;
    if (has(owner, "*") || has(owner, res))
        return true;
    if (!slash)
        return false;
    strbuf_addf(&b, "*%s", slash);
    ok = has(owner, b.buf);
    strbuf_reset(&b);
    strbuf_add(&b, res, (size_t)(slash - res) + 1);
    strbuf_addch(&b, '*');
    ok = ok || has(owner, b.buf);
    strbuf_release(&b);
    return ok;
}

/* Whether one owner rule covers the single verb/group/resource/name (or verb/url) piece. */
static bool rule_covers(const cJSON *o, const char *verb, const char *group, const char *res,
                        const char *name, const char *url)
{
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "resourceNames");

    if (!has(cJSON_GetObjectItemCaseSensitive(o, "verbs"), "*") &&
        !has(cJSON_GetObjectItemCaseSensitive(o, "verbs"), verb))
        return false;
    if (url)
        return url_matches(cJSON_GetObjectItemCaseSensitive(o, "nonResourceURLs"), url);
    if (!has(cJSON_GetObjectItemCaseSensitive(o, "apiGroups"), "*") &&
        !has(cJSON_GetObjectItemCaseSensitive(o, "apiGroups"), group))
        return false;
    if (!covers_resource(cJSON_GetObjectItemCaseSensitive(o, "resources"), res))
        return false;
    return cJSON_GetArraySize(names) == 0 || (name && has(names, name));
}

static bool owner_covers(const cJSON *owner, const char *verb, const char *group, const char *res,
                         const char *name, const char *url)
{
    const cJSON *o;

    cJSON_ArrayForEach(o, owner) if (rule_covers(o, verb, group, res, name, url)) return true;
    return false;
}

bool rbac_rules_cover(const cJSON *owner, const cJSON *rules, struct strbuf *missing)
{
    const cJSON *r;
    bool ok = true;

    cJSON_ArrayForEach(r, rules)
    {
        const cJSON *verbs = cJSON_GetObjectItemCaseSensitive(r, "verbs"), *v, *g, *res, *n, *u;
        const cJSON *names = cJSON_GetObjectItemCaseSensitive(r, "resourceNames");

        cJSON_ArrayForEach(v, verbs)
        {
            if (!cJSON_IsString(v))
                continue;
            cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(r, "nonResourceURLs"))
            {
                if (!cJSON_IsString(u) ||
                    owner_covers(owner, v->valuestring, NULL, NULL, NULL, u->valuestring))
                    continue;
                ok = false;
                if (missing)
                    strbuf_addf(missing, "{NonResourceURLs:[\"%s\"], Verbs:[\"%s\"]}\n",
                                u->valuestring, v->valuestring);
            }
            cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(r, "apiGroups"))
            {
                cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(r, "resources"))
                {
                    bool any = false;
                    if (!cJSON_IsString(g) || !cJSON_IsString(res))
                        continue;
                    cJSON_ArrayForEach(n, names)
                    {
                        any = true;
                        if (!cJSON_IsString(n) ||
                            owner_covers(owner, v->valuestring, g->valuestring, res->valuestring,
                                         n->valuestring, NULL))
                            continue;
                        ok = false;
                        if (missing)
                            strbuf_addf(missing,
                                        "{APIGroups:[\"%s\"], Resources:[\"%s\"], "
                                        "ResourceNames:[\"%s\"], Verbs:[\"%s\"]}\n",
                                        g->valuestring, res->valuestring, n->valuestring,
                                        v->valuestring);
                    }
                    if (any || owner_covers(owner, v->valuestring, g->valuestring, res->valuestring,
                                            NULL, NULL))
                        continue;
                    ok = false;
                    if (missing)
                        strbuf_addf(missing,
                                    "{APIGroups:[\"%s\"], Resources:[\"%s\"], Verbs:[\"%s\"]}\n",
                                    g->valuestring, res->valuestring, v->valuestring);
                }
            }
        }
    }
    if (missing && missing->len && missing->buf[missing->len - 1] == '\n')
        strbuf_setlen(missing, missing->len - 1);
    return ok;
}

/* ---- aggregation (pkg/controller/clusterroleaggregation) ---- */

struct cr {
    char *key;
    cJSON *obj;
    uint64_t rv;
};

struct cr_list {
    struct cr *v;
    size_t n, alloc;
};

static int list_cr(const struct store_item *it, void *ud)
{
    struct cr_list *l = ud;
    cJSON *o = NULL;

    if (json_parse(it->value, it->len, NULL, &o, NULL) < 0)
        return 0;
    if (l->n == l->alloc) {
        l->alloc = l->alloc ? l->alloc * 2 : 32;
        l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
    }
    l->v[l->n++] = (struct cr){xstrdup(it->key), o, it->rv};
    return 0;
}

static void cr_list_release(struct cr_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        cJSON_Delete(l->v[i].obj);
    }
    free(l->v);
    *l = (struct cr_list){0};
}

static bool selected(const cJSON *selectors, const cJSON *role)
{
    const cJSON *sel;
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(role, "metadata"), "labels");

    cJSON_ArrayForEach(sel, selectors)
    {
        struct label_selector *ls = NULL;
        bool m;
        if (label_selector_from_json(sel, &ls, NULL) < 0)
            continue;
        /* An empty selector selects nothing here, as the controller skips it. */
        m = !label_selector_is_empty(ls) && label_selector_matches(ls, labels);
        label_selector_free(ls);
        if (m)
            return true;
    }
    return false;
}

static bool rule_listed(const cJSON *rules, const cJSON *rule)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, rules) if (json_value_equal(r, rule)) return true;
    return false;
}

/* One pass: 0.. objects written, or -errno. */
static int aggregate_pass(struct store *store)
{
    struct cr_list l = {0};
    struct strbuf val = STRBUF_INIT;
    int r, written = 0;

    r = store_list(store, CR_PREFIX, NULL, 0, list_cr, &l, NULL);
    for (size_t i = 0; r >= 0 && i < l.n; i++) {
        const cJSON *agg = cJSON_GetObjectItemCaseSensitive(l.v[i].obj, "aggregationRule");
        const cJSON *sels = cJSON_GetObjectItemCaseSensitive(agg, "clusterRoleSelectors");
        cJSON *rules, *old;

        if (!cJSON_IsArray(sels))
            continue;
        CHECK(rules = cJSON_CreateArray());
        for (size_t j = 0; j < l.n; j++) {
            const cJSON *rule;
            if (j == i || !selected(sels, l.v[j].obj))
                continue;
            cJSON_ArrayForEach(rule, cJSON_GetObjectItemCaseSensitive(l.v[j].obj, "rules"))
            {
                if (!rule_listed(rules, rule))
                    CHECK(cJSON_AddItemToArray(rules, cJSON_Duplicate(rule, true)));
            }
        }
        old = cJSON_GetObjectItemCaseSensitive(l.v[i].obj, "rules");
        if ((old ? json_value_equal(old, rules) : cJSON_GetArraySize(rules) == 0)) {
            cJSON_Delete(rules);
            continue;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(l.v[i].obj, "rules");
        if (cJSON_GetArraySize(rules))
            CHECK(cJSON_AddItemToObject(l.v[i].obj, "rules", rules));
        else
            cJSON_Delete(rules);
        strbuf_reset(&val);
        CHECK(json_print(l.v[i].obj, &val) == 0);
        r = store_update(store, l.v[i].key, val.buf, val.len, l.v[i].rv, NULL);
        if (r == -ESTALE || r == -ENOENT)
            r = 0; /* changed meanwhile: that write aggregates again */
        else if (r >= 0)
            written++;
    }
    cr_list_release(&l);
    strbuf_release(&val);
    return r < 0 ? r : written;
}

int rbac_aggregate(struct store *store)
{
    int total = 0;

    for (int pass = 0; pass < MAX_AGG_PASSES; pass++) {
        int r = aggregate_pass(store);
        if (r <= 0)
            return r < 0 ? r : total;
        total += r;
    }
    return total;
}

/* ---- bootstrap policy (bootstrappolicy/policy.go, cluster_roles and bindings) ---- */

#define RW   "\"create\",\"delete\",\"deletecollection\",\"patch\",\"update\""
#define READ "\"get\",\"list\",\"watch\""
#define AGG  "rbac.authorization.k8s.io/aggregate-to-"

/* ClusterRoles: name, labels (JSON object members or ""), body (rules / aggregationRule). */
static const struct {
    const char *name, *labels, *body;
} roles[] = {
    {"cluster-admin", "",
     "\"rules\":[{\"verbs\":[\"*\"],\"apiGroups\":[\"*\"],\"resources\":[\"*\"]},"
     "{\"verbs\":[\"*\"],\"nonResourceURLs\":[\"*\"]}]"},
    {"system:discovery", "",
     "\"rules\":[{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/api\",\"/api/*\",\"/apis\","
     "\"/apis/*\",\"/healthz\",\"/livez\",\"/openapi\",\"/openapi/*\",\"/readyz\",\"/version\","
     "\"/version/\"]}]"},
    {"system:basic-user", "",
     "\"rules\":[{\"verbs\":[\"create\"],\"apiGroups\":[\"authorization.k8s.io\"],\"resources\":"
     "[\"selfsubjectaccessreviews\",\"selfsubjectrulesreviews\"]},{\"verbs\":[\"create\"],"
     "\"apiGroups\":[\"authentication.k8s.io\"],\"resources\":[\"selfsubjectreviews\"]}]"},
    {"system:public-info-viewer", "",
     "\"rules\":[{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/healthz\",\"/livez\",\"/readyz\","
     "\"/version\",\"/version/\"]}]"},
    {"system:auth-delegator", "",
     "\"rules\":[{\"verbs\":[\"create\"],\"apiGroups\":[\"authentication.k8s.io\"],"
     "\"resources\":[\"tokenreviews\"]},{\"verbs\":[\"create\"],\"apiGroups\":"
     "[\"authorization.k8s.io\"],\"resources\":[\"subjectaccessreviews\"]}]"},
    {"admin", "",
     "\"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":{\"" AGG
     "admin\":\"true\"}}]}"},
    {"edit", "\"" AGG "admin\":\"true\"",
     "\"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":{\"" AGG
     "edit\":\"true\"}}]}"},
    {"view", "\"" AGG "edit\":\"true\"",
     "\"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":{\"" AGG
     "view\":\"true\"}}]}"},
    {"system:aggregate-to-admin", "\"" AGG "admin\":\"true\"",
     "\"rules\":[{\"verbs\":[\"create\"],\"apiGroups\":[\"authorization.k8s.io\"],\"resources\":"
     "[\"localsubjectaccessreviews\"]},{\"verbs\":[" RW "," READ "],\"apiGroups\":[\"" RBAC_GROUP
     "\"],\"resources\":[\"rolebindings\",\"roles\"]}]"},
    {"system:aggregate-to-edit", "\"" AGG "edit\":\"true\"",
     "\"rules\":[{\"verbs\":[" RW "],\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"pods/attach\","
     "\"pods/exec\",\"pods/portforward\",\"pods/proxy\"]},{\"verbs\":[\"create\"],\"apiGroups\":"
     "[\"\"],\"resources\":[\"pods/eviction\"]},{\"verbs\":[" RW "],\"apiGroups\":[\"\"],"
     "\"resources\":[\"configmaps\",\"events\",\"persistentvolumeclaims\","
     "\"replicationcontrollers\","
     "\"replicationcontrollers/scale\",\"secrets\",\"serviceaccounts\",\"services\","
     "\"services/proxy\"]},{\"verbs\":[\"create\"],\"apiGroups\":[\"\"],\"resources\":"
     "[\"serviceaccounts/token\"]},{\"verbs\":[\"impersonate\"],\"apiGroups\":[\"\"],"
     "\"resources\":[\"serviceaccounts\"]},{\"verbs\":[" READ "],\"apiGroups\":[\"\"],"
     "\"resources\":[\"secrets\"]},{\"verbs\":[" RW "],\"apiGroups\":[\"apps\"],\"resources\":"
     "[\"daemonsets\",\"deployments\",\"deployments/rollback\",\"deployments/scale\","
     "\"replicasets\",\"replicasets/scale\",\"statefulsets\",\"statefulsets/scale\"]},{\"verbs\":"
     "[" RW "],\"apiGroups\":[\"batch\"],\"resources\":[\"cronjobs\",\"jobs\"]},{\"verbs\":[" RW
     "],\"apiGroups\":[\"policy\"],\"resources\":[\"poddisruptionbudgets\"]},{\"verbs\":[" RW
     "],\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"]}]"},
    {"system:aggregate-to-view", "\"" AGG "view\":\"true\"",
     "\"rules\":[{\"verbs\":[" READ "],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\","
     "\"endpoints\",\"persistentvolumeclaims\",\"persistentvolumeclaims/status\",\"pods\","
     "\"replicationcontrollers\",\"replicationcontrollers/scale\",\"serviceaccounts\","
     "\"services\",\"services/status\"]},{\"verbs\":[" READ "],\"apiGroups\":[\"\"],"
     "\"resources\":[\"bindings\",\"events\",\"limitranges\",\"namespaces/status\",\"pods/log\","
     "\"pods/status\",\"replicationcontrollers/status\",\"resourcequotas\","
     "\"resourcequotas/status\"]},{\"verbs\":[" READ "],\"apiGroups\":[\"\"],\"resources\":"
     "[\"namespaces\"]},{\"verbs\":[" READ "],\"apiGroups\":[\"apps\"],\"resources\":"
     "[\"controllerrevisions\",\"daemonsets\",\"daemonsets/status\",\"deployments\","
     "\"deployments/scale\",\"deployments/status\",\"replicasets\",\"replicasets/scale\","
     "\"replicasets/status\",\"statefulsets\",\"statefulsets/scale\",\"statefulsets/status\"]},"
     "{\"verbs\":[" READ "],\"apiGroups\":[\"batch\"],\"resources\":[\"cronjobs\","
     "\"cronjobs/status\",\"jobs\",\"jobs/status\"]},{\"verbs\":[" READ "],\"apiGroups\":"
     "[\"policy\"],\"resources\":[\"poddisruptionbudgets\",\"poddisruptionbudgets/status\"]},"
     "{\"verbs\":[" READ "],\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"]}]"},
};

/* ClusterRoleBindings: name (= the ClusterRole's), subjects. */
static const struct {
    const char *name, *subjects;
} bindings[] = {
    {"cluster-admin",
     "[{\"kind\":\"Group\",\"apiGroup\":\"" RBAC_GROUP "\",\"name\":\"system:masters\"}]"},
    {"system:discovery",
     "[{\"kind\":\"Group\",\"apiGroup\":\"" RBAC_GROUP "\",\"name\":\"system:authenticated\"}]"},
    {"system:basic-user",
     "[{\"kind\":\"Group\",\"apiGroup\":\"" RBAC_GROUP "\",\"name\":\"system:authenticated\"}]"},
    {"system:public-info-viewer",
     "[{\"kind\":\"Group\",\"apiGroup\":\"" RBAC_GROUP
     "\",\"name\":\"system:authenticated\"},{\"kind\":\"Group\",\"apiGroup\":\"" RBAC_GROUP
     "\",\"name\":\"system:unauthenticated\"}]"},
};

/* Writes one bootstrap object (JSON text without metadata) unless its key exists. */
static int create_missing(struct store *store, const char *kind, const char *plural,
                          const char *name, const char *labels, const char *body, const char *now,
                          void (*new_uid)(char uid[37]))
{
    struct strbuf key = STRBUF_INIT, text = STRBUF_INIT, val = STRBUF_INIT, av = STRBUF_INIT;
    const struct api_kind *k;
    char uid[37];
    cJSON *o = NULL;
    int r;

    strbuf_addf(&av, "%s/v1", RBAC_GROUP);
    k = api_kind_find(av.buf, kind);
    CHECK(k);
    new_uid(uid);
    strbuf_addf(&key, "/%s/%s//%s", RBAC_GROUP, plural, name);
    strbuf_addf(&text,
                "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\","
                "\"uid\":\"%s\",\"creationTimestamp\":\"%s\",\"labels\":{%s%s"
                "\"kubernetes.io/bootstrapping\":\"rbac-defaults\"},\"annotations\":{"
                "\"rbac.authorization.kubernetes.io/autoupdate\":\"true\"}},%s}",
                av.buf, kind, name, uid, now, labels, *labels ? "," : "", body);
    CHECK(json_parse(text.buf, text.len, NULL, &o, NULL) == 0);
    CHECK(api_object_canonicalize(k, o) == 0);
    CHECK(json_print(o, &val) == 0);
    r = store_create(store, key.buf, val.buf, val.len, NULL);
    cJSON_Delete(o);
    strbuf_release(&key);
    strbuf_release(&text);
    strbuf_release(&val);
    strbuf_release(&av);
    return r == -EEXIST ? 0 : r;
}

int rbac_bootstrap(struct store *store, const char *now, void (*new_uid)(char uid[37]))
{
    struct strbuf body = STRBUF_INIT;
    int r = 0;

    for (size_t i = 0; i < ARRAY_SIZE(roles) && r >= 0; i++)
        r = create_missing(store, "ClusterRole", "clusterroles", roles[i].name, roles[i].labels,
                           roles[i].body, now, new_uid);
    for (size_t i = 0; i < ARRAY_SIZE(bindings) && r >= 0; i++) {
        strbuf_reset(&body);
        strbuf_addf(&body,
                    "\"subjects\":%s,\"roleRef\":{\"apiGroup\":\"%s\",\"kind\":\"ClusterRole\","
                    "\"name\":\"%s\"}",
                    bindings[i].subjects, RBAC_GROUP, bindings[i].name);
        r = create_missing(store, "ClusterRoleBinding", "clusterrolebindings", bindings[i].name, "",
                           body.buf, now, new_uid);
    }
    strbuf_release(&body);
    if (r >= 0)
        r = rbac_aggregate(store);
    return r < 0 ? r : 0;
}
