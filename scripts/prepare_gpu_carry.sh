#!/usr/bin/env bash
# Run HERE (a machine with network) before a GPU-machine session: puts the sources of Google
# Benchmark (Debian's 1.7.1 orig tarball) and GoogleTest into .carry/ (git-ignored), so
# scripts/gpu_check.sh can build on a machine with neither installed and no network.
# Then pass carry=[".carry"] to the device call.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .carry
if [ ! -d .carry/benchmark ]; then
  work=$(mktemp -d)
  mkdir -p "$work/lists/partial"
  cat > "$work/src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  o="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$work -o Dir::State::Lists=$work/lists"
  apt-get $o update >/dev/null
  (cd "$work" && apt-get $o source --download-only benchmark >/dev/null 2>&1)
  mkdir -p .carry/benchmark
  tar xzf "$work"/benchmark_*.orig.tar.gz -C .carry/benchmark --strip-components=1
  rm -rf "$work"
fi
[ -d .carry/googletest ] || cp -r /usr/src/googletest .carry/googletest
du -sh .carry/*
