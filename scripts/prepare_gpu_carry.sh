#!/usr/bin/env bash
# Run HERE (a machine with network) before a GPU-machine session: puts the sources of Google
# Benchmark (the distribution's source package) and GoogleTest into .carry/ (git-ignored), so
# scripts/gpu_check.sh can build on a machine with neither installed and no network.
# Then pass carry=[".carry"] to the device call.
#
# The source package comes from this machine's own package sources: the first binary source in
# its apt configuration, asked for as deb-src (scripts/apt_source_entry.py). No registry is named
# here, so the script follows whatever mirror the machine is configured with.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .carry
if [ ! -d .carry/benchmark ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/lists/partial"
  if ! python3 scripts/apt_source_entry.py > "$work/src.sources"; then
    echo "prepare_gpu_carry: no apt source to derive a deb-src entry from (see the message above)" >&2
    exit 1
  fi
  o=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work" -o "Dir::State::Lists=$work/lists")
  apt-get "${o[@]}" update >/dev/null
  (cd "$work" && apt-get "${o[@]}" source --download-only benchmark >/dev/null 2>&1)
  mkdir -p .carry/benchmark
  tar xzf "$work"/benchmark_*.orig.tar.gz -C .carry/benchmark --strip-components=1
fi
[ -d .carry/googletest ] || cp -r /usr/src/googletest .carry/googletest
du -sh .carry/*
