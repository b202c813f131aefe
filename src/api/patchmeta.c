/*
 * The merge lists of the built-in kinds (see patchmeta.h). Every entry is a field with a
 * patchStrategy:"merge" (or "merge,retainKeys") struct tag; fields without one are atomic and
 * not listed. Read from kubernetes/api (the k8s.io/api module), core/v1/types.go at commit
 * 3fed8b5a (PodSpec, Container, PodStatus, NodeSpec, NodeStatus, NamespaceStatus, ServiceSpec,
 * ServiceStatus; EphemeralContainerCommon repeats Container's tags), and
 * k8s.io/apimachinery meta/v1 ObjectMeta; cross-checked against the kubernetes-api.md 3.5 list.
 * Lists checked and deliberately absent (atomic, no patchStrategy tag): PodSpec tolerations,
 * readinessGates; Container command, args, envFrom, resizePolicy, resources.claims;
 * NodeSpec taints; Endpoints subsets; Service ingress; CustomResourceDefinition versions and
 * status.conditions (listType=map but no patchStrategy); ObjectMeta managedFields.
 * Lease, PriorityClass, ConfigMap, Secret and Event have no merge lists besides metadata's.
 *
 * Paths are member names from the object root with list levels left out, as smp_lookup_fn
 * receives them.
 */
#include "api/patchmeta.h"

#include <string.h>

#include "base/base.h"

struct patch_entry {
    const char *path;
    const char *merge_key; /* NULL: a merge list of scalars */
};

struct api_patch_meta {
    const char *group;
    const char *kind;
    const struct patch_entry *entries; /* terminated by path NULL */
};

/* ObjectMeta: every kind has these. */
static const struct patch_entry meta_entries[] = {
    {"metadata.ownerReferences", "uid"},
    {"metadata.finalizers", NULL},
    {NULL, NULL},
};

/* Container's merge lists, under each of the three container lists. */
#define CONTAINER_ENTRIES(list)                                                                    \
    {"spec." list, "name"}, {"spec." list ".ports", "containerPort"},                              \
        {"spec." list ".env", "name"}, {"spec." list ".volumeMounts", "mountPath"},                \
    {                                                                                              \
        "spec." list ".volumeDevices", "devicePath"                                                \
    }

static const struct patch_entry pod_entries[] = {
    CONTAINER_ENTRIES("containers"),
    CONTAINER_ENTRIES("initContainers"),
    CONTAINER_ENTRIES("ephemeralContainers"),
    {"spec.volumes", "name"}, /* merge,retainKeys */
    {"spec.imagePullSecrets", "name"},
    {"spec.hostAliases", "ip"},
    {"spec.topologySpreadConstraints", "topologyKey"},
    {"spec.schedulingGates", "name"},
    {"spec.resourceClaims", "name"}, /* merge,retainKeys */
    {"status.conditions", "type"},
    {"status.podIPs", "ip"},
    {"status.hostIPs", "ip"},
    {"status.resourceClaimStatuses", "name"}, /* merge,retainKeys */
    {NULL, NULL},
};

/* A PodTemplateSpec's pod spec merge lists under prefix ("spec.template."). */
#define TEMPLATE_CONTAINER_ENTRIES(p, list)                                                        \
    {p "spec." list, "name"}, {p "spec." list ".ports", "containerPort"},                          \
        {p "spec." list ".env", "name"}, {p "spec." list ".volumeMounts", "mountPath"},            \
    {                                                                                              \
        p "spec." list ".volumeDevices", "devicePath"                                              \
    }
#define TEMPLATE_ENTRIES(p)                                                                        \
    TEMPLATE_CONTAINER_ENTRIES(p, "containers"), TEMPLATE_CONTAINER_ENTRIES(p, "initContainers"),  \
        TEMPLATE_CONTAINER_ENTRIES(p, "ephemeralContainers"), {p "spec.volumes", "name"},          \
        {p "spec.imagePullSecrets", "name"}, {p "spec.hostAliases", "ip"},                         \
        {p "spec.topologySpreadConstraints", "topologyKey"}, {p "spec.schedulingGates", "name"},   \
    {                                                                                              \
        p "spec.resourceClaims", "name"                                                            \
    }

