/* trawl batch [OPTIONS] QUERIES — many queries, one walk per root
 * (docs/cli.md, "trawl batch", is its reference).
 *
 * Shape: read the whole input; decode each line that is not blank into a
 * query — the JSON reader (json.h), then the key table below, then the
 * patterns compiled in the query's dialect — and report every bad line,
 * not only the first. If any line was bad, stop: exit 2. Otherwise add the
 * queries to one plan (trawl/plan.h) and run it: queries that share a root
 * and the settings that shape the traversal share one walk. Only when
 * every query has been answered is anything printed: one JSON line per
 * query, in input order. A consumer never sees part of an answer as if it
 * were the whole.
 */
#define _POSIX_C_SOURCE 200809L /* open, read */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../cmake/format-cmake.h"
#include "../../libcore/src/json/json.h"
#include "output.h"
#include "queries.h"
#include "stamp.h"
#include "trawl/cache.h"
#include "trawl/plan.h"

/* -j when not given. */
#define UNSET_NUMBER INT_MIN

static const char batch_description[] =
  "QUERIES is a file of JSON lines, or '-' for stdin. Each line that is not\n"
  "blank is one query, an object with the keys:\n"
  "  id         a string or an integer, echoed back as written (required,\n"
  "             unique)\n"
  "  root       the directory to walk (default \".\"), as -C\n"
  "  include    array of patterns (required, at least one)\n"
  "  exclude    array of patterns (default []), as -x\n"
  "  dialect    \"trawl\" (default), \"git\", \"cmake\" or \"bazel\", as --dialect\n"
  "  hidden     true: visit hidden entries, as -H (default false)\n"
  "  ignore     false: read no ignore file, as -I (default true)\n"
  "  follow     true: follow symbolic links, as -L (default false)\n"
  "  type       array of \"f\", \"d\", \"l\" (default [\"f\"]), as -t\n"
  "  max_depth  an integer 0 or more, as -d (default unlimited)\n"
  "Each query gets exactly what `trawl` with those options prints; queries\n"
  "with the same root and the same ignore and follow settings share one walk.\n"
  "\n"
  "Prints one line per query, in input order, once every query is answered:\n"
  "  {\"id\":ID,\"paths\":[\"PATH\",...]}\n"
  "paths sorted bytewise and escaped as `trawl --format json` escapes them.\n"
  "\n"
  "A bad line (invalid JSON, an unknown or repeated key, a wrong type, a bad\n"
  "pattern, a repeated id) or a root that cannot be walked is reported as\n"
  "QUERIES:LINE: KEY: why; every bad line is reported, and nothing is printed\n"
  "on stdout.\n"
  "\n"
  "Exit status: 0 every query was answered; 2 usage error, a bad line or a\n"
  "root that cannot be walked; 3 writing the output failed, or --strict and\n"
  "a problem (an unreadable directory, a link loop) was reported.";

/* ---- Input and output ---- */

/* The whole of PATH ("-": stdin) into *OUT; false with a message. */
static bool
read_input(const char *path, const char *name, GString *out)
{
  int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  int err = 0;
  if (fd < 0) {
    err = errno;
  } else {
    char buf[64 * 1024];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        g_string_append_len(out, buf, n);
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        err = errno;
        break;
      }
    }
    if (fd != STDIN_FILENO)
      close(fd);
  }
  if (err == 0)
    return true;
  char *message = g_strdup_printf("%s: %s", name, g_strerror(err));
  cli_print_message(message);
  g_free(message);
  return false;
}

/* ---- The answers ---- */

/* One query's paths, handed over while the walk runs (trawl_plan_run_each)
 * and kept until every query is answered: each as the length of the part it
 * shares with the one before (they come sorted) and the rest, in blocks that
 * are never grown or copied — fewer fresh pages than the plan's own copies
 * (docs/adr/0005-no-calls-per-entry.md). */
struct block {
  guint8 *data;
  size_t len, size;
};

/* Bytes of our own: GString's checked calls cost as much as a path's other
 * work. */
struct text {
  char *s;
  size_t len, size;
};

/* Make T the first SHARED bytes it holds, then the REST bytes at FROM. */
static inline void
text_splice(struct text *t, size_t shared, const char *from, size_t rest)
{
  if (shared + rest > t->size) {
    t->size = MAX(2 * t->size, shared + rest);
    t->s = g_realloc(t->s, t->size);
  }
  output_copy(t->s + shared, from, rest);
  t->len = shared + rest;
}

