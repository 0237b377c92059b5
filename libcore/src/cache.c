/* trawl — result caches: a plan's walks recorded in a file, re-validated by
 * stamps (trawl/plan.h, docs/cache.md).
 *
 * The file: a 56-byte header — magic, format version, body length, SHA-256
 * of the body — then the body, one GVariant in normal form: the trawl
 * version, the queries (pattern texts, dialects, flags, options, roots) and
 * per walk its root, its ignore sources outside the walked directories with
 * their stamps, and its memo (memo.h). Anything that does not check out is
 * not trusted: the run walks in full and writes a new file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ignore.h"
#include "plan-private.h"
#include "trawl/version.h"

#define CACHE_MAGIC "TRAWLC\x1a\n"
#define CACHE_FORMAT 1u
#define HEADER_SIZE 56

#define STAMP_T "(ttxuxutb)"
#define REC_T "(ayyyt)"
#define DIR_T "(ayt" STAMP_T "u" STAMP_T STAMP_T "ba" REC_T ")"
#define SRC_T "(ayy" STAMP_T ")"
#define GROUP_T "(ayttatay" "a" SRC_T "a" DIR_T ")"
#define PAT_T "(ayuu)"
#define OPT_T "(bbuibu)"
#define QUERY_T "(aya" PAT_T "a" PAT_T OPT_T ")"
#define CACHE_T "(sa" QUERY_T "a" GROUP_T ")"

/* ---- values ----------------------------------------------------------------- */

static GVariant *
bytes_v(const char *s, size_t len)
{
  return g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, s, len, 1);
}

static const char *
bytes_of(GVariant *v, size_t *len)
{
  gsize n = 0;
  const char *s = g_variant_get_fixed_array(v, &n, 1);
  *len = n;
  return s ? s : "";
}

static char *
bytes_dup(GVariant *v)
{
  size_t len;
  const char *s = bytes_of(v, &len);
  return g_strndup(s, len);
}

static GVariant *
stamp_v(const struct stamp *s)
{
  return g_variant_new(STAMP_T, (guint64)s->dev, (guint64)s->ino, (gint64)s->mtime_s,
                       (guint32)s->mtime_ns, (gint64)s->ctime_s, (guint32)s->ctime_ns,
                       (guint64)s->size, (gboolean)s->present);
}

static void
stamp_from(GVariant *v, struct stamp *s)
{
  guint64 dev, ino, size;
  gint64 ms, cs;
  guint32 mn, cn;
  gboolean present;
  g_variant_get(v, STAMP_T, &dev, &ino, &ms, &mn, &cs, &cn, &size, &present);
  s->dev = dev;
  s->ino = ino;
  s->mtime_s = ms;
  s->mtime_ns = mn;
  s->ctime_s = cs;
  s->ctime_ns = cn;
  s->size = size;
  s->present = present;
}

static GVariant *
patterns_v(const GPtrArray *pats)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a" PAT_T));
  for (guint j = 0; j < pats->len; j++) {
    const trawl_pattern *p = pats->pdata[j];
    size_t len;
    const char *text = trawl_pattern_text(p, &len);
    g_variant_builder_add(&b, "(@ayuu)", bytes_v(text, len), (guint32)trawl_pattern_dialect(p),
                          (guint32)trawl_pattern_flags(p));
  }
  return g_variant_builder_end(&b);
}

/* The queries as the cache records them: everything that decides a result
 * (not threads or the reader). */
static GVariant *
queries_v(const trawl_plan *plan)
{
  GVariantBuilder qs;
  g_variant_builder_init(&qs, G_VARIANT_TYPE("a" QUERY_T));
  for (guint i = 0; i < plan->queries->len; i++) {
    const struct pquery *q = plan->queries->pdata[i];
    const trawl_walk_options *o = &q->opt;
    g_variant_builder_add(&qs, "(@ay@a" PAT_T "@a" PAT_T OPT_T ")",
                          bytes_v(q->root, strlen(q->root)), patterns_v(q->includes),
                          patterns_v(q->excludes), (gboolean)o->hidden, (gboolean)o->follow,
                          (guint32)o->types, (gint32)o->max_depth, (gboolean)o->one_file_system,
                          (guint32)o->ignore);
  }
  return g_variant_builder_end(&qs);
}

