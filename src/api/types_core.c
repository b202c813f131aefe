/*
 * The core/v1 subset koord needs (Node, Pod with spec.schedulingGates, ConfigMap, Secret, Event,
 * Namespace, Service, Endpoints), coordination.k8s.io/v1 Lease and scheduling.k8s.io/v1
 * PriorityClass. Every field name of the upstream types is listed
 * so unknown-field detection is exact; the parts koord does not interpret are schemaless (ANY).
 */
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/schema.h"
#include "api/workloads.h"
#include "base/base.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNull(c) ? NULL : c;
}

/* ---- Node ---- */

static const struct api_prop node_spec_props[] = {
    {"podCIDR", &api_string, API_VAL},    {"podCIDRs", &api_string_list},
    {"providerID", &api_string, API_VAL}, {"unschedulable", &api_bool, API_VAL},
    {"taints", API_ARR(&api_taint)},      {"configSource", &api_any},
    {"externalID", &api_string, API_VAL}, {NULL},
};

static const struct api_prop node_status_props[] = {
    {"capacity", &api_resource_list},
    {"allocatable", &api_resource_list},
    {"phase", &api_string, API_VAL},
    {"conditions", API_ARR(&api_preserve_object)},
    {"addresses", API_ARR(&api_preserve_object)},
    {"daemonEndpoints", &api_preserve_object},
    {"nodeInfo", &api_preserve_object},
    {"images", API_ARR(&api_preserve_object)},
    {"volumesInUse", &api_string_list},
    {"volumesAttached", API_ARR(&api_preserve_object)},
    {"config", &api_preserve_object},
    {"runtimeHandlers", API_ARR(&api_preserve_object)},
    {"features", &api_preserve_object},
    {NULL},
};

/* ---- Pod ---- */

static const struct api_prop resource_requirements_props[] = {
    {"limits", &api_resource_list},
    {"requests", &api_resource_list},
    {"claims", API_ARR(&api_preserve_object)},
    {NULL},
};

static const struct api_schema resource_requirements = {
    .type = API_OBJECT,
    .props = resource_requirements_props,
    .def_name = "io.k8s.api.core.v1.ResourceRequirements",
};

static const struct api_prop container_props[] = {
    {"name", &api_string, API_REQ | API_ALWAYS},
    {"image", &api_string, API_VAL},
    {"command", &api_string_list},
    {"args", &api_string_list},
    {"workingDir", &api_string, API_VAL},
    {"ports", API_ARR(&api_preserve_object)},
    {"envFrom", API_ARR(&api_preserve_object)},
    {"env", API_ARR(&api_preserve_object)},
    {"resources", &resource_requirements, API_ALWAYS},
    {"resizePolicy", API_ARR(&api_preserve_object)},
    {"restartPolicy", &api_string},
    {"volumeMounts", API_ARR(&api_preserve_object)},
    {"volumeDevices", API_ARR(&api_preserve_object)},
    {"livenessProbe", &api_preserve_object},
    {"readinessProbe", &api_preserve_object},
    {"startupProbe", &api_preserve_object},
    {"lifecycle", &api_preserve_object},
    {"terminationMessagePath", &api_string, API_VAL, "\"/dev/termination-log\""},
    {"terminationMessagePolicy", &api_string, API_VAL, "\"File\""},
    {"imagePullPolicy", &api_string, API_VAL}, /* by the image's tag: api_pod_spec_defaults() */
    {"securityContext", &api_preserve_object},
    {"stdin", &api_bool, API_VAL},
    {"stdinOnce", &api_bool, API_VAL},
    {"tty", &api_bool, API_VAL},
    {"targetContainerName", &api_string, API_VAL},
    {NULL},
};

static const struct api_schema container = {
    .type = API_OBJECT, .props = container_props, .def_name = "io.k8s.api.core.v1.Container"};

static const struct api_prop scheduling_gate_props[] = {
    {"name", &api_string, API_REQ | API_ALWAYS},
    {NULL},
};

