/* trawl — watchman over its unix socket (watchman.h; docs/cache.md,
 * "Watchman").
 *
 * A request is a BSER value; the answer is one BSER value (watchman answers
 * in the encoding it was asked in). Not JSON: watchman 4.9.0 cannot write a
 * file name that is not UTF-8 in JSON, and then sends no answer at all (the
 * query waited out; every such change cost a check ANSWER_WITHIN_MS, and
 * the clock of the next question on the connection), where BSER's strings
 * are bytes. Checked against watchman 4.9.0, Debian 12's: `watch-list`,
 * `watch-project`, `get-config`, `clock`, and `query` with `since`,
 * `relative_root`, `fields` and `empty_on_fresh_instance`. A recrawl (after
 * an inotify overflow, say) does not make 4.9.0's old clocks fresh
 * instances; its count is in every answer's warning, so a clock is recorded
 * with it and a different count is a reason not to trust the answer.
 *
 * A query syncs: watchman makes a cookie file in the watch's cookie
 * directory and waits until it sees it. 4.9.0 picks that directory when
 * the watch begins: the first of its `ignore_vcs` directories (.git, .svn,
 * .hg) at the watch's root, else the root itself. Two cases where the
 * answer cannot come at once are told before asking (cookies_unusable()).
 * A cookie directory made again (a `.git` removed and put back): the
 * cookie may be made before watchman watches the new directory, and it
 * then waits its whole sync_timeout and fails (seen at 1 of 3 tries on an
 * idle machine); so the cookie directory's inode is recorded with the
 * clock, and another one is the stat path at once. Cookies in the walk's
 * root itself: each question would change the root's stamp, which the
 * re-check compares every time, so no answer could ever vouch for an
 * unchanged tree (the root read, the cache rewritten, at every check);
 * the stat path, without asking, keeps the root as it is.
 */
#define _GNU_SOURCE
#include "watchman.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "../json/json.h"

/* How long a question may take (the query's own sync_timeout is less:
 * its error comes first). Short: a check that waits this long and then
 * takes the stat path costs a build this much more; watchman 4.9.0 on a
 * loaded machine sometimes answers later (docs/cache.md, "Watchman"). */
#define ANSWER_WITHIN_MS 3000
#define SYNC_TIMEOUT_MS 1500

struct wm {
  int fd;
  enum wm_mode mode;
};

bool
wm_mode_from_env(enum wm_mode *mode)
{
  const char *v = g_getenv("TRAWL_WATCHMAN");
  *mode = WM_AUTO;
  if (v == NULL || strcmp(v, "auto") == 0)
    return true;
  if (strcmp(v, "on") == 0)
    *mode = WM_ON;
  else if (strcmp(v, "off") == 0)
    *mode = WM_OFF;
  else {
    *mode = WM_OFF;
    return false;
  }
  return true;
}

/* watchman 4.9.0's own choice when nothing names a socket:
 * ${TMPDIR:-/tmp}/$USER-state/sock (`watchman get-sockname`). */
static char *
default_sock(void)
{
  const char *tmp = g_getenv("TMPDIR");
  const char *user = g_getenv("USER");
  if (user == NULL || !*user)
    user = g_getenv("LOGNAME");
  if (user == NULL || !*user) {
    const struct passwd *pw = getpwuid(geteuid());
    user = pw ? pw->pw_name : NULL;
  }
  if (user == NULL)
    return NULL;
  return g_strdup_printf("%s/%s-state/sock", tmp && *tmp ? tmp : "/tmp", user);
}

struct wm *
wm_connect(enum wm_mode mode, char **why)
{
  const char *named = g_getenv("TRAWL_WATCHMAN_SOCK");
  if (named == NULL || !*named)
    named = g_getenv("WATCHMAN_SOCK");
  char *path = named && *named ? g_strdup(named) : default_sock();
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (path == NULL || strlen(path) >= sizeof sa.sun_path) {
    *why = g_strdup("no socket to connect to");
    g_free(path);
    return NULL;
  }
  memcpy(sa.sun_path, path, strlen(path) + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (const struct sockaddr *)&sa, sizeof sa) != 0) {
    *why = g_strdup_printf("not running (%s: %s)", path, g_strerror(errno));
    if (fd >= 0)
      close(fd);
    g_free(path);
    return NULL;
  }
  g_free(path);
  struct wm *w = g_new0(struct wm, 1);
  w->fd = fd;
  w->mode = mode;
  return w;
}

