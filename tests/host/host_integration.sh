#!/usr/bin/env bash
# host_integration.sh TEST GPUVET DENY_SYSCALLS: one end-to-end host test. Loopback (127.0.0.1) only,
# ephemeral ports, every background process ended by its own id.
set -euo pipefail
TEST=$1
GPUVET=$2
DENY=${3:-}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
measure() {  # FILE CHECK KEY -> value or "None"
  json "$1" "next((m.get('value') for c in d['checks'] if c['key']=='$2' for m in c['measurements'] if m['key']=='$3'), None)"
}
# Waits for a listener without connecting to it (a probe connection would count as a test).
wait_port() {
  local hex; hex=$(printf '%04X' "$1")
  for _ in $(seq 50); do grep -q ":$hex [0-9A-F:]* 0A " /proc/net/tcp && return 0; sleep 0.1; done
  fail "nothing listens on $1"
}

case $TEST in
net_client_vs_iperf3)
  PORT=$(free_port)
  iperf3 -s -B 127.0.0.1 -p "$PORT" >/dev/null 2>&1 & PIDS+=($!)
  wait_port "$PORT"
  rc=0; timeout 40 "$GPUVET" host net --server "127.0.0.1:$PORT" --seconds 1 --streams 2 --json >"$WORK/r.json" || rc=$?
  [ "$rc" = 0 ] || fail "gpuvet exit $rc"
  up=$(measure "$WORK/r.json" host.network upload_gbitps); down=$(measure "$WORK/r.json" host.network download_gbitps)
  echo "upload $up Gbit/s, download $down Gbit/s"
  python3 -c "import sys; sys.exit(0 if float('$up')>0.1 and float('$down')>0.1 else 1)" || fail "throughput missing"
  ;;
net_server_vs_iperf3)
  PORT=$(free_port)
  # Serve until interrupted: a normal and a reverse test from the real iperf3, then SIGINT.
  "$GPUVET" host net --serve --bind 127.0.0.1 --port "$PORT" --json >"$WORK/s.json" 2>"$WORK/s.err" & SRV=$!; PIDS+=($SRV)
  wait_port "$PORT"; sleep 0.3
  timeout 20 iperf3 -c 127.0.0.1 -p "$PORT" -t 1 -J >"$WORK/c1.json" || fail "iperf3 client failed: $(cat "$WORK/c1.json")"
  sleep 0.5
  timeout 20 iperf3 -c 127.0.0.1 -p "$PORT" -t 1 -R -J >"$WORK/c2.json" || fail "iperf3 -R failed"
  json "$WORK/c1.json" "d['end']['sum_received']['bits_per_second']"
  kill -INT "$SRV"
  rc=0; timeout 10 tail --pid="$SRV" -f /dev/null || fail "server did not stop on SIGINT"
  wait "$SRV" || rc=$?
  [ "$rc" = 0 ] || fail "server exit $rc: $(cat "$WORK/s.err")"
  served=$(measure "$WORK/s.json" host.network tests_served)
  [ "$served" = "2.0" ] || [ "$served" = "2" ] || fail "served $served tests, expected 2"
  # --one-off: one test, then exit by itself.
  PORT=$(free_port)
  "$GPUVET" host net --serve --one-off --bind 127.0.0.1 --port "$PORT" >/dev/null 2>&1 & ONE=$!; PIDS+=($ONE)
  wait_port "$PORT"; sleep 0.3
  timeout 20 iperf3 -c 127.0.0.1 -p "$PORT" -t 1 >/dev/null || fail "iperf3 vs --one-off failed"
  timeout 10 tail --pid="$ONE" -f /dev/null || fail "--one-off server did not exit"
  ;;
net_unreachable)
  PORT=$(free_port)  # nothing listens there
  rc=0; timeout 30 "$GPUVET" host net --server "127.0.0.1:$PORT" --seconds 1 --json >"$WORK/r.json" || rc=$?
  # Nothing answering is the peer's problem, not a network verdict: could not run (exit 3).
  [ "$rc" = 3 ] || fail "expected exit 3 (could not run), got $rc"
  json "$WORK/r.json" "d['checks'][0]['summary']" | grep -q "nothing accepts iperf3 connections" || fail "no clear message"
  rc=0; "$GPUVET" host net --server "127.0.0.1:99999" >/dev/null 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "bad port: expected exit 2, got $rc"
  rc=0; "$GPUVET" host net >/dev/null 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "no server: expected exit 2, got $rc"
  ;;
