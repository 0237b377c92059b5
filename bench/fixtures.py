#!/usr/bin/env python3
"""Generate the walker benchmark fixtures (issue 3) under a directory.

usage: bench/fixtures.py [OPTIONS] [DIR]        DIR defaults to bench/fixtures/

  --big          also generate `big` (1,000,000 files; checks free space first)
  --scale        also generate the scale trees (scale10k ... scale300k)
  --only NAMES   comma-separated shapes to consider (default: all but big and
                 the scale trees)
  --force        regenerate even when the stamp says the tree is up to date
  --verify       re-count an up-to-date tree instead of trusting its stamp
  --list         print the shapes and their numbers, generate nothing

Deterministic (one seeded random.Random per shape, only .random() is used, which
Python guarantees to reproduce across versions) and idempotent: DIR/.stamps/
SHAPE.json records the shape's spec and the counts verified after generation;
a shape is regenerated only when its spec changed (or --force, or the tree is
missing).  A tree is built under SHAPE.partial and renamed into place once it
is verified, so an interrupted run never leaves a half tree behind a stamp.
After generating, every shape is re-counted independently of the code that
laid it out (os.walk plus fnmatch on the files actually on disk) and the run
fails if any number differs from the ones below.

Files are empty (a walker never reads them), except repo/.gitignore.  The only
hidden entries are repo/.gitignore and repo/.git.  No symlinks.  "dirs" counts
the root, as `find DIR -type d` does.

repo     53,601 files and 3,224 directories outside .git:
         .gitignore ("node_modules/"), and
         - 2,600 .ts/.tsx sources (2,102 .ts, 498 .tsx), nothing else, under
           src/ (1,000: 10 areas x (4 files + 4 subdirectories x 24)) and
           packages/ (1,600: 16 packages x src/ of 4 files + 4 x 24);
         - node_modules/: 51,000 files in 400 top-level packages (360 plain,
           40 under 5 scopes, @types among them) and 200 nested packages
           (node_modules/<pkg>/node_modules/<pkg>, under 119 hosts).  Each
           package: package.json, README.md, LICENSE, index.js and/or
           index.d.ts, and a lib/ dist/ build/ es/ cjs/ or src/ tree of .js,
           .d.ts, .js.map, .mjs, .cjs, .json files, <= 24 per directory;
           package sizes are Pareto-distributed (8 to 2,472 files, median 26);
           directories up to 9 levels deep.
           4,800 of these files are .d.ts.
         So `**/*.{ts,tsx}` selects 7,400 (`**/*.ts` 6,902) and
         `{src,packages}/**/*.{ts,tsx}` 2,600; src/ and packages/ hold 148
         directories (both roots included).
         `git init` makes it a work tree and `git add -A` fills the index
         (2,601 entries; node_modules is ignored); nothing is committed.
         `find repo -type f` also counts .git's files (hooks, index, 2 blobs;
         their number depends on git's version and is recorded in the stamp).
flat20k  20,000 files, 401 directories: the root holds d000..d399, each with
         50 files f00..f49; the extension cycles .ts .js .md .txt over the
         20,000 files, so 5,000 of each and `**/*.ts` selects 5,000.
wide     8,000 files, 2,001 directories: the root holds w0000..w1999, each
         with a.ts b.js c.md d.txt (`**/*.ts` selects 2,000).
deep     600 files, 301 directories: a chain d000/d001/.../d299 below the
         root (300 levels, paths up to 1,500 bytes), each level holding
         a.ts and b.md (`**/*.ts` selects 300).
big      1,000,000 files, 38,383 directories, up to 12 levels deep (most
         directories at levels 4 to 9): 42 projects p00..p41, each a seeded
         random tree (6-13 subdirectories at its top, 2-5 at levels 2-3, 0-5
         below, fewer the deeper, none past level 12; 15% of directories hold
         no files, 80% hold 1-30, 5% hold 30-1,000; 26 files per directory on
         average), mixed extensions (.ts 20%, .js 20%, .md 10%, .c 10%,
         .py 10%, .h 8%, .txt 7%, .tsx 5%, .json 5%, none 5%), so `**/*.ts`
         selects 200,037 and `**/*.{ts,tsx}` 250,028.  The last directory is
         cut short so that the total is exact.  Only with --big; refused when the
         filesystem (os.statvfs, what df reports) lacks the space or inodes.
scale10k, scale30k, scale100k, scale300k
         big's first 10,000, 30,000, 100,000 and 300,000 files, laid out by
         big's generator with big's seed (the last directory cut short), so
         that the trees of the scale lane (bench/run-all; big is its
         1,000,000 point) differ in size only: 395, 1,245, 3,645 and 11,157
         directories, 12 levels deep.  Only with --scale.
"""
import argparse
import fnmatch
import json
import os
import random
import shutil
import subprocess
import sys
import time

