/* trawl — `trawl check --checked FILE`: a file whose modification time says
 * when the caches were last proven current, for build tools that compare
 * modification times (Ninja; docs/cli.md, "trawl check"; docs/cmake.md).
 *
 * The build tool re-runs the check when some directory it watches is newer
 * than FILE. So FILE must end up older than every change the check may have
 * missed, and no older than needed. Before the check, FILE is touched and its
 * modification time read back: that is the file system's own "now", on its
 * clock (the kernel's coarse one) and at its granularity. When the check is
 * done, FILE is set one nanosecond before that time. A directory changed
 * after the check began has a modification time at or after it, so it is
 * newer than FILE; on a file system with whole seconds the time set is
 * truncated to the second before, and the same holds.
 */
#ifndef TRAWL_CLI_CHECK_MARK_H
#define TRAWL_CLI_CHECK_MARK_H

#include <stdbool.h>
#include <time.h>

/* Touch PATH (creating it) and read its new modification time into *START.
 * false, with a message naming PATH, when it cannot be done. */
bool check_mark_begin(const char *path, struct timespec *start);

/* Set PATH's modification (and access) time to one nanosecond before
 * *START. false, with a message, when it cannot be done. */
bool check_mark_end(const char *path, const struct timespec *start);

#endif /* TRAWL_CLI_CHECK_MARK_H */
