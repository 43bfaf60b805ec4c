#!/usr/bin/env bash
# Benchmark harness (Docs: /work/shared/design/PERFORMANCE.md, Benchmarks/README.md).
# An nginx origin serves 1 KiB and 1 MiB over TLS 1.3 on 127.0.0.1; each target
# (nginx direct, Intact reverse with and without --record on one loop and with --record
# on two, HAProxy and nginx re-encrypting, mitmdump, Intact forward through a CONNECT
# tunnel) is checked for correctness first, then loaded A B A B. Server CPU comes from
# /proc/PID/stat. Prints one ratio table (recording on as the headline, off beside it);
# asserts nothing about timing. BENCH_MODE=quick (default) or full.
# Every process is started and stopped by its PID; the trap stops them all on exit.
set -euo pipefail

usage() {
  cat <<'EOF_USAGE'
usage: Benchmarks/run.sh [--help]   (or: make bench)

Loads an nginx origin directly and through Intact (reverse, with and without --record,
one and two loops; forward through a CONNECT tunnel), HAProxy, nginx re-encrypting and
mitmdump, A B A B, and prints one ratio table. Asserts nothing about timing.

Environment:
  BENCH_MODE=quick|full       2 s x 2 repetitions (default) or 10 s x 3
  BENCH_MITM_DURATION=S       seconds per mitmproxy load (default max(duration, 10))
  BENCH_IDLE=N                idle keep-alive TLS connections for the memory figure (0 skips)
  BENCH_PAIRS=N               paired loads per scenario for recording on ÷ off and for its
                              control, off ÷ a twin of itself (default 5 quick, 7 full)
  BENCH_KEEP=1                keep the work directory (recordings, logs) and print its path
  BENCH_SCENARIOS="A B ..."   run only these scenarios (default: h1_1k_c1 h1_1k_c50
                              h1_1m_c50 h2_1k_c10 hs_1k_c10 hs_warm hs_cold; full adds h1_1m_c10);
                              rows whose scenarios did not run read n/a
  BENCH_CALLGRIND=0           skip the callgrind rows (Benchmarks/callgrind.sh, a few minutes)
  INTACT=PATH                 the intact binary (default .build/release/intact)
EOF_USAGE
}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=Benchmarks/certs.sh
. "$ROOT/Benchmarks/certs.sh"
bench_no_arguments run.sh "${1:-}"
INTACT=${INTACT:-$ROOT/.build/release/intact}
MODE=${BENCH_MODE:-quick}
case "$MODE" in
  quick) DUR=2; REPS=2; PAIR_REPS=5; IDLE=1000; HANDSHAKES=150 ;;
  full)  DUR=10; REPS=3; PAIR_REPS=7; IDLE=1000; HANDSHAKES=600 ;;
  *) echo "BENCH_MODE must be quick or full" >&2; exit 2 ;;
esac
# mitmproxy's loads last longer (see run_scenario): BENCH_MITM_DURATION, default max(DUR, 10) s.
MITM_DUR=${BENCH_MITM_DURATION:-$((DUR > 10 ? DUR : 10))}
# Idle keep-alive connections held per target for the memory figure (0 skips that phase).
IDLE=${BENCH_IDLE:-$IDLE}
PAIR_REPS=${BENCH_PAIRS:-$PAIR_REPS}
[[ $PAIR_REPS =~ ^[0-9]+$ ]] || { echo "BENCH_PAIRS must be a whole number, not '$PAIR_REPS'" >&2; exit 2; }
HZ=$(getconf CLK_TCK)
WORK=$(mktemp -d /tmp/intact-bench.XXXXXX)
RESULTS=$WORK/results.tsv
declare -a PIDS=()
# Requests each target answered, as the clients saw them (checks, loads, idle connections):
# compared at the end with the exchanges each recording Intact target recorded.
declare -A ANSWERED=()

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  [[ -n ${BENCH_KEEP:-} ]] && log "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "bench: $*" >&2; }
die() { log "$*"; exit 1; }
for sc in ${BENCH_SCENARIOS:-}; do
  case "$sc" in
    h1_1k_c1|h1_1k_c50|h1_1m_c10|h1_1m_c50|h2_1k_c10|hs_1k_c10|hs_warm|hs_cold) ;;
    *) die "BENCH_SCENARIOS: unknown scenario '$sc' (see --help)" ;;
  esac
done

for tool in wrk h2load nginx haproxy mitmdump socat openssl curl python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (make bench-deps)"
done
[[ -x $INTACT ]] || die "$INTACT is missing (swift build -c release --product intact)"
ulimit -n 20000 2>/dev/null || true

# A free loopback port, chosen by the kernel.
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# Waits until 127.0.0.1:$1 accepts connections (or fails after ~10 s).
wait_port() {
  local i
  for i in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.1
  done
  die "nothing listens on 127.0.0.1:$1"
}

