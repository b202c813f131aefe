/*
 * Where a koord component finds its API server and how it proves who it is: a kubeconfig file
 * (the clusters/users/contexts document kubectl reads) or the in-cluster service account
 * (reference kubernetes-api.md section 11). The result is one flat struct kube_config that
 * kube_client_new() turns into a client.
 *
 * Library code reads no environment variables: cmd/ fills struct kube_config_sources from
 * --kubeconfig, $KUBECONFIG, $HOME and KUBERNETES_SERVICE_HOST/PORT and passes it in.
 *
 * Credentials given inline in a kubeconfig (*-data fields) are written to private files (mode
 * 0600 in a mkdtemp directory) because libcurl's GnuTLS backend only takes file names; the
 * directory is removed by kube_config_free().
 */
#ifndef KOORD_KUBE_CONFIG_H
#define KOORD_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct kube_config {
    char *server;    /* "https://host:port[/prefix]", no trailing slash */
    char *namespace; /* the context's namespace, or the pod's in-cluster; "default" if unset */
    char *ca_file;   /* PEM bundle to verify the server; NULL = the system store */
    char *cert_file; /* client certificate and key (PEM); both or neither */
    char *key_file;
    char *token;      /* bearer token, or NULL */
    char *token_file; /* re-read every minute, and after a 401, when set (projected tokens
                         rotate: the kubelet replaces the file) */
    char *username;   /* basic auth (legacy); both or neither */
    char *password;
    bool insecure;    /* insecure-skip-tls-verify */
    double qps;       /* client-side rate limit; <= 0 = unlimited. Default 1000 */
    unsigned burst;   /* bucket size; default 2000 */
    long timeout_ms;  /* per non-watch request; default 30000 */
    char *user_agent; /* default "koord/<version>" */
    /* private: the directory holding files written from *-data fields, or "" */
    char tmpdir[64];
};

/* What cmd/ collected; any field may be NULL. */
struct kube_config_sources {
    const char *kubeconfig;     /* --kubeconfig: used alone when set */
    const char *kubeconfig_env; /* $KUBECONFIG: ':'-separated files, merged (first wins) */
    const char *home;           /* $HOME, for ~/.kube/config */
    const char *context;        /* --context: overrides current-context */
    const char *service_host;   /* KUBERNETES_SERVICE_HOST */
    const char *service_port;   /* KUBERNETES_SERVICE_PORT */
    const char *sa_dir;         /* service account files; NULL = KUBE_SA_DIR */
};

/*
 * Picks the configuration as controller-runtime does: --kubeconfig; else $KUBECONFIG; else
 * in-cluster when KUBERNETES_SERVICE_HOST and _PORT are set; else ~/.kube/config.
 * 0 with *ret (free with kube_config_free()); on failure err (may be NULL) gets a message
 * naming the file and field at fault and the code is -ENOENT (no configuration found, or a
 * named file is missing), -EINVAL (malformed or incomplete), -ENOMEM or -errno from the file
 * system.
 */
int kube_config_load(const struct kube_config_sources *src, struct kube_config **ret,
                     struct strbuf *err);

/*
 * Reads the kubeconfig files in paths (NULL-terminated; the first that sets a named entry or
 * current-context wins, as kubectl merges $KUBECONFIG) and resolves context (NULL =
 * current-context). Relative file paths resolve against the file that named them. Errors as
 * above, e.g. `kubeconfig "/x": user "admin": client-key-data: not valid base64`.
 */
int kube_config_from_kubeconfig(const char *const *paths, const char *context,
                                struct kube_config **ret, struct strbuf *err);

/* The same from kubeconfig text (YAML or JSON); relative paths resolve against dir (may be
 * NULL for the working directory); name is used in messages. */
int kube_config_from_text(const char *text, size_t len, const char *name, const char *dir,
                          const char *context, struct kube_config **ret, struct strbuf *err);

/*
 * In-cluster: https://host:port with sa_dir/token (as token_file), sa_dir/ca.crt and the
 * namespace in sa_dir/namespace (optional). -ENOENT with a message when host or port is
 * missing ("not running in a cluster") or the token file is absent.
 */
int kube_config_in_cluster(const char *host, const char *port, const char *sa_dir,
                           struct kube_config **ret, struct strbuf *err);

/* A config for server with no credentials (tests, plain-HTTP servers). */
struct kube_config *kube_config_new(const char *server);

/* Frees the config and removes the private files it wrote. NULL is fine. */
void kube_config_free(struct kube_config *cfg);

#endif
