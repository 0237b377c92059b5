/* trawl bazel-index — what git ignores in a Bazel workspace, per package, for trawl_glob().
 *
 *   trawl bazel-index --root DIR --state NAME     (prints the index's digest)
 *   trawl bazel-index --id                        (prints which indexer this is)
 *
 * trawl_glob(gitignore = True) lets Bazel's glob() list the directories
 * (Bazel then tracks each listing, so an edit reloads only the packages
 * whose listings changed) and needs from trawl only where git's ignore
 * rules cut the tree (bazel/glob.bzl). This subcommand walks the workspace
 * as glob() walks it (links followed, hidden entries entered, what
 * .bazelignore names, trawl's own directory and the `bazel-*` links at the
 * top left out), once reading no ignore file and once as git does, and
 * writes index.bzl:
 *
 *   LEFT_OUT = {"bazel-bin": None, ...}    the top-level bazel-* links
 *   PACKAGES = {"pkg": ENTRY, ...}          every package of the walk
 *   CHECKED = True
 *
 * ENTRY is None when git ignores nothing in the package; True when git
 * ignores the package's own directory (everything in it); otherwise
 * (IGN, IGN_WILD, TAINT): IGN the paths (relative to the package) that git
 * ignores while it does not ignore their directory — files, and the
 * topmost ignored directories, which are not entered (plus, in the top
 * package, the LEFT_OUT links) — as a list, which glob() takes as exact
 * excludes, but those with a wildcard in them ('*' or '?': glob() would
 * take them as patterns), in the dict IGN_WILD; TAINT a dict from each
 * directory that holds one of those directories somewhere below it ("" the
 * package's own) to its subdirectories that git does not ignore, sorted
 * (subpackages are not subdirectories: glob() stops at them). Every byte
 * outside printable ASCII, and '"' and '\', is written as an octal escape:
 * the file is ASCII, and no file name can change its meaning. It holds no
 * absolute path and no time and depends on the tree alone, so that it only
 * changes when what git ignores, or where, changes (or the packages do): a
 * file added, removed or renamed that git does not ignore leaves it as it
 * is. CHECKED says that the command ran through the wrapper: the
 * repository rule links a kept index only for the wrapper, and writes False
 * in the copy it makes when it indexes itself (glob.bzl's message about a
 * package it does not know).
 *
 * The index is kept as STATE/index-DIGEST.bzl, DIGEST its XXH3-128 in hex
 * (content-addressed: an index is never another's, and one made again is
 * the same file, so Bazel sees no change). The newest KEPT are kept.
 *
 * The walk is cut in parts: the top directory's own entries, and each
 * directory at the top with everything below it. Each part is one plan of
 * five queries with its own result cache and a file of its facts (what the
 * index is made of: BUILD files, the directories git does not ignore, what
 * it ignores below them) in STATE/parts/, named by a hash of this indexer
 * and the part's queries, so that a part whose queries change
 * (.bazelignore edited, a bazel-* link made) starts afresh, alone. Cutting
 * matters because a cached run reads and writes a whole cache file when
 * anything in it changed: an edit costs the re-check of its part
 * (docs/benchmarks.md, "Bazel: the edit loop"). STATE/stamp holds "DIGEST
 * PARTS TRAWL": the index's digest, a hash of the parts' names, and the
 * trawl that wrote the caches (another's are not trusted: everything is
 * made again).
 *
 * Each run re-checks every part from its cache (trawl_cache_run(),
 * which stats the directories the last walk read and reads only those that
 * changed). A part where nothing changed, or only files that git does not
 * ignore were added or removed (the same change in both views, no BUILD
 * file among them), keeps its facts; the others' facts are made from the
 * answers the re-check just gave, and the index is made again from every
 * part's facts. The wrapper (tools/bazel) runs this before every command;
 * the repository rule when the wrapper did not.
 *
 * Exit 0 on success, 2 for bad usage, 3 when a walk fails or a file cannot
 * be read or written (the message is printed); problems a walk survived (a
 * directory it could not read, a link loop) are printed as the walk prints
 * them.
 */
#define _GNU_SOURCE /* fstatat, utimensat, realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* XXH3 from the header alone, as libcore's cache file takes it. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../cli/cli.h"
#include "../cli/files.h"
#include "trawl/cache.h"
#include "trawl/plan.h"

/* The queries of a part, by index in its plan. */
enum {
  Q_FILES,     /* every file (links followed; a dangling link too) */
  Q_GI_FILES,  /* the same, leaving out what git ignores */
  Q_DIRS,      /* every directory */
  Q_GI_DIRS,
  Q_DANGLING,  /* BUILD and BUILD.bazel links that cannot be followed */
  N_QUERIES
};

enum { KEPT = 3 }; /* indexes kept in STATE, the newest */

/* Which indexer made an index (a line of it, and `--id`): the repository
 * rule compiles trawl with -DTRAWL_INDEXER=<a hash of this file>, and takes
 * a kept index only from the indexer of its own trawl. An index the wrapper
 * made with the indexer of before an upgrade is not taken. */
#ifndef TRAWL_INDEXER
#define TRAWL_INDEXER "dev"
#endif

/* A failure of the run: the message, and exit 3 (usage: 2). The indexer is
 * a command of its own, run once per Bazel command: it stops at the first. */
static _Noreturn void
fail(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("trawl bazel-index: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(status);
}

/* ---- a path: bytes and length (names may hold any byte but NUL and '/') */

typedef struct {
  const char *p;
  size_t n;
} path;

typedef struct {
  path *v;
  size_t n, cap;
} path_list;

static void
list_add(path_list *l, const char *p, size_t n)
{
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = g_renew(path, l->v, l->cap);
  }
  l->v[l->n].p = p;
  l->v[l->n].n = n;
  l->n++;
}

/* The last byte c in p[0..n), or NULL (memrchr is not in POSIX). */
static const char *
last_byte(const char *p, int c, size_t n)
{
  while (n--)
    if (p[n] == (char)c)
      return p + n;
  return NULL;
}

/* The directory part of p[0..n) ("" for a name at the top). */
static size_t
dir_len(const char *p, size_t n)
{
  const char *slash = last_byte(p, '/', n);
  return slash ? (size_t)(slash - p) : 0;
}

static int
cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
  int c = memcmp(a, b, an < bn ? an : bn);
  if (c)
    return c;
  return an < bn ? -1 : an > bn;
}

