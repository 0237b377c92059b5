#define _GNU_SOURCE
/*
 * floor_walk — the system-call floor of a directory walk, the physical limit
 * every walker ratio in docs/benchmarks.md is read against.  Linux only.
 *
 * Per directory it makes exactly the calls a walker cannot avoid: one
 * openat(parent_fd, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC), getdents64
 * into a 64 KiB buffer until it returns 0, one close.  d_type is trusted;
 * fstatat runs only for DT_UNKNOWN.  Nothing else: no stat, no matching beyond
 * an optional suffix compare (--ext), no allocation per entry.
 *
 * The idea that keeps it at the floor without holding the whole frontier open:
 * a directory with subdirectories becomes a *frame* — its descriptor, its path
 * (for --print), the names of its subdirectories in one block, and a count of
 * those not yet opened.  A task is (frame, name); opening a child decrements
 * the count and the last child closes the parent.  One allocation per
 * directory that has subdirectories, none per entry.  Descriptors held are the
 * frames along the current paths that still have unopened children, so a
 * 300-level chain holds two and 2,000 siblings hold one.
 *
 * Serial (-j 1, the default): the main thread pops tasks from an explicit LIFO
 * stack — no recursion, so depth costs nothing but stack entries.
 * Threaded (-j N): N workers (the main thread is one), each with its own LIFO
 * stack and no locking while it has work.  A worker that runs dry waits on a
 * shared stack under a mutex and condition variable; a busy worker that sees a
 * waiter with nothing to take moves the older (shallower, larger) half of its
 * stack there.  The walk ends when every worker is waiting and the shared
 * stack is empty.  Counters are per worker and summed at the end.
 *
 * usage: floor_walk [-j N] [--skip NAME]... [--ext SUFFIX]... [--print] [ROOT...]
 */
#include <dirent.h> /* DT_* */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum {
    LISTING_BUFFER_SIZE = 64 * 1024, /* one getdents64 call reads ~2,000 names */
    OUTPUT_BUFFER_SIZE = 64 * 1024,  /* --print: per worker, flushed whole */
    MAX_THREADS = 256,
    MAX_NAMES = 64,                  /* --skip and --ext each */
};

#define CHILD_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define ROOT_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

/* The kernel's record, as getdents64 lays it out (8-byte aligned). */
struct kernel_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

struct suffix {
    const char *text;
    size_t len;
};

/* Options, read-only once the walk starts. */
static struct {
    const char *skip[MAX_NAMES];
    size_t n_skip;
    struct suffix ext[MAX_NAMES];
    size_t n_ext;
    bool print;
    unsigned threads;
} opt = { .threads = 1 };

/* An open directory whose subdirectories are not all opened yet. */
struct frame {
    int fd;
    atomic_size_t unopened; /* children still to open; the last one closes fd */
    size_t path_len;        /* text starts with the path and a NUL (--print) */
    char text[];            /* [path NUL] then each child name, NUL-terminated */
};

/* Open `name` below `parent`; parent NULL means `name` is a root path. */
struct task {
    struct frame *parent;
    const char *name;
};

struct counts {
    uint64_t dirs;     /* directories opened and read, roots included */
    uint64_t files;    /* regular files */
    uint64_t matched;  /* regular files ending in an --ext suffix */
    uint64_t other;    /* symlinks, sockets, fifos, devices */
    uint64_t skipped;  /* directories not opened because of --skip */
    uint64_t vanished; /* entries gone (or replaced) between listing and use */
    uint64_t errors;   /* anything else that failed: EACCES, EMFILE, ... */
};

struct worker {
    pthread_t thread;
    struct counts n;
    struct task *stack; /* LIFO; [0] is the oldest */
    size_t len, cap;
    char *listing;      /* getdents64 buffer */
    char *names;        /* subdirectory names of the directory being read */
    size_t names_len, names_cap;
    char *path;         /* path of the directory being read (--print) */
    size_t path_cap;
    char *out;          /* --print output, flushed when full */
    size_t out_len;
};

/* Work shared between threaded workers. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct task *tasks;
    size_t len, cap;
    unsigned workers, waiting;
    atomic_bool hungry; /* a worker waits and the shared stack cannot feed it */
    bool done;
} pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};

static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool root_failed; /* exit 2, as for a usage error */

