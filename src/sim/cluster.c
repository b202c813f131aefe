/*
 * The control plane of a replay (cluster.h): scripts/up.sh in C, with every port picked by the
 * kernel (port 0 and ready files), so runs never collide with `make up` or with each other.
 */
#include "sim/cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/crd.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "kube/client.h"
#include "kube/config.h"
#include "slo/slo.h"

#define COMP        "sim"
#define STEP_MS     30000
#define STOP_WAIT_S 10

static const struct kube_resource res_crds = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
static const struct kube_resource res_priorityclasses = {"scheduling.k8s.io", "v1",
                                                         "priorityclasses", "PriorityClass", false};
static const struct kube_resource res_namespaces = {"", "v1", "namespaces", "Namespace", false};
static const struct kube_resource res_apiservices = {"apiregistration.k8s.io", "v1", "apiservices",
                                                     "APIService", false};
static const struct kube_resource res_mutating = {"admissionregistration.k8s.io", "v1",
                                                  "mutatingwebhookconfigurations",
                                                  "MutatingWebhookConfiguration", false};
static const struct kube_resource res_profiles = {"config.koordinator.sh", "v1alpha1",
                                                  "clustercolocationprofiles",
                                                  "ClusterColocationProfile", false};

static int64_t mono_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    (void)nanosleep(&ts, NULL);
}

static char *path_of(const char *dir, const char *name)
{
    struct strbuf sb = STRBUF_INIT;

    strbuf_addf(&sb, "%s/%s", dir, name);
    return strbuf_detach(&sb, NULL);
}

/* Starts exe with argv (NULL-terminated, argv[0] included) in a session of its own, output
 * appended to log. The child's pid, or a negative errno. */
static pid_t spawn(const char *exe, const char *const *argv, const char *log)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pid_t pid;

    if (fd < 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        int r = -errno;
        (void)close(fd);
        return r;
    }
    if (pid == 0) {
        sigset_t none;
        (void)sigemptyset(&none);
        (void)sigprocmask(SIG_SETMASK, &none, NULL);
        (void)setsid();
        /* a koord sim killed outright takes its control plane along */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    (void)close(fd);
    return pid;
}

/* Whether pid still runs (reaping it when it ended). */
static bool alive(pid_t pid)
{
    return pid > 0 && waitpid(pid, NULL, WNOHANG) == 0;
}

/* Waits until path holds "HOST:PORT" (into port) while pid lives. */
static int wait_ready(const char *path, pid_t pid, unsigned *port)
{
    int64_t deadline = mono_ms() + STEP_MS;

    while (mono_ms() < deadline) {
        struct strbuf sb = STRBUF_INIT;
        if (codec_read_file(path, 256, &sb) == 0 && sb.len) {
            const char *colon = strrchr(sb.buf, ':');
            uint32_t p;
            int ok = colon && parse_u32(colon + 1, &p) == 0;
            strbuf_release(&sb);
            if (ok) {
                *port = p;
                return 0;
            }
        }
        strbuf_release(&sb);
        if (!alive(pid))
            return -ECHILD;
        nap_ms(50);
    }
    return -ETIMEDOUT;
}

static void stop_child(pid_t *pid)
{
    int64_t deadline;

    if (*pid <= 0)
        return;
    (void)kill(*pid, SIGTERM);
    deadline = mono_ms() + (int64_t)STOP_WAIT_S * 1000;
    while (waitpid(*pid, NULL, WNOHANG) == 0) {
        if (mono_ms() > deadline) {
            (void)kill(*pid, SIGKILL);
            (void)waitpid(*pid, NULL, 0);
            break;
        }
        nap_ms(20);
    }
    *pid = 0;
}

static cJSON *parse(const char *json)
{
    cJSON *o = cJSON_Parse(json);

    CHECK(o);
    return o;
}