/* KEP-3521: gate names are qualified names and unique (reference kubernetes-api.md 9.3). */
static void check_scheduling_gates(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c, *d;
    long i = 0;
    (void)s;

    cJSON_ArrayForEach(c, v)
    {
        const cJSON *name = get(c, "name");
        long j = 0;
        size_t len;

        if (!cJSON_IsString(name)) {
            i++;
            continue;
        }
        len = api_walk_push(w, NULL, i);
        {
            struct strbuf why = STRBUF_INIT;
            /* Reported at the element, as ValidateQualifiedName(name, fldPath.Index(i)). */
            if (labels_check_qualified_name(name->valuestring, &why) < 0)
                api_walk_error(w, NULL, FIELD_INVALID, name, "%s", why.buf);
            strbuf_release(&why);
        }
        cJSON_ArrayForEach(d, v)
        {
            const cJSON *dn = get(d, "name");
            if (j++ >= i)
                break;
            if (cJSON_IsString(dn) && !strcmp(dn->valuestring, name->valuestring)) {
                api_walk_error(w, NULL, FIELD_DUPLICATE, name, NULL);
                break;
            }
        }
        api_walk_pop(w, len);
        i++;
    }
}

/* A pod may not be created bound to a node while it still has scheduling gates; it needs a
 * container (validateContainers: an empty list is "Required value" as a missing one is; the
 * generic walk sees only the missing one). */
static void check_pod_spec(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *gates = get(v, "schedulingGates"), *node = get(v, "nodeName"),
                *containers = get(v, "containers");
    (void)s;

    if (cJSON_IsArray(containers) && !containers->child)
        api_walk_error(w, "containers", FIELD_REQUIRED, NULL, NULL);

    if (cJSON_IsArray(gates) && cJSON_GetArraySize(gates) > 0 && cJSON_IsString(node) &&
        *node->valuestring)
        api_walk_error(w, "nodeName", FIELD_FORBIDDEN, NULL,
                       "cannot be set until all schedulingGates have been cleared");
}

static const struct api_prop pod_spec_props[] = {
    {"volumes", API_ARR(&api_preserve_object)},
    {"initContainers", API_ARR(&container)},
    {"containers", API_ARR(&container), API_REQ | API_ALWAYS},
    {"ephemeralContainers", API_ARR(&api_preserve_object)},
    {"restartPolicy", API_ENUM("Always", "OnFailure", "Never"), API_VAL, "\"Always\""},
    {"terminationGracePeriodSeconds", &api_int64, 0, "30"},
    {"activeDeadlineSeconds", &api_int64},
    {"dnsPolicy", &api_string, API_VAL, "\"ClusterFirst\""},
    {"nodeSelector", &api_string_map},
    {"serviceAccountName", &api_string, API_VAL},
    {"serviceAccount", &api_string, API_VAL},
    {"automountServiceAccountToken", &api_bool},
    {"nodeName", &api_string, API_VAL},
    {"hostNetwork", &api_bool, API_VAL},
    {"hostPID", &api_bool, API_VAL},
    {"hostIPC", &api_bool, API_VAL},
    {"shareProcessNamespace", &api_bool},
    {"securityContext", &api_preserve_object, 0, "{}"},
    {"imagePullSecrets", API_ARR(&api_preserve_object)},
    {"hostname", &api_string, API_VAL},
    {"subdomain", &api_string, API_VAL},
    {"affinity", &api_preserve_object},
    {"schedulerName", &api_string, API_VAL, "\"default-scheduler\""},
    {"tolerations", API_ARR(&api_toleration)},
    {"hostAliases", API_ARR(&api_preserve_object)},
    {"priorityClassName", &api_string, API_VAL},
    {"priority", &api_int32},
    {"dnsConfig", &api_preserve_object},
    {"readinessGates", API_ARR(&api_preserve_object)},
    {"runtimeClassName", &api_string},
    {"enableServiceLinks", &api_bool, 0, "true"},
    {"preemptionPolicy", API_ENUM("Never", "PreemptLowerPriority")},
    {"overhead", &api_resource_list},
    {"topologySpreadConstraints", API_ARR(&api_preserve_object)},
    {"setHostnameAsFQDN", &api_bool},
    {"os", &api_preserve_object},
    {"hostUsers", &api_bool},
    {"schedulingGates", &(const struct api_schema){.type = API_ARRAY,
                                                   .items = API_OBJ(scheduling_gate_props),
                                                   .check = check_scheduling_gates}},
    {"resourceClaims", API_ARR(&api_preserve_object)},
    {"resources", &resource_requirements},
    {NULL},
};

