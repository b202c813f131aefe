/* koord apiserver: the standalone Kubernetes-compatible API server (flags and wiring). */
#include "apiserver/apiserver.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apiserver/aggregator.h"
#include "apiserver/pki.h"
#include "apiserver/satoken.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "apiserver/tokens.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"
#include "http/server.h"

static const char usage[] =
    "usage: koord apiserver [--data-dir DIR] [--listen HOST:PORT] [--ready-file FILE]\n"
    "                       [--write-kubeconfig FILE] [--token-auth-file FILE]\n"
    "                       [--requestheader-client-ca-file FILE]\n"
    "                       [--proxy-client-cert-file FILE --proxy-client-key-file FILE]\n"
    "                       [--requestheader-allowed-names NAMES] [--log-level LEVEL]\n"
    "                       [--max-connections N] [--max-connections-per-address N]\n"
    "                       [--authorization-mode MODES]\n"
    "                       [--service-account-signing-key-file FILE] [--watch-history N]\n"
    "\n"
    "Serves a Kubernetes-compatible API over HTTPS with SQLite storage, for running koord\n"
    "without a cluster, and proxies the group-versions APIServices register (aggregation).\n"
    "On first start it generates a CA, a serving certificate, an admin client certificate, a\n"
    "front-proxy CA and a front-proxy client certificate under DIR/pki.\n"
    "\n"
    "  --data-dir DIR          database and certificates (default .koord/apiserver)\n"
    "  --listen HOST:PORT      address to serve on; port 0 picks a free one\n"
    "                          (default 127.0.0.1:6443)\n"
    "  --ready-file FILE       written with the bound HOST:PORT once serving\n"
    "  --write-kubeconfig FILE an admin kubeconfig for kubectl (KUBECONFIG=FILE kubectl ...)\n"
    "  --token-auth-file FILE  also accept these bearer tokens (CSV lines "
    "token,user,uid[,\"groups\"])\n"
    "  --requestheader-client-ca-file FILE\n"
    "                          CA of the front-proxy client certificate, published for\n"
    "                          extension servers (default DIR/pki/front-proxy-ca.crt)\n"
    "  --proxy-client-cert-file FILE, --proxy-client-key-file FILE\n"
    "                          the certificate presented to extension servers (default\n"
    "                          DIR/pki/front-proxy-client.{crt,key})\n"
    "  --requestheader-allowed-names NAMES\n"
    "                          comma-separated CNs extension servers accept as front proxy\n"
    "                          (default front-proxy-client; \"\" = any)\n"
    "  --authorization-mode MODES\n"
    "                          comma-separated authorizers tried in order: Node, RBAC,\n"
    "                          AlwaysAllow, AlwaysDeny (default Node,AlwaysAllow: every\n"
    "                          authenticated user but a node may do everything); Node,RBAC is\n"
    "                          kube-apiserver's, and creates its bootstrap roles\n"
    "  --service-account-signing-key-file FILE\n"
    "                          HMAC key (64 hex digits) for service-account tokens (default\n"
    "                          DIR/pki/sa.key, generated when missing)\n"
    "  --log-level LEVEL       error, warn, info (default) or debug\n"
    "  --max-connections N     open connections at most (default: what the open-file limit\n"
    "                          allows; the limit is raised to its hard maximum at start)\n"
    "  --max-connections-per-address N\n"
    "                          open connections from one client address at most (default\n"
    "                          1024; raise it when clients reach this server through a NAT\n"
    "                          or a load balancer that hides their addresses)\n"
    "  --watch-history N       writes kept for watches and continue tokens (default 10000);\n"
    "                          a watch from an older resourceVersion gets 410 Expired\n"
    "\n"
    "Stops cleanly on SIGINT or SIGTERM.\n";

/* Reads a --token-auth-file; a bad one is reported on stderr (the server does not start). */
static int load_tokens(const char *path, struct api_tokens **ret)
{
    struct strbuf text = STRBUF_INIT, why = STRBUF_INIT;
    int r;

    r = codec_read_file(path, 64u << 20, &text);
    if (r == 0)
        r = api_tokens_parse(text.buf, text.len, ret, &why);
    if (r < 0)
        (void)fprintf(stderr, "koord apiserver: --token-auth-file \"%s\": %s\n", path,
                      why.len ? why.buf : err_str(r));
    strbuf_release(&text);
    strbuf_release(&why);
    return r;
}

/* "a,b" -> {"a", "b", NULL}; "" -> {NULL}. */
static char **split_names(const char *list)
{
    size_t n = 1;
    char **v;

    for (const char *p = list; *p; p++)
        n += *p == ',';
    v = xcalloc(n + 1, sizeof(*v));
    n = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len)
            v[n++] = xstrndup(p, len);
        p += len;
        if (*p == ',')
            p++;
    }
    return v;
}

