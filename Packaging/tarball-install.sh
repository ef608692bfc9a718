#!/bin/sh
# install.sh [--prefix DIR]: copies af, its man page and shell completions under DIR
# (default /usr/local; --prefix ~/.local needs no root). It needs libcurl (with OpenSSL),
# OpenSSL 3 and zlib at run time, and no Swift.
set -eu
prefix=/usr/local
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 64; }; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option '$1'" >&2; exit 64 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
for pair in "bin/af:0755" "share/man/man1/af.1:0644" "share/bash-completion/completions/af:0644" \
            "share/zsh/site-functions/_af:0644" "share/fish/vendor_completions.d/af.fish:0644"; do
    file=${pair%%:*}
    mode=${pair#*:}
    mkdir -p "$prefix/$(dirname "$file")"
    cp "$here/$file" "$prefix/$file"
    chmod "$mode" "$prefix/$file"
    echo "install.sh: installed $prefix/$file"
done
"$prefix/bin/af" --version >/dev/null 2>&1 || {
    echo "install.sh: $prefix/bin/af does not start; install libcurl4, libssl3 and zlib1g (or your system's equivalents)" >&2
    exit 1
}
echo "install.sh: done: $("$prefix/bin/af" --version | head -n 1)"