static void die(const char *what)
{
    fprintf(stderr, "floor_walk: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void *grow(void *block, size_t *cap, size_t need, size_t unit)
{
    if (need <= *cap)
        return block;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    block = realloc(block, n * unit);
    if (!block)
        die("out of memory");
    *cap = n;
    return block;
}

static void write_all(const char *bytes, size_t len)
{
    while (len > 0) {
        ssize_t done = write(STDOUT_FILENO, bytes, len);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            die("write");
        }
        bytes += done;
        len -= (size_t)done;
    }
}

static void flush_output(struct worker *w)
{
    if (w->out_len == 0)
        return;
    pthread_mutex_lock(&output_lock);
    write_all(w->out, w->out_len);
    pthread_mutex_unlock(&output_lock);
    w->out_len = 0;
}

/* --print: one line, "path/name\n" (a path beyond the buffer goes out whole). */
static void emit(struct worker *w, size_t path_len, const char *name)
{
    size_t name_len = strlen(name);
    size_t need = path_len + name_len + 2;
    if (w->out_len + need > OUTPUT_BUFFER_SIZE)
        flush_output(w);
    if (need > OUTPUT_BUFFER_SIZE) {
        pthread_mutex_lock(&output_lock);
        write_all(w->path, path_len);
        write_all("/", 1);
        write_all(name, name_len);
        write_all("\n", 1);
        pthread_mutex_unlock(&output_lock);
        return;
    }
    char *p = w->out + w->out_len;
    memcpy(p, w->path, path_len);
    p[path_len] = '/';
    memcpy(p + path_len + 1, name, name_len);
    p[path_len + 1 + name_len] = '\n';
    w->out_len += need;
}

static void push(struct worker *w, struct task t)
{
    w->stack = grow(w->stack, &w->cap, w->len + 1, sizeof *w->stack);
    w->stack[w->len++] = t;
}

/* Puts the path of the directory `t` opens in w->path; returns its length. */
static size_t set_path(struct worker *w, struct task t)
{
    size_t name_len = strlen(t.name);
    size_t base = t.parent ? t.parent->path_len + 1 : 0;
    w->path = grow(w->path, &w->path_cap, base + name_len + 1, 1);
    if (t.parent) {
        memcpy(w->path, t.parent->text, t.parent->path_len);
        w->path[t.parent->path_len] = '/';
    }
    memcpy(w->path + base, t.name, name_len + 1);
    return base + name_len;
}

static void frame_release(struct frame *f)
{
    if (f && atomic_fetch_sub_explicit(&f->unopened, 1, memory_order_acq_rel) == 1) {
        close(f->fd);
        free(f);
    }
}

/* A vanished entry is not an error; anything else is reported once. */
static void count_failure(struct worker *w, int err, const char *what, const char *name)
{
    if (err == ENOENT || err == ENOTDIR) {
        w->n.vanished++;
        return;
    }
    w->n.errors++;
    fprintf(stderr, "floor_walk: %s %s: %s\n", what, name, strerror(err));
}

/* The type of a DT_UNKNOWN entry, or DT_UNKNOWN if it is gone or unreadable. */
static unsigned char type_by_stat(struct worker *w, int dir_fd, const char *name)
{
    struct stat st;
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        count_failure(w, errno, "fstatat", name);
        return DT_UNKNOWN;
    }
    if (S_ISDIR(st.st_mode))
        return DT_DIR;
    if (S_ISREG(st.st_mode))
        return DT_REG;
    return DT_LNK; /* any other type counts as "other" */
}

static bool is_skipped(const char *name)
{
    for (size_t i = 0; i < opt.n_skip; i++)
        if (strcmp(name, opt.skip[i]) == 0)
            return true;
    return false;
}

static bool has_ext(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < opt.n_ext; i++) {
        const struct suffix *e = &opt.ext[i];
        if (len >= e->len && memcmp(name + len - e->len, e->text, e->len) == 0)
            return true;
    }
    return false;
}

/* Reads directory `fd` to the end; subdirectory names go to w->names.
 * Returns how many subdirectories it found. */
static size_t read_listing(struct worker *w, int fd, size_t path_len, const char *name)
{
    size_t subdirs = 0;
    w->names_len = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, w->listing, LISTING_BUFFER_SIZE);
        if (got == 0)
            break;
        if (got < 0) {
            if (errno == EINTR)
                continue;
            count_failure(w, errno, "getdents64", opt.print ? w->path : name);
            break;
        }
        for (long at = 0; at < got;) {
            const struct kernel_dirent64 *d = (const void *)(w->listing + at);
            at += d->d_reclen;
            const char *entry = d->d_name;
            unsigned char type = d->d_type;
            if (type == DT_UNKNOWN)
                type = type_by_stat(w, fd, entry);

            if (type == DT_REG) {
                w->n.files++;
                if (opt.n_ext > 0) {
                    if (!has_ext(entry))
                        continue;
                    w->n.matched++;
                }
                if (opt.print)
                    emit(w, path_len, entry);
            } else if (type == DT_DIR) {
                if (entry[0] == '.' && (entry[1] == '\0' || (entry[1] == '.' && entry[2] == '\0')))
                    continue;
                if (opt.n_skip > 0 && is_skipped(entry)) {
                    w->n.skipped++;
                    continue;
                }
                size_t len = strlen(entry) + 1;
                w->names = grow(w->names, &w->names_cap, w->names_len + len, 1);
                memcpy(w->names + w->names_len, entry, len);
                w->names_len += len;
                subdirs++;
            } else if (type != DT_UNKNOWN) {
                w->n.other++;
            }
        }
    }
    return subdirs;
}

