/*
 * Roots, cgroup version and driver detection, and the kubelet's cgroup layout (see cgroup.h).
 * Paths are built with bounded appends into the caller's buffer; nothing allocates.
 */
#include "agent/cgroup/cgroup.h"

#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "agent/cgroup/cgroup-int.h"
#include "base/base.h"

#define ID_MAX 128

void cg_roots_default(struct cg_roots *ret)
{
    ret->cgroup_root = "/sys/fs/cgroup";
    ret->proc_root = "/proc";
    ret->sys_root = "/sys";
    ret->resctrl_root = "/sys/fs/resctrl";
}

const char *cg_version_name(enum cg_version v)
{
    switch (v) {
    case CG_V1:
        return "v1";
    case CG_V2:
        return "v2";
    case CG_VERSION_UNKNOWN:
        break;
    }
    return "unknown";
}

const char *cg_driver_name(enum cg_driver d)
{
    switch (d) {
    case CG_DRIVER_CGROUPFS:
        return "cgroupfs";
    case CG_DRIVER_SYSTEMD:
        return "systemd";
    case CG_DRIVER_UNKNOWN:
        break;
    }
    return "unknown";
}

const char *cg_qos_name(enum cg_qos q)
{
    switch (q) {
    case CG_QOS_GUARANTEED:
        return "Guaranteed";
    case CG_QOS_BURSTABLE:
        return "Burstable";
    case CG_QOS_BESTEFFORT:
        return "BestEffort";
    }
    return "unknown";
}

int cg_version_parse(const char *s, enum cg_version *ret)
{
    if (!s)
        return -EINVAL;
    if (!strcmp(s, "v1") || !strcmp(s, "1"))
        *ret = CG_V1;
    else if (!strcmp(s, "v2") || !strcmp(s, "2"))
        *ret = CG_V2;
    else
        return -EINVAL;
    return 0;
}

int cg_driver_parse(const char *s, enum cg_driver *ret)
{
    if (!s)
        return -EINVAL;
    if (!strcmp(s, "cgroupfs"))
        *ret = CG_DRIVER_CGROUPFS;
    else if (!strcmp(s, "systemd"))
        *ret = CG_DRIVER_SYSTEMD;
    else
        return -EINVAL;
    return 0;
}

int cg_qos_parse(const char *s, enum cg_qos *ret)
{
    if (!s)
        return -EINVAL;
    if (!strcmp(s, "Guaranteed"))
        *ret = CG_QOS_GUARANTEED;
    else if (!strcmp(s, "Burstable"))
        *ret = CG_QOS_BURSTABLE;
    else if (!strcmp(s, "BestEffort"))
        *ret = CG_QOS_BESTEFFORT;
    else
        return -EINVAL;
    return 0;
}

int cg_detect_version(const char *cgroup_root, enum cg_version *ret)
{
    struct statfs st;

    if (statfs(cgroup_root, &st) < 0)
        return -errno;
    *ret = st.f_type == CGROUP2_SUPER_MAGIC ? CG_V2 : CG_V1;
    return 0;
}

/* 1 if <root>/<sub>/<name> is a directory, 0 if absent, -errno. */
static int dir_exists(const char *root, const char *sub, const char *name)
{
    char path[CG_PATH_MAX];
    struct cg__path p;
    struct stat st;
    int r;

    cg__path_start(&p, path, sizeof(path));
    cg__path_add_root(&p, root);
    cg__path_add_component(&p, sub);
    cg__path_add_component(&p, name);
    r = cg__path_end(&p);
    if (r < 0)
        return r;
    if (stat(path, &st) < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
    return S_ISDIR(st.st_mode) ? 1 : 0;
}

int cg_detect_driver(const char *cgroup_root, enum cg_version v, enum cg_driver *ret)
{
    /* kubelet creates the kube root in every v1 subsystem; koordlet looks in cpu. */
    const char *sub = v == CG_V1 ? "cpu" : "";
    int r;

    if (v != CG_V1 && v != CG_V2)
        return -EINVAL;
    r = dir_exists(cgroup_root, sub, "kubepods.slice");
    if (r < 0)
        return r;
    if (r > 0) {
        *ret = CG_DRIVER_SYSTEMD;
        return 0;
    }
    r = dir_exists(cgroup_root, sub, "kubepods");
    if (r < 0)
        return r;
    if (r > 0) {
        *ret = CG_DRIVER_CGROUPFS;
        return 0;
    }
    return -ENOENT;
}

int cg_layout_init(struct cg_layout *ret, const struct cg_roots *roots, enum cg_version version,
                   enum cg_driver driver)
{
    struct cg_layout l;
    int r;

    if (roots)
        l.roots = *roots;
    else
        cg_roots_default(&l.roots);
    if (version == CG_VERSION_UNKNOWN) {
        r = cg_detect_version(l.roots.cgroup_root, &version);
        if (r < 0)
            return r;
    }
    if (driver == CG_DRIVER_UNKNOWN) {
        r = cg_detect_driver(l.roots.cgroup_root, version, &driver);
        if (r < 0)
            return r;
    }
    l.version = version;
    l.driver = driver;
    *ret = l;
    return 0;
}

static bool is_id_char(char c, bool underscore_ok)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           (underscore_ok && c == '_');
}