const struct api_schema api_pod_spec = {.type = API_OBJECT,
                                        .props = pod_spec_props,
                                        .check = check_pod_spec,
                                        .def_name = "io.k8s.api.core.v1.PodSpec"};

static const struct api_prop pod_status_props[] = {
    {"observedGeneration", &api_int64},
    {"phase", API_ENUM("Pending", "Running", "Succeeded", "Failed", "Unknown"), API_VAL},
    {"conditions", API_ARR(&api_preserve_object)},
    {"message", &api_string, API_VAL},
    {"reason", &api_string, API_VAL},
    {"nominatedNodeName", &api_string, API_VAL},
    {"hostIP", &api_string, API_VAL},
    {"hostIPs", API_ARR(&api_preserve_object)},
    {"podIP", &api_string, API_VAL},
    {"podIPs", API_ARR(&api_preserve_object)},
    {"startTime", &api_time},
    {"initContainerStatuses", API_ARR(&api_preserve_object)},
    {"containerStatuses", API_ARR(&api_preserve_object)},
    {"qosClass", API_ENUM("Guaranteed", "Burstable", "BestEffort"), API_VAL},
    {"ephemeralContainerStatuses", API_ARR(&api_preserve_object)},
    {"resize", &api_string, API_VAL},
    {"resourceClaimStatuses", API_ARR(&api_preserve_object)},
    {NULL},
};

/* ---- ConfigMap ---- */

/* IsConfigMapKey: [-._a-zA-Z0-9]+, at most 253 bytes, not "." or "..". */
static void check_configmap_keys(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    (void)s;

    cJSON_ArrayForEach(c, v)
    {
        const char *k = c->string;
        size_t n = strlen(k);
        bool ok = n > 0 && n <= 253 && strcmp(k, ".") && strcmp(k, "..");
        for (const char *p = k; ok && *p; p++)
            ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                 *p == '-' || *p == '_' || *p == '.';
        if (!ok) {
            cJSON *key = cJSON_CreateString(k);
            api_walk_error(w, NULL, FIELD_INVALID, key,
                           "a valid config key must consist of alphanumeric characters, '-', '_' "
                           "or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used "
                           "for validation is '[-._a-zA-Z0-9]+')");
            cJSON_Delete(key);
        }
    }
}

static const struct api_prop configmap_props[] = {
    {"data", &(const struct api_schema){.type = API_MAP,
                                        .items = &api_string,
                                        .check = check_configmap_keys}},
    {"binaryData", &(const struct api_schema){.type = API_MAP,
                                              .items = &api_string,
                                              .check = check_configmap_keys}},
    {"immutable", &api_bool},
    {NULL},
};

/* ---- Secret ---- */

/* Pushes "[key]", the path Kubernetes gives a map entry; returns the length to pop back to. */
static size_t push_key(struct api_walk *w, const char *key)
{
    size_t len = w->path.len;

    strbuf_addf(&w->path, "[%s]", key);
    return len;
}

/* []byte values travel as standard base64 (Go's encoding/json; "\r" and "\n" are skipped). */
static void check_base64(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    (void)s;

    cJSON_ArrayForEach(c, v)
    {
        size_t n = 0, pad = 0;
        bool ok = cJSON_IsString(c);
        for (const char *p = ok ? c->valuestring : ""; ok && *p; p++) {
            if (*p == '\r' || *p == '\n')
                continue;
            if (*p == '=') {
                pad++;
            } else {
                ok = pad == 0 && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                  (*p >= '0' && *p <= '9') || *p == '+' || *p == '/');
            }
            n++;
        }
        if (ok && (n % 4 != 0 || pad > 2))
            ok = false;
        if (!ok) {
            size_t len = push_key(w, c->string);
            api_walk_error(w, NULL, FIELD_INVALID, NULL, "illegal base64 data");
            api_walk_pop(w, len);
        }
    }
}

static void check_secret_data(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    check_configmap_keys(s, v, w);
    check_base64(s, v, w);
}