cJSON *sim_cluster_slo_config(const struct sim_cluster_opts *o)
{
    struct strbuf colo = STRBUF_INIT, thr = STRBUF_INIT;
    cJSON *cm, *data;

    /* Off is colocation enabled with no batch capacity (thresholds 0): the metric collect
     * policy, which a disabled colocation-config resets to upstream's 60 s defaults, and with
     * it the scheduler's LoadAware view of recently placed pods, stays the same in both runs
     * (docs/sim.md) */
    strbuf_addf(&colo,
                "{\"enable\": true, \"metricAggregateDurationSeconds\": %u, "
                "\"metricReportIntervalSeconds\": %u, \"updateTimeThresholdSeconds\": %u, "
                "\"resourceDiffThreshold\": %g, \"degradeTimeMinutes\": 15%s}",
                o->aggregate_s, o->report_interval_s, o->update_threshold_s, o->diff_threshold,
                o->colocation ? ""
                              : ", \"batchCPUThresholdPercent\": 0, "
                                "\"batchMemoryThresholdPercent\": 0");
    strbuf_addf(&thr,
                "{\"clusterStrategy\": {\"enable\": true, \"cpuSuppressThresholdPercent\": %u, "
                "\"cpuSuppressPolicy\": \"cpuset\", \"memoryEvictThresholdPercent\": %u, "
                "\"cpuEvictBESatisfactionLowerPercent\": %u, "
                "\"cpuEvictBESatisfactionUpperPercent\": %u, \"cpuEvictTimeWindowSeconds\": %u}}",
                o->suppress_percent, o->memory_evict_percent, o->be_satisfaction_lower,
                o->be_satisfaction_upper, o->report_interval_s);
    cm = parse("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": "
               "\"slo-controller-config\", \"namespace\": \"koordinator-system\", \"labels\": "
               "{\"koordinator.sh/configmap-type\": \"slo-controller-config\"}}}");
    data = cJSON_AddObjectToObject(cm, "data");
    CHECK(data);
    CHECK(cJSON_AddStringToObject(data, "colocation-config", colo.buf));
    CHECK(cJSON_AddStringToObject(data, "resource-threshold-config", thr.buf));
    strbuf_release(&colo);
    strbuf_release(&thr);
    return cm;
}

int sim_cluster_report_interval(const cJSON *configmap, double *ret)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    cJSON *node = NULL, *spec = NULL;
    const cJSON *v;
    int r;

    *ret = 0;
    if (!cfg)
        return -ENOMEM;
    r = configmap ? slo_config_update(cfg, cJSON_GetObjectItem(configmap, "data"), &ev, NULL)
                  : slo_config_absent(cfg, NULL);
    /* the cluster strategy: a node that no nodeConfigs entry selects */
    if (r == 0)
        r = (node = cJSON_Parse("{\"metadata\": {\"name\": \"sim\"}}")) ? 0 : -ENOMEM;
    if (r == 0)
        r = slo_render_nodemetric_spec(cfg, node, &spec);
    if (r == 0) {
        v = cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "metricCollectPolicy"),
                                "reportIntervalSeconds");
        *ret = cJSON_IsNumber(v) ? v->valuedouble : 0;
    }
    cJSON_Delete(spec);
    cJSON_Delete(node);
    slo_events_release(&ev);
    slo_config_free(cfg);
    return r;
}

static int create(struct kube_client *c, const struct kube_resource *res, const char *ns,
                  cJSON *obj, struct strbuf *err, const char *what)
{
    struct kube_status st = {0};
    int r = kube_create(c, res, ns, obj, NULL, &st);

    cJSON_Delete(obj);
    if (r == -EEXIST)
        r = 0;
    if (r < 0)
        strbuf_addf(err, "creating %s failed: %s", what, st.message[0] ? st.message : err_str(r));
    return r;
}

static int apply_basics(struct kube_client *c, const struct sim_cluster_opts *o, struct strbuf *err)
{
    static const char *const classes[][2] = {{"koord-prod", "9000"},
                                             {"koord-mid", "7000"},
                                             {"koord-batch", "5000"},
                                             {"koord-free", "3000"}};
    int r = 0;

    for (const struct api_kind *const *k = api_kinds(); *k && r == 0; k++) {
        cJSON *crd = NULL;
        if (!(*k)->crd)
            continue;
        if ((r = api_crd_build(*k, &crd)) < 0) {
            strbuf_addf(err, "building the CRD of %s failed: %s", (*k)->kind, err_str(r));
            break;
        }
        r = create(c, &res_crds, NULL, crd, err, "a CRD");
    }
    for (size_t i = 0; i < ARRAY_SIZE(classes) && r == 0; i++) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_addf(&sb,
                    "{\"apiVersion\": \"scheduling.k8s.io/v1\", \"kind\": \"PriorityClass\", "
                    "\"metadata\": {\"name\": \"%s\"}, \"value\": %s}",
                    classes[i][0], classes[i][1]);
        r = create(c, &res_priorityclasses, NULL, parse(sb.buf), err, "a PriorityClass");
        strbuf_release(&sb);
    }
    if (r == 0)
        r = create(c, &res_namespaces, NULL,
                   parse("{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": "
                         "{\"name\": \"koordinator-system\"}}"),
                   err, "namespace koordinator-system");
    if (r == 0)
        r = create(c, &kube_res_configmaps, "koordinator-system", sim_cluster_slo_config(o), err,
                   "slo-controller-config");
    return r;
}

