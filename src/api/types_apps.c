/*
 * apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet and ControllerRevision, with the
 * defaults of pkg/apis/apps/v1/defaults.go and the rules of pkg/apis/apps/validation (kubernetes
 * 1.33), and the helpers every workload kind shares (workloads.h). Field names are upstream's,
 * every one listed, so unknown-field detection is exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/workloads.h"
#include "base/base.h"
#include "codec/patch.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return cJSON_IsNull(c) ? NULL : c;
}

const cJSON *api_get_path(const cJSON *o, const char *path)
{
    char seg[128];

    while (o && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof(seg))
            return NULL;
        memcpy(seg, path, n);
        seg[n] = '\0';
        o = get(o, seg);
        path += n + (dot ? 1 : 0);
    }
    return o;
}

/* ---- Go renderings ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void api_go_string_map(const cJSON *m, struct strbuf *out)
{
    const char **keys = NULL;
    size_t n = 0;
    const cJSON *c;

    if (!cJSON_IsObject(m)) {
        strbuf_addstr(out, "map[string]string(nil)");
        return;
    }
    cJSON_ArrayForEach(c, m)
    {
        if (!cJSON_IsString(c))
            continue;
        keys = xrealloc(keys, (n + 1) * sizeof(*keys));
        keys[n++] = c->string;
    }
    if (n)
        qsort(keys, n, sizeof(*keys), cmp_str);
    strbuf_addstr(out, "map[string]string{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            strbuf_addstr(out, ", ");
        strbuf_add_json_str(out, keys[i]);
        strbuf_addch(out, ':');
        strbuf_add_json_str(out, cJSON_GetObjectItemCaseSensitive(m, keys[i])->valuestring);
    }
    strbuf_addch(out, '}');
    free(keys);
}

static void go_string_slice(const cJSON *a, struct strbuf *out)
{
    const cJSON *c;
    bool first = true;

    if (!cJSON_IsArray(a)) {
        strbuf_addstr(out, "[]string(nil)");
        return;
    }
    strbuf_addstr(out, "[]string{");
    cJSON_ArrayForEach(c, a)
    {
        if (!first)
            strbuf_addstr(out, ", ");
        strbuf_add_json_str(out, cJSON_IsString(c) ? c->valuestring : "");
        first = false;
    }
    strbuf_addch(out, '}');
}

void api_go_label_selector(const cJSON *sel, struct strbuf *out)
{
    const cJSON *me = get(sel, "matchExpressions"), *c;
    bool first = true;

    if (!cJSON_IsObject(sel)) {
        strbuf_addstr(out, "null");
        return;
    }
    strbuf_addstr(out, "v1.LabelSelector{MatchLabels:");
    api_go_string_map(get(sel, "matchLabels"), out);
    strbuf_addstr(out, ", MatchExpressions:");
    if (!cJSON_IsArray(me)) {
        strbuf_addstr(out, "[]v1.LabelSelectorRequirement(nil)}");
        return;
    }
    strbuf_addstr(out, "[]v1.LabelSelectorRequirement{");
    cJSON_ArrayForEach(c, me)
    {
        const cJSON *k = get(c, "key"), *op = get(c, "operator");
        if (!first)
            strbuf_addstr(out, ", ");
        strbuf_addstr(out, "v1.LabelSelectorRequirement{Key:");
        strbuf_add_json_str(out, cJSON_IsString(k) ? k->valuestring : "");
        strbuf_addstr(out, ", Operator:");
        strbuf_add_json_str(out, cJSON_IsString(op) ? op->valuestring : "");
        strbuf_addstr(out, ", Values:");
        go_string_slice(get(c, "values"), out);
        strbuf_addch(out, '}');
        first = false;
    }
    strbuf_addstr(out, "}}");
}

void api_go_int_or_string(const cJSON *v, struct strbuf *out)
{
    if (cJSON_IsString(v)) {
        strbuf_addstr(out, "intstr.IntOrString{Type:1, IntVal:0, StrVal:");
        strbuf_add_json_str(out, v->valuestring);
        strbuf_addch(out, '}');
    } else {
        strbuf_addf(out, "intstr.IntOrString{Type:0, IntVal:%d, StrVal:\"\"}",
                    cJSON_IsNumber(v) ? (int)v->valuedouble : 0);
    }
}

int api_selector_string(const cJSON *sel, struct strbuf *out)
{
    struct label_selector *ls = NULL;
    int r;

    if (!cJSON_IsObject(sel))
        return 0;
    r = label_selector_from_json(sel, &ls, NULL);
    if (r < 0)
        return r;
    label_selector_format(ls, out);
    label_selector_free(ls);
    return 0;
}

/* ---- int-or-percent ---- */

