/*
 * /mutate-pod (manager-behaviour.md 5, 5.1-5.3; upstream pkg/webhook/pod/mutating): on CREATE,
 * the ClusterColocationProfiles that select the pod turn it into what they describe (labels,
 * annotations, key mappings, suffixes, scheduler, QoS, priority, a strategic patch), its cpu
 * and memory become batch or mid resources by its priority class, the extended-resource-spec
 * annotation records its batch resources for the agent, and GPU requests get the device
 * resource spec (gpu -> gpu-core and gpu-memory-ratio, gpu.shared). Upstream quirks copied on
 * purpose, as they decide which pods users' profiles touch: a selector that cannot be evaluated
 * counts as matched, and a probability of N% passes (N+1)% of pods.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "api/patchmeta.h"
#include "api/pod.h"
#include "api/quantity.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "codec/smp.h"
#include "manager/webhook/webhook-int.h"

#define L_QOS                "koordinator.sh/qosClass"
#define L_PRIORITY           "koordinator.sh/priority"
#define A_SKIP_RESOURCES     "config.koordinator.sh/skip-update-resources"
#define A_EXT_RESOURCE_SPEC  "node.koordinator.sh/extended-resource-spec"
#define R_BATCH_CPU          "kubernetes.io/batch-cpu"
#define R_BATCH_MEMORY       "kubernetes.io/batch-memory"
#define R_MID_CPU            "kubernetes.io/mid-cpu"
#define R_MID_MEMORY         "kubernetes.io/mid-memory"
#define MAX_MATCHED_PROFILES 1024

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* ---- matching (5.2 step 2) ---- */

/* Whether sel (a LabelSelector member, maybe absent) lets labels through. A nil selector and
 * one that cannot be evaluated both count as matched (upstream quirk). labels NULL with
 * known == false: the object they belong to could not be read (an error: matched). */
static bool selector_passes(const cJSON *sel, const cJSON *labels, bool known)
{
    struct label_selector *ls = NULL;
    bool ok;

    if (!sel || cJSON_IsNull(sel))
        return true;
    if (label_selector_from_json(sel, &ls, NULL) < 0)
        return true;
    ok = label_selector_is_empty(ls) || !known || label_selector_matches(ls, labels);
    label_selector_free(ls);
    return ok;
}

static bool profile_matches(const cJSON *profile, const cJSON *pod, const char *ns,
                            const struct webhook_data *d)
{
    const cJSON *spec = get(profile, "spec"), *nsobj = NULL;
    const cJSON *nssel = get(spec, "namespaceSelector");

    if (nssel && !cJSON_IsNull(nssel))
        nsobj = d->namespace_get ? d->namespace_get(d->userdata, ns) : NULL;
    if (!selector_passes(nssel, get(get(nsobj, "metadata"), "labels"), nsobj != NULL))
        return false;
    return selector_passes(get(spec, "selector"), get(get(pod, "metadata"), "labels"), true);
}

static int by_name(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(webhook__meta_str(x, "name"), webhook__meta_str(y, "name"));
}

/* ---- probability (5.2 step 4) ---- */

/* spec.probability as a percent: absent 100; an int as is; a string "N%" floor(N). */
static int probability(const cJSON *spec, int *ret, struct strbuf *msg)
{
    const cJSON *p = get(spec, "probability");
    char *end = NULL;
    double v;
    size_t len;

    if (!p || cJSON_IsNull(p)) {
        *ret = 100;
        return 0;
    }
    if (cJSON_IsNumber(p)) {
        *ret = p->valuedouble > 1e6 ? 1000000 : (int)p->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(p) || !(len = strlen(p->valuestring)) || p->valuestring[len - 1] != '%')
        goto bad;
    v = strtod(p->valuestring, &end);
    if (end != p->valuestring + len - 1 || end == p->valuestring || !isfinite(v))
        goto bad;
    *ret = v > 1e6 ? 1000000 : (int)floor(v);
    return 0;
bad:
    strbuf_addf(msg, "invalid probability of ClusterColocationProfile: %s",
                cJSON_IsString(p) ? p->valuestring : "(not a string or integer)");
    return -EINVAL;
}