static bool valid_id(const char *s, bool underscore_ok)
{
    size_t n = 0;

    if (!s || !*s)
        return false;
    for (; s[n]; n++)
        if (n >= ID_MAX || !is_id_char(s[n], underscore_ok))
            return false;
    return true;
}

int cg_kube_root_dir(enum cg_driver d, char *buf, size_t size)
{
    struct cg__path p;

    cg__path_start(&p, buf, size);
    if (d == CG_DRIVER_CGROUPFS)
        cg__path_adds(&p, "kubepods");
    else if (d == CG_DRIVER_SYSTEMD)
        cg__path_adds(&p, "kubepods.slice");
    else
        return -EINVAL;
    return cg__path_end(&p);
}

/* The infix of a QoS class in systemd slice names: "-burstable", "-besteffort", "". */
static const char *qos_slice_infix(enum cg_qos q)
{
    return q == CG_QOS_BURSTABLE ? "-burstable" : q == CG_QOS_BESTEFFORT ? "-besteffort" : "";
}

/* Appends the QoS dir of q; false for a bad driver or QoS. */
static bool add_qos_dir(struct cg__path *p, enum cg_driver d, enum cg_qos q)
{
    if (q != CG_QOS_GUARANTEED && q != CG_QOS_BURSTABLE && q != CG_QOS_BESTEFFORT)
        return false;
    if (d == CG_DRIVER_CGROUPFS) {
        cg__path_adds(p, "kubepods");
        if (q == CG_QOS_BURSTABLE)
            cg__path_adds(p, "/burstable");
        else if (q == CG_QOS_BESTEFFORT)
            cg__path_adds(p, "/besteffort");
        return true;
    }
    if (d == CG_DRIVER_SYSTEMD) {
        cg__path_adds(p, "kubepods.slice");
        if (q != CG_QOS_GUARANTEED) {
            cg__path_adds(p, "/kubepods");
            cg__path_adds(p, qos_slice_infix(q));
            cg__path_adds(p, ".slice");
        }
        return true;
    }
    return false;
}

int cg_qos_dir(enum cg_driver d, enum cg_qos q, char *buf, size_t size)
{
    struct cg__path p;

    cg__path_start(&p, buf, size);
    if (!add_qos_dir(&p, d, q)) {
        (void)cg__path_end(&p);
        return -EINVAL;
    }
    return cg__path_end(&p);
}

int cg_pod_dir(enum cg_driver d, enum cg_qos q, const char *uid, char *buf, size_t size)
{
    struct cg__path p;

    cg__path_start(&p, buf, size);
    if (!valid_id(uid, false) || !add_qos_dir(&p, d, q)) {
        (void)cg__path_end(&p);
        return -EINVAL;
    }
    if (d == CG_DRIVER_CGROUPFS) {
        cg__path_adds(&p, "/pod");
        cg__path_adds(&p, uid);
        return cg__path_end(&p);
    }
    /* systemd unit names use '-' as the hierarchy separator, so the kubelet escapes the UID's
     * dashes as '_' (kubelet cm/cgroup_manager_linux.go, escapeSystemdCgroupName). */
    cg__path_adds(&p, "/kubepods");
    cg__path_adds(&p, qos_slice_infix(q));
    cg__path_adds(&p, "-pod");
    for (const char *c = uid; *c; c++)
        cg__path_add(&p, *c == '-' ? "_" : c, 1);
    cg__path_adds(&p, ".slice");
    return cg__path_end(&p);
}

static const struct {
    const char *scheme; /* with "://" */
    enum cg_runtime runtime;
    const char *scope_prefix; /* systemd scope name prefix */
} runtimes[] = {
    {"containerd://", CG_RUNTIME_CONTAINERD, "cri-containerd-"},
    {"docker://", CG_RUNTIME_DOCKER, "docker-"},
    {"cri-o://", CG_RUNTIME_CRIO, "crio-"},
    {"pouch://", CG_RUNTIME_POUCH, "pouch-"},
};

