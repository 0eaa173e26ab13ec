/*
 * libvips' own count of the memory it holds, for /stats and /metrics.
 *
 * Why this exists: the Swift modules import only cvips_shim.h, never <vips/vips.h> and the GLib
 * headers behind it; these two fixed-argument calls are all they need of libvips' memory API.
 */
#include "cvips_internal.h"

size_t
cvips_tracked_memory(void)
{
    return vips_tracked_get_mem();
}

size_t
cvips_tracked_memory_highwater(void)
{
    return vips_tracked_get_mem_highwater();
}
