/*
 * The web assets built into the koord binary (DESIGN.md section 4, `web/`): the dashboard's
 * HTML, JavaScript and CSS (web/ui/), the HTML report's chart script (web/report/), and the
 * charting library's dist files (uPlot, from web/node_modules, installed by `make deps`). A
 * CMake step (cmake/embed.cmake) turns them into a generated C source at build time, so the
 * manager serves its dashboard and `koord sim` inlines its charts with no file on disk and no
 * request leaving the page.
 *
 * uPlot, not a larger library: about 50 KB minified, no dependencies, and drawn on a canvas so
 * that a time series of tens of thousands of points stays fast (docs/design.md).
 */
#ifndef KOORD_WEB_WEB_H
#define KOORD_WEB_WEB_H

#include <stddef.h>

/* One embedded file. Everything is static: never freed, shared by every thread. */
struct web_asset {
    const char *path;          /* e.g. "ui/index.html", "uplot/uPlot.iife.min.js" */
    const unsigned char *data; /* len bytes, then a NUL that len does not count */
    size_t len;
    const char *content_type; /* e.g. "text/javascript; charset=utf-8" */
    const char *etag;         /* quoted strong validator: "\"<hex>\"" (a prefix of SHA-256) */
};

/* The asset at path (no leading slash), or NULL. Any thread. */
const struct web_asset *web_asset_find(const char *path);

/* The assets in path order: web_asset_at(i) for i < web_asset_count(). */
size_t web_asset_count(void);
const struct web_asset *web_asset_at(size_t i);

#endif