int cg_container_id_parse(const char *container_id, enum cg_runtime *ret_runtime,
                          const char **ret_id)
{
    const char *sep = container_id ? strstr(container_id, "://") : NULL;

    if (!sep || !valid_id(sep + 3, true))
        return -EINVAL;
    for (size_t i = 0; i < ARRAY_SIZE(runtimes); i++) {
        size_t n = strlen(runtimes[i].scheme);

        if ((size_t)(sep + 3 - container_id) == n &&
            !strncmp(container_id, runtimes[i].scheme, n)) {
            *ret_runtime = runtimes[i].runtime;
            *ret_id = sep + 3;
            return 0;
        }
    }
    return -EPROTONOSUPPORT;
}

int cg_container_dir(enum cg_driver d, const char *pod_dir, const char *container_id, char *buf,
                     size_t size)
{
    enum cg_runtime rt;
    struct cg__path p;
    const char *id;
    int r;

    cg__path_start(&p, buf, size);
    r = cg_container_id_parse(container_id, &rt, &id);
    if (r == 0 && d != CG_DRIVER_CGROUPFS && d != CG_DRIVER_SYSTEMD)
        r = -EINVAL;
    if (r == 0 && (!pod_dir || !*pod_dir || cg__has_dotdot(pod_dir)))
        r = -EINVAL;
    if (r < 0) {
        (void)cg__path_end(&p);
        return r;
    }
    cg__path_adds(&p, pod_dir);
    if (d == CG_DRIVER_CGROUPFS) {
        cg__path_add_component(&p, id);
        return cg__path_end(&p);
    }
    for (size_t i = 0; i < ARRAY_SIZE(runtimes); i++) {
        if (runtimes[i].runtime == rt) {
            cg__path_add_component(&p, runtimes[i].scope_prefix);
            break;
        }
    }
    cg__path_adds(&p, id);
    cg__path_adds(&p, ".scope");
    return cg__path_end(&p);
}

int cg_dir_path(const struct cg_layout *l, const char *subsys, const char *dir, char *buf,
                size_t size)
{
    struct cg__path p;

    cg__path_start(&p, buf, size);
    if ((l->version != CG_V1 && l->version != CG_V2) || (l->version == CG_V1 && !subsys) ||
        cg__has_dotdot(dir)) {
        (void)cg__path_end(&p);
        return -EINVAL;
    }
    cg__path_add_root(&p, l->roots.cgroup_root);
    if (l->version == CG_V1)
        cg__path_add_component(&p, subsys);
    cg__path_add_component(&p, dir);
    return cg__path_end(&p);
}

int cg_join_path(const char *root, const char *rel, char *buf, size_t size)
{
    struct cg__path p;

    cg__path_start(&p, buf, size);
    if (cg__has_dotdot(rel)) {
        (void)cg__path_end(&p);
        return -EINVAL;
    }
    cg__path_add_root(&p, root);
    cg__path_add_component(&p, rel);
    return cg__path_end(&p);
}

void cg__path_start(struct cg__path *p, char *buf, size_t size)
{
    CHECK(size > 0);
    p->buf = buf;
    p->size = size;
    p->len = 0;
    p->overflow = false;
    buf[0] = '\0';
}

void cg__path_add(struct cg__path *p, const char *s, size_t n)
{
    if (p->overflow)
        return;
    if (n >= p->size - p->len) {
        p->overflow = true;
        return;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

void cg__path_adds(struct cg__path *p, const char *s)
{
    cg__path_add(p, s, strlen(s));
}

void cg__path_add_root(struct cg__path *p, const char *root)
{
    size_t n = strlen(root);

    while (n > 1 && root[n - 1] == '/')
        n--;
    cg__path_add(p, root, n);
}

void cg__path_add_component(struct cg__path *p, const char *component)
{
    size_t n;

    if (!component)
        return;
    while (*component == '/')
        component++;
    n = strlen(component);
    while (n > 0 && component[n - 1] == '/')
        n--;
    if (n == 0)
        return;
    /* Only the root "/" ends in '/'. */
    if (p->len == 0 || p->buf[p->len - 1] != '/')
        cg__path_add(p, "/", 1);
    cg__path_add(p, component, n);
}

int cg__path_end(struct cg__path *p)
{
    if (p->overflow) {
        p->buf[0] = '\0';
        return -ENAMETOOLONG;
    }
    return (int)p->len;
}

bool cg__has_dotdot(const char *s)
{
    if (!s)
        return false;
    for (const char *c = s; *c;) {
        size_t n = strcspn(c, "/");

        if (n == 2 && c[0] == '.' && c[1] == '.')
            return true;
        c += n;
        while (*c == '/')
            c++;
    }
    return false;
}