/* The keys each built-in secret type requires (core/v1 validation, ValidateSecret). */
static void check_secret(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    static const struct {
        const char *type, *key;
    } need[] = {
        {"kubernetes.io/dockercfg", ".dockercfg"},
        {"kubernetes.io/dockerconfigjson", ".dockerconfigjson"},
        {"kubernetes.io/ssh-auth", "ssh-privatekey"},
        {"kubernetes.io/tls", "tls.crt"},
        {"kubernetes.io/tls", "tls.key"},
    };
    const cJSON *type = get(o, "type"), *data = get(o, "data"), *c;
    size_t total = 0;
    (void)s;

    cJSON_ArrayForEach(c, data) total += cJSON_IsString(c) ? strlen(c->valuestring) / 4 * 3 : 0;
    if (total > 1048576)
        api_walk_error(w, "data", FIELD_TOO_LONG, NULL, "must have at most 1048576 bytes");
    if (!cJSON_IsString(type))
        return;
    for (size_t i = 0; i < ARRAY_SIZE(need); i++)
        if (!strcmp(type->valuestring, need[i].type) && !get(data, need[i].key)) {
            size_t len = api_walk_push(w, "data", -1);
            (void)push_key(w, need[i].key);
            api_walk_error(w, NULL, FIELD_REQUIRED, NULL, NULL);
            api_walk_pop(w, len);
        }
    if (!strcmp(type->valuestring, "kubernetes.io/basic-auth") && !get(data, "username") &&
        !get(data, "password"))
        api_walk_error(w, "data", FIELD_REQUIRED, NULL, "either username or password is required");
}

static const struct api_prop secret_props[] = {
    {"data",
     &(const struct api_schema){.type = API_MAP, .items = &api_string, .check = check_secret_data}},
    {"stringData", &(const struct api_schema){.type = API_MAP,
                                              .items = &api_string,
                                              .check = check_configmap_keys}},
    {"type", &api_string, API_VAL, "\"Opaque\""},
    {"immutable", &api_bool},
    {NULL},
};

/* ---- Service, Endpoints ---- */

static const struct api_prop service_port_props[] = {
    {"name", &api_string, API_VAL},
    {"protocol", API_ENUM("TCP", "UDP", "SCTP"), API_VAL, "\"TCP\""},
    {"appProtocol", &api_string},
    {"port", API_I32(API_RANGE(1, 65535), API_NONE), API_REQ | API_ALWAYS},
    {"targetPort", &api_int_or_string},
    {"nodePort", API_I32(API_RANGE(0, 65535), API_NONE), API_VAL},
    {NULL},
};

/* Port names are required once there are two ports, and unique (ValidateService). */
static void check_service_ports(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    int n = cJSON_GetArraySize(v);
    (void)s;

    for (int i = 0; i < n; i++) {
        const cJSON *name = get(cJSON_GetArrayItem(v, i), "name");
        const char *nm = cJSON_IsString(name) ? name->valuestring : "";
        size_t len = api_walk_push(w, NULL, i);
        if (n > 1 && !*nm)
            api_walk_error(w, "name", FIELD_REQUIRED, NULL, NULL);
        for (int j = 0; j < i && *nm; j++) {
            const cJSON *o = get(cJSON_GetArrayItem(v, j), "name");
            if (cJSON_IsString(o) && !strcmp(o->valuestring, nm))
                api_walk_error(w, "name", FIELD_DUPLICATE, name, NULL);
        }
        api_walk_pop(w, len);
    }
}

static void check_service_spec(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *type = get(v, "type"), *ip = get(v, "clusterIP");
    bool external = cJSON_IsString(type) && !strcmp(type->valuestring, "ExternalName");
    bool headless = cJSON_IsString(ip) && !strcmp(ip->valuestring, "None");
    (void)s;

    if (!external && !headless && cJSON_GetArraySize(get(v, "ports")) == 0)
        api_walk_error(w, "ports", FIELD_REQUIRED, NULL, NULL);
    if (external && !cJSON_IsString(get(v, "externalName")))
        api_walk_error(w, "externalName", FIELD_REQUIRED, NULL, NULL);
}

