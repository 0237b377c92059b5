# @trawl_index//:made.bzl when the command did not run through tools/bazel
# (repositories.bzl): the index may be older than the tree in a server.
CHECKED = False