storage_clean)
  mkdir "$WORK/d"
  rc=0; timeout 40 "$GPUVET" host storage --data-dir "$WORK/d" --storage-bytes 64M --quick --json >"$WORK/r.json" || rc=$?
  [ "$rc" = 0 ] || fail "storage exit $rc"
  r=$(measure "$WORK/r.json" host.storage seq_read_gbps); [ "$r" != None ] || fail "no read figure"
  [ -z "$(ls -A "$WORK/d")" ] || fail "files left behind: $(ls -A "$WORK/d")"
  # Interrupted mid-run: still nothing left behind.
  "$GPUVET" host storage --data-dir "$WORK/d" --storage-bytes 512M --full >/dev/null 2>&1 & P=$!; PIDS+=($P)
  sleep 0.3; kill -INT "$P"; timeout 20 tail --pid="$P" -f /dev/null || fail "storage did not stop on SIGINT"
  [ -z "$(ls -A "$WORK/d")" ] || fail "files left behind after SIGINT"
  # tmpfs refuses O_DIRECT: buffered figures with a note.
  if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
    mkdir "/dev/shm/gpuvet-test-$$"; D="/dev/shm/gpuvet-test-$$"
    rc=0; timeout 40 "$GPUVET" host storage --data-dir "$D" --storage-bytes 64M --quick --json >"$WORK/t.json" || rc=$?
    left=$(ls -A "$D"); rmdir "$D"
    [ -z "$left" ] || fail "files left in tmpfs"
    # Kernels from 6.6 accept O_DIRECT on tmpfs; older ones refuse it and gpuvet must say so.
    eng=$(json "$WORK/t.json" "next(m['text'] for m in d['checks'][0]['measurements'] if m['key']=='io_engine')")
    echo "tmpfs: $eng"
    case $eng in *buffered*) json "$WORK/t.json" "d['checks'][0]['details']" | grep -q "O_DIRECT" || fail "no O_DIRECT note";; esac
  fi
  ;;
storage_bad_input)
  rc=0; "$GPUVET" host storage --data-dir "$WORK/missing" --json >"$WORK/r.json" 2>/dev/null || rc=$?
  [ "$rc" = 2 ] || fail "missing dir: expected exit 2, got $rc"
  json "$WORK/r.json" "d['fatal']['message']" | grep -q "does not exist" || fail "missing dir: no clear message"
  rc=0; "$GPUVET" check --quick --data-dir /etc/hostname >/dev/null 2>"$WORK/err" || rc=$?
  [ "$rc" = 2 ] || fail "data path is a file: expected exit 2, got $rc"
  grep -q "is not a folder" "$WORK/err" || fail "data path is a file: no clear message: $(cat "$WORK/err")"
  if [ "$(id -u)" != 0 ]; then
    mkdir "$WORK/ro"; chmod 555 "$WORK/ro"
    "$GPUVET" host storage --data-dir "$WORK/ro" --json >"$WORK/ro.json" || true
    json "$WORK/ro.json" "d['checks'][0]['verdict']" | grep -qi skip || fail "read-only dir not skipped"
  fi
  rc=0; "$GPUVET" host storage --storage-bytes 12Q >/dev/null 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "bad size: expected exit 2, got $rc"
  ;;
storage_no_io_uring)
  # A kernel without io_uring: threads doing pread/pwrite measure the same three figures.
  mkdir "$WORK/d"
  rc=0; timeout 40 "$DENY" --no-io-uring -- "$GPUVET" host storage --data-dir "$WORK/d" --storage-bytes 64M --quick \
    --json >"$WORK/r.json" || rc=$?
  [ "$rc" = 77 ] && exit 77
  [ "$rc" = 0 ] || fail "storage exit $rc"
  eng=$(json "$WORK/r.json" "next(m['text'] for m in d['checks'][0]['measurements'] if m['key']=='io_engine')")
  [ "$eng" = "pread/pwrite threads, O_DIRECT" ] || fail "engine: $eng"
  json "$WORK/r.json" "d['checks'][0]['details']" | grep -q "the kernel refused io_uring (Function not implemented)" ||
    fail "no note on io_uring"
  for k in seq_write_gbps seq_read_gbps rand_read_iops; do
    v=$(measure "$WORK/r.json" host.storage $k); echo "$k $v"
    python3 -c "import sys; sys.exit(0 if float('$v')>0 else 1)" 2>/dev/null || fail "$k missing: $v"
  done
  [ -z "$(ls -A "$WORK/d")" ] || fail "files left behind"
  ;;