/* Deployment, ReplicaSet, StatefulSet, DaemonSet, Job (apps/v1 and batch/v1 types.go: the
 * template's lists, and status.conditions merged by type). */
static const struct patch_entry workload_entries[] = {
    TEMPLATE_ENTRIES("spec.template."),
    {"status.conditions", "type"},
    {NULL, NULL},
};

static const struct patch_entry cron_job_entries[] = {
    TEMPLATE_ENTRIES("spec.jobTemplate.spec.template."),
    {NULL, NULL},
};

static const struct patch_entry node_entries[] = {
    {"spec.podCIDRs", NULL},
    {"status.conditions", "type"},
    {"status.addresses", "type"},
    {NULL, NULL},
};

static const struct patch_entry conditions_entries[] = {
    {"status.conditions", "type"}, /* NamespaceStatus, ServiceStatus (metav1.Condition) */
    {NULL, NULL},
};

static const struct patch_entry service_entries[] = {
    {"spec.ports", "port"},
    {"status.conditions", "type"},
    {NULL, NULL},
};

static const struct patch_entry no_entries[] = {
    {NULL, NULL},
};

/* ServiceAccount.secrets (patchStrategy merge, key name). */
static const struct patch_entry service_account_entries[] = {
    {"secrets", "name"},
    {NULL, NULL},
};

/* Mutating/ValidatingWebhookConfiguration.webhooks (patchStrategy merge, key name). */
static const struct patch_entry webhook_config_entries[] = {
    {"webhooks", "name"},
    {NULL, NULL},
};

static const struct api_patch_meta kinds[] = {
    {"", "Pod", pod_entries},
    {"", "Node", node_entries},
    {"", "Namespace", conditions_entries},
    {"", "ConfigMap", no_entries},
    {"", "Secret", no_entries},
    {"", "Event", no_entries},
    {"", "Service", service_entries},
    {"", "Endpoints", no_entries},
    {"coordination.k8s.io", "Lease", no_entries},
    {"scheduling.k8s.io", "PriorityClass", no_entries},
    {"apiextensions.k8s.io", "CustomResourceDefinition", no_entries},
    {"apps", "Deployment", workload_entries},
    {"apps", "ReplicaSet", workload_entries},
    {"apps", "StatefulSet", workload_entries},
    {"apps", "DaemonSet", workload_entries},
    {"apps", "ControllerRevision", no_entries},
    {"batch", "Job", workload_entries},
    {"batch", "CronJob", cron_job_entries},
    {"policy", "PodDisruptionBudget", conditions_entries},
    {"events.k8s.io", "Event", no_entries},
    {"discovery.k8s.io", "EndpointSlice", no_entries},
    {"", "ServiceAccount", service_account_entries},
    {"rbac.authorization.k8s.io", "Role", no_entries},
    {"rbac.authorization.k8s.io", "ClusterRole", no_entries},
    {"rbac.authorization.k8s.io", "RoleBinding", no_entries},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", no_entries},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", webhook_config_entries},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", webhook_config_entries},
    {"apiregistration.k8s.io", "APIService", conditions_entries},
};

const struct api_patch_meta *api_patch_meta_find(const char *group, const char *kind)
{
    for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
        if (!strcmp(kinds[i].group, group) && !strcmp(kinds[i].kind, kind))
            return &kinds[i];
    return NULL;
}

static bool find_entry(const struct patch_entry *e, const char *path, struct smp_list_meta *ret)
{
    for (; e->path; e++) {
        if (!strcmp(e->path, path)) {
            *ret = (struct smp_list_meta){.merge = true, .merge_key = e->merge_key};
            return true;
        }
    }
    return false;
}

bool api_patch_meta_lookup(const char *path, const void *userdata, struct smp_list_meta *ret)
{
    const struct api_patch_meta *m = userdata;

    CHECK(m);
    return find_entry(meta_entries, path, ret) || find_entry(m->entries, path, ret);
}
