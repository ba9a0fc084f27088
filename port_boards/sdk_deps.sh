#!/usr/bin/env bash
# Puts the submodules a MicroPython port needs into a MicroPython 1.25 tree.
#   sdk_deps.sh MPY_DIR SDK_DIR lib/NAME=ARCHIVE ...
# Each lib/NAME that is empty or missing is extracted from SDK_DIR/ARCHIVE
# (the offline copies at MicroPython 1.25.0's commits, ../shared/sdk) when
# that archive is there, else fetched with `git submodule` when MPY_DIR is a
# git clone (needs the network). Says which for each; exits 3 naming the
# first submodule it could not get.
set -euo pipefail
mpy=$1
sdk=$2
shift 2

for spec in "$@"; do
    lib=${spec%%=*}
    archive=${spec#*=}
    dest=$mpy/$lib
    if [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
        continue
    fi
    if [ -n "$archive" ] && [ -f "$sdk/$archive" ]; then
        # Extracted beside the destination first, so a half-extracted tree
        # never counts as present.
        tmp=$mpy/lib/.extract-$(basename "$lib")
        rm -rf "$tmp"
        mkdir -p "$tmp"
        tar -xJf "$sdk/$archive" -C "$tmp"
        # The archive holds the folder at its top, or under its path in the
        # MicroPython tree (the esp32 extras: lib/NAME among others).
        src=$tmp/$(basename "$lib")
        [ -d "$src" ] || src=$tmp/$lib
        rm -rf "$dest"
        mv "$src" "$dest"
        rm -rf "$tmp"
        # The pico-sdk copy leaves out docs/, which the SDK's CMake adds
        # unconditionally (it builds nothing there without PICO_BUILD_DOCS).
        if [ "$lib" = lib/pico-sdk ] && [ ! -e "$dest/docs/CMakeLists.txt" ]; then
            mkdir -p "$dest/docs"
            echo "# Left out of the offline copy: documentation is not built here." > "$dest/docs/CMakeLists.txt"
        fi
        echo "$lib: extracted from $sdk/$archive (offline copy)"
    elif git -C "$mpy" rev-parse --git-dir > /dev/null 2>&1; then
        echo "$lib: no offline copy in $sdk; git submodule update (network)"
        git -C "$mpy" submodule update --init --depth 1 "$lib"
    else
        echo "$lib: not in $mpy, no offline copy ($sdk/${archive:-?}) and $mpy is not a git clone" >&2
        echo "$lib"
        exit 3
    fi
done
