/* trawl — version of the library. Kept by hand (no generated header), so that
 * the sources build with one plain compiler command; meson.build reads the
 * same numbers from here. */
#ifndef TRAWL_VERSION_H
#define TRAWL_VERSION_H

#include "trawl/export.h"

#define TRAWL_VERSION_MAJOR 0
#define TRAWL_VERSION_MINOR 1
#define TRAWL_VERSION_MICRO 0
#define TRAWL_VERSION_STRING "0.1.0"

/* Not G_BEGIN_DECLS: this header includes nothing of GLib. Without it, C++
 * looked for a mangled trawl_version and failed to link. */
#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library actually linked, e.g. "0.1.0". */
TRAWL_API const char *trawl_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TRAWL_VERSION_H */
