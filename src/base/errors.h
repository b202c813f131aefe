/*
 * Error codes. Functions return >= 0 on success and -errno on failure; codes errno lacks are
 * defined here once, above the errno range, with an X-macro so err_str() covers them.
 */
#ifndef KOORD_ERRORS_H
#define KOORD_ERRORS_H

#define KOORD_ERRNO_MAP(X)                                                                         \
    X(EPARSE, 10001, "malformed input")                                                            \
    X(EINVALID, 10002, "object is invalid")                                                        \
    X(EUNKNOWNKIND, 10003, "unknown kind")

enum koord_errno {
#define KOORD_ERRNO_ENUM(name, val, msg) KOORD_##name = (val),
    KOORD_ERRNO_MAP(KOORD_ERRNO_ENUM)
#undef KOORD_ERRNO_ENUM
};

/* A static description of r (negative or positive), never NULL. */
const char *err_str(int r);

#endif
