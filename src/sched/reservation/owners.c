/*
 * Reservation owner matching and the "matched" predicate: see owners.h. Mirrors
 * pkg/util/reservation/reservation.go and the checks of checkReservationMatchedOrIgnored
 * (pkg/scheduler/plugins/reservation/transformer.go).
 */
#include "sched/reservation/owners.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

/* ---- small JSON helpers ---- */

static const cJSON *get(const cJSON *o, const char *k)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const char *s = cJSON_GetStringValue(get(o, k));
    return s ? s : "";
}

static cJSON *dup_labels(const cJSON *labels)
{
    cJSON *l;

    if (!cJSON_IsObject(labels) || !labels->child)
        return NULL;
    l = cJSON_Duplicate(labels, true);
    CHECK(l);
    return l;
}

static void ref_decode(const cJSON *o, struct sched_resv_ref *ref)
{
    const cJSON *c = get(o, "controller");

    ref->api_version = xstrdup(get_str(o, "apiVersion"));
    ref->kind = xstrdup(get_str(o, "kind"));
    ref->name = xstrdup(get_str(o, "name"));
    ref->uid = xstrdup(get_str(o, "uid"));
    ref->controller = cJSON_IsBool(c) ? cJSON_IsTrue(c) : -1;
}

static void ref_release(struct sched_resv_ref *ref)
{
    free(ref->api_version);
    free(ref->kind);
    free(ref->name);
    free(ref->uid);
}

/* ---- reservations ---- */

static enum sched_resv_phase phase_of(const char *s)
{
    if (!strcmp(s, "Available"))
        return SCHED_RESV_AVAILABLE;
    if (!strcmp(s, "Waiting"))
        return SCHED_RESV_WAITING;
    if (!strcmp(s, "Succeeded"))
        return SCHED_RESV_SUCCEEDED;
    if (!strcmp(s, "Failed"))
        return SCHED_RESV_FAILED;
    return SCHED_RESV_PENDING;
}

static void owner_decode(const cJSON *o, size_t i, struct sched_resv_owner *w, char **invalid)
{
    const cJSON *obj = get(o, "object"), *ctl = get(o, "controller"),
                *sel = get(o, "labelSelector");

    w->has_object = cJSON_IsObject(obj);
    w->obj_uid = xstrdup(get_str(obj, "uid"));
    w->obj_name = xstrdup(get_str(obj, "name"));
    w->obj_namespace = xstrdup(get_str(obj, "namespace"));
    w->obj_api_version = xstrdup(get_str(obj, "apiVersion"));
    w->has_controller = cJSON_IsObject(ctl);
    ref_decode(ctl, &w->controller);
    w->ctl_namespace = xstrdup(get_str(ctl, "namespace"));
    if (sel && !cJSON_IsNull(sel)) {
        struct strbuf err = STRBUF_INIT;
        if (label_selector_from_json(sel, &w->selector, &err) < 0 && !*invalid) {
            struct strbuf sb = STRBUF_INIT;
            strbuf_addf(&sb, "spec.owners[%zu].labelSelector: %s", i,
                        err.len ? err.buf : "invalid");
            *invalid = strbuf_detach(&sb, NULL);
        }
        strbuf_release(&err);
    }
}

static void owner_release(struct sched_resv_owner *w)
{
    free(w->obj_uid);
    free(w->obj_name);
    free(w->obj_namespace);
    free(w->obj_api_version);
    ref_release(&w->controller);
    free(w->ctl_namespace);
    label_selector_free(w->selector);
}

static void decode_taints(const cJSON *a, struct sched_resv *r)
{
    const cJSON *t;

    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return;
    r->taints = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*r->taints));
    cJSON_ArrayForEach(t, a)
    {
        struct sched_taint *x = &r->taints[r->ntaints];
        if (!*get_str(t, "key") || sched_effect_parse(get_str(t, "effect"), false, &x->effect) < 0)
            continue; /* the CRD requires key and effect */
        x->key = xstrdup(get_str(t, "key"));
        x->value = xstrdup(get_str(t, "value"));
        r->ntaints++;
    }
}

