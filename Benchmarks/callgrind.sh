#!/usr/bin/env bash
# The callgrind row of `make bench` (Benchmarks/README.md): instructions and mallocs per
# proxied 1 KiB GET, Intact against HAProxy re-encrypting, in front of the same nginx
# origin (TLS 1.3 on both legs, 127.0.0.1 only), each proxy under callgrind in the same run.
# One keep-alive connection (Benchmarks/callgrind_client.py, one request at a time),
# reverse mode, HTTP/1.1 and h2.
#
# Deterministic: every proxy runs under valgrind --tool=callgrind; the client opens its one
# connection and warms up (leaf minted, upstream connection made), then a short window of
# S requests and a long one of L are each taken between `callgrind_control --zero` and
# `--dump` on that same connection. Per request = (long window − short window) ÷ (L − S):
# what a window costs beyond its requests (the control commands) cancels out, and no
# window holds a handshake (with a new client connection per window, HAProxy opened a new
# upstream connection in some windows and not others). Mallocs are callgrind's call counts
# into glibc's allocators (Benchmarks/callgrind_costs.py).
# Valgrind hides the CPU's SHA extensions (it cannot run them), so SHA-256 takes several
# times its native instructions: the table shows apart that of Intact's digests (HAProxy
# computes none).
# The origin offers h2 and http/1.1 on one port (Intact negotiates h2 upstream, so its
# HTTP/1.1 row translates versions) and only http/1.1 on a second: `intact_rec_h1up` is
# Intact recording against that one, the same upstream protocol as HAProxy's server line
# (`alpn http/1.1`), so the two do the same job.
# Every process is started and stopped by its PID; the trap stops them all on exit.
set -euo pipefail

usage() {
  cat <<'EOF_USAGE'
usage: Benchmarks/callgrind.sh [--help]   (or: make bench-callgrind; make bench runs it too)

Instructions and mallocs per proxied HTTP/1.1 and h2 1 KiB GET on one keep-alive
connection, Intact reverse (recording on, and off) beside HAProxy re-encrypting, each
under callgrind in front of the same nginx origin. Prints one table; asserts nothing.

Environment:
  INTACT=PATH                   the intact binary (default .build/release/intact)
  INTACT_ARGS="--opt ..."       more options for every Intact target (e.g. --loop-wait thread)
  CALLGRIND_TARGETS="A B ..."   of intact_rec (--record), intact (no recording), haproxy,
                                intact_rec_h1up (--record, the origin offering only
                                http/1.1 upstream, as HAProxy's server line asks)
                                (default: all four)
  CALLGRIND_PROTOCOLS="h1 h2"   which client protocols (default both)
  CALLGRIND_SHORT=S             requests in the short window (default 100)
  CALLGRIND_LONG=L              requests in the long window (default 700)
  CALLGRIND_WARMUP=W            requests before the windows, per protocol (default 100)
  CALLGRIND_DISTINCT=1          no two requests alike: each path gets a query of its own
                                (?n=1, ?n=2, ...), so a proxy cannot reuse what it took of
                                the previous head (default 0: the same GET each time)
  CALLGRIND_PROFILE=N           also print the N functions with the most self instructions
                                per request (long − short dump) for each target and protocol
  CALLGRIND_ROWS=FILE           also write the table's rows, ratio-table style, to FILE
                                (Benchmarks/run.sh prints them in its ratio table)
  BENCH_KEEP=1                  keep the work directory (dumps, logs) and print its path
EOF_USAGE
}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=Benchmarks/certs.sh
. "$ROOT/Benchmarks/certs.sh"
bench_no_arguments callgrind.sh "${1:-}"
INTACT=${INTACT:-$ROOT/.build/release/intact}
INTACT_EXTRA=(${INTACT_ARGS:-})
TARGETS=(${CALLGRIND_TARGETS:-intact_rec intact haproxy intact_rec_h1up})
PROTOCOLS=(${CALLGRIND_PROTOCOLS:-h1 h2})
SHORT=${CALLGRIND_SHORT:-100}
LONG=${CALLGRIND_LONG:-700}
WARMUP=${CALLGRIND_WARMUP:-100}
PROFILE=${CALLGRIND_PROFILE:-0}
DISTINCT=${CALLGRIND_DISTINCT:-0}
WORK=$(mktemp -d /tmp/intact-callgrind.XXXXXX)
bench_frame "bench callgrind"

for n in "$SHORT" "$LONG" "$WARMUP" "$PROFILE"; do
  [[ $n =~ ^[0-9]+$ ]] || die "CALLGRIND_SHORT, _LONG, _WARMUP and _PROFILE take whole numbers, not '$n'"
done
[[ $DISTINCT == 0 || $DISTINCT == 1 ]] || die "CALLGRIND_DISTINCT takes 0 or 1, not '$DISTINCT'"
((LONG > SHORT)) || die "CALLGRIND_LONG ($LONG) must exceed CALLGRIND_SHORT ($SHORT)"
for t in "${TARGETS[@]}"; do
  case "$t" in intact_rec|intact|haproxy|intact_rec_h1up) ;; *) die "CALLGRIND_TARGETS: unknown target '$t' (see --help)" ;; esac
