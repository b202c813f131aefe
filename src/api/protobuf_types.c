/*
 * The protobuf field tables of every built-in kind koord serves (and of the few more kubectl's
 * typed commands send, so their bodies decode before the kind is refused by name), transcribed
 * from reference protobuf.md section 4 (generated.proto of kubernetes 1.32) with Go's struct
 * tags: A = no omitempty (the zero value is written), P = pointer (presence is written). Only
 * what the wire adds lives here; the JSON names are checked against the kinds' api_schema by
 * tests/api/test_protobuf.c. A message the reference does not list is NOTABLE: present, it is
 * refused by name (415) rather than guessed at.
 */
#include <string.h>

#include "api/protobuf.h"

/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define F(n, j, t, fl, m)                                                                          \
    {                                                                                              \
        n, j, PROTOBUF_##t, fl, m                                                                  \
    }
#define S(n, j)         F(n, j, STRING, 0, NULL)
#define SA(n, j)        F(n, j, STRING, PROTOBUF_ALWAYS, NULL)
#define SP(n, j)        F(n, j, STRING, PROTOBUF_PTR, NULL)
#define SR(n, j)        F(n, j, STRING, PROTOBUF_REP, NULL)
#define SM(n, j)        F(n, j, STRING, PROTOBUF_MAP, NULL)
#define BYM(n, j)       F(n, j, BYTES, PROTOBUF_MAP, NULL)
#define B(n, j)         F(n, j, BOOL, 0, NULL)
#define BA(n, j)        F(n, j, BOOL, PROTOBUF_ALWAYS, NULL)
#define BP(n, j)        F(n, j, BOOL, PROTOBUF_PTR, NULL)
#define I32(n, j)       F(n, j, INT32, 0, NULL)
#define I32A(n, j)      F(n, j, INT32, PROTOBUF_ALWAYS, NULL)
#define I32P(n, j)      F(n, j, INT32, PROTOBUF_PTR, NULL)
#define I64(n, j)       F(n, j, INT64, 0, NULL)
#define I64P(n, j)      F(n, j, INT64, PROTOBUF_PTR, NULL)
#define I64R(n, j)      F(n, j, INT64, PROTOBUF_REP, NULL)
#define M(n, j, m)      F(n, j, MESSAGE, 0, &m)
#define MP(n, j, m)     F(n, j, MESSAGE, PROTOBUF_PTR, &m)
#define MR(n, j, m)     F(n, j, MESSAGE, PROTOBUF_REP, &m)
#define IN(n, j, m)     F(n, j, INLINE, 0, &m)
#define T(n, j)         F(n, j, TIME, 0, NULL)
#define TP(n, j)        F(n, j, TIME, PROTOBUF_PTR, NULL)
#define MT(n, j)        F(n, j, MICROTIME, 0, NULL)
#define MTP(n, j)       F(n, j, MICROTIME, PROTOBUF_PTR, NULL)
#define Q(n, j)         F(n, j, QUANTITY, 0, NULL)
#define QP(n, j)        F(n, j, QUANTITY, PROTOBUF_PTR, NULL)
#define QM(n, j)        F(n, j, QUANTITY, PROTOBUF_MAP, NULL)
#define IOS(n, j)       F(n, j, INTORSTRING, 0, NULL)
#define NT(n, j, name)  F(n, j, NOTABLE, PROTOBUF_PTR, (&(const struct protobuf_msg){name, NULL}))
#define NTR(n, j, name) F(n, j, NOTABLE, PROTOBUF_REP, (&(const struct protobuf_msg){name, NULL}))
#define END                                                                                        \
    {                                                                                              \
        0, NULL, PROTOBUF_STRING, 0, NULL                                                          \
    }
#define MSG(var, name, ...)                                                                        \
    static const struct protobuf_msg var = {name, (const struct protobuf_field[]){__VA_ARGS__, END}}
/* NOLINTEND(bugprone-macro-parentheses) */

/* ---- meta/v1 ---- */

MSG(owner_reference, "OwnerReference", SA(5, "apiVersion"), SA(1, "kind"), SA(3, "name"),
    SA(4, "uid"), BP(6, "controller"), BP(7, "blockOwnerDeletion"));
MSG(managed_fields_entry, "ManagedFieldsEntry", S(1, "manager"), S(2, "operation"),
    S(3, "apiVersion"), TP(4, "time"), S(6, "fieldsType"),
    F(7, "fieldsV1", JSONRAW, PROTOBUF_PTR, NULL), S(8, "subresource"));
MSG(object_meta, "ObjectMeta", S(1, "name"), S(2, "generateName"), S(3, "namespace"),
    S(4, "selfLink"), S(5, "uid"), S(6, "resourceVersion"), I64(7, "generation"),
    T(8, "creationTimestamp"), TP(9, "deletionTimestamp"), I64P(10, "deletionGracePeriodSeconds"),
    SM(11, "labels"), SM(12, "annotations"), MR(13, "ownerReferences", owner_reference),
    SR(14, "finalizers"), MR(17, "managedFields", managed_fields_entry));
MSG(label_selector_requirement, "LabelSelectorRequirement", SA(1, "key"), SA(2, "operator"),
    SR(3, "values"));
MSG(label_selector, "LabelSelector", SM(1, "matchLabels"),
    MR(2, "matchExpressions", label_selector_requirement));
