"""trawl_repositories(): the two repositories trawl_glob() needs.

    # WORKSPACE
    local_repository(name = "trawl", path = "/path/to/trawl")
    load("@trawl//bazel:repositories.bzl", "trawl_repositories")
    trawl_repositories()

@trawl_tool holds the `trawl` executable, whose `trawl bazel-index` is the
indexer: compiled here with the system C compiler (rules_cc is not needed,
nor fetched), or taken from the path given as trawl_repositories(trawl =
"...").
An install of trawl (PREFIX/share/trawl, bazel/meson.build) has no sources:
there, trawl = "PREFIX/bin/trawl" is needed.
It is built again only when a source file of the checkout changes; the
time it took is left in it (compile-seconds) for the wrapper to tell.

@trawl_index holds index.bzl, what git ignores in each package
(plugins/bazel/cmd-bazel-index.c), which glob.bzl loads. The tools/bazel
wrapper runs the indexer before Bazel starts (it re-checks the tree with
`trawl check`, reading no directory when nothing changed, and indexes again
only when what git ignores, or the packages, changed) and exports
TRAWL_INDEX, the digest of the index that answers for the tree: this rule
then links it and runs nothing. Indexes are kept in .trawl/ under the
digest of their text, so the same index linked again is no change to Bazel.
Bazel runs the rule again when TRAWL_INDEX changes, in a server or at its
start, and not otherwise: the same digest is the same index. (It is not a
local repository, which Bazel would run again at every start of its
server, every `--batch` command: the first Starlark a new server runs, on
the way to every package that loads glob.bzl.) Without the wrapper
(TRAWL_INDEX unset, or not an index it checked) the rule indexes itself,
and reads @trawl_now, a local repository that holds the time of its
server's start: Bazel runs @trawl_index again at the next start, so that
every `--batch` command without the wrapper indexes the tree as it is, as
it did when the rule was local.

WORKSPACE/.trawl/ is trawl's directory: the cache, the stamp, the last three
indexes, a link to trawl for the wrapper, a BUILD file (so it is a
package of its own and no glob() of another package enters it) and a
.gitignore of `*`.
"""

_STATE = ".trawl"