/* Opens and reads one directory; its subdirectories become tasks on w's stack. */
static void walk_task(struct worker *w, struct task t)
{
    int fd = openat(t.parent ? t.parent->fd : AT_FDCWD, t.name,
                    t.parent ? CHILD_OPEN_FLAGS : ROOT_OPEN_FLAGS);
    int open_errno = errno;
    size_t path_len = opt.print ? set_path(w, t) : 0;
    if (fd < 0) {
        if (!t.parent) {
            atomic_store(&root_failed, true);
            w->n.errors++;
            fprintf(stderr, "floor_walk: %s: %s\n", t.name, strerror(open_errno));
        } else {
            count_failure(w, open_errno, "openat", opt.print ? w->path : t.name);
        }
    }
    /* t.name lives in the parent's frame: nothing reads it after this. */
    frame_release(t.parent);
    if (fd < 0)
        return;

    w->n.dirs++;
    size_t subdirs = read_listing(w, fd, path_len, t.name);
    if (subdirs == 0) {
        close(fd);
        return;
    }

    size_t path_bytes = opt.print ? path_len + 1 : 0;
    struct frame *f = malloc(sizeof *f + path_bytes + w->names_len);
    if (!f)
        die("out of memory");
    f->fd = fd;
    atomic_init(&f->unopened, subdirs);
    f->path_len = path_len;
    if (path_bytes > 0)
        memcpy(f->text, w->path, path_bytes);
    memcpy(f->text + path_bytes, w->names, w->names_len);

    /* Pushed last-first so that the stack pops them in listing order. */
    w->stack = grow(w->stack, &w->cap, w->len + subdirs, sizeof *w->stack);
    struct task *slot = w->stack + w->len + subdirs;
    for (const char *p = f->text + path_bytes; slot > w->stack + w->len; p += strlen(p) + 1)
        *--slot = (struct task){ .parent = f, .name = p };
    w->len += subdirs;
}

static void set_hungry_locked(void)
{
    atomic_store_explicit(&pool.hungry, pool.waiting > pool.len, memory_order_relaxed);
}

/* A dry worker takes one shared task, or waits; false when the walk is over. */
static bool pool_take(struct worker *w)
{
    bool got = false;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        if (pool.len > 0) {
            push(w, pool.tasks[--pool.len]);
            got = true;
            break;
        }
        if (pool.done)
            break;
        if (pool.waiting + 1 == pool.workers) {
            /* Everyone else is waiting with nothing: no task can appear. */
            pool.done = true;
            pthread_cond_broadcast(&pool.wake);
            break;
        }
        pool.waiting++;
        set_hungry_locked();
        pthread_cond_wait(&pool.wake, &pool.lock);
        pool.waiting--;
    }
    set_hungry_locked();
    pthread_mutex_unlock(&pool.lock);
    return got;
}

/* A busy worker hands the older half of its stack to the waiting ones. */
static void pool_give(struct worker *w)
{
    size_t give = w->len / 2;
    pthread_mutex_lock(&pool.lock);
    pool.tasks = grow(pool.tasks, &pool.cap, pool.len + give, sizeof *pool.tasks);
    memcpy(pool.tasks + pool.len, w->stack, give * sizeof *w->stack);
    pool.len += give;
    set_hungry_locked();
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    memmove(w->stack, w->stack + give, (w->len - give) * sizeof *w->stack);
    w->len -= give;
}

static void *worker_run(void *arg)
{
    struct worker *w = arg;
    for (;;) {
        if (w->len == 0 && !pool_take(w))
            break;
        walk_task(w, w->stack[--w->len]);
        if (w->len >= 2 && atomic_load_explicit(&pool.hungry, memory_order_relaxed))
            pool_give(w);
    }
    flush_output(w);
    return NULL;
}

static void usage(FILE *to)
{
    fputs("usage: floor_walk [-j N] [--skip NAME]... [--ext SUFFIX]... [--print] [ROOT...]\n"
          "Walks each ROOT (default .) with openat/getdents64/close per directory and\n"
          "prints what it counted: dirs (opened, roots included), files (regular),\n"
          "matched (files ending in an --ext SUFFIX), other, skipped, vanished, errors,\n"
          "and walk_ms: the walk's own wall time, from the first open to the last\n"
          "thread's end (process start-up and exit excluded).\n"
          "  -j, --threads N  N worker threads (default 1: serial, no threads)\n"
          "  --skip NAME      do not open directories named NAME (repeatable)\n"
          "  --ext SUFFIX     count files whose name ends in SUFFIX (repeatable)\n"
          "  --print          print each file (each matched one with --ext) as\n"
          "                   ROOT/path, one per line; the counts go to stderr\n",
          to);
}