static int
cmp_path(const void *x, const void *y)
{
  const path *a = x, *b = y;
  return cmp_bytes(a->p, a->n, b->p, b->n);
}

/* qsort(), for any N: an empty list may have no array at all, which
 * qsort() must not be given. */
static void
sort_n(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
  if (n > 1)
    qsort(v, n, size, cmp);
}

/* ---- .bazelignore and the top directory -------------------------------- */

/* Bazel's reading of one .bazelignore line (4.2.3, checked by
 * tests/bazel): taken as it is (no trimming), '#' starts a comment line,
 * then normalised as a path: empty and '.' segments dropped, '..' takes
 * the segment before it off. An absolute path, or one that climbs out,
 * can name nothing inside the workspace. Returns false for those. */
static bool
normalise_ignore_line(const char *line, size_t n, GString *out)
{
  g_string_truncate(out, 0);
  if (n == 0 || line[0] == '#' || line[0] == '/')
    return false;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && line[j] != '/')
      j++;
    size_t seg = j - i;
    if (seg == 0 || (seg == 1 && line[i] == '.')) {
      /* nothing */
    } else if (seg == 2 && line[i] == '.' && line[i + 1] == '.') {
      if (out->len == 0)
        return false;
      g_string_truncate(out, dir_len(out->str, out->len));
    } else {
      if (out->len)
        g_string_append_c(out, '/');
      g_string_append_len(out, line + i, (gssize)seg);
    }
    i = j + 1;
  }
  return out->len > 0;
}

/* The excludes of every query: pattern texts, in the trawl dialect, and
 * once compiled, the patterns (shared by every part's plan), the last one
 * `.git`'s (the queries that read no ignore file leave it out). */
typedef struct {
  GPtrArray *texts;    /* GString */
  GPtrArray *patterns; /* TrawlPattern */
} excludes;

static void
string_free(void *s)
{
  g_string_free(s, TRUE);
}

/* Adds the exclude naming exactly the path p[0..n), and with TREE the one
 * for everything below it too. */
static void
exclude_path(excludes *x, const char *p, size_t n, bool tree)
{
  GString *s = g_string_new(NULL);
  trawl_pattern_escape(s, p, n);
  g_ptr_array_add(x->texts, s);
  if (tree) {
    GString *below = g_string_new_len(s->str, (gssize)s->len);
    g_string_append(below, "/**");
    g_ptr_array_add(x->texts, below);
  }
}

/* Reads ROOT/.bazelignore (if any) into the excludes; the paths it names
 * that are top-level names go to TOP too. */
static void
read_bazelignore(const char *root, excludes *x, path_list *top)
{
  char *name = g_strconcat(root, "/.bazelignore", NULL);
  char *text = NULL;
  gsize len = 0;
  GError *error = NULL;
  if (!g_file_get_contents(name, &text, &len, &error)) {
    if (!g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      fail(3, "%s", error->message);
    g_error_free(error);
    g_free(name);
    return;
  }
  GString *norm = g_string_new(NULL);
  /* Lines end at "\n", "\r\n" or a lone "\r", as Java's line readers split. */
  size_t i = 0;
  while (i < len) {
    size_t j = i;
    while (j < len && text[j] != '\n' && text[j] != '\r')
      j++;
    if (normalise_ignore_line(text + i, j - i, norm)) {
      exclude_path(x, norm->str, norm->len, true);
      if (!memchr(norm->str, '/', norm->len))
        list_add(top, g_strdup(norm->str), norm->len);
    }
    if (j < len && text[j] == '\r' && j + 1 < len && text[j + 1] == '\n')
      j++;
    i = j + 1;
  }
  g_string_free(norm, TRUE);
  g_free(text);
  g_free(name);
}

/* The links named bazel-* in the top directory: Bazel's convenience links
 * into an output base (this one's, or a copied workspace's). trawl does not
 * walk them: build outputs are no sources, and an execroot links back to
 * the whole workspace. Their names go to NAMES, sorted, so that the
 * queries made of them are the same for the same links. */
static void
exclude_output_links(const char *root, excludes *x, path_list *names)
{
  DIR *d = opendir(root);
  if (!d)
    fail(3, "%s: %s", root, strerror(errno));
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strncmp(e->d_name, "bazel-", 6) != 0)
      continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode))
      continue;
    list_add(names, g_strdup(e->d_name), strlen(e->d_name));
  }
  closedir(d);
  sort_n(names->v, names->n, sizeof *names->v, cmp_path);
  for (size_t i = 0; i < names->n; i++)
    exclude_path(x, names->v[i].p, names->v[i].n, false);
}

/* ---- packages ---------------------------------------------------------- */

/* An open-addressing set of package directories (paths without a
 * trailing '/'; "" for the top). */
typedef struct {
  path *slots;
  size_t cap, n;
} pkg_set;

static uint64_t
hash_bytes(const char *p, size_t n)
{
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= 1099511628211ull;
  }
  return h;
}

static bool
pkg_has(const pkg_set *s, const char *p, size_t n)
{
  if (!s->cap)
    return false;
  for (size_t i = hash_bytes(p, n) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    if (!s->slots[i].p)
      return false;
    if (s->slots[i].n == n && memcmp(s->slots[i].p, p, n) == 0)
      return true;
  }
}

static void
pkg_add(pkg_set *s, const char *p, size_t n)
{
  if (pkg_has(s, p, n))
    return;
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    path *slots = g_new0(path, cap);
    for (size_t k = 0; k < s->cap; k++) {
      if (!s->slots[k].p)
        continue;
      size_t i = hash_bytes(s->slots[k].p, s->slots[k].n) & (cap - 1);
      while (slots[i].p)
        i = (i + 1) & (cap - 1);
      slots[i] = s->slots[k];
    }
    g_free(s->slots);
    s->slots = slots;
    s->cap = cap;
  }
  size_t i = hash_bytes(p, n) & (s->cap - 1);
  while (s->slots[i].p)
    i = (i + 1) & (s->cap - 1);
  s->slots[i].p = p;
  s->slots[i].n = n;
  s->n++;
}

/* The package that owns path p: the longest directory above p (strictly)
 * that is a package. Returns its length, or (size_t)-1 when there is none
 * (only possible when the top has no BUILD file). */
static size_t
owner(const pkg_set *s, const char *p, size_t n)
{
  size_t end = n;
  for (;;) {
    const char *slash = end ? last_byte(p, '/', end) : NULL;
    if (!slash)
      return pkg_has(s, "", 0) ? 0 : (size_t)-1;
    end = (size_t)(slash - p);
    if (pkg_has(s, p, end))
      return end;
  }
}

