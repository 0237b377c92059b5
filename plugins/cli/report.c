/* trawl — what the commands tell on stderr (report.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

/* cli_append_name(), with '\\' doubled only when DOUBLE_BACKSLASH (a name,
 * where "\\n" must not read as a newline). */
static void
append_shown(GString *out, const char *s, size_t len, bool double_backslash)
{
  static const char named[] = "\a\b\t\n\v\f\r";
  static const char letter[] = "abtnvfr";
  const char *end = s + len;
  for (const char *c = s; c < end;) {
    const unsigned char b = (unsigned char)*c;
    if (b >= 0x80) {
      /* One valid UTF-8 sequence as it is, else this byte escaped. */
      const char *next = g_utf8_find_next_char(c, end);
      size_t n = next ? (size_t)(next - c) : (size_t)(end - c);
      if (g_utf8_validate_len(c, n, NULL)) {
        g_string_append_len(out, c, (gssize)n);
        c += n;
      } else {
        g_string_append_printf(out, "\\x%02x", b);
        c++;
      }
      continue;
    }
    const char *which = b ? strchr(named, b) : NULL;
    if (which != NULL)
      g_string_append_printf(out, "\\%c", letter[which - named]);
    else if (b < 0x20 || b == 0x7f)
      g_string_append_printf(out, "\\x%02x", b);
    else if (b == '\\' && double_backslash)
      g_string_append(out, "\\\\");
    else
      g_string_append_c(out, (char)b);
    c++;
  }
}

void
cli_append_name(GString *out, const char *name, size_t len)
{
  append_shown(out, name, len, true);
}

void
cli_append_text(GString *out, const char *text, size_t len)
{
  append_shown(out, text, len, false);
}

void
cli_print_message(const char *message)
{
  GString *line = g_string_new("trawl: ");
  cli_append_text(line, message, strlen(message));
  g_string_append_c(line, '\n');
  fputs(line->str, stderr);
  g_string_free(line, TRUE);
}

/* Under a pattern of LEN bytes, a caret at the byte ERROR points at. */
static void
print_caret(const char *pattern, size_t len, const GError *error)
{
  gssize off = trawl_pattern_error_offset(error);
  /* A caret line only helps when the pattern prints as one plain line. */
  bool plain = len <= 120 && off >= 0 && (size_t)off <= len;
  for (size_t i = 0; plain && i < len; i++)
    plain = (unsigned char)pattern[i] >= 0x20 && (unsigned char)pattern[i] < 0x7f;
  if (plain)
    fprintf(stderr, "  %.*s\n  %*s^\n", (int)len, pattern, (int)off, "");
}

void
cli_report_pattern_error(const char *pattern, const GError *error)
{
  cli_print_message(error->message);
  print_caret(pattern, strlen(pattern), error);
}

void
cli_report_pattern_error_at(const char *where, const char *pattern, size_t len,
                            const GError *error)
{
  char *message = g_strconcat(where, error->message, NULL);
  cli_print_message(message);
  g_free(message);
  print_caret(pattern, len, error);
}

void
cli_report_cache(const char *path, const TrawlCacheReport *rep)
{
  if (rep->warning) {
    char *m = g_strdup_printf("cache %s %s; walking in full and writing it again", path,
                              rep->warning->message);
    cli_print_message(m);
    g_free(m);
  }
  if (rep->write_error) {
    char *m = g_strdup_printf("cache not written: %s (the results are right)",
                              rep->write_error->message);
    cli_print_message(m);
    g_free(m);
  }
}

unsigned
cli_report_plan_problems(const TrawlPlan *plan, void (*print)(const char *message))
{
  if (print == NULL)
    print = cli_print_message;
  const size_t groups = trawl_plan_groups(plan);
  bool *seen = g_new0(bool, groups + 1);
  unsigned count = 0;
  for (size_t q = 0; q < trawl_plan_size(plan); q++) {
    const size_t g = trawl_plan_group(plan, q);
    if (g >= groups || seen[g])
      continue;
    seen[g] = true;
    const GPtrArray *problems = trawl_plan_problems(plan, q);
    for (guint k = 0; k < problems->len; k++)
      print(((const GError *)problems->pdata[k])->message);
    count += problems->len;
  }
  g_free(seen);
  return count;
}

unsigned
cli_report_walker_problems(const TrawlWalker *walker)
{
  const GPtrArray *problems = trawl_walker_problems(walker);
  if (problems == NULL)
    return 0;
  for (unsigned i = 0; i < problems->len; i++)
    cli_print_message(((const GError *)problems->pdata[i])->message);
  return problems->len;
}

void
cli_report_plan_stats(size_t n, const char *one, const char *many, const TrawlPlan *plan,
                      const TrawlCacheReport *cache, gint64 start)
{
  const size_t groups = trawl_plan_groups(plan);
  guint64 dirs = cache ? cache->dirs_read : 0;
  for (size_t g = 0; !cache && g < groups; g++) {
    TrawlWalkStats stats;
    trawl_plan_stats(plan, g, &stats);
    dirs += stats.dirs_opened;
  }
  GString *reuse = g_string_new(NULL);
  if (cache)
    g_string_printf(reuse, ", %" G_GUINT64_FORMAT " reused (cache %s%s)", cache->dirs_reused,
                    cache->trusted ? "trusted" : "not trusted", cache->written ? ", written" : "");
  fprintf(stderr, "trawl: %zu %s, %zu %s, %" G_GUINT64_FORMAT " %s read%s, %.1f ms\n", n,
          n == 1 ? one : many, groups, groups == 1 ? "walk" : "walks", dirs,
          dirs == 1 ? "directory" : "directories", reuse->str,
          (double)(g_get_monotonic_time() - start) / 1e3);
  g_string_free(reuse, TRUE);
  cli_report_watchman(NULL, cache);
}

void
cli_report_watchman(const char *file, const TrawlCacheReport *cache)
{
  if (cache == NULL || cache->watchman == TRAWL_CACHE_WATCHMAN_OFF)
    return;
  GString *line = g_string_new("trawl: ");
  if (file)
    g_string_append_printf(line, "%s: ", file);
  if (cache->watchman == TRAWL_CACHE_WATCHMAN_USED)
    g_string_append_printf(line, "watchman used: %" G_GUINT64_FORMAT " paths changed, %"
                           G_GUINT64_FORMAT " %s stat'ed", cache->watchman_changes,
                           cache->dirs_stated, cache->dirs_stated == 1 ? "directory" : "directories");
  else
    g_string_append_printf(line, "watchman not used (%s)",
                           cache->watchman_error ? cache->watchman_error->message : "?");
  fprintf(stderr, "%s\n", line->str);
  g_string_free(line, TRUE);
}

void
cli_report_write_error(int err)
{
  if (err != EPIPE)
    fprintf(stderr, "trawl: writing output: %s\n", g_strerror(err));
}
