/* trawl — ignore files read as git reads them (see ignore.h).
 *
 * Learned from gitignore(5) and from git's behaviour (checked with git 2.39
 * by tests/diff/git_ignore_diff.py), not from its code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ignore.h"

/* ---- parsing --------------------------------------------------------------- */

/* Cut trailing spaces that no backslash escapes (gitignore(5)): a backslash
 * protects the byte after it; a trailing lone backslash stops the trim. */
static size_t
trim_trailing_spaces(const char *s, size_t len)
{
  size_t keep = len;
  bool in_spaces = false;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == ' ') {
      if (!in_spaces) {
        keep = i;
        in_spaces = true;
      }
    } else if (s[i] == '\\') {
      i++;
      if (i >= len)
        return len;
      in_spaces = false;
      keep = len;
    } else {
      in_spaces = false;
      keep = len;
    }
  }
  return in_spaces ? keep : len;
}

/* A run of two or more unescaped '*' acts as "**" in wildmatch whatever its
 * length: shorten each to two, so that a rule of thousands of stars stays
 * within the compiler's limit. Returns a new string of *LEN bytes. */
static char *
collapse_stars(const char *p, size_t *len)
{
  GString *out = g_string_sized_new(*len);
  for (size_t i = 0; i < *len; i++) {
    if (p[i] == '\\' && i + 1 < *len) {
      g_string_append_len(out, p + i, 2);
      i++;
      continue;
    }
    if (p[i] == '*' && out->len >= 2 && out->str[out->len - 1] == '*' &&
        out->str[out->len - 2] == '*' && (out->len < 3 || out->str[out->len - 3] != '\\'))
      continue;
    g_string_append_c(out, p[i]);
  }
  *len = out->len;
  return g_string_free(out, FALSE);
}

static void
add_rule(GArray *rules, const char *line, size_t len, unsigned lineno)
{
  struct ignore_rule r = {0};
  r.line = lineno;
  r.shown = g_strndup(line, len);
  const char *p = line;
  if (len > 0 && p[0] == '!') {
    r.negated = true;
    p++;
    len--;
  }
  if (len > 0 && p[len - 1] == '/') {
    r.dir_only = true;
    len--;
  }
  r.basename = memchr(p, '/', len) == NULL;
  if (!r.basename && p[0] == '/') {
    p++;
    len--;
  }
  /* An empty pattern ("!", "/") matches no name. A pattern the compiler
   * refuses (longer than its 64 KiB once star runs are shortened) matches
   * nothing: a documented divergence, git has no limit. */
  if (len > 0) {
    char *text = collapse_stars(p, &len);
    r.pattern = trawl_pattern_compile(text, len, TRAWL_DIALECT_GIT, 0, NULL);
    g_free(text);
    if (r.pattern && !(trawl_pattern_flags(r.pattern) & TRAWL_PATTERN_ICASE))
      r.suffix = trawl_pattern_literal_suffix(r.pattern, &r.suffix_len);
  }
  g_array_append_val(rules, r);
}

/* Fill F's sets of last bytes from its rules. */
static void
file_masks(struct ignore_file *f)
{
  memset(f->last_file, 0, sizeof f->last_file);
  memset(f->last_dir, 0, sizeof f->last_dir);
  for (size_t i = 0; i < f->n; i++) {
    const struct ignore_rule *r = &f->rules[i];
    if (r->pattern == NULL)
      continue;
    uint64_t m[4] = {~UINT64_C(0), ~UINT64_C(0), ~UINT64_C(0), ~UINT64_C(0)};
    if (r->suffix_len > 0) {
      const uint8_t c = (uint8_t)r->suffix[r->suffix_len - 1];
      memset(m, 0, sizeof m);
      m[c >> 6] = UINT64_C(1) << (c & 63);
    }
    for (unsigned k = 0; k < 4; k++) {
      f->last_dir[k] |= m[k];
      if (!r->dir_only)
        f->last_file[k] |= m[k];
    }
  }
}

struct ignore_file *
ignore_file_parse(const char *source, const char *data, size_t len)
{
  GArray *rules = g_array_new(FALSE, FALSE, sizeof(struct ignore_rule));
  /* A UTF-8 byte-order mark at the start is not part of the first line. */
  if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
    data += 3;
    len -= 3;
  }
  unsigned lineno = 1;
  size_t start = 0;
  while (start < len) {
    const char *nl = memchr(data + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - data) : len;
    const char *line = data + start;
    size_t n = end - start;
    if (n > 0 && line[0] != '#') {
      /* One CR before the line's end goes, the last line's too (git adds
       * the missing newline before it looks). */
      if (line[n - 1] == '\r')
        n--;
      /* git handles each line as a C string. */
      const char *nul = memchr(line, '\0', n);
      if (nul)
        n = (size_t)(nul - line);
      n = trim_trailing_spaces(line, n);
      add_rule(rules, line, n, lineno);
    }
    lineno++;
    start = end + 1;
  }
  struct ignore_file *f = g_new0(struct ignore_file, 1);
  f->refs = 1;
  f->source = g_strdup(source);
  f->n = rules->len;
  f->rules = (struct ignore_rule *)(void *)g_array_free(rules, FALSE);
  file_masks(f);
  return f;
}

