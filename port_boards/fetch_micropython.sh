#!/usr/bin/env bash
# Fetches MicroPython's source into BUILD/micropython-VERSION.
#   fetch_micropython.sh debian BUILD VERSION   Debian trixie's source package
#   fetch_micropython.sh git BUILD VERSION      a shallow git clone of the tag
# The Debian way uses an apt configuration of its own under BUILD/apt, so the
# system's apt sources are not touched; the archive's address is read from
# the system's own configuration.
set -euo pipefail
how=$1
build=$2
version=$3
dest=$build/micropython-$version

case $how in
debian)
    uri=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; exit } }' /etc/apt/sources.list)
    fi
    if [ -z "$uri" ]; then
        echo "no Debian archive configured in /etc/apt" >&2
        exit 1
    fi
    apt_dir=$build/apt
    rm -rf "$apt_dir"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/src"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" > "$apt_dir/sources.list"
    opts=(-qq -o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
          -o APT::Sandbox::User="$(id -un)")
    apt-get "${opts[@]}" update
    (cd "$apt_dir/src" && apt-get "${opts[@]}" source --download-only micropython)
    tarball="$apt_dir/src/micropython_${version}+ds.orig.tar.xz"
    if [ ! -f "$tarball" ]; then
        echo "Debian's micropython source is not version $version:" $(ls "$apt_dir/src") >&2
        exit 1
    fi
    rm -rf "$dest"
    tar -xf "$tarball" -C "$build"
    rm -rf "$apt_dir"
    ;;
git)
    rm -rf "$dest"
    git clone --quiet --depth 1 --branch "v$version" https://github.com/micropython/micropython.git "$dest"
    ;;
*)
    echo "usage: $0 debian|git BUILD VERSION" >&2
    exit 2
    ;;
esac
test -f "$dest/py/mpconfig.h"
echo "MicroPython $version source in $dest"
