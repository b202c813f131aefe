/*
 * Tests for agent/cgroup/cgroup.c: names and their parsers, version detection (a tmpfs tree is
 * v1; the host's cgroup2 mount, when there is one, is v2), driver detection on prepared v1 and v2
 * trees of both drivers, layout init with forced and detected values, and every path function
 * against the kubelet's names (reference 1.3), including the inputs they must refuse.
 */
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/statfs.h>

#include <cmocka.h>

#include "agent/cgroup/cgroup.h"
#include "base/base.h"
#include "cgtest.h"

#define UID  "7712555c-ce62-454a-9e18-9ff0217b8941"
#define UID_ "7712555c_ce62_454a_9e18_9ff0217b8941"
#define CID  "4f1d1c1e8a0b2d3c4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1"

static void test_names(void **state)
{
    enum cg_version v = CG_VERSION_UNKNOWN;
    enum cg_driver d = CG_DRIVER_UNKNOWN;
    enum cg_qos q = CG_QOS_GUARANTEED;

    (void)state;
    assert_string_equal(cg_version_name(CG_V1), "v1");
    assert_string_equal(cg_version_name(CG_V2), "v2");
    assert_string_equal(cg_version_name(CG_VERSION_UNKNOWN), "unknown");
    assert_string_equal(cg_driver_name(CG_DRIVER_CGROUPFS), "cgroupfs");
    assert_string_equal(cg_driver_name(CG_DRIVER_SYSTEMD), "systemd");
    assert_string_equal(cg_driver_name(CG_DRIVER_UNKNOWN), "unknown");
    assert_string_equal(cg_qos_name(CG_QOS_GUARANTEED), "Guaranteed");
    assert_string_equal(cg_qos_name(CG_QOS_BURSTABLE), "Burstable");
    assert_string_equal(cg_qos_name(CG_QOS_BESTEFFORT), "BestEffort");

    assert_int_equal(cg_version_parse("v2", &v), 0);
    assert_int_equal(v, CG_V2);
    assert_int_equal(cg_version_parse("1", &v), 0);
    assert_int_equal(v, CG_V1);
    assert_int_equal(cg_version_parse("2", &v), 0);
    assert_int_equal(v, CG_V2);
    assert_int_equal(cg_version_parse("v1", &v), 0);
    assert_int_equal(v, CG_V1);
    assert_int_equal(cg_version_parse("unknown", &v), -EINVAL);
    assert_int_equal(cg_version_parse("v3", &v), -EINVAL);
    assert_int_equal(cg_version_parse(NULL, &v), -EINVAL);
    assert_int_equal(v, CG_V1);

    assert_int_equal(cg_driver_parse("systemd", &d), 0);
    assert_int_equal(d, CG_DRIVER_SYSTEMD);
    assert_int_equal(cg_driver_parse("cgroupfs", &d), 0);
    assert_int_equal(d, CG_DRIVER_CGROUPFS);
    assert_int_equal(cg_driver_parse("Systemd", &d), -EINVAL);
    assert_int_equal(cg_driver_parse("", &d), -EINVAL);
    assert_int_equal(cg_driver_parse(NULL, &d), -EINVAL);
    assert_int_equal(d, CG_DRIVER_CGROUPFS);

    assert_int_equal(cg_qos_parse("BestEffort", &q), 0);
    assert_int_equal(q, CG_QOS_BESTEFFORT);
    assert_int_equal(cg_qos_parse("Burstable", &q), 0);
    assert_int_equal(q, CG_QOS_BURSTABLE);
    assert_int_equal(cg_qos_parse("Guaranteed", &q), 0);
    assert_int_equal(q, CG_QOS_GUARANTEED);
    assert_int_equal(cg_qos_parse("besteffort", &q), -EINVAL);
    assert_int_equal(cg_qos_parse(NULL, &q), -EINVAL);
    assert_int_equal(q, CG_QOS_GUARANTEED);
}