int
ignore_file_read(int dirfd, const char *name, bool nofollow, const char *source,
                 struct ignore_file **out)
{
  *out = NULL;
  int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
  if (fd < 0)
    return errno;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return err;
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return EISDIR;
  }
  if (st.st_size > (off_t)IGNORE_FILE_MAX) {
    close(fd);
    return EFBIG;
  }
  /* Read to the end whatever fstat said (a file may grow or be special),
   * never past the limit. */
  GByteArray *buf = g_byte_array_sized_new(S_ISREG(st.st_mode) ? (guint)st.st_size : 4096);
  char chunk[65536];
  int err = 0;
  for (;;) {
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      err = errno;
      break;
    }
    if (got == 0)
      break;
    if (buf->len + (size_t)got > IGNORE_FILE_MAX) {
      err = EFBIG;
      break;
    }
    g_byte_array_append(buf, (const guint8 *)chunk, (guint)got);
  }
  close(fd);
  if (err == 0)
    *out = ignore_file_parse(source, (const char *)buf->data, buf->len);
  g_byte_array_free(buf, TRUE);
  return err;
}

struct ignore_file *
ignore_file_ref(struct ignore_file *f)
{
  if (f)
    g_atomic_int_inc(&f->refs);
  return f;
}

void
ignore_file_unref(struct ignore_file *f)
{
  if (f == NULL || !g_atomic_int_dec_and_test(&f->refs))
    return;
  for (size_t i = 0; i < f->n; i++) {
    trawl_pattern_free(f->rules[i].pattern);
    g_free(f->rules[i].shown);
  }
  g_free(f->rules);
  g_free(f->source);
  g_free(f);
}

static inline bool
tail_equal(const char *a, const char *b, size_t n)
{
  for (size_t k = n; k-- > 0;)
    if (a[k] != b[k])
      return false;
  return true;
}

/* ignore_file_match() with the last component of PATH found already: the
 * BLEN bytes at BASE. */
static const struct ignore_rule *
file_match(const struct ignore_file *f, const char *path, size_t len, const char *base,
           size_t blen, bool is_dir)
{
  for (size_t i = f->n; i-- > 0;) {
    const struct ignore_rule *r = &f->rules[i];
    if (r->pattern == NULL || (r->dir_only && !is_dir))
      continue;
    /* The literal suffix first, inline: "*.o" against "main.c" is refused
     * without a call. */
    const char *s = r->basename ? base : path;
    const size_t n = r->basename ? blen : len;
    if (r->suffix_len > n || !tail_equal(s + n - r->suffix_len, r->suffix, r->suffix_len))
      continue;
    if (trawl_pattern_match(r->pattern, s, n))
      return r;
  }
  return NULL;
}

const struct ignore_rule *
ignore_file_match(const struct ignore_file *f, const char *path, size_t len, bool is_dir)
{
  const char *slash = memrchr(path, '/', len);
  const char *base = slash ? slash + 1 : path;
  return file_match(f, path, len, base, len - (size_t)(base - path), is_dir);
}

/* ---- repositories ---------------------------------------------------------- */

static char *
read_small_file(const char *path)
{
  char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(path, &text, &len, NULL))
    return NULL;
  if (len > 65536) {
    g_free(text);
    return NULL;
  }
  return text;
}

/* The common directory of the git directory GIT_DIR: a linked work tree
 * keeps info/ and config there, as its `commondir` file says; else GIT_DIR
 * itself. */
static char *
common_of(const char *git_dir)
{
  char *commondir_file = g_build_filename(git_dir, "commondir", NULL);
  char *text = read_small_file(commondir_file);
  g_free(commondir_file);
  if (text == NULL)
    return g_strdup(git_dir);
  char *target = g_strstrip(text);
  char *common = g_path_is_absolute(target) ? g_strdup(target)
                                            : g_build_filename(git_dir, target, NULL);
  g_free(text);
  return common;
}

/* The git directory TOP's `.git` leads to, and in *COMMON its common
 * directory, whether or not they make a repository (*VALID); NULL when
 * there is no `.git` or a `.git` file names nothing. */
static char *
git_dir_at(const char *top, char **common, bool *valid)
{
  *common = NULL;
  *valid = false;
  char *dotgit = g_build_filename(top, ".git", NULL);
  struct stat st;
  if (stat(dotgit, &st) != 0) {
    g_free(dotgit);
    return NULL;
  }
  char *git_dir = NULL;
  if (S_ISDIR(st.st_mode)) {
    git_dir = dotgit;
  } else {
    /* "gitdir: PATH" (a submodule, a linked work tree). */
    char *text = read_small_file(dotgit);
    g_free(dotgit);
    if (text == NULL || !g_str_has_prefix(text, "gitdir:")) {
      g_free(text);
      return NULL;
    }
    char *target = g_strstrip(text + strlen("gitdir:"));
    git_dir = g_path_is_absolute(target) ? g_strdup(target)
                                         : g_build_filename(top, target, NULL);
    g_free(text);
  }
  *common = common_of(git_dir);
  /* What git takes for a repository: HEAD in the git directory, objects/
   * and refs/ in the common one. A `.git` that is anything else is an
   * ordinary directory to git (the outer rules apply inside it). */
  char *head = g_build_filename(git_dir, "HEAD", NULL);
  char *objects = g_build_filename(*common, "objects", NULL);
  char *refs = g_build_filename(*common, "refs", NULL);
  *valid = lstat(head, &st) == 0 && stat(objects, &st) == 0 && S_ISDIR(st.st_mode) &&
           stat(refs, &st) == 0 && S_ISDIR(st.st_mode);
  g_free(head);
  g_free(objects);
  g_free(refs);
  return git_dir;
}