/* "N%" with N digits only (IsValidPercent); *ret = N. */
static bool parse_percent(const char *s, long *ret)
{
    long n = 0;
    const char *p = s;

    if (!*p || *p == '%')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (*p - '0');
        if (n > 1000000000L)
            return false;
    }
    if (strcmp(p, "%"))
        return false;
    *ret = n;
    return true;
}

int api_int_or_percent_scaled(const cJSON *v, int total, bool round_up, int *ret)
{
    long pct;

    if (cJSON_IsNumber(v)) {
        *ret = (int)v->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(v) || !parse_percent(v->valuestring, &pct))
        return -EINVAL;
    if (round_up)
        *ret = (int)((pct * (long)total + 99) / 100);
    else
        *ret = (int)(pct * (long)total / 100);
    return 0;
}

/* An error whose value is already rendered (Go's %#v of a struct, say). */
static void add_error(struct api_walk *w, const char *child, enum field_error_type type,
                      const char *value, const char *detail)
{
    size_t len = api_walk_push(w, child, 0);

    field_error_add(w->errs, type, w->path.buf, value, "%s", detail);
    api_walk_pop(w, len);
}

void api_check_int_or_percent(struct api_walk *w, const char *child, const cJSON *v,
                              bool not_over_100)
{
    struct strbuf val = STRBUF_INIT;
    long pct = 0;

    if (!v)
        return;
    api_go_int_or_string(v, &val);
    if (cJSON_IsString(v)) {
        if (!parse_percent(v->valuestring, &pct))
            add_error(w, child, FIELD_INVALID, val.buf,
                      "a valid percent string must be a numeric string followed by an ending "
                      "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')");
        else if (not_over_100 && pct > 100)
            add_error(w, child, FIELD_INVALID, val.buf, "must not be greater than 100%");
    } else if (cJSON_IsNumber(v) && v->valuedouble < 0) {
        api_check_nonnegative(w, child, v);
    }
    strbuf_release(&val);
}

void api_check_nonnegative(struct api_walk *w, const char *child, const cJSON *v)
{
    if (cJSON_IsNumber(v) && v->valuedouble < 0)
        api_walk_error(w, child, FIELD_INVALID, v, "must be greater than or equal to 0");
}

/* ---- selector and template ---- */

void api_check_workload_template(struct api_walk *w, const cJSON *spec, unsigned rules,
                                 const char *empty_kind, const char *deadline_kind)
{
    const cJSON *sel = get(spec, "selector"), *tpl = get(spec, "template");
    const cJSON *labels = api_get_path(tpl, "metadata.labels");
    const cJSON *pspec = get(tpl, "spec");
    const cJSON *restart = get(pspec, "restartPolicy");
    const char *rp =
        cJSON_IsString(restart) && *restart->valuestring ? restart->valuestring : "Always";
    struct label_selector *ls = NULL;
    struct strbuf val = STRBUF_INIT;

    if (!sel && (rules & API_TPL_SELECTOR_REQUIRED))
        api_walk_error(w, "selector", FIELD_REQUIRED, NULL, NULL);
    if (sel && (rules & API_TPL_SELECTOR_NOT_EMPTY) &&
        cJSON_GetArraySize(get(sel, "matchLabels")) +
                cJSON_GetArraySize(get(sel, "matchExpressions")) ==
            0) {
        struct strbuf detail = STRBUF_INIT;
        api_go_label_selector(sel, &val);
        strbuf_addf(&detail, "empty selector is invalid for %s", empty_kind);
        add_error(w, "selector", FIELD_INVALID, val.buf, detail.buf);
        strbuf_release(&detail);
    }
    if (sel && (rules & API_TPL_SELECTOR_MUST_MATCH) &&
        label_selector_from_json(sel, &ls, NULL) == 0 && !label_selector_is_empty(ls) &&
        !label_selector_matches(ls, labels)) {
        strbuf_reset(&val);
        api_go_string_map(labels, &val);
        add_error(w, "template.metadata.labels", FIELD_INVALID, val.buf,
                  "`selector` does not match template `labels`");
    }
    label_selector_free(ls);
    /* The template is a struct, not a pointer: without one the pod has no containers (an empty
     * list in a spec is the pod spec's own check, types_core.c). */
    if ((rules & API_TPL_POD_SPEC) && !pspec)
        api_walk_error(w, "template.spec.containers", FIELD_REQUIRED, NULL, NULL);
    if ((rules & API_TPL_RESTART_ALWAYS) && strcmp(rp, "Always")) {
        cJSON *v = cJSON_CreateString(rp);
        api_walk_error(w, "template.spec.restartPolicy", FIELD_NOT_SUPPORTED, v,
                       "supported values: \"Always\"");
        cJSON_Delete(v);
    }
    if ((rules & API_TPL_RESTART_NOT_ALWAYS) && strcmp(rp, "OnFailure") && strcmp(rp, "Never")) {
        cJSON *v = cJSON_CreateString(rp);
        api_walk_error(w, "template.spec.restartPolicy", FIELD_NOT_SUPPORTED, v,
                       "supported values: \"OnFailure\", \"Never\"");
        cJSON_Delete(v);
    }
    if ((rules & API_TPL_NO_DEADLINE) && get(pspec, "activeDeadlineSeconds")) {
        if (rules & API_TPL_DEADLINE_INVALID)
            api_walk_error(w, "template.spec.activeDeadlineSeconds", FIELD_INVALID,
                           get(pspec, "activeDeadlineSeconds"),
                           "activeDeadlineSeconds in %s is not Supported", deadline_kind);
        else
            api_walk_error(w, "template.spec.activeDeadlineSeconds", FIELD_FORBIDDEN, NULL,
                           "activeDeadlineSeconds in %s is not Supported", deadline_kind);
    }
    strbuf_release(&val);
}

