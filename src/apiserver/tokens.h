/*
 * Static bearer tokens, Kubernetes' --token-auth-file format: one CSV line per token,
 *   token,user,uid[,"group1,group2"]
 * (blank lines and lines starting with # ignored). The API server accepts
 * `Authorization: Bearer <token>` from any of them, as kube-apiserver does.
 */
#ifndef KOORD_APISERVER_TOKENS_H
#define KOORD_APISERVER_TOKENS_H

#include <stddef.h>

#include "base/strbuf.h"

struct api_tokens;

struct api_token_user {
    const char *user;
    const char *uid;
    const char *const *groups; /* NULL-terminated */
};

/* Parses the file's text; -EINVAL with why naming the line for a malformed line (fewer than
 * three fields, an empty token or user, a duplicate token), -E2BIG past 100000 tokens. */
int api_tokens_parse(const char *text, size_t len, struct api_tokens **ret, struct strbuf *why);
void api_tokens_free(struct api_tokens *t);

/* The user of a token (compared in constant time per candidate), or NULL. */
const struct api_token_user *api_tokens_lookup(const struct api_tokens *t, const char *token);

#endif
