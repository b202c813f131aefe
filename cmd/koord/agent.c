/* koord agent: flags and wiring of the node agent (src/agent/agent.h). */
#include "agent/agent.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgroup/reader.h"
#include "agent/qos/runner.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "kube/client.h"
#include "kube/config.h"

static const char usage[] =
    "usage: koord agent --node-name NAME [--kubeconfig FILE] [--manager-address URL]\n"
    "                   [--manager-ca-file FILE] [--report-mode manager|crd] [flags...]\n"
    "\n"
    "The node agent (koordlet): collects this node's and its pods' CPU and memory usage from\n"
    "/proc and cgroups every collect interval, keeps a bounded history in memory, reports the\n"
    "NodeMetric status to koord manager (PUT .../nodemetrics/NAME/status), and applies the\n"
    "NodeSLO's QoS strategies (BE CPU suppression, CPU burst, memory QoS, batch resources,\n"
    "group identity, BE evictions) to the cgroups, and resctrl and system config to the host.\n"
    "\n"
    "  --node-name NAME             this node (default $NODE_NAME)\n"
    "  --kubeconfig FILE            API server and the node's credentials (default\n"
    "                               $KUBECONFIG, in-cluster, ~/.kube/config)\n"
    "  --manager-address URL        the manager's NodeMetric API (default\n"
    "                               https://koord-manager.koordinator-system.svc:443)\n"
    "  --manager-ca-file FILE       CA of the manager's serving certificate (default: the\n"
    "                               kubeconfig's CA)\n"
    "  --report-mode MODE           manager (default), or crd: write the slo.koordinator.sh\n"
    "                               NodeMetric through the API server, as upstream's koordlet\n"
    "  --collect-interval-seconds N collection period (default 1)\n"
    "  --reconcile-interval-seconds N, --cpu-suppress-interval-seconds N,\n"
    "  --memory-evict-interval-seconds N, --cpu-evict-interval-seconds N\n"
    "                               how often the QoS strategies run: the three named, and\n"
    "                               every other (reconcile); default 1 each\n"
    "  --cgroup-root DIR            default /sys/fs/cgroup\n"
    "  --proc-root DIR              default /proc\n"
    "  --sys-root DIR               default /sys\n"
    "  --resctrl-root DIR           default /sys/fs/resctrl\n"
    "  --cgroup-version auto|v1|v2  default auto (detected from the cgroup root)\n"
    "  --cgroup-driver auto|cgroupfs|systemd\n"
    "                               default auto (from the kubepods directory)\n"
    "  --enable-qos=true|false      apply the NodeSLO's QoS strategies (default true)\n"
    "  --feature-gates LIST         strategies on or off, e.g. BEMemoryEvict=true,CPUBurst=false:\n"
    "                               BECPUSuppress (default on), CPUBurst (on), BatchResource\n"
    "                               (on), RdtResctrl (on), GroupIdentity (on), BEMemoryEvict,\n"
    "                               MemoryEvict, MemoryAllocatableEvict, BECPUEvict, CPUEvict,\n"
    "                               CPUAllocatableEvict, CgroupReconcile, SystemConfig (off)\n"
    "  --dry-run                    log the cgroup, sysctl and resctrl writes instead of doing\n"
    "                               them\n"
    "  --cpu-manager-policy none|static\n"
    "                               kubelet's CPU manager policy (default none)\n"
    "  --listen HOST:PORT           /healthz and /metrics (default 127.0.0.1:9316; \"\" = none)\n"
    "  --ready-file FILE            write the bound HOST:PORT here once running\n"
    "  --log-level LEVEL            error, warn, info (default) or debug\n"
    "\n"
    "Upstream koordlet's flags, for its manifests (Go style, one dash or two):\n"
    "  -addr HOST:PORT              --listen (\":PORT\" = every address)\n"
    "  -cgroup-root-dir DIR         --cgroup-root\n"
    "  -v N                         klog verbosity: 0-4 info, 5-10 debug\n"
    "  -logtostderr, -runtime-hooks-host-endpoint PATH, -evict-by-copilot-agent\n"
    "                               accepted, no effect (stderr logs; no runtime hooks, no YARN\n"
    "                               copilot)\n"
    "  -feature-gates also takes koordlet's gates koord has no strategy for (Accelerators,\n"
    "  NodeTopologyReport, CPUSetAllocator, AllAlpha, ...): logged and ignored\n"
    "\n"
    "Stops cleanly on SIGINT or SIGTERM.\n";

