/* koord scheduler: flags and wiring of the scheduler (src/sched/scheduler.h). */
#include "sched/scheduler.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/field.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/leader.h"
#include "sched/config/config.h"
#include "sched/reservation/controller.h"

static const char usage[] =
    "usage: koord scheduler [--kubeconfig FILE] [--config FILE] [--leader-elect=true|false]\n"
    "                       [--listen HOST:PORT] [flags]\n"
    "\n"
    "koord-scheduler: schedules pending pods whose spec.schedulerName names one of its profiles,\n"
    "with kube-scheduler's framework, queue (scheduling gates included) and default plugins,\n"
    "counting batch resources (kubernetes.io/batch-cpu, batch-memory) like any other resource,\n"
    "and Koordinator's LoadAwareScheduling (nodes' reported usage, from NodeMetrics).\n"
    "\n"
    "  --kubeconfig FILE        API server to talk to (default $KUBECONFIG, in-cluster,\n"
    "                           ~/.kube/config)\n"
    "  --config FILE            a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1,\n"
    "                           YAML or JSON); without it one profile named koord-scheduler\n"
    "                           with the default plugins (docs/scheduler.md)\n"
    "  --scheduler-name NAME    with no --config: the profile's name (default koord-scheduler);\n"
    "                           repeat it for more profiles with the default plugins\n"
    "  --leader-elect=BOOL      elect a leader on a Lease before scheduling (default true, or\n"
    "                           the configuration's leaderElection.leaderElect)\n"
    "  --leader-elect-resource-namespace NS, --leader-elect-resource-name NAME\n"
    "                           the Lease (default koordinator-system/koord-scheduler, or the\n"
    "                           configuration's)\n"
    "  --listen HOST:PORT       plain HTTP for /metrics, /healthz, /readyz (default\n"
    "                           127.0.0.1:10259; port 0 = any; \"\" = none)\n"
    "  --ready-file FILE        written with the bound HOST:PORT once listening\n"
    "  --log-level LEVEL        error, warn, info (default) or debug\n"
    "\n"
    "Upstream koord-scheduler's flags, for its manifests:\n"
    "  --port PORT              --listen 0.0.0.0:PORT\n"
    "  --v N                    klog verbosity: 0-4 info, 5-10 debug\n"
    "  --feature-gates LIST     Name=true|false,...: koord scheduler has none of upstream's\n"
    "                           gates; each is logged and ignored\n"
    "  --logtostderr, --authentication-skip-lookup\n"
    "                           accepted, no effect (logs always go to stderr; no lookup)\n"
    "\n"
    "While it schedules (the leader) it also runs the Reservation controller: owners, expiry\n"
    "and garbage collection of Reservations, configured by the Reservation plugin's args\n"
    "(gcDurationSeconds, gcIntervalSeconds, disableGarbageCollection, controllerWorkers).\n"
    "\n"
    "Stops cleanly on SIGINT or SIGTERM (releasing the Lease); exits 1 when it loses the Lease.\n";

enum {
    OPT_KUBECONFIG = 256,
    OPT_CONFIG,
    OPT_NAME,
    OPT_LEADER,
    OPT_LEASE_NS,
    OPT_LEASE_NAME,
    OPT_LISTEN,
    OPT_READY,
    OPT_LOG_LEVEL,
    OPT_PORT,
    OPT_KLOG_V,
    OPT_GATES,
    OPT_IGNORED,
};

/* --feature-gates: well-formed (Name=true|false,...), each gate logged as ignored. */
static int ignore_gates(const char *list)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        size_t vlen = eq ? (size_t)(p + len - eq - 1) : 0;

        if (!eq || eq == p ||
            !((vlen == 4 && !strncmp(eq + 1, "true", 4)) ||
              (vlen == 5 && !strncmp(eq + 1, "false", 5))))
            return -EINVAL;
        log_warn("sched", "feature gate %.*s: koord scheduler has no such gate, ignored",
                 (int)(eq - p), p);
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

struct run {
    struct sched_scheduler *s;
    struct sched_resv_controller *resv; /* NULL when not wanted */
    pthread_mutex_t lock;               /* the leader's thread starts, the main thread stops */
    pthread_t resv_thread;
    bool resv_thread_started;
    bool lost;
};

/* The controller waits for its caches (up to a minute without the Reservation CRD): started
 * on a thread of its own, so neither the leader's renewals nor the start of scheduling wait. */
static void *start_resv(void *arg)
{
    struct run *run = arg;
    int r = sched_resv_controller_start(run->resv);

    if (r < 0 && r != -ECANCELED && r != -EBUSY)
        log_error("sched", "reservation controller not started: %s", err_str(r));
    return NULL;
}

static void start_controllers(struct run *run)
{
    int r;

    if (!run->resv)
        return;
    (void)pthread_mutex_lock(&run->lock);
    if (!run->resv_thread_started) {
        if ((r = -pthread_create(&run->resv_thread, NULL, start_resv, run)) < 0)
            log_error("sched", "cannot start the reservation controller: %s", err_str(r));
        else
            run->resv_thread_started = true;
    }
    (void)pthread_mutex_unlock(&run->lock);
}

