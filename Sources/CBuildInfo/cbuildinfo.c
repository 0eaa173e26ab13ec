/*
 * The version and commit baked in by the build (see cbuildinfo.h). Only this file reads the
 * macros. packaging/build-deb.sh writes them into thumbd_build_info.h in a directory it adds
 * with a fixed -Xcc -I, so a new commit recompiles this file alone (a -D that changed would
 * change every compile command, and rebuild everything).
 */
#include "cbuildinfo.h"

#if __has_include("thumbd_build_info.h")
#include "thumbd_build_info.h"
#endif

/* Empty: not baked in (a plain `swift build`); BuildInfo says so in words. */
#ifndef THUMBD_VERSION
#define THUMBD_VERSION ""
#endif

#ifndef THUMBD_COMMIT
#define THUMBD_COMMIT ""
#endif

const char *
cbuildinfo_version(void)
{
    return THUMBD_VERSION;
}

const char *
cbuildinfo_commit(void)
{
    return THUMBD_COMMIT;
}