static void decode_allocatable(const cJSON *list, struct sched_resv *r)
{
    const cJSON *v;

    if (!cJSON_IsObject(list) || !cJSON_GetArraySize(list))
        return;
    r->allocatable = xcalloc((size_t)cJSON_GetArraySize(list), sizeof(*r->allocatable));
    cJSON_ArrayForEach(v, list)
    {
        struct sched_resv_quantity *x = &r->allocatable[r->nallocatable];
        if (!cJSON_IsString(v) || quantity_parse(v->valuestring, &x->q) < 0)
            continue;
        x->name = xstrdup(v->string);
        r->nallocatable++;
    }
}

int sched_resv_decode(const cJSON *obj, struct sched_resv **ret)
{
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec"),
                *status = get(obj, "status"), *owners = get(spec, "owners"), *o, *x;
    struct sched_resv *r = xcalloc(1, sizeof(*r));
    const char *policy = get_str(spec, "allocatePolicy");

    atomic_init(&r->refs, 1);
    r->name = xstrdup(get_str(meta, "name"));
    r->uid = xstrdup(get_str(meta, "uid"));
    r->resource_version = xstrdup(get_str(meta, "resourceVersion"));
    r->labels = dup_labels(get(meta, "labels"));
    x = get(meta, "deletionTimestamp");
    r->deleting = x && !cJSON_IsNull(x);
    r->node_name = xstrdup(get_str(status, "nodeName"));
    r->phase = phase_of(get_str(status, "phase"));
    x = get(spec, "allocateOnce");
    r->allocate_once = !cJSON_IsFalse(x);
    r->allocate_policy = !strcmp(policy, "Aligned")      ? SCHED_RESV_POLICY_ALIGNED
                         : !strcmp(policy, "Restricted") ? SCHED_RESV_POLICY_RESTRICTED
                                                         : SCHED_RESV_POLICY_DEFAULT;
    r->unschedulable = cJSON_IsTrue(get(spec, "unschedulable"));
    decode_taints(get(spec, "taints"), r);
    if (cJSON_IsArray(owners) && cJSON_GetArraySize(owners)) {
        r->owners = xcalloc((size_t)cJSON_GetArraySize(owners), sizeof(*r->owners));
        cJSON_ArrayForEach(o, owners)
        {
            owner_decode(o, r->nowners, &r->owners[r->nowners], &r->invalid);
            r->nowners++;
        }
    }
    decode_allocatable(get(status, "allocatable"), r);
    *ret = r;
    return 0;
}

struct sched_resv *sched_resv_ref(struct sched_resv *r)
{
    if (r)
        atomic_fetch_add(&r->refs, 1);
    return r;
}

struct sched_resv *sched_resv_unref(struct sched_resv *r)
{
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
        return NULL;
    free(r->name);
    free(r->uid);
    free(r->resource_version);
    cJSON_Delete(r->labels);
    free(r->node_name);
    for (size_t i = 0; i < r->ntaints; i++) {
        free(r->taints[i].key);
        free(r->taints[i].value);
    }
    free(r->taints);
    for (size_t i = 0; i < r->nowners; i++)
        owner_release(&r->owners[i]);
    free(r->owners);
    for (size_t i = 0; i < r->nallocatable; i++)
        free(r->allocatable[i].name);
    free(r->allocatable);
    free(r->invalid);
    free(r);
    return NULL;
}

bool sched_resv_is_active(const struct sched_resv *r)
{
    return *r->node_name && (r->phase == SCHED_RESV_AVAILABLE || r->phase == SCHED_RESV_WAITING);
}

/* ---- pods ---- */

static void fail(char **invalid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(char **invalid, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;

    if (*invalid)
        return;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    *invalid = strbuf_detach(&sb, NULL);
}

static void decode_tolerations(const cJSON *a, struct sched_resv_pod *p)
{
    const cJSON *t;

    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return;
    p->tolerations = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*p->tolerations));
    cJSON_ArrayForEach(t, a)
    {
        struct sched_toleration *x = &p->tolerations[p->ntolerations];
        const char *op = get_str(t, "operator");
        if (sched_effect_parse(get_str(t, "effect"), true, &x->effect) < 0) {
            fail(&p->invalid, "%s: tolerations[%zu].effect: Unsupported value: \"%s\"",
                 SCHED_RESV_ANN_AFFINITY, p->ntolerations, get_str(t, "effect"));
            continue;
        }
        if (*op && strcmp(op, "Exists") && strcmp(op, "Equal")) {
            fail(&p->invalid, "%s: tolerations[%zu].operator: Unsupported value: \"%s\"",
                 SCHED_RESV_ANN_AFFINITY, p->ntolerations, op);
            continue;
        }
        x->exists = !strcmp(op, "Exists");
        x->key = xstrdup(get_str(t, "key"));
        x->value = xstrdup(get_str(t, "value"));
        p->ntolerations++;
    }
}