/* How many bytes A and B (N bytes each at least) have in common at the
 * start; eight at a time. */
static inline size_t
common_prefix(const char *a, const char *b, size_t n)
{
  size_t i = 0;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  for (; i + 8 <= n; i += 8) {
    guint64 x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y)
      return i + (size_t)(__builtin_ctzll(x ^ y) >> 3);
  }
#endif
  while (i < n && a[i] == b[i])
    i++;
  return i;
}

struct spool {
  GArray *blocks;            /* struct block; the last one's len is size - left */
  guint8 *at;                /* where the next path goes, in the last block */
  size_t left;               /* bytes free there */
  struct text last;          /* the path before */
  size_t n;                  /* paths */
};

#define SPOOL_BLOCK (64 * 1024)

/* Start a block with room for N bytes at least. */
static void
spool_grow(struct spool *sp, size_t n)
{
  if (sp->blocks->len)
    g_array_index(sp->blocks, struct block, sp->blocks->len - 1).len -= sp->left;
  const size_t size = MAX((size_t)SPOOL_BLOCK, n);
  struct block fresh = {g_malloc(size), size, size};
  g_array_append_val(sp->blocks, fresh);
  sp->at = fresh.data;
  sp->left = size;
}

static guint8 *
put_varint(guint8 *at, size_t v)
{
  for (; v >= 0x80; v >>= 7)
    *at++ = (guint8)(v | 0x80);
  *at++ = (guint8)v;
  return at;
}

static const guint8 *
get_varint(const guint8 *at, size_t *v)
{
  size_t x = 0;
  for (unsigned shift = 0;; shift += 7) {
    const guint8 b = *at++;
    x |= (size_t)(b & 0x7f) << shift;
    if (b < 0x80)
      break;
  }
  *v = x;
  return at;
}

/* TrawlPlanResultFunc: PATH, a result of query Q, onto its spool. */
static void
spool_path(size_t q, const char *path, size_t len, void *data)
{
  struct spool *sp = (struct spool *)data + q;
  const size_t shared = common_prefix(path, sp->last.s, MIN(len, sp->last.len));
  const size_t rest = len - shared;
  if (G_UNLIKELY(sp->left < 2 * 10 + rest))
    spool_grow(sp, 2 * 10 + rest);
  guint8 *at = sp->at;
  if (G_LIKELY(shared < 0x80 && rest < 0x80)) {
    at[0] = (guint8)shared;
    at[1] = (guint8)rest;
    at += 2;
  } else {
    at = put_varint(at, shared);
    at = put_varint(at, rest);
  }
  output_copy(at, path + shared, rest);
  at += rest;
  sp->left -= (size_t)(at - sp->at);
  sp->at = at;
  text_splice(&sp->last, shared, path + shared, rest);
  sp->n++;
}

static struct spool *
spools_new(size_t n)
{
  struct spool *sp = g_new0(struct spool, MAX(n, 1u));
  for (size_t i = 0; i < n; i++) {
    sp[i].blocks = g_array_new(FALSE, FALSE, sizeof(struct block));
  }
  return sp;
}

static void
spools_free(struct spool *sp, size_t n)
{
  for (size_t i = 0; sp && i < n; i++) {
    for (guint k = 0; k < sp[i].blocks->len; k++)
      g_free(g_array_index(sp[i].blocks, struct block, k).data);
    g_array_unref(sp[i].blocks);
    g_free(sp[i].last.s);
  }
  g_free(sp);
}

/* output_json_item() for print_spool(). */
static void
json_item(output *out, bool first, const char *s, size_t len, void *data)
{
  (void)data;
  output_json_item(out, first, s, len);
}

/* SP's paths, each handed to ITEM (json_item: an item of a JSON array) with
 * DATA, onto OUT. */
static void
print_spool(output *out, const struct spool *sp,
            void (*item)(output *, bool, const char *, size_t, void *), void *data)
{
  struct text path = {NULL, 0, 0};
  bool first = true;
  for (guint k = 0; k < sp->blocks->len; k++) {
    const struct block *bl = &g_array_index(sp->blocks, struct block, k);
    const size_t used = k + 1 < sp->blocks->len ? bl->len : bl->size - sp->left;
    for (const guint8 *at = bl->data, *end = bl->data + used; at < end;) {
      size_t shared, rest;
      at = get_varint(at, &shared);
      at = get_varint(at, &rest);
      text_splice(&path, shared, (const char *)at, rest);
      at += rest;
      item(out, first, path.s, path.len, data);
      first = false;
    }
  }
  g_free(path.s);
}