storage_no_odirect)
  # A filesystem that refuses O_DIRECT: buffered figures, a note, and a WARN rather than a PASS.
  mkdir "$WORK/d"
  rc=0; timeout 40 "$DENY" --no-odirect -- "$GPUVET" host storage --data-dir "$WORK/d" --storage-bytes 64M --quick \
    --json >"$WORK/r.json" || rc=$?
  [ "$rc" = 77 ] && exit 77
  [ "$rc" = 0 ] || fail "storage exit $rc"
  eng=$(json "$WORK/r.json" "next(m['text'] for m in d['checks'][0]['measurements'] if m['key']=='io_engine')")
  [ "$eng" = "io_uring, buffered" ] || fail "engine: $eng"
  json "$WORK/r.json" "d['checks'][0]['details']" | grep -q "does not support O_DIRECT" || fail "no O_DIRECT note"
  json "$WORK/r.json" "d['checks'][0]['verdict']" | grep -qi warn || fail "buffered figures not flagged"
  v=$(measure "$WORK/r.json" host.storage seq_read_gbps); echo "buffered read $v GB/s"
  python3 -c "import sys; sys.exit(0 if float('$v')>0 else 1)" 2>/dev/null || fail "no read figure: $v"
  [ -z "$(ls -A "$WORK/d")" ] || fail "files left behind"
  ;;
storage_fills_up)
  # The disk fills up while the test file is written (pwrite fails with ENOSPC, no io_uring):
  # SKIP with the reason, and nothing left behind.
  mkdir "$WORK/d"
  rc=0; timeout 40 "$DENY" --no-io-uring --no-space -- "$GPUVET" host storage --data-dir "$WORK/d" \
    --storage-bytes 64M --quick --json >"$WORK/r.json" || rc=$?
  [ "$rc" = 77 ] && exit 77
  # Nothing was measured: COULD NOT RUN, exit 3 (docs/report-schema.md), not a pass.
  [ "$rc" = 3 ] || fail "storage exit $rc, expected 3"
  json "$WORK/r.json" "d['verdict']" | grep -q COULD_NOT_RUN || fail "full disk: run verdict not COULD_NOT_RUN"
  json "$WORK/r.json" "d['checks'][0]['verdict']" | grep -qi skip || fail "full disk not skipped"
  json "$WORK/r.json" "d['checks'][0]['summary']" | grep -q "The data path filled up while the test file was written (No space left on device): free space on it" ||
    fail "unclear message: $(json "$WORK/r.json" "d['checks'][0]['summary']")"
  [ -z "$(ls -A "$WORK/d")" ] || fail "files left behind"
  ;;
storage_readonly_full)
  # A read-only and a nearly full filesystem, mounted in a private user and mount namespace so that
  # even root meets them (root ignores a folder's permission bits, not a read-only mount).
  unshare -rm true 2>/dev/null || { echo "no user namespaces here"; exit 77; }
  mkdir "$WORK/ro" "$WORK/full"
  unshare -rm bash -c '
    set -e
    mount --bind "$1/ro" "$1/ro" && mount -o remount,bind,ro "$1/ro"
    mount -t tmpfs -o size=48m gpuvet-full "$1/full"
    head -c 40M /dev/zero >"$1/full/filler"
    "$2" host storage --data-dir "$1/ro" --json >"$1/ro.json" || true
    "$2" host storage --data-dir "$1/full" --json >"$1/full.json" || true
    ls -A "$1/full" >"$1/full.left"' _ "$WORK" "$GPUVET" || fail "could not set up the mounts"
  json "$WORK/ro.json" "d['checks'][0]['verdict']" | grep -qi skip || fail "read-only path not skipped"
  json "$WORK/ro.json" "d['checks'][0]['summary']" | grep -q "not writable (Read-only file system)" ||
    fail "read-only: unclear message: $(json "$WORK/ro.json" "d['checks'][0]['summary']")"
  json "$WORK/full.json" "d['checks'][0]['verdict']" | grep -qi skip || fail "full path not skipped"
  json "$WORK/full.json" "d['checks'][0]['summary']" | grep -q "free on .*the test needs at least" ||
    fail "full: unclear message: $(json "$WORK/full.json" "d['checks'][0]['summary']")"
  [ "$(cat "$WORK/full.left")" = filler ] || fail "files left on the full path: $(cat "$WORK/full.left")"
  ;;
check_flags)
  "$GPUVET" check --help | grep -q -- --data-dir || fail "check has no --data-dir"
  "$GPUVET" check --help | grep -q -- --net-server || fail "check has no --net-server"
  ;;
*) fail "unknown test $TEST" ;;
esac
echo "ok $TEST"
