/* koord manager: flags and wiring of the manager (src/manager/manager.h). */
#include "manager/manager.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiserver/pki.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"
#include "kube/client.h"
#include "kube/config.h"
#include "manager/recommendation/model.h"

static const char usage[] =
    "usage: koord manager [--kubeconfig FILE] [--listen HOST:PORT] [flags]\n"
    "\n"
    "Runs koord-manager: the NodeSLO, NodeResource, ElasticQuotaProfile and Recommendation\n"
    "controllers and the in-memory NodeMetric\n"
    "API (metrics.koordinator.sh/v1alpha1), on the leader of a Lease only.\n"
    "\n"
    "  --kubeconfig FILE                 API server to talk to (default $KUBECONFIG, in-cluster,\n"
    "                                    ~/.kube/config)\n"
    "  --listen HOST:PORT                HTTPS port for the NodeMetric API, /healthz, /readyz,\n"
    "                                    /metrics (default 0.0.0.0:9443; port 0 = any)\n"
    "  --ready-file FILE                 written with the bound HOST:PORT once listening\n"
    "  --cert-dir DIR                    serving certificate and its CA, generated on first\n"
    "                                    start (default .koord/manager)\n"
    "  --tls-cert-file, --tls-private-key-file FILE\n"
    "                                    serving certificate to use instead\n"
    "  --client-ca-file FILE             CA of client certificates (default: client-ca-file of\n"
    "                                    kube-system/extension-apiserver-authentication)\n"
    "  --requestheader-client-ca-file FILE\n"
    "                                    CA of the front proxy (default: from that ConfigMap)\n"
    "  --requestheader-allowed-names N,..\n"
    "                                    front-proxy certificate CNs (default: from that\n"
    "                                    ConfigMap; empty = any)\n"
    "  --authentication-token-webhook=false\n"
    "                                    do not check bearer tokens with TokenReview\n"
    "  --admin-group GROUP               who besides nodes may write NodeMetrics\n"
    "                                    (default system:masters)\n"
    "  --leader-election-namespace NS    Lease namespace (default koordinator-system)\n"
    "  --leader-election-id NAME         Lease name (default koordinator-manager)\n"
    "  --leader-election-lease-duration, --leader-election-renew-deadline,\n"
    "  --leader-election-retry-period S  seconds (default 15, 10, 2)\n"
    "  --slo-config-name NAME            the SLO ConfigMap (default slo-controller-config)\n"
    "  --config-namespace NS             its namespace (default koordinator-system)\n"
    "  --register-apiservice IP:PORT     point the NodeMetric APIService, Service and Endpoints\n"
    "                                    at this address while leading (standalone mode;\n"
    "                                    port 0: the port --listen got)\n"
    "  --webhook-listen HOST:PORT        HTTPS port of the admission webhooks, served on every\n"
    "                                    replica (default 0.0.0.0:9876; port 0 = any)\n"
    "  --webhook-ready-file FILE         written with the webhook HOST:PORT once listening\n"
    "  --webhook-cert-dir DIR            webhook serving certificate and its CA (the caBundle),\n"
    "                                    generated on first start (default: --cert-dir)\n"
    "  --disable-webhooks                serve no admission webhooks\n"
    "  --register-webhooks IP:PORT       create the webhook configurations, Service and\n"
    "                                    Endpoints pointing at this address (standalone mode;\n"
    "                                    port 0: the port --webhook-listen got)\n"
    "  --feature-gates GATES             e.g. ConfigMapValidatingWebhook=true (upstream's gates)\n"
    "  --node-strategy-name-need-check BOOL\n"
    "                                    the ConfigMap webhook requires node entry names\n"
    "                                    (default false)\n";
/* Two strings: C compilers need only support literals of 4095 characters. */
static const char usage_more[] =
    "  --degrade-minute-ms MS            length of a degradeTimeMinutes minute (tests only)\n"
    "  --recommendation-controller=false do not run the Recommendation controller\n"
    "  --recommendation-interval S       re-compute each Recommendation every S s (default 60)\n"
    "  --recommendation-checkpoint-interval S\n"
    "                                    write its checkpoint ConfigMap every S s (default 60)\n"
    "  --recommendation-half-life S      histogram decay half-life (default 86400; tests)\n"
    "  --recommendation-memory-interval S\n"
    "                                    one memory peak per S s (default 86400; tests)\n"
    "  --recommendation-min-samples N    CPU samples before a first recommendation\n"
    "                                    (default 10)\n"
    "  --log-level LEVEL                 error, warn, info (default) or debug\n"
    "  --max-connections N               open connections at most (default: what the open-file\n"
    "                                    limit allows, raised to its hard maximum at start)\n"
    "  --max-connections-per-address N   open connections from one address (default 1024)\n"
    "\n"
    "Stops cleanly on SIGINT or SIGTERM (releasing the Lease); exits 1 when it loses the Lease.\n";

