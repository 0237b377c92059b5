"""trawl_repositories(): the two repositories trawl_glob() needs.

    # WORKSPACE
    local_repository(name = "trawl", path = "/path/to/trawl")
    load("@trawl//bazel:repositories.bzl", "trawl_repositories")
    trawl_repositories()

@trawl_tool holds the `trawl` executable and `trawl-bazel-index`: compiled
here with the system C compiler (rules_cc is not needed, nor fetched), or
`trawl` taken from the path given as trawl_repositories(trawl = "...").
It is built again only when a source file of the checkout changes.

@trawl_index holds index.bzl, every package's files and directories, which
glob.bzl loads. It is a local repository: Bazel runs it again at every start
of its server (so every `--batch` command sees the tree as it is) and whenever
WORKSPACE/.trawl/stamp changes content. The tools/bazel wrapper rewrites that
stamp, with `trawl check --bump`, before Bazel starts, when the tree's
answers changed (docs/bazel.md). The walk itself is `trawl batch --cache`:
when nothing changed, no directory is read.

WORKSPACE/.trawl/ is trawl's directory: the cache, the stamp, a link to the
trawl executable for the wrapper, a BUILD file (so it is a package of its own
and no glob() of another package enters it) and a .gitignore of `*`.
"""

_STATE = ".trawl"

_STATE_BUILD = """\
# trawl's cache and stamp for trawl_glob() (written by @trawl_index; see
# docs/bazel.md in trawl). This BUILD file makes the directory a package of
# its own, so that no glob() of another package lists these files.
exports_files(["stamp"])
"""

def _fail_on(result, what):
    if result.return_code != 0:
        fail("trawl: %s failed (exit %d):\n%s%s" % (what, result.return_code, result.stdout, result.stderr))

def _sources(rctx, top, rel):
    """The .c files of a directory of the checkout. Each file of it (.h too)
    is read by label, so that editing one builds trawl again."""
    out = []
    for p in rctx.path("%s/%s" % (top, rel)).readdir():
        if p.basename.endswith((".c", ".h")):
            rctx.path(rctx.attr._checkout.relative(":%s/%s" % (rel, p.basename)))
        if p.basename.endswith(".c"):
            out.append("%s/%s" % (rel, p.basename))
    return sorted(out)

def _trawl_tool_impl(rctx):
    top = str(rctx.path(rctx.attr._checkout).dirname)
    cc = rctx.attr.cc
    if rctx.attr.trawl:
        if not rctx.attr.trawl.startswith("/") or not rctx.path(rctx.attr.trawl).exists:
            fail("trawl_repositories(trawl = %r): not an absolute path of an existing file" % rctx.attr.trawl)
        rctx.symlink(rctx.attr.trawl, "trawl")
    else:
        srcs = _sources(rctx, top, "libcore/src") + _sources(rctx, top, "plugins/cli")
        for h in ["libcore/include/trawl/" + p.basename for p in rctx.path(top + "/libcore/include/trawl").readdir()]:
            rctx.path(rctx.attr._checkout.relative(":" + h))
        glib = rctx.execute(["pkg-config", "--cflags", "--libs", "glib-2.0"])
        _fail_on(glib, "pkg-config --cflags --libs glib-2.0 (is libglib2.0-dev installed?)")
        rctx.report_progress("compiling trawl")

        # The README's one-command build.
        _fail_on(rctx.execute(
            [cc, "-std=c11", "-O2"] + ["%s/%s" % (top, s) for s in srcs] +
            ["-I%s/libcore/include" % top] + [f for f in glib.stdout.strip().split(" ") if f] + ["-o", "trawl"],
            timeout = 600,
        ), "compiling trawl")
    rctx.path(rctx.attr._indexer_src)
    _fail_on(rctx.execute(
        [cc, "-std=c11", "-O2", str(rctx.path(rctx.attr._indexer_src)), "-o", "trawl-bazel-index"],
        timeout = 600,
    ), "compiling trawl-bazel-index")
    rctx.file("BUILD.bazel", 'exports_files(["trawl", "trawl-bazel-index"])\n')