# Starts a server in the background and records its PID: start NAME CMD...
start() {
  local name=$1; shift
  "$@" >"$WORK/$name.out" 2>&1 &
  PIDS+=("$!")
  eval "PID_$name=$!"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# --- certificates and files --------------------------------------------------------
# shellcheck source=Benchmarks/certs.sh
. "$ROOT/Benchmarks/certs.sh"
bench_certs "$WORK" "$INTACT"
cat "$WORK/origin-cert.pem" "$WORK/origin-key.pem" >"$WORK/origin.pem"
mkdir -p "$WORK/www"
head -c 1024 /dev/urandom >"$WORK/www/1k"
head -c 1048576 /dev/urandom >"$WORK/www/1m"
SHA_1k=$(sha256sum "$WORK/www/1k" | cut -d' ' -f1)
SHA_1m=$(sha256sum "$WORK/www/1m" | cut -d' ' -f1)

# --- servers --------------------------------------------------------------------------
# nginx with one process (master_process off) so its PID is the one doing the work.
nginx_conf() { # NAME PORT LOCATION-BODY [UPSTREAM-BLOCK]
  mkdir -p "$WORK/$1-tmp"
  cat >"$WORK/$1.conf" <<EOF
master_process off;
daemon off;
worker_processes 1;
pid $WORK/$1.pid;
error_log $WORK/$1-error.log warn;
worker_rlimit_nofile 20000;
events { worker_connections 8000; }
http {
  access_log off;
  client_body_temp_path $WORK/$1-tmp; proxy_temp_path $WORK/$1-tmp;
  fastcgi_temp_path $WORK/$1-tmp; uwsgi_temp_path $WORK/$1-tmp; scgi_temp_path $WORK/$1-tmp;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  ${4:-}
  server {
    listen 127.0.0.1:$2 ssl http2;
    ssl_certificate $WORK/origin-cert.pem;
    ssl_certificate_key $WORK/origin-key.pem;
    ssl_protocols TLSv1.3;
    ssl_session_tickets off;
    location / { $3 }
  }
}
EOF
}

ORIGIN_PORT=$(free_port)
nginx_conf origin "$ORIGIN_PORT" "root $WORK/www; default_type application/octet-stream;"
start origin nginx -p "$WORK" -c "$WORK/origin.conf"
wait_port "$ORIGIN_PORT"

TARGETS=(direct)
declare -A PORT=([direct]=$ORIGIN_PORT)
declare -A SPID=()
SPID[direct]=$PID_origin

# Every load generator connects from 127.0.0.1, so Intact's per-client-address
# connection cap (--max-client-connections, default 512) would refuse the 1,000
# idle connections of the memory scenario: lift it for every Intact target.
INTACT_LIMITS=(--max-client-connections 4096)

P=$(free_port); PORT[intact]=$P
start intact "$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" \
  --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --loops 1 "${INTACT_LIMITS[@]}"
SPID[intact]=$PID_intact; TARGETS+=(intact)

P=$(free_port); PORT[intact_rec]=$P
start intact_rec "$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" \
  --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --record "$WORK/recording.jsonl" --loops 1 "${INTACT_LIMITS[@]}"
SPID[intact_rec]=$PID_intact_rec; TARGETS+=(intact_rec)

# A twin of `intact` (same binary, same options): only for the control of the paired
# measure below, so it is no target of the scenarios.
P=$(free_port); PORT[intact_twin]=$P
start intact_twin "$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" \
  --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --loops 1 "${INTACT_LIMITS[@]}"
SPID[intact_twin]=$PID_intact_twin

# The same with two event loops, for "--loops 2 ÷ --loops 1" (measured at 50 connections only).
P=$(free_port); PORT[intact_rec_l2]=$P
start intact_rec_l2 "$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" \
  --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --record "$WORK/recording-l2.jsonl" --loops 2 "${INTACT_LIMITS[@]}"
SPID[intact_rec_l2]=$PID_intact_rec_l2; TARGETS+=(intact_rec_l2)

P=$(free_port); PORT[haproxy]=$P
cat >"$WORK/haproxy.cfg" <<EOF
global
  nbthread 1
  maxconn 8000
  ssl-default-bind-options ssl-min-ver TLSv1.3
defaults
  mode http
  timeout connect 5s
  timeout client 300s
  timeout server 300s
  timeout http-keep-alive 300s
  http-reuse always
frontend fe
  bind 127.0.0.1:$P ssl crt $WORK/origin.pem alpn h2,http/1.1 no-tls-tickets
  default_backend be
backend be
  server origin 127.0.0.1:$ORIGIN_PORT ssl verify required ca-file $CA/ca-cert.pem sni str(localhost) alpn http/1.1
EOF
start haproxy haproxy -db -f "$WORK/haproxy.cfg"
SPID[haproxy]=$PID_haproxy; TARGETS+=(haproxy)

P=$(free_port); PORT[nginx]=$P
nginx_conf nginx "$P" "proxy_pass https://origin; proxy_http_version 1.1; proxy_set_header Connection \"\";
    proxy_ssl_verify on; proxy_ssl_trusted_certificate $CA/ca-cert.pem; proxy_ssl_name localhost;
    proxy_ssl_server_name on; proxy_ssl_session_reuse on; proxy_ssl_protocols TLSv1.3;" \
  "upstream origin { server 127.0.0.1:$ORIGIN_PORT; keepalive 64; }"
start nginx nginx -p "$WORK" -c "$WORK/nginx.conf"
SPID[nginx]=$PID_nginx; TARGETS+=(nginx)

# mitmdump signs with the bench CA too (its confdir's mitmproxy-ca.pem is key and
# certificate in one file), so one --cacert checks every target. In reverse mode it
# offers HTTP/1.1 only: it is checked and measured on h1 (see in_scenario).
P=$(free_port); PORT[mitmproxy]=$P
mkdir -p "$WORK/mitm"
cat "$CA/ca-key.pem" "$CA/ca-cert.pem" >"$WORK/mitm/mitmproxy-ca.pem"
start mitmproxy mitmdump -q --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" --listen-host 127.0.0.1 \
  --listen-port "$P" --set "ssl_verify_upstream_trusted_ca=$CA/ca-cert.pem" --set confdir="$WORK/mitm"
SPID[mitmproxy]=$PID_mitmproxy; TARGETS+=(mitmproxy)

# Forward mode (recording on, one loop), driven through a CONNECT tunnel: socat accepts
# on PORT[forward], sends "CONNECT localhost:ORIGIN" to Intact for each connection and
# then relays, so wrk and h2load speak TLS to Intact's interception as a client behind a
# forward proxy does. Only Intact's CPU is counted, not socat's.
FWD_PORT=$(free_port)
start forward "$INTACT" proxy --listen "127.0.0.1:$FWD_PORT" --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet \
  --record "$WORK/recording-fwd.jsonl" --loops 1 "${INTACT_LIMITS[@]}"
P=$(free_port); PORT[forward]=$P
start tunnel socat "TCP-LISTEN:$P,bind=127.0.0.1,fork,reuseaddr,backlog=1024" \
  "PROXY:127.0.0.1:localhost:$ORIGIN_PORT,proxyport=$FWD_PORT"
SPID[forward]=$PID_forward; TARGETS+=(forward)

wait_port "$FWD_PORT"
for t in "${TARGETS[@]}" intact_twin; do wait_port "${PORT[$t]}"; done

# Which targets each scenario measures: in_scenario SCENARIO TARGET.
in_scenario() {
  case "$1:$2" in
    *:direct|*:intact|*:intact_rec|*:haproxy|*:nginx) return 0 ;;
    h1_1k_c50:*) return 0 ;;                     # everyone, incl. two loops and forward
    h1_1k_c1:mitmproxy|h1_1m_c50:mitmproxy) return 0 ;;
    h2_1k_c10:forward) return 0 ;;
    *) return 1 ;;
  esac
}