GENERATOR_VERSION = 1
SEED = 3  # issue 3

# ---------------------------------------------------------------------------
# Layouts.  Each shape is a generator of (relative directory, [file names]),
# parents before children; "" is the root.


def allocate(total, weights):
    """Split `total` into integers proportional to `weights` (largest remainder)."""
    scale = sum(weights)
    shares = [w * total / scale for w in weights]
    parts = [int(s) for s in shares]
    order = sorted(range(len(weights)), key=lambda i: (parts[i] - shares[i], i))
    for i in order[:total - sum(parts)]:
        parts[i] += 1
    return parts


ADJECTIVES = ["fast", "tiny", "deep", "safe", "lazy", "pure", "micro", "smart",
              "simple", "super", "async", "pretty", "strict", "easy", "mini",
              "hyper", "quick", "solid", "raw", "vivid"]
NOUNS = ["glob", "path", "stream", "cache", "parse", "event", "color", "debug",
         "yaml", "json", "query", "proxy", "queue", "merge", "hash", "time",
         "log", "fetch", "config", "walk"]
SCOPES = ["@babel", "@types", "@jest", "@octokit", "@typescript-eslint"]
STEMS = ["utils", "helpers", "types", "core", "parse", "format", "constants",
         "errors", "stream", "options", "compat", "node", "browser", "async",
         "sync", "internal", "api", "client", "server", "shared", "platform",
         "polyfill", "legacy", "runtime"]
SUBDIRS = ["internal", "utils", "core", "helpers", "esm", "cjs", "types", "vendor"]
TOPDIRS = ["lib", "lib", "lib", "dist", "dist", "build", "es", "cjs", "src"]
FILES_PER_DIR = 24

REPO = {  # the layout's parameters; SHAPES below has what must come out
    "src_packages": 16, "area_subdirs": 4, "subdir_files": 24,
    "node_modules_files": 51000, "node_modules_dts": 4800,
    "top_packages": 400, "scoped_packages": 40, "nested_packages": 200,
}
SRC_AREAS = ["app", "components", "hooks", "lib", "pages", "services", "store",
             "utils", "api", "features"]
TSX_AREAS = {"components", "pages", "features"}


def pick(rng, seq):
    return seq[int(rng.random() * len(seq))]


def source_dir(rng, base, area):
    """4 files at `base` and 4 subdirectories of 24: 100 .ts/.tsx files."""
    tsx_share = 0.67 if area in TSX_AREAS else 0.15
    yield base, ["index.ts", "types.ts", "constants.ts", area + ".test.ts"]
    for s in range(REPO["area_subdirs"]):
        names = []
        for k in range(REPO["subdir_files"]):
            stem = "%s%02d" % (STEMS[(s * 7 + k) % len(STEMS)], k)
            names.append(stem + (".tsx" if rng.random() < tsx_share else ".ts"))
        yield "%s/%s" % (base, SUBDIRS[s]), names