void
wm_close(struct wm *w)
{
  if (w == NULL)
    return;
  close(w->fd);
  g_free(w);
}

void
wm_at_clear(struct wm_at *a)
{
  g_free(a->watch);
  g_free(a->rel);
  g_free(a->clock);
  g_free(a->cookies);
  memset(a, 0, sizeof *a);
}

/* BSER (version 1), watchman's binary encoding: a PDU is "\0\1", the
 * value's length as an integer, and the value; integers carry their width
 * in their tag, strings are bytes with a length. Only the tags below are
 * written; every tag watchman 4.9.0 writes in version 1 is read. */
enum {
  B_ARRAY = 0x00, B_OBJECT = 0x01, B_STRING = 0x02, B_INT8 = 0x03, B_INT16 = 0x04,
  B_INT32 = 0x05, B_INT64 = 0x06, B_REAL = 0x07, B_TRUE = 0x08, B_FALSE = 0x09,
  B_NULL = 0x0a, B_TEMPLATE = 0x0b, B_SKIP = 0x0c, B_UTF8 = 0x0d,
};

static void
b_int(GByteArray *b, gint64 v)
{
  guint8 tag = v == (gint8)v ? B_INT8 : v == (gint16)v ? B_INT16 : v == (gint32)v ? B_INT32 : B_INT64;
  const guint size = tag == B_INT8 ? 1 : tag == B_INT16 ? 2 : tag == B_INT32 ? 4 : 8;
  g_byte_array_append(b, &tag, 1);
  /* Native byte order, as watchman reads it; the low bytes first on the
   * little-endian machines trawl is built for (meson.build). */
  guint8 bytes[8];
  for (guint i = 0; i < size; i++)
    bytes[G_BYTE_ORDER == G_LITTLE_ENDIAN ? i : size - 1 - i] = (guint8)((guint64)v >> (8 * i));
  g_byte_array_append(b, bytes, size);
}

static void
b_tag(GByteArray *b, guint8 tag, gint64 n)
{
  g_byte_array_append(b, &tag, 1);
  if (tag == B_ARRAY || tag == B_OBJECT)
    b_int(b, n);
}

/* S as a string onto B. False if S is not UTF-8: watchman 4.9.0 keeps its
 * watches in a JSON state file, and trawl does not ask for a root it may
 * not be able to keep. */
static bool
b_str(GByteArray *b, const char *s)
{
  const guint8 tag = B_STRING;
  g_byte_array_append(b, &tag, 1);
  b_int(b, (gint64)strlen(s));
  g_byte_array_append(b, (const guint8 *)s, (guint)strlen(s));
  return g_utf8_validate(s, -1, NULL);
}

struct brd {
  const guint8 *p, *end;
};

/* An integer at R (its tag first). */
static bool
b_read_int(struct brd *r, gint64 *v)
{
  if (r->p >= r->end)
    return false;
  const guint8 tag = *r->p++;
  const size_t size = tag == B_INT8 ? 1 : tag == B_INT16 ? 2 : tag == B_INT32 ? 4 : tag == B_INT64 ? 8 : 0;
  if (size == 0 || (size_t)(r->end - r->p) < size)
    return false;
  guint64 u = 0;
  for (size_t i = 0; i < size; i++)
    u |= (guint64)r->p[G_BYTE_ORDER == G_LITTLE_ENDIAN ? i : size - 1 - i] << (8 * i);
  if (size < 8 && (u >> (8 * size - 1)) & 1)
    u |= ~(guint64)0 << (8 * size); /* sign-extend */
  r->p += size;
  *v = (gint64)u;
  return true;
}

/* A count at R: not negative and at most the bytes left (each element
 * takes one at least). */
static bool
b_read_count(struct brd *r, size_t *n)
{
  gint64 v;
  if (!b_read_int(r, &v) || v < 0 || (guint64)v > (guint64)(r->end - r->p))
    return false;
  *n = (size_t)v;
  return true;
}

static json_value *b_read(struct brd *r, int depth);

/* A string at R (its tag first) into *S, *LEN (to free). */
static bool
b_read_str(struct brd *r, char **s, size_t *len)
{
  if (r->p >= r->end || (*r->p != B_STRING && *r->p != B_UTF8))
    return false;
  r->p++;
  if (!b_read_count(r, len))
    return false;
  *s = g_malloc(*len + 1);
  memcpy(*s, r->p, *len);
  (*s)[*len] = '\0';
  r->p += *len;
  return true;
}

