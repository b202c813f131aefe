/*
 * The dashboard's login sessions (ui.h): a browser cannot send a bearer token by itself, so the
 * login form takes one (from `kubectl create token ...`), the manager checks it once with a
 * TokenReview and a SubjectAccessReview, and hands the browser a session cookie instead. The
 * cookie holds a random id (256 bits from getrandom); the table keeps only the id's SHA-256,
 * so a memory dump or a timing difference in the lookup gives nothing a browser could send.
 * A session ends at its expiry (fixed at login: no sliding renewal, so a revoked token stops
 * working within one TTL), at logout, or when the table is full and it is the oldest.
 *
 * Thread-safe: every call takes the table's lock. Times are passed in (CLOCK_MONOTONIC ms), so
 * tests need no clock.
 */
#ifndef KOORD_MANAGER_UI_SESSION_H
#define KOORD_MANAGER_UI_SESSION_H

#include <stddef.h>
#include <stdint.h>

#define UI_SESSION_COOKIE "koord_ui_session"
#define UI_SESSION_ID_LEN 64 /* hex characters */

struct ui_sessions;

/* A table of at most max sessions (0 = 1000), each valid for ttl_ms (0 = one hour). */
struct ui_sessions *ui_sessions_new(size_t max, int64_t ttl_ms);
void ui_sessions_free(struct ui_sessions *s);

/*
 * A new session for user (copied), valid until now_ms + ttl; its id into ret_id (64 hex
 * characters and a NUL). A full table drops its oldest session first. 0 or -EIO (no
 * randomness).
 */
int ui_sessions_create(struct ui_sessions *s, const char *user, int64_t now_ms,
                       char ret_id[UI_SESSION_ID_LEN + 1]);

/*
 * The user of session id, copied into ret_user (size bytes, truncated), and its expiry into
 * *ret_expires_ms (may be NULL). 0; -ENOENT for an unknown, malformed or expired id (an expired
 * one is removed).
 */
int ui_sessions_lookup(struct ui_sessions *s, const char *id, int64_t now_ms, char *ret_user,
                       size_t size, int64_t *ret_expires_ms);

/* Ends session id: 0, -ENOENT when there is none. */
int ui_sessions_delete(struct ui_sessions *s, const char *id);

/* Sessions held (expired ones included until they are looked up or pushed out). */
size_t ui_sessions_count(struct ui_sessions *s);

/*
 * The value of the session cookie in a Cookie request header ("a=1; koord_ui_session=...;
 * b=2"), copied into buf (size bytes); NULL when absent or longer than buf.
 */
const char *ui_session_cookie(const char *header, char *buf, size_t size);

#endif