static GVariant *
dir_v(const struct memo_dir *d)
{
  GVariantBuilder recs;
  g_variant_builder_init(&recs, G_VARIANT_TYPE("a" REC_T));
  for (guint i = 0; i < d->n; i++) {
    const struct memo_rec *r = &d->recs[i];
    g_variant_builder_add(&recs, "(@ayyyt)", bytes_v(r->name, r->len), (guint8)r->kind,
                          (guint8)r->type, (guint64)r->mask);
  }
  return g_variant_new("(@ayt@" STAMP_T "u@" STAMP_T "@" STAMP_T "b@a" REC_T ")",
                       bytes_v(d->path, d->len), (guint64)d->live, stamp_v(&d->st),
                       (guint32)d->has, stamp_v(&d->ignore[0]), stamp_v(&d->ignore[1]),
                       (gboolean)d->racy, g_variant_builder_end(&recs));
}

static struct memo_dir *
dir_from(GVariant *v)
{
  GVariant *path_v, *st_v, *ig0_v, *ig1_v, *recs_v;
  guint64 live;
  guint32 has;
  gboolean racy;
  g_variant_get(v, "(@ayt@" STAMP_T "u@" STAMP_T "@" STAMP_T "b@a" REC_T ")", &path_v, &live,
                &st_v, &has, &ig0_v, &ig1_v, &racy, &recs_v);
  size_t plen;
  const char *path = bytes_of(path_v, &plen);
  const gsize n = g_variant_n_children(recs_v);
  size_t names = 0;
  for (gsize i = 0; i < n; i++) {
    GVariant *r = g_variant_get_child_value(recs_v, i);
    GVariant *name = g_variant_get_child_value(r, 0);
    names += g_variant_n_children(name);
    g_variant_unref(name);
    g_variant_unref(r);
  }
  struct memo_dir *d = memo_dir_new(0, path, plen, (guint)n, names);
  char *at = memo_dir_names(d);
  for (gsize i = 0; i < n; i++) {
    GVariant *name_v;
    guint8 kind, type;
    guint64 mask;
    g_variant_get_child(recs_v, i, "(@ayyyt)", &name_v, &kind, &type, &mask);
    size_t len;
    const char *name = bytes_of(name_v, &len);
    memcpy(at, name, len);
    d->recs[i].name = at;
    d->recs[i].len = (uint32_t)len;
    d->recs[i].kind = kind <= MEMO_SUBTREE_LINK ? kind : MEMO_RESULT;
    d->recs[i].type = type;
    d->recs[i].mask = mask;
    at += len;
    g_variant_unref(name_v);
  }
  d->live = live;
  stamp_from(st_v, &d->st);
  d->has = has;
  stamp_from(ig0_v, &d->ignore[0]);
  stamp_from(ig1_v, &d->ignore[1]);
  d->racy = racy;
  g_variant_unref(path_v);
  g_variant_unref(st_v);
  g_variant_unref(ig0_v);
  g_variant_unref(ig1_v);
  g_variant_unref(recs_v);
  return d;
}

/* ---- ignore sources outside the walk ------------------------------------------ */

/* A source's stamp now. A directory (a `.git`) counts only as being one:
 * git writes in it all the time. */
static void
source_stamp(const char *path, guint8 kind, struct stamp *out)
{
  struct stat st;
  memset(out, 0, sizeof *out);
  if (stat(path, &st) != 0)
    return;
  if (kind == IGNORE_SOURCE_EXISTS || S_ISDIR(st.st_mode)) {
    out->present = true;
    out->size = S_ISDIR(st.st_mode) ? 1 : 0;
    return;
  }
  stamp_of(out, &st, true);
}

/* The sources of one walk: paths, kinds and stamps (taken before the walk);
 * ENV, the environment that chose them. */
struct sources {
  GPtrArray *paths;
  GByteArray *kinds;
  GArray *stamps;       /* struct stamp */
  GString *env;
};

