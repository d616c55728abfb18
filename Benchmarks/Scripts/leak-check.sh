#!/usr/bin/env bash
# The whole test suite under AddressSanitizer with its leak check (LeakSanitizer), in the test runners and in every
# `presence` they start, then each leak report grouped by where it was allocated.
#
#   bash Benchmarks/Scripts/leak-check.sh [swift test --filter REGEX]     # e.g. 'PresenceCLITests'
#
# Builds into .build-asan (about 6 minutes from scratch on 2 cores). Reports go to $WORK/lsan/report.PID, one per
# process that leaked; a leak never fails a test here (LSAN_OPTIONS=exitcode=0), it is listed instead. Which
# reports are expected, and why, is in the README's reliability section.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${WORK:-/tmp/presence-bench}
reports="$WORK/lsan"
rm -rf "$reports"
mkdir -p "$reports"
filter=()
if [ $# -gt 0 ]; then filter=(--filter "$1"); fi

swift build --build-tests --sanitize=address --scratch-path .build-asan
ASAN_OPTIONS="detect_leaks=1:log_path=$reports/report" LSAN_OPTIONS=exitcode=0 \
    swift test --skip-build --sanitize=address --scratch-path .build-asan "${filter[@]}"

python3 - "$reports" <<'PY'
import collections, glob, re, subprocess, sys

# Frames that say nothing about who leaked: the allocator and the Swift runtime's allocation entry points.
plumbing = re.compile(r" in (malloc|calloc|realloc|posix_memalign|swift_slowAlloc|swift_allocObject|swift_allocBox"
                      r"|swift::|_swift_allocObject|__interceptor)")
objects, bytes_, kinds = collections.Counter(), collections.Counter(), collections.Counter()
processes = sorted(glob.glob(sys.argv[1] + "/report.*"))
for path in processes:
    text = open(path, errors="replace").read()
    for block in re.split(r"\n(?=(?:Direct|Indirect) leak of)", text):
        head = re.match(r"(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object", block)
        if not head:
            continue
        frames = [line.strip() for line in block.splitlines()[1:] if line.strip().startswith("#")]
        names = [re.search(r" in (\S+)", f).group(1) for f in frames if not plumbing.search(f) and " in " in f][:4]
        key = (head.group(1), *names)
        objects[key] += int(head.group(3))
        bytes_[key] += int(head.group(2))
        kinds[head.group(1)] += int(head.group(3))

print(f"\n{len(processes)} processes reported leaks: {dict(kinds) or 'none'}")
for key, count in objects.most_common():
    demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(key[1:]),
                               capture_output=True, text=True).stdout.splitlines()
    print(f"{key[0]}: {count} objects, {bytes_[key]} bytes, allocated in")
    for frame in demangled:
        print("    " + frame[:160])
PY