/* A template at R (after its tag): an array of names, then a count of
 * objects, each of one value (or B_SKIP: none) per name. */
static json_value *
b_read_template(struct brd *r, int depth)
{
  json_value *names = b_read(r, depth + 1);
  size_t n;
  bool ok = names && names->kind == JSON_ARRAY && b_read_count(r, &n);
  for (size_t i = 0; ok && i < names->n; i++)
    ok = names->items[i]->kind == JSON_STRING;
  json_value *v = NULL;
  if (ok) {
    v = g_new0(json_value, 1);
    v->kind = JSON_ARRAY;
    v->items = g_new0(json_value *, MAX(n, 1));
  }
  for (size_t i = 0; ok && i < n; i++) {
    json_value *o = v->items[v->n++] = g_new0(json_value, 1);
    o->kind = JSON_OBJECT;
    o->members = g_new0(json_member, MAX(names->n, 1));
    for (size_t k = 0; ok && k < names->n; k++) {
      if (r->p < r->end && *r->p == B_SKIP) {
        r->p++;
        continue;
      }
      json_value *m = b_read(r, depth + 1);
      ok = m != NULL;
      if (ok)
        o->members[o->n++] = (json_member){g_strdup(names->items[k]->str), names->items[k]->len, m};
    }
  }
  json_value_free(names);
  if (!ok)
    json_value_free(v);
  return ok ? v : NULL;
}

/* The value at R, or NULL when it is not BSER (or nests deeper than
 * JSON_MAX_DEPTH). Numbers are read, not kept: no answer's number is used. */
static json_value *
b_read(struct brd *r, int depth)
{
  if (r->p >= r->end || depth > JSON_MAX_DEPTH)
    return NULL;
  const guint8 tag = *r->p;
  if (tag == B_TEMPLATE) {
    r->p++;
    return b_read_template(r, depth);
  }
  json_value *v = g_new0(json_value, 1);
  bool ok = true;
  gint64 i;
  size_t n;
  switch (tag) {
  case B_STRING:
  case B_UTF8:
    v->kind = JSON_STRING;
    ok = b_read_str(r, &v->str, &v->len);
    break;
  case B_INT8:
  case B_INT16:
  case B_INT32:
  case B_INT64:
    v->kind = JSON_NUMBER;
    v->integer = true;
    ok = b_read_int(r, &i);
    break;
  case B_REAL:
    v->kind = JSON_NUMBER;
    ok = r->end - r->p >= 9;
    r->p += ok ? 9 : 0;
    break;
  case B_TRUE:
  case B_FALSE:
  case B_NULL:
    v->kind = tag == B_TRUE ? JSON_TRUE : tag == B_FALSE ? JSON_FALSE : JSON_NULL;
    r->p++;
    break;
  case B_ARRAY:
    v->kind = JSON_ARRAY;
    r->p++;
    ok = b_read_count(r, &n);
    v->items = g_new0(json_value *, ok ? MAX(n, 1) : 1);
    for (size_t k = 0; ok && k < n; k++)
      ok = (v->items[v->n++] = b_read(r, depth + 1)) != NULL;
    break;
  case B_OBJECT:
    v->kind = JSON_OBJECT;
    r->p++;
    ok = b_read_count(r, &n);
    v->members = g_new0(json_member, ok ? MAX(n, 1) : 1);
    for (size_t k = 0; ok && k < n; k++) {
      json_member *m = &v->members[v->n];
      ok = b_read_str(r, &m->name, &m->name_len);
      if (ok)
        v->n++;
      ok = ok && (m->value = b_read(r, depth + 1)) != NULL;
    }
    break;
  default:
    ok = false;
  }
  if (!ok) {
    json_value_free(v);
    return NULL;
  }
  return v;
}

/* Member NAME of object V, or NULL. */
static const json_value *
member(const json_value *v, const char *name)
{
  if (v == NULL || v->kind != JSON_OBJECT)
    return NULL;
  for (size_t i = 0; i < v->n; i++)
    if (strcmp(v->members[i].name, name) == 0)
      return v->members[i].value;
  return NULL;
}

static const char *
string_of(const json_value *v)
{
  return v && v->kind == JSON_STRING && strlen(v->str) == v->len ? v->str : NULL;
}

