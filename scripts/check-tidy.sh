#!/bin/bash
# clang-tidy over the library and command sources with .clang-tidy (warnings are errors).
# Usage: scripts/check-tidy.sh BUILD_DIR JOBS. Drops clang's "N warnings generated." chatter
# about suppressed system-header warnings; any finding fails the run.
set -euo pipefail
build=${1:?build dir with compile_commands.json}
jobs=${2:-2}
cd "$(dirname "$0")/.."
git ls-files 'src/*.c' 'cmd/*.c' |
    xargs -P "$jobs" -n 4 clang-tidy -p "$build" --quiet 2>&1 |
    { grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' || true; }