static bool
is_build_file(const char *base, size_t n)
{
  return (n == 5 && memcmp(base, "BUILD", 5) == 0) ||
         (n == 11 && memcmp(base, "BUILD.bazel", 11) == 0);
}

/* ---- writing Starlark -------------------------------------------------- */

static bool
starlark_plain(unsigned char c)
{
  return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void
starlark_bytes(GString *b, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    size_t run = i;
    while (run < n && starlark_plain((unsigned char)s[run]))
      run++;
    if (run > i) {
      g_string_append_len(b, s + i, (gssize)(run - i));
      i = run;
      if (i == n)
        break;
    }
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      g_string_append_c(b, '\\');
      g_string_append_c(b, (char)c);
    } else {
      g_string_append_printf(b, "\\%03o", c);
    }
  }
}

/* Writes TEXT to FILE whole, as the command writes every file beside a
 * build (plugins/cli/files.h: renamed into place, the umask honoured, never
 * writable by others). */
static void
write_file(const char *file, const char *text, size_t len)
{
  GError *error = NULL;
  if (!file_write(file, text, len, &error))
    fail(3, "%s", error->message);
}

/* ---- what each part of the walk says ------------------------------------- */

/* What the index is made of, for one part of the walk or merged from all:
 * every list sorted bytewise. */
typedef struct {
  path_list builds;    /* BUILD and BUILD.bazel files that are no dangling link */
  path_list kept;      /* directories git does not ignore */
  path_list ign_dirs;  /* directories git ignores, in one it does not */
  path_list ign_files; /* files git ignores, in a directory it does not */
  GPtrArray *texts;    /* the facts files read, which the paths point into */
} facts;

enum { N_FACTS = 4 };
static const char fact_kind[N_FACTS] = {'b', 'k', 'd', 'f'};

static path_list *
fact_list(facts *f, int i)
{
  path_list *l[N_FACTS] = {&f->builds, &f->kept, &f->ign_dirs, &f->ign_files};
  return l[i];
}

/* Whether directory d[0..n) is one git does not ignore: the top, or in GD. */
static bool
kept_dir(const pkg_set *gd, const char *d, size_t n)
{
  return n == 0 || pkg_has(gd, d, n);
}

/* A query's answer as a path_list (the plan's strings, borrowed). */
static path_list
answer(const TrawlPlan *plan, size_t q)
{
  const GPtrArray *r = trawl_plan_results(plan, q);
  path_list l = {0};
  for (guint i = 0; i < r->len; i++)
    list_add(&l, r->pdata[i], strlen(r->pdata[i]));
  return l;
}

/* One part's facts from its plan's answers (the paths are copied into F's
 * own strings, which the facts file is written from). */
static void
summarize(const TrawlPlan *plan, facts *out)
{
  path_list lists[N_QUERIES];
  for (int q = 0; q < N_QUERIES; q++)
    lists[q] = answer(plan, (size_t)q);
  pkg_set dangling = {0}, gd = {0};
  for (size_t i = 0; i < lists[Q_DANGLING].n; i++)
    pkg_add(&dangling, lists[Q_DANGLING].v[i].p, lists[Q_DANGLING].v[i].n);
  for (size_t i = 0; i < lists[Q_GI_DIRS].n; i++) {
    pkg_add(&gd, lists[Q_GI_DIRS].v[i].p, lists[Q_GI_DIRS].v[i].n);
    list_add(&out->kept, lists[Q_GI_DIRS].v[i].p, lists[Q_GI_DIRS].v[i].n);
  }
  for (size_t i = 0; i < lists[Q_FILES].n; i++) {
    const path *p = &lists[Q_FILES].v[i];
    const size_t d = dir_len(p->p, p->n);
    const char *base = d ? p->p + d + 1 : p->p;
    if (is_build_file(base, p->n - (size_t)(base - p->p)) && !pkg_has(&dangling, p->p, p->n))
      list_add(&out->builds, p->p, p->n);
  }
  /* Ignored: listed by the walk that reads no ignore file, not by the one
   * that does, below a directory git does not ignore (the lists are
   * sorted: one pass each). */
  for (size_t i = 0; i < lists[Q_DIRS].n; i++) {
    const path *p = &lists[Q_DIRS].v[i];
    if (!pkg_has(&gd, p->p, p->n) && kept_dir(&gd, p->p, dir_len(p->p, p->n)))
      list_add(&out->ign_dirs, p->p, p->n);
  }
  const path_list *f = &lists[Q_FILES], *gf = &lists[Q_GI_FILES];
  for (size_t i = 0, j = 0; i < f->n; i++) {
    while (j < gf->n && cmp_path(&gf->v[j], &f->v[i]) < 0)
      j++;
    if (j < gf->n && cmp_path(&gf->v[j], &f->v[i]) == 0)
      continue;
    if (kept_dir(&gd, f->v[i].p, dir_len(f->v[i].p, f->v[i].n)))
      list_add(&out->ign_files, f->v[i].p, f->v[i].n);
  }
  for (int q = 0; q < N_QUERIES; q++)
    g_free(lists[q].v);
  g_free(dangling.slots);
  g_free(gd.slots);
}

/* A part's facts as a file: per fact, its kind byte, the path, NUL. */
static void
write_facts(const char *file, facts *f)
{
  GString *b = g_string_new(NULL);
  for (int k = 0; k < N_FACTS; k++) {
    const path_list *l = fact_list(f, k);
    for (size_t i = 0; i < l->n; i++) {
      g_string_append_c(b, fact_kind[k]);
      g_string_append_len(b, l->v[i].p, (gssize)l->v[i].n);
      g_string_append_c(b, '\0');
    }
  }
  write_file(file, b->str, b->len);
  g_string_free(b, TRUE);
}

/* Adds a part's facts file to F (its paths point into the file's text,
 * which is kept); false when it cannot be read or is not such a file. */
static bool
read_facts(const char *file, facts *f)
{
  char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(file, &text, &len, NULL))
    return false;
  g_ptr_array_add(f->texts, text);
  for (size_t i = 0; i < len;) {
    const char *nul = memchr(text + i + 1, '\0', len - i - 1);
    const char *k = memchr(fact_kind, text[i], N_FACTS);
    if (!nul || !k)
      return false;
    list_add(fact_list(f, (int)(k - fact_kind)), text + i + 1, (size_t)(nul - (text + i + 1)));
    i = (size_t)(nul - text) + 1;
  }
  return true;
}