static bool apiservice_available(struct kube_client *c)
{
    cJSON *o = NULL, *cond;
    bool ok = false;

    if (kube_get(c, &res_apiservices, NULL, "v1alpha1.metrics.koordinator.sh", &o, NULL) < 0)
        return false;
    cJSON_ArrayForEach(cond, cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(cond, "type"));
        const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(cond, "status"));
        if (t && s && !strcmp(t, "Available") && !strcmp(s, "True"))
            ok = true;
    }
    cJSON_Delete(o);
    return ok;
}

static bool webhooks_registered(struct kube_client *c)
{
    cJSON *o = NULL, *hooks;
    const char *ca;
    bool ok;

    if (kube_get(c, &res_mutating, NULL, "koordinator-mutating-webhook-configuration", &o, NULL) <
        0)
        return false;
    hooks = cJSON_GetObjectItem(o, "webhooks");
    ca = cJSON_GetStringValue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(hooks, 0), "clientConfig"), "caBundle"));
    ok = ca && *ca;
    cJSON_Delete(o);
    return ok;
}

static int wait_until(bool (*pred)(struct kube_client *), struct kube_client *c, pid_t pid)
{
    int64_t deadline = mono_ms() + STEP_MS;

    while (mono_ms() < deadline) {
        if (pred(c))
            return 0;
        if (!alive(pid))
            return -ECHILD;
        nap_ms(100);
    }
    return -ETIMEDOUT;
}

static int start_child(const char *exe, const char *const *argv, const char *state,
                       const char *name, pid_t *pid, unsigned *port, struct strbuf *err)
{
    char *log = NULL, *ready = NULL;
    struct strbuf lf = STRBUF_INIT, rf = STRBUF_INIT;
    int r;

    strbuf_addf(&lf, "%s/%s.log", state, name);
    strbuf_addf(&rf, "%s/%s.ready", state, name);
    log = lf.buf;
    ready = rf.buf;
    (void)unlink(ready);
    r = *pid = spawn(exe, argv, log);
    if (r >= 0)
        r = wait_ready(ready, *pid, port);
    if (r < 0)
        strbuf_addf(err, "koord %s did not start (%s); see %s", name,
                    r == -ECHILD ? "it exited" : err_str(r), log);
    strbuf_release(&lf);
    strbuf_release(&rf);
    return r < 0 ? r : 0;
}