/* GetReservationAffinity + GetRequiredReservationAffinity: present (even "") = an affinity. */
static void decode_affinity(const char *s, struct sched_resv_pod *p)
{
    cJSON *a = NULL;
    const cJSON *sel, *req, *v;
    char *why = NULL;

    p->has_affinity = true;
    if (!*s)
        return;
    if (json_parse(s, strlen(s), NULL, &a, NULL) < 0 || !cJSON_IsObject(a)) {
        fail(&p->invalid, "%s: not a JSON object", SCHED_RESV_ANN_AFFINITY);
        goto out;
    }
    free(p->affinity_name);
    p->affinity_name = xstrdup(get_str(a, "name"));
    sel = get(a, "reservationSelector");
    if (cJSON_IsObject(sel) && sel->child) {
        cJSON_ArrayForEach(v, sel)
        {
            if (!cJSON_IsString(v)) {
                fail(&p->invalid, "%s: reservationSelector.%s: not a string",
                     SCHED_RESV_ANN_AFFINITY, v->string);
                goto out;
            }
        }
        p->affinity_labels = dup_labels(sel);
    }
    req = get(a, "requiredDuringSchedulingIgnoredDuringExecution");
    if (cJSON_IsObject(req) &&
        sched_node_selector_decode_terms(get(req, "reservationSelectorTerms"),
                                         "requiredDuringSchedulingIgnoredDuringExecution."
                                         "reservationSelectorTerms",
                                         &p->affinity_terms, &why) < 0) {
        fail(&p->invalid, "%s: %s", SCHED_RESV_ANN_AFFINITY, why);
        free(why);
        goto out;
    }
    decode_tolerations(get(a, "tolerations"), p);
out:
    cJSON_Delete(a);
}

static void decode_exact(const char *s, struct sched_resv_pod *p)
{
    cJSON *a = NULL;
    const cJSON *names, *v;

    if (!*s)
        return;
    if (json_parse(s, strlen(s), NULL, &a, NULL) < 0 || !cJSON_IsObject(a)) {
        fail(&p->invalid, "%s: not a JSON object", SCHED_RESV_ANN_EXACT_MATCH);
        goto out;
    }
    names = get(a, "resourceNames");
    if (!cJSON_IsArray(names) || !cJSON_GetArraySize(names))
        goto out;
    p->exact_names = xcalloc((size_t)cJSON_GetArraySize(names), sizeof(*p->exact_names));
    cJSON_ArrayForEach(v, names)
    {
        if (cJSON_IsString(v))
            p->exact_names[p->nexact_names++] = xstrdup(v->valuestring);
    }
out:
    cJSON_Delete(a);
}

int sched_resv_pod_decode(const cJSON *pod, struct sched_resv_pod **ret)
{
    const cJSON *meta = get(pod, "metadata"), *ann = get(meta, "annotations"), *x;
    struct sched_resv_pod *p = xcalloc(1, sizeof(*p));
    const char *ns = get_str(meta, "namespace"), *aff;

    p->uid = xstrdup(get_str(meta, "uid"));
    p->namespace = xstrdup(*ns ? ns : "default");
    p->name = xstrdup(get_str(meta, "name"));
    p->api_version = xstrdup(get_str(pod, "apiVersion"));
    p->labels = dup_labels(get(meta, "labels"));
    p->ignored = !strcmp(get_str(p->labels, SCHED_RESV_LABEL_IGNORED), "true");
    x = get(meta, "ownerReferences");
    if (cJSON_IsArray(x) && cJSON_GetArraySize(x)) {
        const cJSON *o;
        p->owner_refs = xcalloc((size_t)cJSON_GetArraySize(x), sizeof(*p->owner_refs));
        cJSON_ArrayForEach(o, x) ref_decode(o, &p->owner_refs[p->nowner_refs++]);
    }
    p->affinity_name = xstrdup("");
    aff = cJSON_GetStringValue(get(ann, SCHED_RESV_ANN_AFFINITY));
    if (aff)
        decode_affinity(aff, p);
    decode_exact(get_str(ann, SCHED_RESV_ANN_EXACT_MATCH), p);
    *ret = p;
    return 0;
}

