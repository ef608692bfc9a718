#!/usr/bin/env bash
# Packaging/build.sh --binary PATH [--out DIR]
#
# Packs a release build of af (install.sh --package builds it and calls this) into
#   DIR/af_VERSION_ARCH.deb             for Debian and Ubuntu: apt install ./af_VERSION_ARCH.deb
#   DIR/af-VERSION-linux-ARCH.tar.gz    for any Linux with libcurl, OpenSSL 3 and zlib
#   DIR/SHA256SUMS                      checksums of both
# The release binary links the Swift runtime statically, so neither needs Swift. The .deb's
# Depends is derived from the binary by dpkg-shlibdeps; lintian checks it when installed.
set -euo pipefail

binary=""
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "Packaging/build.sh: unknown argument '$1'" >&2; exit 64 ;;
    esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'package: %s\n' "$*"; }
fail() { printf 'package: error: %s\n' "$*" >&2; exit 1; }
[ -n "$binary" ] && [ -x "$binary" ] || fail "--binary must name a built af (./install.sh --package builds one)"
out=${out:-$here/dist}
for tool in dpkg-deb dpkg-shlibdeps strip readelf gzip sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing; ./install.sh --package installs dpkg-dev and binutils"
done

version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' "$here/Sources/AFCommandLine/Run/AFVersion.swift")
[ -n "$version" ] || fail "cannot find af's version in Sources/AFCommandLine/Run/AFVersion.swift"
deb_arch=$(dpkg --print-architecture)
machine=$(uname -m)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Files are packed with fixed modes whatever the umask of the machine that builds them.
umask 022

# The binary: stripped of symbols a release needs no more (Debian ships stripped binaries).
cp "$binary" "$work/af"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$work/af"
if strings "$work/af" | grep -qF "$here"; then fail "the binary names the build directory $here"; fi

# --- the Debian package -------------------------------------------------------------------
root="$work/deb"
install -D -m 0755 "$work/af" "$root/usr/bin/af"
install -d -m 0755 "$root/usr/share/man/man1"
gzip -9n < "$here/man/af.1" > "$root/usr/share/man/man1/af.1.gz"
chmod 0644 "$root/usr/share/man/man1/af.1.gz"
install -D -m 0644 "$here/completions/af.bash" "$root/usr/share/bash-completion/completions/af"
install -D -m 0644 "$here/completions/_af" "$root/usr/share/zsh/vendor-completions/_af"
install -D -m 0644 "$here/completions/af.fish" "$root/usr/share/fish/vendor_completions.d/af.fish"
doc="$root/usr/share/doc/af"
install -d -m 0755 "$doc"
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: af"
    echo
    echo "Files: *"
    echo "Copyright: 2026 the af developers"
    echo "License: Apache-2.0"
    echo
    echo "License: Apache-2.0"
    echo " On Debian systems, the full text of the Apache License 2.0 is in"
    echo " /usr/share/common-licenses/Apache-2.0."
} > "$doc/copyright"
date_rfc=$(git -C "$here" log -1 --format=%cD 2>/dev/null || date -R)
{
    echo "af ($version) unstable; urgency=medium"
    echo
    echo "  * Release $version; see the project's history for the changes."
    echo
    echo " -- af developers <af@packages.invalid>  $date_rfc"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/copyright" "$doc/changelog.gz"

# Depends, derived from the binary's own shared-library needs.
mkdir -p "$work/shlibs/debian"
printf 'Source: af\n\nPackage: af\nArchitecture: any\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/af" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies for af"
# dpkg-shlibdeps goes by the symbols a binary uses, not by the versions it needs: a binary
# with packed relative relocations (Build/link-flags) also needs GLIBC_ABI_DT_RELR, which
# glibc has since 2.36, and would not start on an older one.
if readelf -d "$root/usr/bin/af" | grep -q '(RELR)'; then
    libc=$(printf '%s\n' "$depends" | tr ',' '\n' | sed -n 's/^ *libc6 (>= \([^)]*\)).*/\1/p')
    if [ -z "$libc" ] || dpkg --compare-versions "$libc" lt 2.36; then
        depends=$(printf '%s\n' "$depends" | sed -E 's/libc6( \(>= [^)]*\))?/libc6 (>= 2.36)/')
    fi
fi
installed_size=$(du -sk --apparent-size "$root/usr" | cut -f1)
install -d -m 0755 "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: af
Version: $version
Architecture: $deb_arch
Maintainer: af developers <af@packages.invalid>
Installed-Size: $installed_size
Depends: $depends
Section: web
Priority: optional
Description: command-line HTTP client with HTTPie's syntax on libcurl
 af sends HTTP requests from the command line with HTTPie's request items
 (name=value, name:=json, Header:value, file uploads) and prints formatted,
 coloured responses on a terminal and the exact bytes into a pipe. It retries
 with backoff, pins certificates and public keys inside the TLS handshake,
 resumes downloads without clobbering files, and reports per-attempt metrics.
CONTROL
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
deb="$out/af_${version}_${deb_arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
say "built $deb (Depends: $depends)"
if command -v lintian >/dev/null 2>&1; then
    lintian --fail-on error,warning --suppress-tags no-manual-page "$deb"
    say "lintian: no errors or warnings"
else
    say "lintian is not installed; skipped (apt-get install lintian)"
fi

# --- the tarball --------------------------------------------------------------------------
name="af-$version-linux-$machine"
tree="$work/$name"
install -D -m 0755 "$work/af" "$tree/bin/af"
install -D -m 0644 "$here/man/af.1" "$tree/share/man/man1/af.1"
install -D -m 0644 "$here/completions/af.bash" "$tree/share/bash-completion/completions/af"
install -D -m 0644 "$here/completions/_af" "$tree/share/zsh/site-functions/_af"
install -D -m 0644 "$here/completions/af.fish" "$tree/share/fish/vendor_completions.d/af.fish"
install -m 0644 "$here/LICENSE" "$tree/LICENSE"
install -m 0755 "$here/Packaging/tarball-install.sh" "$tree/install.sh"
mtime=$(git -C "$here" log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" -C "$work" -czf "$out/$name.tar.gz" "$name"
say "built $out/$name.tar.gz"

(cd "$out" && sha256sum "$(basename "$deb")" "$name.tar.gz" > SHA256SUMS)
say "wrote $out/SHA256SUMS"