void api_check_selector_immutable(const cJSON *old_sel, const cJSON *new_sel, const char *path,
                                  struct field_errors *errs)
{
    struct strbuf val = STRBUF_INIT;

    if (cJSON_IsNull(old_sel))
        old_sel = NULL;
    if (cJSON_IsNull(new_sel))
        new_sel = NULL;
    if ((!old_sel && !new_sel) || (old_sel && new_sel && json_value_equal(old_sel, new_sel)))
        return;
    api_go_label_selector(new_sel, &val);
    field_error_add(errs, FIELD_INVALID, path, val.buf, "field is immutable");
    strbuf_release(&val);
}

/* ---- defaults ---- */

int api_set_default(cJSON *o, const char *key, cJSON *v)
{
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return -ENOMEM;
    if (cur && !cJSON_IsNull(cur)) {
        cJSON_Delete(v);
        return 0;
    }
    if (cur)
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    if (!cJSON_AddItemToObject(o, key, v)) {
        cJSON_Delete(v);
        return -ENOMEM;
    }
    return 0;
}

/* o[key] as an object, made when absent or null; NULL on OOM or when it holds another type. */
static cJSON *object_at(cJSON *o, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);

    if (cJSON_IsObject(c))
        return c;
    if (c && !cJSON_IsNull(c))
        return NULL;
    if (api_set_default(o, key, cJSON_CreateObject()) < 0)
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

void api_reset_status(cJSON *obj)
{
    cJSON *st = cJSON_CreateObject();

    CHECK(st);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    CHECK(cJSON_AddItemToObject(obj, "status", st));
}

/* The rolling-update defaults of a strategy object s whose type is RollingUpdate (absent type
 * = RollingUpdate too): rollingUpdate made when absent, its maxUnavailable and maxSurge set. */
static int default_rolling(cJSON *s, cJSON *unavailable, cJSON *surge)
{
    cJSON *type = cJSON_GetObjectItemCaseSensitive(s, "type"), *ru;
    int r = 0;

    if (!cJSON_IsString(type) || !*type->valuestring) {
        cJSON_DeleteItemFromObjectCaseSensitive(s, "type");
        if (!cJSON_AddStringToObject(s, "type", "RollingUpdate"))
            r = -ENOMEM;
        type = cJSON_GetObjectItemCaseSensitive(s, "type");
    }
    if (r < 0 || !cJSON_IsString(type) || strcmp(type->valuestring, "RollingUpdate")) {
        cJSON_Delete(unavailable);
        cJSON_Delete(surge);
        return r;
    }
    if (!(ru = object_at(s, "rollingUpdate"))) {
        cJSON_Delete(unavailable);
        cJSON_Delete(surge);
        return cJSON_GetObjectItemCaseSensitive(s, "rollingUpdate") ? 0 : -ENOMEM;
    }
    r = unavailable ? api_set_default(ru, "maxUnavailable", unavailable) : 0;
    if (r == 0 && surge)
        r = api_set_default(ru, "maxSurge", surge);
    else
        cJSON_Delete(surge);
    return r;
}

/* ---- Deployment ---- */

static const struct api_prop rolling_update_deployment_props[] = {
    {"maxUnavailable", &api_int_or_string},
    {"maxSurge", &api_int_or_string},
    {NULL},
};

