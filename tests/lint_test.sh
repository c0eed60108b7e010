#!/usr/bin/env bash
# scripts/lint.sh on a copy of the tree: it passes on the clean copy, and fails, naming the rule,
# for one planted violation of each rule (each planted alone, then removed).
# Usage: lint_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$(cd "${1:?usage: lint_test.sh SOURCE_DIR}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/suanli-lint-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
for part in src tests bench scripts docs; do cp -R "$source_dir/$part" "$work/$part"; done
# The console's own JavaScript, not its vendored packages (web/node_modules).
mkdir -p "$work/web"
for part in js test; do
  if [ -d "$source_dir/web/$part" ]; then cp -R "$source_dir/web/$part" "$work/web/$part"; fi
done
lint() { bash "$work/scripts/lint.sh" "$work"; }

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

if ! output=$(lint 2>&1); then
  echo "$output" >&2
  fail "lint fails on the clean copy"
fi

# expect_caught RULE FILE TEXT: FILE (new, relative to the copy) holding TEXT must fail lint with
# exit code 1 and a line FILE:N: RULE: ...; the file is then removed.
expect_caught() {
  local name=$1 file=$2 text=$3 status=0
  mkdir -p "$(dirname "$work/$file")"
  printf '%s\n' "$text" >"$work/$file"
  output=$(lint 2>&1) || status=$?
  rm -f "$work/$file"
  if [ "$status" -ne 1 ]; then
    fail "$name: lint exited $status for $file, want 1; it said: $output"
  elif ! grep -qE "^$file:[0-9]+: $name: .+" <<<"$output"; then
    fail "$name: lint did not name $file and the rule; it said: $output"
  else
    echo "ok: $name caught in $file"
  fi
}
# expect_passes WHY FILE TEXT: an allowed or harmless FILE holding TEXT keeps lint passing.
expect_passes() {
  local why=$1 file=$2 text=$3 status=0 existed=0 saved
  saved=$(mktemp "$work/saved-XXXXXX")
  if [ -e "$work/$file" ]; then
    existed=1
    cp "$work/$file" "$saved"
  fi
  mkdir -p "$(dirname "$work/$file")"
  printf '%s\n' "$text" >>"$work/$file"
  output=$(lint 2>&1) || status=$?
  if [ "$existed" -eq 1 ]; then cp "$saved" "$work/$file"; else rm -f "$work/$file"; fi
  rm -f "$saved"
  if [ "$status" -ne 0 ]; then fail "$why: lint failed: $output"; else echo "ok: $why"; fi
}

h='#pragma once'
expect_caught clock-read-outside-core-clock src/sched/planted.cc \
  'auto now = std::chrono::system_clock::now();'
expect_caught clock-read-outside-core-clock src/billing/planted.cc \
  'auto start = std::chrono::steady_clock::now();'
expect_caught clock-read-outside-core-clock src/server/planted.cc 'long t = ::time(nullptr);'
expect_caught clock-read-outside-core-clock src/net/planted.cc 'clock_gettime(CLOCK_REALTIME, &ts);'
expect_caught clock-read-outside-core-clock src/agent/planted.cc 'gettimeofday(&tv, nullptr);'
expect_caught randomness-outside-core-entropy src/server/planted.cc 'std::random_device random;'
expect_caught randomness-outside-core-entropy src/cli/planted.cc 'std::mt19937 gen(42);'
expect_caught agent-or-cli-includes-server-or-store src/agent/planted.cc '#include "server/api.h"'
expect_caught agent-or-cli-includes-server-or-store src/cli/planted.cc '#include "store/store.h"'
expect_caught mkdtemp-outside-testing src/store/planted_test.cc 'mkdtemp(pattern);'
expect_caught mkdtemp-outside-testing tests/planted_test.cc 'mkdtemp(pattern);'
expect_caught header-without-pragma-once src/core/planted.h '// a header without the guard'
expect_caught using-namespace-in-header src/core/planted.h "$h
using namespace std;"
expect_caught std-regex src/advisor/planted.cc '#include <regex>'
expect_caught assert-not-check src/billing/planted.cc 'assert(balance >= 0);'
expect_caught beast-outside-net src/server/planted.cc '#include <boost/beast/http.hpp>'
expect_caught cli11-outside-cli src/server/planted.cc '#include <CLI/CLI.hpp>'
expect_caught std-mutex-outside-core-mutex src/agent/planted.cc 'std::mutex mutex_;'
expect_caught std-mutex-outside-core-mutex src/store/planted.cc 'std::lock_guard lock(mutex_);'
expect_caught state-component-includes-io src/server/state/planted.cc '#include "store/store.h"'
expect_caught state-component-includes-io src/server/state/planted.cc '#include "net/http.h"'
expect_caught state-component-includes-io src/server/state/planted.cc \
  '#include "server/control_plane.h"'
expect_caught file-too-long src/billing/planted.cc "$(seq 1 801 | sed 's|^|// line |')"
expect_caught file-too-long src/billing/planted_test.cc "$(seq 1 1001 | sed 's|^|// line |')"
expect_caught header-missing-from-architecture src/server/planted.h "$h"
expect_caught header-missing-from-architecture src/agent/planted.h "$h"
long_line="const text = '$(printf 'x%.0s' {1..100})';"  # 115 columns
expect_caught web-line-over-100-columns web/js/pages/planted.js "$long_line"
expect_caught web-line-over-100-columns web/test/planted.test.mjs "$long_line"
expect_caught web-line-over-100-columns web/js/planted.js "// $(printf 'word %.0s' {1..20})"
expect_caught web-module-over-800-lines web/js/pages/planted.js "$(printf 'f();\n%.0s' {1..801})"
expect_caught web-parses-html web/js/pages/planted.js 'holder.innerHTML = pod.name;'
expect_caught web-parses-html web/js/planted.js "view.insertAdjacentHTML('beforeend', text);"

# What the rules allow, with their reasons in scripts/lint.sh.
expect_passes "tests may read the steady clock for deadlines" src/sched/planted_test.cc \
  'auto deadline = std::chrono::steady_clock::now();'
expect_passes "comments may name a rule's pattern" src/sched/planted.cc \
  '// never call std::chrono::system_clock::now() here'
expect_passes "the agent may use the SQLite wrapper" src/agent/planted.cc '#include "store/sqlite.h"'
expect_passes "suanli server and suanli up wire the server" src/cli/server_command.cc \
  '#include "server/api.h"'
expect_passes "src/testing makes temporary folders" src/testing/planted.cc 'mkdtemp(pattern);'
expect_passes "tests may use std::mutex" src/agent/planted_test.cc 'std::mutex mutex;'
expect_passes "a component includes core and its fellow components" src/server/state/planted.cc \
  '#include "server/state/principal.h"'
expect_passes "a test file may have 1,000 lines" src/billing/planted_test.cc \
  "$(seq 1 999 | sed 's|^|// line |')"
expect_passes "100 columns of JavaScript, counted in characters" web/js/planted.js \
  "const text = '$(printf '·%.0s' {1..84})';"
expect_passes "a module of 800 lines" web/js/planted.js "$(printf 'f();\n%.0s' {1..800})"
expect_passes "web/node_modules is vendored, not ours" web/node_modules/planted/planted.js "$long_line"
expect_passes "textContent sets text" web/js/planted.js 'holder.textContent = pod.name;'

if [ "$failures" -gt 0 ]; then
  echo "lint_test: $failures failure(s)" >&2
  exit 1
fi
echo "lint_test: every rule caught its planted violation"