char *
ignore_git_dir(const char *top, char **common)
{
  bool valid;
  char *git_dir = git_dir_at(top, common, &valid);
  if (git_dir && !valid) {
    g_free(git_dir);
    g_free(*common);
    *common = NULL;
    return NULL;
  }
  return git_dir;
}

char *
ignore_find_top(const char *dir)
{
  char *d = g_strdup(dir);
  for (;;) {
    char *common = NULL;
    char *git_dir = ignore_git_dir(d, &common);
    g_free(common);
    g_free(git_dir);
    if (git_dir)
      return d;
    char *up = g_path_get_dirname(d);
    if (strcmp(up, d) == 0) {
      g_free(up);
      g_free(d);
      return NULL;
    }
    g_free(d);
    d = up;
  }
}

/* ---- git configuration: core.excludesFile, extensions.objectFormat ----------- */

/* Parse one value of a git config line starting at *P (after '='): quotes
 * joined, escapes resolved, a backslash-newline continuing the value on the
 * next line, comments and surrounding spaces dropped. *P is left at the end
 * of the value's last line. */
static char *
config_value(const char **pp)
{
  const char *p = *pp;
  GString *v = g_string_new(NULL);
  bool quoted = false;
  gsize trailing = 0; /* length of v up to its last byte that is not an unquoted space */
  while (*p == ' ' || *p == '\t')
    p++;
  for (; *p && *p != '\n'; p++) {
    char c = *p;
    if (!quoted && (c == '#' || c == ';'))
      break;
    if (c == '"') {
      quoted = !quoted;
      trailing = v->len;
      continue;
    }
    if (c == '\\' && p[1] == '\n') {
      p++; /* the value goes on */
      continue;
    }
    if (c == '\\' && p[1] == '\r' && p[2] == '\n') {
      p += 2;
      continue;
    }
    if (c == '\\' && p[1]) {
      p++;
      switch (*p) {
      case 'n': g_string_append_c(v, '\n'); break;
      case 't': g_string_append_c(v, '\t'); break;
      case 'b': if (v->len) g_string_truncate(v, v->len - 1); break;
      default: g_string_append_c(v, *p); break;
      }
      trailing = v->len;
      continue;
    }
    g_string_append_c(v, c);
    if (quoted || (c != ' ' && c != '\t' && c != '\r'))
      trailing = v->len;
  }
  /* Skip a comment to the end of its line. */
  while (*p && *p != '\n')
    p++;
  *pp = p;
  g_string_truncate(v, trailing);
  return g_string_free(v, FALSE);
}

/* Look for SECTION.KEY (both lower case) in the config file PATH; replace
 * *VALUE when set. Subsections ([core "x"]) and include directives are not
 * followed. */
static void
config_scan(const char *path, const char *section, const char *key, char **value)
{
  char *text = NULL;
  if (path == NULL || !g_file_get_contents(path, &text, NULL, NULL))
    return;
  bool in_section = false;
  const char *p = text;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\r')
      p++;
    if (*p == '[') {
      const char *close = strchr(p, ']');
      const char *nl = strchr(p, '\n');
      if (close == NULL || (nl && nl < close)) {
        in_section = false;
        p = nl ? nl + 1 : p + strlen(p);
        continue;
      }
      char *name = g_strndup(p + 1, (gsize)(close - p - 1));
      g_strstrip(name);
      in_section = g_ascii_strcasecmp(name, section) == 0;
      g_free(name);
      p = close + 1;
      while (*p == ' ' || *p == '\t')
        p++;
    }
    const size_t klen = strlen(key);
    if (in_section && g_ascii_strncasecmp(p, key, klen) == 0) {
      const char *rest = p + klen;
      while (*rest == ' ' || *rest == '\t')
        rest++;
      if (*rest == '=') {
        rest++;
        g_free(*value);
        *value = config_value(&rest);
        p = rest;
      }
    }
    const char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : p + strlen(p);
  }
  g_free(text);
}

/* git's boolean environment variables: true, yes, on or a number not 0. */
static bool
env_true(const char *name)
{
  const char *v = g_getenv(name);
  if (v == NULL || *v == '\0')
    return false;
  if (!g_ascii_strcasecmp(v, "true") || !g_ascii_strcasecmp(v, "yes") ||
      !g_ascii_strcasecmp(v, "on"))
    return true;
  char *end = NULL;
  long n = strtol(v, &end, 10);
  return end != v && *end == '\0' && n != 0;
}

static char *
home_path(const char *rel)
{
  const char *home = g_getenv("HOME");
  if (home == NULL || *home == '\0')
    return NULL;
  return g_build_filename(home, rel, NULL);
}

static char *
xdg_path(const char *rel)
{
  const char *xdg = g_getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg)
    return g_build_filename(xdg, "git", rel, NULL);
  const char *home = g_getenv("HOME");
  if (home == NULL || *home == '\0')
    return NULL;
  return g_build_filename(home, ".config", "git", rel, NULL);
}

char *
ignore_excludes_file(const char *common, const char *top)
{
  char *value = NULL;
  if (!env_true("GIT_CONFIG_NOSYSTEM")) {
    const char *sys = g_getenv("GIT_CONFIG_SYSTEM");
    config_scan(sys ? sys : "/etc/gitconfig", "core", "excludesfile", &value);
  }
  const char *global = g_getenv("GIT_CONFIG_GLOBAL");
  if (global) {
    config_scan(global, "core", "excludesfile", &value);
  } else {
    char *xdg = xdg_path("config"), *home = home_path(".gitconfig");
    config_scan(xdg, "core", "excludesfile", &value);
    config_scan(home, "core", "excludesfile", &value);
    g_free(xdg);
    g_free(home);
  }
  if (common) {
    char *local = g_build_filename(common, "config", NULL);
    config_scan(local, "core", "excludesfile", &value);
    g_free(local);
  }
  if (value && *value == '\0') {
    g_free(value);
    return NULL; /* set to nothing: no excludes file */
  }
  if (value == NULL)
    return xdg_path("ignore");
  if (g_str_has_prefix(value, "~/")) {
    char *expanded = home_path(value + 2);
    g_free(value);
    return expanded;
  }
  if (!g_path_is_absolute(value) && top) {
    char *abs = g_build_filename(top, value, NULL);
    g_free(value);
    return abs;
  }
  return value;
}

