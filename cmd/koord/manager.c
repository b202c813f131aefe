/* koord manager: flags and wiring of the manager (src/manager/manager.h). */
#include "manager/manager.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apiserver/pki.h"
#include "base/base.h"
#include "base/base64.h"
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
    "controllers, the in-memory NodeMetric API (metrics.koordinator.sh/v1alpha1) and the /ui\n"
    "dashboard, on the leader of a Lease only.\n"
    "\n"
    "  --kubeconfig FILE                 API server to talk to (default $KUBECONFIG, in-cluster,\n"
    "                                    ~/.kube/config)\n"
    "  --listen HOST:PORT                HTTPS port for the NodeMetric API, the /ui dashboard,\n"
    "                                    /healthz, /readyz, /metrics (default 0.0.0.0:9443;\n"
    "                                    port 0 = any)\n"
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
    "                                    replica (default 0.0.0.0:$WEBHOOK_PORT, upstream's\n"
    "                                    variable, or 0.0.0.0:9876; port 0 = any)\n"
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
    "  --nodemetric-crd auto|true|false  keep one slo.koordinator.sh NodeMetric object per\n"
    "                                    Node, for agents in --report-mode crd (upstream's\n"
    "                                    koordlet); auto (default): when that CRD is installed\n"
    "  --cert-secret NAME                share the serving CAs of --cert-dir and "
    "--webhook-cert-dir\n"
    "                                    among replicas through this Secret in --config-namespace\n"
    "                                    (created by the first replica), and publish the "
    "NodeMetric\n"
    "                                    API's CA as ConfigMap koord-manager-ca (key ca.crt)\n"
    "  --ui-session-ttl S                /ui dashboard login lifetime, 1-86400 (default 3600)\n"
    "  --log-level LEVEL                 error, warn, info (default) or debug\n"
    "  --max-connections N               open connections at most (default: what the open-file\n"
    "                                    limit allows, raised to its hard maximum at start)\n"
    "  --max-connections-per-address N   open connections from one address (default 1024)\n"
    "\n"
    "Upstream koord-manager's flags, for its manifests:\n"
    "  --enable-leader-election[=true]   koord manager always elects a leader; false is refused\n"
    "  --v N                             klog verbosity: 0-4 info, 5-10 debug\n"
    "  --sync-period D, --logtostderr, --metrics-addr ADDR, --health-probe-addr ADDR\n"
    "                                    accepted, no effect: informers never resync, logs go to\n"
    "                                    stderr, /metrics, /healthz and /readyz are on --listen\n"
    "\n"
    "Stops cleanly on SIGINT or SIGTERM (releasing the Lease); exits 1 when it loses the Lease.\n";

/* What --cert-secret publishes for agents (deploy/koordlet.yaml mounts it). */
#define MANAGER_CA_CONFIGMAP "koord-manager-ca"

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

/* The "=VALUE" of an optional_argument flag, read from its argv word rather than from optarg
 * (an optarg tested for NULL here made clang's analyzer assume it NULL for every later flag). */
static const char *attached_value(const char *word)
{
    const char *eq = strchr(word, '=');

    return eq ? eq + 1 : NULL;
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
    OPT_NODEMETRIC_CRD,
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
    OPT_CERT_SECRET,
    OPT_UI_SESSION_TTL,
    OPT_ENABLE_LE,
    OPT_KLOG_V,
    OPT_IGNORED,
    OPT_IGNORED_BOOL,
};

/* ---- --cert-secret ---- */

/* The CA pairs apiserver_pki_serving() keeps in the certificate directory, and the serving
 * pairs each signs (removed when their CA changes, to be made again from the shared one). */
static const char *const shared_ca[] = {"koord-manager-ca", "koord-webhook-ca"};
static const char *const issued_by[] = {"koord-manager", "koord-webhook"};
static const struct kube_resource res_secrets = {"", "v1", "secrets", "Secret", true};

static const char *cert_dir_of(size_t i, const char *cert_dir, const char *wh_cert_dir)
{
    return i == 1 && wh_cert_dir ? wh_cert_dir : cert_dir;
}

/* Standard base64 (a Secret's data) into out; -EINVAL when it is not. */
static int decode_b64(const char *s, struct strbuf *out)
{
    struct strbuf url = STRBUF_INIT;
    int r;

    for (; *s && *s != '='; s++) {
        char ch = *s;
        if (ch == '+')
            ch = '-';
        else if (ch == '/')
            ch = '_';
        strbuf_addch(&url, ch);
    }
    r = base64url_decode(url.buf ? url.buf : "", out);
    strbuf_release(&url);
    return r;
}