static const struct api_prop service_spec_props[] = {
    {"ports", &(const struct api_schema){.type = API_ARRAY,
                                         .items = API_OBJ(service_port_props),
                                         .check = check_service_ports}},
    {"selector", &api_string_map},
    {"clusterIP", &api_string, API_VAL},
    {"clusterIPs", &api_string_list},
    {"type", API_ENUM("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"), API_VAL,
     "\"ClusterIP\""},
    {"externalIPs", &api_string_list},
    {"sessionAffinity", API_ENUM("ClientIP", "None"), API_VAL, "\"None\""},
    {"loadBalancerIP", &api_string, API_VAL},
    {"loadBalancerSourceRanges", &api_string_list},
    {"externalName", &api_string, API_VAL},
    {"externalTrafficPolicy", API_ENUM("Cluster", "Local"), API_VAL},
    {"healthCheckNodePort", &api_int32, API_VAL},
    {"publishNotReadyAddresses", &api_bool, API_VAL},
    {"sessionAffinityConfig", &api_preserve_object},
    {"ipFamilies", &api_string_list},
    {"ipFamilyPolicy", API_ENUM("SingleStack", "PreferDualStack", "RequireDualStack")},
    {"allocateLoadBalancerNodePorts", &api_bool},
    {"loadBalancerClass", &api_string},
    {"internalTrafficPolicy", API_ENUM("Cluster", "Local")},
    {"trafficDistribution", &api_string},
    {NULL},
};

static const struct api_prop service_status_props[] = {
    {"loadBalancer", &api_preserve_object},
    {"conditions", API_ARR(&api_preserve_object)},
    {NULL},
};

static const struct api_prop endpoints_props[] = {
    {"subsets", API_ARR(&api_preserve_object)},
    {NULL},
};

/* ---- PriorityClass ---- */

static const struct api_prop priority_class_props[] = {
    {"value", &api_int32, API_REQ | API_ALWAYS},
    {"globalDefault", &api_bool, API_VAL},
    {"description", &api_string, API_VAL},
    {"preemptionPolicy", API_ENUM("Never", "PreemptLowerPriority"), 0, "\"PreemptLowerPriority\""},
    {NULL},
};

/* ---- Event ---- */

static const struct api_prop event_source_props[] = {
    {"component", &api_string, API_VAL},
    {"host", &api_string, API_VAL},
    {NULL},
};

static const struct api_schema micro_time = {.type = API_STRING, .format = "date-time"};

static const struct api_prop event_props[] = {
    {"involvedObject", &api_object_reference, API_REQ | API_ALWAYS},
    {"reason", &api_string, API_VAL},
    {"message", &api_string, API_VAL},
    {"source", API_OBJ(event_source_props)},
    {"firstTimestamp", &api_time},
    {"lastTimestamp", &api_time},
    {"count", &api_int32, API_VAL},
    {"type", API_ENUM("Normal", "Warning"), API_VAL},
    {"eventTime", &micro_time},
    {"series", &api_preserve_object},
    {"action", &api_string, API_VAL},
    {"related", &api_object_reference},
    {"reportingComponent", &api_string, API_VAL},
    {"reportingInstance", &api_string, API_VAL},
    {NULL},
};

/* The imagePullPolicy kube gives a container that names none (SetDefaults_Container): Always
 * for the tag latest, written or implied (no tag and no digest), else IfNotPresent. */
static void default_pull_policy(cJSON *c)
{
    const char *image = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "image"));
    const char *last, *colon;
    bool latest = false;

    if (!cJSON_IsObject(c) || cJSON_GetObjectItemCaseSensitive(c, "imagePullPolicy"))
        return;
    if (image && *image && !strchr(image, '@')) {
        last = strrchr(image, '/');
        colon = strrchr(last ? last : image, ':');
        latest = !colon || !strcmp(colon + 1, "latest");
    }
    CHECK(cJSON_AddStringToObject(c, "imagePullPolicy", latest ? "Always" : "IfNotPresent"));
}

void api_pod_spec_defaults(cJSON *spec)
{
    cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
        default_pull_policy(c);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "initContainers"))
        default_pull_policy(c);
}

/* ---- Namespace ---- */

/*
 * spec.finalizers (validateFinalizerName in pkg/apis/core/validation): each a qualified name,
 * and one without a '/' prefix must be a standard finalizer (kubernetes, orphan,
 * foregroundDeletion). Checked on create, update and the finalize subresource.
 */