/* ---- the index ----------------------------------------------------------------- */

/* The length of the object names of the repository whose common directory
 * is COMMON: 32 when its configuration says extensions.objectFormat =
 * sha256, else 20 (SHA-1). */
static size_t
hash_len_of(const char *common)
{
  char *config = g_build_filename(common, "config", NULL);
  char *format = NULL;
  config_scan(config, "extensions", "objectformat", &format);
  const size_t len = format && g_ascii_strcasecmp(format, "sha256") == 0 ? 32 : 20;
  g_free(format);
  g_free(config);
  return len;
}

struct gitindex_reader *
ignore_index_reader(const char *index_path)
{
  char *git_dir = g_path_get_dirname(index_path);
  char *common = common_of(git_dir);
  struct gitindex_reader *rd = gitindex_reader_start(index_path, hash_len_of(common));
  g_free(common);
  g_free(git_dir);
  return rd;
}

/* ---- what a walk depends on outside the walked directories ------------------- */

static void
source_add(GPtrArray *paths, GByteArray *kinds, char *path, guint8 kind)
{
  if (path == NULL)
    return;
  g_ptr_array_add(paths, path);
  g_byte_array_append(kinds, &kind, 1);
}

void
ignore_sources_env(GString *env)
{
  static const char *const vars[] = {"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_SYSTEM",
                                     "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME", "HOME"};
  /* Appended, not printed: a process's first printf costs more than the
   * rest of this (docs/adr/0004-cache-file-read-cost.md). */
  for (size_t i = 0; i < G_N_ELEMENTS(vars); i++) {
    const char *v = g_getenv(vars[i]);
    g_string_append(env, vars[i]);
    g_string_append_c(env, '=');
    g_string_append(env, v ? v : "(unset)");
    g_string_append_c(env, '\0');
  }
}

/* The sources of the `.git` in directory D (absolute), appended: the
 * `.git` itself; for one that leads to a git directory (a repository or
 * not), what made it one or not — its HEAD, commondir, objects/ and refs/:
 * with these stamped, the rest of the list follows from the stamps, and a
 * cache compares them alone; and for a repository, its info/exclude, its
 * index (as INDEX_KIND), config and the excludes file. True when it is a
 * repository.
 *
 * NESTED (a repository below a walk's root, recorded with its directory):
 * a git directory that is its own common directory (no commondir) is
 * stamped whole instead, mtime and ctime (IGNORE_SOURCE_GITDIR): HEAD,
 * commondir, objects/, refs/ and the index cannot come, go or be replaced
 * (git writes the index and HEAD by a rename) without changing it — one
 * stat for five, which keeps `trawl check` of a tree with twenty vendored
 * clones within 1.2× of one with none (docs/benchmarks.md). git writes
 * there on most of its commands in that repository, each then costing one
 * read of it; the top's, which every git command at the top writes in, is
 * recorded name by name. */
static bool
git_sources(const char *d, unsigned flags, bool nested, guint8 index_kind, GPtrArray *paths,
            GByteArray *kinds)
{
  char *dotgit = g_build_filename(d, ".git", NULL);
  char *common = NULL;
  bool valid = false;
  char *git_dir = (flags & IGNORE_VCS) ? git_dir_at(d, &common, &valid) : NULL;
  const bool whole = nested && git_dir && strcmp(common, git_dir) == 0;
  const bool dotgit_dir = git_dir && strcmp(git_dir, dotgit) == 0;
  source_add(paths, kinds, dotgit, whole && dotgit_dir ? IGNORE_SOURCE_GITDIR : IGNORE_SOURCE_STAMP);
  if (git_dir == NULL)
    return false;
  if (whole && !dotgit_dir) {
    source_add(paths, kinds, g_strdup(git_dir), IGNORE_SOURCE_GITDIR);
  } else if (!whole) {
    source_add(paths, kinds, g_build_filename(git_dir, "HEAD", NULL), IGNORE_SOURCE_ENTRY);
    source_add(paths, kinds, g_build_filename(git_dir, "commondir", NULL), IGNORE_SOURCE_STAMP);
    source_add(paths, kinds, g_build_filename(common, "objects", NULL), IGNORE_SOURCE_EXISTS);
    source_add(paths, kinds, g_build_filename(common, "refs", NULL), IGNORE_SOURCE_EXISTS);
  }
  if (valid) {
    source_add(paths, kinds, g_build_filename(common, "info", "exclude", NULL),
               IGNORE_SOURCE_STAMP);
    /* The index the walk may ask (a work tree's own: in its git
     * directory, not the common one). */
    if (!whole)
      source_add(paths, kinds, g_build_filename(git_dir, "index", NULL), index_kind);
    source_add(paths, kinds, g_build_filename(common, "config", NULL), IGNORE_SOURCE_STAMP);
    source_add(paths, kinds, ignore_excludes_file(common, d), IGNORE_SOURCE_STAMP);
  }
  g_free(git_dir);
  g_free(common);
  return valid;
}

