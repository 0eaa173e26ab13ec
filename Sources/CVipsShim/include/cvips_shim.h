/*
 * cvips_shim: the few fixed-argument C functions the Swift `Rendering` module needs.
 *
 * Why this exists: libvips' C API is variadic (`vips_thumbnail(name, &out, w, "height", h, ...,
 * NULL)`), which Swift cannot call. Every multi-step libvips job (open, header, thumbnail, colour,
 * save) runs here in C; options travel in plain structs; `VipsImage *` never crosses into Swift.
 * Failures come back as a status plus the libvips error text, copied with
 * `vips_error_buffer_copy()` right where the failing call returned (the buffer is process-global).
 */
#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a shim call ended. Swift maps these onto `RenderError.Kind`. */
typedef enum {
    CVIPS_OK = 0,
    CVIPS_NOT_FOUND = 1,   /* open(2) said ENOENT / ENOTDIR */
    CVIPS_UNSUPPORTED = 2, /* not a regular file, empty, unknown format, undecodable */
    CVIPS_INTERNAL = 3,    /* a fault on our side: out of memory, encoder failure... */
    CVIPS_MOVED = 4,       /* cvips_source_open_resolved: a symlink is now on the way to the file */
    CVIPS_DENIED = 5,      /* open(2) said EACCES / EPERM: the file's permissions keep the server out */
    CVIPS_NO_DESCRIPTORS = 6, /* open(2) or libvips' dup(2) said EMFILE / ENFILE: no descriptor is free now */
    CVIPS_UNDECODABLE = 7, /* cvips_header_read: in a format thumbd reads, by its first bytes, but its
                              header does not decode (a lossless JPEG, SOF3, which libjpeg-turbo 2.1
                              refuses; a header cut short): as CVIPS_UNSUPPORTED, except that the
                              listing says which files it leaves out so */
} cvips_status;

/* Bytes kept of a failure's sentence, including the NUL. Longer texts are cut. */
#define CVIPS_MESSAGE_SIZE 512

/* Why a call failed: a status and one human sentence with the libvips error text. */
typedef struct {
    cvips_status status;
    char message[CVIPS_MESSAGE_SIZE];
} cvips_failure;

/* Output encodings, same order as Swift's `ImageFormat` cases. */
typedef enum {
    CVIPS_FORMAT_JPEG = 0,
    CVIPS_FORMAT_PNG = 1,
    CVIPS_FORMAT_WEBP = 2,
} cvips_format;

/* Header facts of a source, read without decoding pixels. */
typedef struct {
    int width;             /* px, as stored (page 0 of a multi-page file) */
    int height;            /* px, as stored (page 0 of a multi-page file) */
    int orientation;       /* EXIF orientation 1...8; 1 when absent or invalid */
    int pages;             /* n-pages; 1 when absent */
    int has_alpha;         /* 1 when libvips loads an alpha band */
    char loader[32];       /* libvips loader nickname, e.g. "jpegload" */
    char date_time_original[32];   /* EXIF DateTimeOriginal raw text, "" when absent */
    char offset_time_original[16]; /* EXIF OffsetTimeOriginal raw text, "" when absent */
    int needs_colour_transform;    /* 1 when an ICC transform to sRGB is needed: an embedded
                                      profile, or a space other than sRGB/grey (CMYK, LAB, ...) */
} cvips_header;

/* What to make of a source. */
typedef struct {
    int width;             /* exact output width after orientation, px (>= 1) */
    int height;            /* exact output height after orientation, px (>= 1) */
    int crop;              /* 1: cover (fill, centre crop); 0: contain (whole image) */
    cvips_format format;
    int quality;           /* JPEG/WebP Q, 1...100 */
    int png_compression;   /* zlib level 0...9 */
    int colour_transform;  /* 1: export_profile sRGB, perceptual intent (see cvips_header) */
    int placeholder_side;  /* > 0: also a placeholder image of at most this x this px, shrunk
                              from pixels the render decodes anyway (no second decode), of the
                              whole picture (a `cover` render of a source: see source_width;
                              of another thumbnail: its own pixels); 0: none */
    int source_width;      /* the source's size as shown (orientation applied), px, from its
                              header; 0 when not known. A square `cover` render from a source */
    int source_height;     /* that also makes a placeholder needs it: it decodes the covering
                              image uncropped, makes the placeholder of that, then crops */
} cvips_render_options;