done
for p in "${PROTOCOLS[@]}"; do
  case "$p" in h1|h2) ;; *) die "CALLGRIND_PROTOCOLS: unknown protocol '$p' (h1 or h2)" ;; esac
done
for tool in valgrind callgrind_control nginx haproxy openssl python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (make bench-deps)"
done
[[ -x $INTACT ]] || die "$INTACT is missing (swift build -c release --product intact)"

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() { # PORT PID: waits up to 120 s (valgrind starts slowly) while PID lives
  local i
  for i in $(seq 1200); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || die "the server for port $1 exited: $(tail -5 "$WORK"/*.out 2>/dev/null | tr '\n' ' ')"
    sleep 0.1
  done
  die "nothing listens on 127.0.0.1:$1"
}

bench_certs "$WORK" "$INTACT"
cat "$WORK/origin-cert.pem" "$WORK/origin-key.pem" >"$WORK/origin.pem"
ORIGIN=$(free_port)
ORIGIN_H1=$(free_port)
bench_origin_conf "$WORK" "$ORIGIN" "ssl http2" 1000 \
  "listen 127.0.0.1:$ORIGIN_H1 ssl; keepalive_timeout 300s; ssl_session_tickets off;"
head -c 1024 /dev/urandom >"$WORK/www/1k"
nginx -p "$WORK" -c "$WORK/origin.conf" >"$WORK/origin.out" 2>&1 &
PIDS+=("$!")
wait_port "$ORIGIN" "$!"
wait_port "$ORIGIN_H1" "${PIDS[-1]}"

# The same HAProxy as Benchmarks/run.sh's: one thread, upstream certificate verified,
# upstream connections kept and reused.
haproxy_cfg() { # PORT
  cat >"$WORK/haproxy.cfg" <<EOF
global
  nbthread 1
  maxconn 1000
  ssl-default-bind-options ssl-min-ver TLSv1.3
defaults
  mode http
  timeout connect 30s
  timeout client 300s
  timeout server 300s
  timeout http-keep-alive 300s
  http-reuse always
frontend fe
  bind 127.0.0.1:$1 ssl crt $WORK/origin.pem alpn h2,http/1.1 no-tls-tickets
  default_backend be
backend be
  server origin 127.0.0.1:$ORIGIN ssl verify required ca-file $CA/ca-cert.pem sni str(localhost) alpn http/1.1
EOF
}