void
ignore_repo_sources(const char *dir_abs, GPtrArray *paths, GByteArray *kinds)
{
  git_sources(dir_abs, IGNORE_VCS, true, IGNORE_SOURCE_STAMP, paths, kinds);
}

void
ignore_sources(unsigned flags, const char *root_abs, GPtrArray *paths, GByteArray *kinds,
               GString *env)
{
  ignore_sources_env(env);
  if (!(flags & (IGNORE_VCS | IGNORE_DOT)))
    return;
  /* The way up to the top: a `.git` appearing anywhere on it moves the top. */
  char *top = NULL;
  char *d = g_strdup(root_abs);
  for (;;) {
    if (git_sources(d, flags, false, IGNORE_SOURCE_INDEX, paths, kinds)) {
      top = d;
      break;
    }
    char *up = g_path_get_dirname(d);
    if (strcmp(up, d) == 0) {
      g_free(up);
      g_free(d);
      break;
    }
    g_free(d);
    d = up;
  }
  if (flags & IGNORE_VCS) {
    /* The config files that name the excludes file, wherever it is. */
    if (!env_true("GIT_CONFIG_NOSYSTEM")) {
      const char *sys = g_getenv("GIT_CONFIG_SYSTEM");
      source_add(paths, kinds, g_strdup(sys ? sys : "/etc/gitconfig"), IGNORE_SOURCE_STAMP);
    }
    const char *global = g_getenv("GIT_CONFIG_GLOBAL");
    if (global) {
      source_add(paths, kinds, g_strdup(global), IGNORE_SOURCE_STAMP);
    } else {
      source_add(paths, kinds, xdg_path("config"), IGNORE_SOURCE_STAMP);
      source_add(paths, kinds, home_path(".gitconfig"), IGNORE_SOURCE_STAMP);
    }
  }
  /* The ignore files above the root, from the top down. */
  if (top && strcmp(top, root_abs) != 0) {
    size_t tl = strlen(top);
    for (size_t i = tl == 1 ? 1 : tl; root_abs[i]; i++) {
      if (i != tl && root_abs[i] != '/')
        continue;
      char *dir = g_strndup(root_abs, i == 0 ? 1 : i);
      for (unsigned k = 0; k < IGNORE_FILES; k++)
        source_add(paths, kinds, g_build_filename(dir, ignore_file_name[k], NULL),
                   IGNORE_SOURCE_STAMP);
      g_free(dir);
    }
  }
  g_free(top);
}

/* ---- the rules in force in a directory --------------------------------------- */

/* How a file at absolute PATH is shown: relative to the root when below it. */
static char *
shown_name(const struct ignore_ctx *ctx, const char *path)
{
  size_t rl = strlen(ctx->root_abs);
  if (strncmp(path, ctx->root_abs, rl) == 0 && path[rl] == '/')
    return g_strdup(path + rl + 1);
  return g_strdup(path);
}

/* Tell CTX's caller that SOURCE could not be read, and WHAT went wrong: once
 * per source, however many start directories lead through it. */
static void
tell(struct ignore_ctx *ctx, const char *source, const char *what)
{
  if (ctx->problem == NULL)
    return;
  pthread_mutex_lock(&ctx->report_lock);
  bool first = g_hash_table_add(ctx->reported, g_strdup(source));
  pthread_mutex_unlock(&ctx->report_lock);
  if (first)
    ctx->problem(ctx->problem_data, source, what);
}

/* Read an ignore file; VCS: one of git's. One that cannot be read is a
 * problem, and the walk goes on without it, as git goes on with a warning. */
static struct ignore_file *
load(struct ignore_ctx *ctx, int dirfd, const char *name, bool nofollow, bool vcs,
     const char *source)
{
  struct ignore_file *f = NULL;
  int err = ignore_file_read(dirfd, name, nofollow, source, &f);
  if (err != 0 && err != ENOENT && err != ENOTDIR)
    tell(ctx, source, err == EFBIG   ? "ignore file larger than 100 MiB, not read"
                      : err == ELOOP ? "ignore file is a symbolic link, not read"
                                     : g_strerror(err));
  if (f) {
    f->vcs = vcs;
    for (size_t i = 0; i < f->n; i++)
      f->rules[i].vcs = vcs;
  }
  return f;
}

/* The excludes file at PATH, read once per run and shared. */
static struct ignore_file *
global_file(struct ignore_ctx *ctx, const char *path)
{
  if (path == NULL)
    return NULL;
  pthread_mutex_lock(&ctx->lock);
  struct ignore_file *f = NULL;
  if (!g_hash_table_lookup_extended(ctx->globals, path, NULL, (gpointer *)&f)) {
    f = load(ctx, AT_FDCWD, path, false, true, path);
    g_hash_table_insert(ctx->globals, g_strdup(path), f);
  }
  ignore_file_ref(f);
  pthread_mutex_unlock(&ctx->lock);
  return f;
}

/* The repository whose top is the absolute directory TOP, at BASE; NULL
 * when TOP's `.git` is not a repository. */
