/*
 * The AdmissionReview v1 protocol around the handlers (webhook.h): decoding the request,
 * choosing the handler by path and gate, and wording the response as controller-runtime's
 * admission package does (Allowed / Errored(400) / Errored(500) / PatchResponseFromRaw). Also
 * the feature gates and the webhook configurations, which are the same table read another way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "manager/webhook/webhook-int.h"
#include "manager/webhook/webhook.h"

/* ---- helpers ---- */

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *webhook__meta_str(const cJSON *o, const char *k)
{
    const char *s = get_str(get(o, "metadata"), k);
    return s ? s : "";
}

const char *webhook__label(const cJSON *o, const char *k)
{
    return get_str(get(get(o, "metadata"), "labels"), k);
}

const char *webhook__annotation(const cJSON *o, const char *k)
{
    return get_str(get(get(o, "metadata"), "annotations"), k);
}

cJSON *webhook__object_at(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    if (!cJSON_IsObject(v)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, k);
        CHECK(v = cJSON_AddObjectToObject(o, k));
    }
    return v;
}

void webhook__set_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddStringToObject(o, k, v));
}

/* ---- gates ---- */

void webhook_gates_default(struct webhook_gates *ret)
{
    *ret = (struct webhook_gates){.framework = true,
                                  .pod_mutating = true,
                                  .pod_validating = true,
                                  .elastic_mutating = true,
                                  .elastic_validating = true};
}

#define GATE(name, field)                                                                          \
    {                                                                                              \
        name, offsetof(struct webhook_gates, field)                                                \
    }
#define NO_GATE(name)                                                                              \
    {                                                                                              \
        name, (size_t)-1                                                                           \
    }
/* A gate whose non-default value would change a webhook (or a controller of the manager) in a
 * way koord does not implement: only its default, false, is accepted. */
#define UNBUILT(name)                                                                              \
    {                                                                                              \
        name, (size_t)-2                                                                           \
    }

/* Upstream's koord-manager gates (pkg/features/features.go); NO_GATE ones do not touch the
 * webhooks and are accepted so a manifest written for upstream works; UNBUILT ones are
 * accepted only at their default. */
static const struct {
    const char *name;
    size_t off;
} gate_table[] = {
    GATE("WebhookFramework", framework),
    GATE("PodMutatingWebhook", pod_mutating),
    GATE("PodValidatingWebhook", pod_validating),
    GATE("ElasticMutatingWebhook", elastic_mutating),
    GATE("ElasticValidatingWebhook", elastic_validating),
    GATE("ConfigMapValidatingWebhook", configmap_validating),
    GATE("NodeMutatingWebhook", node_mutating),
    GATE("ColocationProfileSkipMutatingResources", skip_mutating_resources),
    GATE("ColocationProfileSkipValidatingPriority", skip_validating_priority),
    GATE("DisableExtendedResourceSpec", disable_extended_spec),
    GATE("SupportParentQuotaSubmitPod", support_parent_quota_pods),
    UNBUILT("NodeValidatingWebhook"),
    UNBUILT("ReservationMutatingWebhook"),
    UNBUILT("ColocationProfileController"),
    GATE("DisableDeviceResourceSpec", disable_device_spec),
    UNBUILT("ValidatePodDeviceResource"),
    UNBUILT("EnablePodEnhancedValidator"),
    UNBUILT("BindingAdmissionWebhook"),
    UNBUILT("MultiQuotaTree"),
    UNBUILT("EnableQuotaAdmission"),
    UNBUILT("EnableQuotaAdmissionOnUpdate"),
    NO_GATE("ElasticQuotaEvaluationTransformPod"),
    UNBUILT("ElasticQuotaEnableUpdateResourceKey"),
    UNBUILT("ElasticQuotaGuaranteeUsage"),
    UNBUILT("DisableDefaultQuota"),
    NO_GATE("EnableSyncGPUSharedResource"),
    NO_GATE("ElasticQuotaIgnorePodOverhead"),
    NO_GATE("PriorityTransformer"),
    NO_GATE("PreemptionPolicyTransformer"),
    NO_GATE("ReplaceResourcesTransformer"),
};

/* Go's strconv.ParseBool. */
static int parse_bool(const char *s, size_t len, bool *ret)
{
    static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};

    for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
        if (strlen(yes[i]) == len && !memcmp(yes[i], s, len)) {
            *ret = true;
            return 0;
        }
        if (strlen(no[i]) == len && !memcmp(no[i], s, len)) {
            *ret = false;
            return 0;
        }
    }
    return -EINVAL;
}