static void check_ns_finalizers(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    static const char *const standard[] = {"kubernetes", "orphan", "foregroundDeletion"};
    const cJSON *f;
    long i = 0;
    (void)s;

    cJSON_ArrayForEach(f, v)
    {
        struct strbuf why = STRBUF_INIT;
        size_t len = api_walk_push(w, NULL, i++);
        bool known = false;

        /* (A value that is no string is the item schema's to report.) */
        if (cJSON_IsString(f) && labels_check_qualified_name(f->valuestring, &why) < 0) {
            api_walk_error(w, NULL, FIELD_INVALID, f, "%s", why.buf);
        } else if (cJSON_IsString(f) && !strchr(f->valuestring, '/')) {
            for (size_t k = 0; k < ARRAY_SIZE(standard); k++)
                known = known || !strcmp(f->valuestring, standard[k]);
            if (!known)
                api_walk_error(w, NULL, FIELD_INVALID, f,
                               "name is neither a standard finalizer name nor is it fully "
                               "qualified");
        }
        api_walk_pop(w, len);
        strbuf_release(&why);
    }
}

static const struct api_prop namespace_spec_props[] = {
    {"finalizers", &(const struct api_schema){.type = API_ARRAY,
                                              .items = &api_string,
                                              .check = check_ns_finalizers}},
    {NULL},
};

static const struct api_prop namespace_status_props[] = {
    {"phase", API_ENUM("Active", "Terminating"), API_VAL},
    {"conditions", API_ARR(&api_preserve_object)},
    {NULL},
};

/* ---- Lease ---- */

static const struct api_prop lease_spec_props[] = {
    {"holderIdentity", &api_string},  {"leaseDurationSeconds", &api_int32},
    {"acquireTime", &micro_time},     {"renewTime", &micro_time},
    {"leaseTransitions", &api_int32}, {"strategy", &api_string},
    {"preferredHolder", &api_string}, {NULL},
};

const struct api_kind api_kind_node = {
    .group = "",
    .version = "v1",
    .kind = "Node",
    .plural = "nodes",
    .short_names = (const char *const[]){"no", NULL},
    .status_subresource = true,
    .spec = API_OBJ(node_spec_props),
    .status = API_OBJ(node_status_props),
};

const struct api_kind api_kind_pod = {
    .group = "",
    .version = "v1",
    .kind = "Pod",
    .plural = "pods",
    .short_names = (const char *const[]){"po", NULL},
    .namespaced = true,
    .status_subresource = true,
    .spec = &api_pod_spec,
    .status = API_OBJ(pod_status_props),
};

const struct api_kind api_kind_configmap = {
    .group = "",
    .version = "v1",
    .kind = "ConfigMap",
    .plural = "configmaps",
    .short_names = (const char *const[]){"cm", NULL},
    .namespaced = true,
    .extra = configmap_props,
};

const struct api_kind api_kind_secret = {
    .group = "",
    .version = "v1",
    .kind = "Secret",
    .plural = "secrets",
    .namespaced = true,
    .extra = secret_props,
    .check = check_secret,
};

const struct api_kind api_kind_service = {
    .group = "",
    .version = "v1",
    .kind = "Service",
    .plural = "services",
    .short_names = (const char *const[]){"svc", NULL},
    .namespaced = true,
    .status_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = service_spec_props,
                                       .check = check_service_spec},
    .status = API_OBJ(service_status_props),
};

const struct api_kind api_kind_endpoints = {
    .group = "",
    .version = "v1",
    .kind = "Endpoints",
    .plural = "endpoints",
    .short_names = (const char *const[]){"ep", NULL},
    .namespaced = true,
    .extra = endpoints_props,
};

const struct api_kind api_kind_priority_class = {
    .group = "scheduling.k8s.io",
    .version = "v1",
    .kind = "PriorityClass",
    .plural = "priorityclasses",
    .short_names = (const char *const[]){"pc", NULL},
    .extra = priority_class_props,
};

const struct api_kind api_kind_event = {
    .group = "",
    .version = "v1",
    .kind = "Event",
    .plural = "events",
    .short_names = (const char *const[]){"ev", NULL},
    .namespaced = true,
    .extra = event_props,
};

const struct api_kind api_kind_namespace = {
    .group = "",
    .version = "v1",
    .kind = "Namespace",
    .plural = "namespaces",
    .short_names = (const char *const[]){"ns", NULL},
    .status_subresource = true,
    .name_rule = API_NAME_DNS_LABEL,
    .spec = API_OBJ(namespace_spec_props),
    .status = API_OBJ(namespace_status_props),
};

const struct api_kind api_kind_lease = {
    .group = "coordination.k8s.io",
    .version = "v1",
    .kind = "Lease",
    .plural = "leases",
    .namespaced = true,
    .spec = API_OBJ(lease_spec_props),
};
