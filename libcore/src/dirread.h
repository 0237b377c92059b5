/* trawl — directory readers behind one small interface (private).
 *
 * A reader turns an open directory descriptor into a listing: every entry's
 * name (NUL-terminated, in one reused buffer) and its d_type, "." and ".."
 * left out. Two readers pass the same suite: dirread-linux.c (getdents64 into
 * a large buffer, no libc stream) and dirread-posix.c (fdopendir/readdir).
 * Both files always compile; the Linux one reports ENOSYS elsewhere.
 */
#ifndef TRAWL_DIRREAD_H
#define TRAWL_DIRREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "buf.h"

struct listing_entry {
  uint32_t name_off; /* into listing.names */
  uint32_t name_len;
  uint8_t type;      /* DT_* as the file system reported it (DT_UNKNOWN allowed) */
};

struct listing {
  struct listing_entry *entries;
  size_t n, cap;
  struct buf names;  /* each name followed by its NUL */
  void *raw;         /* the Linux reader's getdents64 buffer, once used */
};

/* Prepare an empty listing; buffers are reused across directories. */
void listing_init(struct listing *l);
void listing_clear(struct listing *l);
void listing_free(struct listing *l);

/* Append one entry. */
static inline void
listing_add(struct listing *l, const char *name, size_t len, uint8_t type)
{
  if (G_UNLIKELY(l->n == l->cap)) {
    l->cap = l->cap ? l->cap * 2 : 256;
    l->entries = g_renew(struct listing_entry, l->entries, l->cap);
  }
  struct listing_entry *e = &l->entries[l->n++];
  e->name_off = (uint32_t)l->names.len;
  e->name_len = (uint32_t)len;
  e->type = type;
  buf_add(&l->names, name, len + 1);
}

/* Read every entry of directory FD into L (emptied first). FD stays open and
 * owned by the caller. Returns 0, or an errno value. */
int dirread_linux(int fd, struct listing *l);
int dirread_posix(int fd, struct listing *l);

/* True when the Linux reader is built in. */
bool dirread_linux_available(void);

#endif /* TRAWL_DIRREAD_H */
