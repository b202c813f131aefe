/*
 * NodeAffinity (kube-scheduler plugins/nodeaffinity/node_affinity.go, component-helpers
 * scheduling/corev1/nodeaffinity; reference scheduler.md 5.3): Filter keeps the nodes that
 * satisfy the pod's spec.nodeSelector AND its required node affinity, and the profile's
 * scheduler-enforced addedAffinity; Score sums the weights of the preferred terms a node
 * matches (the pod's and addedAffinity's) and NormalizeScore scales them to 100 x s / max.
 *
 * PreFilter narrows the cycle to named nodes when every required term pins metadata.name (the
 * shape DaemonSet pods have), so a cycle for such a pod looks at one node instead of all.
 *
 * The pod's selectors come decoded (types.h); only the plugin args' addedAffinity is decoded
 * here, once, in init.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/field.h"
#include "api/labels.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

#define NAME_FIELD "metadata.name" /* metav1.ObjectNameField, the only field nodes have */

struct na {
    bool added;                                 /* args.addedAffinity was given */
    struct sched_node_selector *added_required; /* its required selector, NULL when absent */
    struct sched_pref_term *added_pref;         /* its preferred terms, empty ones dropped */
    size_t nadded_pref;
};

/* ---- addedAffinity: freeing and decoding ---- */

static void req_release(struct sched_sel_req *r)
{
    for (size_t i = 0; i < r->nvalues; i++)
        free(r->values[i]);
    free(r->values);
    free(r->key);
}

static void term_release(struct sched_node_term *t)
{
    for (size_t i = 0; i < t->nexprs; i++)
        req_release(&t->exprs[i]);
    free(t->exprs);
    for (size_t i = 0; i < t->nfields; i++)
        req_release(&t->fields[i]);
    free(t->fields);
}

static void na_free(void *self)
{
    struct na *pl = self;

    if (!pl)
        return;
    if (pl->added_required) {
        for (size_t i = 0; i < pl->added_required->nterms; i++)
            term_release(&pl->added_required->terms[i]);
        free(pl->added_required->terms);
        free(pl->added_required);
    }
    for (size_t i = 0; i < pl->nadded_pref; i++)
        term_release(&pl->added_pref[i].term);
    free(pl->added_pref);
    free(pl);
}

/* Reports v at field as the wrong JSON type. */
static void bad_type(struct field_errors *errs, const char *field, const cJSON *v, const char *want)
{
    struct strbuf r = STRBUF_INIT;

    api_value_repr(v, &r);
    field_error_add(errs, FIELD_INVALID, field, r.buf, "must be %s", want);
    strbuf_release(&r);
}

/* Whether a JSON member is absent or null (Go's nil). */
static bool absent(const cJSON *v)
{
    return !v || cJSON_IsNull(v);
}

static const char *const label_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

/* The values of a requirement as a JSON-ish list for messages. */
static void values_repr(const struct sched_sel_req *r, struct strbuf *out)
{
    strbuf_addch(out, '[');
    for (size_t i = 0; i < r->nvalues; i++) {
        if (i)
            strbuf_addch(out, ',');
        strbuf_add_json_str(out, r->values[i]);
    }
    strbuf_addch(out, ']');
}

/*
 * Checks a decoded label requirement as labels.NewRequirement does (nodeaffinity.go
 * nodeSelectorRequirementsAsSelector) and parses a Gt/Lt operand. path is the requirement's.
 */