enum {
    OPT_NODE = 256,
    OPT_KUBECONFIG,
    OPT_MANAGER,
    OPT_MANAGER_CA,
    OPT_MODE,
    OPT_INTERVAL,
    OPT_RECONCILE_INTERVAL, /* the QoS intervals: keep these four together, in this order */
    OPT_SUPPRESS_INTERVAL,
    OPT_MEMEVICT_INTERVAL,
    OPT_CPUEVICT_INTERVAL,
    OPT_CGROUP_ROOT,
    OPT_PROC_ROOT,
    OPT_SYS_ROOT,
    OPT_RESCTRL_ROOT,
    OPT_CG_VERSION,
    OPT_CG_DRIVER,
    OPT_QOS,
    OPT_GATES,
    OPT_DRY_RUN,
    OPT_CPU_POLICY,
    OPT_LISTEN,
    OPT_READY,
    OPT_LOG_LEVEL,
    OPT_ADDR,
    OPT_CGROUP_ROOT_DIR,
    OPT_KLOG_V,
    OPT_LOGTOSTDERR,
    OPT_IGNORED,
};

/* koordlet gates (koordlet-and-scheduler.md) with no strategy here: accepted, logged, ignored,
 * so upstream's DaemonSet arguments work unchanged. */
static const char *const upstream_only_gates[] = {
    "Accelerators",    "AllAlpha",           "AllBeta",      "AuditEvents",
    "BECPUManager",    "BlkIOReconcile",     "CPICollector", "CPUNormalization",
    "CPUSetAllocator", "ColdPageCollector",  "CoreSched",    "HugePageReport",
    "Libpfm4",         "NodeTopologyReport", "OOMScoreAdj",  "PSICollector",
    "Resctrl",         "TerwayQoS",
};

