/*
 * Certificates for koord's servers and clients, through GnuTLS: a cluster CA, serving
 * certificates for 127.0.0.1 / localhost / the host name, and client certificates whose
 * subject carries a Kubernetes identity (CN = user, O = groups), which is how
 * `koord apiserver` generates its PKI on first start and how tests get theirs.
 * Everything is PEM text owned by the caller.
 */
#ifndef KOORD_HTTP_TLS_H
#define KOORD_HTTP_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct tls_pem {
    char *cert; /* PEM certificate */
    char *key;  /* PEM private key (ECDSA P-256) */
};

void tls_pem_release(struct tls_pem *p);

/* A self-signed CA valid for `days` days. 0, -ENOMEM, -EIO. */
int tls_make_ca(const char *cn, unsigned days, struct tls_pem *ret);

/*
 * A certificate signed by ca. For a server, sans lists DNS names and IP addresses (written as
 * text: "localhost", "127.0.0.1", "::1") and the key usage is serverAuth; for a client
 * (server == false) the subject is CN=cn and one O= per entry of orgs (NULL-terminated, may be
 * NULL), key usage clientAuth. 0, -EINVAL (bad SAN), -ENOMEM, -EIO.
 */
int tls_make_cert(const struct tls_pem *ca, const char *cn, const char *const *orgs,
                  const char *const *sans, bool server, unsigned days, struct tls_pem *ret);

/* Whether the PEM certificate is valid for every DNS name or IP address of names
 * (NULL-terminated), as a client verifying it would judge; false when it does not parse. */
bool tls_cert_covers(const char *cert_pem, const char *const *names);

/* The SHA-256 digest of data (e.g. to key a cache by a secret without keeping the secret). */
void tls_sha256(const void *data, size_t len, unsigned char ret[32]);

#endif