static struct ignore_repo *
repo_new(struct ignore_ctx *ctx, const char *top, size_t base)
{
  char *common = NULL;
  char *git_dir = ignore_git_dir(top, &common);
  if (git_dir == NULL)
    return NULL;
  struct ignore_repo *r = g_new0(struct ignore_repo, 1);
  r->refs = 1;
  r->base = base;
  {
    char *joined = g_build_filename(common, "info", "exclude", NULL);
    /* "sm/../.git/modules/sm/info/exclude" shown as the file it is. */
    char *info = g_canonicalize_filename(joined, NULL);
    g_free(joined);
    char *shown = shown_name(ctx, info);
    r->info = load(ctx, AT_FDCWD, info, false, true, shown);
    g_free(shown);
    g_free(info);
  }
  char *excludes = ignore_excludes_file(common, top);
  r->global = global_file(ctx, excludes);
  g_free(excludes);
  /* Named now, read when first asked (ignore_tracked). */
  r->index_path = g_build_filename(git_dir, "index", NULL);
  pthread_mutex_init(&r->index_lock, NULL);
  g_free(common);
  g_free(git_dir);
  return r;
}

static void
repo_unref(struct ignore_repo *r)
{
  if (r == NULL || !g_atomic_int_dec_and_test(&r->refs))
    return;
  ignore_file_unref(r->info);
  ignore_file_unref(r->global);
  gitindex_reader_free(r->reader);
  g_free(r->index_path);
  pthread_mutex_destroy(&r->index_lock);
  g_free(r);
}

static void repo_index_start(struct ignore_ctx *ctx, struct ignore_repo *r);
static void repo_index_tell(struct ignore_ctx *ctx, struct ignore_repo *r);

bool
ignore_tracked(struct ignore_ctx *ctx, const struct ignore_frame *f, const char *mpath,
               size_t mlen, bool is_dir, bool *top)
{
  struct ignore_repo *r = f ? f->repo : NULL;
  if (top)
    *top = r && r->base == 0;
  if (r == NULL || mlen <= r->base)
    return false;
  /* Started by whichever worker asks first, in a thread of its own: a walk
   * whose rules leave nothing out never reads it, and one that asks waits
   * only until the entries read decide its question (gitindex.h). */
  if (!g_atomic_int_get(&r->index_started)) {
    pthread_mutex_lock(&r->index_lock);
    if (!g_atomic_int_get(&r->index_started))
      repo_index_start(ctx, r);
    pthread_mutex_unlock(&r->index_lock);
  }
  const char *p = mpath + r->base;
  const size_t len = mlen - r->base;
  const bool held = is_dir ? gitindex_reader_has_dir(r->reader, p, len)
                           : gitindex_reader_has_file(r->reader, p, len);
  /* An answer that waited for the end tells why it could not be read now;
   * the rest, ignore_ctx_settle(). */
  if (gitindex_reader_done(r->reader))
    repo_index_tell(ctx, r);
  return held;
}

/* Start reading R's index, and list R in CTX's reading. R->index_lock held. */
static void
repo_index_start(struct ignore_ctx *ctx, struct ignore_repo *r)
{
  r->reader = ignore_index_reader(r->index_path);
  g_atomic_int_inc(&r->refs);
  pthread_mutex_lock(&ctx->lock);
  if (ctx->reading == NULL)
    ctx->reading = g_ptr_array_new();
  g_ptr_array_add(ctx->reading, r);
  pthread_mutex_unlock(&ctx->lock);
  g_atomic_int_set(&r->index_started, 1);
}

/* No more questions for R's index: its read stopped where it is (it reads
 * only as far as the questions needed), and its problem, if the read met
 * one, told once. */
static void
repo_index_tell(struct ignore_ctx *ctx, struct ignore_repo *r)
{
  const GError *err = NULL;
  gitindex_reader_stop(r->reader, &err);
  if (err == NULL || !g_atomic_int_compare_and_exchange(&r->index_told, 0, 1))
    return;
  char *shown = shown_name(ctx, r->index_path);
  /* The message names the file; told as the index's problem. */
  const size_t n = strlen(r->index_path);
  const char *what = strncmp(err->message, r->index_path, n) == 0 &&
                             strncmp(err->message + n, ": ", 2) == 0
                         ? err->message + n + 2
                         : err->message;
  tell(ctx, shown, what);
  g_free(shown);
}

void
ignore_ctx_settle(struct ignore_ctx *ctx)
{
  pthread_mutex_lock(&ctx->lock);
  GPtrArray *reading = ctx->reading;
  ctx->reading = NULL;
  pthread_mutex_unlock(&ctx->lock);
  if (reading == NULL)
    return;
  for (guint i = 0; i < reading->len; i++) {
    repo_index_tell(ctx, reading->pdata[i]);
    repo_unref(reading->pdata[i]);
  }
  g_ptr_array_free(reading, TRUE);
}

struct ignore_frame *
ignore_frame_ref(struct ignore_frame *f)
{
  if (f)
    g_atomic_int_inc(&f->refs);
  return f;
}

void
ignore_frame_unref(struct ignore_frame *f)
{
  while (f && g_atomic_int_dec_and_test(&f->refs)) {
    struct ignore_frame *up = f->up;
    ignore_file_unref(f->dot);
    ignore_file_unref(f->git);
    repo_unref(f->repo);
    g_free(f->chain);
    g_free(f);
    f = up;
  }
}

const char *const ignore_file_name[IGNORE_FILES] = {".gitignore", ".ignore"};
const unsigned ignore_file_has[IGNORE_FILES] = {HAS_GITIGNORE, HAS_DOTIGNORE};

unsigned
ignore_has_of(const char *name, size_t len, bool is_link)
{
  if (len < 4 || name[0] != '.')
    return 0;
  if (len == 4 && memcmp(name, ".git", 4) == 0)
    return is_link ? 0 : HAS_DOTGIT;
  for (unsigned k = 0; k < IGNORE_FILES; k++)
    if (strlen(ignore_file_name[k]) == len && memcmp(name, ignore_file_name[k], len) == 0)
      return ignore_file_has[k];
  return 0;
}