static int write_file_0600(const char *dir, const char *name, const char *ext, const char *data,
                           size_t len)
{
    struct strbuf p = STRBUF_INIT;
    FILE *f;
    int r = 0;

    strbuf_addf(&p, "%s/%s.%s", dir, name, ext);
    (void)unlink(p.buf);
    f = fopen(p.buf, "wx");
    if (!f || fchmod(fileno(f), 0600) < 0 || fwrite(data, 1, len, f) != len)
        r = -EIO;
    if (f && fclose(f) != 0)
        r = -EIO;
    strbuf_release(&p);
    return r;
}

/* The Secret's CA pairs into the directories (serving pairs of a changed CA removed). 0;
 * -ENOENT when the Secret lacks one (e.g. upstream's chart creates it empty): ours may be
 * offered; -EINVAL (data not a base64 PEM) or -errno (the directory): an error. */
static int take_secret(const cJSON *secret, const char *cert_dir, const char *wh_cert_dir)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(secret, "data");
    struct strbuf key = STRBUF_INIT, val = STRBUF_INIT, cur = STRBUF_INIT, p = STRBUF_INIT;
    int r = 0;

    for (size_t i = 0; r == 0 && i < ARRAY_SIZE(shared_ca); i++) {
        const char *dir = cert_dir_of(i, cert_dir, wh_cert_dir);
        for (int k = 0; r == 0 && k < 2; k++) {
            const char *ext = k ? "key" : "crt", *b64;
            strbuf_reset(&key);
            strbuf_addf(&key, "%s.%s", shared_ca[i], ext);
            b64 = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, key.buf));
            strbuf_reset(&val);
            if (!b64 || !*b64) {
                r = -ENOENT;
                break;
            }
            if (decode_b64(b64, &val) < 0 || strncmp(val.buf, "-----BEGIN ", 11) != 0) {
                log_error("manager", "Secret data %s is not a base64 PEM", key.buf);
                r = -EINVAL;
                break;
            }
            if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                r = -errno;
                break;
            }
            strbuf_reset(&p);
            strbuf_addf(&p, "%s/%s", dir, key.buf);
            strbuf_reset(&cur);
            if (codec_read_file(p.buf, 1u << 20, &cur) == 0 && cur.len == val.len &&
                !memcmp(cur.buf, val.buf, val.len))
                continue;
            if ((r = write_file_0600(dir, shared_ca[i], ext, val.buf, val.len)) < 0)
                break;
            for (int e = 0; e < 2; e++) {
                strbuf_reset(&p);
                strbuf_addf(&p, "%s/%s.%s", dir, issued_by[i], e ? "key" : "crt");
                (void)unlink(p.buf);
            }
        }
    }
    strbuf_release(&key);
    strbuf_release(&val);
    strbuf_release(&cur);
    strbuf_release(&p);
    return r;
}

/* A Secret holding this replica's CA pairs (base64 data), to create or to fill in. */
static int secret_from_files(cJSON *secret, const char *cert_dir, const char *wh_cert_dir)
{
    cJSON *data;
    struct strbuf p = STRBUF_INIT, text = STRBUF_INIT, b64 = STRBUF_INIT;
    int r = 0;

    cJSON_DeleteItemFromObjectCaseSensitive(secret, "data");
    CHECK(data = cJSON_AddObjectToObject(secret, "data"));
    for (size_t i = 0; r == 0 && i < ARRAY_SIZE(shared_ca); i++) {
        for (int k = 0; r == 0 && k < 2; k++) {
            strbuf_reset(&p);
            strbuf_addf(&p, "%s/%s.%s", cert_dir_of(i, cert_dir, wh_cert_dir), shared_ca[i],
                        k ? "key" : "crt");
            strbuf_reset(&text);
            if ((r = codec_read_file(p.buf, 1u << 20, &text)) < 0)
                break;
            strbuf_reset(&b64);
            strbuf_add_base64(&b64, text.buf, text.len);
            CHECK(cJSON_AddStringToObject(data, strrchr(p.buf, '/') + 1, b64.buf));
        }
    }
    strbuf_release(&p);
    strbuf_release(&text);
    strbuf_release(&b64);
    return r;
}