static const struct api_prop deployment_strategy_props[] = {
    {"type", API_ENUM("Recreate", "RollingUpdate"), API_VAL},
    {"rollingUpdate", API_OBJ(rolling_update_deployment_props)},
    {NULL},
};

static void check_deployment_spec(const struct api_schema *s, const cJSON *spec, struct api_walk *w)
{
    const cJSON *st = get(spec, "strategy"), *type = get(st, "type"),
                *ru = get(st, "rollingUpdate");
    const cJSON *mrs = get(spec, "minReadySeconds"), *pds = get(spec, "progressDeadlineSeconds");
    const char *t =
        cJSON_IsString(type) && *type->valuestring ? type->valuestring : "RollingUpdate";
    (void)s;

    api_check_nonnegative(w, "replicas", get(spec, "replicas"));
    api_check_workload_template(w, spec,
                                API_TPL_SELECTOR_REQUIRED | API_TPL_SELECTOR_NOT_EMPTY |
                                    API_TPL_SELECTOR_MUST_MATCH | API_TPL_RESTART_ALWAYS |
                                    API_TPL_NO_DEADLINE | API_TPL_POD_SPEC,
                                "deployment", "ReplicaSet");
    if (!strcmp(t, "Recreate") && ru) {
        api_walk_error(w, "strategy.rollingUpdate", FIELD_FORBIDDEN, NULL,
                       "may not be specified when strategy `type` is 'Recreate'");
    } else if (!strcmp(t, "RollingUpdate")) {
        const cJSON *mu = get(ru, "maxUnavailable"), *ms = get(ru, "maxSurge");
        int u = 1, g = 1;
        api_check_int_or_percent(w, "strategy.rollingUpdate.maxUnavailable", mu, true);
        api_check_int_or_percent(w, "strategy.rollingUpdate.maxSurge", ms, false);
        /* Absent values take their defaults (25%), which are not 0. */
        if (mu && api_int_or_percent_scaled(mu, 100, true, &u) < 0)
            u = 1;
        if (ms && api_int_or_percent_scaled(ms, 100, true, &g) < 0)
            g = 1;
        if (u == 0 && g == 0) {
            struct strbuf val = STRBUF_INIT;
            api_go_int_or_string(mu, &val);
            add_error(w, "strategy.rollingUpdate.maxUnavailable", FIELD_INVALID, val.buf,
                      "may not be 0 when `maxSurge` is 0");
            strbuf_release(&val);
        }
    }
    api_check_nonnegative(w, "minReadySeconds", mrs);
    api_check_nonnegative(w, "revisionHistoryLimit", get(spec, "revisionHistoryLimit"));
    if (cJSON_IsNumber(pds)) {
        api_check_nonnegative(w, "progressDeadlineSeconds", pds);
        if (pds->valuedouble <= (cJSON_IsNumber(mrs) ? mrs->valuedouble : 0))
            api_walk_error(w, "progressDeadlineSeconds", FIELD_INVALID, pds,
                           "must be greater than minReadySeconds");
    }
}

static const struct api_prop deployment_spec_props[] = {
    {"replicas", &api_int32, 0, "1"},
    {"selector", &api_label_selector},
    {"template", &api_pod_template, API_ALWAYS},
    {"strategy", API_OBJ(deployment_strategy_props), API_ALWAYS},
    {"minReadySeconds", &api_int32, API_VAL},
    {"revisionHistoryLimit", &api_int32, 0, "10"},
    {"paused", &api_bool, API_VAL},
    {"progressDeadlineSeconds", &api_int32, 0, "600"},
    {NULL},
};

static const struct api_prop deployment_condition_props[] = {
    {"type", &api_string, API_ALWAYS},
    {"status", &api_string, API_ALWAYS},
    {"lastUpdateTime", &api_time},
    {"lastTransitionTime", &api_time},
    {"reason", &api_string, API_VAL},
    {"message", &api_string, API_VAL},
    {NULL},
};

static const struct api_prop deployment_status_props[] = {
    {"observedGeneration", &api_int64, API_VAL},
    {"replicas", &api_int32, API_VAL},
    {"updatedReplicas", &api_int32, API_VAL},
    {"readyReplicas", &api_int32, API_VAL},
    {"availableReplicas", &api_int32, API_VAL},
    {"unavailableReplicas", &api_int32, API_VAL},
    {"terminatingReplicas", &api_int32},
    {"conditions", API_ARR(API_OBJ(deployment_condition_props))},
    {"collisionCount", &api_int32},
    {NULL},
};

