/*
 * Kind rules that need other objects or the stored state (see admit.h).
 */
#include "apiserver/admit.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/registry.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"

#define SERVICE_PREFIX "/core/services/"
#define SERVICE_NET    0x0a600000u /* 10.96.0.0/12 */
#define SERVICE_SIZE   (1u << 20)
#define SERVICE_CIDR   "10.96.0.0/12"
#define NODEPORT_MIN   30000
#define NODEPORT_MAX   32767
#define PC_PREFIX      "/scheduling.k8s.io/priorityclasses//"
#define MAX_USER_PRIO  1000000000
#define IMMUTABLE_WHEN "field is immutable when `immutable` is set"
#define MAX_SCANNED    100000 /* objects a uniqueness or allocation scan reads */

static const struct {
    const char *name;
    int value;
} system_classes[] = {
    {"system-cluster-critical", 2000000000},
    {"system-node-critical", 2000001000},
};

static bool res_is(const struct api_resource *res, const char *group, const char *plural)
{
    return !strcmp(res->group, group) && !strcmp(res->plural, plural);
}

static bool is_quota(const struct api_resource *res)
{
    return res_is(res, "scheduling.sigs.k8s.io", "elasticquotas");
}

bool admit_serialized(const struct api_resource *res)
{
    return res_is(res, "", "services") || res_is(res, "scheduling.k8s.io", "priorityclasses") ||
           is_quota(res);
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static void put(cJSON *o, const char *k, cJSON *v)
{
    CHECK(v);
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddItemToObject(o, k, v));
}

static void quoted(struct strbuf *sb, const char *s)
{
    strbuf_reset(sb);
    strbuf_add_json_str(sb, s);
}

/* Decodes every object under prefix and calls fn on it (at most MAX_SCANNED). */
struct scan {
    void (*fn)(const cJSON *obj, void *ud);
    void *ud;
};

static int scan_one(const struct store_item *it, void *ud)
{
    struct scan *sc = ud;
    cJSON *o = NULL;

    if (json_parse(it->value, it->len, NULL, &o, NULL) == 0)
        sc->fn(o, sc->ud);
    cJSON_Delete(o);
    return 0;
}

static int scan(struct store *store, const char *prefix, void (*fn)(const cJSON *, void *),
                void *ud)
{
    struct scan sc = {fn, ud};
    return store_list(store, prefix, NULL, MAX_SCANNED, scan_one, &sc, NULL);
}

/* ---- Secret, ConfigMap ---- */

/* stringData is write-only: its entries replace data's, base64-encoded. Left in place when
 * malformed, so that validation reports it. */
