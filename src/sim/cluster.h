/*
 * The control plane a `koord sim` run drives (issue 19 §1): `koord apiserver`, `koord manager`
 * and `koord scheduler` started the way `make up` starts them (scripts/up.sh), as child
 * processes of the same binary, in a state directory of their own; or a running cluster named
 * by a kubeconfig.
 *
 * Started: the API server on 127.0.0.1:0 (its PKI, an admin kubeconfig), the CRDs (built from
 * the type descriptions, as `koord crds` prints them), upstream's priority classes, the
 * slo-controller-config of the run (colocation on or off, and the intervals a compressed trace
 * needs: see sim_cluster_opts), the manager (NodeMetric APIService and admission webhooks
 * registered at the ports it got), the example ClusterColocationProfile (pods of namespaces
 * labelled koordinator.sh/enable-colocation=true become batch pods), and the scheduler under
 * both scheduler names. Each child runs in a session of its own, so a Ctrl-C at the terminal
 * reaches `koord sim` only, which stops them in order (scheduler, manager, API server) with
 * SIGTERM, and SIGKILL after a grace period. Logs go to <state>/<component>.log.
 *
 * Not thread-safe: one thread starts and stops a cluster.
 */
#ifndef KOORD_SIM_CLUSTER_H
#define KOORD_SIM_CLUSTER_H

#include <stdbool.h>
#include <sys/types.h>

struct kube_client;

struct sim_cluster_opts {
    const char *exe;       /* the koord binary ("/proc/self/exe") */
    const char *state_dir; /* created if missing; must be empty of a previous run's state */
    bool colocation;       /* off: colocation-config enabled, batch thresholds 0 (see .c) */
    /* slo-controller-config for a compressed trace (docs/sim.md): */
    unsigned report_interval_s;                            /* metricReportIntervalSeconds */
    unsigned aggregate_s;                                  /* metricAggregateDurationSeconds */
    unsigned update_threshold_s;                           /* updateTimeThresholdSeconds */
    double diff_threshold;                                 /* resourceDiffThreshold */
    unsigned suppress_percent;                             /* cpuSuppressThresholdPercent */
    unsigned memory_evict_percent;                         /* memoryEvictThresholdPercent */
    unsigned be_satisfaction_lower, be_satisfaction_upper; /* cpuEvictBESatisfaction*Percent */
};

struct sim_cluster {
    char *state_dir;
    char *kubeconfig;  /* admin kubeconfig of the API server */
    char *ca_dir;      /* the API server's PKI: ca.crt/ca.key sign node certificates */
    char *manager_url; /* https://127.0.0.1:PORT of the NodeMetric API */
    char *manager_ca;  /* the CA of its serving certificate */
    pid_t apiserver, manager, scheduler;
    struct kube_client *admin;
};

/*
 * Starts everything above and waits (30 s at most per step) until the NodeMetric APIService
 * is Available and the webhooks are registered. 0, or a negative errno with why (a
 * message naming the step and the log to read) in err; what was started is stopped again.
 */
struct strbuf;
int sim_cluster_start(const struct sim_cluster_opts *o, struct sim_cluster *ret,
                      struct strbuf *err);

/* Stops the children (scheduler, manager, API server; SIGTERM, SIGKILL after 10 s), frees the
 * client and the strings. Safe on a zeroed or half-started cluster. */
void sim_cluster_stop(struct sim_cluster *c);

/* The slo-controller-config ConfigMap of o (a new tree). */
struct cJSON;
struct cJSON *sim_cluster_slo_config(const struct sim_cluster_opts *o);

/*
 * The NodeMetric report interval (seconds) a cluster's slo-controller-config gives its nodes
 * (configmap NULL: the cluster has none), computed by the manager's own code (slo.h: the
 * cluster strategy's metricCollectPolicy; upstream's 60 s when colocation is disabled or the
 * ConfigMap is absent). With --kubeconfig the sim warns when it differs from its own
 * --report-interval (docs/sim.md). 0, or -ENOMEM.
 */
int sim_cluster_report_interval(const struct cJSON *configmap, double *ret);

#endif