MSG(condition, "Condition", SA(1, "type"), SA(2, "status"), I64(3, "observedGeneration"),
    T(4, "lastTransitionTime"), SA(5, "reason"), SA(6, "message"));
MSG(preconditions, "Preconditions", SP(1, "uid"), SP(2, "resourceVersion"));
MSG(delete_options, "DeleteOptions", I64P(1, "gracePeriodSeconds"),
    MP(2, "preconditions", preconditions), BP(3, "orphanDependents"), SP(4, "propagationPolicy"),
    SR(5, "dryRun"), BP(6, "ignoreStoreReadErrorWithClusterBreakingPotential"));

/* ---- core/v1 objects other than Pod and Node ---- */

MSG(local_object_reference, "LocalObjectReference", S(1, "name"));
MSG(object_reference, "ObjectReference", S(1, "kind"), S(2, "namespace"), S(3, "name"), S(4, "uid"),
    S(5, "apiVersion"), S(6, "resourceVersion"), S(7, "fieldPath"));
MSG(namespace_spec, "NamespaceSpec", SR(1, "finalizers"));
MSG(namespace_condition, "NamespaceCondition", SA(1, "type"), SA(2, "status"),
    T(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
MSG(namespace_status, "NamespaceStatus", S(1, "phase"), MR(2, "conditions", namespace_condition));
MSG(namespace, "Namespace", M(1, "metadata", object_meta), M(2, "spec", namespace_spec),
    M(3, "status", namespace_status));
MSG(configmap, "ConfigMap", M(1, "metadata", object_meta), BP(4, "immutable"), SM(2, "data"),
    BYM(3, "binaryData"));
MSG(secret, "Secret", M(1, "metadata", object_meta), BP(5, "immutable"), BYM(2, "data"),
    SM(4, "stringData"), S(3, "type"));
MSG(service_account, "ServiceAccount", M(1, "metadata", object_meta),
    MR(2, "secrets", object_reference), MR(3, "imagePullSecrets", local_object_reference),
    BP(4, "automountServiceAccountToken"));
MSG(service_port, "ServicePort", S(1, "name"), S(2, "protocol"), SP(6, "appProtocol"),
    I32A(3, "port"), IOS(4, "targetPort"), I32(5, "nodePort"));
MSG(client_ip_config, "ClientIPConfig", I32P(1, "timeoutSeconds"));
MSG(session_affinity_config, "SessionAffinityConfig", MP(1, "clientIP", client_ip_config));
MSG(service_spec, "ServiceSpec", MR(1, "ports", service_port), SM(2, "selector"), S(3, "clusterIP"),
    SR(18, "clusterIPs"), S(4, "type"), SR(5, "externalIPs"), S(7, "sessionAffinity"),
    S(8, "loadBalancerIP"), SR(9, "loadBalancerSourceRanges"), S(10, "externalName"),
    S(11, "externalTrafficPolicy"), I32(12, "healthCheckNodePort"),
    B(13, "publishNotReadyAddresses"), MP(14, "sessionAffinityConfig", session_affinity_config),
    SR(19, "ipFamilies"), SP(17, "ipFamilyPolicy"), BP(20, "allocateLoadBalancerNodePorts"),
    SP(21, "loadBalancerClass"), SP(22, "internalTrafficPolicy"), SP(23, "trafficDistribution"));
MSG(load_balancer_ingress, "LoadBalancerIngress", S(1, "ip"), S(2, "hostname"), SP(3, "ipMode"),
    NTR(4, "ports", "PortStatus"));
MSG(load_balancer_status, "LoadBalancerStatus", MR(1, "ingress", load_balancer_ingress));
MSG(service_status, "ServiceStatus", M(1, "loadBalancer", load_balancer_status),
    MR(2, "conditions", condition));
MSG(service, "Service", M(1, "metadata", object_meta), M(2, "spec", service_spec),
    M(3, "status", service_status));
MSG(endpoint_address, "EndpointAddress", SA(1, "ip"), S(3, "hostname"), SP(4, "nodeName"),
    MP(2, "targetRef", object_reference));
MSG(endpoint_port, "EndpointPort", S(1, "name"), I32A(2, "port"), S(3, "protocol"),
    SP(4, "appProtocol"));
MSG(endpoint_subset, "EndpointSubset", MR(1, "addresses", endpoint_address),
    MR(2, "notReadyAddresses", endpoint_address), MR(3, "ports", endpoint_port));
MSG(endpoints, "Endpoints", M(1, "metadata", object_meta), MR(2, "subsets", endpoint_subset));
MSG(binding, "Binding", M(1, "metadata", object_meta), M(2, "target", object_reference));
MSG(event_source, "EventSource", S(1, "component"), S(2, "host"));
MSG(event_series, "EventSeries", I32(1, "count"), MT(2, "lastObservedTime"));
MSG(event, "Event", M(1, "metadata", object_meta), M(2, "involvedObject", object_reference),
    S(3, "reason"), S(4, "message"), M(5, "source", event_source), T(6, "firstTimestamp"),
    T(7, "lastTimestamp"), I32(8, "count"), S(9, "type"), MT(10, "eventTime"),
    MP(11, "series", event_series), S(12, "action"), MP(13, "related", object_reference),
    SA(14, "reportingComponent"), SA(15, "reportingInstance"));
MSG(scoped_resource_selector_requirement, "ScopedResourceSelectorRequirement", SA(1, "scopeName"),
    SA(2, "operator"), SR(3, "values"));
MSG(scope_selector, "ScopeSelector",
    MR(1, "matchExpressions", scoped_resource_selector_requirement));
MSG(resource_quota_spec, "ResourceQuotaSpec", QM(1, "hard"), SR(2, "scopes"),
    MP(3, "scopeSelector", scope_selector));
MSG(resource_quota_status, "ResourceQuotaStatus", QM(1, "hard"), QM(2, "used"));
MSG(resource_quota, "ResourceQuota", M(1, "metadata", object_meta),
    M(2, "spec", resource_quota_spec), M(3, "status", resource_quota_status));

/* ---- Pod ---- */

MSG(resource_claim, "ResourceClaim", SA(1, "name"), S(2, "request"));
MSG(resource_requirements, "ResourceRequirements", QM(1, "limits"), QM(2, "requests"),
    MR(3, "claims", resource_claim));
MSG(container_port, "ContainerPort", S(1, "name"), I32(2, "hostPort"), I32A(3, "containerPort"),
    S(4, "protocol"), S(5, "hostIP"));
MSG(object_field_selector, "ObjectFieldSelector", S(1, "apiVersion"), SA(2, "fieldPath"));
MSG(resource_field_selector, "ResourceFieldSelector", S(1, "containerName"), SA(2, "resource"),
    Q(3, "divisor"));
MSG(configmap_key_selector, "ConfigMapKeySelector",
    IN(1, "localObjectReference", local_object_reference), SA(2, "key"), BP(3, "optional"));
MSG(secret_key_selector, "SecretKeySelector", IN(1, "localObjectReference", local_object_reference),
    SA(2, "key"), BP(3, "optional"));
MSG(env_var_source, "EnvVarSource", MP(1, "fieldRef", object_field_selector),
    MP(2, "resourceFieldRef", resource_field_selector),
    MP(3, "configMapKeyRef", configmap_key_selector), MP(4, "secretKeyRef", secret_key_selector));
MSG(env_var, "EnvVar", SA(1, "name"), S(2, "value"), MP(3, "valueFrom", env_var_source));
MSG(configmap_env_source, "ConfigMapEnvSource",
    IN(1, "localObjectReference", local_object_reference), BP(2, "optional"));
MSG(secret_env_source, "SecretEnvSource", IN(1, "localObjectReference", local_object_reference),
    BP(2, "optional"));
MSG(env_from_source, "EnvFromSource", S(1, "prefix"), MP(2, "configMapRef", configmap_env_source),
    MP(3, "secretRef", secret_env_source));
MSG(volume_mount, "VolumeMount", SA(1, "name"), B(2, "readOnly"), SP(7, "recursiveReadOnly"),
    SA(3, "mountPath"), S(4, "subPath"), SP(5, "mountPropagation"), S(6, "subPathExpr"));
MSG(exec_action, "ExecAction", SR(1, "command"));
MSG(http_header, "HTTPHeader", SA(1, "name"), SA(2, "value"));
MSG(http_get_action, "HTTPGetAction", S(1, "path"), IOS(2, "port"), S(3, "host"), S(4, "scheme"),
    MR(5, "httpHeaders", http_header));
MSG(tcp_socket_action, "TCPSocketAction", IOS(1, "port"), S(2, "host"));
MSG(probe_handler, "ProbeHandler", MP(1, "exec", exec_action), MP(2, "httpGet", http_get_action),
    MP(3, "tcpSocket", tcp_socket_action), NT(4, "grpc", "GRPCAction"));
MSG(probe, "Probe", IN(1, "handler", probe_handler), I32(2, "initialDelaySeconds"),
    I32(3, "timeoutSeconds"), I32(4, "periodSeconds"), I32(5, "successThreshold"),
    I32(6, "failureThreshold"), I64P(7, "terminationGracePeriodSeconds"));
MSG(capabilities, "Capabilities", SR(1, "add"), SR(2, "drop"));
MSG(seccomp_profile, "SeccompProfile", SA(1, "type"), SP(2, "localhostProfile"));
MSG(security_context, "SecurityContext", MP(1, "capabilities", capabilities), BP(2, "privileged"),
    NT(3, "seLinuxOptions", "SELinuxOptions"),
    NT(10, "windowsOptions", "WindowsSecurityContextOptions"), I64P(4, "runAsUser"),
    I64P(8, "runAsGroup"), BP(5, "runAsNonRoot"), BP(6, "readOnlyRootFilesystem"),
    BP(7, "allowPrivilegeEscalation"), SP(9, "procMount"),
    MP(11, "seccompProfile", seccomp_profile), NT(12, "appArmorProfile", "AppArmorProfile"));
MSG(container, "Container", SA(1, "name"), S(2, "image"), SR(3, "command"), SR(4, "args"),
    S(5, "workingDir"), MR(6, "ports", container_port), MR(19, "envFrom", env_from_source),
    MR(7, "env", env_var), M(8, "resources", resource_requirements),
    NTR(23, "resizePolicy", "ContainerResizePolicy"), SP(24, "restartPolicy"),
    MR(9, "volumeMounts", volume_mount), NTR(21, "volumeDevices", "VolumeDevice"),
    MP(10, "livenessProbe", probe), MP(11, "readinessProbe", probe), MP(22, "startupProbe", probe),
    NT(12, "lifecycle", "Lifecycle"), S(13, "terminationMessagePath"),
    S(20, "terminationMessagePolicy"), S(14, "imagePullPolicy"),
    MP(15, "securityContext", security_context), B(16, "stdin"), B(17, "stdinOnce"), B(18, "tty"));
MSG(key_to_path, "KeyToPath", SA(1, "key"), SA(2, "path"), I32P(3, "mode"));
MSG(host_path_volume_source, "HostPathVolumeSource", SA(1, "path"), SP(2, "type"));
MSG(empty_dir_volume_source, "EmptyDirVolumeSource", S(1, "medium"), QP(2, "sizeLimit"));
MSG(secret_volume_source, "SecretVolumeSource", S(1, "secretName"), MR(2, "items", key_to_path),
    I32P(3, "defaultMode"), BP(4, "optional"));
MSG(pvc_volume_source, "PersistentVolumeClaimVolumeSource", SA(1, "claimName"), B(2, "readOnly"));
MSG(configmap_volume_source, "ConfigMapVolumeSource",
    IN(1, "localObjectReference", local_object_reference), MR(2, "items", key_to_path),
    I32P(3, "defaultMode"), BP(4, "optional"));
MSG(volume_source, "VolumeSource", MP(1, "hostPath", host_path_volume_source),
    MP(2, "emptyDir", empty_dir_volume_source),
    NT(3, "gcePersistentDisk", "GCEPersistentDiskVolumeSource"),
    NT(4, "awsElasticBlockStore", "AWSElasticBlockStoreVolumeSource"),
    NT(5, "gitRepo", "GitRepoVolumeSource"), MP(6, "secret", secret_volume_source),
    NT(7, "nfs", "NFSVolumeSource"), NT(8, "iscsi", "ISCSIVolumeSource"),
    NT(9, "glusterfs", "GlusterfsVolumeSource"), MP(10, "persistentVolumeClaim", pvc_volume_source),
    NT(11, "rbd", "RBDVolumeSource"), NT(12, "flexVolume", "FlexVolumeSource"),
    NT(13, "cinder", "CinderVolumeSource"), NT(14, "cephfs", "CephFSVolumeSource"),
    NT(15, "flocker", "FlockerVolumeSource"), NT(16, "downwardAPI", "DownwardAPIVolumeSource"),
    NT(17, "fc", "FCVolumeSource"), NT(18, "azureFile", "AzureFileVolumeSource"),
    MP(19, "configMap", configmap_volume_source),
    NT(20, "vsphereVolume", "VsphereVirtualDiskVolumeSource"),
    NT(21, "quobyte", "QuobyteVolumeSource"), NT(22, "azureDisk", "AzureDiskVolumeSource"),
    NT(23, "photonPersistentDisk", "PhotonPersistentDiskVolumeSource"),
    NT(24, "portworxVolume", "PortworxVolumeSource"), NT(25, "scaleIO", "ScaleIOVolumeSource"),
    NT(26, "projected", "ProjectedVolumeSource"), NT(27, "storageos", "StorageOSVolumeSource"),
    NT(28, "csi", "CSIVolumeSource"), NT(29, "ephemeral", "EphemeralVolumeSource"),
    NT(30, "image", "ImageVolumeSource"));
MSG(volume, "Volume", SA(1, "name"), IN(2, "volumeSource", volume_source));
MSG(toleration, "Toleration", S(1, "key"), S(2, "operator"), S(3, "value"), S(4, "effect"),
    I64P(5, "tolerationSeconds"));
MSG(pod_scheduling_gate, "PodSchedulingGate", SA(1, "name"));
MSG(topology_spread_constraint, "TopologySpreadConstraint", I32A(1, "maxSkew"),
    SA(2, "topologyKey"), SA(3, "whenUnsatisfiable"), MP(4, "labelSelector", label_selector),
    I32P(5, "minDomains"), SP(6, "nodeAffinityPolicy"), SP(7, "nodeTaintsPolicy"),
    SR(8, "matchLabelKeys"));
MSG(node_selector_requirement, "NodeSelectorRequirement", SA(1, "key"), SA(2, "operator"),
    SR(3, "values"));
MSG(node_selector_term, "NodeSelectorTerm", MR(1, "matchExpressions", node_selector_requirement),
    MR(2, "matchFields", node_selector_requirement));
MSG(node_selector, "NodeSelector", MR(1, "nodeSelectorTerms", node_selector_term));
MSG(preferred_scheduling_term, "PreferredSchedulingTerm", I32A(1, "weight"),
    M(2, "preference", node_selector_term));
MSG(node_affinity, "NodeAffinity",
    MP(1, "requiredDuringSchedulingIgnoredDuringExecution", node_selector),
    MR(2, "preferredDuringSchedulingIgnoredDuringExecution", preferred_scheduling_term));
MSG(pod_affinity_term, "PodAffinityTerm", MP(1, "labelSelector", label_selector),
    SR(2, "namespaces"), SA(3, "topologyKey"), MP(4, "namespaceSelector", label_selector),
    SR(5, "matchLabelKeys"), SR(6, "mismatchLabelKeys"));
MSG(weighted_pod_affinity_term, "WeightedPodAffinityTerm", I32A(1, "weight"),
    M(2, "podAffinityTerm", pod_affinity_term));
MSG(pod_affinity, "PodAffinity",
    MR(1, "requiredDuringSchedulingIgnoredDuringExecution", pod_affinity_term),
    MR(2, "preferredDuringSchedulingIgnoredDuringExecution", weighted_pod_affinity_term));
MSG(affinity, "Affinity", MP(1, "nodeAffinity", node_affinity), MP(2, "podAffinity", pod_affinity),
    MP(3, "podAntiAffinity", pod_affinity));
MSG(pod_readiness_gate, "PodReadinessGate", SA(1, "conditionType"));
MSG(pod_os, "PodOS", SA(1, "name"));
MSG(host_alias, "HostAlias", SA(1, "ip"), SR(2, "hostnames"));
MSG(pod_dns_config_option, "PodDNSConfigOption", S(1, "name"), SP(2, "value"));
MSG(pod_dns_config, "PodDNSConfig", SR(1, "nameservers"), SR(2, "searches"),
    MR(3, "options", pod_dns_config_option));
MSG(sysctl, "Sysctl", SA(1, "name"), SA(2, "value"));
MSG(pod_security_context, "PodSecurityContext", NT(1, "seLinuxOptions", "SELinuxOptions"),
    NT(8, "windowsOptions", "WindowsSecurityContextOptions"), I64P(2, "runAsUser"),
    I64P(6, "runAsGroup"), BP(3, "runAsNonRoot"), I64R(4, "supplementalGroups"),
    SP(12, "supplementalGroupsPolicy"), I64P(5, "fsGroup"), MR(7, "sysctls", sysctl),
    SP(9, "fsGroupChangePolicy"), MP(10, "seccompProfile", seccomp_profile),
    NT(11, "appArmorProfile", "AppArmorProfile"), SP(13, "seLinuxChangePolicy"));
MSG(pod_spec, "PodSpec", MR(1, "volumes", volume), MR(20, "initContainers", container),
    MR(2, "containers", container), NTR(34, "ephemeralContainers", "EphemeralContainer"),
    S(3, "restartPolicy"), I64P(4, "terminationGracePeriodSeconds"),
    I64P(5, "activeDeadlineSeconds"), S(6, "dnsPolicy"), SM(7, "nodeSelector"),
    S(8, "serviceAccountName"), S(9, "serviceAccount"), BP(21, "automountServiceAccountToken"),
    S(10, "nodeName"), B(11, "hostNetwork"), B(12, "hostPID"), B(13, "hostIPC"),
    BP(27, "shareProcessNamespace"), MP(14, "securityContext", pod_security_context),
    MR(15, "imagePullSecrets", local_object_reference), S(16, "hostname"), S(17, "subdomain"),
    MP(18, "affinity", affinity), S(19, "schedulerName"), MR(22, "tolerations", toleration),
    MR(23, "hostAliases", host_alias), S(24, "priorityClassName"), I32P(25, "priority"),
    MP(26, "dnsConfig", pod_dns_config), MR(28, "readinessGates", pod_readiness_gate),
    SP(29, "runtimeClassName"), BP(30, "enableServiceLinks"), SP(31, "preemptionPolicy"),
    QM(32, "overhead"), MR(33, "topologySpreadConstraints", topology_spread_constraint),
    BP(35, "setHostnameAsFQDN"), MP(36, "os", pod_os), BP(37, "hostUsers"),
    MR(38, "schedulingGates", pod_scheduling_gate), NTR(39, "resourceClaims", "PodResourceClaim"),
    MP(40, "resources", resource_requirements));
MSG(pod_condition, "PodCondition", SA(1, "type"), SA(2, "status"), T(3, "lastProbeTime"),
    T(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
MSG(pod_ip, "PodIP", SA(1, "ip"));
MSG(host_ip, "HostIP", SA(1, "ip"));
MSG(container_state_waiting, "ContainerStateWaiting", S(1, "reason"), S(2, "message"));
MSG(container_state_running, "ContainerStateRunning", T(1, "startedAt"));
MSG(container_state_terminated, "ContainerStateTerminated", I32A(1, "exitCode"), I32(2, "signal"),
    S(3, "reason"), S(4, "message"), T(5, "startedAt"), T(6, "finishedAt"), S(7, "containerID"));
MSG(container_state, "ContainerState", MP(1, "waiting", container_state_waiting),
    MP(2, "running", container_state_running), MP(3, "terminated", container_state_terminated));
MSG(container_status, "ContainerStatus", SA(1, "name"), M(2, "state", container_state),
    M(3, "lastState", container_state), BA(4, "ready"), I32A(5, "restartCount"), SA(6, "image"),
    SA(7, "imageID"), S(8, "containerID"), BP(9, "started"), QM(10, "allocatedResources"),
    MP(11, "resources", resource_requirements), NTR(12, "volumeMounts", "VolumeMountStatus"),
    NT(13, "user", "ContainerUser"), NTR(14, "allocatedResourcesStatus", "ResourceStatus"));
MSG(pod_status, "PodStatus", S(1, "phase"), MR(2, "conditions", pod_condition), S(3, "message"),
    S(4, "reason"), S(11, "nominatedNodeName"), S(5, "hostIP"), MR(16, "hostIPs", host_ip),
    S(6, "podIP"), MR(12, "podIPs", pod_ip), TP(7, "startTime"),
    MR(10, "initContainerStatuses", container_status), MR(8, "containerStatuses", container_status),
    S(9, "qosClass"), MR(13, "ephemeralContainerStatuses", container_status), S(14, "resize"),
    NTR(15, "resourceClaimStatuses", "PodResourceClaimStatus"));
MSG(pod, "Pod", M(1, "metadata", object_meta), M(2, "spec", pod_spec), M(3, "status", pod_status));

/* ---- Node ---- */

MSG(taint, "Taint", SA(1, "key"), S(2, "value"), SA(3, "effect"), TP(4, "timeAdded"));
MSG(node_spec, "NodeSpec", S(1, "podCIDR"), SR(7, "podCIDRs"), S(3, "providerID"),
    B(4, "unschedulable"), MR(5, "taints", taint), NT(6, "configSource", "NodeConfigSource"),
    S(2, "externalID"));
MSG(node_condition, "NodeCondition", SA(1, "type"), SA(2, "status"), T(3, "lastHeartbeatTime"),
    T(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
MSG(node_address, "NodeAddress", SA(1, "type"), SA(2, "address"));
MSG(daemon_endpoint, "DaemonEndpoint", I32A(1, "Port"));
MSG(node_daemon_endpoints, "NodeDaemonEndpoints", M(1, "kubeletEndpoint", daemon_endpoint));
MSG(node_system_info, "NodeSystemInfo", SA(1, "machineID"), SA(2, "systemUUID"), SA(3, "bootID"),
    SA(4, "kernelVersion"), SA(5, "osImage"), SA(6, "containerRuntimeVersion"),
    SA(7, "kubeletVersion"), SA(8, "kubeProxyVersion"), SA(9, "operatingSystem"),
    SA(10, "architecture"));
MSG(container_image, "ContainerImage", SR(1, "names"), I64(2, "sizeBytes"));
MSG(node_status, "NodeStatus", QM(1, "capacity"), QM(2, "allocatable"), S(3, "phase"),
    MR(4, "conditions", node_condition), MR(5, "addresses", node_address),
    M(6, "daemonEndpoints", node_daemon_endpoints), M(7, "nodeInfo", node_system_info),
    MR(8, "images", container_image), SR(9, "volumesInUse"),
    NTR(10, "volumesAttached", "AttachedVolume"), NT(11, "config", "NodeConfigStatus"),
    NTR(12, "runtimeHandlers", "NodeRuntimeHandler"), NT(13, "features", "NodeFeatures"));
MSG(node, "Node", M(1, "metadata", object_meta), M(2, "spec", node_spec),
    M(3, "status", node_status));

/* ---- scheduling/v1, policy/v1, coordination/v1 ---- */

MSG(priority_class, "PriorityClass", M(1, "metadata", object_meta), I32A(2, "value"),
    B(3, "globalDefault"), S(4, "description"), SP(5, "preemptionPolicy"));
MSG(eviction, "Eviction", M(1, "metadata", object_meta), MP(2, "deleteOptions", delete_options));
MSG(lease_spec, "LeaseSpec", SP(1, "holderIdentity"), I32P(2, "leaseDurationSeconds"),
    MTP(3, "acquireTime"), MTP(4, "renewTime"), I32P(5, "leaseTransitions"), SP(6, "strategy"),
    SP(7, "preferredHolder"));
MSG(lease, "Lease", M(1, "metadata", object_meta), M(2, "spec", lease_spec));

/* ---- apps/v1, batch/v1, policy/v1 workloads: what kubectl's typed `create deployment`,
 * `create job`, `create cronjob` and `create poddisruptionbudget` send (reference 4.6; batch
 * from k8s.io/api batch/v1 generated.proto). ---- */

#define IOSP(n, j) F(n, j, INTORSTRING, PROTOBUF_PTR, NULL)

MSG(pod_template_spec, "PodTemplateSpec", M(1, "metadata", object_meta), M(2, "spec", pod_spec));
MSG(rolling_update_deployment, "RollingUpdateDeployment", IOSP(1, "maxUnavailable"),
    IOSP(2, "maxSurge"));
MSG(deployment_strategy, "DeploymentStrategy", S(1, "type"),
    MP(2, "rollingUpdate", rolling_update_deployment));
MSG(deployment_spec, "DeploymentSpec", I32P(1, "replicas"), MP(2, "selector", label_selector),
    M(3, "template", pod_template_spec), M(4, "strategy", deployment_strategy),
    I32(5, "minReadySeconds"), I32P(6, "revisionHistoryLimit"), B(7, "paused"),
    I32P(9, "progressDeadlineSeconds"));
MSG(deployment_condition, "DeploymentCondition", S(1, "type"), S(2, "status"), S(4, "reason"),
    S(5, "message"), T(6, "lastUpdateTime"), T(7, "lastTransitionTime"));
MSG(deployment_status, "DeploymentStatus", I64(1, "observedGeneration"), I32(2, "replicas"),
    I32(3, "updatedReplicas"), I32(4, "availableReplicas"), I32(5, "unavailableReplicas"),
    MR(6, "conditions", deployment_condition), I32(7, "readyReplicas"), I32P(8, "collisionCount"),
    I32P(9, "terminatingReplicas"));
MSG(deployment, "Deployment", M(1, "metadata", object_meta), M(2, "spec", deployment_spec),
    M(3, "status", deployment_status));
MSG(job_spec, "JobSpec", I32P(1, "parallelism"), I32P(2, "completions"),
    I64P(3, "activeDeadlineSeconds"), NT(11, "podFailurePolicy", "PodFailurePolicy"),
    NT(16, "successPolicy", "SuccessPolicy"), I32P(7, "backoffLimit"),
    I32P(12, "backoffLimitPerIndex"), I32P(13, "maxFailedIndexes"),
    MP(4, "selector", label_selector), BP(5, "manualSelector"), M(6, "template", pod_template_spec),
    I32P(8, "ttlSecondsAfterFinished"), SP(9, "completionMode"), BP(10, "suspend"),
    SP(14, "podReplacementPolicy"), SP(15, "managedBy"));
MSG(job_condition, "JobCondition", S(1, "type"), S(2, "status"), T(3, "lastProbeTime"),
    T(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
MSG(job_status, "JobStatus", MR(1, "conditions", job_condition), TP(2, "startTime"),
    TP(3, "completionTime"), I32(4, "active"), I32(5, "succeeded"), I32(6, "failed"),
    I32P(11, "terminating"), S(7, "completedIndexes"), SP(10, "failedIndexes"),
    NT(8, "uncountedTerminatedPods", "UncountedTerminatedPods"), I32P(9, "ready"));
MSG(job, "Job", M(1, "metadata", object_meta), M(2, "spec", job_spec), M(3, "status", job_status));
MSG(job_template_spec, "JobTemplateSpec", M(1, "metadata", object_meta), M(2, "spec", job_spec));
MSG(cron_job_spec, "CronJobSpec", SA(1, "schedule"), SP(8, "timeZone"),
    I64P(2, "startingDeadlineSeconds"), S(3, "concurrencyPolicy"), BP(4, "suspend"),
    M(5, "jobTemplate", job_template_spec), I32P(6, "successfulJobsHistoryLimit"),
    I32P(7, "failedJobsHistoryLimit"));
MSG(cron_job_status, "CronJobStatus", MR(1, "active", object_reference), TP(4, "lastScheduleTime"),
    TP(5, "lastSuccessfulTime"));
MSG(cron_job, "CronJob", M(1, "metadata", object_meta), M(2, "spec", cron_job_spec),
    M(3, "status", cron_job_status));
MSG(pdb_spec, "PodDisruptionBudgetSpec", IOSP(1, "minAvailable"), MP(2, "selector", label_selector),
    IOSP(3, "maxUnavailable"), SP(4, "unhealthyPodEvictionPolicy"));
MSG(pdb_status, "PodDisruptionBudgetStatus", I64(1, "observedGeneration"),
    NT(2, "disruptedPods", "map<string, Time>"), I32A(3, "disruptionsAllowed"),
    I32A(4, "currentHealthy"), I32A(5, "desiredHealthy"), I32A(6, "expectedPods"),
    MR(7, "conditions", condition));
MSG(pdb, "PodDisruptionBudget", M(1, "metadata", object_meta), M(2, "spec", pdb_spec),
    M(3, "status", pdb_status));
/* ---- rbac.authorization.k8s.io/v1 ---- */

MSG(policy_rule, "PolicyRule", SR(1, "verbs"), SR(2, "apiGroups"), SR(3, "resources"),
    SR(4, "resourceNames"), SR(5, "nonResourceURLs"));
MSG(aggregation_rule, "AggregationRule", MR(1, "clusterRoleSelectors", label_selector));
MSG(role, "Role", M(1, "metadata", object_meta), MR(2, "rules", policy_rule));
MSG(cluster_role, "ClusterRole", M(1, "metadata", object_meta), MR(2, "rules", policy_rule),
    MP(3, "aggregationRule", aggregation_rule));
MSG(rbac_subject, "Subject", SA(1, "kind"), S(2, "apiGroup"), SA(3, "name"), S(4, "namespace"));
MSG(role_ref, "RoleRef", SA(1, "apiGroup"), SA(2, "kind"), SA(3, "name"));
MSG(role_binding, "RoleBinding", M(1, "metadata", object_meta), MR(2, "subjects", rbac_subject),
    M(3, "roleRef", role_ref));

/* ---- authorization.k8s.io/v1 and authentication.k8s.io/v1 reviews ---- */

MSG(resource_attributes, "ResourceAttributes", S(1, "namespace"), S(2, "verb"), S(3, "group"),
    S(4, "version"), S(5, "resource"), S(6, "subresource"), S(7, "name"),
    NT(8, "fieldSelector", "FieldSelectorAttributes"),
    NT(9, "labelSelector", "LabelSelectorAttributes"));
MSG(non_resource_attributes, "NonResourceAttributes", S(1, "path"), S(2, "verb"));
MSG(sar_spec, "SubjectAccessReviewSpec", MP(1, "resourceAttributes", resource_attributes),
    MP(2, "nonResourceAttributes", non_resource_attributes), S(3, "user"), SR(4, "groups"),
    NTR(5, "extra", "ExtraValue"), S(6, "uid"));
MSG(ssar_spec, "SelfSubjectAccessReviewSpec", MP(1, "resourceAttributes", resource_attributes),
    MP(2, "nonResourceAttributes", non_resource_attributes));
MSG(sar_status, "SubjectAccessReviewStatus", BA(1, "allowed"), B(4, "denied"), S(2, "reason"),
    S(3, "evaluationError"));
MSG(sar, "SubjectAccessReview", M(1, "metadata", object_meta), M(2, "spec", sar_spec),
    M(3, "status", sar_status));
MSG(ssar, "SelfSubjectAccessReview", M(1, "metadata", object_meta), M(2, "spec", ssar_spec),
    M(3, "status", sar_status));
MSG(resource_rule, "ResourceRule", SR(1, "verbs"), SR(2, "apiGroups"), SR(3, "resources"),
    SR(4, "resourceNames"));
MSG(non_resource_rule, "NonResourceRule", SR(1, "verbs"), SR(2, "nonResourceURLs"));
MSG(ssrr_spec, "SelfSubjectRulesReviewSpec", S(1, "namespace"));
MSG(srr_status, "SubjectRulesReviewStatus", MR(1, "resourceRules", resource_rule),
    MR(2, "nonResourceRules", non_resource_rule), BA(3, "incomplete"), S(4, "evaluationError"));
MSG(ssrr, "SelfSubjectRulesReview", M(1, "metadata", object_meta), M(2, "spec", ssrr_spec),
    M(3, "status", srr_status));
MSG(user_info, "UserInfo", S(1, "username"), S(2, "uid"), SR(3, "groups"),
    NTR(4, "extra", "ExtraValue"));
MSG(ssr_status, "SelfSubjectReviewStatus", MP(1, "userInfo", user_info));
MSG(ssr, "SelfSubjectReview", M(1, "metadata", object_meta), M(2, "status", ssr_status));
MSG(token_review_spec, "TokenReviewSpec", S(1, "token"), SR(2, "audiences"));
MSG(token_review_status, "TokenReviewStatus", B(1, "authenticated"), M(2, "user", user_info),
    SR(4, "audiences"), S(3, "error"));
MSG(token_review, "TokenReview", M(1, "metadata", object_meta), M(2, "spec", token_review_spec),
    M(3, "status", token_review_status));
MSG(bound_object_reference, "BoundObjectReference", S(1, "kind"), S(2, "apiVersion"), S(3, "name"),
    S(4, "uid"));
MSG(token_request_spec, "TokenRequestSpec", SR(1, "audiences"), I64P(4, "expirationSeconds"),
    MP(3, "boundObjectRef", bound_object_reference));
MSG(token_request_status, "TokenRequestStatus", SA(1, "token"), T(2, "expirationTimestamp"));
MSG(token_request, "TokenRequest", M(1, "metadata", object_meta), M(2, "spec", token_request_spec),
    M(3, "status", token_request_status));

const struct protobuf_kind protobuf_kinds[] = {
    {"", "Namespace", &namespace},
    {"", "ConfigMap", &configmap},
    {"", "Secret", &secret},
    {"", "ServiceAccount", &service_account},
    {"", "Service", &service},
    {"", "Endpoints", &endpoints},
    {"", "Binding", &binding},
    {"", "Event", &event},
    {"", "ResourceQuota", &resource_quota},
    {"", "Pod", &pod},
    {"", "Node", &node},
    {"scheduling.k8s.io", "PriorityClass", &priority_class},
    {"policy", "Eviction", &eviction},
    {"policy", "PodDisruptionBudget", &pdb},
    {"apps", "Deployment", &deployment},
    {"batch", "Job", &job},
    {"batch", "CronJob", &cron_job},
    {"coordination.k8s.io", "Lease", &lease},
    {"rbac.authorization.k8s.io", "Role", &role},
    {"rbac.authorization.k8s.io", "ClusterRole", &cluster_role},
    {"rbac.authorization.k8s.io", "RoleBinding", &role_binding},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", &role_binding},
    {"authorization.k8s.io", "SubjectAccessReview", &sar},
    {"authorization.k8s.io", "LocalSubjectAccessReview", &sar},
    {"authorization.k8s.io", "SelfSubjectAccessReview", &ssar},
    {"authorization.k8s.io", "SelfSubjectRulesReview", &ssrr},
    {"authentication.k8s.io", "SelfSubjectReview", &ssr},
    {"authentication.k8s.io", "TokenReview", &token_review},
    {"authentication.k8s.io", "TokenRequest", &token_request},
    {"", "DeleteOptions", &delete_options},
    {NULL, NULL, NULL},
};

const struct protobuf_msg *protobuf_kind_msg(const char *api_version, const char *kind)
{
    const char *slash = strchr(api_version, '/');
    const char *version = slash ? slash + 1 : api_version;
    size_t glen = slash ? (size_t)(slash - api_version) : 0;

    /* DeleteOptions travels with the resource's group version (or meta.k8s.io/v1). */
    if (!strcmp(kind, "DeleteOptions"))
        return &delete_options;
    if (strcmp(version, "v1"))
        return NULL;
    for (const struct protobuf_kind *k = protobuf_kinds; k->kind; k++)
        if (!strcmp(k->kind, kind) && strlen(k->group) == glen &&
            !strncmp(k->group, api_version, glen))
            return k->msg;
    return NULL;
}