static void
sources_init(struct sources *s, const struct group *g, const trawl_walk_options *o)
{
  s->paths = g_ptr_array_new_with_free_func(g_free);
  s->kinds = g_byte_array_new();
  s->stamps = g_array_new(FALSE, FALSE, sizeof(struct stamp));
  s->env = g_string_new(NULL);
  G_STATIC_ASSERT((int)TRAWL_IGNORE_VCS == (int)IGNORE_VCS &&
                  (int)TRAWL_IGNORE_DOT == (int)IGNORE_DOT);
  char *abs = realpath(g->root, NULL);
  if (abs)
    ignore_sources(o->ignore, abs, s->paths, s->kinds, s->env);
  free(abs);
  for (guint i = 0; i < s->paths->len; i++) {
    struct stamp st;
    source_stamp(s->paths->pdata[i], s->kinds->data[i], &st);
    g_array_append_val(s->stamps, st);
  }
}

static void
sources_clear(struct sources *s)
{
  g_ptr_array_unref(s->paths);
  g_byte_array_unref(s->kinds);
  g_array_unref(s->stamps);
  g_string_free(s->env, TRUE);
}

/* A stamp from the last 20 ms, or whole seconds from the last two seconds:
 * the file may change again and look the same. */
static bool
source_racy(const struct stamp *s, const struct timespec *now)
{
  if (!s->present || (s->mtime_s == 0 && s->ctime_s == 0))
    return false;
  const int64_t newest_s = MAX(s->mtime_s, s->ctime_s);
  if (s->mtime_ns == 0 && s->ctime_ns == 0)
    return newest_s + 2 >= now->tv_sec;
  const int64_t newest = MAX(s->mtime_s * 1000000000LL + s->mtime_ns,
                             s->ctime_s * 1000000000LL + s->ctime_ns);
  return newest >= (int64_t)now->tv_sec * 1000000000LL + now->tv_nsec - 20000000LL;
}

/* ---- the file ----------------------------------------------------------------- */

static void
put_le(guint8 *p, guint64 v, int n)
{
  for (int i = 0; i < n; i++)
    p[i] = (guint8)(v >> (8 * i));
}

static guint64
get_le(const guint8 *p, int n)
{
  guint64 v = 0;
  for (int i = n; i-- > 0;)
    v = (v << 8) | p[i];
  return v;
}

static void
checksum(const guint8 *data, gsize len, guint8 out[32])
{
  gsize n = 32;
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  g_checksum_update(ck, data, (gssize)len);
  g_checksum_get_digest(ck, out, &n);
  g_checksum_free(ck);
}

/* The body of cache file PATH, checked: NULL with *WHY set (NULL too: no
 * such file). */