json_value *
wm_bser_value(const guint8 *p, size_t len)
{
  struct brd r = {p, p + len};
  json_value *v = b_read(&r, 1);
  if (v && r.p != r.end) {
    json_value_free(v);
    v = NULL;
  }
  return v;
}

/* The bytes of the integer whose tag is TAG (0: not an integer tag). */
static size_t
b_int_size(guint8 tag)
{
  return tag == B_INT8 ? 1 : tag == B_INT16 ? 2 : tag == B_INT32 ? 4 : tag == B_INT64 ? 8 : 0;
}

/* Send REQUEST (a BSER value) and read the answer: NULL with *WHY set (to
 * free) when it cannot be had or is an error. A question not answered in
 * time gives the connection up: its answer could still come, and would be
 * read as the next one's. */
static json_value *
ask(struct wm *w, const GByteArray *request, char **why)
{
  if (w->fd < 0) {
    *why = g_strdup_printf("an earlier question went unanswered within %d ms", ANSWER_WITHIN_MS);
    return NULL;
  }
  char *err = NULL;
  GByteArray *pdu = g_byte_array_new();
  g_byte_array_append(pdu, (const guint8 *)"\0\1", 2);
  b_int(pdu, request->len);
  g_byte_array_append(pdu, request->data, request->len);
  for (size_t done = 0; done < pdu->len && err == NULL;) {
    const ssize_t n = send(w->fd, pdu->data + done, pdu->len - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      err = g_strdup_printf("cannot be asked (%s)", n < 0 ? g_strerror(errno) : "closed");
    else
      done += (size_t)n;
  }
  g_byte_array_set_size(pdu, 0);
  /* The answer: "\0\1", its length (an integer), then that many bytes. A
   * daemon that does not answer must not hang a build: after
   * ANSWER_WITHIN_MS, the stat path. */
  const gint64 deadline = g_get_monotonic_time() + ANSWER_WITHIN_MS * 1000;
  size_t head = 0, whole = 0; /* the header's and the PDU's lengths, once known */
  guint8 buf[16384];
  while (err == NULL && (whole == 0 || pdu->len < whole)) {
    struct pollfd p = {w->fd, POLLIN, 0};
    const gint64 left = (deadline - g_get_monotonic_time()) / 1000;
    const int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      err = g_strdup_printf("did not answer within %d ms", ANSWER_WITHIN_MS);
      close(w->fd);
      w->fd = -1;
      break;
    }
    const ssize_t n = ready < 0 ? -1 : recv(w->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0) {
      err = g_strdup_printf("gave no answer (%s)", n < 0 ? g_strerror(errno) : "closed");
      break;
    }
    g_byte_array_append(pdu, buf, (guint)n);
    if (whole == 0 && pdu->len >= 3) {
      head = 3 + b_int_size(pdu->data[2]);
      gint64 len = -1;
      struct brd h = {pdu->data + 2, pdu->data + pdu->len};
      if (memcmp(pdu->data, "\0\1", 2) != 0 || head == 3)
        err = g_strdup("answered what is not BSER");
      else if (pdu->len >= head && (!b_read_int(&h, &len) || len < 0 || len > (1 << 30)))
        err = g_strdup("answered what is not BSER");
      else if (pdu->len >= head)
        whole = head + (size_t)len;
    }
  }
  json_value *v = NULL;
  if (err == NULL && pdu->len != whole)
    err = g_strdup("answered more than one answer");
  if (err == NULL && (v = wm_bser_value(pdu->data + head, whole - head)) == NULL)
    err = g_strdup("answered what is not BSER");
  g_byte_array_free(pdu, TRUE);
  const char *e = err ? NULL : string_of(member(v, "error"));
  if (err == NULL && (v->kind != JSON_OBJECT || e))
    err = e ? g_strdup_printf("said: %s", e) : g_strdup("answered what is not an object");
  if (err) {
    json_value_free(v);
    *why = err;
    return NULL;
  }
  return v;
}

/* The recrawls an answer's warning counts (0: none). */
static guint64
recrawls_of(const json_value *v)
{
  const char *warning = string_of(member(v, "warning"));
  const char *at = warning ? strstr(warning, "Recrawled this watch ") : NULL;
  return at ? g_ascii_strtoull(at + strlen("Recrawled this watch "), NULL, 10) : 0;
}

/* The watch holding REAL, from `watch-list` (auto) or `watch-project`
 * (on): *WATCH and *REL. */