/* Sorts each list and drops repeats (a top-level directory is in the top's
 * part and its own). */
static void
settle_facts(facts *f)
{
  for (int k = 0; k < N_FACTS; k++) {
    path_list *l = fact_list(f, k);
    sort_n(l->v, l->n, sizeof *l->v, cmp_path);
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++)
      if (!w || cmp_path(&l->v[w - 1], &l->v[i]) != 0)
        l->v[w++] = l->v[i];
    l->n = w;
  }
}

/* ---- the index ---------------------------------------------------------- */

/* One path of IGN or TAINT: the package it is in, and the path itself
 * (relative to the workspace). */
typedef struct {
  uint32_t pkg;
  path p;
} item;

typedef struct {
  item *v;
  size_t n, cap;
} item_list;

static void
item_add(item_list *l, uint32_t pkg, const char *p, size_t n)
{
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = g_renew(item, l->v, l->cap);
  }
  l->v[l->n].pkg = pkg;
  l->v[l->n].p.p = p;
  l->v[l->n].p.n = n;
  l->n++;
}

static int
cmp_item(const void *x, const void *y)
{
  const item *a = x, *b = y;
  if (a->pkg != b->pkg)
    return a->pkg < b->pkg ? -1 : 1;
  return cmp_path(&a->p, &b->p);
}

/* Subdirectories by package, then by their directory (the order of the
 * tainted directories), then by name. */
static int
cmp_child(const void *x, const void *y)
{
  const item *a = x, *b = y;
  if (a->pkg != b->pkg)
    return a->pkg < b->pkg ? -1 : 1;
  int c = cmp_bytes(a->p.p, dir_len(a->p.p, a->p.n), b->p.p, dir_len(b->p.p, b->p.n));
  return c ? c : cmp_path(&a->p, &b->p);
}

/* The package that owns p (see owner()), as its index in pkgs, or
 * UINT32_MAX when none does. */
static uint32_t
owner_index(const pkg_set *set, const path_list *pkgs, const char *p, size_t n)
{
  size_t o = owner(set, p, n);
  if (o == (size_t)-1)
    return UINT32_MAX;
  path key = {p, o};
  const path *hit = bsearch(&key, pkgs->v, pkgs->n, sizeof *pkgs->v, cmp_path);
  return (uint32_t)(hit - pkgs->v);
}

/* p relative to package k (which owns it). */
static path
relative(const path_list *pkgs, uint32_t k, const char *p, size_t n)
{
  size_t skip = pkgs->v[k].n ? pkgs->v[k].n + 1 : 0;
  path r = {p + skip, n - skip};
  return r;
}

/* Marks p's directory and every one above it, up to its package's own,
 * as tainted (in TAINT, set and list). */
static void
taint_above(pkg_set *taint, item_list *tainted, const path_list *pkgs, uint32_t k,
            const char *p, size_t n)
{
  const size_t top = pkgs->v[k].n;
  size_t d = dir_len(p, n);
  for (;;) {
    if (d < top)
      d = top; /* the package's own directory */
    if (pkg_has(taint, p, d))
      return; /* and so every one above */
    pkg_add(taint, p, d);
    item_add(tainted, k, p, d);
    if (d == top)
      return;
    d = dir_len(p, d);
  }
}

/* Writes index.bzl for the facts of the whole walk (see the top of this
 * file) to O. */
