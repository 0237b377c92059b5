/* trawl — symbol visibility.
 *
 * libcore is compiled with -fvisibility=hidden; only declarations marked
 * TRAWL_API are exported from the shared library. Building the sources with a
 * plain compiler command (no Meson) needs nothing defined: the attribute is
 * harmless in a static link or a single executable.
 */
#ifndef TRAWL_EXPORT_H
#define TRAWL_EXPORT_H

#if defined(_WIN32)
#  if defined(TRAWL_BUILDING_DLL)
#    define TRAWL_API __declspec(dllexport)
#  else
#    define TRAWL_API
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define TRAWL_API __attribute__((visibility("default")))
#else
#  define TRAWL_API
#endif

#endif /* TRAWL_EXPORT_H */