static GVariant *
cache_load(const char *path, char **why)
{
  *why = NULL;
  gchar *data = NULL;
  gsize len = 0;
  GError *err = NULL;
  if (!g_file_get_contents(path, &data, &len, &err)) {
    if (!g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      *why = g_strdup_printf("cannot be read (%s)", err->message);
    g_error_free(err);
    return NULL;
  }
  const guint8 *h = (const guint8 *)data;
  const char *bad = NULL;
  if (len < HEADER_SIZE)
    bad = "is truncated";
  else if (memcmp(h, CACHE_MAGIC, 8) != 0)
    bad = "is not a trawl cache";
  if (bad) {
    *why = g_strdup(bad);
    g_free(data);
    return NULL;
  }
  const guint32 format = (guint32)get_le(h + 8, 4);
  const guint64 body = get_le(h + 16, 8);
  guint8 sum[32];
  if (format != CACHE_FORMAT)
    *why = g_strdup_printf("has format version %u, not %u", format, CACHE_FORMAT);
  else if (body != len - HEADER_SIZE)
    *why = g_strdup("is truncated");
  else if (checksum(h + HEADER_SIZE, body, sum), memcmp(sum, h + 24, 32) != 0)
    *why = g_strdup("is corrupt (its checksum does not match)");
  if (*why) {
    g_free(data);
    return NULL;
  }
  GBytes *bytes = g_bytes_new_take(data, len);
  GBytes *part = g_bytes_new_from_bytes(bytes, HEADER_SIZE, body);
  g_bytes_unref(bytes);
  GVariant *v = g_variant_ref_sink(g_variant_new_from_bytes(G_VARIANT_TYPE(CACHE_T), part, FALSE));
  g_bytes_unref(part);
  if (!g_variant_is_normal_form(v)) {
    *why = g_strdup("is corrupt (not in normal form)");
    g_variant_unref(v);
    return NULL;
  }
  return v;
}

/* Write BODY to PATH through a temporary file renamed into place: a reader
 * sees the old file or the new, never a part of either. */
static bool
cache_store(const char *path, GVariant *body, char **why)
{
  GBytes *b = g_variant_get_data_as_bytes(body);
  gsize len;
  const guint8 *data = g_bytes_get_data(b, &len);
  guint8 h[HEADER_SIZE] = {0};
  memcpy(h, CACHE_MAGIC, 8);
  put_le(h + 8, CACHE_FORMAT, 4);
  put_le(h + 16, len, 8);
  checksum(data, len, h + 24);

  char *tmp = g_strconcat(path, ".XXXXXX", NULL);
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);
  int err = errno;
  bool ok = fd >= 0;
  for (int part = 0; ok && part < 2; part++) {
    const guint8 *p = part ? data : h;
    size_t left = part ? len : HEADER_SIZE;
    while (left > 0) {
      ssize_t n = write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        ok = false;
        break;
      }
      p += n;
      left -= (size_t)n;
    }
  }
  if (fd >= 0 && close(fd) != 0 && ok) {
    err = errno;
    ok = false;
  }
  if (ok && rename(tmp, path) != 0) {
    err = errno;
    ok = false;
  }
  if (!ok) {
    *why = g_strdup_printf("%s: %s", path, g_strerror(err));
    if (fd >= 0)
      unlink(tmp);
  }
  g_free(tmp);
  g_bytes_unref(b);
  return ok;
}

/* ---- runs ------------------------------------------------------------------------ */

void
trawl_cache_report_clear(trawl_cache_report *r)
{
  g_free(r->warning);
  g_free(r->write_error);
  memset(r, 0, sizeof *r);
}

static int
compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the results memo M recorded for the queries of group G to
 * plan->previous. */
static void
previous_from(trawl_plan *plan, const struct group *g, const struct walk_memo *m)
{
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, m->dirs);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const struct memo_dir *d = value;
    for (guint i = 0; i < d->n; i++) {
      const struct memo_rec *r = &d->recs[i];
      if (r->kind != MEMO_RESULT)
        continue;
      for (uint64_t bits = r->mask; bits; bits &= bits - 1) {
        unsigned b = (unsigned)__builtin_ctzll(bits);
        if (b >= g->members->len)
          continue;
        size_t q = g_array_index(g->members, size_t, b);
        GString *p = g_string_new_len(d->path, (gssize)d->len);
        if (d->len)
          g_string_append_c(p, '/');
        g_string_append_len(p, r->name, (gssize)r->len);
        g_ptr_array_add(plan->previous->pdata[q], g_string_free(p, FALSE));
      }
    }
  }
}

/* Does cache walk V have group G's root and queries? */
static bool
group_matches(const struct group *g, GVariant *v)
{
  guint64 dev, ino;
  g_variant_get_child(v, 1, "t", &dev);
  g_variant_get_child(v, 2, "t", &ino);
  GVariant *members = g_variant_get_child_value(v, 3);
  gsize n = 0;
  const guint64 *m = g_variant_get_fixed_array(members, &n, sizeof(guint64));
  bool same = dev == (guint64)g->dev && ino == (guint64)g->ino && n == g->members->len;
  for (gsize i = 0; same && i < n; i++)
    same = m[i] == g_array_index(g->members, size_t, i);
  g_variant_unref(members);
  return same;
}

#define SOURCE_RACY 0xff /* a source's kind when its stamp was racy */