_STATE_BUILD = """\
# trawl's cache and indexes for trawl_glob() (written by @trawl_index and
# tools/bazel; see docs/bazel.md in trawl). This BUILD file makes the
# directory a package of its own, so that no glob() of another package lists
# these files.
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
        if not rctx.attr.trawl.startswith("/"):
            fail("trawl_repositories(trawl = %r): not an absolute path (the trawl command to use)" % rctx.attr.trawl)
        if not rctx.path(rctx.attr.trawl).exists:
            fail("trawl_repositories(trawl = %r): no such file (was trawl uninstalled or moved?)" % rctx.attr.trawl)
        rctx.symlink(rctx.attr.trawl, "trawl")
    else:
        if not rctx.path(top + "/sources.txt").exists:
            fail("trawl_repositories(): %s is an install of trawl, without the sources to compile it: give the installed command, trawl_repositories(trawl = \"PREFIX/bin/trawl\")" % top)

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
        rctx.report_progress("compiling trawl (once per output base; tens of seconds)")

        # The README's one-command build. The indexer names itself in every
        # index it makes: a hash of its text (read here only, through
        # _checkout: an install has no sources).
        indexer_src = rctx.attr._checkout.relative(":plugins/bazel/cmd-bazel-index.c")
        indexer_id = ("%d" % hash(rctx.read(indexer_src))).replace("-", "n")
        _fail_on(rctx.execute(
            ["sh", "-c", 'start=$(date +%s%N); "$@" && echo $(( ($(date +%s%N) - start) / 1000000 )) > compile-ms', "cc"] +
            [cc, "-std=c11", "-O2", '-DTRAWL_INDEXER="%s"' % indexer_id] + ["%s/%s" % (top, s) for s in srcs] +
            ["-I%s/libcore/include" % top] + [f for f in glib.stdout.strip().split(" ") if f] + ["-o", "trawl"],
            timeout = 600,
        ), "compiling trawl")

    # Which indexer this trawl is, as its indexes name it.
    indexer = rctx.execute(["./trawl", "bazel-index", "--id"])
    _fail_on(indexer, "trawl bazel-index --id (a trawl without the Bazel plugin?)")
    rctx.file("indexer-id", indexer.stdout, executable = False)

    # What @trawl_index reads by label: a digest of trawl (64 bytes, where
    # reading trawl itself would have Bazel hash megabytes at every start of
    # its server), so that it runs again, and links the new one for the
    # wrapper, when it changes.
    ident = rctx.execute(["sh", "-c", "sha256sum < trawl"])
    _fail_on(ident, "sha256sum of trawl")
    rctx.file("id", ident.stdout[:64] + "\n", executable = False)
    rctx.file("BUILD.bazel", 'exports_files(["id", "indexer-id", "trawl"])\n')

trawl_tool = repository_rule(
    implementation = _trawl_tool_impl,
    attrs = {
        "trawl": attr.string(doc = "An existing trawl executable; empty: compile one."),
        "cc": attr.string(default = "cc", doc = "The C compiler."),
        # The top of this repository, a checkout or an install; with trawl
        # given, the one label read.
        "_checkout": attr.label(default = Label("//:WORKSPACE")),
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

    # Labels before any execute(): Bazel restarts this function from the top
    # whenever a label needs something it has not looked up yet, and a
    # restart repeats every process run before it. trawl is found beside
    # its digest (a label of trawl itself would have Bazel hash it
    # at every start of its server).
    tool_id = rctx.path(rctx.attr._tool)
    trawl = tool_id.dirname.get_child("trawl")
    made_by = "\n# indexer %s\n" % rctx.read(tool_id.dirname.get_child("indexer-id")).strip()

    # The wrapper has just checked the tree and named the index that answers
    # for it (TRAWL_INDEX, this command only): nothing runs. A change of it
    # (and only that: environ below) runs this rule again in a server, and
    # the same index linked again is no change to Bazel.
    digest = rctx.os.environ.get("TRAWL_INDEX", "")
    checked = len(digest) == 32 and not digest.strip("0123456789abcdef")
    kept = rctx.path("%s/index-%s.bzl" % (state, digest))
    if checked and kept.exists and made_by in rctx.read(kept) and _linked(rctx, state + "/trawl", trawl):
        rctx.symlink(kept, "index.bzl")
    else:
        # Indexed here, not by the wrapper: read first (a label, before any
        # execute()), so that Bazel runs this rule again at its next start.
        rctx.path(Label("@trawl_now//:now"))
        _fail_on(rctx.execute(["mkdir", "-p", state]), "mkdir " + state)
        for name, text in [("BUILD.bazel", _STATE_BUILD), (".gitignore", "*\n")]:
            # A repository rule writes only below its own directory: copied.
            if not rctx.path("%s/%s" % (state, name)).exists:
                rctx.file("state." + name, text, executable = False)
                _fail_on(rctx.execute(["cp", "state." + name, "%s/%s" % (state, name)]), "writing " + state)
        if not _linked(rctx, state + "/trawl", trawl):
            _fail_on(rctx.execute(["ln", "-sfn", str(trawl.realpath), state + "/trawl"]),
                     "linking %s/trawl" % state)
        result = rctx.execute([trawl, "bazel-index", "--root", workspace, "--state", _STATE],
                              timeout = 3600)
        _fail_on(result, "indexing the workspace")
        digest = result.stdout.strip()
        if result.stderr:
            # Problems the walk survived (a directory it could not read, a
            # loop); Bazel shows them again on every command until the next
            # index.
            print("trawl_glob: " + result.stderr)

        # Copied: Bazel does not see a file made in the workspace while
        # this command expands `//...` (it lists .trawl/ first). Not the
        # wrapper's index: glob.bzl's messages say so.
        text = rctx.read("%s/index-%s.bzl" % (state, digest))
        rctx.file("index.bzl", text.replace("\nCHECKED = True\n", "\nCHECKED = False\n"), executable = False)
    rctx.file("BUILD.bazel", 'exports_files(["index.bzl"])\n')

def _linked(rctx, link, target):
    """Whether LINK is a link to TARGET: the wrapper runs this rule's
    trawl (a cache is trusted by its own trawl only)."""
    p = rctx.path(link)
    return p.exists and str(p.realpath) == str(target.realpath)

trawl_index = repository_rule(
    implementation = _trawl_index_impl,
    environ = ["TRAWL_INDEX"],
    attrs = {
        "_tool": attr.label(default = Label("@trawl_tool//:id")),
    },
)

def _trawl_now_impl(rctx):
    # Local: run at every start of a Bazel server, and then only then (no
    # `environ`). The time it ran: a new value at each start.
    now = rctx.execute(["date", "+%s.%N"])
    _fail_on(now, "date")
    rctx.file("now", now.stdout, executable = False)
    rctx.file("BUILD.bazel", 'exports_files(["now"])\n')

trawl_now = repository_rule(implementation = _trawl_now_impl, local = True)

def trawl_repositories(trawl = None, cc = "cc"):
    """Declares @trawl_tool, @trawl_index and @trawl_now (call once, from
    WORKSPACE).

    Args:
      trawl: path of an existing trawl executable; None compiles one.
      cc: the C compiler that compiles trawl.
    """
    trawl_tool(name = "trawl_tool", trawl = trawl or "", cc = cc)
    trawl_index(name = "trawl_index")
    trawl_now(name = "trawl_now")