/* SetDefaults_Deployment: strategy RollingUpdate with maxUnavailable and maxSurge 25%. */
static int default_deployment(cJSON *obj)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec"), *st;

    if (!cJSON_IsObject(spec) || !(st = object_at(spec, "strategy")))
        return 0;
    return default_rolling(st, cJSON_CreateString("25%"), cJSON_CreateString("25%"));
}

/* The apps/v1 update rule of Deployment, ReplicaSet and DaemonSet: the selector is fixed. */
static void check_selector_update(const cJSON *old, const cJSON *obj, struct field_errors *errs)
{
    api_check_selector_immutable(api_get_path(old, "spec.selector"),
                                 api_get_path(obj, "spec.selector"), "spec.selector", errs);
}

const struct api_kind api_kind_deployment = {
    .group = "apps",
    .version = "v1",
    .kind = "Deployment",
    .plural = "deployments",
    .short_names = (const char *const[]){"deploy", NULL},
    .namespaced = true,
    .status_subresource = true,
    .scale_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = deployment_spec_props,
                                       .check = check_deployment_spec},
    .status = API_OBJ(deployment_status_props),
    .defaults = default_deployment,
    .prepare_create = api_reset_status,
    .check_update = check_selector_update,
};

/* ---- ReplicaSet ---- */

static void check_replica_set_spec(const struct api_schema *s, const cJSON *spec,
                                   struct api_walk *w)
{
    (void)s;
    api_check_nonnegative(w, "replicas", get(spec, "replicas"));
    api_check_nonnegative(w, "minReadySeconds", get(spec, "minReadySeconds"));
    /* ValidateReplicaSetSpec names "deployment" in its empty-selector message too. */
    api_check_workload_template(w, spec,
                                API_TPL_SELECTOR_REQUIRED | API_TPL_SELECTOR_NOT_EMPTY |
                                    API_TPL_SELECTOR_MUST_MATCH | API_TPL_RESTART_ALWAYS |
                                    API_TPL_NO_DEADLINE | API_TPL_POD_SPEC,
                                "deployment", "ReplicaSet");
}

static const struct api_prop replica_set_spec_props[] = {
    {"replicas", &api_int32, 0, "1"},
    {"minReadySeconds", &api_int32, API_VAL},
    {"selector", &api_label_selector},
    {"template", &api_pod_template, API_ALWAYS},
    {NULL},
};

static const struct api_prop replica_set_condition_props[] = {
    {"type", &api_string, API_ALWAYS}, {"status", &api_string, API_ALWAYS},
    {"lastTransitionTime", &api_time}, {"reason", &api_string, API_VAL},
    {"message", &api_string, API_VAL}, {NULL},
};

static const struct api_prop replica_set_status_props[] = {
    {"replicas", &api_int32, API_ALWAYS},
    {"fullyLabeledReplicas", &api_int32, API_VAL},
    {"readyReplicas", &api_int32, API_VAL},
    {"availableReplicas", &api_int32, API_VAL},
    {"terminatingReplicas", &api_int32},
    {"observedGeneration", &api_int64, API_VAL},
    {"conditions", API_ARR(API_OBJ(replica_set_condition_props))},
    {NULL},
};

const struct api_kind api_kind_replica_set = {
    .group = "apps",
    .version = "v1",
    .kind = "ReplicaSet",
    .plural = "replicasets",
    .short_names = (const char *const[]){"rs", NULL},
    .namespaced = true,
    .status_subresource = true,
    .scale_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = replica_set_spec_props,
                                       .check = check_replica_set_spec},
    .status = API_OBJ(replica_set_status_props),
    .prepare_create = api_reset_status,
    .check_update = check_selector_update,
};

/* ---- StatefulSet ---- */

static const struct api_prop sts_rolling_update_props[] = {
    {"partition", &api_int32},
    {"maxUnavailable", &api_int_or_string},
    {NULL},
};

static const struct api_prop sts_update_strategy_props[] = {
    {"type", API_ENUM("RollingUpdate", "OnDelete"), API_VAL},
    {"rollingUpdate", API_OBJ(sts_rolling_update_props)},
    {NULL},
};

static const struct api_prop sts_pvc_retention_props[] = {
    {"whenDeleted", API_ENUM("Retain", "Delete"), API_VAL},
    {"whenScaled", API_ENUM("Retain", "Delete"), API_VAL},
    {NULL},
};

static const struct api_prop sts_ordinals_props[] = {
    {"start", &api_int32, API_VAL},
    {NULL},
};

static void check_stateful_set_spec(const struct api_schema *s, const cJSON *spec,
                                    struct api_walk *w)
{
    const cJSON *us = get(spec, "updateStrategy"), *type = get(us, "type");
    const cJSON *ru = get(us, "rollingUpdate");
    (void)s;