int webhook_gates_parse(const char *s, struct webhook_gates *g, struct strbuf *err)
{
    const char *p = s;

    while (*p) {
        size_t len = strcspn(p, ","), klen;
        const char *eq;
        bool v, found = false;

        while (len && *p == ' ') {
            p++;
            len--;
        }
        if (!len) {
            p += *p ? 1 : 0;
            continue;
        }
        eq = memchr(p, '=', len);
        klen = eq ? (size_t)(eq - p) : len;
        if (!eq || parse_bool(eq + 1, len - klen - 1, &v) < 0) {
            strbuf_addf(err, "invalid value of %.*s, err: expected NAME=BOOL", (int)len, p);
            return -EINVAL;
        }
        for (size_t i = 0; i < ARRAY_SIZE(gate_table); i++) {
            if (strlen(gate_table[i].name) != klen || memcmp(gate_table[i].name, p, klen))
                continue;
            found = true;
            if (gate_table[i].off == (size_t)-2 && v) {
                strbuf_addf(err,
                            "feature gate %.*s=true is not supported by koord manager (what it "
                            "enables upstream is not implemented; docs/cli.md)",
                            (int)klen, p);
                return -EINVAL;
            }
            if (gate_table[i].off < (size_t)-2)
                *(bool *)((char *)g + gate_table[i].off) = v;
        }
        if (!found) {
            strbuf_addf(err, "unrecognized feature gate: %.*s", (int)klen, p);
            return -EINVAL;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* ---- paths ---- */

struct path_entry {
    const char *path;
    webhook__handler_fn fn;
    size_t gate; /* offsetof the gate */
    unsigned needs;
};

static const struct path_entry paths[] = {
    {WEBHOOK_PATH_MUTATE_POD, webhook__mutate_pod, offsetof(struct webhook_gates, pod_mutating),
     WEBHOOK_NEED_PROFILES},
    {WEBHOOK_PATH_VALIDATE_POD, webhook__validate_pod,
     offsetof(struct webhook_gates, pod_validating), WEBHOOK_NEED_QUOTAS},
    {WEBHOOK_PATH_VALIDATE_CM, webhook__validate_configmap,
     offsetof(struct webhook_gates, configmap_validating), WEBHOOK_NEED_NODES},
    {WEBHOOK_PATH_MUTATE_QUOTA, webhook__mutate_quota,
     offsetof(struct webhook_gates, elastic_mutating), WEBHOOK_NEED_QUOTAS},
    {WEBHOOK_PATH_VALIDATE_QUOTA, webhook__validate_quota,
     offsetof(struct webhook_gates, elastic_validating), WEBHOOK_NEED_QUOTAS},
    {WEBHOOK_PATH_MUTATE_NODE, webhook__mutate_node, offsetof(struct webhook_gates, node_mutating),
     0},
};

static bool gate_on(const struct webhook_config *cfg, size_t off)
{
    return cfg->gates.framework && *(const bool *)((const char *)&cfg->gates + off);
}

static const struct path_entry *find_path(const struct webhook_config *cfg, const char *path)
{
    for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
        if (!strcmp(paths[i].path, path))
            return gate_on(cfg, paths[i].gate) ? &paths[i] : NULL;
    return NULL;
}

bool webhook_path_enabled(const struct webhook_config *cfg, const char *path, unsigned *ret_needs)
{
    const struct path_entry *e = find_path(cfg, path);

    if (e && ret_needs)
        *ret_needs = e->needs;
    return e != NULL;
}

/* ---- the review ---- */

static int decode(const cJSON *review, struct webhook__request *req, struct strbuf *err)
{
    const cJSON *r = get(review, "request"), *res = get(r, "resource"), *o;
    const char *api = get_str(review, "apiVersion"), *kind = get_str(review, "kind");

    if (!cJSON_IsObject(review) || !api || strcmp(api, "admission.k8s.io/v1") || !kind ||
        strcmp(kind, "AdmissionReview")) {
        strbuf_addstr(err, "expected an AdmissionReview of admission.k8s.io/v1");
        return -EINVAL;
    }
    if (!cJSON_IsObject(r) || !get_str(r, "uid") || !get_str(r, "operation")) {
        strbuf_addstr(err, "the AdmissionReview has no request with uid and operation");
        return -EINVAL;
    }
    *req = (struct webhook__request){
        .uid = get_str(r, "uid"),
        .operation = get_str(r, "operation"),
        .namespace = get_str(r, "namespace") ? get_str(r, "namespace") : "",
        .name = get_str(r, "name") ? get_str(r, "name") : "",
        .group = get_str(res, "group") ? get_str(res, "group") : "",
        .resource = get_str(res, "resource") ? get_str(res, "resource") : "",
        .subresource = get_str(r, "subResource") ? get_str(r, "subResource") : "",
    };
    o = get(r, "object");
    req->object = cJSON_IsObject(o) ? o : NULL;
    o = get(r, "oldObject");
    req->old_object = cJSON_IsObject(o) ? o : NULL;
    return 0;
}

static cJSON *respond(const struct webhook__request *req, int r, struct webhook__result *res)
{
    cJSON *out = cJSON_CreateObject(), *resp, *result;

    CHECK(out);
    CHECK(cJSON_AddStringToObject(out, "apiVersion", "admission.k8s.io/v1"));
    CHECK(cJSON_AddStringToObject(out, "kind", "AdmissionReview"));
    CHECK(resp = cJSON_AddObjectToObject(out, "response"));
    CHECK(cJSON_AddStringToObject(resp, "uid", req->uid));
    if (r < 0) {
        CHECK(cJSON_AddFalseToObject(resp, "allowed"));
        CHECK(result = cJSON_AddObjectToObject(resp, "status"));
        CHECK(cJSON_AddNumberToObject(result, "code", r == -EACCES ? 400 : 500));
        if (!res->msg.len)
            strbuf_addstr(&res->msg, err_str(r));
        CHECK(cJSON_AddStringToObject(result, "message", res->msg.buf));
    } else {
        CHECK(cJSON_AddTrueToObject(resp, "allowed"));
        if (res->mutated && req->object) {
            cJSON *patch = NULL;
            struct strbuf text = STRBUF_INIT, b64 = STRBUF_INIT;
            CHECK(json_patch_create(req->object, res->mutated, &patch) == 0);
            if (cJSON_GetArraySize(patch) > 0) {
                CHECK(json_print(patch, &text) == 0);
                strbuf_add_base64(&b64, text.buf, text.len);
                CHECK(cJSON_AddStringToObject(resp, "patchType", "JSONPatch"));
                CHECK(cJSON_AddStringToObject(resp, "patch", b64.buf));
            }
            cJSON_Delete(patch);
            strbuf_release(&text);
            strbuf_release(&b64);
        }
    }
    if (res->warnings && cJSON_GetArraySize(res->warnings) > 0) {
        CHECK(cJSON_AddItemToObject(resp, "warnings", res->warnings));
        res->warnings = NULL;
    }
    return out;
}

static unsigned default_rand100(void *userdata)
{
    (void)userdata;
    return (unsigned)(random() % 100);
}

int webhook_review(const struct webhook_config *cfg, const char *path, const cJSON *review,
                   const struct webhook_data *data, cJSON **ret, struct strbuf *err)
{
    const struct path_entry *e = find_path(cfg, path);
    struct webhook__request req;
    struct webhook__result res = {.msg = STRBUF_INIT};
    struct webhook_config c = *cfg;
    int r;

    if (!e)
        return -ENOENT;
    if ((r = decode(review, &req, err)) < 0)
        return r;
    if (!c.rand100)
        c.rand100 = default_rand100;
    r = e->fn(&c, &req, data, &res);
    *ret = respond(&req, r, &res);
    cJSON_Delete(res.mutated);
    cJSON_Delete(res.warnings);
    strbuf_release(&res.msg);
    return 0;
}

/* ---- the webhook configurations ---- */

struct hook {
    const char *name;
    bool mutating;
    const char *path;
    size_t gate;
    const char *failure;
    const char *rules; /* JSON */
    const char *namespace_selector, *object_selector;
};

#define CONTROL_PLANE                                                                              \
    "{\"matchExpressions\":[{\"key\":\"control-plane\",\"operator\":\"DoesNotExist\"}]}"
#define POD_RULE(ops)                                                                              \
    "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":" ops                          \
    ",\"resources\":[\"pods\"]}]"
#define QUOTA_RULE(ops)                                                                            \
    "[{\"apiGroups\":[\"scheduling.sigs.k8s.io\"],\"apiVersions\":[\"v1alpha1\"],"                 \
    "\"operations\":" ops ",\"resources\":[\"elasticquotas\"]}]"

/* config/webhook/manifests.yaml with patch_manifests.yaml applied. */
static const struct hook hooks[] = {
    {"melasticquota.koordinator.sh", true, WEBHOOK_PATH_MUTATE_QUOTA,
     offsetof(struct webhook_gates, elastic_mutating), "Fail", QUOTA_RULE("[\"CREATE\"]"), NULL,
     NULL},
    {"mnode-status.koordinator.sh", true, WEBHOOK_PATH_MUTATE_NODE,
     offsetof(struct webhook_gates, node_mutating), "Ignore",
     "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"CREATE\",\"UPDATE\"],"
     "\"resources\":[\"nodes/status\"]}]",
     NULL, NULL},
    {"mpod-create.koordinator.sh", true, WEBHOOK_PATH_MUTATE_POD,
     offsetof(struct webhook_gates, pod_mutating), "Fail", POD_RULE("[\"CREATE\"]"), CONTROL_PLANE,
     NULL},
    {"mpod-update.koordinator.sh", true, WEBHOOK_PATH_MUTATE_POD,
     offsetof(struct webhook_gates, pod_mutating), "Fail", POD_RULE("[\"UPDATE\"]"), CONTROL_PLANE,
     "{\"matchExpressions\":[{\"key\":\"pod.koordinator.sh/mutating-update\",\"operator\":\"In\","
     "\"values\":[\"true\"]}]}"},
    {"vconfigmap.koordinator.sh", false, WEBHOOK_PATH_VALIDATE_CM,
     offsetof(struct webhook_gates, configmap_validating), "Fail",
     "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"CREATE\",\"UPDATE\","
     "\"DELETE\"],\"resources\":[\"configmaps\"]}]",
     NULL,
     "{\"matchExpressions\":[{\"key\":\"koordinator.sh/configmap-type\",\"operator\":\"In\","
     "\"values\":[\"slo-controller-config\"]}]}"},
    {"velasticquota.koordinator.sh", false, WEBHOOK_PATH_VALIDATE_QUOTA,
     offsetof(struct webhook_gates, elastic_validating), "Fail",
     QUOTA_RULE("[\"CREATE\",\"UPDATE\",\"DELETE\"]"), NULL, NULL},
    {"vpod.koordinator.sh", false, WEBHOOK_PATH_VALIDATE_POD,
     offsetof(struct webhook_gates, pod_validating), "Fail", POD_RULE("[\"CREATE\",\"UPDATE\"]"),
     CONTROL_PLANE, NULL},
};

static cJSON *parse_const(const char *json)
{
    cJSON *v = cJSON_Parse(json);
    CHECK(v);
    return v;
}

static cJSON *configuration(const struct webhook_config *cfg, bool mutating, const char *ca_b64,
                            const char *url_base)
{
    cJSON *o = cJSON_CreateObject(), *meta, *list;

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "apiVersion", "admissionregistration.k8s.io/v1"));
    CHECK(cJSON_AddStringToObject(
        o, "kind", mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration"));
    CHECK(meta = cJSON_AddObjectToObject(o, "metadata"));
    CHECK(cJSON_AddStringToObject(
        meta, "name", mutating ? WEBHOOK_MUTATING_CONFIG_NAME : WEBHOOK_VALIDATING_CONFIG_NAME));
    CHECK(list = cJSON_AddArrayToObject(o, "webhooks"));
    for (size_t i = 0; i < ARRAY_SIZE(hooks); i++) {
        const struct hook *h = &hooks[i];
        cJSON *w, *cc, *versions;
        if (h->mutating != mutating || !gate_on(cfg, h->gate))
            continue;
        CHECK(w = cJSON_CreateObject());
        CHECK(cJSON_AddItemToArray(list, w));
        CHECK(cJSON_AddStringToObject(w, "name", h->name));
        CHECK(versions = cJSON_AddArrayToObject(w, "admissionReviewVersions"));
        CHECK(cJSON_AddItemToArray(versions, cJSON_CreateString("v1")));
        CHECK(cc = cJSON_AddObjectToObject(w, "clientConfig"));
        if (url_base) {
            struct strbuf url = STRBUF_INIT;
            strbuf_addf(&url, "%s%s", url_base, h->path);
            CHECK(cJSON_AddStringToObject(cc, "url", url.buf));
            strbuf_release(&url);
        } else {
            cJSON *svc;
            CHECK(svc = cJSON_AddObjectToObject(cc, "service"));
            CHECK(cJSON_AddStringToObject(svc, "namespace", "koordinator-system"));
            CHECK(cJSON_AddStringToObject(svc, "name", WEBHOOK_SERVICE_NAME));
            CHECK(cJSON_AddStringToObject(svc, "path", h->path));
            CHECK(cJSON_AddNumberToObject(svc, "port", 443));
        }
        CHECK(cJSON_AddStringToObject(cc, "caBundle", ca_b64));
        CHECK(cJSON_AddStringToObject(w, "failurePolicy", h->failure));
        CHECK(cJSON_AddItemToObject(w, "rules", parse_const(h->rules)));
        CHECK(cJSON_AddStringToObject(w, "sideEffects", "None"));
        if (h->namespace_selector)
            CHECK(
                cJSON_AddItemToObject(w, "namespaceSelector", parse_const(h->namespace_selector)));
        if (h->object_selector)
            CHECK(cJSON_AddItemToObject(w, "objectSelector", parse_const(h->object_selector)));
    }
    return o;
}

void webhook_configurations(const struct webhook_config *cfg, const char *ca_pem,
                            const char *url_base, cJSON **ret_mutating, cJSON **ret_validating)
{
    struct strbuf b64 = STRBUF_INIT;

    strbuf_add_base64(&b64, ca_pem, strlen(ca_pem));
    *ret_mutating = configuration(cfg, true, b64.buf, url_base);
    *ret_validating = configuration(cfg, false, b64.buf, url_base);
    strbuf_release(&b64);
}