static void free_names(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

int cmd_apiserver(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"listen", required_argument, NULL, 'l'},
        {"ready-file", required_argument, NULL, 'r'},
        {"write-kubeconfig", required_argument, NULL, 'k'},
        {"token-auth-file", required_argument, NULL, 't'},
        {"requestheader-client-ca-file", required_argument, NULL, 'C'},
        {"proxy-client-cert-file", required_argument, NULL, 'P'},
        {"proxy-client-key-file", required_argument, NULL, 'K'},
        {"requestheader-allowed-names", required_argument, NULL, 'N'},
        {"log-level", required_argument, NULL, 'L'},
        {"max-connections", required_argument, NULL, 'M'},
        {"max-connections-per-address", required_argument, NULL, 'X'},
        {"authorization-mode", required_argument, NULL, 'A'},
        {"service-account-signing-key-file", required_argument, NULL, 'S'},
        {"watch-history", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *data_dir = ".koord/apiserver", *listen = "127.0.0.1:6443", *ready = NULL,
               *kubeconfig = NULL, *token_file = NULL, *rh_ca_file = NULL, *proxy_cert = NULL,
               *proxy_key = NULL, *allowed = "front-proxy-client", *authz_mode = NULL,
               *sa_key_file = NULL;
    struct strbuf sa_key = STRBUF_INIT, sa_path = STRBUF_INIT, why = STRBUF_INIT;
    struct api_satokens *sat = NULL;
    struct strbuf rh_ca = STRBUF_INIT, cert_path = STRBUF_INIT, key_path = STRBUF_INIT;
    struct strbuf work = STRBUF_INIT;
    struct aggregator_opts ao = {0};
    char **names = NULL;
    struct strbuf path = STRBUF_INIT, addr = STRBUF_INIT, host = STRBUF_INIT;
    struct apiserver_pki pki = {0};
    struct store *db = NULL, *store = NULL; /* the SQLite backend, the cache over it */
    struct apiserver *api = NULL;
    struct api_tokens *tokens = NULL;
    struct http_server *http = NULL;
    struct http_server_opts o = {0};
    uint16_t port;
    sigset_t sigs;
    bool want_tokens = false, want_rh_ca = false, want_cert = false, want_key = false;
    uint32_t history = 0; /* store_sqlite_open's default */
    int c, sig, r, rc = 1;

    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data_dir = optarg;
            break;
        case 'l':
            listen = optarg;
            break;
        case 'r':
            ready = optarg;
            break;
        case 'k':
            kubeconfig = optarg;
            break;
        case 't':
            token_file = optarg;
            want_tokens = true;
            break;
        case 'C':
            rh_ca_file = optarg;
            want_rh_ca = true;
            break;
        case 'P':
            proxy_cert = optarg;
            want_cert = true;
            break;
        case 'K':
            proxy_key = optarg;
            want_key = true;
            break;
        case 'N':
            allowed = optarg;
            break;
        case 'A':
            authz_mode = optarg;
            break;
        case 'S':
            sa_key_file = optarg;
            break;
        case 'W':
            if (parse_u32(optarg, &history) < 0 || history == 0) {
                (void)fprintf(stderr,
                              "koord apiserver: --watch-history: \"%s\" is not a positive "
                              "integer\n",
                              optarg);
                return 2;
            }
            break;
        case 'L':
            if (log_set_level(optarg) < 0) {
                (void)fprintf(stderr, "koord apiserver: unknown log level \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'M':
        case 'X':
            if (cmd_parse_conn_limit("koord apiserver",
                                     c == 'M' ? "max-connections" : "max-connections-per-address",
                                     optarg, &o) < 0)
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
    if (want_cert != want_key) {
        (void)fprintf(stderr, "koord apiserver: --proxy-client-cert-file and "
                              "--proxy-client-key-file go together\n");
        return 2;
    }
    if (cmd_parse_listen("koord apiserver", listen, &host, &port) < 0)
        return 2;
    /* Optional paths are tested through flags, not pointers: clang-analyzer would take a NULL
     * test of one optarg copy as a fact about every other. */
    if (want_tokens && load_tokens(token_file, &tokens) < 0) {
        strbuf_release(&host);
        return 2;
    }
    cmd_block_stop_signals(&sigs, 0);

    if (mkdir(data_dir, 0700) < 0 && errno != EEXIST) {
        log_error("apiserver", "cannot create data dir \"%s\": %s", data_dir, err_str(-errno));
        goto out;
    }
    strbuf_addf(&path, "%s/pki", data_dir);
    if ((r = apiserver_pki_load(path.buf, &pki)) < 0) {
        log_error("apiserver", "cannot prepare certificates in \"%s\": %s", path.buf, err_str(r));
        goto out;
    }
    strbuf_reset(&path);
    strbuf_addf(&path, "%s/koord.db", data_dir);
    if ((r = store_sqlite_open(path.buf, history, &db)) < 0) {
        log_error("apiserver", "cannot open store \"%s\": %s", path.buf, err_str(r));
        goto out;
    }
    if ((r = store_cache_new(db, &store)) < 0) {
        log_error("apiserver", "cannot load store \"%s\": %s", path.buf, err_str(r));
        goto out;
    }
    if ((r = apiserver_new(store, &api)) < 0) {
        log_error("apiserver", "cannot start: %s", err_str(r));
        goto out;
    }
    apiserver_require_client_certs(api, true);
    apiserver_set_tokens(api, tokens);
    if (authz_mode && apiserver_set_authorization_mode(api, authz_mode, &why) < 0) {
        log_error("apiserver", "--authorization-mode \"%s\": %s", authz_mode, why.buf);
        goto out;
    }
    if (sa_key_file)
        strbuf_addstr(&sa_path, sa_key_file);
    else
        strbuf_addf(&sa_path, "%s/pki/sa.key", data_dir);
    if ((r = api_satokens_load_key(sa_path.buf, &sa_key)) < 0 ||
        !(sat = api_satokens_new(sa_key.buf, sa_key.len))) {
        log_error("apiserver", "cannot load the service-account key \"%s\": %s", sa_path.buf,
                  r < 0 ? err_str(r) : "too short");
        goto out;
    }
    apiserver_set_satokens(api, sat);
    if (want_rh_ca && (r = codec_read_file(rh_ca_file, 1 << 20, &rh_ca)) < 0) {
        log_error("apiserver", "cannot read --requestheader-client-ca-file \"%s\": %s", rh_ca_file,
                  err_str(r));
        goto out;
    }
    if (want_cert) {
        strbuf_addstr(&cert_path, proxy_cert);
        strbuf_addstr(&key_path, proxy_key);
    } else {
        strbuf_addf(&cert_path, "%s/pki/front-proxy-client.crt", data_dir);
        strbuf_addf(&key_path, "%s/pki/front-proxy-client.key", data_dir);
    }
    if (access(cert_path.buf, R_OK) < 0 || access(key_path.buf, R_OK) < 0) {
        log_error("apiserver", "cannot read the proxy client certificate \"%s\" or key \"%s\": %s",
                  cert_path.buf, key_path.buf, err_str(-errno));
        goto out;
    }
    strbuf_addf(&work, "%s/aggregator", data_dir);
    if (mkdir(work.buf, 0700) < 0 && errno != EEXIST) {
        log_error("apiserver", "cannot create \"%s\": %s", work.buf, err_str(-errno));
        goto out;
    }
    names = split_names(allowed);
    ao.proxy_cert_file = cert_path.buf;
    ao.proxy_key_file = key_path.buf;
    ao.client_ca_pem = pki.ca.cert;
    ao.requestheader_ca_pem = want_rh_ca ? rh_ca.buf : pki.front_proxy_ca.cert;
    ao.allowed_names = (const char *const *)names;
    ao.work_dir = work.buf;
    if ((r = apiserver_enable_aggregation(api, &ao)) < 0) {
        log_error("apiserver", "cannot start the aggregation layer: %s", err_str(r));
        goto out;
    }
    o.host = host.buf;
    o.port = port;
    o.cert_pem = pki.serving.cert;
    o.key_pem = pki.serving.key;
    o.client_ca_pem = pki.ca.cert;
    if ((r = http_server_start(&o, apiserver_handle, api, &http)) < 0) {
        log_error("apiserver", "cannot listen on \"%s\": %s", listen, err_str(r));
        goto out;
    }
    strbuf_addf(&addr, "%s:%u", host.buf, http_server_port(http));
    if (kubeconfig) {
        struct strbuf server = STRBUF_INIT;
        strbuf_addf(&server, "https://%s", addr.buf);
        r = apiserver_write_kubeconfig(kubeconfig, server.buf, &pki);
        strbuf_release(&server);
        if (r < 0) {
            log_error("apiserver", "cannot write kubeconfig \"%s\": %s", kubeconfig, err_str(r));
            goto out;
        }
    }
    if (cmd_write_ready("apiserver", ready, host.buf, http_server_port(http)) < 0)
        goto out;
    log_info("apiserver", "serving on https://%s (data in %s)", addr.buf, data_dir);
    (void)sigwait(&sigs, &sig);
    log_info("apiserver", "stopping on signal %d", sig);
    rc = 0;
out:
    apiserver_stop_watches(api);
    http_server_stop(http);
    apiserver_free(api);
    api_tokens_free(tokens);
    api_satokens_free(sat);
    store_close(store);
    store_close(db);
    apiserver_pki_release(&pki);
    free_names(names);
    strbuf_release(&rh_ca);
    if (sa_key.len)
        explicit_bzero(sa_key.buf, sa_key.len);
    strbuf_release(&sa_key);
    strbuf_release(&sa_path);
    strbuf_release(&why);
    strbuf_release(&cert_path);
    strbuf_release(&key_path);
    strbuf_release(&work);
    strbuf_release(&path);
    strbuf_release(&addr);
    strbuf_release(&host);
    return rc;
}