static const char *option_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "floor_walk: %s needs a value\n", argv[*i]);
        exit(2);
    }
    return argv[++*i];
}

static void check_name(size_t n_before, const char *name, const char *option)
{
    if (n_before == MAX_NAMES || name[0] == '\0') {
        fprintf(stderr, "floor_walk: %s: empty, or more than %d\n", option, MAX_NAMES);
        exit(2);
    }
}

static int parse_options(int argc, char **argv)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i + 1;
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (strncmp(a, "-j", 2) == 0 || strcmp(a, "--threads") == 0) {
            const char *v = (a[1] == 'j' && a[2] != '\0') ? a + 2 : option_value(argc, argv, &i);
            char *end;
            long n = strtol(v, &end, 10);
            if (*end != '\0' || n < 1 || n > MAX_THREADS) {
                fprintf(stderr, "floor_walk: -j wants 1..%d, not '%s'\n", MAX_THREADS, v);
                exit(2);
            }
            opt.threads = (unsigned)n;
        } else if (strcmp(a, "--skip") == 0) {
            const char *v = option_value(argc, argv, &i);
            check_name(opt.n_skip, v, a);
            opt.skip[opt.n_skip++] = v;
        } else if (strcmp(a, "--ext") == 0) {
            const char *v = option_value(argc, argv, &i);
            check_name(opt.n_ext, v, a);
            opt.ext[opt.n_ext++] = (struct suffix){ v, strlen(v) };
        } else if (strcmp(a, "--print") == 0) {
            opt.print = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "floor_walk: unknown option '%s'\n", a);
            usage(stderr);
            exit(2);
        }
    }
    return i;
}

/* Root "src/" is walked as "src" so that printed paths read "src/x". */
static const char *root_name(char *arg)
{
    size_t len = strlen(arg);
    while (len > 1 && arg[len - 1] == '/')
        arg[--len] = '\0';
    return arg;
}

int main(int argc, char **argv)
{
    int first_root = parse_options(argc, argv);
    static char dot[] = ".";
    char **roots = first_root < argc ? argv + first_root : (char *[]){ dot };
    size_t n_roots = first_root < argc ? (size_t)(argc - first_root) : 1;

    struct worker *workers = calloc(opt.threads, sizeof *workers);
    if (!workers)
        die("out of memory");
    for (unsigned i = 0; i < opt.threads; i++) {
        workers[i].listing = malloc(LISTING_BUFFER_SIZE);
        workers[i].out = opt.print ? malloc(OUTPUT_BUFFER_SIZE) : NULL;
        if (!workers[i].listing || (opt.print && !workers[i].out))
            die("out of memory");
    }
    for (size_t r = n_roots; r-- > 0;)
        push(&workers[0], (struct task){ .parent = NULL, .name = root_name(roots[r]) });

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pool.workers = opt.threads;
    for (unsigned i = 1; i < opt.threads; i++) {
        errno = pthread_create(&workers[i].thread, NULL, worker_run, &workers[i]);
        if (errno != 0)
            die("pthread_create");
    }
    worker_run(&workers[0]);
    for (unsigned i = 1; i < opt.threads; i++)
        pthread_join(workers[i].thread, NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);

    struct counts sum = { 0 };
    for (unsigned i = 0; i < opt.threads; i++) {
        const struct counts *c = &workers[i].n;
        sum.dirs += c->dirs;
        sum.files += c->files;
        sum.matched += c->matched;
        sum.other += c->other;
        sum.skipped += c->skipped;
        sum.vanished += c->vanished;
        sum.errors += c->errors;
    }
    FILE *report = opt.print ? stderr : stdout;
    fprintf(report, "floor_walk: threads=%u dirs=%llu files=%llu", opt.threads,
            (unsigned long long)sum.dirs, (unsigned long long)sum.files);
    if (opt.n_ext > 0)
        fprintf(report, " matched=%llu", (unsigned long long)sum.matched);
    fprintf(report, " other=%llu skipped=%llu vanished=%llu errors=%llu walk_ms=%.3f\n",
            (unsigned long long)sum.other, (unsigned long long)sum.skipped,
            (unsigned long long)sum.vanished, (unsigned long long)sum.errors,
            (double)(end.tv_sec - start.tv_sec) * 1e3 + (double)(end.tv_nsec - start.tv_nsec) / 1e6);
    for (unsigned i = 0; i < opt.threads; i++) {
        free(workers[i].stack);
        free(workers[i].listing);
        free(workers[i].names);
        free(workers[i].path);
        free(workers[i].out);
    }
    free(workers);
    free(pool.tasks);
    return atomic_load(&root_failed) ? 2 : 0;
}