static void check_label_req(struct sched_sel_req *r, const char *path, struct field_errors *errs)
{
    struct strbuf why = STRBUF_INIT, f = STRBUF_INIT, v = STRBUF_INIT;

    if (labels_check_qualified_name(r->key, &why) < 0) {
        strbuf_addf(&f, "%s.key", path);
        strbuf_add_json_str(&v, r->key);
        field_error_add(errs, FIELD_INVALID, f.buf, v.buf, "%s", why.buf);
    }
    strbuf_reset(&f);
    strbuf_reset(&v);
    strbuf_addf(&f, "%s.values", path);
    values_repr(r, &v);
    switch (r->op) {
    case SCHED_OP_IN:
    case SCHED_OP_NOT_IN:
        if (r->nvalues == 0)
            field_error_add(errs, FIELD_INVALID, f.buf, v.buf,
                            "for 'in', 'notin' operators, values set can't be empty");
        break;
    case SCHED_OP_EXISTS:
    case SCHED_OP_DOES_NOT_EXIST:
        if (r->nvalues != 0)
            field_error_add(errs, FIELD_INVALID, f.buf, v.buf,
                            "values set must be empty for exists and does not exist");
        break;
    case SCHED_OP_GT:
    case SCHED_OP_LT:
        if (r->nvalues != 1)
            field_error_add(errs, FIELD_INVALID, f.buf, v.buf,
                            "for 'Gt', 'Lt' operators, exactly one value is required");
        for (size_t i = 0; i < r->nvalues; i++) {
            if (parse_i64(r->values[i], &r->num) == 0)
                continue;
            strbuf_reset(&f);
            strbuf_reset(&v);
            strbuf_addf(&f, "%s.values[%zu]", path, i);
            strbuf_add_json_str(&v, r->values[i]);
            field_error_add(errs, FIELD_INVALID, f.buf, v.buf,
                            "for 'Gt', 'Lt' operators, the value must be an integer");
        }
        break;
    }
    for (size_t i = 0; i < r->nvalues; i++) {
        strbuf_reset(&why);
        if (labels_check_value(r->values[i], &why) == 0)
            continue;
        strbuf_reset(&f);
        strbuf_reset(&v);
        /* validateLabelValue: valuePath.Index(i).Key(key). */
        strbuf_addf(&f, "%s.values[%zu][%s]", path, i, r->key);
        strbuf_add_json_str(&v, r->values[i]);
        field_error_add(errs, FIELD_INVALID, f.buf, v.buf, "%s", why.buf);
    }
    strbuf_release(&why);
    strbuf_release(&f);
    strbuf_release(&v);
}

/*
 * Decodes one NodeSelectorRequirement at path into *r (zeroed first). fields: a matchFields
 * entry (In/NotIn with one value only). Returns false, with errors added, when it is unusable.
 */
static bool decode_req(const cJSON *o, const char *path, bool fields, struct sched_sel_req *r,
                       struct field_errors *errs)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "operator");
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(o, "values");
    size_t before = field_errors_count(errs), nops = fields ? 2 : ARRAY_SIZE(label_ops);
    struct strbuf f = STRBUF_INIT, v = STRBUF_INIT, got = STRBUF_INIT;
    const cJSON *e;
    size_t i;

    memset(r, 0, sizeof(*r));
    if (!cJSON_IsObject(o)) {
        bad_type(errs, path, o, "an object");
        goto out;
    }
    strbuf_addf(&f, "%s.key", path);
    if (!absent(key) && !cJSON_IsString(key))
        bad_type(errs, f.buf, key, "a string");
    r->key = xstrdup(cJSON_IsString(key) ? key->valuestring : "");
    strbuf_reset(&f);
    strbuf_addf(&f, "%s.values", path);
    if (!absent(vals) && !cJSON_IsArray(vals))
        bad_type(errs, f.buf, vals, "an array of strings");
    if (cJSON_IsArray(vals) && cJSON_GetArraySize(vals) > 0) {
        r->values = xcalloc((size_t)cJSON_GetArraySize(vals), sizeof(*r->values));
        i = 0;
        cJSON_ArrayForEach(e, vals)
        {
            if (!cJSON_IsString(e)) {
                strbuf_reset(&f);
                strbuf_addf(&f, "%s.values[%zu]", path, i);
                bad_type(errs, f.buf, e, "a string");
            }
            r->values[r->nvalues++] = xstrdup(cJSON_IsString(e) ? e->valuestring : "");
            i++;
        }
    }
    strbuf_reset(&f);
    strbuf_addf(&f, "%s.operator", path);
    for (i = 0; i < nops; i++)
        if (cJSON_IsString(op) && !strcmp(op->valuestring, label_ops[i]))
            break;
    if (i == nops) {
        strbuf_addstr(&v, "supported values: ");
        for (size_t j = 0; j < nops; j++) {
            if (j)
                strbuf_addstr(&v, ", ");
            strbuf_add_json_str(&v, label_ops[j]);
        }
        if (absent(op))
            strbuf_addstr(&got, "\"\"");
        else
            api_value_repr(op, &got);
        field_error_add(errs, FIELD_NOT_SUPPORTED, f.buf, got.buf, "%s", v.buf);
        goto out;
    }
    r->op = (enum sched_sel_op)i; /* label_ops is in enum sched_sel_op order */
    if (fields) {
        /* nodeSelectorRequirementsAsFieldSelector: keys are not checked. */
        if (r->nvalues != 1) {
            strbuf_reset(&f);
            strbuf_reset(&v);
            strbuf_addf(&f, "%s.values", path);
            values_repr(r, &v);
            field_error_add(errs, FIELD_INVALID, f.buf, v.buf, "must have one element");
        }
    } else {
        check_label_req(r, path, errs);
    }