static void fold_string_data(cJSON *secret)
{
    const cJSON *sd = get(secret, "stringData"), *c;
    cJSON *data;
    struct strbuf b = STRBUF_INIT;

    if (!cJSON_IsObject(sd))
        return;
    cJSON_ArrayForEach(c, sd)
    {
        if (!cJSON_IsString(c))
            return;
    }
    data = cJSON_GetObjectItemCaseSensitive(secret, "data");
    if (!cJSON_IsObject(data)) {
        put(secret, "data", cJSON_CreateObject());
        data = cJSON_GetObjectItemCaseSensitive(secret, "data");
    }
    cJSON_ArrayForEach(c, sd)
    {
        strbuf_reset(&b);
        strbuf_add_base64(&b, c->valuestring, strlen(c->valuestring));
        put(data, c->string, cJSON_CreateString(b.buf));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(secret, "stringData");
    strbuf_release(&b);
}

/* An empty map and an absent one are the same data. */
static bool same_data(const cJSON *a, const cJSON *b)
{
    if (cJSON_GetArraySize(a) == 0 && cJSON_GetArraySize(b) == 0)
        return true;
    return a && b && json_value_equal(a, b);
}

static void check_immutable(const cJSON *old, const cJSON *obj, const char *const *fields,
                            struct field_errors *errs)
{
    if (!cJSON_IsTrue(get(old, "immutable")))
        return;
    if (!cJSON_IsTrue(get(obj, "immutable")))
        field_error_add(errs, FIELD_FORBIDDEN, "immutable", NULL, IMMUTABLE_WHEN);
    for (; *fields; fields++)
        if (!same_data(get(old, *fields), get(obj, *fields)))
            field_error_add(errs, FIELD_FORBIDDEN, *fields, NULL, IMMUTABLE_WHEN);
}

static void secret_update(const cJSON *old, cJSON *obj, struct field_errors *errs)
{
    const char *ot = get_str(old, "type"), *nt = get_str(obj, "type");
    struct strbuf v = STRBUF_INIT;

    fold_string_data(obj);
    if (!nt || !*nt)
        nt = "Opaque";
    if (strcmp(ot ? ot : "Opaque", nt)) {
        quoted(&v, nt);
        field_error_add(errs, FIELD_INVALID, "type", v.buf, "field is immutable");
    }
    check_immutable(old, obj, (const char *const[]){"data", NULL}, errs);
    strbuf_release(&v);
}

/* ---- Service ---- */

struct used {
    uint32_t *ips;
    size_t nips;
    int *ports;
    size_t nports;
    const char *skip_ns, *skip_name; /* the service being updated */
};

static void note_used(const cJSON *svc, void *ud)
{
    struct used *u = ud;
    const cJSON *meta = get(svc, "metadata"), *spec = get(svc, "spec"), *p;
    const char *ip = get_str(spec, "clusterIP");
    struct in_addr a;

    if (u->skip_name && !strcmp(str_or(get_str(meta, "name"), ""), u->skip_name) &&
        !strcmp(str_or(get_str(meta, "namespace"), ""), u->skip_ns))
        return;
    if (ip && inet_pton(AF_INET, ip, &a) == 1) {
        u->ips = xrealloc(u->ips, (u->nips + 1) * sizeof(*u->ips));
        u->ips[u->nips++] = ntohl(a.s_addr);
    }
    cJSON_ArrayForEach(p, get(spec, "ports"))
    {
        const cJSON *np = get(p, "nodePort");
        if (cJSON_IsNumber(np) && np->valuedouble > 0) {
            u->ports = xrealloc(u->ports, (u->nports + 1) * sizeof(*u->ports));
            u->ports[u->nports++] = np->valueint;
        }
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

static bool ip_used(const struct used *u, uint32_t ip)
{
    return u->nips && bsearch(&ip, u->ips, u->nips, sizeof(*u->ips), cmp_u32) != NULL;
}

static bool port_used(const struct used *u, int port)
{
    return u->nports && bsearch(&port, u->ports, u->nports, sizeof(*u->ports), cmp_int) != NULL;
}

/* The lowest free address of the range (network and broadcast addresses excluded). */
static int allocate_ip(struct used *u, uint32_t *ret)
{
    uint32_t cand = SERVICE_NET + 1;

    for (size_t i = 0; i < u->nips && u->ips[i] <= cand; i++)
        if (u->ips[i] == cand)
            cand++;
    if (cand >= SERVICE_NET + SERVICE_SIZE - 1)
        return -ENOSPC;
    *ret = cand;
    /* Keep the set sorted for the next allocation in this request. */
    u->ips = xrealloc(u->ips, (u->nips + 1) * sizeof(*u->ips));
    u->ips[u->nips++] = cand;
    qsort(u->ips, u->nips, sizeof(*u->ips), cmp_u32);
    return 0;
}

static int allocate_port(struct used *u, int *ret)
{
    int cand = NODEPORT_MIN;

    for (size_t i = 0; i < u->nports && u->ports[i] <= cand; i++)
        if (u->ports[i] == cand)
            cand++;
    if (cand > NODEPORT_MAX)
        return -ENOSPC;
    *ret = cand;
    u->ports = xrealloc(u->ports, (u->nports + 1) * sizeof(*u->ports));
    u->ports[u->nports++] = cand;
    qsort(u->ports, u->nports, sizeof(*u->ports), cmp_int);
    return 0;
}

/* Copies what was allocated before into an update that leaves it out (kube-apiserver's
 * patchAllocatedValues), so `kubectl apply` of a manifest without clusterIP keeps it. */
static void carry_allocated(const cJSON *old_spec, cJSON *spec)
{
    static const char *const keys[] = {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"};
    const cJSON *op;
    cJSON *np;

    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const cJSON *v = get(spec, keys[i]);
        if ((!v || (cJSON_IsString(v) && !*v->valuestring)) && get(old_spec, keys[i]))
            put(spec, keys[i], cJSON_Duplicate(get(old_spec, keys[i]), true));
    }
    cJSON_ArrayForEach(np, get(spec, "ports"))
    {
        if (!cJSON_IsObject(np) || get(np, "nodePort"))
            continue;
        cJSON_ArrayForEach(op, get(old_spec, "ports"))
        {
            if (json_value_equal(get(op, "port"), get(np, "port")) && get(op, "nodePort")) {
                put(np, "nodePort", cJSON_Duplicate(get(op, "nodePort"), true));
                break;
            }
        }
    }
}

static int service_fill(struct store *store, const cJSON *old, cJSON *svc,
                        struct field_errors *errs, struct strbuf *why)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(svc, "spec"), *p;
    const cJSON *old_spec = get(old, "spec");
    const char *type, *ip, *old_ip = get_str(old_spec, "clusterIP");
    struct used u = {0};
    struct strbuf v = STRBUF_INIT;
    bool node_ports;
    int r = 0, i = 0;

    if (!cJSON_IsObject(spec))
        return 0; /* validation reports it */
    if (old) {
        u.skip_ns = str_or(get_str(get(old, "metadata"), "namespace"), "");
        u.skip_name = str_or(get_str(get(old, "metadata"), "name"), "");
        carry_allocated(old_spec, spec);
    }
    type = str_or(get_str(spec, "type"), "ClusterIP");
    if (!strcmp(type, "ExternalName"))
        return 0;
    if ((r = scan(store, SERVICE_PREFIX, note_used, &u)) < 0)
        goto out;
    if (u.nips)
        qsort(u.ips, u.nips, sizeof(*u.ips), cmp_u32);
    if (u.nports)
        qsort(u.ports, u.nports, sizeof(*u.ports), cmp_int);

    ip = get_str(spec, "clusterIP");
    if (old_ip && *old_ip && (!ip || strcmp(ip, old_ip))) {
        quoted(&v, ip ? ip : "");
        field_error_add(errs, FIELD_INVALID, "spec.clusterIPs[0]", v.buf,
                        "may not change once set");
    } else if (!ip || !*ip) {
        uint32_t a;
        struct in_addr in;
        char buf[INET_ADDRSTRLEN];
        if ((r = allocate_ip(&u, &a)) < 0) {
            strbuf_addstr(why, "failed to allocate a serviceIP: range is full");
            goto out;
        }
        in.s_addr = htonl(a);
        (void)inet_ntop(AF_INET, &in, buf, sizeof(buf));
        put(spec, "clusterIP", cJSON_CreateString(buf));
    } else if (strcmp(ip, "None") && !old_ip) {
        struct in_addr in;
        uint32_t a;
        quoted(&v, ip);
        if (inet_pton(AF_INET, ip, &in) != 1) {
            field_error_add(errs, FIELD_INVALID, "spec.clusterIPs[0]", v.buf,
                            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
        } else if ((a = ntohl(in.s_addr)) - SERVICE_NET >= SERVICE_SIZE) {
            field_error_add(errs, FIELD_INVALID, "spec.clusterIPs[0]", v.buf,
                            "failed to allocate IP %s: the provided IP (%s) is not in the valid "
                            "range. The range of valid IPs is " SERVICE_CIDR,
                            ip, ip);
        } else if (ip_used(&u, a)) {
            field_error_add(errs, FIELD_INVALID, "spec.clusterIPs[0]", v.buf,
                            "failed to allocate IP %s: provided IP is already allocated", ip);
        }
    }
    ip = get_str(spec, "clusterIP");
    if (ip && !get(spec, "clusterIPs")) {
        cJSON *a = cJSON_CreateArray();
        CHECK(a && cJSON_AddItemToArray(a, cJSON_CreateString(ip)));
        put(spec, "clusterIPs", a);
    }
    if (!get(spec, "ipFamilies") && ip && strcmp(ip, "None")) {
        cJSON *a = cJSON_CreateArray();
        CHECK(a && cJSON_AddItemToArray(a, cJSON_CreateString("IPv4")));
        put(spec, "ipFamilies", a);
    }
    if (!get(spec, "ipFamilyPolicy"))
        put(spec, "ipFamilyPolicy", cJSON_CreateString("SingleStack"));
    if (!get(spec, "internalTrafficPolicy"))
        put(spec, "internalTrafficPolicy", cJSON_CreateString("Cluster"));
    node_ports = !strcmp(type, "NodePort") || !strcmp(type, "LoadBalancer");
    if (node_ports && !get(spec, "externalTrafficPolicy"))
        put(spec, "externalTrafficPolicy", cJSON_CreateString("Cluster"));
    /* First the node ports the request names (checked, then reserved, so that allocation
     * below cannot hand one out again), then the missing ones. */
    i = 0;
    cJSON_ArrayForEach(p, get(spec, "ports"))
    {
        const cJSON *port = get(p, "port"), *np = get(p, "nodePort"), *q, *was = NULL, *op;
        char field[64];
        bool dup = false;
        (void)snprintf(field, sizeof(field), "spec.ports[%d].nodePort", i++);
        if (!node_ports || !cJSON_IsNumber(np) || np->valueint == 0)
            continue;
        for (q = get(spec, "ports")->child; q != p; q = q->next)
            dup |= json_value_equal(get(q, "nodePort"), np);
        cJSON_ArrayForEach(op, get(old_spec, "ports"))
        {
            if (json_value_equal(get(op, "port"), port))
                was = get(op, "nodePort");
        }
        if (dup)
            field_error_add(errs, FIELD_DUPLICATE, field, NULL, "%d", np->valueint);
        else if (was && json_value_equal(was, np))
            ; /* its own port from before */
        else if (np->valueint < NODEPORT_MIN || np->valueint > NODEPORT_MAX)
            field_error_add(errs, FIELD_INVALID, field, NULL,
                            "%d: provided port is not in the valid range. The range of "
                            "valid ports is %d-%d",
                            np->valueint, NODEPORT_MIN, NODEPORT_MAX);
        else if (port_used(&u, np->valueint))
            field_error_add(errs, FIELD_INVALID, field, NULL,
                            "%d: provided port is already allocated", np->valueint);
    }
    cJSON_ArrayForEach(p, get(spec, "ports"))
    {
        const cJSON *np = get(p, "nodePort");
        if (node_ports && cJSON_IsNumber(np) && np->valueint > 0) {
            u.ports = xrealloc(u.ports, (u.nports + 1) * sizeof(*u.ports));
            u.ports[u.nports++] = np->valueint;
        }
    }
    if (u.nports)
        qsort(u.ports, u.nports, sizeof(*u.ports), cmp_int);
    cJSON_ArrayForEach(p, get(spec, "ports"))
    {
        const cJSON *port = get(p, "port"), *np = get(p, "nodePort");
        int n;
        if (!cJSON_IsObject(p) || !cJSON_IsNumber(port))
            continue;
        if (!get(p, "targetPort"))
            put(p, "targetPort", cJSON_CreateNumber(port->valuedouble));
        if (!node_ports || (cJSON_IsNumber(np) && np->valueint != 0))
            continue;
        if ((r = allocate_port(&u, &n)) < 0) {
            strbuf_addstr(why, "failed to allocate a nodePort: range is full");
            goto out;
        }
        put(p, "nodePort", cJSON_CreateNumber(n));
    }
    if (field_errors_count(errs))
        r = -EINVAL;
out:
    free(u.ips);
    free(u.ports);
    strbuf_release(&v);
    return r;
}

/* ---- PriorityClass ---- */

struct other_default {
    const char *self;
    char *name; /* the first other class with globalDefault */
};

static void note_default(const cJSON *pc, void *ud)
{
    struct other_default *d = ud;
    const char *name = get_str(get(pc, "metadata"), "name");

    if (!d->name && name && strcmp(name, d->self) && cJSON_IsTrue(get(pc, "globalDefault")))
        d->name = xstrdup(name);
}

static int priority_class_check(struct store *store, const cJSON *old, const cJSON *pc,
                                struct field_errors *errs, struct strbuf *why)
{
    const char *name = str_or(get_str(get(pc, "metadata"), "name"), "");
    const cJSON *value = get(pc, "value");
    struct other_default d = {.self = name};
    int r;

    if (old) {
        const cJSON *op = get(old, "preemptionPolicy"), *np = get(pc, "preemptionPolicy");
        if (!json_value_equal(get(old, "value"), value))
            field_error_add(errs, FIELD_FORBIDDEN, "value", NULL,
                            "may not be changed in an update.");
        if (np && !json_value_equal(op, np)) {
            struct strbuf v = STRBUF_INIT;
            quoted(&v, cJSON_IsString(np) ? np->valuestring : "");
            field_error_add(errs, FIELD_INVALID, "preemptionPolicy", v.buf, "field is immutable");
            strbuf_release(&v);
        }
    } else if (!strncmp(name, "system-", 7)) {
        bool known = false;
        for (size_t i = 0; i < ARRAY_SIZE(system_classes); i++)
            known |= !strcmp(name, system_classes[i].name) && cJSON_IsNumber(value) &&
                     value->valuedouble == system_classes[i].value;
        if (!known)
            field_error_add(errs, FIELD_FORBIDDEN, "metadata.name", NULL,
                            "priority class names with 'system-' prefix are reserved for system "
                            "use only. error: %s is not a known system priority class",
                            name);
    } else if (cJSON_IsNumber(value) && value->valuedouble > MAX_USER_PRIO) {
        field_error_add(errs, FIELD_FORBIDDEN, "value", NULL,
                        "maximum allowed value of a user defined priority is %d", MAX_USER_PRIO);
    }
    if (field_errors_count(errs))
        return -EINVAL;
    if (!cJSON_IsTrue(get(pc, "globalDefault")))
        return 0;
    if ((r = scan(store, PC_PREFIX, note_default, &d)) < 0)
        return r;
    if (d.name) {
        strbuf_addf(why,
                    "PriorityClass %s is already marked as default. Only one default can exist",
                    d.name);
        free(d.name);
        return -EPERM;
    }
    return 0;
}

/* ---- Pod priority (the Priority admission plugin) ---- */

struct default_class {
    char *name;
    double value;
    char *policy;
};

static void note_global_default(const cJSON *pc, void *ud)
{
    struct default_class *d = ud;
    const cJSON *v = get(pc, "value");

    /* Several defaults can only come from outside this server; the lowest wins, as upstream. */
    if (!cJSON_IsTrue(get(pc, "globalDefault")) || !cJSON_IsNumber(v) ||
        (d->name && v->valuedouble >= d->value))
        return;
    free(d->name);
    free(d->policy);
    d->name = xstrdup(str_or(get_str(get(pc, "metadata"), "name"), ""));
    d->value = v->valuedouble;
    d->policy = xstrdup(str_or(get_str(pc, "preemptionPolicy"), "PreemptLowerPriority"));
}

static int pod_priority(struct store *store, cJSON *pod, struct strbuf *why)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    const char *name = get_str(spec, "priorityClassName");
    const cJSON *given = get(spec, "priority"), *gp = get(spec, "preemptionPolicy");
    struct default_class d = {0};
    int r = 0;

    if (!cJSON_IsObject(spec))
        return 0;
    if (name && *name) {
        struct strbuf key = STRBUF_INIT;
        struct store_item it = {0};
        cJSON *pc = NULL;
        strbuf_addf(&key, PC_PREFIX "%s", name);
        r = store_get(store, key.buf, &it);
        if (r == 0 && json_parse(it.value, it.len, NULL, &pc, NULL) == 0 &&
            cJSON_IsNumber(get(pc, "value"))) {
            d.name = xstrdup(name);
            d.value = get(pc, "value")->valuedouble;
            d.policy = xstrdup(str_or(get_str(pc, "preemptionPolicy"), "PreemptLowerPriority"));
        }
        cJSON_Delete(pc);
        store_item_release(&it);
        strbuf_release(&key);
        if (r < 0 && r != -ENOENT)
            goto out;
        r = 0;
        if (!d.name) {
            strbuf_addf(why, "no PriorityClass with name %s was found", name);
            r = -EPERM;
            goto out;
        }
    } else {
        if ((r = scan(store, PC_PREFIX, note_global_default, &d)) < 0)
            goto out;
        if (!d.name) {
            d.policy = xstrdup("PreemptLowerPriority");
            d.value = 0;
        }
    }
    if (cJSON_IsNumber(given) && given->valuedouble != d.value) {
        strbuf_addf(why,
                    "the integer value of priority (%d) must not be provided in pod spec; "
                    "priority admission controller computed %d from the given PriorityClass name",
                    given->valueint, (int)d.value);
        r = -EPERM;
        goto out;
    }
    if (cJSON_IsString(gp) && strcmp(gp->valuestring, d.policy)) {
        strbuf_addf(why,
                    "the string value of PreemptionPolicy (%s) must not be provided in pod spec; "
                    "priority admission controller computed %s from the given PriorityClass name",
                    gp->valuestring, d.policy);
        r = -EPERM;
        goto out;
    }
    if (d.name && !(name && *name))
        put(spec, "priorityClassName", cJSON_CreateString(d.name));
    put(spec, "priority", cJSON_CreateNumber(d.value));
    put(spec, "preemptionPolicy", cJSON_CreateString(d.policy));
out:
    free(d.name);
    free(d.policy);
    return r;
}

/* What admission resolved at creation stays: an update that leaves it out keeps it (so a
 * replace with the original manifest works), one that changes it is refused. */
static void pod_priority_update(const cJSON *old, cJSON *pod, struct field_errors *errs)
{
    static const char *const keys[] = {"priorityClassName", "priority", "preemptionPolicy"};
    const cJSON *os = get(old, "spec");
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");

    if (!cJSON_IsObject(spec))
        return;
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const cJSON *ov = get(os, keys[i]), *nv = get(spec, keys[i]);
        char field[64];
        if (!nv && ov) {
            put(spec, keys[i], cJSON_Duplicate(ov, true));
        } else if (nv && !(ov && json_value_equal(ov, nv))) {
            (void)snprintf(field, sizeof(field), "spec.%s", keys[i]);
            field_error_add(errs, FIELD_FORBIDDEN, field, NULL, "may not be changed in an update");
        }
    }
}

/* ---- entry points ---- */

int admit_create(struct store *store, const struct api_resource *res, cJSON *obj,
                 struct field_errors *errs, struct strbuf *why)
{
    if (res_is(res, "", "secrets")) {
        fold_string_data(obj);
        return 0;
    }
    if (res_is(res, "", "services"))
        return service_fill(store, NULL, obj, errs, why);
    if (res_is(res, "scheduling.k8s.io", "priorityclasses"))
        return priority_class_check(store, NULL, obj, errs, why);
    if (res_is(res, "", "pods"))
        return pod_priority(store, obj, why);
    if (is_quota(res))
        return admit_quota_create(store, obj, why);
    return 0;
}

int admit_update(struct store *store, const struct api_resource *res, const cJSON *old, cJSON *obj,
                 struct field_errors *errs, struct strbuf *why)
{
    if (res_is(res, "", "secrets"))
        secret_update(old, obj, errs);
    else if (res_is(res, "", "pods"))
        pod_priority_update(old, obj, errs);
    else if (res_is(res, "", "configmaps"))
        check_immutable(old, obj, (const char *const[]){"data", "binaryData", NULL}, errs);
    else if (res_is(res, "", "services"))
        return service_fill(store, old, obj, errs, why);
    else if (res_is(res, "scheduling.k8s.io", "priorityclasses"))
        return priority_class_check(store, old, obj, errs, why);
    else if (is_quota(res))
        return admit_quota_update(store, old, obj, why);
    return field_errors_count(errs) ? -EINVAL : 0;
}

int admit_delete(struct store *store, const struct api_resource *res, const cJSON *old,
                 struct strbuf *why)
{
    if (is_quota(res))
        return admit_quota_delete(store, old, why);
    return 0;
}

int admit_bootstrap(struct store *store, const char *now, void (*new_uid)(char uid[37]))
{
    for (size_t i = 0; i < ARRAY_SIZE(system_classes); i++) {
        struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
        const char *n = system_classes[i].name;
        char uid[37];
        int r;

        new_uid(uid);
        strbuf_addf(&key, PC_PREFIX "%s", n);
        strbuf_addf(&val,
                    "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
                    "\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\",\"creationTimestamp\":"
                    "\"%s\",\"generation\":1},\"value\":%d,"
                    "\"description\":\"Used for %s critical pods that must not be moved from "
                    "their current node.\",\"preemptionPolicy\":\"PreemptLowerPriority\"}",
                    n, uid, now, system_classes[i].value, i == 0 ? "system" : "system node");
        r = store_create(store, key.buf, val.buf, val.len, NULL);
        strbuf_release(&key);
        strbuf_release(&val);
        if (r < 0 && r != -EEXIST)
            return r;
    }
    return 0;
}
