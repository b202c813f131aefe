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
#include <stdarg.h>
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

#define get cJSON_GetObjectItemCaseSensitive

/* Whether a JSON member is absent or null (Go's nil). */
static bool absent(const cJSON *v)
{
    return !v || cJSON_IsNull(v);
}

static size_t list_size(const cJSON *v)
{
    return cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) : 0;
}

/* Resets sb to the printf-style text; returns sb->buf. */
static const char *fmt_into(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *fmt_into(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;

    strbuf_reset(sb);
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
    return sb->buf;
}

/* s as a quoted Go string, into sb (reset first). */
static const char *quote(const char *s, struct strbuf *sb)
{
    strbuf_reset(sb);
    strbuf_add_json_str(sb, s);
    return sb->buf;
}

/* The values of a requirement as field.Invalid prints a []string (Go's %#v), into sb. */
static const char *values_repr(const struct sched_sel_req *r, struct strbuf *sb)
{
    strbuf_reset(sb);
    if (r->nvalues == 0) {
        strbuf_addstr(sb, "[]string(nil)");
        return sb->buf;
    }
    strbuf_addstr(sb, "[]string{");
    for (size_t i = 0; i < r->nvalues; i++) {
        if (i)
            strbuf_addstr(sb, ", ");
        strbuf_add_json_str(sb, r->values[i]);
    }
    strbuf_addch(sb, '}');
    return sb->buf;
}

/* Reports v at field as the wrong JSON type. */
static void bad_type(struct field_errors *errs, const char *field, const cJSON *v, const char *want)
{
    struct strbuf r = STRBUF_INIT;

    api_value_repr(v, &r);
    field_error_add(errs, FIELD_INVALID, field, r.buf, "must be %s", want);
    strbuf_release(&r);
}

/* In enum sched_sel_op order; matchFields take the first two only (field.NotSupported lists). */
static const char *const label_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
#define LABEL_OPS                                                                                  \
    "supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""
#define FIELD_OPS "supported values: \"In\", \"NotIn\""

/*
 * Checks a decoded label requirement as labels.NewRequirement does (nodeaffinity.go
 * nodeSelectorRequirementsAsSelector) and parses a Gt/Lt operand. path is the requirement's.
 */
static void check_label_req(struct sched_sel_req *r, const char *path, struct field_errors *errs)
{
    struct strbuf why = STRBUF_INIT, f = STRBUF_INIT, v = STRBUF_INIT;
    const char *detail = NULL;

    if (labels_check_qualified_name(r->key, &why) < 0)
        field_error_add(errs, FIELD_INVALID, fmt_into(&f, "%s.key", path), quote(r->key, &v), "%s",
                        why.buf);
    if ((r->op == SCHED_OP_IN || r->op == SCHED_OP_NOT_IN) && r->nvalues == 0)
        detail = "for 'in', 'notin' operators, values set can't be empty";
    else if ((r->op == SCHED_OP_EXISTS || r->op == SCHED_OP_DOES_NOT_EXIST) && r->nvalues != 0)
        detail = "values set must be empty for exists and does not exist";
    else if ((r->op == SCHED_OP_GT || r->op == SCHED_OP_LT) && r->nvalues != 1)
        detail = "for 'Gt', 'Lt' operators, exactly one value is required";
    if (detail)
        field_error_add(errs, FIELD_INVALID, fmt_into(&f, "%s.values", path), values_repr(r, &v),
                        "%s", detail);
    for (size_t i = 0; (r->op == SCHED_OP_GT || r->op == SCHED_OP_LT) && i < r->nvalues; i++)
        if (parse_i64(r->values[i], &r->num) < 0)
            field_error_add(errs, FIELD_INVALID, fmt_into(&f, "%s.values[%zu]", path, i),
                            quote(r->values[i], &v),
                            "for 'Gt', 'Lt' operators, the value must be an integer");
    for (size_t i = 0; i < r->nvalues; i++) {
        strbuf_reset(&why);
        /* validateLabelValue: valuePath.Index(i).Key(key). */
        if (labels_check_value(r->values[i], &why) < 0)
            field_error_add(errs, FIELD_INVALID,
                            fmt_into(&f, "%s.values[%zu][%s]", path, i, r->key),
                            quote(r->values[i], &v), "%s", why.buf);
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
    const cJSON *key = get(o, "key"), *op = get(o, "operator"), *vals = get(o, "values"), *e;
    size_t before = field_errors_count(errs), nops = fields ? 2 : ARRAY_SIZE(label_ops), i;
    struct strbuf f = STRBUF_INIT, v = STRBUF_INIT;

    memset(r, 0, sizeof(*r));
    if (!cJSON_IsObject(o)) {
        bad_type(errs, path, o, "an object");
        goto out;
    }
    if (!absent(key) && !cJSON_IsString(key))
        bad_type(errs, fmt_into(&f, "%s.key", path), key, "a string");
    r->key = xstrdup(cJSON_IsString(key) ? key->valuestring : "");
    if (!absent(vals) && !cJSON_IsArray(vals))
        bad_type(errs, fmt_into(&f, "%s.values", path), vals, "an array");
    if (!cJSON_IsArray(vals))
        vals = NULL; /* bad type reported above; nothing to walk */
    if (list_size(vals))
        r->values = xcalloc(list_size(vals), sizeof(*r->values));
    cJSON_ArrayForEach(e, vals)
    {
        if (!cJSON_IsString(e))
            bad_type(errs, fmt_into(&f, "%s.values[%zu]", path, r->nvalues), e, "a string");
        r->values[r->nvalues++] = xstrdup(cJSON_IsString(e) ? e->valuestring : "");
    }
    if (field_errors_count(errs) != before)
        goto out; /* checking the values of a malformed one would only repeat the cause */
    for (i = 0; i < nops; i++)
        if (cJSON_IsString(op) && !strcmp(op->valuestring, label_ops[i]))
            break;
    if (i == nops) {
        if (absent(op))
            strbuf_addstr(&v, "\"\"");
        else
            api_value_repr(op, &v);
        field_error_add(errs, FIELD_NOT_SUPPORTED, fmt_into(&f, "%s.operator", path), v.buf, "%s",
                        fields ? FIELD_OPS : LABEL_OPS);
        goto out;
    }
    r->op = (enum sched_sel_op)i;
    if (!fields) {
        check_label_req(r, path, errs);
        goto out;
    }
    /* Upstream does not check a field's key, but a node has no field but metadata.name: any
     * other key could never mean anything, so it is refused as the pod API refuses it. */
    if (strcmp(r->key, NAME_FIELD))
        field_error_add(errs, FIELD_NOT_SUPPORTED, fmt_into(&f, "%s.key", path), quote(r->key, &v),
                        "supported values: \"" NAME_FIELD "\"");
    if (r->nvalues != 1)
        field_error_add(errs, FIELD_INVALID, fmt_into(&f, "%s.values", path), values_repr(r, &v),
                        "must have one element");
out:
    strbuf_release(&f);
    strbuf_release(&v);
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

/* Whether a NodeSelectorTerm object has no requirement at all (it then selects nothing and
 * upstream drops it before parsing); a member of the wrong type is not "empty" but an error. */
static bool term_is_empty(const cJSON *o)
{
    const cJSON *x = get(o, "matchExpressions"), *f = get(o, "matchFields");

    return (absent(x) || (cJSON_IsArray(x) && !x->child)) &&
           (absent(f) || (cJSON_IsArray(f) && !f->child));
}

/* Decodes a requirement list (matchExpressions or matchFields) of a term object at path. */
static void decode_reqs(const cJSON *term, const char *member, const char *path, bool fields,
                        struct sched_sel_req **ret, size_t *ret_n, struct field_errors *errs)
{
    const cJSON *arr = get(term, member), *e;
    struct strbuf p = STRBUF_INIT;
    size_t i = 0;

    if (!absent(arr) && !cJSON_IsArray(arr))
        bad_type(errs, fmt_into(&p, "%s.%s", path, member), arr, "an array");
    if (!cJSON_IsArray(arr))
        arr = NULL; /* bad type reported above; nothing to walk */
    if (list_size(arr))
        *ret = xcalloc(list_size(arr), sizeof(**ret));
    cJSON_ArrayForEach(e, arr)
    {
        if (decode_req(e, fmt_into(&p, "%s.%s[%zu]", path, member, i++), fields, &(*ret)[*ret_n],
                       errs))
            (*ret_n)++;
        else
            req_release(&(*ret)[*ret_n]);
    }
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
    const cJSON *terms = get(o, "nodeSelectorTerms"), *e;
    struct strbuf p = STRBUF_INIT;
    size_t i = 0;

    pl->added_required = s;
    if (!cJSON_IsObject(o)) {
        bad_type(errs, path, o, "an object");
        goto out;
    }
    if (!absent(terms) && !cJSON_IsArray(terms))
        bad_type(errs, fmt_into(&p, "%s.nodeSelectorTerms", path), terms, "an array");
    if (!cJSON_IsArray(terms))
        terms = NULL; /* bad type reported above; nothing to walk */
    if (list_size(terms))
        s->terms = xcalloc(list_size(terms), sizeof(*s->terms));
    cJSON_ArrayForEach(e, terms)
    {
        fmt_into(&p, "%s.nodeSelectorTerms[%zu]", path, i++);
        if (!cJSON_IsObject(e) || !term_is_empty(e))
            decode_term(e, p.buf, &s->terms[s->nterms++], errs);
    }
out:
    strbuf_release(&p);
}

/* addedAffinity.preferredDuringSchedulingIgnoredDuringExecution at path. As upstream
 * (NewPreferredSchedulingTerms), a term's errors are reported under "<path>[i]" directly,
 * without ".preference". Terms with weight 0 or no requirement are dropped. */
static void decode_preferred(const cJSON *arr, const char *path, struct na *pl,
                             struct field_errors *errs)
{
    struct strbuf p = STRBUF_INIT, c = STRBUF_INIT;
    const cJSON *e;
    size_t i = 0;

    if (!cJSON_IsArray(arr))
        bad_type(errs, path, arr, "an array");
    if (!cJSON_IsArray(arr))
        arr = NULL; /* bad type reported above; nothing to walk */
    if (list_size(arr))
        pl->added_pref = xcalloc(list_size(arr), sizeof(*pl->added_pref));
    cJSON_ArrayForEach(e, arr)
    {
        const cJSON *w = get(e, "weight"), *pref = get(e, "preference");
        struct sched_pref_term *t = &pl->added_pref[pl->nadded_pref];

        fmt_into(&p, "%s[%zu]", path, i++);
        if (!cJSON_IsObject(e))
            bad_type(errs, p.buf, e, "an object");
        else if (!absent(w) && !is_int32(w))
            bad_type(errs, fmt_into(&c, "%s.weight", p.buf), w, "a 32-bit integer");
        else if (!absent(pref) && !cJSON_IsObject(pref))
            bad_type(errs, fmt_into(&c, "%s.preference", p.buf), pref, "an object");
        else if (!absent(w) && w->valuedouble != 0 && !absent(pref) && !term_is_empty(pref)) {
            t->weight = (int32_t)w->valuedouble;
            decode_term(pref, p.buf, &t->term, errs);
            pl->nadded_pref++;
        }
    }
    strbuf_release(&p);
    strbuf_release(&c);
}

/* NodeAffinityArgs {addedAffinity} (ValidateNodeAffinityArgs + New). */
static int na_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                   struct field_errors *errs)
{
    struct na *pl = xcalloc(1, sizeof(*pl));
    size_t before = field_errors_count(errs);
    const char *dot = path && *path ? "." : "";
    struct strbuf p = STRBUF_INIT;
    const cJSON *added, *req, *pref;

    (void)h;
    path = path ? path : "";
    if (absent(args))
        goto out;
    if (!cJSON_IsObject(args)) {
        bad_type(errs, *path ? path : "args", args, "an object");
        goto out;
    }
    added = get(args, "addedAffinity");
    if (absent(added))
        goto out;
    if (!cJSON_IsObject(added)) {
        bad_type(errs, fmt_into(&p, "%s%saddedAffinity", path, dot), added, "an object");
        goto out;
    }
    pl->added = true;
    req = get(added, "requiredDuringSchedulingIgnoredDuringExecution");
    pref = get(added, "preferredDuringSchedulingIgnoredDuringExecution");
    if (!absent(req))
        decode_required(req,
                        fmt_into(&p,
                                 "%s%saddedAffinity.requiredDuringSchedulingIgnoredDuring"
                                 "Execution",
                                 path, dot),
                        pl, errs);
    if (!absent(pref))
        decode_preferred(pref,
                         fmt_into(&p,
                                  "%s%saddedAffinity.preferredDuringSchedulingIgnoredDuring"
                                  "Execution",
                                  path, dot),
                         pl, errs);
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

/* Whether a matchFields requirement pins node names (metadata.name In [...]). */
static bool pins_names(const struct sched_sel_req *f)
{
    return f->op == SCHED_OP_IN && !strcmp(f->key, NAME_FIELD);
}

static bool has_value(const struct sched_sel_req *f, const char *v)
{
    for (size_t i = 0; i < f->nvalues; i++)
        if (!strcmp(f->values[i], v))
            return true;
    return false;
}

/*
 * Adds to the union in *res the names one term pins: the intersection of its metadata.name In
 * sets (the requirements are ANDed). False when the term pins none (any node may match it).
 */
static bool add_term_names(const struct sched_node_term *t, struct sched_prefilter_result *res,
                           size_t *cap)
{
    const struct sched_sel_req *first = NULL;

    for (size_t i = 0; i < t->nfields && !first; i++)
        if (pins_names(&t->fields[i]))
            first = &t->fields[i];
    if (!first)
        return false;
    for (size_t j = 0; j < first->nvalues; j++) {
        const char *v = first->values[j];
        bool in_all = true, dup = false;
        for (const struct sched_sel_req *g = first + 1; g < t->fields + t->nfields; g++)
            in_all = in_all && (!pins_names(g) || has_value(g, v));
        for (size_t k = 0; k < res->n && !dup; k++)
            dup = !strcmp(res->names[k], v);
        if (!in_all || dup)
            continue;
        if (res->n == *cap) {
            *cap = *cap ? 2 * *cap : 4;
            res->names = xrealloc(res->names, *cap * sizeof(*res->names));
        }
        res->names[res->n++] = xstrdup(v);
    }
    return true;
}

static void result_clear(struct sched_prefilter_result *res)
{
    for (size_t i = 0; i < res->n; i++)
        free(res->names[i]);
    free(res->names);
    memset(res, 0, sizeof(*res));
}

static enum sched_code na_pre_filter(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod,
                                     struct sched_prefilter_result *res, struct sched_status *st)
{
    const struct na *pl = self;
    const struct sched_node_selector *req = pod->required_node;
    struct sched_prefilter_result r = {0};
    size_t cap = 0;

    (void)cs;
    if (!req && !(pl && pl->added) && pod->nnode_selector == 0)
        return SCHED_SKIP;
    /* Nothing goes into the cycle state: Filter reads the pod's decoded selectors. The terms
     * are ORed: the union of each term's pinned names, unless one term pins none. */
    for (size_t i = 0; req && i < req->nterms; i++) {
        if (!add_term_names(&req->terms[i], &r, &cap)) {
            result_clear(&r);
            return SCHED_SUCCESS;
        }
    }
    if (!req || req->nterms == 0)
        return SCHED_SUCCESS;
    if (r.n == 0) {
        result_clear(&r);
        return sched_status_set(st, SCHED_UNRESOLVABLE, "pod affinity terms conflict");
    }
    r.restrict_nodes = true;
    *res = r;
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