/* ---- applying a profile (5.2 step 4 a-j) ---- */

static void copy_map(cJSON *dst, const cJSON *src)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, src)
    {
        if (cJSON_IsString(c))
            webhook__set_str(dst, c->string, c->valuestring);
    }
}

/* {old: new} -> dst[new] = dst[old] ("" when old is absent). */
static void map_keys(cJSON *dst, const cJSON *mapping)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, mapping)
    {
        const cJSON *v;
        if (!cJSON_IsString(c))
            continue;
        v = get(dst, c->string);
        {
            char *copy = xstrdup(cJSON_IsString(v) ? v->valuestring : "");
            webhook__set_str(dst, c->valuestring, copy);
            free(copy);
        }
    }
}

static void add_suffixes(cJSON *dst, const cJSON *suffixes)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, suffixes)
    {
        const cJSON *v = get(dst, c->string);
        struct strbuf s = STRBUF_INIT;
        if (!cJSON_IsString(c) || !cJSON_IsString(v))
            continue;
        strbuf_addf(&s, "%s%s", v->valuestring, c->valuestring);
        webhook__set_str(dst, c->string, s.buf);
        strbuf_release(&s);
    }
}

static int apply_profile(const cJSON *profile, cJSON **podp, const struct webhook_data *d,
                         struct strbuf *msg)
{
    const cJSON *spec = get(profile, "spec"), *v;
    cJSON *pod = *podp, *meta = webhook__object_at(pod, "metadata"), *labels, *annots, *pspec;
    const char *s;

    labels = webhook__object_at(meta, "labels");
    annots = webhook__object_at(meta, "annotations");
    copy_map(labels, get(spec, "labels"));
    copy_map(annots, get(spec, "annotations"));
    map_keys(labels, get(spec, "labelKeysMapping"));
    map_keys(annots, get(spec, "annotationKeysMapping"));
    add_suffixes(labels, get(spec, "labelSuffixes"));
    pspec = webhook__object_at(pod, "spec");
    if ((s = cJSON_GetStringValue(get(spec, "schedulerName"))) && *s)
        webhook__set_str(pspec, "schedulerName", s);
    if ((s = cJSON_GetStringValue(get(spec, "qosClass"))) && *s)
        webhook__set_str(labels, L_QOS, s);
    if ((s = cJSON_GetStringValue(get(spec, "priorityClassName"))) && *s) {
        const cJSON *pc = d->priority_class_get ? d->priority_class_get(d->userdata, s) : NULL;
        const cJSON *value = get(pc, "value"), *policy = get(pc, "preemptionPolicy");
        if (!pc || !cJSON_IsNumber(value)) {
            strbuf_addf(msg, "priorityclasses.scheduling.k8s.io \"%s\" not found", s);
            return -ENOENT;
        }
        webhook__set_str(pspec, "priorityClassName", s);
        cJSON_DeleteItemFromObjectCaseSensitive(pspec, "priority");
        CHECK(cJSON_AddNumberToObject(pspec, "priority", value->valuedouble));
        cJSON_DeleteItemFromObjectCaseSensitive(pspec, "preemptionPolicy");
        if (cJSON_IsString(policy))
            CHECK(cJSON_AddStringToObject(pspec, "preemptionPolicy", policy->valuestring));
    }
    v = get(spec, "koordinatorPriority");
    if (cJSON_IsNumber(v)) {
        char buf[32];
        (void)snprintf(buf, sizeof(buf), "%lld", (long long)v->valuedouble);
        webhook__set_str(labels, L_PRIORITY, buf);
    }
    v = get(spec, "patch");
    if (cJSON_IsObject(v)) {
        struct codec_error err = {0};
        int r = strategic_merge_patch_apply(podp, v, api_patch_meta_lookup,
                                            api_patch_meta_find("", "Pod"), &err);
        if (r < 0) {
            strbuf_addf(msg, "failed to apply the patch of ClusterColocationProfile %s: %s",
                        webhook__meta_str(profile, "name"), err.msg);
            return r;
        }
    }
    return 0;
}

/* ---- resource translation (5.3) ---- */