void sched_resv_pod_free(struct sched_resv_pod *p)
{
    if (!p)
        return;
    free(p->uid);
    free(p->namespace);
    free(p->name);
    free(p->api_version);
    cJSON_Delete(p->labels);
    for (size_t i = 0; i < p->nowner_refs; i++)
        ref_release(&p->owner_refs[i]);
    free(p->owner_refs);
    free(p->affinity_name);
    cJSON_Delete(p->affinity_labels);
    sched_node_selector_free(p->affinity_terms);
    for (size_t i = 0; i < p->ntolerations; i++) {
        free(p->tolerations[i].key);
        free(p->tolerations[i].value);
    }
    free(p->tolerations);
    for (size_t i = 0; i < p->nexact_names; i++)
        free(p->exact_names[i]);
    free(p->exact_names);
    free(p->invalid);
    free(p);
}

/* ---- matching ---- */

/* want is a wildcard when empty. */
static bool eq_or_any(const char *want, const char *have)
{
    return !*want || !strcmp(want, have);
}

/* MatchObjectRef: kind is ignored since only pods are compared. */
static bool match_object(const struct sched_resv_owner *w, const struct sched_resv_pod *p)
{
    return eq_or_any(w->obj_uid, p->uid) && eq_or_any(w->obj_name, p->name) &&
           eq_or_any(w->obj_namespace, p->namespace) &&
           eq_or_any(w->obj_api_version, p->api_version);
}

/* MatchReservationControllerReference: any one ownerReference will do. */
static bool match_controller(const struct sched_resv_owner *w, const struct sched_resv_pod *p)
{
    const struct sched_resv_ref *c = &w->controller;

    if (*w->ctl_namespace && strcmp(w->ctl_namespace, p->namespace))
        return false;
    for (size_t i = 0; i < p->nowner_refs; i++) {
        const struct sched_resv_ref *o = &p->owner_refs[i];
        if ((c->controller < 0 || (o->controller >= 0 && o->controller == c->controller)) &&
            eq_or_any(c->uid, o->uid) && eq_or_any(c->name, o->name) &&
            eq_or_any(c->kind, o->kind) && eq_or_any(c->api_version, o->api_version))
            return true;
    }
    return false;
}

bool sched_resv_match_owners(const struct sched_resv *r, const struct sched_resv_pod *p)
{
    if (r->invalid)
        return false;
    for (size_t i = 0; i < r->nowners; i++) {
        const struct sched_resv_owner *w = &r->owners[i];
        if ((!w->has_object || match_object(w, p)) &&
            (!w->has_controller || match_controller(w, p)) &&
            (!w->selector || label_selector_matches(w->selector, p->labels)))
            return true;
    }
    return false;
}

static const struct sched_resv_quantity *allocatable_of(const struct sched_resv *r,
                                                        const char *name)
{
    for (size_t i = 0; i < r->nallocatable; i++)
        if (!strcmp(r->allocatable[i].name, name))
            return &r->allocatable[i];
    return NULL;
}

bool sched_resv_exact_match(const struct sched_resv *r, const struct sched_resv_pod *p,
                            const struct sched_res *pod_req)
{
    for (size_t i = 0; i < p->nexact_names; i++) {
        const char *name = p->exact_names[i];
        const struct sched_resv_quantity *a = allocatable_of(r, name);
        int idx = sched_res_lookup(name);
        int64_t v = idx >= 0 ? pod_req->v[idx] : 0;
        struct quantity q;

        if (!a || !v)
            return !a && !v; /* absent from both: upstream stops here with a match */
        if (idx == SCHED_RES_CPU)
            quantity_from_milli(v, QUANTITY_DECIMAL_SI, &q);
        else
            quantity_from_int(v, QUANTITY_DECIMAL_SI, &q);
        if (quantity_cmp(&a->q, &q))
            return false;
    }
    return true;
}

