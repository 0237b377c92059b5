#!/usr/bin/env python3
"""The fuzz corpora of the writers, read back by the real tools
(docs/reliability.md, "Long fuzz").

    replay.py depfile FUZZ_DEPFILE CORPUS_DIR...
    replay.py writers FUZZ_WRITERS CORPUS_DIR... [--bazel]

tests/fuzz/fuzz_depfile.c and fuzz_writers.c check each writer against a
reader of the tool's syntax written for them; this asks the tools. The
fuzzer runs once over every input of the corpora with TRAWL_FUZZ_DUMP set,
which appends what the writer made of each and what it must read back as;
then:

- depfile: every depfile becomes the depfile of one edge of a Ninja build
  (deps = gcc), Ninja runs them all, and `ninja -t deps` must list for
  each exactly the paths expected, in order;
- writers: every CMake argument is evaluated by `cmake -P` and written back
  to a file, every listable name set in one list between two others and
  taken back out of it element by element; every name trawl meson would
  print goes, as that output, through `run_command().stdout().split('\\n')`
  of a real Meson configure and back out as an argument of a command;
  with --bazel, every Starlark string is loaded by real Bazel from a .bzl
  file and written back by a repository rule. Each must give back the
  name's bytes exactly.

Prints the counts; exits 1 on the first kind that differs.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hardlib import check, finish  # noqa: E402


def dump(fuzzer, corpora, out):
    env = dict(os.environ, TRAWL_FUZZ_DUMP=out)
    inputs = []
    for d in corpora:
        inputs += [os.path.join(d, f) for f in sorted(os.listdir(d))]
    # libFuzzer runs each file given once; in chunks, for the argument list.
    for i in range(0, len(inputs), 500):
        subprocess.run([fuzzer, "-runs=1"] + inputs[i:i + 500], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(out) as f:
        return [line.split(" ") for line in f.read().splitlines()], len(inputs)


def depfile(fuzzer, corpora, top):
    records, n_inputs = dump(fuzzer, corpora, os.path.join(top, "dump"))
    build = os.path.join(top, "ninja")
    os.makedirs(build)
    expected = {}
    lines = ["rule w", "  command = cp $src $out.d && touch $out", "  depfile = $out.d",
             "  deps = gcc", ""]
    for i, rec in enumerate(records):
        with open(os.path.join(build, "d%d.txt" % i), "wb") as f:
            f.write(bytes.fromhex(rec[0]))
        expected["t%d" % i] = [bytes.fromhex(h) for h in rec[1:]]
        lines += ["build t%d: w" % i, "  src = d%d.txt" % i]
    with open(os.path.join(build, "build.ninja"), "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["ninja", "-C", build], check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], check=True,
                         stdout=subprocess.PIPE).stdout
    got, cur = {}, None
    for line in out.split(b"\n"):
        if line.startswith(b"    ") and cur is not None:
            got[cur].append(line[4:])
        elif line and not line.startswith(b" "):
            cur = line.split(b":", 1)[0].decode()
            got[cur] = []
    wrong = [t for t in expected if got.get(t) != expected[t]]
    paths = sum(len(v) for v in expected.values())
    check("depfile: %d inputs, %d depfiles, %d paths: Ninja reads each as written" % (
        n_inputs, len(records), paths), records and not wrong,
        repr([(t, expected[t], got.get(t)) for t in wrong[:3]]))


def cmake_replay(records, top):
    work = os.path.join(top, "cmake")
    os.makedirs(os.path.join(work, "out"))
    script = [b"cmake_policy(VERSION 3.25)\n"]
    listed = []
    for i, (kind, name, text) in enumerate(records):
        t = bytes.fromhex(text)
        script.append(b"set(V%d " % i + t + b")\n")
        script.append(b'file(WRITE "${OUT}/v%d" "${V%d}")\n' % (i, i))
        if kind == "cmake-list" and name:
            listed.append((bytes.fromhex(name), t))
    script.append(b"set(L first " + b" ".join(t for _, t in listed) + b" last)\n")
    script.append(b'list(LENGTH L n)\nfile(WRITE "${OUT}/n" "${n}")\n'
                  b'set(j 0)\nforeach(e IN LISTS L)\n'
                  b'  file(WRITE "${OUT}/l${j}" "${e}")\n  math(EXPR j "${j} + 1")\nendforeach()\n')
    path = os.path.join(work, "replay.cmake")
    with open(path, "wb") as f:
        f.write(b"".join(script))
    subprocess.run(["cmake", "-DOUT=" + os.path.join(work, "out"), "-P", path], check=True)
    out = os.path.join(work, "out")
    wrong = [name for i, (_, name, _) in enumerate(records)
             if open(os.path.join(out, "v%d" % i), "rb").read() != bytes.fromhex(name)]
    check("cmake: %d names, each argument evaluates to its bytes" % len(records),
          not wrong, repr(wrong[:3]))
    n = int(open(os.path.join(out, "n")).read())
    elems = [open(os.path.join(out, "l%d" % j), "rb").read() for j in range(n)]
    want = [b"first"] + [name for name, _ in listed] + [b"last"]
    check("cmake: %d listable names in one list come back out each exactly" % len(listed),
          elems == want, repr([(a, b) for a, b in zip(elems, want) if a != b][:3]))


def meson_replay(records, top):
    work = os.path.join(top, "meson")
    os.makedirs(work)
    names = [bytes.fromhex(name) for _, name, _ in records]
    chunks = [names[i:i + 400] for i in range(0, len(names), 400)]
    build = ["project('replay', meson_version : '>=1.0')",
             "py = find_program('python3')"]
    for k, chunk in enumerate(chunks):
        with open(os.path.join(work, "names%d.txt" % k), "wb") as f:
            f.write(b"\n".join(chunk))
        build.append("n = run_command('cat', 'names%d.txt', check : true).stdout().split('\\n')"
                     % k)
        build.append("run_command(py, 'write.py', 'out%d.bin', n, check : true)" % k)
    with open(os.path.join(work, "meson.build"), "w") as f:
        f.write("\n".join(build) + "\n")
    with open(os.path.join(work, "write.py"), "w") as f:
        f.write("import os, sys\nwith open(sys.argv[1], 'wb') as f:\n"
                "    f.write(b'\\0'.join(os.fsencode(a) for a in sys.argv[2:]))\n")
    subprocess.run(["meson", "setup", os.path.join(work, "b")], cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    wrong = []
    for k, chunk in enumerate(chunks):
        got = open(os.path.join(work, "out%d.bin" % k), "rb").read().split(b"\0")
        wrong += [(a, b) for a, b in zip(got, chunk) if a != b]
        if len(got) != len(chunk):
            wrong.append(("count", len(got), len(chunk)))
    check("meson: %d names trawl meson prints come out of Meson's split each exactly" % len(names),
          names and not wrong, repr(wrong[:3]))


def bazel_replay(records, top):
    ws = os.path.join(top, "bazel")
    os.makedirs(ws)
    texts = [bytes.fromhex(text) for _, _, text in records]
    names = [bytes.fromhex(name) for _, name, _ in records]
    with open(os.path.join(ws, "defs.bzl"), "wb") as f:
        f.write(b"S = [\n" + b"".join(b"    " + t + b",\n" for t in texts) + b"]\n")
    with open(os.path.join(ws, "rule.bzl"), "w") as f:
        f.write('load("//:defs.bzl", "S")\n'
                'def _impl(rctx):\n'
                '    rctx.file("BUILD", "")\n'
                '    rctx.file("out.bin", "\\n".join([str(len(s)) + ":" + s for s in S]),'
                ' legacy_utf8 = False)\n'
                'dump = repository_rule(_impl)\n')
    with open(os.path.join(ws, "WORKSPACE"), "w") as f:
        f.write('load("//:rule.bzl", "dump")\ndump(name = "replay")\n')
    open(os.path.join(ws, "BUILD"), "w").close()
    ob = os.path.join(top, "bazel-ob")
    subprocess.run(["bazel", "--batch", "--output_base=" + ob, "sync", "--only=replay"],
                   cwd=ws, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = open(os.path.join(ob, "external", "replay", "out.bin"), "rb").read()
    got, i = [], 0
    while i < len(data):
        colon = data.index(b":", i)
        n = int(data[i:colon])
        got.append(data[colon + 1:colon + 1 + n])
        i = colon + 1 + n + 1
    check("starlark: %d strings Bazel loads from a .bzl file are each the name's bytes"
          % len(names), got == names, repr([(a, b) for a, b in zip(got, names) if a != b][:3]))


def main():
    args = sys.argv[1:]
    use_bazel = "--bazel" in args
    args = [a for a in args if a != "--bazel"]
    kind, fuzzer, corpora = args[0], os.path.abspath(args[1]), args[2:]
    top = tempfile.mkdtemp(prefix="trawl-replay-")
    try:
        if kind == "depfile":
            depfile(fuzzer, corpora, top)
        else:
            records, n_inputs = dump(fuzzer, corpora, os.path.join(top, "dump"))
            print("%d inputs, %d names" % (n_inputs, len(records)))
            by = {}
            for r in records:
                by.setdefault("cmake" if r[0].startswith("cmake") else r[0], []).append(r)
            cmake_replay(by.get("cmake", []), top)
            meson_replay(by.get("meson", []), top)
            if use_bazel:
                bazel_replay(by.get("starlark", []), top)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