/* --feature-gates "Name=true,Name=false": koordlet's gate names for the strategies here. */
static int parse_gates(const char *list, uint32_t *gates)
{
    static const struct {
        const char *name;
        uint32_t bit;
    } tab[] = {
        {"BECPUSuppress", QOS_RUNNER_F_BE_CPU_SUPPRESS},
        {"BEMemoryEvict", QOS_RUNNER_F_BE_MEMORY_EVICT},
        {"MemoryEvict", QOS_RUNNER_F_MEMORY_EVICT},
        {"MemoryAllocatableEvict", QOS_RUNNER_F_MEMORY_ALLOCATABLE_EVICT},
        {"BECPUEvict", QOS_RUNNER_F_BE_CPU_EVICT},
        {"CPUEvict", QOS_RUNNER_F_CPU_EVICT},
        {"CPUAllocatableEvict", QOS_RUNNER_F_CPU_ALLOCATABLE_EVICT},
        {"CPUBurst", QOS_RUNNER_F_CPU_BURST},
        {"CgroupReconcile", QOS_RUNNER_F_CGROUP_RECONCILE},
        {"BatchResource", QOS_RUNNER_F_BATCH_RESOURCE},
        {"RdtResctrl", QOS_RUNNER_F_RDT_RESCTRL},
        {"SystemConfig", QOS_RUNNER_F_SYSTEM_CONFIG},
        {"GroupIdentity", QOS_RUNNER_F_GROUP_IDENTITY},
    };

    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ","), i;
        const char *eq = memchr(p, '=', len);
        bool on;

        if (!eq)
            return -EINVAL;
        if ((size_t)(p + len - eq - 1) == 4 && !strncmp(eq + 1, "true", 4))
            on = true;
        else if ((size_t)(p + len - eq - 1) == 5 && !strncmp(eq + 1, "false", 5))
            on = false;
        else
            return -EINVAL;
        for (i = 0; i < ARRAY_SIZE(tab); i++)
            if (strlen(tab[i].name) == (size_t)(eq - p) &&
                !strncmp(p, tab[i].name, (size_t)(eq - p)))
                break;
        if (i == ARRAY_SIZE(tab)) {
            for (i = 0; i < ARRAY_SIZE(upstream_only_gates); i++)
                if (strlen(upstream_only_gates[i]) == (size_t)(eq - p) &&
                    !strncmp(p, upstream_only_gates[i], (size_t)(eq - p)))
                    break;
            if (i == ARRAY_SIZE(upstream_only_gates))
                return -EINVAL;
            log_warn("agent", "feature gate %.*s: koordlet's, no strategy here, ignored",
                     (int)(eq - p), p);
        } else {
            *gates = on ? *gates | tab[i].bit : *gates & ~tab[i].bit;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

/*
 * Each pod and container keeps about three cgroup files open (agent/cgroup/reader.h): 990 on a
 * node of 110 pods, above the reader's default budget of 512 and near the usual soft limit of
 * 1024 descriptors, past which reads fall back to open + read + close every second. Raises the
 * soft limit towards the hard one (at most 65536) and gives the reader all but 512 of it (the
 * connections, the log, the kernel's other files).
 */
static void raise_open_files(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
            return;
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 65536)
        rl.rlim_cur = 65536;
    if (rl.rlim_cur > 1024)
        cg_file_set_max_open((int)rl.rlim_cur - 512);
}