/* print_spool()'s item for --bump: the path into the digest. */
static void
digest_item(output *out, bool first, const char *s, size_t len, void *data)
{
  (void)out, (void)first;
  trawl_digest_result(data, s, len);
}

/* --bump: STAMP made to hold the digest of every query's results, as
 * `trawl check --bump` writes it (stamp.h). */
static bool
bump_results(const char *stamp, const struct spool *spools, size_t n)
{
  TrawlDigest *d = trawl_digest_new();
  for (size_t i = 0; i < n; i++) {
    print_spool(NULL, &spools[i], digest_item, d);
    trawl_digest_end_query(d);
  }
  char *digest = trawl_digest_finish(d);
  bool ok = stamp_bump(stamp, digest);
  g_free(digest);
  return ok;
}

/* Print every query's record from SPOOLS; false if writing failed (errno
 * in *ERR). */
static bool
print_results(const struct query_reader *b, bool cmake, const struct spool *spools, int *err)
{
  output out;
  output_init(&out, STDOUT_FILENO, OUTPUT_LINES, "", 0);
  for (guint i = 0; i < b->queries->len && out.error == 0; i++) {
    const struct query *q = b->queries->pdata[i];
    if (cmake) { /* --format cmake (format-cmake.h) */
      cmake_writer w;
      cmake_query_begin(&out, &w, i + 1, q->id, q->id_len);
      print_spool(&out, &spools[i], cmake_query_path, &w);
      cmake_query_end(&out, &w);
      continue;
    }
    output_raw(&out, "{\"id\":", 6);
    output_raw(&out, q->id, q->id_len);
    output_raw(&out, ",\"paths\":[", 10);
    print_spool(&out, &spools[i], json_item, NULL);
    output_raw(&out, "]}\n", 3);
  }
  if (cmake)
    cmake_batch_end(&out, b->queries->len);
  bool ok = output_end(&out);
  *err = out.error;
  output_release(&out);
  return ok;
}

/* Each query whose root could not be walked, by its line. */
static void
report_root_errors(struct query_reader *b, const TrawlPlan *plan)
{
  for (guint i = 0; i < b->queries->len; i++) {
    const GError *error = trawl_plan_error(plan, i);
    if (error == NULL)
      continue;
    b->line = ((const struct query *)b->queries->pdata[i])->line;
    query_reader_error(b, "root", "%s", error->message);
  }
}

/* Answer the decoded queries; returns the exit code. */
static int
run_queries(struct query_reader *b, bool cmake, bool strict, bool stats, gint64 start,
            const char *cache, const char *bump)
{
  TrawlPlan *plan = trawl_plan_new();
  for (guint i = 0; i < b->queries->len; i++) {
    const struct query *q = b->queries->pdata[i];
    TrawlQuery tq = {
      .root = q->root,
      .includes = (const TrawlPattern *const *)q->includes->pdata,
      .n_includes = q->includes->len,
      .excludes = (const TrawlPattern *const *)q->excludes->pdata,
      .n_excludes = q->excludes->len,
      .options = &q->options,
    };
    trawl_plan_add(plan, &tq);
  }
  int status = EXIT_OK;
  TrawlCacheReport rep;
  memset(&rep, 0, sizeof rep);
  /* The results go straight into the spools, with a cache too (from its
   * records, when the tree is as it was). */
  struct spool *spools = spools_new(b->queries->len);
  /* With --bump, a cache whose answers changed is written after the stamp,
   * as trawl check does: a batch killed between the two must not leave a
   * cache that tells another build's check "current" while the stamp that
   * build watches still holds the old digest (Bazel's output bases share
   * both). */
  const unsigned flags = bump ? TRAWL_CACHE_HOLD_CHANGED : 0;
  bool ran = cache ? trawl_cache_run_each(plan, cache, flags, spool_path, spools, &rep,
                                          NULL)
                   : trawl_plan_run_each(plan, spool_path, spools, NULL);
  if (!ran) {
    report_root_errors(b, plan);
    status = EXIT_USAGE;
  } else {
    int err = 0;
    bool written = print_results(b, cmake, spools, &err);
    unsigned problems = cli_report_plan_problems(plan, NULL);
    if (!written) {
      cli_report_write_error(err);
      status = EXIT_IO;
    } else if (strict && problems > 0) {
      status = EXIT_IO;
    }
    if (bump && !bump_results(bump, spools, b->queries->len))
      status = EXIT_IO;
    else if (cache)
      trawl_cache_store(plan, &rep);
  }
  if (cache)
    cli_report_cache(cache, &rep);
  if (stats)
    cli_report_plan_stats(b->queries->len, "query", "queries", plan, cache ? &rep : NULL, start);
  trawl_cache_report_clear(&rep);
  spools_free(spools, b->queries->len);
  trawl_plan_free(plan);
  return status;
}

