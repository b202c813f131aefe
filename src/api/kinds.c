/*
 * The kind registry and object-level validate/default/encode (see api.h). Whole-object schemas
 * (apiVersion, kind, metadata, spec, status, extras) are assembled once from each kind's parts.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/workloads.h"
#include "base/base.h"

extern const struct api_kind api_kind_recommendation, api_kind_cluster_colocation_profile,
    api_kind_elastic_quota_profile, api_kind_elastic_quota, api_kind_reservation,
    api_kind_node_metric, api_kind_node_slo, api_kind_node, api_kind_pod, api_kind_configmap,
    api_kind_event, api_kind_namespace, api_kind_lease, api_kind_secret, api_kind_service,
    api_kind_endpoints, api_kind_priority_class, api_kind_metrics_node_metric, api_kind_apiservice,
    api_kind_mutating_webhook_configuration, api_kind_validating_webhook_configuration,
    api_kind_deployment, api_kind_replica_set, api_kind_stateful_set, api_kind_daemon_set,
    api_kind_controller_revision, api_kind_job, api_kind_cron_job, api_kind_pod_disruption_budget,
    api_kind_events_event, api_kind_endpoint_slice, api_kind_role, api_kind_cluster_role,
    api_kind_role_binding, api_kind_cluster_role_binding, api_kind_service_account;

static const struct api_kind *const kinds[] = {
    &api_kind_recommendation,
    &api_kind_cluster_colocation_profile,
    &api_kind_elastic_quota_profile,
    &api_kind_elastic_quota,
    &api_kind_reservation,
    &api_kind_node_metric,
    &api_kind_metrics_node_metric,
    &api_kind_node_slo,
    &api_kind_node,
    &api_kind_pod,
    &api_kind_configmap,
    &api_kind_event,
    &api_kind_namespace,
    &api_kind_lease,
    &api_kind_secret,
    &api_kind_service,
    &api_kind_endpoints,
    &api_kind_priority_class,
    &api_kind_apiservice,
    &api_kind_mutating_webhook_configuration,
    &api_kind_validating_webhook_configuration,
    &api_kind_deployment,
    &api_kind_replica_set,
    &api_kind_stateful_set,
    &api_kind_daemon_set,
    &api_kind_controller_revision,
    &api_kind_job,
    &api_kind_cron_job,
    &api_kind_pod_disruption_budget,
    &api_kind_events_event,
    &api_kind_endpoint_slice,
    &api_kind_role,
    &api_kind_cluster_role,
    &api_kind_role_binding,
    &api_kind_cluster_role_binding,
    &api_kind_service_account,
    NULL,
};

#define NKINDS         (ARRAY_SIZE(kinds) - 1)
#define MAX_ROOT_PROPS 24

static struct api_prop root_props[NKINDS][MAX_ROOT_PROPS];
static struct api_schema roots[NKINDS];
static pthread_once_t roots_once = PTHREAD_ONCE_INIT;

static void build_roots(void)
{
    for (size_t i = 0; i < NKINDS; i++) {
        const struct api_kind *k = kinds[i];
        struct api_prop *p = root_props[i];
        size_t n = 0;

        p[n++] = (struct api_prop){"apiVersion", &api_string, API_VAL};
        p[n++] = (struct api_prop){"kind", &api_string, API_VAL};
        p[n++] = (struct api_prop){"metadata", &api_object_meta, API_ALWAYS};
        if (k->spec)
            p[n++] = (struct api_prop){"spec", k->spec, API_ALWAYS};
        if (k->status)
            p[n++] = (struct api_prop){"status", k->status, API_ALWAYS};
        for (const struct api_prop *e = k->extra; e && e->name; e++) {
            CHECK(n < MAX_ROOT_PROPS - 1);
            p[n++] = *e;
        }
        p[n] = (struct api_prop){NULL, NULL, 0, NULL};
        roots[i] = (struct api_schema){.type = API_OBJECT, .props = p, .check = k->check};
    }
}

const struct api_kind *const *api_kinds(void)
{
    return kinds;
}

const struct api_schema *api_kind_schema(const struct api_kind *k)
{
    CHECK(pthread_once(&roots_once, build_roots) == 0);
    for (size_t i = 0; i < NKINDS; i++)
        if (kinds[i] == k)
            return &roots[i];
    CHECK(!"kind not registered");
    return NULL;
}

const char *api_kind_api_version(const struct api_kind *k, char *buf, size_t len)
{
    if (!*k->group)
        (void)snprintf(buf, len, "%s", k->version);
    else
        (void)snprintf(buf, len, "%s/%s", k->group, k->version);
    return buf;
}

const struct api_kind *api_kind_find(const char *api_version, const char *kind)
{
    char av[128];

    for (size_t i = 0; i < NKINDS; i++) {
        if (strcmp(kinds[i]->kind, kind))
            continue;
        if (!strcmp(api_kind_api_version(kinds[i], av, sizeof(av)), api_version))
            return kinds[i];
    }
    return NULL;
}

static const cJSON *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(c) ? c : NULL;
}

static void validate_meta(const struct api_kind *k, const cJSON *meta, struct field_errors *errs)
{
    const cJSON *name = get_str(meta, "name"), *gen = get_str(meta, "generateName");
    const cJSON *ns = get_str(meta, "namespace");
    struct strbuf why = STRBUF_INIT, val = STRBUF_INIT;

    if ((!name || !*name->valuestring) && (!gen || !*gen->valuestring)) {
        field_error_add(errs, FIELD_REQUIRED, "metadata.name", NULL,
                        "name or generateName is required");
    } else if (name && *name->valuestring && k->name_rule != API_NAME_PATH_SEGMENT) {
        int r = k->name_rule == API_NAME_DNS_LABEL
                    ? labels_check_dns1123_label(name->valuestring, &why)
                    : labels_check_dns1123_subdomain(name->valuestring, &why);
        if (r < 0) {
            api_value_repr(name, &val);
            field_error_add(errs, FIELD_INVALID, "metadata.name", val.buf, "%s", why.buf);
        }
    }
    strbuf_reset(&why);
    strbuf_reset(&val);
    if (ns && *ns->valuestring && labels_check_dns1123_label(ns->valuestring, &why) < 0) {
        api_value_repr(ns, &val);
        field_error_add(errs, FIELD_INVALID, "metadata.namespace", val.buf, "%s", why.buf);
    }
    strbuf_release(&why);
    strbuf_release(&val);
}

size_t api_object_validate(const cJSON *obj, unsigned flags, const struct api_kind **ret_kind,
                           struct field_errors *errs)
{
    const cJSON *av, *kind;
    const struct api_kind *k;
    size_t before = field_errors_count(errs);

    if (ret_kind)
        *ret_kind = NULL;
    if (!cJSON_IsObject(obj)) {
        field_error_add(errs, FIELD_INVALID, "", NULL, "a Kubernetes object must be a mapping");
        return field_errors_count(errs) - before;
    }
    av = get_str(obj, "apiVersion");
    kind = get_str(obj, "kind");
    if (!av || !*av->valuestring)
        field_error_add(errs, FIELD_REQUIRED, "apiVersion", NULL, "apiVersion must be set");
    if (!kind || !*kind->valuestring)
        field_error_add(errs, FIELD_REQUIRED, "kind", NULL, "kind must be set");
    if (!av || !kind || !*av->valuestring || !*kind->valuestring)
        return field_errors_count(errs) - before;
    k = api_kind_find(av->valuestring, kind->valuestring);
    if (!k) {
        struct strbuf v = STRBUF_INIT;
        api_value_repr(kind, &v);
        field_error_add(errs, FIELD_NOT_SUPPORTED, "kind", v.buf,
                        "no matches for kind \"%s\" in version \"%s\"", kind->valuestring,
                        av->valuestring);
        strbuf_release(&v);
        return field_errors_count(errs) - before;
    }
    if (ret_kind)
        *ret_kind = k;
    api_validate(api_kind_schema(k), obj, "", flags, errs);
    validate_meta(k, cJSON_GetObjectItemCaseSensitive(obj, "metadata"), errs);
    return field_errors_count(errs) - before;
}

static cJSON *child(cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* The pod specs of a built-in kind: a Pod's, a workload's template's, a CronJob's job
 * template's. */
