#!/usr/bin/env python3
"""Write the seeds of fuzz_cache (tests/fuzz/corpus-cache/) with a trawl build.

    cache_seeds.py TRAWL OUTDIR

Each seed is a cache file `trawl --cache` (or `trawl batch --cache`) wrote of
a small tree, in the harness's form: the index's length and the directory
entries' as little-endian u16s, then the file's body (the index, the
directory entries and the records; the 56-byte header, which the harness
writes itself, left out). Run it again whenever the
format changes (CACHE_FORMAT): seeds of another format reach little of the
parser. The tree is made in a temporary directory named `seedtree`, and the
caches written twice, a while apart, so that most records are not racy.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

FILES = ["a.c", "b.h", "README.md", "lib/f.c", "lib/g.h", "src/x.c", "src/w.c", "src/y.c",
         "src/d/e.c", "src.x/z.c", ".x/h.c"]


def seed(cache, out):
    with open(cache, "rb") as f:
        data = f.read()
    index_len, dirs_len = struct.unpack_from("<QQ", data, 40)
    if max(index_len, dirs_len) > 0xFFFF:
        sys.exit("%s: an index of %d bytes or entries of %d do not fit the seed's u16"
                 % (cache, index_len, dirs_len))
    with open(out, "wb") as f:
        f.write(struct.pack("<HH", index_len, dirs_len) + data[56:])
    print("%s: index %d bytes, directory entries %d, body %d"
          % (out, index_len, dirs_len, len(data) - 56))


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    trawl, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    env = dict(os.environ, TRAWL_WATCHMAN="off")
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "seedtree")
        os.mkdir(tree)
        subprocess.run(["git", "init", "-q", tree], check=True)
        files = FILES + ["many/m%03d/k.c" % i for i in range(69)]
        for p in files:
            os.makedirs(os.path.dirname(os.path.join(tree, p)) or tree, exist_ok=True)
            open(os.path.join(tree, p), "w").close()
        with open(os.path.join(tree, ".gitignore"), "w") as f:
            f.write("*.md\nsrc/w.c\n")
        # An index holding a file a rule matches: the walks ask it, and the
        # directory entries keep the questions (DIR_ASKED).
        subprocess.run(["git", "-C", tree, "add", "-f", "a.c", "src/w.c"], check=True)
        queries = os.path.join(tmp, "q.jsonl")
        with open(queries, "w") as f:
            for q in ({"id": 1, "root": tree, "include": ["**/*.c"], "exclude": ["many/**"]},
                      {"id": 2, "root": tree, "include": ["lib/*.h", "*.md"], "ignore": False}):
                f.write(json.dumps(q) + "\n")
        runs = {
            "s1-walk": ["-C", tree, "-x", "many/**", "**/*.c"],
            "s2-types-and-starts": ["-C", tree, "-t", "f,d", "{src,src.x}/**"],
            "s3-batch": ["batch", queries],
            "s4-marks": ["-C", tree, "many/**/*.c"],  # 70 directories: two marks (under the regression run's 4096 bytes)
        }
        time.sleep(0.1)
        for name, args in runs.items():
            cache = os.path.join(tmp, name + ".cache")
            for _ in range(2):  # written, then again with the racy records settled
                subprocess.run([trawl] + args[:-1] + ["--cache", cache, args[-1]], env=env,
                               stdout=subprocess.DEVNULL, check=True)
                time.sleep(0.1)
            seed(cache, os.path.join(outdir, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
