#!/usr/bin/env bash
# Installs a pinned LLVM OpenMP runtime (conda-forge llvm-openmp 11.1.0, the
# build scikit-learn's wheels use) into $LIBOMP_PREFIX (default $HOME/libomp),
# for the macOS wheel builds (cibuildwheel before-all, see pyproject.toml).
# Built for macOS 10.9 (x86_64) and 11.0 (arm64), so delocate can vendor it
# into wheels whose deployment target is 10.13 / 12.0.
set -euo pipefail
prefix="${LIBOMP_PREFIX:-$HOME/libomp}"
case "$(uname -m)" in
    arm64)  url="https://anaconda.org/conda-forge/llvm-openmp/11.1.0/download/osx-arm64/llvm-openmp-11.1.0-hf3c4609_1.tar.bz2" ;;
    x86_64) url="https://anaconda.org/conda-forge/llvm-openmp/11.1.0/download/osx-64/llvm-openmp-11.1.0-hda6cdc1_1.tar.bz2" ;;
    *) echo "unsupported architecture $(uname -m)" >&2; exit 1 ;;
esac
mkdir -p "$prefix"
curl -fsSL --retry 3 -o /tmp/llvm-openmp.tar.bz2 "$url"
shasum -a 256 /tmp/llvm-openmp.tar.bz2
if [[ -n "${LIBOMP_SHA256:-}" ]]; then
    echo "$LIBOMP_SHA256  /tmp/llvm-openmp.tar.bz2" | shasum -a 256 -c -
fi
tar -xjf /tmp/llvm-openmp.tar.bz2 -C "$prefix"
ls -l "$prefix/lib/libomp.dylib" "$prefix/include/omp.h"
otool -L "$prefix/lib/libomp.dylib"