/* Renames cpu and memory of list into the extended names, cpu as integer millicores. */
static void translate_list(cJSON *list, const char *cpu_name, const char *mem_name)
{
    cJSON *cpu = cJSON_DetachItemFromObjectCaseSensitive(list, "cpu");
    cJSON *mem = cJSON_DetachItemFromObjectCaseSensitive(list, "memory");

    if (cpu) {
        struct quantity q, m;
        int64_t milli = 0;
        char buf[QUANTITY_STR_MAX];
        if (cJSON_IsString(cpu) && quantity_parse(cpu->valuestring, &q) == 0)
            (void)quantity_milli(&q, &milli);
        quantity_from_int(milli, QUANTITY_DECIMAL_SI, &m);
        (void)quantity_format(&m, buf);
        webhook__set_str(list, cpu_name, buf);
        cJSON_Delete(cpu);
    }
    if (mem) {
        cJSON_DeleteItemFromObjectCaseSensitive(list, mem_name);
        CHECK(cJSON_AddItemToObject(list, mem_name, mem));
    }
}

static void translate_container(cJSON *c, const char *cpu_name, const char *mem_name)
{
    cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
    cJSON *req = cJSON_GetObjectItemCaseSensitive(res, "requests");
    cJSON *lim = cJSON_GetObjectItemCaseSensitive(res, "limits");
    const char *names[] = {cpu_name, mem_name};

    if (cJSON_IsObject(req))
        translate_list(req, cpu_name, mem_name);
    if (cJSON_IsObject(lim))
        translate_list(lim, cpu_name, mem_name);
    if (!cJSON_IsObject(lim))
        return;
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        const cJSON *l = get(lim, names[i]);
        if (!l || (cJSON_IsObject(req) && get(req, names[i])))
            continue;
        req = webhook__object_at(res, "requests");
        CHECK(cJSON_AddItemToObject(req, names[i], cJSON_Duplicate(l, true)));
    }
}

static void translate(cJSON *pod)
{
    enum api_priority p = api_pod_priority(pod);
    const char *cpu_name, *mem_name;
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec"), *c, *overhead;

    if (p == API_PRIORITY_BATCH) {
        cpu_name = R_BATCH_CPU;
        mem_name = R_BATCH_MEMORY;
    } else if (p == API_PRIORITY_MID) {
        cpu_name = R_MID_CPU;
        mem_name = R_MID_MEMORY;
    } else {
        return;
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "initContainers"))
    {
        translate_container(c, cpu_name, mem_name);
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
    {
        translate_container(c, cpu_name, mem_name);
    }
    overhead = cJSON_GetObjectItemCaseSensitive(spec, "overhead");
    if (cJSON_IsObject(overhead))
        translate_list(overhead, cpu_name, mem_name);
}

/* ---- ClusterColocationProfiles (5.2) ---- */

static int mutate_profiles(const struct webhook_config *cfg, const cJSON *orig, const char *ns,
                           const struct webhook_data *d, cJSON **podp, struct strbuf *msg)
{
    const cJSON **matched;
    size_t n = 0;
    bool skip_resources = false;
    int r = 0;

    if (!d->nprofiles)
        return 0;
    matched = xcalloc(d->nprofiles, sizeof(const cJSON *));
    for (size_t i = 0; i < d->nprofiles && n < MAX_MATCHED_PROFILES; i++)
        if (profile_matches(d->profiles[i], orig, ns, d))
            matched[n++] = d->profiles[i];
    if (!n)
        goto out;
    qsort(matched, n, sizeof(const cJSON *), by_name);
    for (size_t i = 0; i < n; i++) {
        int percent;
        if (webhook__annotation(matched[i], A_SKIP_RESOURCES))
            skip_resources = true;
        if ((r = probability(get(matched[i], "spec"), &percent, msg)) < 0)
            goto out;
        if (percent == 0 || (percent < 100 && (int)cfg->rand100(cfg->rand_userdata) > percent))
            continue;
        if ((r = apply_profile(matched[i], podp, d, msg)) < 0)
            goto out;
    }
    if (!skip_resources && !cfg->gates.skip_mutating_resources)
        translate(*podp);
out:
    free(matched);
    return r;
}

