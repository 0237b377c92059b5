#!/usr/bin/env python3
"""Run a libFuzzer target for a fixed number of runs over a read-only seed
corpus.

libFuzzer writes every new interesting input into the FIRST corpus directory
it is given, so a fresh temporary directory goes first and the committed seed
corpus second: the seeds are read, never modified.

usage: run-fuzzer.py FUZZER SEED_DIR ARTIFACT_DIR [libFuzzer options...]
"""
import os
import subprocess
import sys
import tempfile


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    fuzzer, seeds, artifacts = argv[1:4]
    options = argv[4:]
    env = dict(os.environ)
    # UBSan only reports and carries on unless told to stop; a finding must
    # fail the run. A test setup that already chose its options wins.
    env.setdefault("UBSAN_OPTIONS",
                   "halt_on_error=1:abort_on_error=1:print_stacktrace=1")
    os.makedirs(artifacts, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="trawl-fuzz-") as scratch:
        # libFuzzer's default error exit code is 77, which meson reads as
        # "skipped": a finding must be a failure.
        cmd = [fuzzer, scratch, seeds,
               "-artifact_prefix=" + os.path.join(artifacts, ""),
               "-error_exitcode=1", "-timeout_exitcode=1"] + options
        print(" ".join(cmd), flush=True)
        rc = subprocess.call(cmd, env=env)
        return 1 if rc == 77 else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