/* An encoded thumbnail. `bytes` is g_malloc'ed: release it with cvips_thumbnail_free(). */
typedef struct {
    unsigned char *bytes;
    size_t length;         /* bytes */
    int width;             /* px */
    int height;            /* px */
    /* The placeholder (cvips_render_options.placeholder_side > 0): 8-bit sRGB RGBA, row by row,
     * not premultiplied, g_malloc'ed; NULL when not asked for or when it could not be made
     * (the render itself succeeded). */
    unsigned char *placeholder;
    size_t placeholder_length;     /* bytes: placeholder_width * placeholder_height * 4 */
    int placeholder_width;         /* px */
    int placeholder_height;        /* px */
    long placeholder_microseconds; /* what making it took, µs */
    /* 1 when the source is a JPEG that libvips refused at fail_on=truncated (cut short, or a
     * scan it could not finish) and that was rendered at fail_on=none instead: what decodes,
     * the rest filled as libjpeg fills it (grey). 0 otherwise. */
    int degraded;
} cvips_thumbnail;

/* Starts libvips once per process: vips_init, operation cache off (the server has its own
 * caches), every loader blocked but those of the formats thumbd reads (cvips_formats.c),
 * `concurrency` worker threads per pipeline. Later calls only set the concurrency.
 * Returns 0, or -1 with `failure` filled. */
int cvips_start(int concurrency, cvips_failure *failure);

/* The revision of the list of formats thumbd reads (cvips_formats.c, README "Formats"): it
 * changes whenever the list does, so that what an earlier list decided about a file (listed, or
 * not an image) is read again. */
int cvips_formats_revision(void);

/* glibc's M_ARENA_MAX (mallopt): call before threads start. Returns 1 on success. */
int cvips_limit_malloc_arenas(int arenas);

/* The bytes libvips holds through its tracked allocator now (pixel buffers, mostly) and the most
 * it has held at once since the process started: vips_tracked_get_mem() and
 * vips_tracked_get_mem_highwater(). Both 0 before cvips_start. Exist so Swift reads them without
 * importing <vips/vips.h> (and GLib's headers) through CVips. */
size_t cvips_tracked_memory(void);
size_t cvips_tracked_memory_highwater(void);

/* The version of the libvips loaded at run time ("8.14.1"): vips_version_string(). A static
 * string; needs no cvips_start. */
const char *cvips_version(void);

/* Opens `path` for reading without blocking (O_NONBLOCK: a FIFO must not hang a render thread)
 * and checks it is a non-empty regular file. Returns the descriptor (the caller closes it), or
 * -1 with `failure` filled. Exists so libvips never opens a name itself: no FIFO hangs, no
 * "name[options]" parsing of file names, and header and pixels come from the same file. */
int cvips_source_open(const char *path, cvips_failure *failure);

/* As cvips_source_open, for a `path` that had no symlink in it when the caller resolved it
 * (a realpath): refuses, with CVIPS_MOVED, to follow any symlink that has appeared on the way
 * since (a directory or the file swapped for a link, perhaps to outside the library).
 * openat2(RESOLVE_NO_SYMLINKS), or on kernels before 5.6 open(2) and then /proc/self/fd/N
 * must read back `path` exactly. */
int cvips_source_open_resolved(const char *path, cvips_failure *failure);

/* Reads the header of the file open on `fd` (sequential access: no pixels decoded; ImageMagick's
 * formats are read whole). A format thumbd does not read (cvips_formats.c) fails with
 * CVIPS_UNSUPPORTED, as a render of it does; one it reads whose header does not decode, with
 * CVIPS_UNDECODABLE. Returns 0, or -1 with `failure` filled. */
int cvips_header_read(int fd, cvips_header *header, cvips_failure *failure);