# The client (Benchmarks/callgrind_client.py): one TLS connection for the whole of a
# target and protocol, fed request counts through a FIFO (descriptor 5) and answering
# "done N" on another (descriptor 6).
client_start() { # PORT PROTOCOL
  rm -f "$WORK/client-in" "$WORK/client-out"
  mkfifo "$WORK/client-in" "$WORK/client-out"
  DISTINCT=$DISTINCT python3 "$ROOT/Benchmarks/callgrind_client.py" "$1" "$2" "$CA/ca-cert.pem" /1k 1024 \
    <"$WORK/client-in" >"$WORK/client-out" 2>"$WORK/client.err" &
  CLIENT=$!; PIDS+=("$CLIENT")
  exec 5>"$WORK/client-in" 6<"$WORK/client-out"
}
load() { # COUNT: that many GETs, one after the other, on the client's connection
  local answer
  echo "$1" >&5
  read -r -t 600 answer <&6 || die "the client stopped: $(cat "$WORK/client.err")"
  [[ $answer == "done $1" ]] || die "the client said '$answer': $(cat "$WORK/client.err")"
}
client_stop() {
  exec 5>&- 6<&-
  wait "$CLIENT" 2>/dev/null || die "the client failed: $(cat "$WORK/client.err")"
}

# window PID PROTOCOL COUNT NAME: zeroes the counters, loads, dumps; prints the dump's path.
window() {
  local before after out
  out=$(callgrind_control --zero "$1" 2>&1) || die "callgrind_control --zero $1 failed: $out"
  load "$3"
  before=$(ls "$WORK/cg-$4.out".* 2>/dev/null | wc -l)
  out=$(callgrind_control --dump="$4 $2 $3" "$1" 2>&1) || die "callgrind_control --dump $1 failed: $out"
  for _ in $(seq 600); do
    after=$(ls "$WORK/cg-$4.out".* 2>/dev/null | wc -l)
    ((after > before)) && break
    sleep 0.1
  done
  ls -t "$WORK/cg-$4.out".* | head -1
}

# stop PID TARGET: Intact drains on SIGINT, HAProxy stops on SIGTERM; KILL after 60 s.
stop() {
  local signal=INT
  [[ $2 == haproxy ]] && signal=TERM
  kill -"$signal" "$1" 2>/dev/null || true
  for _ in $(seq 600); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$1" 2>/dev/null && { log "$2 (PID $1) still ran 60 s after SIG$signal: killed"; kill -KILL "$1" 2>/dev/null || true; }
  wait "$1" 2>/dev/null || true
}

declare -A IR=() MALLOCS=() SHA=()
for t in "${TARGETS[@]}"; do
  P=$(free_port)
  cmd=()
  case "$t" in
    intact_rec) cmd=("$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN"
                     --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --record "$WORK/recording.jsonl" --loops 1 "${INTACT_EXTRA[@]}") ;;
    intact_rec_h1up) cmd=("$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN_H1"
                     --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --record "$WORK/recording-h1up.jsonl" --loops 1 "${INTACT_EXTRA[@]}") ;;
    intact)     cmd=("$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN"
                     --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --loops 1 "${INTACT_EXTRA[@]}") ;;
    haproxy)    haproxy_cfg "$P"; cmd=(haproxy -db -f "$WORK/haproxy.cfg") ;;
  esac
  valgrind --tool=callgrind --compress-strings=no --compress-pos=no --callgrind-out-file="$WORK/cg-$t.out" \
    "${cmd[@]}" >"$WORK/$t.out" 2>&1 &
  pid=$!; PIDS+=("$pid")
  wait_port "$P" "$pid"
  for p in "${PROTOCOLS[@]}"; do
    client_start "$P" "$p"
    load "$WARMUP"
    short=$(window "$pid" "$p" "$SHORT" "$t")
    long=$(window "$pid" "$p" "$LONG" "$t")
    [[ -f $short && -f $long ]] || die "$t $p: a window's dump is missing"
    client_stop
    read -r ir_s m_s sha_s < <(python3 "$ROOT/Benchmarks/callgrind_costs.py" totals "$short")
    read -r ir_l m_l sha_l < <(python3 "$ROOT/Benchmarks/callgrind_costs.py" totals "$long")
    IR[$t:$p]=$(( (ir_l - ir_s) / (LONG - SHORT) ))
    SHA[$t:$p]=$(( (sha_l - sha_s) / (LONG - SHORT) ))
    MALLOCS[$t:$p]=$(awk -v a="$m_l" -v b="$m_s" -v n="$((LONG - SHORT))" 'BEGIN { printf "%.1f", (a - b) / n }')
    log "$t $p: ${IR[$t:$p]} instructions and ${MALLOCS[$t:$p]} mallocs per request ($SHORT-request window $ir_s Ir, $LONG-request $ir_l)"
    if ((PROFILE > 0)); then
      echo
      echo "### $t $p: self instructions of the $((LONG - SHORT)) requests (long − short window)"
      echo '```'
      python3 "$ROOT/Benchmarks/callgrind_costs.py" top "$long" "$PROFILE" "$short"
      echo '```'
    fi
  done
  stop "$pid" "$t"
