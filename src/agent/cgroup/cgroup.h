/*
 * agent/cgroup: where the node agent finds things on the host. Every metric the agent reports and
 * every QoS knob it turns is a file under the cgroup hierarchy, /proc, /sys or resctrl; this header
 * says which directory, for both cgroup versions and both kubelet cgroup drivers, so the collectors
 * and strategies never spell a path themselves (koordlet: pkg/koordlet/util/system/config.go,
 * cgroup_driver.go, cgroup_driver_linux.go; reference section 1.2 and 1.3).
 *
 * The other headers of the layer: agent/cgroup/resource.h (logical resource -> file, value
 * conversions and validators), agent/cgroup/reader.h (open handles, allocation-free parsers of
 * cgroup and /proc files), agent/cgroup/writer.h (checked writes with read-back and dry run).
 *
 * Paths go into caller buffers: every path function writes a NUL-terminated string into
 * buf[size], returns its length (>= 0), and returns -ENAMETOOLONG when it does not fit (buf then
 * holds ""). Nothing here allocates. CG_PATH_MAX is always enough for paths built from sane roots.
 *
 * Everything here is a pure function of its arguments, or a stat of the host: safe on any thread.
 */
#ifndef KOORD_AGENT_CGROUP_H
#define KOORD_AGENT_CGROUP_H

#include <stddef.h>

#define CG_PATH_MAX 4096

/*
 * The host roots, so tests run on prepared trees and a DaemonSet can mount the host's
 * directories elsewhere (koordlet's /host-cgroup/, /host-sys/, ...). Strings are borrowed: they
 * must outlive every struct that copies this one. Trailing '/' are allowed.
 */
struct cg_roots {
    const char *cgroup_root;  /* "/sys/fs/cgroup" */
    const char *proc_root;    /* "/proc" */
    const char *sys_root;     /* "/sys" */
    const char *resctrl_root; /* "/sys/fs/resctrl" */
};

/* Host-mode defaults (the paths above). */
void cg_roots_default(struct cg_roots *ret);

enum cg_version { CG_VERSION_UNKNOWN = 0, CG_V1 = 1, CG_V2 = 2 };

/* The kubelet's --cgroup-driver. */
enum cg_driver { CG_DRIVER_UNKNOWN = 0, CG_DRIVER_CGROUPFS, CG_DRIVER_SYSTEMD };

/* The Kubernetes QoS class (not Koordinator's): it alone picks a pod's cgroup parent. */
enum cg_qos { CG_QOS_GUARANTEED, CG_QOS_BURSTABLE, CG_QOS_BESTEFFORT };

/* The container runtime named by a container ID's scheme ("containerd://<id>"). */
enum cg_runtime { CG_RUNTIME_CONTAINERD, CG_RUNTIME_DOCKER, CG_RUNTIME_CRIO, CG_RUNTIME_POUCH };

/* "v1", "v2", "unknown"; "cgroupfs", "systemd", "unknown"; "Guaranteed", "Burstable",
 * "BestEffort". Never NULL. */
const char *cg_version_name(enum cg_version v);
const char *cg_driver_name(enum cg_driver d);
const char *cg_qos_name(enum cg_qos q);

/* Inverses of the above, for flags and pod status: "v1"/"1", "v2"/"2"; "cgroupfs",
 * "systemd"; the three QoS class names. -EINVAL for anything else ("unknown" included). */
int cg_version_parse(const char *s, enum cg_version *ret);
int cg_driver_parse(const char *s, enum cg_driver *ret);
int cg_qos_parse(const char *s, enum cg_qos *ret);

/*
 * The cgroup version of the hierarchy mounted at cgroup_root: statfs() says CGROUP2_SUPER_MAGIC
 * -> CG_V2, anything else -> CG_V1 (the v1 root is a tmpfs of per-subsystem mounts; koordlet
 * decides the same way). -errno of statfs() (-ENOENT, -EACCES).
 *
 * A test tree in a temporary directory is a tmpfs or ext4, never cgroup2, so it always detects
 * as v1: tests of v2 layouts pass the version explicitly to cg_layout_init() instead of
 * detecting it. That explicit argument is the one override; there is no marker file a stray
 * directory could carry onto a real host.
 */
int cg_detect_version(const char *cgroup_root, enum cg_version *ret);