static bool
watch_of(struct wm *w, const char *real, char **watch, char **rel, char **why)
{
  GByteArray *q = g_byte_array_new();
  bool ok = true;
  b_tag(q, B_ARRAY, w->mode == WM_ON ? 2 : 1);
  if (w->mode == WM_ON) {
    b_str(q, "watch-project");
    ok = b_str(q, real);
  } else {
    b_str(q, "watch-list");
  }
  json_value *v = ok ? ask(w, q, why) : NULL;
  if (!ok)
    *why = g_strdup("a root whose path is not UTF-8");
  g_byte_array_free(q, TRUE);
  if (v == NULL)
    return false;
  *watch = *rel = NULL;
  if (w->mode == WM_ON) {
    const char *wt = string_of(member(v, "watch"));
    const char *rp = string_of(member(v, "relative_path"));
    if (wt) {
      *watch = g_strdup(wt);
      *rel = g_strdup(rp ? rp : "");
    }
  } else {
    /* The deepest watch holding REAL. */
    const json_value *roots = member(v, "roots");
    size_t best = 0;
    for (size_t i = 0; roots && roots->kind == JSON_ARRAY && i < roots->n; i++) {
      const char *r = string_of(roots->items[i]);
      const size_t n = r ? strlen(r) : 0;
      if (r == NULL || n <= best || strncmp(real, r, n) != 0 ||
          (real[n] != '\0' && real[n] != '/' && strcmp(r, "/") != 0))
        continue;
      best = n;
      g_free(*watch);
      *watch = g_strdup(r);
    }
    if (*watch) {
      const char *below = real + best;
      while (*below == '/')
        below++;
      *rel = g_strdup(below);
    }
  }
  json_value_free(v);
  if (*watch == NULL) {
    *why = g_strdup("the root is not under a watch");
  } else if (wm_vcs_path(*rel, strlen(*rel))) {
    /* Watchman names nothing that changes in there. */
    *why = g_strdup("the root is in a version control directory (.git, .hg, .svn), where "
                    "watchman reports no change");
    g_clear_pointer(watch, g_free);
    g_clear_pointer(rel, g_free);
  }
  return *watch != NULL;
}

/* AT's cookie directory as 4.9.0 picks it (see the top): the first of
 * the names in VCS (the watch's `ignore_vcs`, NULL: watchman's default)
 * that is a directory at the watch's root, else the root; with its device
 * and inode now. Unknown (NULL) when even the root cannot be stat'ed. */
static void
cookies_of(struct wm_at *at, const json_value *vcs)
{
  static const char *const kDefault[] = {".git", ".svn", ".hg"};
  const size_t n = vcs && vcs->kind == JSON_ARRAY ? vcs->n : G_N_ELEMENTS(kDefault);
  struct stat st;
  for (size_t i = 0; i < n; i++) {
    const char *name = vcs && vcs->kind == JSON_ARRAY ? string_of(vcs->items[i]) : kDefault[i];
    if (name == NULL || !*name || strchr(name, '/'))
      continue;
    char *path = g_build_filename(at->watch, name, NULL);
    const bool dir = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
    g_free(path);
    if (dir) {
      at->cookies = g_strdup(name);
      at->cookies_dev = st.st_dev, at->cookies_ino = st.st_ino;
      return;
    }
  }
  if (lstat(at->watch, &st) == 0 && S_ISDIR(st.st_mode)) {
    at->cookies = g_strdup("");
    at->cookies_dev = st.st_dev, at->cookies_ino = st.st_ino;
  }
}

/* Why a query on WAS's watch could not be answered at once (see the top),
 * or NULL. */
static char *
cookies_unusable(const struct wm_at *was)
{
  if (was->cookies == NULL)
    return g_strdup("the watch's cookie directory is unknown");
  if (strcmp(was->cookies, was->rel) == 0)
    return g_strdup(was->cookies[0]
                        ? "watchman would make its sync cookies in the walk's root"
                        : "watchman would make its sync cookies in the walk's root (the watch's"
                          " root has no .git directory)");
  char *path = g_build_filename(was->watch, was->cookies, NULL);
  struct stat st;
  const bool same = lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
                    (guint64)st.st_dev == was->cookies_dev &&
                    (guint64)st.st_ino == was->cookies_ino;
  g_free(path);
  if (same)
    return NULL;
  return g_strdup_printf("the watch's cookie directory (%s) was removed or replaced since the"
                         " clock (watchman could not sync at once)",
                         was->cookies[0] ? was->cookies : "its root");
}

