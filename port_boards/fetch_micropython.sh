#!/usr/bin/env bash
# Fetches MicroPython's source into BUILD/micropython-VERSION.
#   fetch_micropython.sh debian BUILD VERSION   Debian trixie's source package
#   fetch_micropython.sh git BUILD VERSION      a shallow git clone of the tag
# The Debian way uses an apt configuration of its own under BUILD/apt
# (debian_source.sh), so the system's apt sources are not touched; the
# archive's address is read from the system's own configuration.
set -euo pipefail
. "$(dirname "$0")/debian_source.sh"
how=$1
build=$2
version=$3
dest=$build/micropython-$version

case $how in
debian)
    uri=$(debian_archive_uri)
    apt_dir=$build/apt
    debian_apt_setup "$apt_dir" "$uri trixie"
    (cd "$apt_dir/src" && apt-get "${apt_opts[@]}" source --download-only micropython)
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
