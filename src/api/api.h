/*
 * The kinds koord knows and the object-level operations on them: find the kind of a decoded
 * manifest, validate it (schema + metadata + kind rules), apply defaults, encode it the way a
 * Go client would. The field tables live in types_*.c; the walker in schema.c.
 */
#ifndef KOORD_API_API_H
#define KOORD_API_API_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"
#include "api/schema.h"

struct api_printer_column {
    const char *name;
    const char *type; /* string, integer, number, boolean, date */
    const char *json_path;
    const char *desc;
};

enum api_name_rule {
    API_NAME_DNS_SUBDOMAIN, /* most kinds */
    API_NAME_DNS_LABEL,     /* namespaces */
    API_NAME_PATH_SEGMENT,  /* APIServices: the kind's check enforces it (may be "v1.") */
};

struct api_kind {
    const char *group; /* "" for core */
    const char *version;
    const char *kind;
    const char *plural;
    const char *const *short_names; /* NULL-terminated or NULL */
    bool namespaced;
    bool status_subresource;
    bool crd;        /* shipped as a CustomResourceDefinition */
    bool aggregated; /* served by an aggregated API server (the manager), not koord apiserver */
    const char *crd_annotation;               /* "key=value" on the CRD object, or NULL */
    const struct api_printer_column *columns; /* terminated by name NULL; NULL = none */
    enum api_name_rule name_rule;
    const struct api_schema *spec;   /* the "spec" property, or NULL */
    const struct api_schema *status; /* the "status" property, or NULL */
    const struct api_prop *extra;    /* other top-level properties (data, involvedObject...) */
    api_check_fn check;              /* kind rules beyond the schema, run on the whole object */
    const struct api_schema *root;   /* filled by the registry: the whole-object schema */
    /* What kube-apiserver's strategy for the kind does beyond the schema (NULL = nothing):
     * defaults that depend on other fields (SetDefaults_<Kind>; 0 or -ENOMEM), the create
     * preparation (status reset, generated selectors; the object has its uid), the rules of
     * an update (ValidateUpdate: immutable fields), errors appended, and its preparation. */
    int (*defaults)(cJSON *obj);
    void (*prepare_create)(cJSON *obj);
    void (*check_update)(const cJSON *old, const cJSON *obj, struct field_errors *errs);
    /* PrepareForUpdate beyond the generation, on the defaulted new object (a DaemonSet's
     * template generation). */
    void (*prepare_update)(const cJSON *old, cJSON *obj);
    /* The kind has a scale subresource (autoscaling/v1 Scale over spec.replicas). */
    bool scale_subresource;
};

/* NULL-terminated list of every kind. */
const struct api_kind *const *api_kinds(void);

/* Finds a kind by apiVersion ("v1", "group/version") and kind; NULL when unknown. */
const struct api_kind *api_kind_find(const char *api_version, const char *kind);

/* The whole-object schema of k (apiVersion, kind, metadata, spec, status, extras). */
const struct api_schema *api_kind_schema(const struct api_kind *k);

/* "group/version" or "v1" for the core group, into buf. */
const char *api_kind_api_version(const struct api_kind *k, char *buf, size_t len);

/*
 * Validates one decoded object: apiVersion/kind known (else errors on those fields), schema,
 * metadata (name required and well-formed, labels, annotations) and the kind's rules.
 * *ret_kind is set when the kind is known. Unknown fields are warnings unless API_V_STRICT.
 * Returns the number of errors (warnings excluded).
 */
size_t api_object_validate(const cJSON *obj, unsigned flags, const struct api_kind **ret_kind,
                           struct field_errors *errs);

/* Applies the defaults upstream applies: CRD defaults and the kind's own (k->defaults), plus with
 * API_D_CTRL the defaults the controllers and node agents assume (NodeMetric collect policy,
 * NodeSLO threshold and QoS settings). 0 or -ENOMEM. */
int api_object_default(const struct api_kind *k, cJSON *obj, unsigned flags);

/* Go-client encoding of the whole object (see api_encode). 0 or -ENOMEM. */
int api_object_encode(const struct api_kind *k, const cJSON *obj, cJSON **ret);

/* The same, in place on an object the caller owns (no copy). 0 or -ENOMEM. */
int api_object_canonicalize(const struct api_kind *k, cJSON *obj);

/* Node-side defaults of NodeSLO spec.resourceQOSStrategy and the rest of the NodeSLO spec
 * (DefaultNodeSLOSpecConfig); owned by the api module, a parsed tree the caller must not free. */
const cJSON *api_nodeslo_default_spec(void);

/* The NodeSLO spec sub-schemas, shared with the slo-controller-config parser. */
extern const struct api_schema api_resource_threshold_strategy, api_resource_qos_strategy,
    api_cpu_burst_strategy, api_system_strategy, api_host_application_spec, api_nodeslo_spec,
    api_extensions_map;

#endif