/* Were cache walk V's sources stamped as SRC's are now (and not racy)? */
static bool
sources_unchanged(GVariant *v, const struct sources *src)
{
  GVariant *env_v = g_variant_get_child_value(v, 4);
  size_t elen;
  const char *env = bytes_of(env_v, &elen);
  bool same = elen == src->env->len && memcmp(env, src->env->str, elen) == 0;
  g_variant_unref(env_v);
  GVariant *list = g_variant_get_child_value(v, 5);
  const gsize n = g_variant_n_children(list);
  same = same && n == src->paths->len;
  for (gsize i = 0; same && i < n; i++) {
    GVariant *path_v, *st_v;
    guint8 kind;
    g_variant_get_child(list, i, "(@ayy@" STAMP_T ")", &path_v, &kind, &st_v);
    size_t plen;
    const char *path = bytes_of(path_v, &plen);
    struct stamp was;
    stamp_from(st_v, &was);
    const char *now = src->paths->pdata[i];
    same = kind != SOURCE_RACY && plen == strlen(now) && memcmp(path, now, plen) == 0 &&
           stamp_equal(&was, &g_array_index(src->stamps, struct stamp, i));
    g_variant_unref(path_v);
    g_variant_unref(st_v);
  }
  g_variant_unref(list);
  return same;
}

static struct walk_memo *
memo_from(GVariant *v)
{
  struct walk_memo *m = walk_memo_new();
  GVariant *dirs = g_variant_get_child_value(v, 6);
  const gsize n = g_variant_n_children(dirs);
  for (gsize i = 0; i < n; i++) {
    GVariant *d = g_variant_get_child_value(dirs, i);
    struct memo_dir *md = dir_from(d);
    walk_memo_add(m, md);
    memo_dir_unref(md);
    g_variant_unref(d);
  }
  g_variant_unref(dirs);
  return m;
}

static int
compare_dirs(gconstpointer a, gconstpointer b)
{
  const struct memo_dir *x = *(const struct memo_dir *const *)a;
  const struct memo_dir *y = *(const struct memo_dir *const *)b;
  int c = memcmp(x->path, y->path, MIN(x->len, y->len));
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

static GVariant *
group_v(const struct group *g, const struct sources *src, const struct timespec *now)
{
  GVariantBuilder members, sources, dirs;
  g_variant_builder_init(&members, G_VARIANT_TYPE("at"));
  for (guint i = 0; i < g->members->len; i++)
    g_variant_builder_add(&members, "t", (guint64)g_array_index(g->members, size_t, i));
  g_variant_builder_init(&sources, G_VARIANT_TYPE("a" SRC_T));
  for (guint i = 0; i < src->paths->len; i++) {
    const struct stamp *st = &g_array_index(src->stamps, struct stamp, i);
    const char *p = src->paths->pdata[i];
    guint8 kind = source_racy(st, now) ? SOURCE_RACY : src->kinds->data[i];
    g_variant_builder_add(&sources, "(@ayy@" STAMP_T ")", bytes_v(p, strlen(p)), kind,
                          stamp_v(st));
  }
  g_variant_builder_init(&dirs, G_VARIANT_TYPE("a" DIR_T));
  if (g->memo) {
    /* In path order, so that the same walk writes the same file. */
    GPtrArray *all = g_ptr_array_new();
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, g->memo->dirs);
    while (g_hash_table_iter_next(&it, &key, &value))
      g_ptr_array_add(all, value);
    g_ptr_array_sort(all, compare_dirs);
    for (guint i = 0; i < all->len; i++)
      g_variant_builder_add_value(&dirs, dir_v(all->pdata[i]));
    g_ptr_array_unref(all);
  }
  return g_variant_new("(@ayttat@ay@a" SRC_T "@a" DIR_T ")", bytes_v(g->root, strlen(g->root)),
                       (guint64)g->dev, (guint64)g->ino, &members,
                       bytes_v(src->env->str, src->env->len), g_variant_builder_end(&sources),
                       g_variant_builder_end(&dirs));
}

