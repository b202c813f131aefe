/* The table cmake/embed.cmake generates (build dir: web_assets.c), sorted by path. */
#ifndef KOORD_WEB_WEB_INT_H
#define KOORD_WEB_WEB_INT_H

#include <stddef.h>

#include "web/web.h"

extern const struct web_asset web__assets[];
extern const size_t web__nassets;

#endif