/* ---- extended-resource-spec (5.1 step 2) ---- */

static void add_batch(cJSON *dst, const cJSON *list)
{
    static const char *const names[] = {R_BATCH_CPU, R_BATCH_MEMORY};

    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        const cJSON *v = get(list, names[i]);
        if (v)
            CHECK(cJSON_AddItemToObject(dst, names[i], cJSON_Duplicate(v, true)));
    }
}

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void extended_spec(cJSON *pod)
{
    cJSON *containers = cJSON_GetObjectItemCaseSensitive(get(pod, "spec"), "containers"), *c;
    cJSON *spec = cJSON_CreateObject(), *byname = NULL;
    const char *cur = webhook__annotation(pod, A_EXT_RESOURCE_SPEC);
    const char **names;
    size_t n = 0, total = (size_t)cJSON_GetArraySize(containers);
    struct strbuf out = STRBUF_INIT;

    CHECK(spec);
    names = xcalloc(total + 1, sizeof(*names));
    cJSON_ArrayForEach(c, containers)
    {
        const cJSON *res = get(c, "resources"), *name = get(c, "name");
        if (!cJSON_IsString(name))
            continue;
        if (get(get(res, "requests"), R_BATCH_CPU) || get(get(res, "requests"), R_BATCH_MEMORY) ||
            get(get(res, "limits"), R_BATCH_CPU) || get(get(res, "limits"), R_BATCH_MEMORY))
            names[n++] = name->valuestring;
    }
    /* Go marshals the map with sorted keys. */
    qsort(names, n, sizeof(*names), by_key);
    if (n)
        CHECK(byname = cJSON_AddObjectToObject(spec, "containers"));
    for (size_t i = 0; i < n; i++) {
        cJSON *e, *x;
        if (get(byname, names[i]))
            continue;
        CHECK(e = cJSON_AddObjectToObject(byname, names[i]));
        cJSON_ArrayForEach(c, containers)
        {
            const cJSON *res = get(c, "resources");
            if (strcmp(cJSON_GetStringValue(get(c, "name")) ? get(c, "name")->valuestring : "",
                       names[i]))
                continue;
            if (get(get(res, "limits"), R_BATCH_CPU) || get(get(res, "limits"), R_BATCH_MEMORY)) {
                CHECK(x = cJSON_AddObjectToObject(e, "limits"));
                add_batch(x, get(res, "limits"));
            }
            if (get(get(res, "requests"), R_BATCH_CPU) ||
                get(get(res, "requests"), R_BATCH_MEMORY)) {
                CHECK(x = cJSON_AddObjectToObject(e, "requests"));
                add_batch(x, get(res, "requests"));
            }
            break;
        }
    }
    free(names);
    if (!n && !cur)
        goto out;
    CHECK(json_print(spec, &out) == 0);
    if (cur && !strcmp(cur, out.buf))
        goto out;
    webhook__set_str(webhook__object_at(webhook__object_at(pod, "metadata"), "annotations"),
                     A_EXT_RESOURCE_SPEC, out.buf);
out:
    strbuf_release(&out);
    cJSON_Delete(spec);
}

/* ---- device resource spec (5.1 step 4) ---- */

#define R_GPU        "koordinator.sh/gpu"
#define R_GPU_CORE   "koordinator.sh/gpu-core"
#define R_GPU_MEMORY "koordinator.sh/gpu-memory"
#define R_GPU_RATIO  "koordinator.sh/gpu-memory-ratio"
#define R_GPU_SHARED "koordinator.sh/gpu.shared"

/* The integer value of list[name], or -1 when absent or not a quantity. */
static int64_t int_of(const cJSON *list, const char *name)
{
    const cJSON *v = get(list, name);
    struct quantity q;
    int64_t n;

    if (!cJSON_IsString(v) || quantity_parse(v->valuestring, &q) < 0 || quantity_value(&q, &n) < 0)
        return -1;
    return n;
}

