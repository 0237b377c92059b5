# @trawl_index//:made.bzl when the command ran through tools/bazel (repositories.bzl).
CHECKED = True