    api_check_nonnegative(w, "replicas", get(spec, "replicas"));
    api_check_nonnegative(w, "minReadySeconds", get(spec, "minReadySeconds"));
    api_check_nonnegative(w, "ordinals.start", api_get_path(spec, "ordinals.start"));
    if (cJSON_IsString(type) && !strcmp(type->valuestring, "OnDelete") && ru)
        api_walk_error(w, "updateStrategy.rollingUpdate", FIELD_INVALID, NULL,
                       "only allowed for updateStrategy 'RollingUpdate'");
    api_check_nonnegative(w, "updateStrategy.rollingUpdate.partition", get(ru, "partition"));
    api_check_workload_template(w, spec,
                                API_TPL_SELECTOR_REQUIRED | API_TPL_SELECTOR_NOT_EMPTY |
                                    API_TPL_SELECTOR_MUST_MATCH | API_TPL_RESTART_ALWAYS |
                                    API_TPL_NO_DEADLINE | API_TPL_POD_SPEC,
                                "statefulset", "StatefulSet");
}

static const struct api_prop stateful_set_spec_props[] = {
    {"replicas", &api_int32, 0, "1"},
    {"selector", &api_label_selector},
    {"template", &api_pod_template, API_ALWAYS},
    {"volumeClaimTemplates", API_ARR(&api_preserve_object)},
    {"serviceName", &api_string, API_VAL},
    {"podManagementPolicy", API_ENUM("OrderedReady", "Parallel"), API_VAL, "\"OrderedReady\""},
    {"updateStrategy", API_OBJ(sts_update_strategy_props), API_ALWAYS},
    {"revisionHistoryLimit", &api_int32, 0, "10"},
    {"minReadySeconds", &api_int32, API_VAL},
    {"persistentVolumeClaimRetentionPolicy", API_OBJ(sts_pvc_retention_props), 0,
     "{\"whenDeleted\":\"Retain\",\"whenScaled\":\"Retain\"}"},
    {"ordinals", API_OBJ(sts_ordinals_props)},
    {NULL},
};

static const struct api_prop stateful_set_status_props[] = {
    {"observedGeneration", &api_int64, API_VAL},
    {"replicas", &api_int32, API_ALWAYS},
    {"readyReplicas", &api_int32, API_VAL},
    {"currentReplicas", &api_int32, API_VAL},
    {"updatedReplicas", &api_int32, API_VAL},
    {"currentRevision", &api_string, API_VAL},
    {"updateRevision", &api_string, API_VAL},
    {"collisionCount", &api_int32},
    {"conditions", API_ARR(API_OBJ(replica_set_condition_props))},
    {"availableReplicas", &api_int32, API_ALWAYS},
    {NULL},
};

/* SetDefaults_StatefulSet: updateStrategy RollingUpdate with partition 0, the PVC retention
 * policy Retain/Retain (StatefulSetAutoDeletePVC is GA). */
static int default_stateful_set(cJSON *obj)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec"), *us, *type, *ru, *pvc;
    int r;

    if (!cJSON_IsObject(spec) || !(us = object_at(spec, "updateStrategy")))
        return 0;
    type = cJSON_GetObjectItemCaseSensitive(us, "type");
    if (!cJSON_IsString(type) || !*type->valuestring) {
        cJSON_DeleteItemFromObjectCaseSensitive(us, "type");
        if (!cJSON_AddStringToObject(us, "type", "RollingUpdate"))
            return -ENOMEM;
        if (!object_at(us, "rollingUpdate") && !cJSON_GetObjectItem(us, "rollingUpdate"))
            return -ENOMEM;
        type = cJSON_GetObjectItemCaseSensitive(us, "type");
    }
    ru = cJSON_GetObjectItemCaseSensitive(us, "rollingUpdate");
    if (!strcmp(type->valuestring, "RollingUpdate") && cJSON_IsObject(ru) &&
        (r = api_set_default(ru, "partition", cJSON_CreateNumber(0))) < 0)
        return r;
    if ((pvc = object_at(spec, "persistentVolumeClaimRetentionPolicy"))) {
        if ((r = api_set_default(pvc, "whenDeleted", cJSON_CreateString("Retain"))) < 0 ||
            (r = api_set_default(pvc, "whenScaled", cJSON_CreateString("Retain"))) < 0)
            return r;
    }
    return 0;
}

