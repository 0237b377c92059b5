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

struct listing_entry {
  uint32_t name_off; /* into listing.names */
  uint32_t name_len;
  uint8_t type;      /* DT_* as the file system reported it (DT_UNKNOWN allowed) */
};

struct listing {
  GArray *entries;   /* struct listing_entry */
  GString *names;
};

/* Prepare an empty listing; buffers are reused across directories. */
void listing_init(struct listing *l);
void listing_clear(struct listing *l);

/* Read every entry of directory FD into L (emptied first). FD stays open and
 * owned by the caller. Returns 0, or an errno value. */
int dirread_linux(int fd, struct listing *l);
int dirread_posix(int fd, struct listing *l);

/* True when the Linux reader is built in. */
bool dirread_linux_available(void);

#endif /* TRAWL_DIRREAD_H */