static void
make_index(const facts *all, const path_list *left_out, GString *o)
{
  pkg_set set = {0};
  path_list pkgs = {0};
  for (size_t i = 0; i < all->builds.n; i++) {
    const path *p = &all->builds.v[i];
    const size_t d = dir_len(p->p, p->n);
    if (!pkg_has(&set, p->p, d)) {
      pkg_add(&set, p->p, d);
      list_add(&pkgs, p->p, d);
    }
  }
  sort_n(pkgs.v, pkgs.n, sizeof *pkgs.v, cmp_path);
  pkg_set gd = {0};
  for (size_t i = 0; i < all->kept.n; i++)
    pkg_add(&gd, all->kept.v[i].p, all->kept.v[i].n);

  /* A package whose own directory git ignores: everything in it is. */
  bool *all_ignored = g_new0(bool, pkgs.n ? pkgs.n : 1);
  for (size_t k = 0; k < pkgs.n; k++)
    all_ignored[k] = pkgs.v[k].n && !pkg_has(&gd, pkgs.v[k].p, pkgs.v[k].n);

  /* IGN: the ignored directories (not packages: glob() stops at those),
   * the links left out at the top, the ignored files. TAINT: every
   * directory above an ignored directory or a link left out. */
  item_list ign = {0}, tainted = {0};
  pkg_set taint = {0};
  const path_list *below[2] = {&all->ign_dirs, left_out};
  for (int b = 0; b < 2; b++) {
    for (size_t i = 0; i < below[b]->n; i++) {
      const path *p = &below[b]->v[i];
      if (pkg_has(&set, p->p, p->n))
        continue;
      uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
      if (k == UINT32_MAX || all_ignored[k])
        continue;
      item_add(&ign, k, p->p, p->n);
      taint_above(&taint, &tainted, &pkgs, k, p->p, p->n);
    }
  }
  for (size_t i = 0; i < all->ign_files.n; i++) {
    const path *p = &all->ign_files.v[i];
    uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
    if (k != UINT32_MAX && !all_ignored[k])
      item_add(&ign, k, p->p, p->n);
  }
  sort_n(ign.v, ign.n, sizeof *ign.v, cmp_item);
  sort_n(tainted.v, tainted.n, sizeof *tainted.v, cmp_item);

  /* A tainted directory's subdirectories: those git does not ignore, not
   * packages. */
  item_list children = {0};
  for (size_t i = 0; i < all->kept.n; i++) {
    const path *p = &all->kept.v[i];
    if (pkg_has(&taint, p->p, dir_len(p->p, p->n)) && !pkg_has(&set, p->p, p->n)) {
      uint32_t k = owner_index(&set, &pkgs, p->p, p->n);
      if (k != UINT32_MAX)
        item_add(&children, k, p->p, p->n);
    }
  }
  sort_n(children.v, children.n, sizeof *children.v, cmp_child);

  g_string_append(o, "# Generated by trawl bazel-index (trawl's plugins/bazel/) for trawl_glob(): what\n"
                     "# git ignores in each package. Do not edit.\n"
                     "# indexer " TRAWL_INDEXER "\n"
                     "FORMAT = 3\n"
                     "LEFT_OUT = {");
  for (size_t i = 0; i < left_out->n; i++) {
    g_string_append(o, i ? ", \"" : "\"");
    starlark_bytes(o, left_out->v[i].p, left_out->v[i].n);
    g_string_append(o, "\": None");
  }
  g_string_append(o, "}\nPACKAGES = {\n");
  size_t ci = 0, ti = 0, ii = 0;
  for (uint32_t k = 0; k < pkgs.n; k++) {
    g_string_append(o, "    \"");
    starlark_bytes(o, pkgs.v[k].p, pkgs.v[k].n);
    g_string_append(o, "\": ");
    const size_t i0 = ii;
    while (ii < ign.n && ign.v[ii].pkg == k)
      ii++;
    if (all_ignored[k]) {
      g_string_append(o, "True,\n");
      continue;
    }
    if (ii == i0) {
      g_string_append(o, "None,\n");
      continue;
    }
    /* IGN in two: the paths glob() can take as excludes (exact paths), and
     * those it cannot (a wildcard in them), which glob.bzl filters. */
    for (int wild = 0; wild < 2; wild++) {
      g_string_append(o, wild ? ", {" : "([");
      bool first = true;
      for (size_t i = i0; i < ii; i++) {
        path r = relative(&pkgs, k, ign.v[i].p.p, ign.v[i].p.n);
        if ((memchr(r.p, '*', r.n) || memchr(r.p, '?', r.n)) != wild)
          continue;
        g_string_append(o, first ? "\"" : ", \"");
        first = false;
        starlark_bytes(o, r.p, r.n);
        g_string_append(o, wild ? "\": None" : "\"");
      }
      g_string_append(o, wild ? "}" : "]");
    }
    g_string_append(o, ", {");
    for (size_t t0 = ti; ti < tainted.n && tainted.v[ti].pkg == k; ti++) {
      const path *t = &tainted.v[ti].p;
      g_string_append(o, ti > t0 ? ", \"" : "\"");
      if (t->n > pkgs.v[k].n) {
        path r = relative(&pkgs, k, t->p, t->n);
        starlark_bytes(o, r.p, r.n);
      }
      g_string_append(o, "\": [");
      /* Its subdirectories: the children whose directory it is (both
       * lists are in the order of those directories). */
      while (ci < children.n && children.v[ci].pkg == k &&
             cmp_bytes(children.v[ci].p.p, dir_len(children.v[ci].p.p, children.v[ci].p.n),
                       t->p, t->n) < 0)
        ci++;
      for (size_t c0 = ci; ci < children.n && children.v[ci].pkg == k; ci++) {
        const path *c = &children.v[ci].p;
        const size_t cd = dir_len(c->p, c->n);
        if (cmp_bytes(c->p, cd, t->p, t->n) != 0)
          break;
        g_string_append(o, ci > c0 ? ", \"" : "\"");
        const size_t skip = cd ? cd + 1 : 0;
        starlark_bytes(o, c->p + skip, c->n - skip);
        g_string_append_c(o, '"');
      }
      g_string_append_c(o, ']');
    }
    g_string_append(o, "}),\n");
  }
  g_string_append(o, "}\nCHECKED = True\n");
  g_free(all_ignored);
  g_free(ign.v);
  g_free(tainted.v);
  g_free(children.v);
  g_free(taint.slots);
  g_free(gd.slots);
  g_free(set.slots);
  g_free(pkgs.v);
}

/* ---- the stamp and the kept indexes --------------------------------------- */

/* STATE/stamp: "DIGEST PARTS TRAWL\n" (see the top). */
typedef struct {
  char digest[33];   /* XXH3-128, hex; "" when there is no stamp */
  char queries[17];  /* XXH3-64 of the parts' names */
  char *trawl;       /* the trawl executable (resolved) that wrote the caches */
} stamp;

static void
read_stamp(const char *file, stamp *s)
{
  s->digest[0] = s->queries[0] = '\0';
  s->trawl = g_strdup("");
  char *line = NULL;
  gsize n = 0;
  if (!g_file_get_contents(file, &line, &n, NULL))
    return;
  char *nl = memchr(line, '\n', n);
  if (n < 32 + 1 + 16 + 1 + 1 || !nl || line[32] != ' ' || line[49] != ' ' ||
      strspn(line, "0123456789abcdef") != 32 || strspn(line + 33, "0123456789abcdef") != 16) {
    g_free(line);
    return; /* not ours, or cut short: as good as none */
  }
  memcpy(s->digest, line, 32);
  s->digest[32] = '\0';
  memcpy(s->queries, line + 33, 16);
  s->queries[16] = '\0';
  g_free(s->trawl);
  s->trawl = g_strndup(line + 50, (gsize)(nl - (line + 50)));
  g_free(line);
}

static void
hex(char *out, const void *p, size_t n)
{
  const unsigned char *u = p;
  for (size_t i = 0; i < n; i++)
    snprintf(out + 2 * i, 3, "%02x", u[i]);
}

static void
digest_of(const GString *o, char out[33])
{
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(o->str, o->len));
  hex(out, c.digest, sizeof c.digest);
}

static void
hash64(const void *p, size_t n, char out[17])
{
  XXH64_canonical_t c;
  XXH64_canonicalFromHash(&c, XXH3_64bits(p, n));
  hex(out, c.digest, sizeof c.digest);
}

static char *
kept_name(const char *state, const char *digest)
{
  return g_strdup_printf("%s/index-%s.bzl", state, digest);
}

/* Keeps the index O as STATE/index-DIGEST.bzl (an index already kept under
 * that name is the same text: its time is only made the newest), then
 * removes every other kept index but the newest KEPT - 1. */