bool
wm_clock_of(struct wm *w, const char *real, struct wm_at *at, char **why)
{
  memset(at, 0, sizeof *at);
  if (!watch_of(w, real, &at->watch, &at->rel, why))
    return false;
  /* A watch that leaves directories out (ignore_dirs) does not report
   * changes there. */
  GByteArray *q = g_byte_array_new();
  b_tag(q, B_ARRAY, 2);
  b_str(q, "get-config");
  b_str(q, at->watch);
  json_value *v = ask(w, q, why);
  const json_value *dirs = member(member(v, "config"), "ignore_dirs");
  bool ok = v != NULL;
  if (ok && dirs && !(dirs->kind == JSON_ARRAY && dirs->n == 0)) {
    *why = g_strdup("the watch ignores directories (ignore_dirs)");
    ok = false;
  }
  /* Before the clock: a cookie directory made again after this is
   * another one at the next question. */
  if (ok)
    cookies_of(at, member(member(v, "config"), "ignore_vcs"));
  json_value_free(v);
  g_byte_array_set_size(q, 0);
  b_tag(q, B_ARRAY, 2);
  b_str(q, "clock");
  b_str(q, at->watch);
  v = ok ? ask(w, q, why) : NULL;
  g_byte_array_free(q, TRUE);
  const char *clock = string_of(member(v, "clock"));
  if (v && clock) {
    at->clock = g_strdup(clock);
    at->recrawls = recrawls_of(v);
  } else if (v) {
    *why = g_strdup("gave no clock");
  }
  json_value_free(v);
  if (at->clock == NULL)
    wm_at_clear(at);
  return at->clock != NULL;
}

bool
wm_since(struct wm *w, const struct wm_at *was, GPtrArray **names, struct wm_at *now,
         char **why)
{
  memset(now, 0, sizeof *now);
  *names = NULL;
  if ((*why = cookies_unusable(was)) != NULL)
    return false;
  GByteArray *q = g_byte_array_new();
  b_tag(q, B_ARRAY, 3);
  b_str(q, "query");
  bool ok = b_str(q, was->watch);
  b_tag(q, B_OBJECT, was->rel[0] ? 5 : 4);
  b_str(q, "since");
  ok = b_str(q, was->clock) && ok;
  if (was->rel[0]) {
    b_str(q, "relative_root");
    ok = b_str(q, was->rel) && ok;
  }
  b_str(q, "fields");
  b_tag(q, B_ARRAY, 1);
  b_str(q, "name");
  b_str(q, "empty_on_fresh_instance");
  b_tag(q, B_TRUE, 0);
  b_str(q, "sync_timeout");
  b_int(q, SYNC_TIMEOUT_MS);
  json_value *v = ok ? ask(w, q, why) : NULL;
  if (!ok)
    *why = g_strdup("a path that is not UTF-8");
  g_byte_array_free(q, TRUE);
  if (v == NULL)
    return false;
  const json_value *fresh = member(v, "is_fresh_instance");
  const json_value *files = member(v, "files");
  const char *clock = string_of(member(v, "clock"));
  const guint64 recrawls = recrawls_of(v);
  if (fresh == NULL || fresh->kind != JSON_FALSE) {
    *why = g_strdup("a fresh instance (the daemon restarted, or another watch)");
  } else if (recrawls != was->recrawls) {
    *why = g_strdup("the watch was recrawled since");
  } else if (files == NULL || files->kind != JSON_ARRAY || clock == NULL) {
    *why = g_strdup("answered without files or a clock");
  } else {
    *names = g_ptr_array_new_with_free_func(g_free);
    for (size_t i = 0; i < files->n && *names; i++) {
      const char *name = string_of(files->items[i]);
      if (name == NULL) {
        *why = g_strdup("named a file that is not a path");
        g_clear_pointer(names, g_ptr_array_unref);
        break;
      }
      g_ptr_array_add(*names, g_strdup(name));
    }
    if (*names) {
      now->watch = g_strdup(was->watch);
      now->rel = g_strdup(was->rel);
      now->clock = g_strdup(clock);
      now->recrawls = recrawls;
      now->cookies = g_strdup(was->cookies);
      now->cookies_dev = was->cookies_dev, now->cookies_ino = was->cookies_ino;
    }
  }
  json_value_free(v);
  return *names != NULL;
}
