#!/usr/bin/env bash
# Fetches qemu-plugin.h, the header of QEMU's TCG plugin interface, from
# Debian's source package of the installed qemu-system-arm (the same
# version, so the plugin API matches), into DEST/qemu-plugin.h.
#   fetch_plugin_header.sh BUILD DEST
# Like port_boards/fetch_micropython.sh it uses an apt configuration of its
# own under BUILD/apt-qemu (port_boards/debian_source.sh); the archive's
# address and the release are read from the system's own files.
set -euo pipefail
. "$(dirname "$0")/../../port_boards/debian_source.sh"
build=$(realpath -m "$1")
dest=$(realpath -m "$2")

installed=$(dpkg-query -W -f='${source:Version}' qemu-system-arm 2>/dev/null || true)
if [ -z "$installed" ]; then
    echo "qemu-system-arm is not installed" >&2
    exit 1
fi
uri=$(debian_archive_uri)
. /etc/os-release
suite=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
security=$(echo "$uri" | sed 's#/debian/*$#/debian-security#')

apt_dir=$build/apt-qemu
debian_apt_setup "$apt_dir" "$uri $suite" "$uri $suite-updates" "$security $suite-security"
# The source package, unpacked with Debian's patches applied (dpkg-source).
(cd "$apt_dir/src" && apt-get "${apt_opts[@]}" source --download-only "qemu=$installed")
dsc=$(ls "$apt_dir"/src/qemu_*.dsc)
(cd "$apt_dir/src" && dpkg-source --no-check -q -x "$(basename "$dsc")" tree > /dev/null)
header=$apt_dir/src/tree/include/qemu/qemu-plugin.h
test -f "$header"
mkdir -p "$dest"
cp "$header" "$dest/qemu-plugin.h"
echo "$installed" > "$dest/qemu-plugin.version"
rm -rf "$apt_dir"
echo "qemu-plugin.h of qemu $installed in $dest"
