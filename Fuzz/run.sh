#!/usr/bin/env bash
# Fuzz/run.sh [TARGET|all] [SECONDS]
#
# Builds af-fuzz with libFuzzer and AddressSanitizer (release, in .build/fuzz) and fuzzes
# TARGET (default: all of them, one after another) for SECONDS each (default 60), starting
# from the committed seeds in Fuzz/corpus/TARGET. New inputs go to .build/fuzz-corpus/TARGET,
# crashes to Fuzz/crashes/. Exit status 1 when a target crashed. `af-fuzz` without a target
# lists them. Every crash found becomes a file in Fuzz/corpus/TARGET (the test suite replays
# those) and a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
target=${1:-all}
seconds=${2:-60}
case "$seconds" in ''|*[!0-9]*) echo "Fuzz/run.sh: SECONDS must be a whole number" >&2; exit 64 ;; esac

echo "fuzz: building af-fuzz with libFuzzer and AddressSanitizer"
# lld: gold fails on libFuzzer's objects. -D AF_FUZZ gives af-fuzz the libFuzzer main().
swift build -c release --product af-fuzz --scratch-path .build/fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DAF_FUZZ -Xswiftc -use-ld=lld >/dev/null
binary=.build/fuzz/release/af-fuzz
[ -x "$binary" ] || binary=$(find .build/fuzz -type f -name af-fuzz -perm -u+x | head -n 1)

if [ "$target" = all ]; then
    targets=$(ls Fuzz/corpus)
else
    [ -d "Fuzz/corpus/$target" ] || { echo "Fuzz/run.sh: no target '$target'; targets: $(ls Fuzz/corpus | tr '\n' ' ')" >&2; exit 64; }
    targets=$target
fi

mkdir -p Fuzz/crashes
failed=""
for name in $targets; do
    work=.build/fuzz-corpus/$name
    mkdir -p "$work"
    echo "fuzz: $name for ${seconds}s"
    if ! AF_FUZZ_TARGET=$name "$binary" "$work" "Fuzz/corpus/$name" \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="Fuzz/crashes/$name-" -print_final_stats=1 > ".build/fuzz-$name.log" 2>&1; then
        failed="$failed $name"
        echo "fuzz: $name FAILED; see .build/fuzz-$name.log and Fuzz/crashes/"
        tail -n 30 ".build/fuzz-$name.log"
    else
        grep -E "stat::number_of_executed_units|cov:" ".build/fuzz-$name.log" | tail -n 2 | sed "s/^/fuzz: $name: /"
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz: crashes in:$failed"
    exit 1
fi
echo "fuzz: no crash in $(echo "$targets" | wc -w) target(s)"