bool
trawl_plan_run_cached(trawl_plan *plan, const char *path, unsigned flags,
                      trawl_cache_report *report, GError **error)
{
  memset(report, 0, sizeof *report);
  if (plan->previous)
    g_ptr_array_unref(plan->previous);
  plan->previous = NULL;

  /* Is there a cache, and is it this plan's? */
  char *why = NULL;
  GVariant *cache = cache_load(path, &why);
  GVariant *queries = g_variant_ref_sink(queries_v(plan));
  if (cache) {
    const char *version = NULL;
    g_variant_get_child(cache, 0, "&s", &version);
    GVariant *cached = g_variant_get_child_value(cache, 1);
    if (strcmp(version, TRAWL_VERSION_STRING) != 0)
      why = g_strdup_printf("was written by trawl %s", version);
    else if (!g_variant_equal(cached, queries))
      why = g_strdup("was written for other queries");
    g_variant_unref(cached);
  }
  GError *first = NULL;
  const bool grouped = plan_group(plan, &first);
  GVariant *walks = NULL;
  if (cache && why == NULL) {
    walks = g_variant_get_child_value(cache, 2);
    bool same = g_variant_n_children(walks) == plan->groups->len;
    for (guint g = 0; same && g < plan->groups->len; g++) {
      GVariant *gv = g_variant_get_child_value(walks, g);
      same = group_matches(plan->groups->pdata[g], gv);
      g_variant_unref(gv);
    }
    if (!same)
      why = g_strdup("was written for other roots");
  }
  const bool usable = cache && why == NULL;
  report->trusted = usable;
  report->warning = why;

  /* Each walk's sources, stamped before it reads them (a change after that
   * shows next time), and the record it may trust. */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct sources *src = g_new0(struct sources, plan->groups->len);
  if (usable) {
    plan->previous = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    for (guint i = 0; i < plan->queries->len; i++)
      g_ptr_array_add(plan->previous, g_ptr_array_new_with_free_func(g_free));
  }
  for (guint g = 0; g < plan->groups->len; g++) {
    struct group *grp = plan->groups->pdata[g];
    const struct pquery *q0 = plan->queries->pdata[g_array_index(grp->members, size_t, 0)];
    sources_init(&src[g], grp, &q0->opt);
    grp->memo = walk_memo_new();
    if (usable) {
      GVariant *gv = g_variant_get_child_value(walks, g);
      struct walk_memo *old = memo_from(gv);
      previous_from(plan, grp, old);
      if (sources_unchanged(gv, &src[g]))
        grp->memo_old = old;
      else
        walk_memo_free(old);
      g_variant_unref(gv);
    }
  }
  if (plan->previous) {
    for (guint i = 0; i < plan->previous->len; i++) {
      GPtrArray *list = plan->previous->pdata[i];
      g_ptr_array_sort(list, compare_strings);
      g_ptr_array_add(list, NULL);
    }
  }

  const bool walked = plan_walk(plan, first ? NULL : &first);

  report->changed = !usable;
  for (guint i = 0; usable && i < plan->queries->len && !report->changed; i++) {
    size_t n = 0, m = 0;
    const char *const *is = trawl_plan_results(plan, i, &n);
    const char *const *was = trawl_plan_previous_results(plan, i, &m);
    report->changed = n != m;
    for (size_t k = 0; k < n && !report->changed; k++)
      report->changed = strcmp(is[k], was[k]) != 0;
  }
  for (guint g = 0; g < plan->groups->len; g++) {
    trawl_walk_stats st;
    trawl_walker_stats(((struct group *)plan->groups->pdata[g])->walker, &st);
    report->dirs_read += st.dirs_opened;
    report->dirs_reused += st.dirs_reused;
  }
  const bool write = (flags & TRAWL_CACHE_WRITE_ON_CHANGE)
                         ? report->changed
                         : report->changed || report->dirs_read > 0;
  /* A run that could not answer every query records nothing. */
  if (write && grouped && walked) {
    GVariantBuilder groups;
    g_variant_builder_init(&groups, G_VARIANT_TYPE("a" GROUP_T));
    for (guint g = 0; g < plan->groups->len; g++)
      g_variant_builder_add_value(&groups, group_v(plan->groups->pdata[g], &src[g], &now));
    GVariant *body = g_variant_ref_sink(g_variant_new("(s@a" QUERY_T "@a" GROUP_T ")",
                                                      TRAWL_VERSION_STRING, queries,
                                                      g_variant_builder_end(&groups)));
    report->written = cache_store(path, body, &report->write_error);
    g_variant_unref(body);
  }
  for (guint g = 0; g < plan->groups->len; g++) {
    struct group *grp = plan->groups->pdata[g];
    sources_clear(&src[g]);
    walk_memo_free(grp->memo_old);
    grp->memo_old = NULL;
  }
  g_free(src);
  if (walks)
    g_variant_unref(walks);
  if (cache)
    g_variant_unref(cache);
  g_variant_unref(queries);
  if (first)
    g_propagate_error(error, first);
  return grouped && walked;
}