/* ---- The command line ---- */

/* The options whose value may be attached ("-j4"). */
static const char *const long_with_value[] = {"--threads", "--format", "--cache", "--bump",
                                               NULL};

static void
free_gstring(gpointer s)
{
  g_string_free(s, TRUE);
}

int
cli_batch(int argc, char **argv)
{
  gint64 start = g_get_monotonic_time();
  gboolean stats = FALSE, strict = FALSE;
  int threads = UNSET_NUMBER;
  char *format = NULL, *cache = NULL, *bump = NULL;
  GOptionEntry entries[] = {
    {"threads", 'j', 0, G_OPTION_ARG_INT, &threads,
     "Use at most N threads in each walk (default: online CPUs; 1: serial)", "N"},
    {"format", 0, 0, G_OPTION_ARG_STRING, &format,
     "Output format: json (the default, one JSON line per query) or cmake (a CMake "
     "script setting TRAWL_BATCH_<K>, docs/cli.md)", "F"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
     "Exit 3 if a problem was reported (unreadable directory, link loop)", NULL},
    {"stats", 0, 0, G_OPTION_ARG_NONE, &stats,
     "Print the number of queries, walks and directories read, and the time, to stderr",
     NULL},
    {"cache", 0, 0, G_OPTION_ARG_FILENAME, &cache,
     "Keep the results in FILE and, next time, read only the directories that changed "
     "since (docs/cache.md; trawl check re-validates it)", "FILE"},
    {"bump", 0, 0, G_OPTION_ARG_FILENAME, &bump,
     "Make STAMP hold a digest of the results, as `trawl check --bump` does (rewritten only "
     "when it holds another; Bazel)", "STAMP"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new("QUERIES|-");
  g_option_context_set_summary(ctx, "Answer many queries, given as JSON lines, with one walk "
                                    "per root.");
  g_option_context_set_description(ctx, batch_description);
  g_option_context_add_main_entries(ctx, entries, NULL);

  GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
  char **args = cli_split_attached(&argc, argv, "j", long_with_value, owned);
  char **rest = args;
  GError *error = NULL;
  int status = EXIT_USAGE;
  if (!g_option_context_parse(ctx, &argc, &rest, &error)) {
    fprintf(stderr, "trawl: %s (see trawl batch --help)\n", error->message);
    g_error_free(error);
    goto out;
  }
  /* GOption leaves "--" among the arguments when one after it starts
   * with '-'. */
  if (argc >= 2 && strcmp(rest[1], "--") == 0) {
    rest++;
    argc--;
  }
  if (argc != 2) {
    fprintf(stderr, "trawl: batch takes one QUERIES argument, a file of JSON lines or '-' "
                    "for stdin (see trawl batch --help)\n");
    goto out;
  }
  if (format != NULL && strcmp(format, "json") != 0 && strcmp(format, "cmake") != 0) {
    fprintf(stderr, "trawl: unknown --format '%s' (batch prints json or cmake)\n", format);
    goto out;
  }
  if (threads != UNSET_NUMBER && threads < 0) {
    fprintf(stderr, "trawl: --threads must be 0 or more, not %d\n", threads);
    goto out;
  }

  const char *path = rest[1];
  struct query_reader b = {
    .name = strcmp(path, "-") == 0 ? "<stdin>" : path,
    .threads = threads == UNSET_NUMBER ? 0 : (unsigned)threads,
    .queries = g_ptr_array_new_with_free_func((GDestroyNotify)query_free),
    .ids = g_hash_table_new_full((GHashFunc)g_string_hash, (GEqualFunc)g_string_equal,
                                 free_gstring, NULL),
  };
  GString *input = g_string_new(NULL);
  if (read_input(path, b.name, input) && query_reader_decode(&b, input->str, input->len))
    status = run_queries(&b, format != NULL && strcmp(format, "cmake") == 0, strict, stats, start,
                         cache, bump);
  g_string_free(input, TRUE);
  g_hash_table_unref(b.ids);
  g_ptr_array_unref(b.queries);

out:
  g_free(format);
  g_free(cache);
  g_free(bump);
  g_option_context_free(ctx);
  g_free(args);
  g_ptr_array_unref(owned);
  return status;
}
