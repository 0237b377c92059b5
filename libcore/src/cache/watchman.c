/* trawl — watchman over its unix socket (watchman.h; docs/cache.md,
 * "Watchman").
 *
 * A request is a JSON array on one line; the answer is one JSON object on
 * one line (watchman answers in the encoding it was asked in). Checked
 * against watchman 4.9.0, Debian 12's: `watch-list`, `watch-project`,
 * `get-config`, `clock`, and `query` with `since`, `relative_root`,
 * `fields` and `empty_on_fresh_instance`. A recrawl (after an inotify
 * overflow, say) does not make 4.9.0's old clocks fresh instances; its
 * count is in every answer's warning, so a clock is recorded with it and a
 * different count is a reason not to trust the answer.
 */
#define _GNU_SOURCE
#include "watchman.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "../json/json.h"

/* How long a question may take (the query's own sync_timeout is less:
 * its error comes first). Short: a check that waits this long and then
 * takes the stat path costs a build this much more; watchman 4.9.0 on a
 * loaded machine sometimes answers later (docs/cache.md, "Watchman"). */
#define ANSWER_WITHIN_MS 3000
#define SYNC_TIMEOUT_MS "1500"

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
  memset(a, 0, sizeof *a);
}

/* S as a JSON string onto B; false if S is not UTF-8 (watchman's paths are). */
static bool
put_str(GString *b, const char *s)
{
  if (!g_utf8_validate(s, -1, NULL))
    return false;
  g_string_append_c(b, '"');
  for (const char *p = s; *p; p++) {
    const unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\')
      g_string_append_c(b, '\\'), g_string_append_c(b, (char)c);
    else if (c < 0x20)
      g_string_append_printf(b, "\\u%04x", c);
    else
      g_string_append_c(b, (char)c);
  }
  g_string_append_c(b, '"');
  return true;
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

/* Send REQUEST (one line) and read the answer: NULL with *WHY set (to
 * free) when it cannot be had or is an error. */
static json_value *
ask(struct wm *w, GString *request, char **why)
{
  g_string_append_c(request, '\n');
  for (size_t done = 0; done < request->len;) {
    const ssize_t n = send(w->fd, request->str + done, request->len - done, MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR)
        continue;
      *why = g_strdup_printf("cannot be asked (%s)", n < 0 ? g_strerror(errno) : "closed");
      return NULL;
    }
    done += (size_t)n;
  }
  GString *line = g_string_new(NULL);
  char buf[16384];
  /* A daemon that does not answer must not hang a build: after
   * ANSWER_WITHIN_MS, the stat path. */
  const gint64 deadline = g_get_monotonic_time() + ANSWER_WITHIN_MS * 1000;
  for (;;) {
    struct pollfd p = {w->fd, POLLIN, 0};
    const gint64 left = (deadline - g_get_monotonic_time()) / 1000;
    const int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      *why = g_strdup_printf("did not answer within %d ms", ANSWER_WITHIN_MS);
      g_string_free(line, TRUE);
      return NULL;
    }
    const ssize_t n = ready < 0 ? -1 : recv(w->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0) {
      *why = g_strdup_printf("gave no answer (%s)", n < 0 ? g_strerror(errno) : "closed");
      g_string_free(line, TRUE);
      return NULL;
    }
    g_string_append_len(line, buf, n);
    if (buf[n - 1] == '\n')
      break;
  }
  json_error err;
  json_value *v = json_parse(line->str, line->len, &err);
  g_string_free(line, TRUE);
  const char *e = string_of(member(v, "error"));
  if (v == NULL || v->kind != JSON_OBJECT || e) {
    *why = v == NULL ? g_strdup_printf("answered what is not JSON (%s at byte %zu)", err.message,
                                       err.offset)
                     : e ? g_strdup_printf("said: %s", e)
                         : g_strdup("answered what is not an object");
    json_value_free(v);
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
  GString *q = g_string_new(NULL);
  bool ok = true;
  if (w->mode == WM_ON) {
    g_string_append(q, "[\"watch-project\",");
    ok = put_str(q, real);
    g_string_append_c(q, ']');
  } else {
    g_string_append(q, "[\"watch-list\"]");
  }
  json_value *v = ok ? ask(w, q, why) : NULL;
  if (!ok)
    *why = g_strdup("a root whose path is not UTF-8");
  g_string_free(q, TRUE);
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
  if (*watch == NULL)
    *why = g_strdup("the root is not under a watch");
  return *watch != NULL;
}

bool
wm_clock_of(struct wm *w, const char *real, struct wm_at *at, char **why)
{
  memset(at, 0, sizeof *at);
  if (!watch_of(w, real, &at->watch, &at->rel, why))
    return false;
  /* A watch that leaves directories out (ignore_dirs) does not report
   * changes there. */
  GString *q = g_string_new("[\"get-config\",");
  put_str(q, at->watch);
  g_string_append_c(q, ']');
  json_value *v = ask(w, q, why);
  const json_value *dirs = member(member(v, "config"), "ignore_dirs");
  bool ok = v != NULL;
  if (ok && dirs && !(dirs->kind == JSON_ARRAY && dirs->n == 0)) {
    *why = g_strdup("the watch ignores directories (ignore_dirs)");
    ok = false;
  }
  json_value_free(v);
  g_string_assign(q, "[\"clock\",");
  put_str(q, at->watch);
  g_string_append_c(q, ']');
  v = ok ? ask(w, q, why) : NULL;
  g_string_free(q, TRUE);
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
  GString *q = g_string_new("[\"query\",");
  bool ok = put_str(q, was->watch);
  g_string_append(q, ",{\"since\":");
  ok = ok && put_str(q, was->clock);
  if (was->rel[0]) {
    g_string_append(q, ",\"relative_root\":");
    ok = ok && put_str(q, was->rel);
  }
  g_string_append(q, ",\"fields\":[\"name\"],\"empty_on_fresh_instance\":true,"
                    "\"sync_timeout\":" SYNC_TIMEOUT_MS "}]");
  json_value *v = ok ? ask(w, q, why) : NULL;
  if (!ok)
    *why = g_strdup("a path that is not UTF-8");
  g_string_free(q, TRUE);
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
    }
  }
  json_value_free(v);
  return *names != NULL;
}