static void test_roots_default(void **state)
{
    struct cg_roots r;

    (void)state;
    cg_roots_default(&r);
    assert_string_equal(r.cgroup_root, "/sys/fs/cgroup");
    assert_string_equal(r.proc_root, "/proc");
    assert_string_equal(r.sys_root, "/sys");
    assert_string_equal(r.resctrl_root, "/sys/fs/resctrl");
}

static void test_detect_version(void **state)
{
    struct cgt *t = *state;
    enum cg_version v = CG_VERSION_UNKNOWN;
    struct statfs st;

    /* A temporary directory is never cgroup2: v1, as koordlet decides. */
    assert_int_equal(cg_detect_version(t->cgroup, &v), 0);
    assert_int_equal(v, CG_V1);
    v = CG_VERSION_UNKNOWN;
    assert_int_equal(cg_detect_version("/nonexistent/koord", &v), -ENOENT);
    assert_int_equal(v, CG_VERSION_UNKNOWN);

    /* The real magic, wherever this host mounts a cgroup2 hierarchy (unified root, or the
     * hybrid layout's /sys/fs/cgroup/unified). */
    static const char *const mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    for (size_t i = 0; i < ARRAY_SIZE(mounts); i++) {
        if (statfs(mounts[i], &st) < 0)
            continue;
        assert_int_equal(cg_detect_version(mounts[i], &v), 0);
        assert_int_equal(v, st.f_type == CGROUP2_SUPER_MAGIC ? CG_V2 : CG_V1);
    }
}

static void test_detect_driver(void **state)
{
    struct cgt *t = *state;
    enum cg_driver d = CG_DRIVER_UNKNOWN;
    char path[CG_PATH_MAX];

    /* Nothing yet: the caller's flag decides. */
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V1, &d), -ENOENT);
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V2, &d), -ENOENT);
    assert_int_equal(d, CG_DRIVER_UNKNOWN);
    assert_int_equal(cg_detect_driver(t->cgroup, CG_VERSION_UNKNOWN, &d), -EINVAL);

    /* v1 looks under cpu/ only; a kubepods dir elsewhere (memory/) is not enough. */
    cgt_mkdirs(cgt_join(path, t->cgroup, "memory/kubepods.slice"));
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V1, &d), -ENOENT);
    cgt_mkdirs(cgt_join(path, t->cgroup, "cpu/kubepods"));
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V1, &d), 0);
    assert_int_equal(d, CG_DRIVER_CGROUPFS);
    /* kubepods.slice wins over kubepods. */
    cgt_mkdirs(cgt_join(path, t->cgroup, "cpu/kubepods.slice"));
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V1, &d), 0);
    assert_int_equal(d, CG_DRIVER_SYSTEMD);
    /* v2 looks at the root. */
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V2, &d), -ENOENT);
    cgt_mkdirs(cgt_join(path, t->cgroup, "kubepods"));
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V2, &d), 0);
    assert_int_equal(d, CG_DRIVER_CGROUPFS);
    cgt_mkdirs(cgt_join(path, t->cgroup, "kubepods.slice"));
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V2, &d), 0);
    assert_int_equal(d, CG_DRIVER_SYSTEMD);
    /* A file of that name is not the kubelet's directory. */
    cgt_rm_rf(t->cgroup);
    cgt_put(t->cgroup, "kubepods.slice", "");
    assert_int_equal(cg_detect_driver(t->cgroup, CG_V2, &d), -ENOENT);
}