# --- correctness first ------------------------------------------------------------------
# check TARGET FILE HTTPFLAG EXPECTED-VERSION [curl args...]
check() {
  local t=$1 f=$2 flag=$3 want=$4; shift 4
  local out got sha
  out=$(curl -sS --cacert "$CA/ca-cert.pem" "$flag" -o "$WORK/body" -w '%{http_code} %{http_version}' "$@" \
    "https://localhost:${PORT[$t]}/$f") || die "$t: curl failed for /$f"
  sha=$(sha256sum "$WORK/body" | cut -d' ' -f1)
  local expect; eval "expect=\$SHA_$f"
  [[ $out == "200 $want" ]] || die "$t /$f $flag: got '$out', want '200 $want'"
  [[ $sha == "$expect" ]] || die "$t /$f $flag: body SHA-256 $sha differs from the file's $expect"
  ANSWERED[$t]=$(( ${ANSWERED[$t]:-0} + 1 ))
}
for t in "${TARGETS[@]}"; do
  for f in 1k 1m; do
    check "$t" "$f" --http1.1 1.1
    if [[ $t == mitmproxy ]]; then check "$t" "$f" --http2 1.1; else check "$t" "$f" --http2 2; fi
  done
done
log "correctness: status 200, SHA-256 and ALPN (h2, http/1.1; mitmproxy http/1.1) right on ${TARGETS[*]}"

# --- load -------------------------------------------------------------------------------
to_us() { # "123.45us" / "1.2ms" / "1.01s" -> microseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1000000; else print n }'
}

