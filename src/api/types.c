/*
 * Shared building blocks of the type descriptions: scalars, ResourceList, LabelSelector,
 * ObjectMeta, references, Condition, Taint. Rules follow apimachinery (labels, selectors,
 * metadata) and the shapes in reference/api-types.md section 0.3.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "api/schema.h"
#include "base/base.h"

const struct api_schema api_any = {.type = API_ANY};
const struct api_schema api_preserve_object = {.type = API_OBJECT, .flags = API_S_PRESERVE};
const struct api_schema api_string = {.type = API_STRING};
const struct api_schema api_bool = {.type = API_BOOL};
const struct api_schema api_int32 = {.type = API_INT, .format = "int32"};
const struct api_schema api_int64 = {.type = API_INT, .format = "int64"};
const struct api_schema api_number = {.type = API_NUMBER, .format = "double"};
const struct api_schema api_quantity = {
    .type = API_QUANTITY, .def_name = "io.k8s.apimachinery.pkg.api.resource.Quantity"};
const struct api_schema api_int_or_string = {
    .type = API_INT_OR_STRING, .def_name = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"};
const struct api_schema api_duration = {.type = API_DURATION};
const struct api_schema api_time = {.type = API_TIME,
                                    .format = "date-time",
                                    .def_name = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"};
const struct api_schema api_string_map = {.type = API_MAP, .items = &api_string};
const struct api_schema api_string_list = {.type = API_ARRAY, .items = &api_string};

/* Resource names are qualified names (cpu, memory, kubernetes.io/batch-cpu). */
const struct api_schema api_resource_list = {
    .type = API_MAP, .items = &api_quantity, .keys = API_KEYS_QUALIFIED};

/* metav1.ValidateLabelSelector: operators and their value rules, label keys and values. */
static void check_label_selector(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(v, "matchLabels");
    const cJSON *me = cJSON_GetObjectItemCaseSensitive(v, "matchExpressions");
    const cJSON *c;
    long i = 0;
    (void)s;

    if (cJSON_IsObject(ml)) {
        cJSON_ArrayForEach(c, ml)
        {
            struct strbuf why = STRBUF_INIT;
            size_t len = api_walk_push(w, "matchLabels", 0);
            if (labels_check_qualified_name(c->string, &why) < 0) {
                cJSON *k = cJSON_CreateString(c->string);
                api_walk_error(w, NULL, FIELD_INVALID, k, "%s", why.buf);
                cJSON_Delete(k);
            }
            strbuf_reset(&why);
            if (cJSON_IsString(c) && labels_check_value(c->valuestring, &why) < 0)
                api_walk_error(w, NULL, FIELD_INVALID, c, "%s", why.buf);
            api_walk_pop(w, len);
            strbuf_release(&why);
        }
    }
    if (!cJSON_IsArray(me))
        return;
    cJSON_ArrayForEach(c, me)
    {
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(c, "key");
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "operator");
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(c, "values");
        int nvals = cJSON_IsArray(vals) ? cJSON_GetArraySize(vals) : 0;
        size_t len = api_walk_push(w, "matchExpressions", 0);

        (void)api_walk_push(w, NULL, i++);
        if (cJSON_IsString(op)) {
            const char *o = op->valuestring;
            if (!strcmp(o, "In") || !strcmp(o, "NotIn")) {
                if (nvals == 0)
                    api_walk_error(w, "values", FIELD_REQUIRED, NULL,
                                   "must be specified when `operator` is 'In' or 'NotIn'");
            } else if (!strcmp(o, "Exists") || !strcmp(o, "DoesNotExist")) {
                if (nvals > 0)
                    api_walk_error(w, "values", FIELD_FORBIDDEN, NULL,
                                   "may not be specified when `operator` is 'Exists' or "
                                   "'DoesNotExist'");
            } else {
                api_walk_error(w, "operator", FIELD_INVALID, op, "not a valid selector operator");
            }
        }
        if (cJSON_IsString(key)) {
            struct strbuf why = STRBUF_INIT;
            if (labels_check_qualified_name(key->valuestring, &why) < 0)
                api_walk_error(w, "key", FIELD_INVALID, key, "%s", why.buf);
            strbuf_release(&why);
        }
        api_walk_pop(w, len);
    }
}

static const struct api_prop label_selector_req_props[] = {
    {"key", &api_string, API_REQ},
    {"operator", &api_string, API_REQ},
    {"values", &api_string_list},
    {NULL},
};

static const struct api_prop label_selector_props[] = {
    {"matchExpressions", API_ARR(API_OBJ(label_selector_req_props))},
    {"matchLabels", &api_string_map},
    {NULL},
};

const struct api_schema api_label_selector = {
    .type = API_OBJECT,
    .props = label_selector_props,
    .flags = API_S_ATOMIC,
    .check = check_label_selector,
    .desc = "A label query over a set of resources. An empty selector matches everything; a null "
            "selector matches nothing.",
    .def_name = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
};

static const struct api_prop owner_reference_props[] = {
    {"apiVersion", &api_string, API_REQ},
    {"blockOwnerDeletion", &api_bool},
    {"controller", &api_bool},
    {"kind", &api_string, API_REQ},
    {"name", &api_string, API_REQ},
    {"uid", &api_string, API_REQ},
    {NULL},
};

const struct api_schema api_owner_reference = {
    .type = API_OBJECT,
    .props = owner_reference_props,
    .flags = API_S_ATOMIC,
    .def_name = "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"};

static const struct api_prop object_reference_props[] = {
    {"apiVersion", &api_string, API_VAL}, {"fieldPath", &api_string, API_VAL},
    {"kind", &api_string, API_VAL},       {"name", &api_string, API_VAL},
    {"namespace", &api_string, API_VAL},  {"resourceVersion", &api_string, API_VAL},
    {"uid", &api_string, API_VAL},        {NULL},
};

