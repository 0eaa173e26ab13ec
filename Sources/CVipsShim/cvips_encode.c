/*
 * Encoding a finished thumbnail.
 *
 * Why this exists: the savers are variadic. All three strip metadata (`strip`, libvips 8.14;
 * 8.15 replaced it with `keep`): no EXIF, GPS, XMP, IPTC or ICC profile in any thumbnail.
 */
#include "cvips_internal.h"
#include <webp/mux.h>

/* libvips 8.14's webpsave ignores `strip` (it still writes EXIF, XMP and ICCP chunks), so the
 * metadata is removed from a private copy before any saver sees it: every field of the image's
 * meta table (exif-*, xmp-data, iptc-data, icc-profile-data, ...). Built-in header fields such as
 * width and interpretation are not in that table and stay. */
static int
cvips_strip_copy(VipsImage *in, VipsImage **out)
{
    if (vips_copy(in, out, NULL))
        return -1;
    gchar **fields = vips_image_get_fields(*out);
    for (int i = 0; fields[i]; i++)
        vips_image_remove(*out, fields[i]);
    g_strfreev(fields);
    return 0;
}

static int
cvips_save(VipsImage *in, const cvips_render_options *options,
           void **bytes, size_t *length);

/* Even with no metadata on the image, libvips 8.14's webpsave writes an EXIF chunk built from
 * the resolution and orientation fields. libwebpmux (Debian libwebp-dev) removes the EXIF, XMP
 * and ICCP chunks and reassembles the file; the bitstream is not touched. On success the
 * buffer is replaced (g_free'd as before); on failure it is freed and -1 returned. */
static int
cvips_webp_drop_metadata(void **bytes, size_t *length)
{
    WebPData input = { (const uint8_t *) *bytes, *length };
    WebPMux *mux = WebPMuxCreate(&input, 0);
    if (!mux) {
        vips_error("cvips_encode", "libwebpmux cannot parse the encoded WebP");
        g_free(*bytes);
        *bytes = NULL;
        return -1;
    }
    WebPMuxDeleteChunk(mux, "EXIF");
    WebPMuxDeleteChunk(mux, "XMP ");
    WebPMuxDeleteChunk(mux, "ICCP");
    WebPData output = { NULL, 0 };
    WebPMuxError status = WebPMuxAssemble(mux, &output);
    WebPMuxDelete(mux);
    g_free(*bytes);
    *bytes = NULL;
    if (status != WEBP_MUX_OK) {
        vips_error("cvips_encode", "libwebpmux cannot reassemble the WebP (%d)", (int) status);
        return -1;
    }
    *bytes = g_memdup2(output.bytes, output.size);
    *length = output.size;
    WebPDataClear(&output);
    return 0;
}

int
cvips_encode(VipsImage *in, const cvips_render_options *options,
             void **bytes, size_t *length)
{
    VipsImage *bare;
    if (cvips_strip_copy(in, &bare))
        return -1;
    int result = cvips_save(bare, options, bytes, length);
    g_object_unref(bare);
    return result;
}

static int
cvips_save(VipsImage *in, const cvips_render_options *options,
           void **bytes, size_t *length)
{
    switch (options->format) {
    case CVIPS_FORMAT_JPEG:
        return vips_jpegsave_buffer(in, bytes, length,
            "Q", options->quality,
            "optimize_coding", TRUE,
            "strip", TRUE,
            NULL);
    case CVIPS_FORMAT_PNG:
        return vips_pngsave_buffer(in, bytes, length,
            "compression", options->png_compression,
            "strip", TRUE,
            NULL);
    case CVIPS_FORMAT_WEBP:
        if (vips_webpsave_buffer(in, bytes, length,
                "Q", options->quality,
                "strip", TRUE,
                NULL))
            return -1;
        return cvips_webp_drop_metadata(bytes, length);
    }

    vips_error("cvips_encode", "unknown output format %d", (int) options->format);
    return -1;
}