/*
 * The kubelet's cgroup driver, from the directories it created: kubepods.slice -> systemd, else
 * kubepods -> cgroupfs, looked up under <cgroup_root>/cpu/ on v1 and <cgroup_root>/ on v2.
 * -ENOENT when neither exists (kubelet not started yet, or not a Kubernetes node): the caller
 * then uses its --cgroup-driver flag. koordlet next reads the kubelet's command line and config
 * file; that fallback is not implemented: a flag is simpler and as reliable. -EINVAL for
 * CG_VERSION_UNKNOWN; other -errno of stat().
 */
int cg_detect_driver(const char *cgroup_root, enum cg_version v, enum cg_driver *ret);

/* Roots plus the detected (or forced) version and driver: all a path needs. Plain data: copy it
 * freely; it borrows the root strings. */
struct cg_layout {
    struct cg_roots roots;
    enum cg_version version;
    enum cg_driver driver;
};

/*
 * Fills *ret from roots (NULL: defaults), version and driver; each of the two that is
 * CG_*_UNKNOWN is detected with the functions above. Passing them explicitly is how a flag
 * overrides detection and how tests lay out v2 trees on a tmpfs. Returns what detection
 * returned (-ENOENT: no kubepods, so no driver); *ret is untouched on failure.
 */
int cg_layout_init(struct cg_layout *ret, const struct cg_roots *roots, enum cg_version version,
                   enum cg_driver driver);

/*
 * Cgroup directories relative to a hierarchy root (v1: a subsystem's root such as
 * /sys/fs/cgroup/cpu; v2: the unified root), without leading or trailing '/', as the kubelet
 * names them (reference 1.3; kubelet pkg/kubelet/cm/cgroup_manager_linux.go, qos_container_manager
 * _linux.go):
 *
 *   level        cgroupfs                 systemd
 *   kube root    kubepods                 kubepods.slice
 *   Guaranteed   kubepods                 kubepods.slice        (pods sit in the kube root)
 *   Burstable    kubepods/burstable       kubepods.slice/kubepods-burstable.slice
 *   BestEffort   kubepods/besteffort      kubepods.slice/kubepods-besteffort.slice
 *   pod          <qos dir>/pod<uid>       <qos
 * dir>/kubepods[-burstable|-besteffort]-pod<uid_>.slice
 *
 * where uid_ is the UID with '-' replaced by '_'. -EINVAL for CG_DRIVER_UNKNOWN, a QoS out of
 * range, or a UID that is empty, longer than 128 bytes or not made of [A-Za-z0-9-] (it comes
 * from the kubelet and must not be able to climb out of the hierarchy).
 */
int cg_kube_root_dir(enum cg_driver d, char *buf, size_t size);
int cg_qos_dir(enum cg_driver d, enum cg_qos q, char *buf, size_t size);
int cg_pod_dir(enum cg_driver d, enum cg_qos q, const char *uid, char *buf, size_t size);

/*
 * Splits a pod status container ID "<scheme>://<id>" into its runtime and ID (*ret_id points
 * into container_id). Schemes: containerd, docker, cri-o, pouch. -EINVAL without "://" or with an
 * empty ID or one not made of [A-Za-z0-9_-] (at most 128 bytes), -EPROTONOSUPPORT for another
 * scheme. Outputs untouched on failure.
 */
int cg_container_id_parse(const char *container_id, enum cg_runtime *ret_runtime,
                          const char **ret_id);

/*
 * The container's directory under pod_dir (a cg_pod_dir() result): cgroupfs "<pod_dir>/<id>";
 * systemd "<pod_dir>/<prefix><id>.scope" with prefix cri-containerd-, docker-, crio-, pouch-.
 * Errors of cg_container_id_parse(), -EINVAL for CG_DRIVER_UNKNOWN.
 */
int cg_container_dir(enum cg_driver d, const char *pod_dir, const char *container_id, char *buf,
                     size_t size);

/*
 * The absolute directory of cgroup dir: v1 "<cgroup_root>/<subsys>/<dir>", v2
 * "<cgroup_root>/<dir>" (subsys ignored, may be NULL). dir is relative to the hierarchy root;
 * leading and trailing '/' are ignored (NodeSLO host applications give "/host-app/nginx/"),
 * "" or "/" is the root cgroup. -EINVAL when dir has a ".." component, when v1 has no subsys, or
 * for CG_VERSION_UNKNOWN.
 */
int cg_dir_path(const struct cg_layout *l, const char *subsys, const char *dir, char *buf,
                size_t size);

/* "<root>/<rel>" with the '/' between them normalised: for /proc and /sys files, e.g.
 * cg_join_path(l->roots.proc_root, "stat", ...). -EINVAL when rel has a ".." component. */
int cg_join_path(const char *root, const char *rel, char *buf, size_t size);

#endif