/* Sets name to the integer n in requests and limits. */
static void set_both(cJSON *res, const char *name, int64_t n)
{
    static const char *const lists[] = {"requests", "limits"};
    struct quantity q;
    char buf[QUANTITY_STR_MAX];

    quantity_from_int(n, QUANTITY_DECIMAL_SI, &q);
    (void)quantity_format(&q, buf);
    for (size_t i = 0; i < ARRAY_SIZE(lists); i++)
        webhook__set_str(webhook__object_at(res, lists[i]), name, buf);
}

/* gpu.shared for a container asking v of gpu-memory-ratio or gpu-core: whole GPUs when v is
 * more than one and a multiple of 100, else one shared GPU. */
static int64_t shared_of(int64_t v)
{
    return v > 100 && v % 100 == 0 ? v / 100 : 1;
}

/*
 * Upstream's device resource spec: a container asking koordinator.sh/gpu = N asks gpu-core and
 * gpu-memory-ratio N instead, and every container asking a GPU resource gets gpu.shared (how
 * many GPUs it shares) unless it names it.
 */
static void device_spec(cJSON *pod)
{
    static const char *const gpu_names[] = {R_GPU, R_GPU_CORE, R_GPU_MEMORY, R_GPU_RATIO,
                                            R_GPU_SHARED};
    cJSON *containers = cJSON_GetObjectItemCaseSensitive(get(pod, "spec"), "containers"), *c;

    cJSON_ArrayForEach(c, containers)
    {
        cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
        cJSON *req = cJSON_GetObjectItemCaseSensitive(res, "requests");
        bool any = false;
        int64_t n;

        for (size_t i = 0; i < ARRAY_SIZE(gpu_names); i++)
            any |= get(req, gpu_names[i]) != NULL;
        if (!any)
            continue;
        if ((n = int_of(req, R_GPU)) >= 0) {
            set_both(res, R_GPU_CORE, n);
            set_both(res, R_GPU_RATIO, n);
            cJSON_DeleteItemFromObjectCaseSensitive(req, R_GPU);
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "limits"),
                                                    R_GPU);
        }
        if (get(req, R_GPU_SHARED))
            continue;
        /* By gpu-memory-ratio when asked (after the step above), else by gpu-core. */
        if ((n = int_of(req, R_GPU_RATIO)) < 0)
            n = int_of(req, R_GPU_CORE);
        set_both(res, R_GPU_SHARED, n >= 0 ? shared_of(n) : 1);
    }
}

/* ---- the handler ---- */

/* Removes the metadata map k the mutation created empty, so the patch does not add it. */
static void drop_empty(cJSON *pod, const cJSON *orig, const char *k)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
    const cJSON *v = get(meta, k);

    if (cJSON_IsObject(v) && !v->child && !get(get(orig, "metadata"), k))
        cJSON_DeleteItemFromObjectCaseSensitive(meta, k);
}

int webhook__mutate_pod(const struct webhook_config *cfg, const struct webhook__request *req,
                        const struct webhook_data *d, struct webhook__result *res)
{
    const char *ns;
    cJSON *pod;
    int r;

    /* Subresources, other resources, and UPDATE (only pods labelled mutating-update are sent,
     * and upstream does nothing with them) pass untouched. */
    if (strcmp(req->operation, "CREATE") || *req->subresource || strcmp(req->resource, "pods") ||
        *req->group)
        return 0;
    if (!req->object) {
        strbuf_addstr(&res->msg, "the request has no pod object");
        return -EINVAL;
    }
    ns = webhook__meta_str(req->object, "namespace");
    if (!*ns)
        ns = req->namespace;
    CHECK(pod = cJSON_Duplicate(req->object, true));
    if ((r = mutate_profiles(cfg, req->object, ns, d, &pod, &res->msg)) < 0) {
        cJSON_Delete(pod);
        return r;
    }
    if (!cfg->gates.disable_extended_spec)
        extended_spec(pod);
    /* Step 3, the multi-quota-tree node affinity, is gated off (MultiQuotaTree, refused by
     * --feature-gates). */
    if (!cfg->gates.disable_device_spec)
        device_spec(pod);
    drop_empty(pod, req->object, "labels");
    drop_empty(pod, req->object, "annotations");
    res->mutated = pod;
    return 0;
}
