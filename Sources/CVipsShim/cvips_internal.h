/*
 * Helpers shared by the shim's .c files; not part of the public header.
 */
#ifndef CVIPS_INTERNAL_H
#define CVIPS_INTERNAL_H

#include <vips/vips.h>
#include "cvips_shim.h"

/* Fills `failure` with `status` and "`what`: <libvips error text>", taking (and clearing) the
 * process-global libvips error buffer right now, before another call can add to it. A text that
 * says "out of memory" turns any status into CVIPS_INTERNAL: that is our fault, not the
 * source's. Always returns -1, so callers can `return cvips_fail(...)`. */
int cvips_fail(cvips_failure *failure, cvips_status status, const char *what);

/* Like cvips_fail for a failed system call: "`what`: strerror(errnum)". */
int cvips_fail_errno(cvips_failure *failure, cvips_status status, const char *what, int errnum);

/* A VipsSource on `fd`, read from offset 0 (vips_source_new_from_descriptor dup()s the fd, and
 * the dup shares the file offset, so it is rewound first). NULL with `failure` filled. */
VipsSource *cvips_source_at_start(int fd, cvips_failure *failure);

/* Blocks every libvips loader but those of the formats thumbd reads (cvips_formats.c). Once,
 * from cvips_start, after vips_init. */
void cvips_formats_restrict(void);

/* How the file open on `fd` (with `source` on it) is read, the one decision that the header read
 * (the listing) and the render both take (cvips_formats.c): 0 with `*coder` NULL, by the libvips
 * loader that claims it, one of the list; 0 with `*coder` set, by that ImageMagick coder
 * (cvips_magick_load); -1 with `failure` filled (CVIPS_UNSUPPORTED) for a format not read. */
int cvips_source_format(VipsSource *source, int fd, const char **coder, cvips_failure *failure);

/* Loads the file open on `fd` with ImageMagick's `coder` and no other (fail_on=truncated).
 * 0, or -1 with `failure` filled (CVIPS_UNSUPPORTED, or CVIPS_INTERNAL out of memory). */
int cvips_magick_load(int fd, const char *coder, VipsImage **out, cvips_failure *failure);

/* The end of a render from a file or from another thumbnail's bytes, once libvips' thumbnail
 * operation gave `thumbnailed`: decoded into memory (a decode error is the source's), then
 * cvips_deliver. Takes `context` (every intermediate hangs off it) and unrefs it.
 * Returns 0 with `thumbnail` filled, or -1 with `failure` filled. */
int cvips_render_finish(VipsObject *context, VipsImage *thumbnailed, const cvips_render_options *options,
                        cvips_thumbnail *thumbnail, cvips_failure *failure);

/* Makes `in` exactly `width` x `height` px when vips_thumbnail missed by rounding: a centre
 * crop for any excess, a tiny resize (and as a last resort an edge-copy embed) for any
 * shortfall. 0, or -1 with the libvips error pending. */
int cvips_exact_size(VipsObject *context, VipsImage *in, VipsImage **out, int width, int height);

/* Makes `in` 8-bit sRGB (3 bands, or 4 with alpha): grey, 16-bit, CMYK, Lab and oddly tagged
 * images are converted. 0, or -1 with the libvips error pending. */
int cvips_to_srgb8(VipsObject *context, VipsImage *in, VipsImage **out);

/* Flattens an alpha band onto white (JPEG has no alpha). `in` must be 8-bit. 0, or -1. */
int cvips_flatten_white(VipsObject *context, VipsImage *in, VipsImage **out);

/* Encodes `in` with metadata stripped. 0, or -1 with the libvips error pending. */
int cvips_encode(VipsImage *in, const cvips_render_options *options,
                 void **bytes, size_t *length);

/* Fills `thumbnail`'s placeholder from `in` (8-bit sRGB, 3 or 4 bands): shrunk to at most
 * `side` x `side` px, RGBA. Leaves it NULL, with no libvips error pending, when it fails. */
void cvips_placeholder(VipsObject *context, VipsImage *in, int side, cvips_thumbnail *thumbnail);

/* The placeholder of the whole picture for a `cover` render, whose thumbnail is its centre
 * square, when the render holds the whole picture decoded (`whole`: ImageMagick's load, a
 * video's frame): fitted into `side` x `side` px with its aspect ratio, then as
 * cvips_placeholder. Best effort: leaves the placeholder NULL, with no libvips error pending,
 * when it fails. */
void cvips_placeholder_of_whole(VipsObject *context, VipsImage *whole, const cvips_render_options *options,
                                cvips_thumbnail *thumbnail);

/* The render's last steps, for a decoded image `in` of about the thumbnail's size: exact size,
 * 8-bit sRGB, alpha flattened on white for JPEG, encoded into `thumbnail`. Unrefs `context`
 * (which owns `in` and every intermediate) in every case. 0, or -1 with `failure` filled. */
int cvips_deliver(VipsObject *context, VipsImage *in, const cvips_render_options *options,
                  cvips_thumbnail *thumbnail, cvips_failure *failure);

#endif /* CVIPS_INTERNAL_H */
