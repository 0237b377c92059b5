/* trawl fuzz targets — printing an input that broke an invariant. */
#ifndef TRAWL_FUZZ_REPORT_H
#define TRAWL_FUZZ_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* Write N bytes of S to stderr in C string syntax, after LABEL. */
static inline void
print_bytes(const char *label, const char *s, size_t n)
{
  fprintf(stderr, "  %s (%zu bytes) \"", label, n);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(stderr, "\\%c", c);
    else if (c >= 32 && c < 127)
      fputc(c, stderr);
    else
      fprintf(stderr, "\\x%02x", c);
  }
  fputs("\"\n", stderr);
}

#endif /* TRAWL_FUZZ_REPORT_H */
