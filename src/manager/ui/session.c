/*
 * Login sessions (session.h): a hash map from the hex SHA-256 of a session id to its user and
 * expiry. The table is small (bounded by max) and touched once per dashboard request, so a
 * full table finds its oldest entry by a scan.
 */
#include "manager/ui/session.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/base.h"
#include "base/hmap.h"
#include "http/tls.h"

#define DEFAULT_MAX    1000
#define DEFAULT_TTL_MS ((int64_t)3600 * 1000)

struct session {
    char *user;
    int64_t expires_ms;
};

struct ui_sessions {
    pthread_mutex_t lock;
    struct hmap map; /* hex SHA-256 of the id -> struct session */
    size_t max;
    int64_t ttl_ms;
};

static void hex(const unsigned char *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The map key of id: its SHA-256 in hex. false for an id that cannot be one of ours. */
static bool key_of(const char *id, char key[65])
{
    unsigned char sum[32];
    size_t n = id ? strlen(id) : 0;

    if (n != UI_SESSION_ID_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            return false;
    tls_sha256(id, n, sum);
    hex(sum, sizeof(sum), key);
    return true;
}

static void session_free(struct session *se)
{
    if (!se)
        return;
    free(se->user);
    free(se);
}

struct ui_sessions *ui_sessions_new(size_t max, int64_t ttl_ms)
{
    struct ui_sessions *s = xcalloc(1, sizeof(*s));

    CHECK(pthread_mutex_init(&s->lock, NULL) == 0);
    hmap_init(&s->map);
    s->max = max ? max : DEFAULT_MAX;
    s->ttl_ms = ttl_ms > 0 ? ttl_ms : DEFAULT_TTL_MS;
    return s;
}

void ui_sessions_free(struct ui_sessions *s)
{
    size_t it;

    if (!s)
        return;
    for (struct hmap_entry *e = hmap_first(&s->map, &it); e; e = hmap_next(&s->map, e, &it))
        session_free(e->value);
    hmap_release(&s->map);
    (void)pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Drops the expired sessions, then, while still full, the one expiring soonest. */
static void make_room(struct ui_sessions *s, int64_t now_ms)
{
    while (s->map.n > 0 && s->map.n >= s->max) {
        struct hmap_entry *oldest = NULL;
        char *key;
        size_t it;

        for (struct hmap_entry *e = hmap_first(&s->map, &it); e; e = hmap_next(&s->map, e, &it)) {
            const struct session *se = e->value;
            if (!oldest || se->expires_ms < ((struct session *)oldest->value)->expires_ms)
                oldest = e;
            if (se->expires_ms <= now_ms)
                break;
        }
        CHECK(oldest);
        key = xstrdup(oldest->key);
        session_free(hmap_del(&s->map, key));
        free(key);
    }
}

int ui_sessions_create(struct ui_sessions *s, const char *user, int64_t now_ms,
                       char ret_id[UI_SESSION_ID_LEN + 1])
{
    unsigned char raw[UI_SESSION_ID_LEN / 2];
    struct session *se;
    char key[65];

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return -EIO;
    hex(raw, sizeof(raw), ret_id);
    CHECK(key_of(ret_id, key));
    se = xcalloc(1, sizeof(*se));
    se->user = xstrdup(user ? user : "");
    se->expires_ms = now_ms + s->ttl_ms;
    (void)pthread_mutex_lock(&s->lock);
    make_room(s, now_ms);
    session_free(hmap_put(&s->map, key, se));
    (void)pthread_mutex_unlock(&s->lock);
    return 0;
}

int ui_sessions_lookup(struct ui_sessions *s, const char *id, int64_t now_ms, char *ret_user,
                       size_t size, int64_t *ret_expires_ms)
{
    struct session *se;
    char key[65];
    int r = -ENOENT;

    if (!key_of(id, key))
        return -ENOENT;
    (void)pthread_mutex_lock(&s->lock);
    se = hmap_get(&s->map, key);
    if (se && se->expires_ms <= now_ms) {
        session_free(hmap_del(&s->map, key));
    } else if (se) {
        if (size) {
            size_t n = strlen(se->user);
            if (n >= size)
                n = size - 1;
            memcpy(ret_user, se->user, n);
            ret_user[n] = '\0';
        }
        if (ret_expires_ms)
            *ret_expires_ms = se->expires_ms;
        r = 0;
    }
    (void)pthread_mutex_unlock(&s->lock);
    return r;
}

int ui_sessions_delete(struct ui_sessions *s, const char *id)
{
    struct session *se;
    char key[65];

    if (!key_of(id, key))
        return -ENOENT;
    (void)pthread_mutex_lock(&s->lock);
    se = hmap_del(&s->map, key);
    (void)pthread_mutex_unlock(&s->lock);
    session_free(se);
    return se ? 0 : -ENOENT;
}

size_t ui_sessions_count(struct ui_sessions *s)
{
    size_t n;

    (void)pthread_mutex_lock(&s->lock);
    n = s->map.n;
    (void)pthread_mutex_unlock(&s->lock);
    return n;
}

const char *ui_session_cookie(const char *header, char *buf, size_t size)
{
    size_t name_len = strlen(UI_SESSION_COOKIE);
    const char *p = header;

    while (p && *p) {
        const char *end;
        size_t n;

        while (*p == ' ' || *p == '\t' || *p == ';')
            p++;
        end = strchr(p, ';');
        if (!end)
            end = p + strlen(p);
        if ((size_t)(end - p) > name_len && !strncmp(p, UI_SESSION_COOKIE, name_len) &&
            p[name_len] == '=') {
            p += name_len + 1;
            n = (size_t)(end - p);
            while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                n--;
            if (n >= size)
                return NULL;
            memcpy(buf, p, n);
            buf[n] = '\0';
            return buf;
        }
        p = end;
    }
    return NULL;
}