out:
    strbuf_release(&f);
    strbuf_release(&v);
    strbuf_release(&got);
    return field_errors_count(errs) == before;
}

/* Whether v is a JSON number holding an int32 exactly. */
static bool is_int32(const cJSON *v)
{
    double d;

    if (!cJSON_IsNumber(v))
        return false;
    d = v->valuedouble;
    return d >= INT32_MIN && d <= INT32_MAX && d == (double)(int64_t)d;
}

static size_t list_size(const cJSON *v)
{
    return cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) : 0;
}

/* Whether a NodeSelectorTerm object has no requirement at all (it then selects nothing and
 * upstream drops it before parsing). */
static bool term_is_empty(const cJSON *o)
{
    return list_size(cJSON_GetObjectItemCaseSensitive(o, "matchExpressions")) == 0 &&
           list_size(cJSON_GetObjectItemCaseSensitive(o, "matchFields")) == 0;
}

/* Decodes a requirement list (matchExpressions or matchFields) of a term object at path. */
static void decode_reqs(const cJSON *term, const char *member, const char *path, bool fields,
                        struct sched_sel_req **ret, size_t *ret_n, struct field_errors *errs)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(term, member);
    struct strbuf p = STRBUF_INIT;
    const cJSON *e;
    size_t i = 0;

    if (!absent(arr) && !cJSON_IsArray(arr)) {
        strbuf_addf(&p, "%s.%s", path, member);
        bad_type(errs, p.buf, arr, "an array");
    }
    if (list_size(arr) == 0)
        goto out;
    *ret = xcalloc(list_size(arr), sizeof(**ret));
    cJSON_ArrayForEach(e, arr)
    {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s.%s[%zu]", path, member, i++);
        if (decode_req(e, p.buf, fields, &(*ret)[*ret_n], errs))
            (*ret_n)++;
        else
            req_release(&(*ret)[*ret_n]);
    }
out:
    strbuf_release(&p);
}

/* Decodes a NodeSelectorTerm object at path into *t (zeroed first). */
static void decode_term(const cJSON *o, const char *path, struct sched_node_term *t,
                        struct field_errors *errs)
{
    memset(t, 0, sizeof(*t));
    if (!cJSON_IsObject(o)) {
        bad_type(errs, path, o, "an object");
        return;
    }
    decode_reqs(o, "matchExpressions", path, false, &t->exprs, &t->nexprs, errs);
    decode_reqs(o, "matchFields", path, true, &t->fields, &t->nfields, errs);
}

/* addedAffinity.requiredDuringSchedulingIgnoredDuringExecution (a NodeSelector) at path. */
static void decode_required(const cJSON *o, const char *path, struct na *pl,
                            struct field_errors *errs)
{
    struct sched_node_selector *s = xcalloc(1, sizeof(*s));
    const cJSON *terms = cJSON_GetObjectItemCaseSensitive(o, "nodeSelectorTerms");
    struct strbuf p = STRBUF_INIT;
    const cJSON *e;
    size_t i = 0;

    pl->added_required = s;
    if (!cJSON_IsObject(o)) {
        bad_type(errs, path, o, "an object");
        goto out;
    }
    if (!absent(terms) && !cJSON_IsArray(terms)) {
        strbuf_addf(&p, "%s.nodeSelectorTerms", path);
        bad_type(errs, p.buf, terms, "an array");
    }
    if (list_size(terms) == 0)
        goto out;
    s->terms = xcalloc(list_size(terms), sizeof(*s->terms));
    cJSON_ArrayForEach(e, terms)
    {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s.nodeSelectorTerms[%zu]", path, i++);
        if (cJSON_IsObject(e) && term_is_empty(e))
            continue;
        decode_term(e, p.buf, &s->terms[s->nterms++], errs);
    }
out:
    strbuf_release(&p);
}

/* addedAffinity.preferredDuringSchedulingIgnoredDuringExecution at path. As upstream
 * (NewPreferredSchedulingTerms), a term's errors are reported under "<path>[i]" directly,
 * without ".preference". */
static void decode_preferred(const cJSON *arr, const char *path, struct na *pl,
                             struct field_errors *errs)
{
    struct strbuf p = STRBUF_INIT;
    const cJSON *e;
    size_t i = 0;