static void test_layout_init(void **state)
{
    struct cgt *t = *state;
    struct cg_layout l, keep;
    char path[CG_PATH_MAX];

    /* Forced: a v2 tree on a tmpfs, with no kubepods at all. */
    assert_int_equal(cg_layout_init(&l, &t->roots, CG_V2, CG_DRIVER_SYSTEMD), 0);
    assert_int_equal(l.version, CG_V2);
    assert_int_equal(l.driver, CG_DRIVER_SYSTEMD);
    assert_string_equal(l.roots.proc_root, t->proc);
    assert_ptr_equal(l.roots.cgroup_root, t->cgroup);

    /* Driver undetectable: an error, l untouched. */
    keep = l;
    assert_int_equal(cg_layout_init(&l, &t->roots, CG_V1, CG_DRIVER_UNKNOWN), -ENOENT);
    assert_memory_equal(&l, &keep, sizeof(l));

    /* Both detected. */
    cgt_mkdirs(cgt_join(path, t->cgroup, "cpu/kubepods"));
    assert_int_equal(cg_layout_init(&l, &t->roots, CG_VERSION_UNKNOWN, CG_DRIVER_UNKNOWN), 0);
    assert_int_equal(l.version, CG_V1);
    assert_int_equal(l.driver, CG_DRIVER_CGROUPFS);

    /* Version undetectable. */
    struct cg_roots bad = t->roots;
    bad.cgroup_root = "/nonexistent/koord";
    assert_int_equal(cg_layout_init(&l, &bad, CG_VERSION_UNKNOWN, CG_DRIVER_SYSTEMD), -ENOENT);
    assert_int_equal(l.driver, CG_DRIVER_CGROUPFS);

    /* NULL roots: host defaults (driver forced so nothing depends on this host). */
    assert_int_equal(cg_layout_init(&l, NULL, CG_V1, CG_DRIVER_SYSTEMD), 0);
    assert_string_equal(l.roots.cgroup_root, "/sys/fs/cgroup");
}

