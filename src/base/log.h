/*
 * Logging: one logfmt line per event on stderr,
 *   ts=2026-11-22T10:00:00Z level=info comp=manager msg="started"
 * Library modules log at debug only; the caller that decides logs once. The level is tested
 * before the arguments are evaluated.
 */
#ifndef KOORD_LOG_H
#define KOORD_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

extern enum log_level log_max_level;

/* "debug"|"info"|"warn"|"error" -> 0, else -EINVAL. */
int log_set_level(const char *name);

void log_emit(enum log_level level, const char *comp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_at(level, comp, ...)                                                                   \
    do {                                                                                           \
        if ((level) <= log_max_level)                                                              \
            log_emit((level), (comp), __VA_ARGS__);                                                \
    } while (0)
#define log_debug(comp, ...) log_at(LOG_DEBUG, comp, __VA_ARGS__)
#define log_info(comp, ...)  log_at(LOG_INFO, comp, __VA_ARGS__)
#define log_warn(comp, ...)  log_at(LOG_WARN, comp, __VA_ARGS__)
#define log_error(comp, ...) log_at(LOG_ERROR, comp, __VA_ARGS__)

#endif