/* ValidateStatefulSetUpdate: only these fields of the spec may change. */
static void check_stateful_set_update(const cJSON *old, const cJSON *obj, struct field_errors *errs)
{
    static const char *const mutable_fields[] = {"replicas",
                                                 "ordinals",
                                                 "template",
                                                 "updateStrategy",
                                                 "minReadySeconds",
                                                 "revisionHistoryLimit",
                                                 "persistentVolumeClaimRetentionPolicy"};
    cJSON *a = cJSON_Duplicate(get(old, "spec"), true),
          *b = cJSON_Duplicate(get(obj, "spec"), true);

    for (size_t i = 0; i < ARRAY_SIZE(mutable_fields); i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(a, mutable_fields[i]);
        cJSON_DeleteItemFromObjectCaseSensitive(b, mutable_fields[i]);
    }
    if (!json_value_equal(a, b))
        field_error_add(errs, FIELD_FORBIDDEN, "spec", NULL,
                        "updates to statefulset spec for fields other than 'replicas', "
                        "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
                        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                        "forbidden");
    cJSON_Delete(a);
    cJSON_Delete(b);
}

const struct api_kind api_kind_stateful_set = {
    .group = "apps",
    .version = "v1",
    .kind = "StatefulSet",
    .plural = "statefulsets",
    .short_names = (const char *const[]){"sts", NULL},
    .namespaced = true,
    .status_subresource = true,
    .scale_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = stateful_set_spec_props,
                                       .check = check_stateful_set_spec},
    .status = API_OBJ(stateful_set_status_props),
    .defaults = default_stateful_set,
    .prepare_create = api_reset_status,
    .check_update = check_stateful_set_update,
};

/* ---- DaemonSet ---- */

static const struct api_prop ds_rolling_update_props[] = {
    {"maxUnavailable", &api_int_or_string},
    {"maxSurge", &api_int_or_string},
    {NULL},
};

static const struct api_prop ds_update_strategy_props[] = {
    {"type", API_ENUM("RollingUpdate", "OnDelete"), API_VAL},
    {"rollingUpdate", API_OBJ(ds_rolling_update_props)},
    {NULL},
};

/* ValidateDaemonSetSpec and ValidateRollingUpdateDaemonSet. */
static void check_daemon_set_spec(const struct api_schema *s, const cJSON *spec, struct api_walk *w)
{
    const cJSON *us = get(spec, "updateStrategy"), *type = get(us, "type");
    const cJSON *ru = get(us, "rollingUpdate");
    const char *t =
        cJSON_IsString(type) && *type->valuestring ? type->valuestring : "RollingUpdate";
    (void)s;

    api_check_workload_template(w, spec,
                                API_TPL_SELECTOR_REQUIRED | API_TPL_SELECTOR_NOT_EMPTY |
                                    API_TPL_SELECTOR_MUST_MATCH | API_TPL_RESTART_ALWAYS |
                                    API_TPL_NO_DEADLINE | API_TPL_DEADLINE_INVALID |
                                    API_TPL_POD_SPEC,
                                "daemonset", "DaemonSet");
    api_check_nonnegative(w, "minReadySeconds", get(spec, "minReadySeconds"));
    api_check_nonnegative(w, "revisionHistoryLimit", get(spec, "revisionHistoryLimit"));
    if (!strcmp(t, "RollingUpdate") && ru) {
        const cJSON *mu = get(ru, "maxUnavailable"), *ms = get(ru, "maxSurge");
        int u = 1, g = 0;
        api_check_int_or_percent(w, "updateStrategy.rollingUpdate.maxUnavailable", mu, true);
        api_check_int_or_percent(w, "updateStrategy.rollingUpdate.maxSurge", ms, true);
        if (mu && api_int_or_percent_scaled(mu, 100, true, &u) < 0)
            u = 1;
        if (ms && api_int_or_percent_scaled(ms, 100, true, &g) < 0)
            g = 1;
        if (u != 0 && g != 0) {
            struct strbuf val = STRBUF_INIT;
            api_go_int_or_string(ms, &val);
            add_error(w, "updateStrategy.rollingUpdate.maxSurge", FIELD_INVALID, val.buf,
                      "may not be set when maxUnavailable is non-zero");
            strbuf_release(&val);
        } else if (u == 0 && g == 0) {
            api_walk_error(w, "updateStrategy.rollingUpdate.maxUnavailable", FIELD_REQUIRED, NULL,
                           "cannot be 0 when maxSurge is 0");
        }
    }
}

static const struct api_prop daemon_set_spec_props[] = {
    {"selector", &api_label_selector},
    {"template", &api_pod_template, API_ALWAYS},
    {"updateStrategy", API_OBJ(ds_update_strategy_props), API_ALWAYS},
    {"minReadySeconds", &api_int32, API_VAL},
    {"revisionHistoryLimit", &api_int32, 0, "10"},
    {NULL},
};

