#!/usr/bin/env bash
# install.sh: build af from source and install it with its man page and shell completions.
#
#   ./install.sh                      install under /usr/local (uses sudo when needed)
#   ./install.sh --prefix ~/.local    install for this user only, no root needed
#   ./install.sh --deps-only          only install the build dependencies
#   ./install.sh --dev                also install what the test suite and benchmarks use
#   ./install.sh --uninstall          remove what an earlier install put under the prefix
#   ./install.sh --binary PATH        install an af already built instead of building one
#   ./install.sh --package [--out DIR] build af_VERSION_ARCH.deb, af-VERSION-linux-ARCH.tar.gz
#                                     and SHA256SUMS in DIR (default: dist/), for machines
#                                     without Swift (see Packaging/README.md)
#
# It is idempotent: running it again rebuilds and replaces the installed files.
set -euo pipefail

prefix=/usr/local
deps_only=0
dev=0
uninstall=0
skip_deps=0
binary=""
package=0
out_dir=""

usage() {
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    echo "Other options: --no-deps (do not touch system packages), -h/--help"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 64; }; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --deps-only) deps_only=1; shift ;;
        --dev) dev=1; shift ;;
        --uninstall) uninstall=1; shift ;;
        --no-deps) skip_deps=1; shift ;;
        --binary) [ $# -ge 2 ] || { echo "install.sh: --binary needs a path" >&2; exit 64; }; binary=$2; shift 2 ;;
        --binary=*) binary=${1#--binary=}; shift ;;
        --package) package=1; shift ;;
        --out) [ $# -ge 2 ] || { echo "install.sh: --out needs a directory" >&2; exit 64; }; out_dir=$2; shift 2 ;;
        --out=*) out_dir=${1#--out=}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (see ./install.sh --help)" >&2; exit 64 ;;
    esac
done

here=$(cd "$(dirname "$0")" && pwd)
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
prefix=${prefix%/}
bin_dir="$prefix/bin"
man_dir="$prefix/share/man/man1"
bash_dir="$prefix/share/bash-completion/completions"
zsh_dir="$prefix/share/zsh/site-functions"
fish_dir="$prefix/share/fish/vendor_completions.d"
installed_files=("$bin_dir/af" "$man_dir/af.1" "$bash_dir/af" "$zsh_dir/_af" "$fish_dir/af.fish")

say() { printf 'install.sh: %s\n' "$*"; }

# Runs a command as root: directly when we are root, else with sudo.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
        say "need root to run: $*"; say "run this script as root, or install those packages yourself"; exit 1
    fi
}

# Runs a command that writes under the prefix, with sudo only when the prefix is not ours.
as_owner() {
    local probe=$prefix
    while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
    if [ -w "$probe" ]; then "$@"; else as_root "$@"; fi
}

if [ $uninstall -eq 1 ]; then
    removed=0
    for file in "${installed_files[@]}"; do
        if [ -e "$file" ]; then as_owner rm -f "$file"; say "removed $file"; removed=1; fi
    done
    [ $removed -eq 1 ] || say "nothing of af was installed under $prefix"
    exit 0
fi

build_packages=(libcurl4-openssl-dev libssl-dev zlib1g-dev pkg-config)
# --package also needs dpkg-dev (dpkg-shlibdeps derives the package's Depends).
package_packages=(dpkg-dev binutils)
dev_packages=(openssl curl nghttp2-server zsh fish bash-completion groff-base man-db hyperfine time dpkg-dev binutils lintian)

install_packages() {
    local wanted=("$@") missing=()
    for package in "${wanted[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "packages already present: ${wanted[*]}"
        return
    fi
    say "installing packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    say "installed: ${missing[*]}"
}

if [ $skip_deps -eq 0 ]; then
    packages=("${build_packages[@]}")
    [ $dev -eq 1 ] && packages+=("${dev_packages[@]}")
    [ $package -eq 1 ] && packages+=("${package_packages[@]}")
    if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
        install_packages "${packages[@]}"
    else
        say "this system has no apt-get; install these (Debian names) with your package manager:"
        say "  libcurl with OpenSSL (development files), OpenSSL (development files), zlib (development files), pkg-config"
        [ $dev -eq 1 ] && say "  and for the tests: openssl, curl, nghttpd (nghttp2), zsh, fish, bash-completion, groff, man-db, hyperfine, GNU time, dpkg-dev, binutils, lintian"
        say "then run ./install.sh --no-deps"
        exit 1
    fi
