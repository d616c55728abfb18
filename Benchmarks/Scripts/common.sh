# Shared by the benchmark scripts: `source common.sh TOOL...` checks that the tools are installed (before the long
# build), builds the release binary and sets `root`, `WORK` (a scratch directory, reused when given) and `presence`.
#
# These scripts are benchmarks, run by hand; CI does not run them and does not install their tools.

# require_tools TOOL... : stops with the Debian packages to install when a tool is missing.
require_tools() {
    local missing=()
    for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "missing: ${missing[*]} (Debian: apt-get install -y ${missing[*]/#cc/gcc})" >&2
        exit 69
    fi
}

require_tools "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
cd "$root"
swift build -c release --product presence >/dev/null
presence="$root/.build/release/presence"