done

thousands() { awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else printf "%.1fk", v / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f×", a / b; else print "n/a" }'; }
goal() { [[ $1 == h1 ]] && echo "≤ 250k (issue 30)" || echo "—"; }

echo
echo "## callgrind per request ($(date -u +%Y-%m-%d), 1 KiB GETs$( ((DISTINCT)) && echo ", each path with a query of its own"), one keep-alive connection, $((LONG - SHORT)) requests: a $LONG-request window minus a $SHORT-request one)"
echo
echo "Upstream: Intact negotiates h2 with the origin (the first three columns); HAProxy's server line"
echo "asks for http/1.1; \"upstream h1\" is Intact recording against the origin's http/1.1-only port."
echo
echo "| per request | Intact, recording on | Intact, off | HAProxy | on ÷ HAProxy | Intact recording on, upstream h1 | ÷ HAProxy | target |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for p in "${PROTOCOLS[@]}"; do
  echo "| $p instructions | **$(thousands "${IR[intact_rec:$p]:-}")** | $(thousands "${IR[intact:$p]:-}") | $(thousands "${IR[haproxy:$p]:-}") | $(ratio "${IR[intact_rec:$p]:-0}" "${IR[haproxy:$p]:-0}") | $(thousands "${IR[intact_rec_h1up:$p]:-}") | $(ratio "${IR[intact_rec_h1up:$p]:-0}" "${IR[haproxy:$p]:-0}") | $(goal "$p") |"
  echo "| $p of which SHA-256 of digests (software under valgrind) | $(thousands "${SHA[intact_rec:$p]:-}") | $(thousands "${SHA[intact:$p]:-}") | $(thousands "${SHA[haproxy:$p]:-}") | — | $(thousands "${SHA[intact_rec_h1up:$p]:-}") | — | — |"
  echo "| $p mallocs | **${MALLOCS[intact_rec:$p]:-n/a}** | ${MALLOCS[intact:$p]:-n/a} | ${MALLOCS[haproxy:$p]:-n/a} | $(ratio "${MALLOCS[intact_rec:$p]:-0}" "${MALLOCS[haproxy:$p]:-0}") | ${MALLOCS[intact_rec_h1up:$p]:-n/a} | $(ratio "${MALLOCS[intact_rec_h1up:$p]:-0}" "${MALLOCS[haproxy:$p]:-0}") | — |"
done
if [[ -n ${CALLGRIND_ROWS:-} ]]; then
  : >"$CALLGRIND_ROWS"
  for p in "${PROTOCOLS[@]}"; do
    echo "| callgrind instructions per $p 1 KiB request, 1 conn (HAProxy $(thousands "${IR[haproxy:$p]:-}"); Intact recording with an http/1.1 upstream as HAProxy's $(thousands "${IR[intact_rec_h1up:$p]:-}"); mallocs $(printf '%s / %s / HAProxy %s' "${MALLOCS[intact_rec:$p]:-n/a}" "${MALLOCS[intact:$p]:-n/a}" "${MALLOCS[haproxy:$p]:-n/a}")) | **$(thousands "${IR[intact_rec:$p]:-}")** | $(thousands "${IR[intact:$p]:-}") | $(goal "$p") |" >>"$CALLGRIND_ROWS"
  done
fi