static void test_kube_and_qos_dirs(void **state)
{
    char buf[CG_PATH_MAX];

    (void)state;
    assert_int_equal(cg_kube_root_dir(CG_DRIVER_CGROUPFS, buf, sizeof(buf)), 8);
    assert_string_equal(buf, "kubepods");
    assert_int_equal(cg_kube_root_dir(CG_DRIVER_SYSTEMD, buf, sizeof(buf)), 14);
    assert_string_equal(buf, "kubepods.slice");
    assert_int_equal(cg_kube_root_dir(CG_DRIVER_UNKNOWN, buf, sizeof(buf)), -EINVAL);
    assert_string_equal(buf, "");

    static const struct {
        enum cg_driver d;
        enum cg_qos q;
        const char *want;
    } cases[] = {
        {CG_DRIVER_CGROUPFS, CG_QOS_GUARANTEED, "kubepods"},
        {CG_DRIVER_CGROUPFS, CG_QOS_BURSTABLE, "kubepods/burstable"},
        {CG_DRIVER_CGROUPFS, CG_QOS_BESTEFFORT, "kubepods/besteffort"},
        {CG_DRIVER_SYSTEMD, CG_QOS_GUARANTEED, "kubepods.slice"},
        {CG_DRIVER_SYSTEMD, CG_QOS_BURSTABLE, "kubepods.slice/kubepods-burstable.slice"},
        {CG_DRIVER_SYSTEMD, CG_QOS_BESTEFFORT, "kubepods.slice/kubepods-besteffort.slice"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int n = cg_qos_dir(cases[i].d, cases[i].q, buf, sizeof(buf));

        assert_string_equal(buf, cases[i].want);
        assert_int_equal(n, (int)strlen(cases[i].want));
    }
    assert_int_equal(cg_qos_dir(CG_DRIVER_UNKNOWN, CG_QOS_BURSTABLE, buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cg_qos_dir(CG_DRIVER_SYSTEMD, (enum cg_qos)7, buf, sizeof(buf)), -EINVAL);
    assert_string_equal(buf, "");
}

static void test_pod_dir(void **state)
{
    char buf[CG_PATH_MAX], small[20], long_uid[200];

    (void)state;
    static const struct {
        enum cg_driver d;
        enum cg_qos q;
        const char *want;
    } cases[] = {
        {CG_DRIVER_CGROUPFS, CG_QOS_GUARANTEED, "kubepods/pod" UID},
        {CG_DRIVER_CGROUPFS, CG_QOS_BURSTABLE, "kubepods/burstable/pod" UID},
        {CG_DRIVER_CGROUPFS, CG_QOS_BESTEFFORT, "kubepods/besteffort/pod" UID},
        {CG_DRIVER_SYSTEMD, CG_QOS_GUARANTEED, "kubepods.slice/kubepods-pod" UID_ ".slice"},
        {CG_DRIVER_SYSTEMD, CG_QOS_BURSTABLE,
         "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"},
        {CG_DRIVER_SYSTEMD, CG_QOS_BESTEFFORT,
         "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int n = cg_pod_dir(cases[i].d, cases[i].q, UID, buf, sizeof(buf));

        assert_string_equal(buf, cases[i].want);
        assert_int_equal(n, (int)strlen(cases[i].want));
    }
    /* A static pod's UID is a hash without dashes. */
    assert_true(cg_pod_dir(CG_DRIVER_SYSTEMD, CG_QOS_BURSTABLE, "0b4a1c2d3e4f", buf, sizeof(buf)) >
                0);
    assert_string_equal(buf, "kubepods.slice/kubepods-burstable.slice/"
                             "kubepods-burstable-pod0b4a1c2d3e4f.slice");

    /* UIDs that could climb out, or are not UIDs. */
    static const char *const bad[] = {"", "..", "a/b", "../../etc", "a b", "a_b", "a.b"};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
        assert_int_equal(cg_pod_dir(CG_DRIVER_CGROUPFS, CG_QOS_BURSTABLE, bad[i], buf, sizeof(buf)),
                         -EINVAL);
    assert_int_equal(cg_pod_dir(CG_DRIVER_CGROUPFS, CG_QOS_BURSTABLE, NULL, buf, sizeof(buf)),
                     -EINVAL);
    memset(long_uid, 'a', 128);
    long_uid[128] = '\0';
    assert_true(cg_pod_dir(CG_DRIVER_CGROUPFS, CG_QOS_GUARANTEED, long_uid, buf, sizeof(buf)) > 0);
    long_uid[128] = 'a';
    long_uid[129] = '\0';
    assert_int_equal(cg_pod_dir(CG_DRIVER_CGROUPFS, CG_QOS_GUARANTEED, long_uid, buf, sizeof(buf)),
                     -EINVAL);
    assert_int_equal(cg_pod_dir(CG_DRIVER_UNKNOWN, CG_QOS_GUARANTEED, UID, buf, sizeof(buf)),
                     -EINVAL);

    /* Too small a buffer: -ENAMETOOLONG and "", never a cut path. */
    assert_int_equal(cg_pod_dir(CG_DRIVER_SYSTEMD, CG_QOS_BURSTABLE, UID, small, sizeof(small)),
                     -ENAMETOOLONG);
    assert_string_equal(small, "");
    /* Exactly fitting: length + NUL. */
    assert_int_equal(cg_pod_dir(CG_DRIVER_CGROUPFS, CG_QOS_GUARANTEED, "abc", small, 16), 15);
    assert_string_equal(small, "kubepods/podabc");
    assert_int_equal(cg_pod_dir(CG_DRIVER_CGROUPFS, CG_QOS_GUARANTEED, "abc", small, 15),
                     -ENAMETOOLONG);
}

static void test_container_id(void **state)
{
    enum cg_runtime rt = CG_RUNTIME_POUCH;
    const char *id = NULL;

    (void)state;
    static const struct {
        const char *in;
        enum cg_runtime rt;
    } good[] = {
        {"containerd://" CID, CG_RUNTIME_CONTAINERD},
        {"docker://" CID, CG_RUNTIME_DOCKER},
        {"cri-o://" CID, CG_RUNTIME_CRIO},
        {"pouch://" CID, CG_RUNTIME_POUCH},
    };
    for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
        assert_int_equal(cg_container_id_parse(good[i].in, &rt, &id), 0);
        assert_int_equal(rt, good[i].rt);
        assert_string_equal(id, CID);
        assert_ptr_equal(id, strstr(good[i].in, "://") + 3);
    }
    rt = CG_RUNTIME_DOCKER;
    id = NULL;
    assert_int_equal(cg_container_id_parse("rkt://" CID, &rt, &id), -EPROTONOSUPPORT);
    assert_int_equal(cg_container_id_parse("xcontainerd://" CID, &rt, &id), -EPROTONOSUPPORT);
    assert_int_equal(cg_container_id_parse("://" CID, &rt, &id), -EPROTONOSUPPORT);
    assert_int_equal(cg_container_id_parse(CID, &rt, &id), -EINVAL);
    assert_int_equal(cg_container_id_parse("containerd://", &rt, &id), -EINVAL);
    assert_int_equal(cg_container_id_parse("containerd://../x", &rt, &id), -EINVAL);
    assert_int_equal(cg_container_id_parse("containerd://a/b", &rt, &id), -EINVAL);
    assert_int_equal(cg_container_id_parse(NULL, &rt, &id), -EINVAL);
    assert_int_equal(rt, CG_RUNTIME_DOCKER);
    assert_null(id);
}

static void test_container_dir(void **state)
{
    char pod[CG_PATH_MAX], buf[CG_PATH_MAX];

    (void)state;
    assert_true(cg_pod_dir(CG_DRIVER_SYSTEMD, CG_QOS_BURSTABLE, UID, pod, sizeof(pod)) > 0);
    static const struct {
        const char *id, *scope;
    } sd[] = {
        {"containerd://" CID, "cri-containerd-" CID ".scope"},
        {"docker://" CID, "docker-" CID ".scope"},
        {"cri-o://" CID, "crio-" CID ".scope"},
        {"pouch://" CID, "pouch-" CID ".scope"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(sd); i++) {
        char want[CG_PATH_MAX + 128];

        (void)snprintf(want, sizeof(want), "%s/%s", pod, sd[i].scope);
        assert_int_equal(cg_container_dir(CG_DRIVER_SYSTEMD, pod, sd[i].id, buf, sizeof(buf)),
                         (int)strlen(want));
        assert_string_equal(buf, want);
    }
    /* The example of reference 1.3, as a whole path. */
    assert_string_equal(buf, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
                             ".slice/pouch-" CID ".scope");

    assert_true(cg_pod_dir(CG_DRIVER_CGROUPFS, CG_QOS_BESTEFFORT, UID, pod, sizeof(pod)) > 0);
    for (size_t i = 0; i < ARRAY_SIZE(sd); i++) {
        assert_true(cg_container_dir(CG_DRIVER_CGROUPFS, pod, sd[i].id, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "kubepods/besteffort/pod" UID "/" CID);
    }
    /* A trailing '/' on the pod dir is not doubled. */
    assert_true(cg_container_dir(CG_DRIVER_CGROUPFS, "kubepods/podx/", "docker://abc", buf,
                                 sizeof(buf)) > 0);
    assert_string_equal(buf, "kubepods/podx/abc");

    assert_int_equal(cg_container_dir(CG_DRIVER_SYSTEMD, pod, "rkt://abc", buf, sizeof(buf)),
                     -EPROTONOSUPPORT);
    assert_int_equal(cg_container_dir(CG_DRIVER_SYSTEMD, pod, "abc", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cg_container_dir(CG_DRIVER_UNKNOWN, pod, "docker://abc", buf, sizeof(buf)),
                     -EINVAL);
    assert_int_equal(cg_container_dir(CG_DRIVER_SYSTEMD, "", "docker://abc", buf, sizeof(buf)),
                     -EINVAL);
    assert_int_equal(cg_container_dir(CG_DRIVER_SYSTEMD, "../x", "docker://abc", buf, sizeof(buf)),
                     -EINVAL);
    assert_string_equal(buf, "");
    assert_int_equal(cg_container_dir(CG_DRIVER_SYSTEMD, pod, "docker://" CID, buf, 40),
                     -ENAMETOOLONG);
}

static void test_dir_path(void **state)
{
    struct cg_layout l = {.version = CG_V1, .driver = CG_DRIVER_SYSTEMD};
    char buf[CG_PATH_MAX];

    (void)state;
    cg_roots_default(&l.roots);
    assert_int_equal(cg_dir_path(&l, "cpu", "kubepods.slice", buf, sizeof(buf)),
                     (int)strlen("/sys/fs/cgroup/cpu/kubepods.slice"));
    assert_string_equal(buf, "/sys/fs/cgroup/cpu/kubepods.slice");
    /* Leading and trailing '/' of dir (NodeSLO host applications) and of the root. */
    l.roots.cgroup_root = "/host-cgroup/";
    assert_true(cg_dir_path(&l, "memory", "/host-latency-sensitive/nginx/", buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/host-cgroup/memory/host-latency-sensitive/nginx");
    /* The root cgroup. */
    assert_true(cg_dir_path(&l, "cpuacct", "", buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/host-cgroup/cpuacct");
    assert_true(cg_dir_path(&l, "cpuacct", "/", buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/host-cgroup/cpuacct");
    assert_true(cg_dir_path(&l, "cpuacct", NULL, buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/host-cgroup/cpuacct");
    /* v1 needs a subsystem. */
    assert_int_equal(cg_dir_path(&l, NULL, "x", buf, sizeof(buf)), -EINVAL);

    /* v2: the unified root; subsys ignored. */
    l.version = CG_V2;
    l.roots.cgroup_root = "/sys/fs/cgroup";
    assert_true(cg_dir_path(&l, "cpu", "kubepods/burstable", buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/sys/fs/cgroup/kubepods/burstable");
    assert_true(cg_dir_path(&l, NULL, "", buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/sys/fs/cgroup");
    /* A root of "/" stays "/". */
    l.roots.cgroup_root = "/";
    assert_true(cg_dir_path(&l, NULL, "a", buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/a");

    /* No climbing out; ".." only as a whole component. */
    assert_int_equal(cg_dir_path(&l, NULL, "..", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cg_dir_path(&l, NULL, "a/../../b", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cg_dir_path(&l, NULL, "a/..", buf, sizeof(buf)), -EINVAL);
    assert_true(cg_dir_path(&l, NULL, "a/..b/c..", buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "/a/..b/c..");
    l.version = CG_VERSION_UNKNOWN;
    assert_int_equal(cg_dir_path(&l, "cpu", "a", buf, sizeof(buf)), -EINVAL);
    l.version = CG_V2;
    assert_int_equal(cg_dir_path(&l, NULL, "abcdef", buf, 5), -ENAMETOOLONG);
    assert_string_equal(buf, "");
}

static void test_join_path(void **state)
{
    char buf[CG_PATH_MAX];

    (void)state;
    assert_int_equal(cg_join_path("/proc", "stat", buf, sizeof(buf)), 10);
    assert_string_equal(buf, "/proc/stat");
    assert_true(cg_join_path("/host-sys/", "/bus/node/devices/node0/meminfo", buf, sizeof(buf)) >
                0);
    assert_string_equal(buf, "/host-sys/bus/node/devices/node0/meminfo");
    assert_int_equal(cg_join_path("/proc", "../etc/passwd", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cg_join_path("/proc", "meminfo", buf, 8), -ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_roots_default),
        cmocka_unit_test_setup_teardown(test_detect_version, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_detect_driver, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_layout_init, cgt_setup, cgt_teardown),
        cmocka_unit_test(test_kube_and_qos_dirs),
        cmocka_unit_test(test_pod_dir),
        cmocka_unit_test(test_container_id),
        cmocka_unit_test(test_container_dir),
        cmocka_unit_test(test_dir_path),
        cmocka_unit_test(test_join_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
