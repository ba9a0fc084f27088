#!/usr/bin/env bash
# Fetches qemu-plugin.h, the header of QEMU's TCG plugin interface, from
# Debian's source package of the installed qemu-system-arm (the same
# version, so the plugin API matches), into DEST/qemu-plugin.h.
#   fetch_plugin_header.sh BUILD DEST
# Like port_boards/fetch_micropython.sh it uses an apt configuration of its
# own under BUILD/apt-qemu (the system's apt sources are left alone); the
# archive's address and the release are read from the system's own files.
set -euo pipefail
build=$(realpath -m "$1")
dest=$(realpath -m "$2")

installed=$(dpkg-query -W -f='${source:Version}' qemu-system-arm 2>/dev/null || true)
if [ -z "$installed" ]; then
    echo "qemu-system-arm is not installed" >&2
    exit 1
fi
uri=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /:\/\// && $i !~ /security/) { print $i; exit } }' /etc/apt/sources.list)
fi
if [ -z "$uri" ]; then
    echo "no Debian archive configured in /etc/apt" >&2
    exit 1
fi
. /etc/os-release
suite=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
security=$(echo "$uri" | sed 's#/debian/*$#/debian-security#')

apt_dir=$build/apt-qemu
rm -rf "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/src"
{
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite-updates main"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $security $suite-security main"
} > "$apt_dir/sources.list"
opts=(-qq -o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
      -o APT::Sandbox::User="$(id -un)")
apt-get "${opts[@]}" update
# The source package, unpacked with Debian's patches applied (dpkg-source).
(cd "$apt_dir/src" && apt-get "${opts[@]}" source --download-only "qemu=$installed")
dsc=$(ls "$apt_dir"/src/qemu_*.dsc)
(cd "$apt_dir/src" && dpkg-source --no-check -q -x "$(basename "$dsc")" tree > /dev/null)
header=$apt_dir/src/tree/include/qemu/qemu-plugin.h
test -f "$header"
mkdir -p "$dest"
cp "$header" "$dest/qemu-plugin.h"
echo "$installed" > "$dest/qemu-plugin.version"
rm -rf "$apt_dir"
echo "qemu-plugin.h of qemu $installed in $dest"