static void
keep_index(const char *state, const char *digest, const GString *o)
{
  char *name = kept_name(state, digest);
  if (utimensat(AT_FDCWD, name, NULL, 0) != 0) {
    if (errno != ENOENT)
      fail(3, "%s: %s", name, strerror(errno));
    write_file(name, o->str, o->len);
  }
  /* The others, newest first; a name vanishing meanwhile (another run's
   * pruning) is no trouble. */
  DIR *d = opendir(state);
  if (!d)
    fail(3, "%s: %s", state, strerror(errno));
  struct kept {
    char *name;
    struct timespec mtime;
  } *v = NULL;
  size_t nv = 0, cap = 0;
  const char *mine = strrchr(name, '/') + 1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "index-", 6) != 0 || len < 10 ||
        strcmp(e->d_name + len - 4, ".bzl") != 0 || strcmp(e->d_name, mine) == 0)
      continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (nv == cap) {
      cap = cap ? 2 * cap : 8;
      v = g_renew(struct kept, v, cap);
    }
    v[nv].name = g_strdup(e->d_name);
    v[nv++].mtime = st.st_mtim;
  }
  for (size_t i = 0; i < nv; i++) {
    size_t newer = 0;
    for (size_t j = 0; j < nv; j++)
      if (v[j].mtime.tv_sec > v[i].mtime.tv_sec ||
          (v[j].mtime.tv_sec == v[i].mtime.tv_sec && v[j].mtime.tv_nsec > v[i].mtime.tv_nsec) ||
          (v[j].mtime.tv_sec == v[i].mtime.tv_sec && v[j].mtime.tv_nsec == v[i].mtime.tv_nsec &&
           strcmp(v[j].name, v[i].name) < 0))
        newer++;
    if (newer >= KEPT - 1 && unlinkat(dirfd(d), v[i].name, 0) != 0 && errno != ENOENT)
      fail(3, "%s/%s: %s", state, v[i].name, strerror(errno));
  }
  for (size_t i = 0; i < nv; i++)
    g_free(v[i].name);
  g_free(v);
  closedir(d);
  g_free(name);
}

/* ---- the parts of the walk ------------------------------------------------ */

/* The walk is cut in parts, each with its own cache, so that an edit costs
 * a re-check of its part: a cached run reads and writes a whole cache file
 * when anything in it changed. A part is the top directory's own entries
 * ("", the pattern `*`), or one directory at the top and all below it. */
typedef struct {
  path name;            /* "" or the top-level directory */
  char id[17];          /* XXH3-64 of the indexer and the queries, in hex: its
                           files in STATE/parts/ */
  GString *prefix;      /* its includes' prefix: "" or the directory escaped, and '/' */
  GPtrArray *patterns;  /* the compiled patterns its queries borrow */
  TrawlPlan *plan;     /* its five queries: from its cache, or made (part_plan) */
  bool redo;            /* its facts are to be made again */
} part;

typedef struct {
  part *v;
  size_t n;
} part_list;

static const TrawlPattern *
compile(GPtrArray *into, const char *text, size_t len)
{
  GError *error = NULL;
  TrawlPattern *pat = trawl_pattern_compile(text, len, TRAWL_DIALECT_TRAWL, 0, &error);
  if (!pat)
    fail(3, "%s", error->message); /* an escaped path: not expected */
  g_ptr_array_add(into, pat);
  return pat;
}

static const char git_exclude[] = "**/.git/**";

/* The excludes compiled, once for every part (compiling is most of what a
 * run costs when nothing changed). */
static void
compile_excludes(excludes *x)
{
  x->patterns = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  for (size_t k = 0; k < x->texts->len; k++) {
    const GString *t = g_ptr_array_index(x->texts, k);
    compile(x->patterns, t->str, t->len);
  }
  compile(x->patterns, git_exclude, strlen(git_exclude));
}

/* The part's five queries below ROOT: ID (a text of what is asked) gets
 * each query's settings and patterns and, with BUILD, the part gets its
 * plan of them (the patterns compiled; X's already). */
static void
part_plan(part *p, const char *root, const excludes *x, GString *id, bool build)
{
  const GString *prefix = p->prefix;
  static const struct {
    unsigned type;
    bool ignore, git; /* git: `.git` left out */
    const char *last;
  } spec[N_QUERIES] = {
    [Q_FILES] = {TRAWL_ENTRY_FILE, false, true, "**"},
    [Q_GI_FILES] = {TRAWL_ENTRY_FILE, true, false, "**"},
    [Q_DIRS] = {TRAWL_ENTRY_DIR, false, true, "**"},
    [Q_GI_DIRS] = {TRAWL_ENTRY_DIR, true, false, "**"},
    [Q_DANGLING] = {TRAWL_ENTRY_SYMLINK, false, false, "**/BUILD"},
  };
  if (build) {
    p->patterns = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
    p->plan = trawl_plan_new();
  }
  for (int i = 0; i < N_QUERIES; i++) {
    const TrawlPattern *inc[2];
    size_t n_inc = 0;
    g_string_append_printf(id, "%d %u %d\n", i, spec[i].type, spec[i].ignore);
    /* Two patterns for BUILD and BUILD.bazel; and a directory's part lists
     * the directory itself, so that its facts know whether git ignores it. */
    const bool dirs = i == Q_DIRS || i == Q_GI_DIRS;
    for (int b = 0; b < (i == Q_DANGLING || (dirs && prefix->len) ? 2 : 1); b++) {
      GString *t = g_string_new_len(prefix->str, (gssize)prefix->len);
      if (!prefix->len) /* the top's own entries */
        g_string_append(t, i == Q_DANGLING ? (b ? "BUILD.bazel" : "BUILD") : "*");
      else if (i == Q_DANGLING)
        g_string_append(t, b ? "**/BUILD.bazel" : "**/BUILD");
      else if (dirs && b)
        g_string_truncate(t, t->len - 1); /* "DIR" */
      else
        g_string_append(t, spec[i].last);
      if (build)
        inc[n_inc++] = compile(p->patterns, t->str, t->len);
      g_string_append_len(id, t->str, (gssize)t->len + 1);
      g_string_free(t, TRUE);
    }
    for (size_t k = 0; k < x->texts->len; k++) {
      const GString *t = g_ptr_array_index(x->texts, k);
      g_string_append_len(id, t->str, (gssize)t->len + 1);
    }
    const size_t n_exc = x->texts->len + spec[i].git;
    if (spec[i].git)
      g_string_append_len(id, git_exclude, (gssize)sizeof git_exclude);
    if (!build)
      continue;
    TrawlWalkOptions o;
    trawl_walk_options_init(&o);
    o.hidden = true;
    o.follow = true;
    o.types = spec[i].type;
    o.ignore = spec[i].ignore ? TRAWL_IGNORE_VCS | TRAWL_IGNORE_DOT : 0;
    const TrawlQuery q = {.root = root, .includes = inc, .n_includes = n_inc,
                           .excludes = (const TrawlPattern *const *)x->patterns->pdata,
                           .n_excludes = n_exc, .options = &o};
    trawl_plan_add(p->plan, &q);
  }
}