unsigned
ignore_probe(int dirfd)
{
  unsigned has = 0;
  struct stat st;
  for (unsigned k = 0; k < IGNORE_FILES; k++)
    if (fstatat(dirfd, ignore_file_name[k], &st, AT_SYMLINK_NOFOLLOW) == 0)
      has |= ignore_file_has[k];
  if (fstatat(dirfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0)
    has |= ignore_has_of(".git", 4, S_ISLNK(st.st_mode));
  return has;
}

/* The absolute path of directory REL below the root. */
static char *
abs_dir(const struct ignore_ctx *ctx, const char *rel)
{
  return rel[0] ? g_build_filename(ctx->root_abs, rel, NULL) : g_strdup(ctx->root_abs);
}

static void
chain_add(GArray *chain, const struct ignore_file *file, size_t base)
{
  if (file && file->n > 0) {
    struct ignore_slot slot = {file, base};
    g_array_append_val(chain, slot);
  }
}

/* (Re)make F's chain from its files and those of the frames up from it. */
static void
frame_chain(struct ignore_frame *f)
{
  GArray *chain = g_array_new(FALSE, FALSE, sizeof(struct ignore_slot));
  for (const struct ignore_frame *g = f; g; g = g->up)
    chain_add(chain, g->dot, g->base);
  for (const struct ignore_frame *g = f; g; g = g->up) {
    chain_add(chain, g->git, g->base);
    if (g->top)
      break;
  }
  if (f->repo) {
    chain_add(chain, f->repo->info, f->repo->base);
    chain_add(chain, f->repo->global, f->repo->base);
  }
  g_free(f->chain);
  f->n_chain = chain->len;
  f->chain = (struct ignore_slot *)(void *)g_array_free(chain, FALSE);
}

/* The frame of the directory open as DIRFD whose listing (or probe) showed
 * HAS. Its ignore files are shown as SHOWN + ".gitignore"; ABS, its absolute
 * path, is needed only when it holds `.git`. */
static struct ignore_frame *
frame_make(struct ignore_ctx *ctx, struct ignore_frame *up, int dirfd, const char *shown,
           const char *abs, size_t base, unsigned has)
{
  const bool vcs = ctx->flags & IGNORE_VCS;
  struct ignore_repo *repo = vcs && (has & HAS_DOTGIT) ? repo_new(ctx, abs, base) : NULL;
  const bool top = repo != NULL;
  const bool in_repo = top || (up && up->repo);
  const bool want_git = vcs && (has & HAS_GITIGNORE) && (in_repo || (ctx->flags & IGNORE_NO_REQUIRE_GIT));
  const bool want_dot = (ctx->flags & IGNORE_DOT) && (has & HAS_DOTIGNORE);
  if (!top && !want_git && !want_dot)
    return ignore_frame_ref(up);

  struct ignore_frame *f = g_new0(struct ignore_frame, 1);
  f->refs = 1;
  f->up = ignore_frame_ref(up);
  f->base = base;
  f->top = top;
  if (want_dot) {
    const char *name = ignore_file_name[IGNORE_FILE_DOT];
    char *source = g_strconcat(shown, name, NULL);
    f->dot = load(ctx, dirfd, name, true, false, source);
    g_free(source);
  }
  if (want_git) {
    const char *name = ignore_file_name[IGNORE_FILE_GIT];
    char *source = g_strconcat(shown, name, NULL);
    f->git = load(ctx, dirfd, name, true, true, source);
    g_free(source);
  }
  if (top) {
    f->repo = repo;
  } else if (up && up->repo) {
    f->repo = up->repo;
    g_atomic_int_inc(&f->repo->refs);
  }
  frame_chain(f);
  return f;
}

struct ignore_frame *
ignore_frame_enter(struct ignore_ctx *ctx, struct ignore_frame *up, int dirfd, const char *rel,
                   size_t base, unsigned has)
{
  char *shown = rel[0] ? g_strconcat(rel, "/", NULL) : g_strdup("");
  char *abs = (has & HAS_DOTGIT) ? abs_dir(ctx, rel) : NULL;
  struct ignore_frame *f = frame_make(ctx, up, dirfd, shown, abs, base, has);
  g_free(abs);
  g_free(shown);
  return f;
}

/* Drop from F, in place, the rules with a '/' that no path strictly below
 * directory BELOW (LEN bytes, relative to F's directory) can match. A file
 * above the root is only ever asked about such paths: "/build/" or
 * "/src/gen/" in the top's .gitignore cannot match inside "docs/api", and
 * would otherwise be tried against every entry of a walk there. Rules that
 * match by basename stay. Order, lines and sources of the rest are kept. */
static void
keep_rules_below(struct ignore_file *f, const char *below, size_t len)
{
  size_t kept = 0;
  for (size_t i = 0; i < f->n; i++) {
    struct ignore_rule *r = &f->rules[i];
    if (r->pattern && !r->basename && !trawl_pattern_may_match_below(r->pattern, below, len)) {
      trawl_pattern_free(r->pattern);
      g_free(r->shown);
      continue;
    }
    f->rules[kept++] = *r;
  }
  f->n = kept;
  file_masks(f);
}

/* The same for a directory above the root, at absolute path DIR, at offset
 * BASE of the root's path below the top (ctx->prefix): its files are shown
 * by absolute path and keep only the rules that can match below the root. */
static struct ignore_frame *
frame_above(struct ignore_ctx *ctx, struct ignore_frame *up, const char *dir, size_t base)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ignore_frame_ref(up);
  char *shown = g_str_has_suffix(dir, "/") ? g_strdup(dir) : g_strconcat(dir, "/", NULL);
  struct ignore_frame *f = frame_make(ctx, up, fd, shown, dir, base, ignore_probe(fd));
  if (f != up) {
    const char *below = ctx->prefix + base;
    const size_t len = ctx->plen - 1 - base;
    if (f->git)
      keep_rules_below(f->git, below, len);
    if (f->dot)
      keep_rules_below(f->dot, below, len);
    frame_chain(f);
  }
  g_free(shown);
  close(fd);
  return f;
}

