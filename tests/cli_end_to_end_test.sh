#!/usr/bin/env bash
# The `suanli` binary as a person and a script use it: exit codes, stdout for results, one stderr line per
# error. Usage: cli_end_to_end_test.sh PATH_TO_SUANLI
set -uo pipefail

suanli=$(realpath "$1")
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
cd "$workdir"  # no data/ here: the binary must carry its own

passed=0
failed=0
check() {  # check NAME EXPECTED_EXIT STDOUT_PATTERN STDERR_PATTERN -- ARGS...
  local name=$1 want_exit=$2 out_pattern=$3 err_pattern=$4
  shift 5
  "$suanli" "$@" >out.txt 2>err.txt
  local got_exit=$?
  local problem=""
  [ "$got_exit" -eq "$want_exit" ] || problem+=" exit $got_exit, want $want_exit;"
  if [ -n "$out_pattern" ]; then grep -qE -- "$out_pattern" out.txt || problem+=" stdout lacks /$out_pattern/;"; fi
  if [ -n "$err_pattern" ]; then
    grep -qE -- "$err_pattern" err.txt || problem+=" stderr lacks /$err_pattern/;"
    [ "$(wc -l <err.txt)" -eq 1 ] || problem+=" stderr is not one line;"
    [ ! -s out.txt ] || problem+=" stdout is not empty on error;"
  fi
  if [ -z "$problem" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name:$problem"
    sed 's/^/  stdout: /' out.txt | head -5
    sed 's/^/  stderr: /' err.txt | head -5
  fi
}

check "table" 0 '^RTX 4090 +Ada +24 +1008 ' "" -- gpus
check "json" 0 '"name":"A100 80GB SXM"' "" -- gpus --json
entries=$("$suanli" gpus --json | grep -o '"rent_usd_per_hour":' | wc -l)
if [ "$entries" -ge 35 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL json count: $entries < 35"; fi
check "filters" 0 '^H200 ' "" -- gpus --min-vram 100 --vendor nvidia --sort vram
check "compare" 0 'VRAM GB +24 +80 \(3\.33×\)' "" -- compare 4090 a100-80g
check "bad number" 2 "" "--min-vram: 'abc' must be a number" -- gpus --min-vram abc
check "negative price" 2 "" "--max-price: '-1' must be a number above 0" -- gpus --max-price -1
check "unknown column" 2 "" "unknown sort column 'speed'" -- gpus --sort speed
check "unknown gpu" 3 "" "no GPU type named 'rtx 4900'; did you mean RTX 4090" -- compare 4090 "rtx 4900"
check "ambiguous gpu" 2 "" "'6000' could be RTX A6000 or RTX 6000 Ada; say which" -- compare 4090 6000
check "unknown command" 2 "" "unknown command 'gpu'" -- gpu
check "version" 0 '^suanli [0-9]+\.[0-9]+\.[0-9]+( \(git [0-9a-f]{12}\))?$' "" -- version
check "version flag" 0 '^suanli [0-9]+\.[0-9]+\.[0-9]+' "" -- --version
check "unknown flag" 2 "" "^suanli: unknown flag --templte; did you mean --template\? \(see 'suanli pods create --help'\)$" -- pods create --templte demo-http
check "model number typo" 3 "" "no GPU type named '4900'; did you mean RTX 4090," -- compare 4090 4900
check "missing price file" 3 "" "--prices: /nonexistent/prices.yaml: no such file" -- --prices /nonexistent/prices.yaml gpus
printf 'prices:\n  - gpu: RTX 4090\n    rent_usd_per_hour: 0.5O\n' >prices.yaml
check "bad price file" 2 "" "prices.yaml:3: RTX 4090: field 'rent_usd_per_hour' must be a positive amount" -- gpus --prices prices.yaml
printf 'prices:\n  - gpu: RTX 4090\n    rent_usd_per_hour: 0.5\n' >prices.yaml
export SUANLI_PRICES=prices.yaml
check "price file from the environment" 0 '^RTX 4090 .* \$0\.50 ' "" -- gpus

check "advise table" 0 'Recommendation: llama-2-7b needs' "" -- advise --model llama-2-7b --task lora --gpu a6000 --gpu a100
check "advise json" 0 '"recommendation":\{' "" -- advise --model sd-1.5 --task infer --json
check "advise unknown model" 3 "" "no model named|did you mean" -- advise --model llama-9 --task infer
check "advise bad batch" 2 "" "--batch" -- advise --model gpt2 --task infer --batch 0

echo "cli end-to-end: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