static bool
listed(const path_list *l, const char *name)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].n == strlen(name) && memcmp(l->v[i].p, name, l->v[i].n) == 0)
      return true;
  return false;
}

/* The parts: the top's own entries, and each directory at the top (a link
 * to one too) but .git, trawl's own directory, a link left out, or one
 * .bazelignore names (NOT). Sorted, so that the queries are the same for
 * the same tree. */
static void
make_parts(const char *root, const char *state_name, const path_list *not,
           const path_list *left_out, const excludes *x, part_list *parts)
{
  DIR *d = opendir(root);
  if (!d)
    fail(3, "%s: %s", root, strerror(errno));
  path_list names = {0};
  list_add(&names, "", 0);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    struct stat st;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
        strcmp(e->d_name, ".git") == 0 || strcmp(e->d_name, state_name) == 0 ||
        listed(not, e->d_name) || listed(left_out, e->d_name) ||
        fstatat(dirfd(d), e->d_name, &st, 0) != 0 || !S_ISDIR(st.st_mode))
      continue;
    list_add(&names, g_strdup(e->d_name), strlen(e->d_name));
  }
  closedir(d);
  sort_n(names.v, names.n, sizeof *names.v, cmp_path);
  parts->v = g_new0(part, names.n);
  parts->n = names.n;
  GString *id = g_string_new(NULL);
  for (size_t k = 0; k < names.n; k++) {
    part *p = &parts->v[k];
    p->name = names.v[k];
    p->prefix = g_string_new(NULL);
    if (p->name.n) {
      trawl_pattern_escape(p->prefix, p->name.p, p->name.n);
      g_string_append_c(p->prefix, '/');
    }
    /* Named by what it asks, and who asks: a part whose queries change
     * (.bazelignore edited, another indexer) starts afresh, alone; and
     * its cache, so named, holds its queries. */
    g_string_assign(id, TRAWL_INDEXER "\n");
    part_plan(p, root, x, id, false);
    hash64(id->str, id->len, p->id);
  }
  g_string_free(id, TRUE);
  g_free(names.v);
}

/* STATE/parts/ID.SUFFIX */
static char *
part_file(const char *state, const part *p, const char *suffix)
{
  return g_strdup_printf("%s/parts/%s%s", state, p->id, suffix);
}

/* What a re-check changed in a part's answers: the files added or removed
 * in each view (F, GF), and whether anything else changed. */
struct change_scan {
  GString *f, *gf;  /* the changes of Q_FILES and Q_GI_FILES: "+path\0" ... */
  bool other;       /* a change of another query, or of a BUILD file */
};

static void
on_change(size_t q, const char *changed, bool added, void *data)
{
  struct change_scan *s = data;
  const size_t n = strlen(changed);
  const size_t d = dir_len(changed, n);
  const char *base = d ? changed + d + 1 : changed;
  if ((q != Q_FILES && q != Q_GI_FILES) || is_build_file(base, n - (size_t)(base - changed))) {
    s->other = true;
    return;
  }
  GString *to = q == Q_FILES ? s->f : s->gf;
  g_string_append_c(to, added ? '+' : '-');
  g_string_append_len(to, changed, (gssize)n + 1);
}

/* Runs the part's plan from its cache (reading only the directories that
 * changed; a part without a cache is walked afresh), and marks it to be
 * made again unless nothing changed or only files that git does not ignore
 * were added or removed (the same changes in F and GF, no BUILD file among
 * them). */
static void
recheck_part(const char *state, part *p)
{
  char *cache = part_file(state, p, ".cache");
  TrawlCacheReport rep;
  GError *error = NULL;
  if (!trawl_cache_run(p->plan, cache, TRAWL_CACHE_WRITE_ON_CHANGE, &rep, &error))
    fail(3, "%s", error->message);
  if (rep.write_error)
    fail(3, "%s: %s", cache, rep.write_error->message);
  if (!rep.trusted) {
    p->redo = true;
  } else if (rep.changed) {
    struct change_scan s = {g_string_new(NULL), g_string_new(NULL), false};
    trawl_cache_changes(p->plan, on_change, &s);
    p->redo = p->redo || s.other || s.f->len != s.gf->len || memcmp(s.f->str, s.gf->str, s.f->len) != 0;
    g_string_free(s.f, TRUE);
    g_string_free(s.gf, TRUE);
  }
  trawl_cache_report_clear(&rep);
  g_free(cache);
}

/* Removes the files in STATE/parts/ of every part but those in KEEP (all
 * of them when KEEP is NULL); a name vanishing meanwhile is no trouble. */
static void
clear_parts(const char *dir, const part_list *keep)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    bool kept = false;
    for (size_t k = 0; keep && !kept && k < keep->n; k++)
      kept = strncmp(e->d_name, keep->v[k].id, 16) == 0 && e->d_name[16] == '.';
    if (!kept && unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
      fail(3, "%s/%s: %s", dir, e->d_name, strerror(errno));
  }
  closedir(d);
}

/* Frees a list's paths (each its own allocation, or "" not allocated) and
 * the list. */
static void
free_names(path_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].n)
      g_free((char *)l->v[i].p);
  g_free(l->v);
}

static void
free_facts(facts *f)
{
  for (int k = 0; k < N_FACTS; k++)
    g_free(fact_list(f, k)->v);
  g_ptr_array_unref(f->texts);
}

static void
free_parts(part_list *parts)
{
  for (size_t k = 0; k < parts->n; k++) {
    part *p = &parts->v[k];
    if (p->name.n)
      g_free((char *)p->name.p);
    g_string_free(p->prefix, TRUE);
    trawl_plan_free(p->plan);
    if (p->patterns)
      g_ptr_array_unref(p->patterns);
  }
  g_free(parts->v);
}

/* ---- the command ---------------------------------------------------------- */

/* This program, resolved: the trawl that writes the caches. */
static char *
self_path(const char *argv0)
{
  char *self = g_file_read_link("/proc/self/exe", NULL);
  if (!self)
    self = realpath(argv0, NULL);
  if (!self)
    fail(3, "cannot tell which trawl runs (%s)", argv0);
  return self;
}