# Runs one load and appends "scenario target rep requests seconds cpu_s p50_us peak_rss_kib".
measure() { # SCENARIO TARGET REP PID CMD...
  local sc=$1 t=$2 rep=$3 pid=$4; shift 4
  local c0 c1 out reqs secs p50 peak=0 r sampler
  rm -f "$WORK/peak"
  ( peak=0; while kill -0 "$pid" 2>/dev/null; do
      # Written whole (rename): a kill during the write must not leave an empty file.
      r=$(rss_kib "$pid" 2>/dev/null || echo 0); ((r > peak)) && peak=$r
      echo "$peak" >"$WORK/peak.new" && mv -f "$WORK/peak.new" "$WORK/peak"; sleep 0.05
    done ) &
  sampler=$!
  c0=$(cpu_ticks "$pid")
  out=$("$@" 2>&1) || { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; die "$sc $t: load failed: $out"; }
  c1=$(cpu_ticks "$pid" 2>/dev/null) || {
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
    log "$sc $t: the server (PID $pid) exited during the run: $(tail -3 "$WORK/$t.out" | tr '\n' ' ')"
    return 0
  }
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
  peak=$(cat "$WORK/peak" 2>/dev/null); r=$(rss_kib "$pid" 2>/dev/null || echo 0)
  peak=${peak:-0}; ((r > peak)) && peak=$r
  case "$1" in
    wrk)
      reqs=$(awk '/requests in/ {print $1}' <<<"$out")
      secs=$(awk '/requests in/ {sub(/s,$/, "", $4); print $4}' <<<"$out")
      p50=$(to_us "$(awk '$1 == "50%" {print $2}' <<<"$out")")
      grep -q 'Non-2xx\|Socket errors' <<<"$out" && log "$sc $t: $(grep 'Non-2xx\|Socket errors' <<<"$out")" ;;
    h2load)
      reqs=$(awk '/^requests:/ {print $8}' <<<"$out")
      secs=$(awk '/^finished in/ {sub(/s,$/, "", $3); print $3}' <<<"$out")
      p50=0 ;;
    python3)
      reqs=$(awk '/^done/ {print $2}' <<<"$out")
      secs=$(awk '/^done/ {print $3}' <<<"$out")
      p50=0 ;;
  esac
  ANSWERED[$t]=$(( ${ANSWERED[$t]:-0} + ${reqs:-0} ))
  echo -e "$sc\t$t\t$rep\t${reqs:-0}\t${secs:-0}\t$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" 'BEGIN{print (b-a)/hz}')\t${p50:-0}\t$peak" >>"$RESULTS"
}

# wrk sends the URL host as SNI, and an IP there is forbidden (RFC 6066): name it localhost
# (only its 127.0.0.1 address listens).
url() { echo "https://localhost:${PORT[$1]}/$2"; }
SCENARIOS=(${BENCH_SCENARIOS:-h1_1k_c1 h1_1k_c50 h1_1m_c50 h2_1k_c10 hs_1k_c10 hs_warm hs_cold})
[[ $MODE == full && -z ${BENCH_SCENARIOS:-} ]] && SCENARIOS+=(h1_1m_c10)
run_scenario() { # SCENARIO TARGET REP
  local sc=$1 t=$2 rep=$3 pid=${SPID[$2]}
  in_scenario "$sc" "$t" || return 0
  if ! kill -0 "$pid" 2>/dev/null; then
    log "$sc $t: the server (PID $pid) is no longer running; skipped (see its output above)"
    return 0
  fi
  # mitmproxy sets up each TLS connection and its upstream one in Python: at 50 connections
  # on a loaded machine a 2 s run ended before its first answer. Its loads run MITM_DUR
  # seconds (at least 10), so the time to open the connections is a small part of the run.
  local dur=$DUR
  [[ $t == mitmproxy ]] && dur=$MITM_DUR
  case "$sc" in
    h1_1k_c1)  measure "$sc" "$t" "$rep" "$pid" wrk --timeout 10s -t1 -c1 -d"${dur}s" --latency "$(url "$t" 1k)" ;;
    h1_1k_c50) measure "$sc" "$t" "$rep" "$pid" wrk --timeout 10s -t2 -c50 -d"${dur}s" --latency "$(url "$t" 1k)" ;;
    h1_1m_c10) measure "$sc" "$t" "$rep" "$pid" wrk --timeout 10s -t2 -c10 -d"${dur}s" --latency "$(url "$t" 1m)" ;;
    h1_1m_c50) measure "$sc" "$t" "$rep" "$pid" wrk --timeout 10s -t2 -c50 -d"${dur}s" --latency "$(url "$t" 1m)" ;;
    h2_1k_c10) measure "$sc" "$t" "$rep" "$pid" h2load -c10 -m10 -t1 -D "$DUR" "$(url "$t" 1k)" ;;
    # A full TLS handshake per request (no tickets anywhere): wrk reconnects after each answer.
    hs_1k_c10) measure "$sc" "$t" "$rep" "$pid" wrk --timeout 10s -t2 -c10 -d"${DUR}s" --latency -H 'Connection: close' "$(url "$t" 1k)" ;;
    # The same one connection at a time, naming localhost (leaf cache warm) or a new name each time (cold).
    hs_warm|hs_cold) measure "$sc" "$t" "$rep" "$pid" python3 "$ROOT/Benchmarks/handshakes.py" 127.0.0.1 \
      "${PORT[$t]}" "$HANDSHAKES" "$CA/ca-cert.pem" "${sc#hs_}" ;;
  esac
}

log "mode $MODE: ${#SCENARIOS[@]} scenarios x ${#TARGETS[@]} targets x $REPS repetitions of ${DUR}s (mitmproxy ${MITM_DUR}s), A B A B"
for sc in "${SCENARIOS[@]}"; do
  for rep in $(seq "$REPS"); do
    for t in "${TARGETS[@]}"; do run_scenario "$sc" "$t" "$rep"; done
  done
done

