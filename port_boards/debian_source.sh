# Sourced by port_boards/fetch_micropython.sh and
# host_tools/cycles/fetch_plugin_header.sh: Debian source packages through
# an apt configuration of their own, the system's apt sources left alone.

# The Debian archive's address, read from the system's apt configuration
# (the first one that is not the security archive's).
debian_archive_uri() {
    local uri=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /:\/\// && $i !~ /security/) { print $i; exit } }' /etc/apt/sources.list)
    fi
    if [ -z "$uri" ]; then
        echo "no Debian archive configured in /etc/apt" >&2
        return 1
    fi
    echo "$uri"
}

# debian_apt_setup DIR "URI SUITE"...: a fresh apt configuration under DIR
# whose sources are those suites' main source packages; sets apt_opts (the
# apt-get options that use it) and reads its package lists.
debian_apt_setup() {
    local dir=$1 source
    shift
    rm -rf "$dir"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/src"
    for source in "$@"; do
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $source main"
    done > "$dir/sources.list"
    apt_opts=(-qq -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache"
              -o APT::Sandbox::User="$(id -un)")
    apt-get "${apt_opts[@]}" update
}