def package_files(rng, package, kind, variable, dts):
    """Root files and (directory, names) chunks of one node_modules package."""
    root = ["package.json", "README.md", "LICENSE"]
    js = variable - dts
    if js > 0:
        root.append("index.js")
        js -= 1
    if dts > 0:
        root.append("index.d.ts")
        dts -= 1
    body = []
    pairs = min(js, dts)
    for k in range(max(js, dts)):
        stem = "%s%d" % (STEMS[k % len(STEMS)], k // len(STEMS))
        if k < pairs:
            body += [stem + ".js", stem + ".d.ts"]
        elif dts > js:
            body.append(stem + ".d.ts")
        else:
            body.append(stem + pick(rng, [".js", ".js", ".js.map", ".mjs", ".cjs", ".json"]))
    top = "types" if kind == "types" else pick(rng, TOPDIRS)
    chunks = []
    for j in range(0, len(body), FILES_PER_DIR):
        n = j // FILES_PER_DIR
        parts = [package, top]
        while n > 0:  # chunk n lives at top/SUBDIRS digits of n
            n -= 1
            parts.append(SUBDIRS[n % len(SUBDIRS)])
            n //= len(SUBDIRS)
        chunks.append(("/".join(parts), body[j:j + FILES_PER_DIR]))
    return root, chunks


def repo_layout(rng):
    yield "", [".gitignore"]
    yield "src", []
    for area in SRC_AREAS:
        yield from source_dir(rng, "src/" + area, area)
    yield "packages", []
    for name in NOUNS[:REPO["src_packages"]]:
        yield "packages/" + name, []
        yield from source_dir(rng, "packages/%s/src" % name, name)

    # 400 top-level package names: 360 adjective-noun, 40 scoped.
    plain = ["%s-%s" % (a, n) for a in ADJECTIVES for n in NOUNS]
    plain.sort(key=lambda _: rng.random())
    names = plain[:REPO["top_packages"] - REPO["scoped_packages"]]
    per_scope = REPO["scoped_packages"] // len(SCOPES)
    for s, scope in enumerate(SCOPES):
        names += ["%s/%s" % (scope, NOUNS[(s * 3 + k) % len(NOUNS)]) for k in range(per_scope)]
    names.sort()

    # 200 nested packages: another package's name, under a host package.
    nested = []
    while len(nested) < REPO["nested_packages"]:
        host = pick(rng, names[:160])  # hosts cluster, as real trees do
        guest = pick(rng, names)
        if guest != host and (host, guest) not in nested:
            nested.append((host, guest))
    nested.sort()
    packages = ["node_modules/" + n for n in names]
    packages += ["node_modules/%s/node_modules/%s" % hg for hg in nested]
    packages.sort()

    # Sizes: 3 fixed files each, the rest Pareto-weighted; .d.ts by capacity.
    kinds, weights = [], []
    for p in packages:
        leaf = p.rsplit("node_modules/", 1)[1]
        kinds.append("types" if leaf.startswith("@types/") else
                     "typed" if rng.random() < 0.6 else "plain")
        weights.append(min((1.0 - rng.random()) ** (-1 / 1.1) - 0.8, 120.0))
    fixed = 3
    variable = [1 + v for v in allocate(
        REPO["node_modules_files"] - (fixed + 1) * len(packages), weights)]
    # @types packages are .d.ts only; a typed package pairs .js with .d.ts.
    types_dts = sum(v for k, v in zip(kinds, variable) if k == "types")
    caps = [v // 2 if k == "typed" else 0 for k, v in zip(kinds, variable)]
    dts = allocate(REPO["node_modules_dts"] - types_dts, caps)
    dts = [v if k == "types" else d for k, v, d in zip(kinds, variable, dts)]
    assert all(k == "types" or d <= c for k, d, c in zip(kinds, dts, caps)), \
        "a package got more .d.ts than it can hold"

    yield "node_modules", []
    for p, kind, v, d in zip(packages, kinds, variable, dts):
        root, chunks = package_files(rng, p, kind, v, d)
        yield p, root
        yield from chunks


def flat20k_layout(rng):
    del rng
    exts = [".ts", ".js", ".md", ".txt"]
    yield "", []
    for d in range(400):
        yield "d%03d" % d, ["f%02d%s" % (k, exts[(d * 50 + k) % 4]) for k in range(50)]


def wide_layout(rng):
    del rng
    yield "", []
    for d in range(2000):
        yield "w%04d" % d, ["a.ts", "b.js", "c.md", "d.txt"]


def deep_layout(rng):
    del rng
    yield "", []
    path = ""
    for level in range(300):
        path = "%sd%03d" % (path + "/" if path else "", level)
        yield path, ["a.ts", "b.md"]


BIG_FILES = 1_000_000
BIG_EXTS = [(".ts", 20), (".js", 20), (".md", 10), (".c", 10), (".py", 10),
            (".h", 8), (".txt", 7), (".tsx", 5), (".json", 5), ("", 5)]
BIG_EXT_TABLE = [e for e, weight in BIG_EXTS for _ in range(weight)]
BIG_MAX_DEPTH = 12


def big_files_in_dir(rng):
    r = rng.random()
    if r < 0.15:
        return 0
    if r < 0.95:
        return 1 + int(rng.random() * 30)
    return 30 + int(rng.random() ** 3 * 971)


def big_subdirs(rng, depth):
    if depth >= BIG_MAX_DEPTH:
        return 0
    if depth <= 1:
        return 6 + int(rng.random() * 8)
    if depth <= 3:
        return 2 + int(rng.random() * 4)
    r = rng.random() - 0.03 * (depth - 4)  # fewer subdirectories deeper down
    return 0 if r < 0.45 else 1 if r < 0.65 else 2 if r < 0.85 else 3 + int(rng.random() * 3)


def big_layout(rng, files=BIG_FILES):
    """Projects p00, p01, ... of seeded random trees until `files` files."""
    left = files
    yield "", []
    project = 0
    while left > 0:
        stack = [("p%02d" % project, 1)]
        project += 1
        while stack and left > 0:
            path, depth = stack.pop()
            n = min(big_files_in_dir(rng), left)
            left -= n
            yield path, ["%s%d%s" % (STEMS[k % len(STEMS)], k, pick(rng, BIG_EXT_TABLE))
                         for k in range(n)]
            subdirs = big_subdirs(rng, depth)
            for s in reversed(range(subdirs)):
                stack.append(("%s/%s%d" % (path, SUBDIRS[s % len(SUBDIRS)], s), depth + 1))


def scale_layout(files):
    """The first `files` files of big, in big's order (big's own seed): the
    scale lane's trees differ from big and from each other in size only."""
    return lambda rng: big_layout(rng_for("big"), files)


# ---------------------------------------------------------------------------
# Expected numbers, the stamp's spec.  Changing any of these, or
# GENERATOR_VERSION when a layout changes, regenerates the shape.

SHAPES = {
    "repo": {"layout": repo_layout, "expect": {
        "files": 53601, "dirs": 3224, "ts_tsx": 7400, "ts": 6902, "scoped_ts_tsx": 2600,
        "scoped_dirs": 148,
        "top_packages": 400, "nested_packages": 200, "index_entries": 2601}},
    "flat20k": {"layout": flat20k_layout, "expect": {
        "files": 20000, "dirs": 401, "ts": 5000, "ts_tsx": 5000, "max_files_per_dir": 50}},
    "wide": {"layout": wide_layout, "expect": {
        "files": 8000, "dirs": 2001, "ts": 2000, "ts_tsx": 2000}},
    "deep": {"layout": deep_layout, "expect": {
        "files": 600, "dirs": 301, "ts": 300, "ts_tsx": 300, "depth": 300}},
    "big": {"layout": big_layout, "expect": {
        "files": 1000000, "dirs": 38383, "ts": 200037, "ts_tsx": 250028, "depth": 12}},
    # The scale lane (bench/run-all): big's first N files; big is the 1,000,000 point.
    "scale10k": {"layout": scale_layout(10000), "expect": {
        "files": 10000, "dirs": 395, "ts": 1922, "ts_tsx": 2436, "depth": 12}},
    "scale30k": {"layout": scale_layout(30000), "expect": {
        "files": 30000, "dirs": 1245, "ts": 5968, "ts_tsx": 7495, "depth": 12}},
    "scale100k": {"layout": scale_layout(100000), "expect": {
        "files": 100000, "dirs": 3645, "ts": 20080, "ts_tsx": 25069, "depth": 12}},
    "scale300k": {"layout": scale_layout(300000), "expect": {
        "files": 300000, "dirs": 11157, "ts": 59991, "ts_tsx": 75008, "depth": 12}},
}
# Generated only when asked for: big with --big, the scale trees with --scale.
OPT_IN = {"big"} | {n for n in SHAPES if n.startswith("scale")}


def spec_of(name):
    return {"shape": name, "generator_version": GENERATOR_VERSION, "seed": SEED,
            "expect": SHAPES[name]["expect"]}


# ---------------------------------------------------------------------------
# Writing.

FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def write_tree(root, layout):
    """Creates every directory and (empty) file the layout names."""
    os.mkdir(root)
    for rel, names in layout:
        path = os.path.join(root, rel) if rel else root
        if rel:
            os.makedirs(path, exist_ok=True)
        if not names:
            continue
        dir_fd = os.open(path, DIR_FLAGS)
        try:
            for name in names:
                os.close(os.open(name, FILE_FLAGS, 0o644, dir_fd=dir_fd))
        finally:
            os.close(dir_fd)


def finish_repo(root):
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("node_modules/\n")
    git = ["git", "-c", "init.defaultBranch=main", "-C", root]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)


def layout_totals(layout):
    """Directories, files and bytes of directory listings, without writing."""
    dirs, files, listing_bytes = 0, 0, 0
    children = {}
    for rel, names in layout:
        dirs += 1
        files += len(names)
        listing_bytes += sum(len(n) + 24 for n in names)
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if rel:
            children[parent] = children.get(parent, 0) + 1
    listing_bytes += 4096 * dirs + 40 * sum(children.values())
    return dirs, files, listing_bytes


def check_room(where, name):
    """Refuses (exit 1) unless the filesystem holding `where` has room for `name`."""
    dirs, files, listing_bytes = layout_totals(SHAPES[name]["layout"](rng_for(name)))
    need_bytes = 2 * listing_bytes + (512 << 20)  # ext4 blocks are not packed; keep a margin
    need_inodes = int((dirs + files) * 1.05) + 10000
    st = os.statvfs(where)
    free_bytes = st.f_bavail * st.f_frsize
    free_inodes = st.f_favail if st.f_files else None  # 0 total: no inode limit (btrfs)
    short = free_bytes < need_bytes or (free_inodes is not None and free_inodes < need_inodes)
    if short:
        sys.exit("fixtures: refusing to generate %s under %s: it needs about %d MiB and %d "
                 "inodes (%d files, %d directories); the filesystem has %d MiB and %s inodes "
                 "free (df -h, df -i)." % (
                     name, where, need_bytes >> 20, need_inodes, files, dirs,
                     free_bytes >> 20, "unlimited" if free_inodes is None else free_inodes))
    print("fixtures: %s needs about %d MiB and %d inodes; %d MiB and %s inodes free" % (
        name, need_bytes >> 20, need_inodes, free_bytes >> 20,
        "unlimited" if free_inodes is None else free_inodes))


# ---------------------------------------------------------------------------
# Independent count: what is on disk, by os.walk and fnmatch, nothing shared
# with the layouts above.

def count_tree(root):
    c = {"files": 0, "dirs": 0, "ts": 0, "ts_tsx": 0, "scoped_ts_tsx": 0, "scoped_dirs": 0,
         "depth": 0,
         "max_files_per_dir": 0, "top_packages": 0, "nested_packages": 0,
         "files_with_git": 0, "dirs_with_git": 0, "other": 0}
    for top, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(top, root)
        parts = [] if rel == "." else rel.split(os.sep)
        in_git = ".git" in parts
        regular = [n for n in filenames
                   if not os.path.islink(os.path.join(top, n))]
        c["other"] += len(filenames) - len(regular)
        c["dirs_with_git"] += 1
        c["files_with_git"] += len(regular)
        if in_git:
            continue
        c["dirs"] += 1
        c["files"] += len(regular)
        c["depth"] = max(c["depth"], len(parts))
        c["max_files_per_dir"] = max(c["max_files_per_dir"], len(regular))
        ts = sum(1 for n in regular if fnmatch.fnmatchcase(n, "*.ts"))
        tsx = sum(1 for n in regular if fnmatch.fnmatchcase(n, "*.tsx"))
        c["ts"] += ts
        c["ts_tsx"] += ts + tsx
        if parts and parts[0] in ("src", "packages"):
            c["scoped_ts_tsx"] += ts + tsx
            c["scoped_dirs"] += 1
        if "package.json" in regular and parts.count("node_modules") >= 1:
            scoped = len(parts) >= 2 and parts[-2].startswith("@")
            owner = parts[-3] if scoped else parts[-2]
            if owner == "node_modules":
                if parts.count("node_modules") == 1:
                    c["top_packages"] += 1
                else:
                    c["nested_packages"] += 1
    return c


def git_index_entries(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         capture_output=True).stdout
    return out.count(b"\0")


def verify(name, root):
    c = count_tree(root)
    if name == "repo":
        c["index_entries"] = git_index_entries(root)
        with open(os.path.join(root, ".gitignore")) as f:
            if f.read() != "node_modules/\n":
                sys.exit("fixtures: repo/.gitignore does not hold node_modules/")
    expect = SHAPES[name]["expect"]
    wrong = ["%s: expected %d, counted %d" % (k, v, c[k]) for k, v in expect.items() if c[k] != v]
    if c["other"]:
        wrong.append("other (non-regular) files: %d" % c["other"])
    if wrong:
        sys.exit("fixtures: %s at %s does not have the specified shape:\n  %s" % (
            name, root, "\n  ".join(wrong)))
    return c


# ---------------------------------------------------------------------------

def rng_for(name):
    return random.Random("%s/%s" % (SEED, name))


def stamp_path(out, name):
    return os.path.join(out, ".stamps", name + ".json")


def read_stamp(out, name):
    try:
        with open(stamp_path(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_stamp(out, name, counts):
    os.makedirs(os.path.join(out, ".stamps"), exist_ok=True)
    tmp = stamp_path(out, name) + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"spec": spec_of(name), "counts": counts,
                   "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, stamp_path(out, name))


def remove(path):
    if os.path.lexists(path):
        shutil.rmtree(path)


def generate(out, name, force, reverify):
    root = os.path.join(out, name)
    stamp = read_stamp(out, name)
    if not force and stamp and stamp.get("spec") == spec_of(name) and os.path.isdir(root):
        if reverify:
            counts = verify(name, root)
            write_stamp(out, name, counts)
            return counts, "verified"
        return stamp["counts"], "up to date"
    if name in ("big", "scale300k"):
        check_room(out, name)
    started = time.monotonic()
    partial = root + ".partial"
    remove(partial)
    if os.path.exists(stamp_path(out, name)):
        os.unlink(stamp_path(out, name))
    write_tree(partial, SHAPES[name]["layout"](rng_for(name)))
    if name == "repo":
        finish_repo(partial)
    counts = verify(name, partial)
    remove(root)
    os.rename(partial, root)
    write_stamp(out, name, counts)
    return counts, "generated in %.1f s" % (time.monotonic() - started)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default=os.path.join(here, "fixtures"))
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv[1:])

    names = [n for n in SHAPES if n not in OPT_IN]
    names += [n for n in SHAPES if n.startswith("scale")] if args.scale else []
    names += ["big"] if args.big else []
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in SHAPES]
        if unknown:
            ap.error("unknown shape(s): %s (known: %s)" % (", ".join(unknown), ", ".join(SHAPES)))
    if args.list:
        for n in SHAPES:
            print("%-9s %s" % (n, json.dumps(SHAPES[n]["expect"])))
        return 0

    out = os.path.abspath(args.dir)
    os.makedirs(out, exist_ok=True)
    print("%-9s %10s %8s %8s %8s %8s %13s  %s" % (
        "shape", "files", "dirs", "*.ts", "*.{ts,tsx}", "scoped", "with .git", "status"))
    for n in names:
        c, status = generate(out, n, args.force, args.verify)
        print("%-9s %10d %8d %8d %10d %8s %13s  %s" % (
            n, c["files"], c["dirs"], c["ts"], c["ts_tsx"],
            c["scoped_ts_tsx"] if n == "repo" else "-",
            "%d/%d" % (c["files_with_git"], c["dirs_with_git"]) if n == "repo" else "-",
            status))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