static void pod_spec_defaults(const struct api_kind *k, cJSON *obj)
{
    cJSON *spec = child(obj, "spec");

    if (!*k->group && !strcmp(k->kind, "Pod"))
        api_pod_spec_defaults(spec);
    else if (!strcmp(k->group, "apps") || !strcmp(k->group, "batch")) {
        cJSON *job = child(child(spec, "jobTemplate"), "spec");
        api_pod_spec_defaults(child(child(job ? job : spec, "template"), "spec"));
    }
}

int api_object_default(const struct api_kind *k, cJSON *obj, unsigned flags)
{
    int r = api_default(api_kind_schema(k), obj, flags);
    cJSON *spec, *base;

    if (r == 0 && k->defaults)
        r = k->defaults(obj);
    if (r == 0 && !k->crd)
        pod_spec_defaults(k, obj);
    if (r < 0 || !(flags & API_D_CTRL) || strcmp(k->kind, "NodeSLO"))
        return r;
    /* The node agent's view: every field the NodeSLO leaves out takes its default. */
    spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    base = cJSON_Duplicate(api_nodeslo_default_spec(), true);
    if (!base)
        return -ENOMEM;
    if (cJSON_IsObject(spec))
        r = api_overlay(&api_nodeslo_spec, &base, spec);
    if (r < 0) {
        cJSON_Delete(base);
        return r;
    }
    /* base is a copy of a root, so it has no key: replace by name to give it "spec". */
    if (spec ? !cJSON_ReplaceItemInObjectCaseSensitive(obj, "spec", base)
             : !cJSON_AddItemToObject(obj, "spec", base)) {
        cJSON_Delete(base);
        return -ENOMEM;
    }
    return 0;
}

int api_object_encode(const struct api_kind *k, const cJSON *obj, cJSON **ret)
{
    return api_encode(api_kind_schema(k), obj, ret);
}

int api_object_canonicalize(const struct api_kind *k, cJSON *obj)
{
    return api_canonicalize(api_kind_schema(k), obj);
}
