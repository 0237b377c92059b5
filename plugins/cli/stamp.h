/* trawl — `--bump STAMP` (trawl check, trawl batch): a file whose content is
 * a digest of the results (trawl_digest_plans()), for build tools that
 * compare contents (Bazel reads it through a label; docs/bazel.md).
 *
 * What it promises: after a run that succeeded, STAMP holds the digest of
 * the results the cache holds. So it is written whenever that digest is not
 * what it holds (and only then: a rewrite with the same bytes would still
 * wake a tool that compares times). When it cannot be written it is
 * removed, so that no digest of older results stays behind next to a cache
 * that has newer ones.
 */
#ifndef TRAWL_CLI_STAMP_H
#define TRAWL_CLI_STAMP_H

#include <stdbool.h>

/* Make PATH hold DIGEST and a newline. false, with a message naming PATH,
 * when it cannot (PATH is then removed, if it can be). */
bool stamp_bump(const char *path, const char *digest);

#endif /* TRAWL_CLI_STAMP_H */