/* Stop cancels a start still waiting for caches; a start that had not begun yet runs to its
 * end and is stopped by the second call. */
static void stop_controllers(struct run *run)
{
    if (!run->resv)
        return;
    sched_resv_controller_stop(run->resv);
    (void)pthread_mutex_lock(&run->lock);
    if (run->resv_thread_started) {
        (void)pthread_join(run->resv_thread, NULL);
        run->resv_thread_started = false;
    }
    (void)pthread_mutex_unlock(&run->lock);
    sched_resv_controller_stop(run->resv);
}

static void on_started_leading(void *userdata)
{
    struct run *run = userdata;
    int r;

    log_info("sched", "became the leader, scheduling");
    if ((r = sched_scheduler_run(run->s)) < 0 && r != -EBUSY) {
        log_error("sched", "cannot start scheduling: %s", err_str(r));
        (void)kill(getpid(), SIGTERM);
        return;
    }
    start_controllers(run);
}

static void on_stopped_leading(void *userdata)
{
    struct run *run = userdata;

    run->lost = true;
    (void)kill(getpid(), SIGUSR1);
}

static struct sched_config *load_config(const char *path, char **names, size_t nnames)
{
    struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
    struct sched_config *cfg = NULL;
    int r;

    if (!path) {
        const char *def[] = {"koord-scheduler", NULL};
        names[nnames] = NULL;
        if (!nnames)
            return sched_config_default(def[0], NULL);
        return sched_config_default(names[0], (const char *const *)names + 1);
    }
    if ((r = codec_read_file(path, 1u << 20, &text)) < 0) {
        log_error("sched", "reading --config %s: %s", path, err_str(r));
        goto out;
    }
    if (sched_config_parse(text.buf, text.len, &cfg, &err) < 0)
        (void)fprintf(stderr, "koord scheduler: %s: invalid configuration:\n%s", path,
                      err.buf ? err.buf : "");
out:
    strbuf_release(&text);
    strbuf_release(&err);
    return cfg;
}