/*
 * Every replica must serve with certificates of the same CAs: the webhook configurations carry
 * one caBundle, and agents trust one CA for the NodeMetric API. Upstream shares its webhook
 * certificates through the Secret koordinator-webhook-certs; here the CA pairs go through the
 * Secret NAME, and each replica makes its own serving pairs from them. The first replica makes
 * the CAs and creates (or fills in an empty) Secret; a replica that loses that race takes the
 * winner's.
 */
static int share_cas(struct kube_client *c, const char *ns, const char *name, const char *cert_dir,
                     const char *wh_cert_dir)
{
    const char *const wh_names[] = {WEBHOOK_SERVICE_NAME ".koordinator-system.svc", NULL};
    const char *const names[] = {MANAGER_SERVICE_DNS, NULL};
    int r = -ESTALE;

    for (int attempt = 0; attempt < 5 && (r == -ESTALE || r == -EEXIST); attempt++) {
        struct tls_pem ca = {0}, serving = {0};
        cJSON *secret = NULL;
        bool exists;

        r = kube_get(c, &res_secrets, ns, name, &secret, NULL);
        if (r < 0 && r != -ENOENT)
            break;
        exists = r == 0;
        if (exists && (r = take_secret(secret, cert_dir, wh_cert_dir)) != -ENOENT) {
            cJSON_Delete(secret);
            if (r == 0)
                return 0;
            break;
        }
        /* none yet: make (or keep) this replica's CAs and offer them */
        r = apiserver_pki_serving(cert_dir, "koord-manager", names, &ca, &serving);
        tls_pem_release(&ca);
        tls_pem_release(&serving);
        if (r == 0) {
            r = apiserver_pki_serving(wh_cert_dir ? wh_cert_dir : cert_dir, "koord-webhook",
                                      wh_names, &ca, &serving);
            tls_pem_release(&ca);
            tls_pem_release(&serving);
        }
        if (r == 0 && !exists) {
            struct strbuf json = STRBUF_INIT;
            strbuf_addf(&json,
                        "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"Opaque\","
                        "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"}}",
                        name, ns);
            CHECK(secret = cJSON_Parse(json.buf));
            strbuf_release(&json);
        }
        if (r == 0)
            r = secret_from_files(secret, cert_dir, wh_cert_dir);
        if (r == 0)
            r = exists ? kube_update(c, &res_secrets, ns, secret, NULL, NULL, NULL)
                       : kube_create(c, &res_secrets, ns, secret, NULL, NULL);
        cJSON_Delete(secret);
        if (r == 0)
            log_info("manager", "serving CAs stored in Secret %s/%s for the other replicas", ns,
                     name);
    }
    if (r < 0)
        log_error("manager", "cannot share the serving CAs through Secret %s/%s: %s", ns, name,
                  err_str(r));
    return r;
}

