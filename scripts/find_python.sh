#!/usr/bin/env bash
# Print the path of a working python<VERSION> (e.g. 3.12): the one on PATH if it runs, else the
# newest pyenv version of it (a pyenv shim is on PATH even when no version is selected, and then
# fails). Exit 1, printing nothing, when there is none.
#
# Usage: scripts/find_python.sh 3.12
# Used by the Makefile (the test venv on the Lambda runtime's version) and
# scripts/validate-template.sh (the interpreter `sam build` runs).
set -uo pipefail

want=${1:?usage: find_python.sh <major.minor>, e.g. 3.12}
name=python$want

if "$name" -c 'import sys' >/dev/null 2>&1; then
  command -v "$name"
  exit 0
fi
if command -v pyenv >/dev/null 2>&1; then
  version=$(pyenv versions --bare 2>/dev/null | grep -E "^${want//./\\.}\.[0-9]+$" \
    | sort -t. -k3,3n | tail -n 1)
  bin=$(pyenv root)/versions/$version/bin/$name
  if [ -n "$version" ] && [ -x "$bin" ] && "$bin" -c 'import sys' >/dev/null 2>&1; then
    echo "$bin"
    exit 0
  fi
fi
exit 1
