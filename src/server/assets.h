#ifndef HS_SERVER_ASSETS_H
#define HS_SERVER_ASSETS_H
#include <stddef.h>

/*
 * assets - the web GUI's files (web/ and uPlot's dist files from npm),
 * embedded into the binary at build time by scripts/embed-assets.py, which
 * writes assets.c. The server serves these and nothing else.
 *
 * Ownership: everything is static.
 */
struct hs_asset {
	const char *path; /* URL path: "/index.html", "/js/api.js", ... */
	const char *type; /* Content-Type */
	const unsigned char *data;
	size_t len;
};

/* The asset at URL path @path (exact match), or NULL. */
const struct hs_asset *hs_asset_find(const char *path);
/* Asset @i in path order, or NULL past the end. */
const struct hs_asset *hs_asset_get(size_t i);
#endif
