#!/usr/bin/env bash
# `suanli up` stopped at several points of its start-up (before it listens, as its agent registers,
# once it is up) starts again every time on the same data folder, with its local agent registered
# and ready: once, an `up` stopped in its first second never started again ("this agent is not
# registered and has no join token"). SIGTERM, as Ctrl-C and systemd stop it.
# Usage: up_restart_end_to_end_test.sh PATH_TO_SUANLI (needs a container engine)
source "$(dirname "$0")/up_testing.sh" "$1"

# Starts `suanli up` on the folder's data, lets it run `delay` seconds (or, for "agent-db", until
# its agent's database appears, before the agent can have registered), and stops it with SIGTERM;
# it must exit by itself within 30 s.
start_and_stop() {
  local delay=$1
  "$suanli" up --listen 127.0.0.1:0 --simulate-gpus "2xRTX 4090" ${engine:+--engine "$engine"} \
    >>stopped.out 2>>stopped.err &
  local pid=$!
  if [ "$delay" = agent-db ]; then
    for _ in $(seq 1 3000); do
      [ -f suanli-data/agent/agent.db ] && break
      sleep 0.01
    done
  else
    sleep "$delay"
  fi
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    fail "suanli up did not stop within 30 s of SIGTERM (stopped after ${delay}s)"
  fi
  wait "$pid" 2>/dev/null
}

# The window between the agent's database and its registration is milliseconds here; an `up`
# stopped in it leaves what a `suanli agent` without a join token leaves: a database, no credential.
# Made first, so that the starts below all meet it.
"$suanli" agent --server http://127.0.0.1:1 --state-dir suanli-data/agent \
  --simulate-gpus "2xRTX 4090" ${engine:+--engine "$engine"} >agent.out 2>&1 &&
  fail "an agent with no join token started: $(cat agent.out)"
[ -f suanli-data/agent/agent.db ] || fail "the agent made no state: $(cat agent.out)"
for delay in 0.05 0.3 agent-db 2; do
  start_and_stop "$delay"
done
start_up
grep -q "not registered" up.err && fail "suanli up's agent says it is not registered: $(cat up.err)"
# Only the admin exists, so the hints say how to make a user, and the line runs as pasted: it names
# this binary as the shell finds it (its path, or plain "suanli" where PATH has it).
hint=$(grep -m 1 "users create alice" up.out | sed 's/#.*//; s/alice/carol/')
[ -n "$hint" ] || fail "the hints do not say how to make a user"
bash -c "$hint" >/dev/null || fail "the hint to make a user does not run as pasted: $hint"
"$suanli" users list | grep -q carol || fail "the pasted hint made no user carol: $hint"
# And once more from a fully started `up`: it comes back with the same node, ready.
node=$("$suanli" nodes list --json | json_field id)
kill -TERM "$up_pid"
wait "$up_pid"
up_pid=""
start_up
[ "$("$suanli" nodes list --json | json_field id)" = "$node" ] ||
  fail "the restarted up's agent is another node: $("$suanli" nodes list)"
# A user exists now: the restart's hints do not ask for alice again.
grep -q "users create alice" up.out && fail "the restart's hints ask for alice again: $(cat up.out)"
grep -qF "  $suanli users list" up.out || fail "the restart's hints do not list the users"
echo "PASS: suanli up stopped at 4 points of its start-up and once running started again each time"