int
cli_bazel_index(int argc, char **argv)
{
  char *root = NULL, *state_name = NULL;
  gboolean id = FALSE;
  GOptionEntry entries[] = {
    {"root", 0, 0, G_OPTION_ARG_FILENAME, &root,
     "The workspace (the directory that holds WORKSPACE)", "DIR"},
    {"state", 0, 0, G_OPTION_ARG_FILENAME, &state_name,
     "trawl's directory in the workspace, one name (the wrapper gives .trawl)", "NAME"},
    {"id", 0, 0, G_OPTION_ARG_NONE, &id,
     "Print the indexer's identity (the repository rule keeps an index only from its own)",
     NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new("--root DIR --state NAME | --id");
  g_option_context_set_summary(ctx, "trawl bazel-index: what git ignores in a Bazel workspace, "
                                    "for trawl_glob() (run by its tools/bazel wrapper; "
                                    "docs/bazel.md).");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error))
    fail(EXIT_USAGE, "%s", error->message);
  g_option_context_free(ctx);
  if (argc > 1)
    fail(EXIT_USAGE, "unexpected argument '%s'", argv[1]);
  if (id) {
    if (root || state_name)
      fail(EXIT_USAGE, "--id goes alone");
    printf("%s\n", TRAWL_INDEXER);
    return EXIT_OK;
  }
  if (!root || !state_name)
    fail(EXIT_USAGE, "--root DIR and --state NAME are both required");
  if (!*state_name || strchr(state_name, '/'))
    fail(EXIT_USAGE, "--state '%s': one name, not a path", state_name);
  char *state = g_strconcat(root, "/", state_name, NULL);
  char *stamp_file = g_strconcat(state, "/stamp", NULL);
  char *parts_dir = g_strconcat(state, "/parts", NULL);
  char *trawl_path = self_path(argv[0]);

  /* The queries: the whole workspace, as glob() walks it, less what
   * .bazelignore names, the output links and trawl's own directory (a
   * package of its own that changes while Bazel runs), cut in parts. `.git`
   * is listed (git ignores it) but not entered. */
  excludes x = {.texts = g_ptr_array_new_with_free_func(string_free)};
  path_list left_out = {0}, not_parts = {0};
  read_bazelignore(root, &x, &not_parts);
  exclude_output_links(root, &x, &left_out);
  exclude_path(&x, state_name, strlen(state_name), true);
  part_list parts = {0};
  make_parts(root, state_name, &not_parts, &left_out, &x, &parts);
  GString *ids = g_string_new(NULL);
  for (size_t k = 0; k < parts.n; k++)
    g_string_append_len(ids, parts.v[k].id, 16);
  char qhash[17];
  hash64(ids->str, ids->len, qhash);

  /* The caches are trusted by the trawl that wrote them only: another's,
   * and everything made from them, go. */
  stamp st = {0};
  read_stamp(stamp_file, &st);
  const bool same_trawl = st.digest[0] && strcmp(st.trawl, trawl_path) == 0;
  if (!same_trawl)
    clear_parts(parts_dir, NULL);
  if (mkdir(parts_dir, 0755) != 0 && errno != EEXIST)
    fail(3, "%s: %s", parts_dir, strerror(errno));

  /* Every part re-checked from its cache, as `trawl check` does: a plan of
   * the queries the cache holds (compiled as it is read), which are the
   * part's (its name says so). One with no facts or no cache (new, or its
   * queries changed) is made afresh from a plan of its queries. */
  bool any = false;
  GString *scratch = g_string_new(NULL);
  for (size_t k = 0; k < parts.n; k++) {
    part *p = &parts.v[k];
    char *facts_file = part_file(state, p, ".facts");
    char *cache = part_file(state, p, ".cache");
    p->redo = access(facts_file, R_OK) != 0;
    if (!p->redo)
      p->plan = trawl_cache_load_plan(cache, NULL);
    if (!p->plan) {
      if (!x.patterns)
        compile_excludes(&x);
      part_plan(p, root, &x, scratch, true);
    }
    g_free(facts_file);
    g_free(cache);
    recheck_part(state, p);
    any = any || p->redo;
  }
  g_string_free(scratch, TRUE);
  facts all;
  memset(&all, 0, sizeof all);
  all.texts = g_ptr_array_new_with_free_func(g_free);
  GString *index = g_string_new(NULL);
  if (!any && strcmp(st.queries, qhash) == 0) {
    char *kept = kept_name(state, st.digest);
    const bool have = access(kept, R_OK) == 0;
    g_free(kept);
    if (have) {
      printf("%s\n", st.digest);
      goto out;
    }
  }
  if (any)
    clear_parts(parts_dir, &parts);

  /* Every part's facts: made again from its answers, or as the last run
   * left them. */
  for (size_t k = 0; k < parts.n; k++) {
    part *p = &parts.v[k];
    char *name = part_file(state, p, ".facts");
    if (p->redo || !read_facts(name, &all)) {
      /* Problems the walk survived, as trawl prints them: when the part's
       * facts are made (the index is about to change), not on every
       * command. */
      cli_report_plan_problems(p->plan, NULL);
      facts mine;
      memset(&mine, 0, sizeof mine);
      summarize(p->plan, &mine);
      write_facts(name, &mine);
      for (int f = 0; f < N_FACTS; f++) {
        path_list *from = fact_list(&mine, f);
        for (size_t i = 0; i < from->n; i++)
          list_add(fact_list(&all, f), from->v[i].p, from->v[i].n);
        g_free(from->v);
      }
    }
    g_free(name);
  }
  settle_facts(&all);
  make_index(&all, &left_out, index);
  char digest[33];
  digest_of(index, digest);
  keep_index(state, digest, index);
  if (!same_trawl || strcmp(st.digest, digest) != 0 || strcmp(st.queries, qhash) != 0) {
    char *s = g_strdup_printf("%s %s %s\n", digest, qhash, trawl_path);
    write_file(stamp_file, s, strlen(s));
    g_free(s);
  }
  printf("%s\n", digest);

out:
  g_string_free(index, TRUE);
  free_facts(&all);
  free_parts(&parts);
  g_string_free(ids, TRUE);
  free_names(&left_out);
  free_names(&not_parts);
  g_ptr_array_unref(x.texts);
  if (x.patterns)
    g_ptr_array_unref(x.patterns);
  g_free(st.trawl);
  g_free(trawl_path);
  g_free(parts_dir);
  g_free(stamp_file);
  g_free(state);
  g_free(root);
  g_free(state_name);
  return EXIT_OK;
}
