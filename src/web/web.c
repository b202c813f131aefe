/*
 * The lookup over the generated table of embedded assets (web.h): a binary search, the table
 * being sorted by path when it is generated.
 */
#include "web/web.h"

#include <string.h>

#include "web/web-int.h"

const struct web_asset *web_asset_find(const char *path)
{
    size_t lo = 0, hi = web__nassets;

    while (path && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(web__assets[mid].path, path);
        if (c == 0)
            return &web__assets[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

size_t web_asset_count(void)
{
    return web__nassets;
}

const struct web_asset *web_asset_at(size_t i)
{
    return i < web__nassets ? &web__assets[i] : NULL;
}