const struct api_schema api_object_reference = {.type = API_OBJECT,
                                                .props = object_reference_props,
                                                .flags = API_S_ATOMIC,
                                                .def_name = "io.k8s.api.core.v1.ObjectReference"};

static const struct api_prop condition_props[] = {
    {"lastTransitionTime", &api_time, API_REQ},
    {"message", &(const struct api_schema){.type = API_STRING, .max_len = 32768}, API_REQ},
    {"observedGeneration", API_I64(API_MIN(0), API_NONE)},
    {"reason",
     &(const struct api_schema){.type = API_STRING,
                                .max_len = 1024,
                                .pattern = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"},
     API_REQ},
    {"status", API_ENUM("True", "False", "Unknown"), API_REQ},
    {"type",
     &(const struct api_schema){
         .type = API_STRING,
         .max_len = 316,
         .pattern = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-"
                    "z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"},
     API_REQ},
    {NULL},
};

const struct api_schema api_condition = {.type = API_OBJECT,
                                         .props = condition_props,
                                         .def_name =
                                             "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"};

static const struct api_prop taint_props[] = {
    {"effect", API_ENUM("NoSchedule", "PreferNoSchedule", "NoExecute"), API_REQ},
    {"key", &api_string, API_REQ},
    {"timeAdded", &api_time},
    {"value", &api_string, API_VAL},
    {NULL},
};

const struct api_schema api_taint = {
    .type = API_OBJECT, .props = taint_props, .def_name = "io.k8s.api.core.v1.Taint"};

static const struct api_prop toleration_props[] = {
    {"effect", API_ENUM("NoSchedule", "PreferNoSchedule", "NoExecute")},
    {"key", &api_string, API_VAL},
    {"operator", API_ENUM("Exists", "Equal")},
    {"tolerationSeconds", &api_int64},
    {"value", &api_string, API_VAL},
    {NULL},
};

const struct api_schema api_toleration = {
    .type = API_OBJECT, .props = toleration_props, .def_name = "io.k8s.api.core.v1.Toleration"};

const struct api_schema api_pod_template_spec = {
    .type = API_ANY,
    .flags = API_S_PRESERVE,
    .desc = "A pod template (metadata and spec); schemaless as upstream declares it.",
};

/* ObjectMeta: labels and annotation keys/values (apimachinery ValidateObjectMeta). */
static void check_labels_map(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    (void)s;

    cJSON_ArrayForEach(c, v)
    {
        struct strbuf why = STRBUF_INIT;
        cJSON *k = cJSON_CreateString(c->string);
        if (labels_check_qualified_name(c->string, &why) < 0)
            api_walk_error(w, NULL, FIELD_INVALID, k, "%s", why.buf);
        strbuf_reset(&why);
        if (cJSON_IsString(c) && labels_check_value(c->valuestring, &why) < 0)
            api_walk_error(w, NULL, FIELD_INVALID, c, "%s", why.buf);
        cJSON_Delete(k);
        strbuf_release(&why);
    }
}

#define TOTAL_ANNOTATION_SIZE_LIMIT ((size_t)256 * 1024)

static void check_annotations(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    size_t total = 0;
    (void)s;

    cJSON_ArrayForEach(c, v)
    {
        struct strbuf why = STRBUF_INIT;
        char *lower = xstrdup(c->string);
        for (char *p = lower; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (labels_check_qualified_name(lower, &why) < 0) {
            cJSON *k = cJSON_CreateString(c->string);
            api_walk_error(w, NULL, FIELD_INVALID, k, "%s", why.buf);
            cJSON_Delete(k);
        }
        total += strlen(c->string) + (cJSON_IsString(c) ? strlen(c->valuestring) : 0);
        free(lower);
        strbuf_release(&why);
    }
    if (total > TOTAL_ANNOTATION_SIZE_LIMIT)
        api_walk_error(w, NULL, FIELD_TOO_LONG, NULL, "must have at most %zu bytes",
                       TOTAL_ANNOTATION_SIZE_LIMIT);
}

static void check_owner_refs(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    int controllers = 0;
    (void)s;

    cJSON_ArrayForEach(c, v)
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "controller")))
            controllers++;
    }
    if (controllers > 1)
        api_walk_error(w, NULL, FIELD_INVALID, v,
                       "Only one reference can have Controller set to true");
}

static const struct api_prop object_meta_props[] = {
    {"annotations",
     &(const struct api_schema){.type = API_MAP, .items = &api_string, .check = check_annotations}},
    {"creationTimestamp", &(const struct api_schema){.type = API_TIME, .flags = API_S_NULLABLE}},
    {"deletionGracePeriodSeconds", &api_int64},
    {"deletionTimestamp", &api_time},
    {"finalizers", &api_string_list},
    {"generateName", &api_string, API_VAL},
    {"generation", &api_int64, API_VAL},
    {"labels",
     &(const struct api_schema){.type = API_MAP, .items = &api_string, .check = check_labels_map}},
    {"managedFields", API_ARR(&api_preserve_object)},
    {"name", &api_string, API_VAL},
    {"namespace", &api_string, API_VAL},
    {"ownerReferences", &(const struct api_schema){.type = API_ARRAY,
                                                   .items = &api_owner_reference,
                                                   .check = check_owner_refs}},
    {"resourceVersion", &api_string, API_VAL},
    {"selfLink", &api_string, API_VAL},
    {"uid", &api_string, API_VAL},
    {NULL},
};

const struct api_schema api_object_meta = {.type = API_OBJECT,
                                           .props = object_meta_props,
                                           .def_name =
                                               "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"};
