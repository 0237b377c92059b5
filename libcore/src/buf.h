/* trawl — a growable byte buffer for the walker's hot loops (private).
 *
 * GString's append checks for overlap and handles negative lengths on every
 * call, per directory entry; this is the plain version: append bytes, cut
 * back, always NUL-terminated (docs/adr/0005-no-calls-per-entry.md). */
#ifndef TRAWL_BUF_H
#define TRAWL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <glib.h>

/* memcpy() for the short runs of names and paths, inline: two overlapping
 * moves for 4 to 16 bytes, where a call costs more than the copy. */
static inline void
copy_short(void *dst, const void *src, size_t n)
{
  char *d = dst;
  const char *s = src;
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; i++)
      d[i] = s[i];
  } else {
    memcpy(d, s, n);
  }
}

struct buf {
  char *data;   /* NUL-terminated once anything was added; NULL before */
  size_t len;
  size_t cap;
};

static inline void
buf_reserve(struct buf *b, size_t extra)
{
  if (G_LIKELY(b->len + extra < b->cap))
    return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap <= b->len + extra)
    cap *= 2;
  b->data = g_realloc(b->data, cap);
  b->cap = cap;
}

static inline void
buf_add(struct buf *b, const void *bytes, size_t n)
{
  buf_reserve(b, n);
  copy_short(b->data + b->len, bytes, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static inline void
buf_addc(struct buf *b, char c)
{
  buf_reserve(b, 1);
  b->data[b->len++] = c;
  b->data[b->len] = '\0';
}

/* Cut back to LEN bytes (no longer than now). */
static inline void
buf_cut(struct buf *b, size_t len)
{
  buf_reserve(b, 0);
  b->len = len;
  b->data[len] = '\0';
}

static inline void
buf_free(struct buf *b)
{
  g_free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

#endif /* TRAWL_BUF_H */