const char *const *
trawl_plan_previous_results(const trawl_plan *plan, size_t q, size_t *n)
{
  if (n)
    *n = 0;
  if (plan->previous == NULL || q >= plan->previous->len)
    return NULL;
  GPtrArray *list = plan->previous->pdata[q];
  if (n)
    *n = list->len - 1;
  return (const char *const *)list->pdata;
}

/* ---- a plan from a cache file ----------------------------------------------------- */

trawl_plan *
trawl_plan_new_from_cache(const char *path, GError **error)
{
  char *why = NULL;
  GVariant *cache = cache_load(path, &why);
  if (cache == NULL) {
    g_set_error(error, G_FILE_ERROR, why ? G_FILE_ERROR_INVAL : G_FILE_ERROR_NOENT, "%s: %s",
                path, why ? why : "no such cache file");
    g_free(why);
    return NULL;
  }
  trawl_plan *plan = trawl_plan_new();
  plan->owned = g_ptr_array_new_with_free_func((GDestroyNotify)trawl_pattern_free);
  GVariant *qs = g_variant_get_child_value(cache, 1);
  const gsize n = g_variant_n_children(qs);
  bool ok = true;
  for (gsize i = 0; i < n && ok; i++) {
    GVariant *root_v, *inc_v, *exc_v;
    gboolean hidden, follow, ofs;
    guint32 types, ignore;
    gint32 max_depth;
    g_variant_get_child(qs, i, "(@ay@a" PAT_T "@a" PAT_T OPT_T ")", &root_v, &inc_v, &exc_v,
                        &hidden, &follow, &types, &max_depth, &ofs, &ignore);
    GPtrArray *lists[2] = {g_ptr_array_new(), g_ptr_array_new()};
    for (int k = 0; k < 2 && ok; k++) {
      GVariant *l = k ? exc_v : inc_v;
      for (gsize j = 0; j < g_variant_n_children(l) && ok; j++) {
        GVariant *text_v;
        guint32 dialect, pflags;
        g_variant_get_child(l, j, "(@ayuu)", &text_v, &dialect, &pflags);
        size_t len;
        const char *text = bytes_of(text_v, &len);
        GError *perr = NULL;
        trawl_pattern *p = trawl_pattern_compile(text, len, (TrawlDialect)dialect, pflags, &perr);
        if (p == NULL) {
          g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: a pattern does not compile: %s",
                      path, perr->message);
          g_error_free(perr);
          ok = false;
        } else {
          g_ptr_array_add(plan->owned, p);
          g_ptr_array_add(lists[k], p);
        }
        g_variant_unref(text_v);
      }
    }
    if (ok) {
      trawl_walk_options o;
      trawl_walk_options_init(&o);
      o.hidden = hidden;
      o.follow = follow;
      o.types = types;
      o.max_depth = max_depth;
      o.one_file_system = ofs;
      o.ignore = ignore;
      char *root = bytes_dup(root_v);
      trawl_query q = {root, (const trawl_pattern *const *)lists[0]->pdata, lists[0]->len,
                       (const trawl_pattern *const *)lists[1]->pdata, lists[1]->len, &o};
      trawl_plan_add(plan, &q);
      g_free(root);
    }
    g_ptr_array_unref(lists[0]);
    g_ptr_array_unref(lists[1]);
    g_variant_unref(root_v);
    g_variant_unref(inc_v);
    g_variant_unref(exc_v);
  }
  g_variant_unref(qs);
  g_variant_unref(cache);
  if (!ok) {
    trawl_plan_free(plan);
    return NULL;
  }
  return plan;
}