int sim_cluster_start(const struct sim_cluster_opts *o, struct sim_cluster *c, struct strbuf *err)
{
    struct strbuf s1 = STRBUF_INIT, s2 = STRBUF_INIT, s3 = STRBUF_INIT, s4 = STRBUF_INIT;
    struct strbuf s5 = STRBUF_INIT;
    struct kube_config *cfg = NULL;
    const char *exe = o->exe;
    unsigned port = 0, mport = 0, wport = 0;
    int r;

    *c = (struct sim_cluster){0};
    if (mkdir(o->state_dir, 0700) < 0 && errno != EEXIST) {
        r = -errno;
        strbuf_addf(err, "cannot create the state directory \"%s\": %s", o->state_dir, err_str(r));
        return r;
    }
    c->state_dir = xstrdup(o->state_dir);
    c->kubeconfig = path_of(o->state_dir, "kubeconfig");
    c->ca_dir = path_of(o->state_dir, "apiserver/pki");

    strbuf_addf(&s1, "%s/apiserver", o->state_dir);
    strbuf_addf(&s2, "%s/apiserver.ready", o->state_dir);
    {
        const char *argv[] = {exe,
                              "apiserver",
                              "--data-dir",
                              s1.buf,
                              "--listen",
                              "127.0.0.1:0",
                              "--ready-file",
                              s2.buf,
                              "--write-kubeconfig",
                              c->kubeconfig,
                              NULL};
        if ((r = start_child(exe, argv, o->state_dir, "apiserver", &c->apiserver, &port, err)) < 0)
            goto fail;
    }
    {
        struct strbuf why = STRBUF_INIT;
        const char *paths[] = {c->kubeconfig, NULL};
        if ((r = kube_config_from_kubeconfig(paths, NULL, &cfg, &why)) < 0) {
            strbuf_addf(err, "%s", why.buf);
            strbuf_release(&why);
            goto fail;
        }
        strbuf_release(&why);
        if ((r = kube_client_new(cfg, &c->admin)) < 0) {
            strbuf_addf(err, "cannot create the API client: %s", err_str(r));
            goto fail;
        }
    }
    if ((r = apply_basics(c->admin, o, err)) < 0)
        goto fail;

    strbuf_addf(&s3, "%s/manager", o->state_dir);
    strbuf_addf(&s4, "%s/manager.ready", o->state_dir);
    {
        const char *argv[] = {exe, "manager", "--kubeconfig", c->kubeconfig, "--listen",
                              "127.0.0.1:0", "--cert-dir", s3.buf, "--ready-file", s4.buf,
                              "--register-apiservice", "127.0.0.1:0", "--webhook-listen",
                              "127.0.0.1:0", "--register-webhooks", "127.0.0.1:0",
                              /* every simulated node reports from 127.0.0.1, on a
                               * connection of its own (its certificate) */
                              "--max-connections-per-address", "1048576", NULL};
        if ((r = start_child(exe, argv, o->state_dir, "manager", &c->manager, &mport, err)) < 0)
            goto fail;
    }
    (void)wport;
    strbuf_reset(&s5);
    strbuf_addf(&s5, "https://127.0.0.1:%u", mport);
    c->manager_url = strbuf_detach(&s5, NULL);
    c->manager_ca = path_of(o->state_dir, "manager/koord-manager-ca.crt");
    if ((r = wait_until(apiservice_available, c->admin, c->manager)) < 0) {
        strbuf_addf(err, "the NodeMetric APIService is not Available (%s); see %s/manager.log",
                    err_str(r), o->state_dir);
        goto fail;
    }
    if ((r = wait_until(webhooks_registered, c->admin, c->manager)) < 0) {
        strbuf_addf(err, "koord manager registered no webhooks (%s); see %s/manager.log",
                    err_str(r), o->state_dir);
        goto fail;
    }
    r = create(c->admin, &res_profiles, NULL,
               parse("{\"apiVersion\": \"config.koordinator.sh/v1alpha1\", \"kind\": "
                     "\"ClusterColocationProfile\", \"metadata\": {\"name\": \"sim-batch\"}, "
                     "\"spec\": {\"namespaceSelector\": {\"matchLabels\": "
                     "{\"koordinator.sh/enable-colocation\": \"true\"}}, \"selector\": "
                     "{\"matchLabels\": {\"koordinator.sh/enable-colocation\": \"true\"}}, "
                     "\"qosClass\": \"BE\", \"priorityClassName\": \"koord-batch\", "
                     "\"koordinatorPriority\": 1000, \"schedulerName\": \"koord-scheduler\", "
                     "\"patch\": {\"spec\": {\"terminationGracePeriodSeconds\": 30}}}}"),
               err, "the ClusterColocationProfile");
    if (r < 0)
        goto fail;

    strbuf_reset(&s1);
    strbuf_addf(&s1, "%s/scheduler.ready", o->state_dir);
    {
        const char *argv[] = {exe,
                              "scheduler",
                              "--kubeconfig",
                              c->kubeconfig,
                              "--scheduler-name",
                              "koord-scheduler",
                              "--scheduler-name",
                              "default-scheduler",
                              "--listen",
                              "127.0.0.1:0",
                              "--ready-file",
                              s1.buf,
                              NULL};
        if ((r = start_child(exe, argv, o->state_dir, "scheduler", &c->scheduler, &port, err)) < 0)
            goto fail;
    }
    r = 0;
    goto out;
fail:
    sim_cluster_stop(c);
out:
    strbuf_release(&s1);
    strbuf_release(&s2);
    strbuf_release(&s3);
    strbuf_release(&s4);
    strbuf_release(&s5);
    return r;
}

void sim_cluster_stop(struct sim_cluster *c)
{
    stop_child(&c->scheduler);
    stop_child(&c->manager);
    stop_child(&c->apiserver);
    kube_client_free(c->admin);
    free(c->state_dir);
    free(c->kubeconfig);
    free(c->ca_dir);
    free(c->manager_url);
    free(c->manager_ca);
    *c = (struct sim_cluster){0};
}
