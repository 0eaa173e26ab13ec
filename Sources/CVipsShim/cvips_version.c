/*
 * The libvips thumbd runs with, for `thumbd --version`, /stats and /metrics.
 *
 * Why this exists: the Swift modules import only cvips_shim.h, never <vips/vips.h>; the version
 * is read from the library loaded at run time (vips_version_string), not from the headers built
 * against, so an upgraded libvips shows without a rebuild.
 */
#include "cvips_internal.h"

const char *
cvips_version(void)
{
    return vips_version_string();
}