    if (!cJSON_IsArray(arr)) {
        bad_type(errs, path, arr, "an array");
        goto out;
    }
    if (list_size(arr) == 0)
        goto out;
    pl->added_pref = xcalloc(list_size(arr), sizeof(*pl->added_pref));
    cJSON_ArrayForEach(e, arr)
    {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "weight");
        const cJSON *pref = cJSON_GetObjectItemCaseSensitive(e, "preference");
        struct sched_pref_term *t = &pl->added_pref[pl->nadded_pref];

        strbuf_reset(&p);
        strbuf_addf(&p, "%s[%zu]", path, i++);
        if (!cJSON_IsObject(e)) {
            bad_type(errs, p.buf, e, "an object");
            continue;
        }
        if (!absent(w) && !is_int32(w)) {
            strbuf_addstr(&p, ".weight");
            bad_type(errs, p.buf, w, "a 32-bit integer");
            continue;
        }
        if (!absent(pref) && !cJSON_IsObject(pref)) {
            strbuf_addstr(&p, ".preference");
            bad_type(errs, p.buf, pref, "an object");
            continue;
        }
        if (absent(w) || w->valuedouble == 0 || absent(pref) || term_is_empty(pref))
            continue;
        t->weight = (int32_t)w->valuedouble;
        decode_term(pref, p.buf, &t->term, errs);
        pl->nadded_pref++;
    }
out:
    strbuf_release(&p);
}

/* NodeAffinityArgs {addedAffinity} (ValidateNodeAffinityArgs + New). */
static int na_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                   struct field_errors *errs)
{
    struct na *pl = xcalloc(1, sizeof(*pl));
    size_t before = field_errors_count(errs);
    struct strbuf p = STRBUF_INIT;
    const cJSON *added, *req, *pref;
    size_t base;

    (void)h;
    if (absent(args))
        goto out;
    if (!cJSON_IsObject(args)) {
        bad_type(errs, path && *path ? path : "args", args, "an object");
        goto out;
    }
    added = cJSON_GetObjectItemCaseSensitive(args, "addedAffinity");
    if (absent(added))
        goto out;
    strbuf_addf(&p, "%s%saddedAffinity", path ? path : "", path && *path ? "." : "");
    if (!cJSON_IsObject(added)) {
        bad_type(errs, p.buf, added, "an object");
        goto out;
    }
    pl->added = true;
    req = cJSON_GetObjectItemCaseSensitive(added, "requiredDuringSchedulingIgnoredDuringExecution");
    pref =
        cJSON_GetObjectItemCaseSensitive(added, "preferredDuringSchedulingIgnoredDuringExecution");
    base = p.len;
    if (!absent(req)) {
        strbuf_addstr(&p, ".requiredDuringSchedulingIgnoredDuringExecution");
        decode_required(req, p.buf, pl, errs);
        strbuf_setlen(&p, base);
    }
    if (!absent(pref)) {
        strbuf_addstr(&p, ".preferredDuringSchedulingIgnoredDuringExecution");
        decode_preferred(pref, p.buf, pl, errs);
    }
out:
    strbuf_release(&p);
    if (field_errors_count(errs) != before) {
        na_free(pl);
        return -EINVAL;
    }
    *ret_self = pl;
    return 0;
}

/* ---- extension points ---- */

/* The intersection of the metadata.name In sets of one term, or NULL when none pins names. */
static char **term_names(const struct sched_node_term *t, size_t *ret_n)
{
    char **v = NULL;
    size_t n = 0;
    bool any = false;

    for (size_t i = 0; i < t->nfields; i++) {
        const struct sched_sel_req *f = &t->fields[i];
        if (f->op != SCHED_OP_IN || strcmp(f->key, NAME_FIELD))
            continue;
        if (!any) {
            any = true;
            v = xcalloc(f->nvalues ? f->nvalues : 1, sizeof(*v));
            for (size_t j = 0; j < f->nvalues; j++) {
                bool dup = false;
                for (size_t k = 0; k < n && !dup; k++)
                    dup = !strcmp(v[k], f->values[j]);
                if (!dup)
                    v[n++] = xstrdup(f->values[j]);
            }
            continue;
        }
        size_t kept = 0;
        for (size_t k = 0; k < n; k++) {
            bool in = false;
            for (size_t j = 0; j < f->nvalues && !in; j++)
                in = !strcmp(v[k], f->values[j]);
            if (in)
                v[kept++] = v[k];
            else
                free(v[k]);
        }
        n = kept;
    }
    *ret_n = n;
    return v;
}

static void names_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static enum sched_code na_pre_filter(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod,
                                     struct sched_prefilter_result *res, struct sched_status *st)
{
    const struct na *pl = self;
    const struct sched_node_selector *req = pod->required_node;
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool pinned = true;

