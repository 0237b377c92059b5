/* The library's own version, for callers that need the linked one. */
#include "trawl/version.h"

const char *
trawl_version(void)
{
  return TRAWL_VERSION_STRING;
}