static char *read_text(const char *path)
{
    struct strbuf sb = STRBUF_INIT;

    if (codec_read_file(path, 1u << 20, &sb) < 0) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb, NULL);
}

/* "a,b" (or a JSON array string from the ConfigMap) into a NULL-terminated list. */
static char **split_names(const char *s)
{
    size_t n = 0;
    char **v = xcalloc(strlen(s) + 2, sizeof(char *));
    const char *p = s;

    while (*p) {
        size_t len;
        while (*p == ',' || *p == ' ' || *p == '[' || *p == ']' || *p == '"')
            p++;
        len = strcspn(p, ",\"]");
        if (len)
            v[n++] = xstrndup(p, len);
        p += len;
    }
    return v;
}

static void free_names(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* What kube-apiserver publishes for extension servers (reference kubernetes-api.md 6.3). */
static void lookup_authentication(struct kube_client *c, char **client_ca, char **rh_ca,
                                  char ***allowed)
{
    cJSON *cm = NULL, *data;
    const char *v;

    if (kube_get(c, &kube_res_configmaps, "kube-system", "extension-apiserver-authentication", &cm,
                 NULL) < 0) {
        log_warn("manager", "no kube-system/extension-apiserver-authentication ConfigMap: "
                            "client certificates only with --client-ca-file, ignoring");
        return;
    }
    data = cJSON_GetObjectItem(cm, "data");
    if (!*client_ca && (v = cJSON_GetStringValue(cJSON_GetObjectItem(data, "client-ca-file"))))
        *client_ca = xstrdup(v);
    if (!*rh_ca &&
        (v = cJSON_GetStringValue(cJSON_GetObjectItem(data, "requestheader-client-ca-file"))))
        *rh_ca = xstrdup(v);
    if (!*allowed &&
        (v = cJSON_GetStringValue(cJSON_GetObjectItem(data, "requestheader-allowed-names"))))
        *allowed = split_names(v);
    cJSON_Delete(cm);
}

static void on_fatal(void *userdata, const char *why)
{
    (void)userdata;
    (void)why;
    (void)kill(getpid(), SIGUSR1); /* wakes the sigwait below */
}

static bool parse_seconds(const char *s, long *ret_ms)
{
    uint32_t v;

    if (parse_u32(s, &v) < 0 || v == 0 || v > 3600)
        return false;
    *ret_ms = (long)v * 1000;
    return true;
}

enum {
    OPT_KUBECONFIG = 256,
    OPT_LISTEN,
    OPT_READY,
    OPT_CERT_DIR,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_CLIENT_CA,
    OPT_RH_CA,
    OPT_RH_NAMES,
    OPT_TOKEN_WEBHOOK,
    OPT_ADMIN_GROUP,
    OPT_LE_NS,
    OPT_LE_ID,
    OPT_LE_LEASE,
    OPT_LE_RENEW,
    OPT_LE_RETRY,
    OPT_SLO_NAME,
    OPT_CONFIG_NS,
    OPT_REGISTER,
    OPT_DEGRADE_MS,
    OPT_LOG_LEVEL,
    OPT_REC,
    OPT_REC_INTERVAL,
    OPT_REC_CKPT,
    OPT_REC_HALF_LIFE,
    OPT_REC_MEM_INTERVAL,
    OPT_REC_MIN_SAMPLES,
    OPT_WH_LISTEN,
    OPT_WH_READY,
    OPT_WH_CERT_DIR,
    OPT_WH_DISABLE,
    OPT_WH_REGISTER,
    OPT_FEATURE_GATES,
    OPT_NAME_CHECK,
    OPT_MAX_CONNS,
    OPT_MAX_PER_ADDR,
};

int cmd_manager(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"ready-file", required_argument, NULL, OPT_READY},
        {"cert-dir", required_argument, NULL, OPT_CERT_DIR},
        {"tls-cert-file", required_argument, NULL, OPT_TLS_CERT},
        {"tls-private-key-file", required_argument, NULL, OPT_TLS_KEY},
        {"client-ca-file", required_argument, NULL, OPT_CLIENT_CA},
        {"requestheader-client-ca-file", required_argument, NULL, OPT_RH_CA},
        {"requestheader-allowed-names", required_argument, NULL, OPT_RH_NAMES},
        {"authentication-token-webhook", required_argument, NULL, OPT_TOKEN_WEBHOOK},
        {"admin-group", required_argument, NULL, OPT_ADMIN_GROUP},
        {"leader-election-namespace", required_argument, NULL, OPT_LE_NS},
        {"leader-election-id", required_argument, NULL, OPT_LE_ID},
        {"leader-election-lease-duration", required_argument, NULL, OPT_LE_LEASE},
        {"leader-election-renew-deadline", required_argument, NULL, OPT_LE_RENEW},
        {"leader-election-retry-period", required_argument, NULL, OPT_LE_RETRY},
        {"slo-config-name", required_argument, NULL, OPT_SLO_NAME},
        {"config-namespace", required_argument, NULL, OPT_CONFIG_NS},
        {"register-apiservice", required_argument, NULL, OPT_REGISTER},
        {"degrade-minute-ms", required_argument, NULL, OPT_DEGRADE_MS},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"recommendation-controller", required_argument, NULL, OPT_REC},
        {"recommendation-interval", required_argument, NULL, OPT_REC_INTERVAL},
        {"recommendation-checkpoint-interval", required_argument, NULL, OPT_REC_CKPT},
        {"recommendation-half-life", required_argument, NULL, OPT_REC_HALF_LIFE},
        {"recommendation-memory-interval", required_argument, NULL, OPT_REC_MEM_INTERVAL},
        {"recommendation-min-samples", required_argument, NULL, OPT_REC_MIN_SAMPLES},
        {"webhook-listen", required_argument, NULL, OPT_WH_LISTEN},
        {"webhook-ready-file", required_argument, NULL, OPT_WH_READY},
        {"webhook-cert-dir", required_argument, NULL, OPT_WH_CERT_DIR},
        {"disable-webhooks", no_argument, NULL, OPT_WH_DISABLE},
        {"register-webhooks", required_argument, NULL, OPT_WH_REGISTER},
        {"feature-gates", required_argument, NULL, OPT_FEATURE_GATES},
        {"node-strategy-name-need-check", required_argument, NULL, OPT_NAME_CHECK},
        {"max-connections", required_argument, NULL, OPT_MAX_CONNS},
        {"max-connections-per-address", required_argument, NULL, OPT_MAX_PER_ADDR},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct manager_opts mo = {.token_review = true, .on_fatal = on_fatal, .webhooks = true};
    const char *wh_listen = "0.0.0.0:9876", *wh_ready = NULL, *wh_cert_dir = NULL;
    const char *const wh_dns_names[] = {WEBHOOK_SERVICE_NAME ".koordinator-system.svc", NULL};
    struct strbuf wh_host = STRBUF_INIT, gate_err = STRBUF_INIT;
    struct tls_pem wh_ca = {0}, wh_serving = {0};
    uint16_t wh_port;
    struct rec_params rp;
    const char *listen = "0.0.0.0:9443", *ready = NULL, *cert_dir = ".koord/manager";
    const char *tls_cert = NULL, *tls_key = NULL, *client_ca_file = NULL, *rh_ca_file = NULL;
    const char *rh_names = NULL, *kubeconfig = NULL;
    const char *const dns_names[] = {MANAGER_SERVICE_DNS, NULL};
    char *client_ca = NULL, *rh_ca = NULL, **allowed = NULL, *cert = NULL, *key = NULL;
    struct strbuf host = STRBUF_INIT;
    struct tls_pem ca = {0}, serving = {0};
    struct kube_client *client = NULL;
    struct manager *m = NULL;
    uint32_t v;
    uint16_t port;
    bool gates_set = false;
    sigset_t sigs;
    int c, sig = 0, r, rc = 1;

    rec_params_default(&rp);
    mo.recommendation_params = &rp;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_KUBECONFIG:
            kubeconfig = optarg;
            break;
        case OPT_LISTEN:
            listen = optarg;
            break;
        case OPT_READY:
            ready = optarg;
            break;
        case OPT_CERT_DIR:
            cert_dir = optarg;
            break;
        case OPT_TLS_CERT:
            tls_cert = optarg;
            break;
        case OPT_TLS_KEY:
            tls_key = optarg;
            break;
        case OPT_CLIENT_CA:
            client_ca_file = optarg;
            break;
        case OPT_RH_CA:
            rh_ca_file = optarg;
            break;
        case OPT_RH_NAMES:
            rh_names = optarg;
            break;
        case OPT_TOKEN_WEBHOOK:
            if (strcmp(optarg, "true") && strcmp(optarg, "false"))
                goto bad;
            mo.token_review = !strcmp(optarg, "true");
            break;
        case OPT_ADMIN_GROUP:
            mo.admin_group = optarg;
            break;
        case OPT_LE_NS:
            mo.lease_namespace = optarg;
            break;
        case OPT_LE_ID:
            mo.lease_name = optarg;
            break;
        case OPT_LE_LEASE:
            if (!parse_seconds(optarg, &mo.lease_ms))
                goto bad;
            break;
        case OPT_LE_RENEW:
            if (!parse_seconds(optarg, &mo.renew_ms))
                goto bad;
            break;
        case OPT_LE_RETRY:
            if (!parse_seconds(optarg, &mo.retry_ms))
                goto bad;
            break;
        case OPT_SLO_NAME:
            mo.config_name = optarg;
            break;
        case OPT_CONFIG_NS:
            mo.config_namespace = optarg;
            break;
        case OPT_REGISTER:
            mo.register_address = optarg;
            break;
        case OPT_DEGRADE_MS:
            if (parse_u32(optarg, &v) < 0 || v == 0)
                goto bad;
            mo.degrade_scale_ms = (long)v;
            break;
        case OPT_LOG_LEVEL:
            if (log_set_level(optarg) < 0)
                goto bad;
            break;
        case OPT_REC:
            if (strcmp(optarg, "true") && strcmp(optarg, "false"))
                goto bad;
            mo.recommendation_off = !strcmp(optarg, "false");
            break;
        case OPT_REC_INTERVAL:
            if (!parse_seconds(optarg, &mo.recommendation_interval_ms))
                goto bad;
            break;
        case OPT_REC_CKPT:
            if (!parse_seconds(optarg, &mo.recommendation_checkpoint_ms))
                goto bad;
            break;
        case OPT_REC_HALF_LIFE:
            if (parse_u32(optarg, &v) < 0 || v == 0)
                goto bad;
            rp.cpu_half_life = rp.mem_half_life = v;
            break;
        case OPT_REC_MEM_INTERVAL:
            if (parse_u32(optarg, &v) < 0 || v == 0)
                goto bad;
            rp.mem_interval = v;
            break;
        case OPT_REC_MIN_SAMPLES:
            if (parse_u32(optarg, &v) < 0 || v == 0)
                goto bad;
            rp.min_samples = v;
            break;
        case OPT_WH_LISTEN:
            wh_listen = optarg;
            break;
        case OPT_WH_READY:
            wh_ready = optarg;
            break;
        case OPT_WH_CERT_DIR:
            wh_cert_dir = optarg;
            break;
        case OPT_WH_DISABLE:
            mo.webhooks = false;
            break;
        case OPT_WH_REGISTER:
            mo.register_webhooks = optarg;
            break;
        case OPT_FEATURE_GATES:
            if (!gates_set) {
                webhook_gates_default(&mo.webhook_config.gates);
                gates_set = true;
            }
            if (webhook_gates_parse(optarg, &mo.webhook_config.gates, &gate_err) < 0) {
                (void)fprintf(stderr, "koord manager: --feature-gates: %s\n", gate_err.buf);
                strbuf_release(&gate_err);
                return 2;
            }
            break;
        case OPT_NAME_CHECK:
            /* upstream: only the exact string "true" enables it (manager-behaviour.md 1.1) */
            mo.webhook_config.node_strategy_name_check = !strcmp(optarg, "true");
            break;
        case OPT_MAX_CONNS:
        case OPT_MAX_PER_ADDR:
            if (cmd_parse_conn_limit("koord manager",
                                     c == OPT_MAX_CONNS ? "max-connections"
                                                        : "max-connections-per-address",
                                     optarg, &mo.limits) < 0)
                return 2;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            (void)fputs(usage_more, stdout);
            return 0;
        default:
            (void)fputs(usage, stderr);
            (void)fputs(usage_more, stderr);
            return 2;
        }
    }
    if (!!tls_cert != !!tls_key) {
        (void)fputs("koord manager: --tls-cert-file and --tls-private-key-file go together\n",
                    stderr);
        return 2;
    }
    if (!gates_set)
        webhook_gates_default(&mo.webhook_config.gates);
    if (!mo.webhooks && mo.register_webhooks) {
        (void)fputs("koord manager: --register-webhooks needs the webhooks (drop "
                    "--disable-webhooks)\n",
                    stderr);
        return 2;
    }
    if (cmd_parse_listen("koord manager", listen, &host, &port) < 0)
        return 2;
    if (cmd_parse_listen("koord manager", wh_listen, &wh_host, &wh_port) < 0) {
        strbuf_release(&host);
        return 2;
    }
    cmd_block_stop_signals(&sigs, SIGUSR1);

    if (cmd_kube_client(kubeconfig, "manager", NULL, &client) < 0)
        goto out;
    if (tls_cert) {
        cert = read_text(tls_cert);
        key = read_text(tls_key);
        if (!cert || !key) {
            log_error("manager", "cannot read --tls-cert-file/--tls-private-key-file");
            goto out;
        }
    } else if ((r = apiserver_pki_serving(cert_dir, "koord-manager", dns_names, &ca, &serving)) <
               0) {
        log_error("manager", "cannot prepare certificates in \"%s\": %s", cert_dir, err_str(r));
        goto out;
    }
    if (mo.webhooks &&
        (r = apiserver_pki_serving(wh_cert_dir ? wh_cert_dir : cert_dir, "koord-webhook",
                                   wh_dns_names, &wh_ca, &wh_serving)) < 0) {
        log_error("manager", "cannot prepare the webhook certificate in \"%s\": %s",
                  wh_cert_dir ? wh_cert_dir : cert_dir, err_str(r));
        goto out;
    }
    if ((client_ca_file && !(client_ca = read_text(client_ca_file))) ||
        (rh_ca_file && !(rh_ca = read_text(rh_ca_file)))) {
        log_error("manager", "cannot read --client-ca-file/--requestheader-client-ca-file");
        goto out;
    }
    if (rh_names)
        allowed = split_names(rh_names);
    if (!client_ca || !rh_ca)
        lookup_authentication(client, &client_ca, &rh_ca, &allowed);
    mo.client = client;
    mo.host = host.buf;
    mo.port = port;
    mo.cert_pem = cert ? cert : serving.cert;
    mo.key_pem = key ? key : serving.key;
    mo.client_ca_pem = client_ca;
    mo.requestheader_ca_pem = rh_ca;
    mo.allowed_names = (const char *const *)allowed;
    mo.register_ca_pem = ca.cert;
    mo.webhook_host = wh_host.buf;
    mo.webhook_port = wh_port;
    mo.webhook_cert_pem = wh_serving.cert;
    mo.webhook_key_pem = wh_serving.key;
    mo.webhook_ca_pem = wh_ca.cert;
    if (mo.register_address && !mo.register_ca_pem) {
        log_error("manager", "--register-apiservice needs the generated certificate (no "
                             "--tls-cert-file)");
        goto out;
    }
    if ((r = manager_start(&mo, &m)) < 0) {
        log_error("manager", "cannot start: %s", err_str(r));
        goto out;
    }
    if (cmd_write_ready("manager", ready, host.buf, manager_port(m)) < 0)
        goto out;
    if (mo.webhooks &&
        cmd_write_ready("manager", wh_ready, wh_host.buf, manager_webhook_port(m)) < 0)
        goto out;
    (void)sigwait(&sigs, &sig);
    if (sig == SIGUSR1) {
        log_error("manager", "stopping: lost leadership or failed to lead");
    } else {
        log_info("manager", "stopping on signal %d", sig);
        rc = 0;
    }
out:
    manager_stop(m);
    kube_client_free(client);
    tls_pem_release(&ca);
    tls_pem_release(&serving);
    tls_pem_release(&wh_ca);
    tls_pem_release(&wh_serving);
    strbuf_release(&wh_host);
    strbuf_release(&gate_err);
    free(cert);
    free(key);
    free(client_ca);
    free(rh_ca);
    free_names(allowed);
    strbuf_release(&host);
    return rc;
bad:
    (void)fprintf(stderr, "koord manager: bad value \"%s\" for --%s\n", optarg,
                  longopts[c - OPT_KUBECONFIG].name);
    return 2;
}
