/* trawl — the digest of a build's answers (trawl/cache.h): what changes
 * exactly when some answer does, for a build tool that compares contents
 * rather than times (`trawl check --bump`, the Bazel plugin's stamp). It
 * needs nothing of the cache but the results a run leaves in its plans.
 */
#include <string.h>

#include "trawl/cache.h"

/* The digest's format, in one place: each result with its NUL, each query
 * ended by a newline. */
struct TrawlDigest {
  GChecksum *ck;
};

TrawlDigest *
trawl_digest_new(void)
{
  TrawlDigest *d = g_new(TrawlDigest, 1);
  d->ck = g_checksum_new(G_CHECKSUM_SHA256);
  return d;
}

void
trawl_digest_result(TrawlDigest *d, const char *path, size_t len)
{
  g_checksum_update(d->ck, (const guchar *)path, (gssize)len);
  g_checksum_update(d->ck, (const guchar *)"", 1);
}

void
trawl_digest_end_query(TrawlDigest *d)
{
  g_checksum_update(d->ck, (const guchar *)"\n", 1);
}

char *
trawl_digest_finish(TrawlDigest *d)
{
  char *hex = g_strdup(g_checksum_get_string(d->ck));
  g_checksum_free(d->ck);
  g_free(d);
  return hex;
}

char *
trawl_digest_plans(TrawlPlan *const *plans, size_t n)
{
  TrawlDigest *d = trawl_digest_new();
  for (size_t p = 0; p < n; p++) {
    const TrawlPlan *plan = plans[p];
    for (size_t q = 0; plan && q < trawl_plan_size(plan); q++) {
      const GPtrArray *r = trawl_plan_results(plan, q);
      for (guint i = 0; i < r->len; i++)
        trawl_digest_result(d, r->pdata[i], strlen(r->pdata[i]));
      trawl_digest_end_query(d);
    }
  }
  return trawl_digest_finish(d);
}