    (void)cs;
    if (!req && !(pl && pl->added) && pod->nnode_selector == 0)
        return SCHED_SKIP;
    /* Nothing in the cycle state: Filter reads the pod's decoded selectors directly. */
    if (!req || req->nterms == 0)
        return SCHED_SUCCESS;
    /* The terms are ORed: the union of each term's pinned names, unless one pins none. */
    for (size_t i = 0; i < req->nterms && pinned; i++) {
        size_t tn;
        char **t = term_names(&req->terms[i], &tn);
        if (!t) {
            pinned = false;
            break;
        }
        for (size_t j = 0; j < tn; j++) {
            bool dup = false;
            for (size_t k = 0; k < n && !dup; k++)
                dup = !strcmp(names[k], t[j]);
            if (dup) {
                free(t[j]);
                continue;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 4;
                names = xrealloc(names, cap * sizeof(*names));
            }
            names[n++] = t[j];
        }
        free(t);
    }
    if (!pinned) {
        names_free(names, n);
        return SCHED_SUCCESS;
    }
    if (n == 0) {
        free(names);
        return sched_status_set(st, SCHED_UNRESOLVABLE, "pod affinity terms conflict");
    }
    res->names = names;
    res->n = n;
    res->restrict_nodes = true;
    return SCHED_SUCCESS;
}

static enum sched_code na_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const struct sched_node_info *ni, struct sched_status *st)
{
    const struct na *pl = self;
    const struct sched_node *node = ni->node;

    (void)cs;
    if (!node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    if (pl && pl->added_required &&
        !sched_node_selector_matches(pl->added_required, node->labels, node->name))
        return sched_status_set(st, SCHED_UNRESOLVABLE,
                                "node(s) didn't match scheduler-enforced node affinity");
    for (size_t i = 0; i < pod->nnode_selector; i++)
        if (!sched_sel_req_matches(&pod->node_selector[i], node->labels))
            goto reject;
    if (pod->required_node &&
        !sched_node_selector_matches(pod->required_node, node->labels, node->name))
        goto reject;
    return SCHED_SUCCESS;
reject:
    return sched_status_set(st, SCHED_UNRESOLVABLE,
                            "node(s) didn't match Pod's node affinity/selector");
}

static enum sched_code na_pre_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                    struct sched_node_info *const *nodes, size_t n,
                                    struct sched_status *st)
{
    const struct na *pl = self;

    (void)cs;
    (void)nodes;
    (void)st;
    if (n == 0)
        return SCHED_SUCCESS;
    /* The pod's preferred terms are already decoded: nothing to keep but the decision. */
    if (pod->npreferred_node == 0 && !(pl && pl->added))
        return SCHED_SKIP;
    return SCHED_SUCCESS;
}

/* PreferredSchedulingTerms.Score: the weights of the terms node matches. */
static int64_t pref_score(const struct sched_pref_term *v, size_t n, const struct sched_node *node)
{
    int64_t s = 0;

    for (size_t i = 0; i < n; i++)
        if (v[i].weight != 0 && sched_node_term_matches(&v[i].term, node->labels, node->name))
            s += v[i].weight;
    return s;
}

static enum sched_code na_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                const struct sched_node_info *ni, int64_t *ret_score,
                                struct sched_status *st)
{
    const struct na *pl = self;
    const struct sched_node *node = ni->node;
    int64_t count = 0;

    (void)cs;
    if (!node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    if (pl)
        count += pref_score(pl->added_pref, pl->nadded_pref, node);
    count += pref_score(pod->preferred_node, pod->npreferred_node, node);
    *ret_score = count;
    return SCHED_SUCCESS;
}

/* helper.DefaultNormalizeScore(MaxNodeScore, reverse=false). */
static enum sched_code na_normalize(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                    struct sched_node_score *scores, size_t n,
                                    struct sched_status *st)
{
    int64_t max = 0;

    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max)
            max = scores[i].score;
    if (max == 0)
        return SCHED_SUCCESS;
    for (size_t i = 0; i < n; i++)
        scores[i].score = SCHED_MAX_NODE_SCORE * scores[i].score / max;
    return SCHED_SUCCESS;
}

static const struct sched_event_reg na_events[] = {
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_node_affinity = {
    .name = "NodeAffinity",
    .args_kind = "NodeAffinityArgs",
    .default_weight = 2,
    .events = na_events,
    .init = na_init,
    .free = na_free,
    .pre_filter = na_pre_filter,
    .filter = na_filter,
    .pre_score = na_pre_score,
    .score = na_score,
    .normalize = na_normalize,
};
