/* FFmpeg 5.1 from Debian 12 (libavformat-dev, libavcodec-dev, libavutil-dev, libswscale-dev, libavfilter-dev):
 * only CVideoShim includes these; no libav type reaches Swift. */
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libswscale/swscale.h>
#include <libavfilter/avfilter.h>