int cmd_agent(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"node-name", required_argument, NULL, OPT_NODE},
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"manager-address", required_argument, NULL, OPT_MANAGER},
        {"manager-ca-file", required_argument, NULL, OPT_MANAGER_CA},
        {"report-mode", required_argument, NULL, OPT_MODE},
        {"collect-interval-seconds", required_argument, NULL, OPT_INTERVAL},
        {"reconcile-interval-seconds", required_argument, NULL, OPT_RECONCILE_INTERVAL},
        {"cpu-suppress-interval-seconds", required_argument, NULL, OPT_SUPPRESS_INTERVAL},
        {"memory-evict-interval-seconds", required_argument, NULL, OPT_MEMEVICT_INTERVAL},
        {"cpu-evict-interval-seconds", required_argument, NULL, OPT_CPUEVICT_INTERVAL},
        {"cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT},
        {"proc-root", required_argument, NULL, OPT_PROC_ROOT},
        {"sys-root", required_argument, NULL, OPT_SYS_ROOT},
        {"resctrl-root", required_argument, NULL, OPT_RESCTRL_ROOT},
        {"cgroup-version", required_argument, NULL, OPT_CG_VERSION},
        {"cgroup-driver", required_argument, NULL, OPT_CG_DRIVER},
        {"enable-qos", required_argument, NULL, OPT_QOS},
        {"feature-gates", required_argument, NULL, OPT_GATES},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"cpu-manager-policy", required_argument, NULL, OPT_CPU_POLICY},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"ready-file", required_argument, NULL, OPT_READY},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"addr", required_argument, NULL, OPT_ADDR},
        {"cgroup-root-dir", required_argument, NULL, OPT_CGROUP_ROOT_DIR},
        {"v", required_argument, NULL, OPT_KLOG_V},
        {"logtostderr", optional_argument, NULL, OPT_LOGTOSTDERR},
        {"evict-by-copilot-agent", optional_argument, NULL, OPT_LOGTOSTDERR},
        {"runtime-hooks-host-endpoint", required_argument, NULL, OPT_IGNORED},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *node = getenv("NODE_NAME"), *kubeconfig = NULL, *ready = NULL;
    const char *manager = "https://koord-manager.koordinator-system.svc:443", *manager_ca = NULL;
    const char *listen = "127.0.0.1:9316";
    struct agent_opts ao = {0};
    struct cg_roots roots;
    enum cg_version version = CG_VERSION_UNKNOWN;
    enum cg_driver driver = CG_DRIVER_UNKNOWN;
    struct strbuf host = STRBUF_INIT;
    char addr[64];
    int li = 0;
    struct kube_client *client = NULL, *mclient = NULL;
    struct agent *a = NULL;
    uint32_t interval = 1, gates = QOS_RUNNER_F_DEFAULT, qos_s[4] = {1, 1, 1, 1};
    uint16_t port = 0;
    sigset_t sigs;
    int c, sig, r, rc = 1;

    cg_roots_default(&roots);
    /* _only: Go's flag package, which upstream's manifests are written for, takes "-addr=:9316"
     * as readily as "--addr". */
    while ((c = getopt_long_only(argc, argv, "h", longopts, &li)) != -1) {
        switch (c) {
        case OPT_NODE:
            node = optarg;
            break;
        case OPT_KUBECONFIG:
            kubeconfig = optarg;
            break;
        case OPT_MANAGER:
            manager = optarg;
            break;
        case OPT_MANAGER_CA:
            manager_ca = optarg;
            break;
        case OPT_MODE:
            if (strcmp(optarg, "manager") && strcmp(optarg, "crd"))
                goto bad;
            ao.crd_mode = !strcmp(optarg, "crd");
            break;
        case OPT_INTERVAL:
            if (parse_u32(optarg, &interval) < 0 || interval < 1 || interval > 3600)
                goto bad;
            break;
        case OPT_RECONCILE_INTERVAL:
        case OPT_SUPPRESS_INTERVAL:
        case OPT_MEMEVICT_INTERVAL:
        case OPT_CPUEVICT_INTERVAL: {
            uint32_t *v = &qos_s[c - OPT_RECONCILE_INTERVAL];

            if (parse_u32(optarg, v) < 0 || *v < 1 || *v > 3600)
                goto bad;
            break;
        }
        case OPT_CGROUP_ROOT:
            roots.cgroup_root = optarg;
            break;
        case OPT_PROC_ROOT:
            roots.proc_root = optarg;
            break;
        case OPT_SYS_ROOT:
            roots.sys_root = optarg;
            break;
        case OPT_RESCTRL_ROOT:
            roots.resctrl_root = optarg;
            break;
        case OPT_CG_VERSION:
            if (strcmp(optarg, "auto") && cg_version_parse(optarg, &version) < 0)
                goto bad;
            break;
        case OPT_CG_DRIVER:
            if (strcmp(optarg, "auto") && cg_driver_parse(optarg, &driver) < 0)
                goto bad;
            break;
        case OPT_QOS:
            if (strcmp(optarg, "true") && strcmp(optarg, "false"))
                goto bad;
            ao.qos_off = !strcmp(optarg, "false");
            break;
        case OPT_GATES:
            if (parse_gates(optarg, &gates) < 0)
                goto bad;
            break;
        case OPT_DRY_RUN:
            ao.dry_run = true;
            break;
        case OPT_CPU_POLICY:
            if (strcmp(optarg, "none") && strcmp(optarg, "static"))
                goto bad;
            ao.kubelet_cpu_policy_static = !strcmp(optarg, "static");
            break;
        case OPT_LISTEN:
            listen = optarg;
            break;
        case OPT_READY:
            ready = optarg;
            break;
        case OPT_LOG_LEVEL:
            if (log_set_level(optarg) < 0)
                goto bad;
            break;
        case OPT_ADDR:
            if (strlen(optarg) >= sizeof(addr) - sizeof("0.0.0.0"))
                goto bad;
            (void)snprintf(addr, sizeof(addr), "%s%s", optarg[0] == ':' ? "0.0.0.0" : "", optarg);
            listen = addr;
            break;
        case OPT_CGROUP_ROOT_DIR:
            roots.cgroup_root = optarg;
            break;
        case OPT_KLOG_V:
            if (cmd_klog_v("koord agent", optarg) < 0)
                return 2;
            break;
        case OPT_LOGTOSTDERR:
            if (cmd_ignored_bool("koord agent", longopts[li].name, optarg) < 0)
                return 2;
            break;
        case OPT_IGNORED:
            break;
        case 'h':
            (void)fputs(usage, stdout);
            return 0;
        default:
            (void)fputs(usage, stderr);
            return 2;
        }
    }
    if (!node || !*node) {
        (void)fputs("koord agent: --node-name (or $NODE_NAME) is required\n", stderr);
        return 2;
    }
    if (*listen && cmd_parse_listen("koord agent", listen, &host, &port) < 0)
        return 2;
    cmd_block_stop_signals(&sigs, 0);
    /* One malloc arena, before any thread starts: glibc gives each allocating thread its own
     * (64 MiB reserved, several MB touched each), which made most of the agent's RSS; its
     * threads allocate little and rarely together (bench/agent, docs/benchmarks.md). */
    (void)mallopt(M_ARENA_MAX, 1);
    raise_open_files();

    r = version == CG_VERSION_UNKNOWN ? cg_detect_version(roots.cgroup_root, &version) : 0;
    if (r == 0)
        r = cg_layout_init(&ao.layout, &roots, version, driver);
    if (r == -ENOENT && driver == CG_DRIVER_UNKNOWN) {
        /* No kubepods hierarchy yet (no kubelet, or no pod started): kubelet's default. */
        log_warn("agent", "no kubepods cgroup under \"%s\"; assuming the cgroupfs driver",
                 roots.cgroup_root);
        r = cg_layout_init(&ao.layout, &roots, version, CG_DRIVER_CGROUPFS);
    }
    if (r < 0) {
        log_error("agent", "cannot tell the cgroup %s under \"%s\": %s (set --cgroup-%s)",
                  version == CG_VERSION_UNKNOWN ? "version" : "driver", roots.cgroup_root,
                  err_str(r), version == CG_VERSION_UNKNOWN ? "version" : "driver");
        goto out;
    }
    if (cmd_kube_client(kubeconfig, "agent", NULL, &client) < 0)
        goto out;
    /* The manager: the same credentials, its own address and CA; a report must not outlive a
     * failover by much. */
    if (!ao.crd_mode &&
        cmd_kube_client(kubeconfig, "agent",
                        &(struct cmd_kube_override){manager, manager_ca, 10000}, &mclient) < 0)
        goto out;
    ao.node = node;
    ao.client = client;
    ao.metrics_client = ao.crd_mode ? client : mclient;
    ao.collect_interval_ms = (long)interval * 1000;
    ao.reconcile_interval_ms = (long)qos_s[0] * 1000;
    ao.cpu_suppress_interval_ms = (long)qos_s[1] * 1000;
    ao.memory_evict_interval_ms = (long)qos_s[2] * 1000;
    ao.cpu_evict_interval_ms = (long)qos_s[3] * 1000;
    ao.qos_features_set = true;
    ao.qos_features = gates;
    ao.host = *listen ? host.buf : NULL;
    ao.port = port;
    if ((r = agent_start(&ao, &a)) < 0) {
        log_error("agent", "cannot start: %s", err_str(r));
        goto out;
    }
    if (cmd_write_ready("agent", ready, host.buf, agent_port(a)) < 0)
        goto out;
    (void)sigwait(&sigs, &sig);
    log_info("agent", "stopping on signal %d", sig);
    rc = 0;
out:
    agent_stop(a);
    kube_client_free(mclient);
    kube_client_free(client);
    strbuf_release(&host);
    return rc;
bad:
    (void)fprintf(stderr, "koord agent: bad value \"%s\" for --%s\n", optarg,
                  longopts[c - OPT_NODE].name);
    return 2;
}
