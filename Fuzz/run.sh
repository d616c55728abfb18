#!/usr/bin/env bash
# Builds one libFuzzer target with AddressSanitizer and runs it on the seed corpus (Fuzz/README.md).
#
#   bash Fuzz/run.sh TARGET [libFuzzer options...]     # e.g. bash Fuzz/run.sh FuzzIngest -runs=10000000
#
# New inputs go to Fuzz/.build/corpus/TARGET, crashes to Fuzz/.build/crashes/; the seeds in Fuzz/Corpus/TARGET are
# only read. Exit status: libFuzzer's (0 when nothing was found).
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?usage: run.sh TARGET [libFuzzer options...]}
shift
swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld --product "$target" >&2
mkdir -p ".build/corpus/$target" .build/crashes
# The Swift runtime's own crash backtrace takes seconds per crash; libFuzzer reports crashes itself.
export SWIFT_BACKTRACE=enable=no
exec ".build/release/$target" ".build/corpus/$target" "Corpus/$target" \
    -artifact_prefix=".build/crashes/$target-" -print_final_stats=1 "$@"