fi

[ $deps_only -eq 1 ] && exit 0

if [ -n "$binary" ]; then
    [ -x "$binary" ] || { say "--binary '$binary' is not an executable file"; exit 66; }
else
    swift_bin=$(command -v swift || true)
    if [ -z "$swift_bin" ] && [ -x /opt/swift/usr/bin/swift ]; then swift_bin=/opt/swift/usr/bin/swift; fi
    if [ -z "$swift_bin" ]; then
        say "no Swift toolchain found; install Swift 6 from https://swift.org/install and put it on PATH"
        exit 1
    fi
    swift_version=$("$swift_bin" --version 2>/dev/null | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -n 1)
    say "building af (release) with Swift ${swift_version:-unknown}"
    # What `af --version` reports: the commit, its date (not the clock, so that the same
    # commit builds the same binary) and the Swift version.
    commit=$(git -C "$here" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
    if [ "$commit" != unknown ] && [ -n "$(git -C "$here" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit-modified"; fi
    build_date=$(git -C "$here" log -1 --format=%cd --date=format:%Y-%m-%d 2>/dev/null || date -u +%Y-%m-%d)
    # Static Swift runtime; generic metadata through accessors, no concurrency or Regex
    # modules, function sections, static libstdc++ and libgcc, no exported symbols and packed
    # relocations (Build/link-flags): each takes a share of a millisecond off every start (see Benchmarks/README.md). Source paths are mapped to "." so the
    # binary names no directory of the build machine. AF_BUILD_FLAGS adds flags (CI passes
    # -Xswiftc -warnings-as-errors).
    mapfile -t link_flags < <("$here/Build/link-flags" "$swift_bin")
    # shellcheck disable=SC2086
    (cd "$here" && "$swift_bin" build -c release --static-swift-stdlib --disable-local-rpath --product af \
        "${link_flags[@]}" \
        -Xswiftc -file-prefix-map -Xswiftc "$here=." -Xcc -ffile-prefix-map="$here=." \
        -Xcc "-DAF_BUILD_COMMIT=\"$commit\"" -Xcc "-DAF_BUILD_DATE=\"$build_date\"" \
        -Xcc "-DAF_BUILD_SWIFT=\"${swift_version:-unknown}\"" ${AF_BUILD_FLAGS:-})
    binary="$here/.build/release/af"
    # The libraries af names, in the order that spares the loader most lookups.
    "$here/Build/order-needed" "$binary" "$swift_bin"
fi

if [ $package -eq 1 ]; then
    exec "$here/Packaging/build.sh" --binary "$binary" --out "${out_dir:-$here/dist}"
fi

as_owner mkdir -p "$bin_dir" "$man_dir" "$bash_dir" "$zsh_dir" "$fish_dir"
as_owner install -m 0755 "$binary" "$bin_dir/af"
say "installed $bin_dir/af"
if [ -f "$here/man/af.1" ]; then
    as_owner install -m 0644 "$here/man/af.1" "$man_dir/af.1"
    say "installed $man_dir/af.1"
fi
for pair in "af.bash:$bash_dir/af" "_af:$zsh_dir/_af" "af.fish:$fish_dir/af.fish"; do
    source_file="$here/completions/${pair%%:*}"
    target=${pair#*:}
    if [ -f "$source_file" ]; then
        as_owner install -m 0644 "$source_file" "$target"
        say "installed $target"
    fi
done

case ":$PATH:" in *":$bin_dir:"*) ;; *) say "note: $bin_dir is not on your PATH; add it, e.g. export PATH=\"$bin_dir:\$PATH\"" ;; esac
if [ "$prefix" != /usr ] && [ "$prefix" != /usr/local ]; then
    say "note: for zsh completion add 'fpath=(\"$zsh_dir\" \$fpath)' to ~/.zshrc before compinit"
fi
say "done: $("$bin_dir/af" --version | head -n 1)"