/* The NodeMetric API's CA for agents (public: no key), ConfigMap koord-manager-ca, key ca.crt. */
static int publish_ca(struct kube_client *c, const char *ns, const char *ca_pem)
{
    cJSON *cm = NULL, *data;
    const char *cur;
    int r = -ESTALE;

    for (int attempt = 0; attempt < 5; attempt++) {
        r = kube_get(c, &kube_res_configmaps, ns, MANAGER_CA_CONFIGMAP, &cm, NULL);
        if (r < 0 && r != -ENOENT)
            break;
        cur = r == 0 ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                           cJSON_GetObjectItemCaseSensitive(cm, "data"), "ca.crt"))
                     : NULL;
        if (cur && !strcmp(cur, ca_pem)) {
            cJSON_Delete(cm);
            return 0;
        }
        if (r == -ENOENT) {
            CHECK(cm = cJSON_CreateObject());
            CHECK(cJSON_AddStringToObject(cm, "apiVersion", "v1"));
            CHECK(cJSON_AddStringToObject(cm, "kind", "ConfigMap"));
            CHECK(data = cJSON_AddObjectToObject(cm, "metadata"));
            CHECK(cJSON_AddStringToObject(data, "name", MANAGER_CA_CONFIGMAP));
            CHECK(cJSON_AddStringToObject(data, "namespace", ns));
        }
        cJSON_DeleteItemFromObjectCaseSensitive(cm, "data");
        CHECK(data = cJSON_AddObjectToObject(cm, "data"));
        CHECK(cJSON_AddStringToObject(data, "ca.crt", ca_pem));
        r = r == -ENOENT ? kube_create(c, &kube_res_configmaps, ns, cm, NULL, NULL)
                         : kube_update(c, &kube_res_configmaps, ns, cm, NULL, NULL, NULL);
        cJSON_Delete(cm);
        cm = NULL;
        if (r != -ESTALE && r != -EEXIST)
            break;
    }
    if (r < 0)
        log_error("manager", "cannot publish ConfigMap %s/%s: %s", ns, MANAGER_CA_CONFIGMAP,
                  err_str(r));
    return r;
}

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
        {"nodemetric-crd", required_argument, NULL, OPT_NODEMETRIC_CRD},
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
        {"cert-secret", required_argument, NULL, OPT_CERT_SECRET},
        {"ui-session-ttl", required_argument, NULL, OPT_UI_SESSION_TTL},
        {"enable-leader-election", optional_argument, NULL, OPT_ENABLE_LE},
        {"v", required_argument, NULL, OPT_KLOG_V},
        {"sync-period", required_argument, NULL, OPT_IGNORED},
        {"metrics-addr", required_argument, NULL, OPT_IGNORED},
        {"health-probe-addr", required_argument, NULL, OPT_IGNORED},
        {"logtostderr", optional_argument, NULL, OPT_IGNORED_BOOL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct manager_opts mo = {.token_review = true, .on_fatal = on_fatal, .webhooks = true};
    const char *wh_listen = "0.0.0.0:9876", *wh_ready = NULL, *wh_cert_dir = NULL, *env_port;
    char wh_listen_env[sizeof("0.0.0.0:65535")];
    const char *const wh_dns_names[] = {WEBHOOK_SERVICE_NAME ".koordinator-system.svc", NULL};
    struct strbuf wh_host = STRBUF_INIT, gate_err = STRBUF_INIT;
    struct tls_pem wh_ca = {0}, wh_serving = {0};
    uint16_t wh_port;
    struct rec_params rp;
    const char *listen = "0.0.0.0:9443", *ready = NULL, *cert_dir = ".koord/manager";
    const char *tls_cert = NULL, *tls_key = NULL, *client_ca_file = NULL, *rh_ca_file = NULL;
    const char *rh_names = NULL, *kubeconfig = NULL, *cert_secret = NULL;
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
    if ((env_port = getenv("WEBHOOK_PORT")) && *env_port) {
        if (parse_u32(env_port, &v) < 0 || v > 65535) {
            (void)fprintf(stderr, "koord manager: WEBHOOK_PORT=%s is not a port\n", env_port);
            return 2;
        }
        (void)snprintf(wh_listen_env, sizeof(wh_listen_env), "0.0.0.0:%u", (unsigned)v);
        wh_listen = wh_listen_env;
    }
    int li = 0;

    while ((c = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
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
        case OPT_UI_SESSION_TTL:
            if (parse_u32(optarg, &v) < 0 || v == 0 || v > 86400)
                goto bad;
            mo.ui_session_ttl_ms = (int64_t)v * 1000;
            break;
        case OPT_NODEMETRIC_CRD:
            if (!strcmp(optarg, "auto"))
                mo.nodemetric_crd = MANAGER_NODEMETRIC_CRD_AUTO;
            else if (!strcmp(optarg, "true"))
                mo.nodemetric_crd = MANAGER_NODEMETRIC_CRD_ON;
            else if (!strcmp(optarg, "false"))
                mo.nodemetric_crd = MANAGER_NODEMETRIC_CRD_OFF;
            else
                goto bad;
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
        case OPT_CERT_SECRET:
            cert_secret = optarg;
            break;
        case OPT_ENABLE_LE: {
            const char *val = attached_value(argv[optind - 1]);
            if (val && strcmp(val, "true")) {
                (void)fprintf(stderr,
                              "koord manager: --enable-leader-election=%s: koord manager "
                              "always elects a leader (true only)\n",
                              val);
                return 2;
            }
            break;
        }
        case OPT_KLOG_V:
            if (cmd_klog_v("koord manager", optarg) < 0)
                return 2;
            break;
        case OPT_IGNORED:
            break;
        case OPT_IGNORED_BOOL:
            if (cmd_ignored_bool("koord manager", longopts[li].name,
                                 attached_value(argv[optind - 1])) < 0)
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
    if (cert_secret && !tls_cert &&
        share_cas(client, mo.config_namespace ? mo.config_namespace : MANAGER_DEFAULT_NAMESPACE,
                  cert_secret, cert_dir, mo.webhooks ? wh_cert_dir : NULL) < 0)
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
    if (cert_secret && !tls_cert &&
        publish_ca(client, mo.config_namespace ? mo.config_namespace : MANAGER_DEFAULT_NAMESPACE,
                   ca.cert) < 0)
        goto out;
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