# --- recording on ÷ off, paired ----------------------------------------------------------
# The A B A B runs above load one server after the other; on this kind of shared VM a
# server's requests per CPU-second moves by up to a third between two runs, more than
# the cost of recording. Here Intact with and without --record are loaded at the same
# time by the same client command, so both see the same noise; each pair gives one ratio
# of their requests per server CPU-second (the CPU of all the process's threads, the
# recording writer's included). Two servers loaded at once still differ by chance (the
# one the scheduler serves less often gathers more requests per wake-up, so it spends
# less CPU on each), so each on/off pair is followed by a control pair that loads
# `intact` against its twin the same way: the control's spread is the measure's noise.
# The figure is pooled (all of one side's requests ÷ all of its CPU ticks, over every
# pair), which weighs each pair by its length instead of letting one odd pair decide;
# the pairs' median is shown beside it. The client that starts first alternates.
declare -A PAIRS=() POOLED=()
pair_load() { # SCENARIO TARGET -> the client's output
  case "$1" in
    h1_1k_c50) wrk --timeout 10s -t1 -c50 -d"${DUR}s" "$(url "$2" 1k)" ;;
    h2_1k_c10) h2load -c10 -m10 -t1 -D "$DUR" "$(url "$2" 1k)" ;;
  esac
}
pair_requests() { # SCENARIO FILE
  case "$1" in
    h1_1k_c50) awk '/requests in/ {print $1}' "$2" ;;
    h2_1k_c10) awk '/^requests:/ {print $8}' "$2" ;;
  esac
}
# One pair: SCENARIO BASE OTHER REP. Loads both at once; appends the ratio
# OTHER ÷ BASE to PAIRS[SCENARIO:OTHER] and the four counts to POOLED[SCENARIO:OTHER].
run_pair() {
  local sc=$1 base=$2 other=$3 rep=$4 pa pb
  local pid_base=${SPID[$base]} pid_other=${SPID[$other]}
  kill -0 "$pid_base" 2>/dev/null && kill -0 "$pid_other" 2>/dev/null || return 0
  local a0 b0 a1 b1 ra rb r
  a0=$(cpu_ticks "$pid_base"); b0=$(cpu_ticks "$pid_other")
  if ((rep % 2)); then
    pair_load "$sc" "$base" >"$WORK/pair-base" 2>&1 & pa=$!
    pair_load "$sc" "$other" >"$WORK/pair-other" 2>&1 & pb=$!
  else
    pair_load "$sc" "$other" >"$WORK/pair-other" 2>&1 & pb=$!
    pair_load "$sc" "$base" >"$WORK/pair-base" 2>&1 & pa=$!
  fi
  PIDS+=("$pa" "$pb")
  wait "$pa" "$pb" || true
  a1=$(cpu_ticks "$pid_base"); b1=$(cpu_ticks "$pid_other")
  ra=$(pair_requests "$sc" "$WORK/pair-base"); rb=$(pair_requests "$sc" "$WORK/pair-other")
  [[ $other == intact_rec ]] && ANSWERED[intact_rec]=$(( ${ANSWERED[intact_rec]:-0} + ${rb:-0} ))
  r=$(awk -v ra="${ra:-0}" -v rb="${rb:-0}" -v a="$((a1 - a0))" -v b="$((b1 - b0))" \
    'BEGIN { if (ra > 0 && rb > 0 && a > 0 && b > 0) printf "%.2f", (rb / b) / (ra / a); else print "n/a" }')
  PAIRS[$sc:$other]="${PAIRS[$sc:$other]:+${PAIRS[$sc:$other]} }$r"
  [[ $r != n/a ]] && POOLED[$sc:$other]="${POOLED[$sc:$other]:-} $ra $((a1 - a0)) $rb $((b1 - b0))"
  log "paired $sc rep $rep: $base $ra requests in $((a1 - a0)) ticks, $other $rb in $((b1 - b0)): $other ÷ $base $r"
}
for sc in h1_1k_c50 h2_1k_c10; do
  [[ " ${SCENARIOS[*]} " == *" $sc "* ]] || continue
  for rep in $(seq "$PAIR_REPS"); do
    run_pair "$sc" intact intact_rec "$rep"
    run_pair "$sc" intact intact_twin "$rep"
  done