static const struct api_prop daemon_set_status_props[] = {
    {"currentNumberScheduled", &api_int32, API_ALWAYS},
    {"numberMisscheduled", &api_int32, API_ALWAYS},
    {"desiredNumberScheduled", &api_int32, API_ALWAYS},
    {"numberReady", &api_int32, API_ALWAYS},
    {"observedGeneration", &api_int64, API_VAL},
    {"updatedNumberScheduled", &api_int32, API_VAL},
    {"numberAvailable", &api_int32, API_VAL},
    {"numberUnavailable", &api_int32, API_VAL},
    {"collisionCount", &api_int32},
    {"conditions", API_ARR(API_OBJ(replica_set_condition_props))},
    {NULL},
};

/* SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0. */
static int default_daemon_set(cJSON *obj)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec"), *us;

    if (!cJSON_IsObject(spec) || !(us = object_at(spec, "updateStrategy")))
        return 0;
    return default_rolling(us, cJSON_CreateNumber(1), cJSON_CreateNumber(0));
}

/* PrepareForCreate: the template generation starts at 1; apps/v1 carries it as an annotation. */
static void prepare_daemon_set(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *ann;

    api_reset_status(obj);
    if (!cJSON_IsObject(meta) || !(ann = object_at(meta, "annotations")))
        return;
    CHECK(api_set_default(ann, "deprecated.daemonset.template.generation",
                          cJSON_CreateString("1")) == 0);
}

/* PrepareForUpdate: the template generation (an annotation in apps/v1) is the server's: it
 * stays the stored one, plus one when the template changed. */
static void prepare_daemon_set_update(const cJSON *old, cJSON *obj)
{
    static const char key[] = "deprecated.daemonset.template.generation";
    const cJSON *ot = api_get_path(old, "spec.template"), *nt = api_get_path(obj, "spec.template");
    const cJSON *cur = get(api_get_path(old, "metadata.annotations"), key);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *ann;
    long long gen = cJSON_IsString(cur) ? strtoll(cur->valuestring, NULL, 10) : 0;
    char buf[24];

    if ((ot || nt) && !(ot && nt && json_value_equal(ot, nt)))
        gen++;
    if (gen <= 0 || !cJSON_IsObject(meta) || !(ann = object_at(meta, "annotations")))
        return;
    (void)snprintf(buf, sizeof(buf), "%lld", gen);
    cJSON_DeleteItemFromObjectCaseSensitive(ann, key);
    CHECK(cJSON_AddStringToObject(ann, key, buf));
}

const struct api_kind api_kind_daemon_set = {
    .group = "apps",
    .version = "v1",
    .kind = "DaemonSet",
    .plural = "daemonsets",
    .short_names = (const char *const[]){"ds", NULL},
    .namespaced = true,
    .status_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = daemon_set_spec_props,
                                       .check = check_daemon_set_spec},
    .status = API_OBJ(daemon_set_status_props),
    .defaults = default_daemon_set,
    .prepare_create = prepare_daemon_set,
    .check_update = check_selector_update,
    .prepare_update = prepare_daemon_set_update,
};

/* ---- ControllerRevision ---- */

static void check_controller_revision(const struct api_schema *s, const cJSON *o,
                                      struct api_walk *w)
{
    (void)s;
    api_check_nonnegative(w, "revision", get(o, "revision"));
}

static const struct api_prop controller_revision_props[] = {
    {"data", &api_any},
    {"revision", &api_int64, API_REQ | API_ALWAYS},
    {NULL},
};

/* ValidateControllerRevisionUpdate: data is immutable. */
static void check_controller_revision_update(const cJSON *old, const cJSON *obj,
                                             struct field_errors *errs)
{
    const cJSON *a = get(old, "data"), *b = get(obj, "data");

    if ((a || b) && !(a && b && json_value_equal(a, b)))
        field_error_add(errs, FIELD_INVALID, "data", "runtime.RawExtension{...}",
                        "field is immutable");
}

const struct api_kind api_kind_controller_revision = {
    .group = "apps",
    .version = "v1",
    .kind = "ControllerRevision",
    .plural = "controllerrevisions",
    .namespaced = true,
    .extra = controller_revision_props,
    .check = check_controller_revision,
    .check_update = check_controller_revision_update,
};

/* ---- the pod template ---- */

static const struct api_prop pod_template_props[] = {
    {"metadata", &api_object_meta, API_ALWAYS},
    {"spec", &api_pod_spec, API_ALWAYS},
    {NULL},
};

const struct api_schema api_pod_template = {.type = API_OBJECT,
                                            .props = pod_template_props,
                                            .def_name = "io.k8s.api.core.v1.PodTemplateSpec"};