int cmd_scheduler(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"scheduler-name", required_argument, NULL, OPT_NAME},
        {"leader-elect", optional_argument, NULL, OPT_LEADER},
        {"leader-elect-resource-namespace", required_argument, NULL, OPT_LEASE_NS},
        {"leader-elect-resource-name", required_argument, NULL, OPT_LEASE_NAME},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"ready-file", required_argument, NULL, OPT_READY},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"port", required_argument, NULL, OPT_PORT},
        {"v", required_argument, NULL, OPT_KLOG_V},
        {"feature-gates", required_argument, NULL, OPT_GATES},
        {"logtostderr", optional_argument, NULL, OPT_IGNORED},
        {"authentication-skip-lookup", optional_argument, NULL, OPT_IGNORED},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *kubeconfig = NULL, *config = NULL, *listen = "127.0.0.1:10259", *ready = NULL;
    const char *lease_ns = NULL, *lease_name = NULL;
    char *names[16];
    size_t nnames = 0;
    int leader = -1; /* -1: from the configuration */
    struct sched_config *cfg = NULL;
    struct kube_client *client = NULL;
    struct sched_scheduler *s = NULL;
    struct kube_leader *le = NULL;
    struct http_server *http = NULL;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf host = STRBUF_INIT, resv_err = STRBUF_INIT;
    char port_listen[sizeof("0.0.0.0:65535")];
    uint32_t pv;
    int li = 0;
    struct run run = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct sched_resv_controller_opts resv_opts = {0};
    bool resv_enabled = false;
    uint16_t port = 0;
    sigset_t sigs;
    int c, sig, r, rc = 1;

    while ((c = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
        switch (c) {
        case OPT_KUBECONFIG:
            kubeconfig = optarg;
            break;
        case OPT_CONFIG:
            config = optarg;
            break;
        case OPT_NAME:
            if (nnames == sizeof(names) / sizeof(names[0]) - 1) {
                (void)fprintf(stderr, "koord scheduler: at most 15 --scheduler-name\n");
                return 2;
            }
            names[nnames++] = optarg;
            break;
        case OPT_LEADER:
            if (!optarg || !strcmp(optarg, "true"))
                leader = 1;
            else if (!strcmp(optarg, "false"))
                leader = 0;
            else
                goto bad;
            break;
        case OPT_LEASE_NS:
            lease_ns = optarg;
            break;
        case OPT_LEASE_NAME:
            lease_name = optarg;
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
        case OPT_PORT:
            if (parse_u32(optarg, &pv) < 0 || pv > 65535)
                goto bad;
            (void)snprintf(port_listen, sizeof(port_listen), "0.0.0.0:%u", (unsigned)pv);
            listen = port_listen;
            break;
        case OPT_KLOG_V:
            if (cmd_klog_v("koord scheduler", optarg) < 0)
                return 2;
            break;
        case OPT_GATES:
            if (ignore_gates(optarg) < 0)
                goto bad;
            break;
        case OPT_IGNORED:
            if (cmd_ignored_bool("koord scheduler", longopts[li].name, optarg) < 0)
                return 2;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            return 0;
        default:
            (void)fputs(usage, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        (void)fprintf(stderr, "koord scheduler: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    if (config && nnames) {
        (void)fprintf(stderr, "koord scheduler: --scheduler-name and --config exclude each "
                              "other (name the profiles in the file)\n");
        return 2;
    }
    if (listen && *listen && cmd_parse_listen("scheduler", listen, &host, &port) < 0)
        return 2;
    if (!(cfg = load_config(config, names, nnames)))
        goto out;

    cmd_block_stop_signals(&sigs, SIGUSR1);
    if (cmd_kube_client(kubeconfig, "sched", NULL, &client) < 0)
        goto out;
    kube_client_set_rate_limit(client, cfg->qps, (unsigned)cfg->burst);
    r = sched_scheduler_new(&(struct sched_scheduler_opts){.client = client, .config = cfg}, &s,
                            &errs);
    if (r < 0) {
        struct strbuf m = STRBUF_INIT;
        for (size_t i = 0; i < errs.n; i++) {
            field_error_format(&errs.v[i], &m);
            strbuf_addch(&m, '\n');
        }
        (void)fprintf(stderr, "koord scheduler: invalid plugin arguments:\n%s", m.buf ? m.buf : "");
        strbuf_release(&m);
        goto out;
    }
    /* The plugins' args are valid by now (the Reservation plugin checked its own). */
    if (sched_resv_controller_config(cfg, &resv_enabled, &resv_opts, &resv_err) < 0) {
        (void)fprintf(stderr, "koord scheduler: invalid Reservation plugin arguments:\n%s",
                      resv_err.buf);
        goto out;
    }
    if (listen && *listen) {
        r = http_server_start(
            &(struct http_server_opts){.host = host.buf, .port = port, .max_connections = 64},
            sched_scheduler_http, s, &http);
        if (r < 0) {
            log_error("sched", "cannot listen on %s: %s", listen, err_str(r));
            goto out;
        }
        if (cmd_write_ready("sched", ready, host.buf, http_server_port(http)) < 0)
            goto out;
    }
    if ((r = sched_scheduler_start_informers(s)) < 0) {
        log_error("sched", "cannot start the informers: %s", err_str(r));
        goto out;
    }
    for (size_t i = 0; i < cfg->nprofiles; i++)
        log_info("sched", "profile \"%s\" ready", cfg->profiles[i].scheduler_name);
    run.s = s;
    if (resv_enabled)
        (void)sched_resv_controller_new(client, &resv_opts, &run.resv);
    if (leader < 0)
        leader = cfg->leader_elect;
    if (leader) {
        r = kube_leader_new(client,
                            &(struct kube_leader_opts){
                                .namespace = lease_ns ? lease_ns : cfg->lease_namespace,
                                .name = lease_name ? lease_name : cfg->lease_name,
                                .lease_ms = cfg->lease_ms,
                                .renew_deadline_ms = cfg->renew_ms,
                                .retry_ms = cfg->retry_ms,
                                .on_started_leading = on_started_leading,
                                .on_stopped_leading = on_stopped_leading,
                                .userdata = &run,
                            },
                            &le);
        if (r < 0 || (r = kube_leader_start(le)) < 0) {
            log_error("sched", "cannot start leader election: %s", err_str(r));
            goto out;
        }
        log_info("sched", "waiting for the Lease %s/%s", lease_ns ? lease_ns : cfg->lease_namespace,
                 lease_name ? lease_name : cfg->lease_name);
    } else if ((r = sched_scheduler_run(s)) < 0) {
        log_error("sched", "cannot start scheduling: %s", err_str(r));
        goto out;
    } else {
        start_controllers(&run);
    }
    (void)sigwait(&sigs, &sig);
    rc = 0;
    if (run.lost) {
        log_error("sched", "lost the Lease, exiting");
        rc = 1;
    } else {
        log_info("sched", "stopping");
    }
    /* Scheduling stops before the Lease is released: no binding after another took over. */
    stop_controllers(&run);
    sched_scheduler_stop(s);
    kube_leader_free(le);
    le = NULL;
out:
    kube_leader_free(le);
    stop_controllers(&run);
    sched_resv_controller_free(run.resv);
    http_server_stop(http);
    sched_scheduler_free(s);
    kube_client_free(client);
    sched_config_free(cfg);
    field_errors_release(&errs);
    strbuf_release(&host);
    strbuf_release(&resv_err);
    return rc;
bad:
    (void)fprintf(stderr, "koord scheduler: bad value \"%s\" for --%s\n", optarg ? optarg : "",
                  longopts[c - OPT_KUBECONFIG].name);
    return 2;
}
