#!/bin/sh
# make-man.sh HELP2MAN TRAWL COMMAND NAME OUTPUT: the man page of `trawl
# COMMAND` (COMMAND "" for trawl itself), made by help2man from the built
# command's own --help, so that the page and --help are one text.
set -eu
help2man=$1 trawl=$2 cmd=$3 name=$4 out=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# roff: a backslash is \e, and a line may not start with . or '.
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

page=trawl${cmd:+-$cmd}
{
  if [ -z "$cmd" ]; then
    # The commands, as `trawl help` lists them.
    echo '[COMMANDS]'
    echo '.nf'
    "$trawl" help | sed -n '/^Commands:/,/^Options:/p' | sed '1d;$d' | roff
    echo '.fi'
  fi
  echo '[SEE ALSO]'
  for c in "" match batch check explain meson; do
    [ "$c" = "$cmd" ] && continue
    printf '.BR trawl%s (1),\n' "${c:+-$c}"
  done
  echo 'and the documentation in the source: README.md, docs/index.md, docs/cli.md.'
} >"$tmp/extra.h2m"

"$help2man" --no-info --no-discard-stderr --name="$name" \
  --help-option="${cmd:+$cmd }--help" --version-option=--version \
  --include="$tmp/extra.h2m" --output="$tmp/page" "$trawl"

# help2man names the page after the program; a command's page is trawl-COMMAND.
if [ -n "$cmd" ]; then
  upper=$(printf '%s' "$page" | tr a-z A-Z)
  sed -e "s/^\.TH TRAWL /.TH $upper /" -e "/^\.SH NAME/{n;s/^trawl /$page /;}" "$tmp/page" >"$out"
else
  cp "$tmp/page" "$out"
fi
