#!/usr/bin/env bash
# Benchmarks/run.sh [SCENARIO] [harness options]: build af the way install.sh does (static,
# release), start the local test server, and compare af with curl side by side.
# Scenarios: startup (default), download, upload-multipart, upload-raw, format, batch, all.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scenario=${1:-startup}
[ $# -gt 0 ] && shift
command -v curl >/dev/null || { echo "run.sh: curl is needed (./install.sh --dev)"; exit 1; }
# Builds quietly, but shows the build's output when it fails (set -e alone would end the
# script with nothing said).
build() {
    local output
    if ! output=$("$@" 2>&1); then
        printf '%s\n' "$output" >&2
        echo "run.sh: the build failed: $*" >&2
        exit 1
    fi
}
mapfile -t link_flags < <("$here/Build/link-flags" "$(command -v swift)")
build swift build -c release --static-swift-stdlib --disable-local-rpath --product af "${link_flags[@]}"
"$here/Build/order-needed" "$here/.build/release/af" "$(command -v swift)"
build swift build -c release --product af-test-server
# The helper that runs each command and reports its wall time, true peak RSS and CPU time (see spawn.c).
compiler=$(command -v cc || command -v clang) || { echo "run.sh: a C compiler (cc or clang) is needed"; exit 1; }
spawn="$here/.build/bench-spawn"
build "$compiler" -O2 -o "$spawn" "$here/Benchmarks/spawn.c"
extra=()
if [ "$scenario" = batch ] || [ "$scenario" = all ]; then
    # The batch scenario's "AFEngine alone" row (Benchmarks/EngineBatch, a separate package).
    # SwiftPM keeps that package's plan of the engine's files: after a file of the engine is
    # renamed it fails on "missing inputs", so a failed build starts once more from clean.
    # Linked like af (static Swift runtime): linked to the shared runtime, its symbol lookups
    # at start and calls through the PLT cost it about 10 % more than the engine's own work.
    engine_build=(swift build -c release --static-swift-stdlib --package-path "$here/Benchmarks/EngineBatch")
    if ! "${engine_build[@]}" >/dev/null 2>&1; then
        rm -rf "$here/Benchmarks/EngineBatch/.build"
        build "${engine_build[@]}"
    fi
    # A server of a few µs a request, for the table that reads the clients' own costs.
    tiny="$here/.build/bench-tiny-server"
    build "$compiler" -O2 -o "$tiny" "$here/Benchmarks/tiny-server.c"
    extra=(--engine-batch "$here/Benchmarks/EngineBatch/.build/release/EngineBatch" --tiny-server "$tiny")
fi
log=$(mktemp)
"$here/.build/release/af-test-server" >"$log" 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
url=$(head -n 1 "$log")
echo "af:     $("$here/.build/release/af" --version | head -n 1), $(curl --version | head -n 1 | cut -d' ' -f1-2)"
echo "server: $url on $(nproc) cores"
python3 "$here/Benchmarks/harness.py" "$scenario" --af "$here/.build/release/af" --server "$url" --spawn "$spawn" "${extra[@]}" "$@"
