/* trawl — storage for many short strings, copied one after another into
 * blocks and freed together (private; plan.c, cache/cache.c,
 * cache/cachefile.c). */
#ifndef TRAWL_ARENA_H
#define TRAWL_ARENA_H

#include <string.h>
#include <glib.h>

struct arena {
  GPtrArray *blocks;       /* char *, freed with the arena */
  char *at;
  size_t left;
};

enum { ARENA_BLOCK = 64 * 1024 };

/* LEN bytes in A, to fill. */
static inline char *
arena_alloc(struct arena *a, size_t len)
{
  if (G_UNLIKELY(len > a->left)) {
    const size_t size = MAX((size_t)ARENA_BLOCK, len);
    if (a->blocks == NULL)
      a->blocks = g_ptr_array_new_with_free_func(g_free);
    a->at = (char *)g_malloc(size);
    a->left = size;
    g_ptr_array_add(a->blocks, a->at);
  }
  char *p = a->at;
  a->at += len;
  a->left -= len;
  return p;
}

/* A copy of the LEN bytes at S, NUL-terminated, in A. Inline: it runs per
 * result (docs/adr/0005-no-calls-per-entry.md). */
static inline const char *
arena_copy(struct arena *a, const char *s, size_t len)
{
  char *copy = arena_alloc(a, len + 1);
  memcpy(copy, s, len);
  copy[len] = '\0';
  return copy;
}

static inline void
arena_clear(struct arena *a)
{
  if (a->blocks)
    g_ptr_array_unref(a->blocks);
  memset(a, 0, sizeof *a);
}

#endif /* TRAWL_ARENA_H */