/* FindMatchingUntoleratedTaint over the NoSchedule and NoExecute taints. */
static const struct sched_taint *untolerated(const struct sched_resv *r,
                                             const struct sched_resv_pod *p)
{
    for (size_t i = 0; i < r->ntaints; i++) {
        const struct sched_taint *t = &r->taints[i];
        bool ok = false;
        if (t->effect != SCHED_EFFECT_NO_SCHEDULE && t->effect != SCHED_EFFECT_NO_EXECUTE)
            continue;
        for (size_t j = 0; j < p->ntolerations && !ok; j++)
            ok = sched_toleration_matches(&p->tolerations[j], t);
        if (!ok)
            return t;
    }
    return NULL;
}

/* MatchReservationAffinity: the node's labels overlaid with the reservation's, named like the
 * reservation. */
static bool match_affinity(const struct sched_resv *r, const struct sched_resv_pod *p,
                           const cJSON *node_labels)
{
    cJSON *labels;
    const cJSON *v;
    bool ok = true;

    if (!p->affinity_labels && !p->affinity_terms)
        return true;
    labels =
        cJSON_IsObject(node_labels) ? cJSON_Duplicate(node_labels, true) : cJSON_CreateObject();
    CHECK(labels);
    cJSON_ArrayForEach(v, r->labels)
    {
        cJSON *c = cJSON_Duplicate(v, true);
        CHECK(c);
        cJSON_DeleteItemFromObjectCaseSensitive(labels, v->string);
        CHECK(cJSON_AddItemToObject(labels, v->string, c));
    }
    cJSON_ArrayForEach(v, p->affinity_labels)
    {
        const char *have = sched_label(labels, v->string);
        if (!have || strcmp(have, v->valuestring)) {
            ok = false;
            break;
        }
    }
    if (ok && p->affinity_terms)
        ok = sched_node_selector_matches(p->affinity_terms, labels, r->name);
    cJSON_Delete(labels);
    return ok;
}

enum sched_resv_match sched_resv_match(const struct sched_resv *r, const struct sched_resv_pod *p,
                                       const struct sched_res *pod_req, const cJSON *node_labels,
                                       const struct sched_taint **ret_taint)
{
    const struct sched_taint *t;

    if (!sched_resv_is_active(r))
        return SCHED_RESV_INACTIVE;
    if (p->ignored)
        return SCHED_RESV_IGNORED;
    if (!sched_resv_match_owners(r, p))
        return SCHED_RESV_OWNER_UNMATCHED;
    if (*p->affinity_name) {
        if (strcmp(p->affinity_name, r->name))
            return SCHED_RESV_NAME_UNMATCHED;
        return sched_resv_exact_match(r, p, pod_req) ? SCHED_RESV_MATCHED
                                                     : SCHED_RESV_NOT_EXACT_MATCHED;
    }
    if (r->unschedulable || r->deleting)
        return SCHED_RESV_UNSCHEDULABLE;
    if (p->has_affinity && (t = untolerated(r, p))) {
        if (ret_taint)
            *ret_taint = t;
        return SCHED_RESV_TAINTS_UNTOLERATED;
    }
    if (p->has_affinity && !match_affinity(r, p, node_labels))
        return SCHED_RESV_AFFINITY_UNMATCHED;
    if (!sched_resv_exact_match(r, p, pod_req))
        return SCHED_RESV_NOT_EXACT_MATCHED;
    return SCHED_RESV_MATCHED;
}

const char *sched_resv_match_str(enum sched_resv_match m)
{
    static const char *const names[] = {
        [SCHED_RESV_MATCHED] = "matched",
        [SCHED_RESV_IGNORED] = "ignored",
        [SCHED_RESV_INACTIVE] = "inactive",
        [SCHED_RESV_OWNER_UNMATCHED] = "owner unmatched",
        [SCHED_RESV_NAME_UNMATCHED] = "name unmatched",
        [SCHED_RESV_UNSCHEDULABLE] = "unschedulable",
        [SCHED_RESV_TAINTS_UNTOLERATED] = "taints untolerated",
        [SCHED_RESV_AFFINITY_UNMATCHED] = "affinity unmatched",
        [SCHED_RESV_NOT_EXACT_MATCHED] = "not exact matched",
    };

    return (size_t)m < ARRAY_SIZE(names) ? names[m] : "?";
}
