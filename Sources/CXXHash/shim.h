#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