trawl_tool = repository_rule(
    implementation = _trawl_tool_impl,
    attrs = {
        "trawl": attr.string(doc = "An existing trawl executable; empty: compile one."),
        "cc": attr.string(default = "cc", doc = "The C compiler."),
        "_checkout": attr.label(default = Label("//:WORKSPACE")),
        "_indexer_src": attr.label(default = Label("//bazel:index.c")),
    },
)

def _trawl_index_impl(rctx):
    # The workspace: Bazel writes its path into the output base, two
    # levels above this repository's directory.
    marker = rctx.path(".").dirname.dirname.get_child("DO_NOT_BUILD_HERE")
    if not marker.exists:
        fail("trawl: cannot find the workspace (no %s)" % marker)
    workspace = rctx.read(marker).strip()
    state = "%s/%s" % (workspace, _STATE)
    was_package = rctx.path(state + "/BUILD.bazel").exists

    # Labels before any execute(): Bazel restarts this function from the top
    # whenever a label needs something it has not looked up yet (the stamp's
    # costs two restarts), and a restart repeats every process run before it.
    #
    # The stamp, read by label: Bazel runs this rule again when the wrapper
    # rewrites it. A label needs the package to exist when Bazel first looks
    # for it, which a command may have done already (`//...`) if .trawl/ is
    # new: then this run goes without, and the next start of Bazel reads it
    # (the wrapper makes .trawl/ before Bazel starts, so with it this never
    # happens).
    stamp_read = was_package and rctx.path(state + "/stamp").exists
    if stamp_read:
        rctx.read(Label("@//%s:stamp" % _STATE))

    # .bazelignore too, when a label can name it (the top must be a package).
    ignore = rctx.path(workspace + "/.bazelignore")
    if ignore.exists and (rctx.path(workspace + "/BUILD").exists or
                          rctx.path(workspace + "/BUILD.bazel").exists):
        rctx.read(Label("@//:.bazelignore"))

    trawl = rctx.path(rctx.attr._trawl)
    indexer = rctx.path(rctx.attr._indexer)

    _fail_on(rctx.execute(["mkdir", "-p", state]), "mkdir " + state)
    for name, text in [("BUILD.bazel", _STATE_BUILD), (".gitignore", "*\n"), ("stamp", "")]:
        # A repository rule writes only below its own directory: copied.
        if not rctx.path("%s/%s" % (state, name)).exists:
            rctx.file("state." + name, text, executable = False)
            _fail_on(rctx.execute(["cp", "state." + name, "%s/%s" % (state, name)]), "writing " + state)
    if was_package and not stamp_read:
        rctx.read(Label("@//%s:stamp" % _STATE))  # a stamp deleted: made again above

    # The wrapper runs the same trawl (a cache is trusted by its own version only).
    # (A process run costs a cold Bazel about 10 ms: not when it is there.)
    link = rctx.path(state + "/trawl")
    if not link.exists or str(link.realpath) != str(trawl.realpath):
        rctx.execute(["ln", "-sfn", str(trawl.realpath), str(link)])

    result = rctx.execute([
        indexer,
        "--trawl",
        trawl,
        "--root",
        workspace,
        "--cache",
        state + "/cache",
        "--state",
        _STATE,
        "--out",
        "index.bzl",
    ], timeout = 3600)
    _fail_on(result, "indexing the workspace")
    if result.stderr:
        # Problems the walk survived (a directory it could not read, a loop).
        print("trawl_glob: " + result.stderr)
    rctx.file("BUILD.bazel", 'exports_files(["index.bzl"])\n')

trawl_index = repository_rule(
    implementation = _trawl_index_impl,
    local = True,
    attrs = {
        "_trawl": attr.label(default = Label("@trawl_tool//:trawl")),
        "_indexer": attr.label(default = Label("@trawl_tool//:trawl-bazel-index")),
    },
)

def trawl_repositories(trawl = None, cc = "cc"):
    """Declares @trawl_tool and @trawl_index (call once, from WORKSPACE).

    Args:
      trawl: path of an existing trawl executable; None compiles one.
      cc: the C compiler that compiles trawl and its indexer.
    """
    trawl_tool(name = "trawl_tool", trawl = trawl or "", cc = cc)
    trawl_index(name = "trawl_index")
