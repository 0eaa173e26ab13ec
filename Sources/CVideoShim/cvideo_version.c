/*
 * The FFmpeg thumbd runs with, for `thumbd --version`, /stats and /metrics.
 *
 * Why this exists: libav's version calls and macros stay in C (no libav header reaches Swift);
 * both are read from the libraries loaded at run time, not from the headers built against, so
 * a security update of Debian's FFmpeg shows without a rebuild.
 */
#include <stdio.h>

#include <libavutil/avutil.h>

#include "cvideo_internal.h"

const char *
cvideo_ffmpeg_version(void)
{
    return av_version_info();
}

void
cvideo_avformat_version(char *buffer, size_t size)
{
    unsigned version = avformat_version();

    snprintf(buffer, size, "%u.%u.%u", AV_VERSION_MAJOR(version), AV_VERSION_MINOR(version), AV_VERSION_MICRO(version));
}