void
ignore_ctx_init(struct ignore_ctx *ctx, unsigned flags, int root_fd, const char *root,
                GPtrArray *custom, ignore_problem_fn problem, void *problem_data)
{
  memset(ctx, 0, sizeof *ctx);
  ctx->flags = flags;
  ctx->problem = problem;
  ctx->problem_data = problem_data;
  pthread_mutex_init(&ctx->lock, NULL);
  pthread_mutex_init(&ctx->report_lock, NULL);
  ctx->globals = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify)ignore_file_unref);
  ctx->reported = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  ctx->custom = custom ? g_ptr_array_ref(custom) : NULL;
  /* The root, absolute and resolved, from its descriptor. */
  char proc[64];
  g_snprintf(proc, sizeof proc, "/proc/self/fd/%d", root_fd);
  char *resolved = g_file_read_link(proc, NULL);
  if (resolved == NULL || !g_path_is_absolute(resolved)) {
    g_free(resolved);
    resolved = realpath(root, NULL);
    if (resolved == NULL)
      resolved = g_canonicalize_filename(root, NULL);
  }
  ctx->root_abs = resolved;
  ctx->prefix = g_strdup("");
  if (!(flags & IGNORE_VCS) && !(flags & IGNORE_DOT))
    return;
  ctx->top = (flags & IGNORE_VCS) ? ignore_find_top(ctx->root_abs) : NULL;
  if (ctx->top == NULL || strcmp(ctx->top, ctx->root_abs) == 0)
    return;
  /* The root lies below its work tree's top: the directories from the top
   * down to the root's parent contribute their ignore files. */
  size_t tl = strlen(ctx->top);
  const char *below = ctx->root_abs + (tl == 1 ? 1 : tl + 1);
  g_free(ctx->prefix);
  ctx->prefix = g_strconcat(below, "/", NULL);
  ctx->plen = strlen(ctx->prefix);
  struct ignore_frame *f = frame_above(ctx, NULL, ctx->top, 0);
  for (size_t i = 0; i < ctx->plen - 1; i++) {
    if (ctx->prefix[i] != '/')
      continue;
    char *dir = g_strndup(ctx->root_abs, (tl == 1 ? 1 : tl + 1) + i);
    struct ignore_frame *next = frame_above(ctx, f, dir, i + 1);
    ignore_frame_unref(f);
    f = next;
    g_free(dir);
  }
  ctx->above = f;
}

void
ignore_ctx_clear(struct ignore_ctx *ctx)
{
  ignore_ctx_settle(ctx);
  ignore_frame_unref(ctx->above);
  if (ctx->custom)
    g_ptr_array_unref(ctx->custom);
  g_hash_table_unref(ctx->globals);
  g_hash_table_unref(ctx->reported);
  pthread_mutex_destroy(&ctx->lock);
  pthread_mutex_destroy(&ctx->report_lock);
  g_free(ctx->root_abs);
  g_free(ctx->top);
  g_free(ctx->prefix);
  memset(ctx, 0, sizeof *ctx);
}

const struct ignore_rule *
ignore_verdict(const struct ignore_ctx *ctx, const struct ignore_frame *f, const char *mpath,
               size_t mlen, bool is_dir, const struct ignore_file **from)
{
  if (mlen == 0)
    return NULL;
  const uint8_t last = (uint8_t)mpath[mlen - 1];
  const char *name = NULL; /* the last component, found once a rule needs it */
  size_t nlen = 0;
  const struct ignore_rule *r;
  for (size_t i = 0; f && i < f->n_chain; i++) {
    const struct ignore_slot *s = &f->chain[i];
    const uint64_t *can = is_dir ? s->file->last_dir : s->file->last_file;
    if (!((can[last >> 6] >> (last & 63)) & 1) || mlen <= s->base)
      continue;
    if (name == NULL) {
      const char *slash = memrchr(mpath, '/', mlen);
      name = slash ? slash + 1 : mpath;
      nlen = mlen - (size_t)(name - mpath);
    }
    if ((r = file_match(s->file, mpath + s->base, mlen - s->base, name, nlen, is_dir))) {
      if (from)
        *from = s->file;
      return r;
    }
  }
  for (guint i = 0; ctx->custom && i < ctx->custom->len; i++) {
    const struct ignore_file *file = ctx->custom->pdata[i];
    if (file && name == NULL) {
      const char *slash = memrchr(mpath, '/', mlen);
      name = slash ? slash + 1 : mpath;
      nlen = mlen - (size_t)(name - mpath);
    }
    if (file && mlen > ctx->plen &&
        (r = file_match(file, mpath + ctx->plen, mlen - ctx->plen, name, nlen, is_dir))) {
      if (from)
        *from = file;
      return r;
    }
  }
  return NULL;
}