done
# The pairs' median (the middle one; the lower middle of an even count): KEY.
pair_median() { tr ' ' '\n' <<<"${PAIRS[$1]:-}" | grep -v '^n/a$' | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "n/a" }'; }
# The pooled ratio: the other side's requests per tick over all pairs ÷ the base's: KEY.
pair_pooled() { awk '{ for (i = 1; i + 3 <= NF; i += 4) { ra += $i; a += $(i + 1); rb += $(i + 2); b += $(i + 3) } }
  END { if (ra > 0 && a > 0 && rb > 0 && b > 0) printf "%.2f", (rb / b) / (ra / a); else print "n/a" }' <<<"${POOLED[$1]:-}"; }

# Idle keep-alive connections: RSS growth of the server per connection held, as a table
# cell with its unit. A server whose RSS fell meanwhile (mitmproxy's Python gives memory
# back after the loads) shows that instead of a negative size.
declare -A IDLE_KIB=()
IDLE_TARGETS=(direct intact intact_rec haproxy nginx mitmproxy)
for t in "${IDLE_TARGETS[@]}"; do
  pid=${SPID[$t]}
  ((IDLE > 0)) || { IDLE_KIB[$t]="(skipped)"; continue; }
  kill -0 "$pid" 2>/dev/null || { IDLE_KIB[$t]="(exited)"; continue; }
  before=$(rss_kib "$pid")
  mkfifo "$WORK/idle-in"
  python3 "$ROOT/Benchmarks/idle.py" 127.0.0.1 "${PORT[$t]}" "$IDLE" "$CA/ca-cert.pem" <"$WORK/idle-in" >"$WORK/idle-out" 2>&1 &
  idle_pid=$!; PIDS+=("$idle_pid")
  exec 4>"$WORK/idle-in"
  for _ in $(seq 600); do grep -q ready "$WORK/idle-out" && break; kill -0 "$idle_pid" 2>/dev/null || break; sleep 0.1; done
  grep -q ready "$WORK/idle-out" || { exec 4>&-; die "idle connections to $t failed: $(cat "$WORK/idle-out")"; }
  ANSWERED[$t]=$(( ${ANSWERED[$t]:-0} + IDLE ))  # one GET on each
  sleep 0.5
  after=$(rss_kib "$pid")
  IDLE_KIB[$t]=$(awk -v a="$after" -v b="$before" -v n="$IDLE" \
    'BEGIN { if (a >= b) printf "%.1f KiB", (a - b) / n; else printf "n/a (RSS fell by %d KiB meanwhile)", b - a }')
  exec 4>&-
  wait "$idle_pid" 2>/dev/null || true
  rm -f "$WORK/idle-in"
done

# --- recordings: nothing answered goes unrecorded ----------------------------------------
# Each recording Intact target gets SIGINT (it drains, flushes its recording and exits);
# then its exchanges answered in full (a complete downstream response; connection records
# and cut exchanges left out) are counted and compared with what the clients saw answered.
# More records than answers is normal (wrk and h2load stop with requests in flight that the
# proxy answered anyway); fewer is a loss.
declare -A REC_FILE=([intact_rec]=$WORK/recording.jsonl [intact_rec_l2]=$WORK/recording-l2.jsonl
                     [forward]=$WORK/recording-fwd.jsonl)
declare -A RECORDED=() RECORD_VERDICT=()
count_recorded() { # FILE -> exchanges with a complete downstream response
  python3 - "$1" <<'PY'
import json, sys
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        try:
            r = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if r.get("type") != "exchange" or "connection" in r:
            continue
        down = next((l for l in r.get("legs", []) if l.get("role") == "downstream"), {})
        if (down.get("response") or {}).get("complete"):
            n += 1
print(n)
PY
}
for t in intact_rec intact_rec_l2 forward; do
  pid=${SPID[$t]}
  if kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid"
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      RECORD_VERDICT[$t]="still running 30 s after SIGINT"; log "$t: ${RECORD_VERDICT[$t]}"; continue
    fi
    status=0; wait "$pid" 2>/dev/null || status=$?
    ((status == 0)) || log "$t exited with status $status after SIGINT"
  fi
  [[ -f ${REC_FILE[$t]} ]] || { RECORD_VERDICT[$t]="no recording"; log "$t: no recording"; continue; }
  recorded=$(count_recorded "${REC_FILE[$t]}"); answered=${ANSWERED[$t]:-0}
  RECORDED[$t]=$recorded
  if ((recorded < answered)); then
    RECORD_VERDICT[$t]="**LOSS: $((answered - recorded)) answered, not recorded**"
  else
    RECORD_VERDICT[$t]="none lost"
  fi
  log "$t: recorded $recorded of $answered answered (${RECORD_VERDICT[$t]//\*/})"
done

# --- callgrind ----------------------------------------------------------------------------
# Instructions and mallocs per request, Intact beside HAProxy, each under callgrind
# (Benchmarks/callgrind.sh: its own origin and proxies, deterministic). Its rows join the
# ratio table; its own table follows it.
CALLGRIND_ROWS_FILE=$WORK/callgrind-rows.md
if [[ ${BENCH_CALLGRIND:-1} != 0 ]]; then
  log "callgrind: instructions and mallocs per request (Benchmarks/callgrind.sh, a few minutes)"
  INTACT=$INTACT CALLGRIND_ROWS=$CALLGRIND_ROWS_FILE "$ROOT/Benchmarks/callgrind.sh" >"$WORK/callgrind.md" \
    || log "Benchmarks/callgrind.sh failed: its rows read n/a"
fi

# --- report -----------------------------------------------------------------------------
# Per scenario and target: mean req/s, total requests per server CPU-second, median p50, peak RSS,
# and the spread of req per CPU-s between repetitions ((max - min) / max, in %): the noise.
summary=$WORK/summary.tsv
awk -F'\t' '
  { k = $1 "\t" $2; reqs[k] += $4; secs[k] += $5; cpu[k] += $6; n[k]++; p[k, n[k]] = $7; if ($8 > pk[k]) pk[k] = $8
    e = ($6 > 0 ? $4 / $6 : 0); if (!(k in lo) || e < lo[k]) lo[k] = e; if (e > hi[k]) hi[k] = e }
  END { for (k in n) {
          m = n[k]; for (i = 1; i <= m; i++) a[i] = p[k, i]
          for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
          med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
          printf "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\n", k, (secs[k] > 0 ? reqs[k] / secs[k] : 0), (cpu[k] > 0 ? reqs[k] / cpu[k] : 0), med, pk[k] / 1024, (hi[k] > 0 ? 100 * (hi[k] - lo[k]) / hi[k] : 0) } }
' "$RESULTS" | sort >"$summary"
get() { awk -F'\t' -v s="$1" -v t="$2" -v c="$3" '$1 == s && $2 == t {print $c}' "$summary"; }

echo
echo "## Results ($MODE mode: ${DUR}s x $REPS repetitions, A B A B; $(nproc) cores; $(date -u +%Y-%m-%d))"
echo
echo "Server CPU is that of the process under test only (for proxies, not the origin)."
echo "intact: Intact reverse, one loop; intact_rec: the same with --record; intact_rec_l2: --record on"
echo "two loops; forward: Intact forward mode with --record, one loop, reached through a CONNECT"
echo "tunnel (socat). hs_*: a new TLS connection per request (hs_cold: a new server name each time)."
echo "mitmproxy's loads run ${MITM_DUR}s each, the others' ${DUR}s (its connection set-up would fill a short run)."
echo
echo "| scenario | target | req/s | req per server CPU-s | spread between reps | p50 latency | peak RSS |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
while IFS=$'\t' read -r sc t rps rpc p50 pk spread; do
  lat="—"; [[ $p50 != 0 ]] && lat="${p50} µs"
  echo "| $sc | $t | $rps | $rpc | ${spread}% | $lat | ${pk} MiB |"
done <"$summary"
echo
echo "| target | RSS per idle keep-alive TLS connection ($IDLE held) |"
echo "| --- | ---: |"
for t in "${IDLE_TARGETS[@]}"; do echo "| $t | ${IDLE_KIB[$t]} |"; done
echo
echo "Recordings after SIGINT: exchanges recorded with a complete answer, against the requests"
echo "the clients counted as answered (checks, loads, idle connections)."
echo
echo "| target | recorded | answered | |"
echo "| --- | ---: | ---: | --- |"
for t in intact_rec intact_rec_l2 forward; do
  echo "| $t | ${RECORDED[$t]:-—} | ${ANSWERED[$t]:-0} | ${RECORD_VERDICT[$t]:-not measured} |"
done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
d=$(get h1_1k_c1 direct 5)
added() { local v; v=$(get h1_1k_c1 "$1" 5); [[ -n $v && -n $d ]] && echo "+$((v - d)) µs" || echo "n/a"; }
# One row: LABEL ON-VALUE OFF-VALUE TARGET.
row() { echo "| $1 | **$2** | $3 | $4 |"; }
echo "## Intact against its peers ($(date -u +%Y-%m-%d), $MODE mode, one run, A B A B)"
echo
echo "Requests per server CPU-second unless stated. Recording on (--record, as users run it) is"
echo "the headline; recording off beside it; one event loop unless stated."
echo
echo "| ratio | recording on | recording off | target |"
echo "| --- | ---: | ---: | ---: |"
for sc in h1_1k_c50:"h1 1 KiB, 50 conns":"≥ 0.5 (issue 30)" h2_1k_c10:"h2 1 KiB, 10 conns × 10 streams":"≥ 0.5 (issue 30)" \
          h1_1m_c50:"h1 1 MiB, 50 conns":"≥ 0.8 (issue 30)" hs_1k_c10:"full handshake per request, 10 conns":"—"; do
  IFS=: read -r key label goal <<<"$sc"
  row "Intact ÷ HAProxy, $label" "$(ratio "$(get "$key" intact_rec 4)" "$(get "$key" haproxy 4)")" \
    "$(ratio "$(get "$key" intact 4)" "$(get "$key" haproxy 4)")" "$goal"
done
row "Intact ÷ mitmproxy, h1 1 KiB, 50 conns (mitmproxy over ${MITM_DUR}s)" "$(ratio "$(get h1_1k_c50 intact_rec 4)" "$(get h1_1k_c50 mitmproxy 4)")" \
  "$(ratio "$(get h1_1k_c50 intact 4)" "$(get h1_1k_c50 mitmproxy 4)")" "≥ 20 (issue 30)"
row "Intact ÷ mitmproxy, h1 1 KiB, 1 conn (mitmproxy over ${MITM_DUR}s)" "$(ratio "$(get h1_1k_c1 intact_rec 4)" "$(get h1_1k_c1 mitmproxy 4)")" \
  "$(ratio "$(get h1_1k_c1 intact 4)" "$(get h1_1k_c1 mitmproxy 4)")" "≥ 20 (issue 30)"
row "Intact ÷ mitmproxy, h1 1 MiB, 50 conns (mitmproxy over ${MITM_DUR}s)" "$(ratio "$(get h1_1m_c50 intact_rec 4)" "$(get h1_1m_c50 mitmproxy 4)")" \
  "$(ratio "$(get h1_1m_c50 intact 4)" "$(get h1_1m_c50 mitmproxy 4)")" "—"
row "Intact ÷ nginx proxy, h1 1 KiB, 50 conns" "$(ratio "$(get h1_1k_c50 intact_rec 4)" "$(get h1_1k_c50 nginx 4)")" \
  "$(ratio "$(get h1_1k_c50 intact 4)" "$(get h1_1k_c50 nginx 4)")" "—"
row "Intact ÷ direct, req/s, h1 1 KiB, 50 conns" "$(ratio "$(get h1_1k_c50 intact_rec 3)" "$(get h1_1k_c50 direct 3)")" \
  "$(ratio "$(get h1_1k_c50 intact 3)" "$(get h1_1k_c50 direct 3)")" "—"
row "added p50 latency, 1 conn (HAProxy $(added haproxy), nginx $(added nginx), mitmproxy $(added mitmproxy))" \
  "$(added intact_rec)" "$(added intact)" "≤ +120 µs (issue 30)"
row "RSS per idle keep-alive TLS connection (HAProxy ${IDLE_KIB[haproxy]})" "${IDLE_KIB[intact_rec]}" \
  "${IDLE_KIB[intact]}" "≤ 16 KiB"
row "peak RSS, 50 concurrent 1 MiB responses (HAProxy $(get h1_1m_c50 haproxy 6) MiB)" \
  "$(get h1_1m_c50 intact_rec 6) MiB" "$(get h1_1m_c50 intact 6) MiB" "—"
# The A B A B figure compares runs made one after the other; the spread between each
# side's repetitions is printed with it, as the noise it carries.
spreads() { echo "repetitions spread $(get "$1" intact_rec 7) % on, $(get "$1" intact 7) % off"; }
row "recording on ÷ off, A B A B, h1 1 KiB, 50 conns ($(spreads h1_1k_c50))" "$(ratio "$(get h1_1k_c50 intact_rec 4)" "$(get h1_1k_c50 intact 4)")" "" "≥ 0.85 (issue 13)"
row "recording on ÷ off, A B A B, h2 1 KiB, 10 conns × 10 streams ($(spreads h2_1k_c10))" "$(ratio "$(get h2_1k_c10 intact_rec 4)" "$(get h2_1k_c10 intact 4)")" "" "≥ 0.85 (issue 13)"
for sc in h1_1k_c50:"h1 1 KiB, 50 conns" h2_1k_c10:"h2 1 KiB, 10 × 10"; do
  IFS=: read -r key label <<<"$sc"
  row "recording on ÷ off, paired (both loaded at once), $label: pooled over pairs ${PAIRS[$key:intact_rec]:-n/a} (median $(pair_median "$key:intact_rec"))" \
    "$(pair_pooled "$key:intact_rec")" "" "≥ 0.85 (issue 13)"
  row "control: off ÷ its twin, paired the same way, $label: pooled over pairs ${PAIRS[$key:intact_twin]:-n/a} (median $(pair_median "$key:intact_twin"))" \
    "—" "$(pair_pooled "$key:intact_twin")" "1 ± noise"
done
row "recording on ÷ off, h1 1 MiB, 50 conns" "$(ratio "$(get h1_1m_c50 intact_rec 4)" "$(get h1_1m_c50 intact 4)")" "" "—"
# Cores a target kept busy in a scenario (requests per second ÷ requests per CPU-second):
# SCENARIO TARGET. Shows whether a second loop had a core to run on.
cores() { ratio "$(get "$1" "$2" 3)" "$(get "$1" "$2" 4)"; }
row "--loops 2 ÷ --loops 1, req/s, h1 1 KiB, 50 conns (Intact kept $(cores h1_1k_c50 intact_rec) cores busy with one loop, $(cores h1_1k_c50 intact_rec_l2) with two, of $(nproc) shared with wrk and the origin)" \
  "$(ratio "$(get h1_1k_c50 intact_rec_l2 3)" "$(get h1_1k_c50 intact_rec 3)")" "" "≥ 1.7 (when wrk is not the limit)"
row "leaf cache cold ÷ warm, full handshakes, one at a time" "$(ratio "$(get hs_cold intact_rec 4)" "$(get hs_warm intact_rec 4)")" \
  "$(ratio "$(get hs_cold intact 4)" "$(get hs_warm intact 4)")" "—"
row "forward ÷ reverse (CONNECT tunnel), h1 1 KiB, 50 conns" "$(ratio "$(get h1_1k_c50 forward 4)" "$(get h1_1k_c50 intact_rec 4)")" \
  "" "—"
row "forward ÷ reverse (CONNECT tunnel), h2 1 KiB" "$(ratio "$(get h2_1k_c10 forward 4)" "$(get h2_1k_c10 intact_rec 4)")" "" "—"
if [[ -s $CALLGRIND_ROWS_FILE ]]; then
  cat "$CALLGRIND_ROWS_FILE"
else
  row "callgrind instructions per h1 1 KiB request, 1 conn ($([[ ${BENCH_CALLGRIND:-1} == 0 ]] && echo "BENCH_CALLGRIND=0" || echo "callgrind.sh failed"))" "n/a" "n/a" "≤ 250k (issue 30)"
fi
if [[ -s $WORK/callgrind.md ]]; then cat "$WORK/callgrind.md"; fi
