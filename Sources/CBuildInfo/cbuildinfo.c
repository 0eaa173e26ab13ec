/*
 * The version and commit baked in by the build (see cbuildinfo.h). Only this file reads the
 * macros, so changing them recompiles it alone among the C sources.
 */
#include "cbuildinfo.h"

#ifndef THUMBD_VERSION
#define THUMBD_VERSION "dev"
#endif

#ifndef THUMBD_COMMIT
#define THUMBD_COMMIT "unknown"
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