/* Renders the file open on `fd`, read as cvips_header_read reads it (cvips_formats.c):
 * vips_thumbnail_source with shrink-on-load (vips_thumbnail_image after ImageMagick's loader for
 * BMP, ICO and TGA), orientation applied,
 * sRGB 8-bit, exact size, alpha flattened on white for JPEG, metadata stripped, encoded; and
 * when asked, the placeholder image of the sRGB pixels before flattening (cvips_placeholder.c).
 * Decoded at fail_on=truncated; a JPEG refused there is decoded again at fail_on=none, as
 * browsers show it, and marked `degraded` (one that fails then too is CVIPS_UNSUPPORTED).
 * Returns 0 with `thumbnail` filled, or -1 with `failure` filled. */
int cvips_render(int fd, const cvips_render_options *options, cvips_thumbnail *thumbnail,
                 cvips_failure *failure);

/* Renders a thumbnail from another thumbnail's encoded bytes (JPEG, PNG or WebP that thumbd
 * made: sRGB, upright, no metadata), `length` bytes at `bytes`, as cvips_render does from a
 * source: a smaller grid from a cached larger one, with no decode of the original. The bytes
 * are only read, and need live only for the call. Returns 0, or -1 with `failure` filled. */
int cvips_render_encoded(const void *bytes, size_t length, const cvips_render_options *options,
                         cvips_thumbnail *thumbnail, cvips_failure *failure);

/* Renders a decoded frame: `pixels` packed 8-bit RGB, `width` x `height` px, rows of exactly
 * width * 3 bytes (no padding), `length` bytes in all; `orientation` (EXIF 1...8) applied as a
 * photo's is, then the same steps as cvips_render (vips_thumbnail_image, exact size, sRGB,
 * metadata stripped, encoded). A video's poster frame reaches libvips this way, so output rules
 * stay one implementation. `pixels` is read, not kept. Returns 0 with `thumbnail` filled, or -1
 * with `failure` filled. */
int cvips_render_pixels(const unsigned char *pixels, size_t length, int width, int height, int orientation,
                        const cvips_render_options *options, cvips_thumbnail *thumbnail,
                        cvips_failure *failure);

/* What a source's embedded preview gave (cvips_preview_read). */
typedef enum {
    CVIPS_PREVIEW_ABSENT = 0,     /* none: no EXIF thumbnail, no HEIF thumbnail item, another
                                     format, or one that does not decode or is over 1024 px */
    CVIPS_PREVIEW_MISMATCHED = 1, /* one whose shape is not the photo's: not trusted */
    CVIPS_PREVIEW_MADE = 2,       /* trusted: `image.placeholder` holds its placeholder image */
} cvips_preview_status;

/* A source's embedded preview and the placeholder image made from it. Release with
 * cvips_thumbnail_free(&preview.image). */
typedef struct {
    cvips_preview_status status;
    int photo_width, photo_height;     /* px, the photo as shown (EXIF orientation applied) */
    int preview_width, preview_height; /* px, the preview as shown; 0 when ABSENT */
    /* MADE: only the placeholder fields are set (bytes NULL): 8-bit sRGB RGBA, upright. */
    cvips_thumbnail image;
} cvips_preview;

/* Reads the embedded preview of the file open on `fd` (the EXIF thumbnail of a JPEG, through
 * libexif; the thumbnail item of a HEIF, through heifload's `thumbnail`) without decoding the
 * photo, and when its shape after the photo's orientation is the photo's (each side within 1 px
 * of the photo's shape scaled to the other), makes the placeholder image of at most `side` x
 * `side` px from it (cvips_placeholder.c). Returns 0 with `preview` filled (status ABSENT,
 * MISMATCHED or MADE), or -1 with `failure` filled when the photo's own header cannot be read,
 * as cvips_header_read fails. */
int cvips_preview_read(int fd, int side, cvips_preview *preview, cvips_failure *failure);

/* Frees the bytes and the placeholder of a thumbnail made by cvips_render (g_free). */
void cvips_thumbnail_free(cvips_thumbnail *thumbnail);

/* Ends a job on the calling thread: vips_error_clear() and vips_thread_shutdown(), which frees
 * libvips' per-thread buffers (render threads are long-lived pool threads). */
void cvips_job_end(void);

#ifdef __cplusplus
}
#endif

#endif /* CVIPS_SHIM_H */
