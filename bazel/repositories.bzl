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
when nothing changed, no directory is read. Each index made is also kept in
.trawl/ under the digest of the answers it was made from; when the wrapper
has just checked the tree (it says so in TRAWL_CHECKED), the stamp is that
digest and the kept index is taken as it is: no process runs.

WORKSPACE/.trawl/ is trawl's directory: the cache, the stamp, the last three
indexes, a link to the trawl executable for the wrapper, a BUILD file (so it
is a package of its own and no glob() of another package enters it) and a
.gitignore of `*`.
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
        # The one list of the sources (sources.txt: FOLDER/*.c a line), read by
        # label too: a folder added there builds trawl again.
        srcs = []
        for line in rctx.read(rctx.attr._checkout.relative(":sources.txt")).splitlines():
            if line and not line.startswith("#"):
                srcs += _sources(rctx, top, line.rpartition("/")[0])
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

    # What @trawl_index reads by label: a digest of both programs (64 bytes,
    # where reading trawl itself would have Bazel hash megabytes at every
    # start of its server). It names the indexes @trawl_index keeps, so an
    # index made by other programs is never taken.
    ident = rctx.execute(["sh", "-c", "cat trawl trawl-bazel-index | sha256sum"])
    _fail_on(ident, "sha256sum of trawl and trawl-bazel-index")
    rctx.file("id", ident.stdout[:64] + "\n", executable = False)
    rctx.file("BUILD.bazel", 'exports_files(["id", "trawl", "trawl-bazel-index"])\n')

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
    stamp = None
    if was_package and rctx.path(state + "/stamp").exists:
        stamp = rctx.read(Label("@//%s:stamp" % _STATE))

    # .bazelignore too: by label when a label can name it (the top must be
    # a package), so that editing it runs this rule again. Its text decides
    # the index as much as the tree does: it is in the tag of a kept index.
    bazelignore = ""
    if rctx.path(workspace + "/.bazelignore").exists:
        if rctx.path(workspace + "/BUILD").exists or rctx.path(workspace + "/BUILD.bazel").exists:
            bazelignore = rctx.read(Label("@//:.bazelignore"))
        else:
            bazelignore = rctx.read(workspace + "/.bazelignore")

    # The programs, found beside their digest (a label of trawl itself
    # would have Bazel hash it at every start).
    tool_id = rctx.path(rctx.attr._tool)
    ident = rctx.read(tool_id).strip()
    trawl = tool_id.dirname.get_child("trawl")
    indexer = tool_id.dirname.get_child("trawl-bazel-index")
    tag = "%s-%s" % (ident[:16], ("%d" % hash(bazelignore)).replace("-", "n"))

    # The wrapper's check has just found the stamp current (it exports
    # TRAWL_CHECKED, this command only): the index kept under the stamp's
    # digest is this tree's, and nothing needs walking or writing.
    digest = stamp.strip() if stamp else ""
    if rctx.os.environ.get("TRAWL_CHECKED") == state and len(digest) == 64:
        kept = rctx.path("%s/index-%s-%s.bzl" % (state, digest, tag))
        if kept.exists and _linked(rctx, state, trawl):
            rctx.symlink(kept, "index.bzl")
            rctx.file("BUILD.bazel", 'exports_files(["index.bzl"])\n')
            return

    if not (was_package and rctx.path(state + "/.gitignore").exists and stamp != None):
        _fail_on(rctx.execute(["mkdir", "-p", state]), "mkdir " + state)
        for name, text in [("BUILD.bazel", _STATE_BUILD), (".gitignore", "*\n"), ("stamp", "")]:
            # A repository rule writes only below its own directory: copied.
            if not rctx.path("%s/%s" % (state, name)).exists:
                rctx.file("state." + name, text, executable = False)
                _fail_on(rctx.execute(["cp", "state." + name, "%s/%s" % (state, name)]), "writing " + state)
        if was_package and stamp == None:
            rctx.read(Label("@//%s:stamp" % _STATE))  # a stamp deleted: made again above

    if not _linked(rctx, state, trawl):
        _fail_on(rctx.execute(["ln", "-sfn", str(trawl.realpath), state + "/trawl"]), "linking " + state + "/trawl")

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
        "--bump",
        state + "/stamp",
        "--keep",
        state,
        "--tag",
        tag,
    ], timeout = 3600)
    _fail_on(result, "indexing the workspace")
    if result.stderr:
        # Problems the walk survived (a directory it could not read, a loop).
        print("trawl_glob: " + result.stderr)
    rctx.file("BUILD.bazel", 'exports_files(["index.bzl"])\n')

def _linked(rctx, state, trawl):
    """Whether STATE/trawl is a link to this trawl: the wrapper runs the same
    trawl (a cache is trusted by its own version only)."""
    link = rctx.path(state + "/trawl")
    return link.exists and str(link.realpath) == str(trawl.realpath)

trawl_index = repository_rule(
    implementation = _trawl_index_impl,
    local = True,
    attrs = {
        "_tool": attr.label(default = Label("@trawl_tool//:id")),
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
