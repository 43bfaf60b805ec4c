#!/usr/bin/env bash
# Benchmark harness (Docs: /work/shared/design/PERFORMANCE.md, Benchmarks/README.md).
# An nginx origin serves 1 KiB and 1 MiB over TLS 1.3 on 127.0.0.1; each target
# (nginx direct, Intact reverse with and without --record, HAProxy and nginx
# re-encrypting, mitmdump if installed, Intact forward through hey -x) is checked for
# correctness first, then loaded A B A B. Server CPU comes from /proc/PID/stat.
# Prints figures; asserts nothing about timing. BENCH_MODE=quick (default) or full.
# Every process is started and stopped by its PID; the trap stops them all on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
INTACT=${INTACT:-$ROOT/.build/release/intact}
MODE=${BENCH_MODE:-quick}
case "$MODE" in
  quick) DUR=2; REPS=2; IDLE=1000 ;;
  full)  DUR=10; REPS=3; IDLE=1000 ;;
  *) echo "BENCH_MODE must be quick or full" >&2; exit 2 ;;
esac
HZ=$(getconf CLK_TCK)
WORK=$(mktemp -d /tmp/intact-bench.XXXXXX)
RESULTS=$WORK/results.tsv
declare -a PIDS=()

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

for tool in wrk h2load nginx haproxy openssl curl python3; do
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
CA=$WORK/ca
"$INTACT" ca init --dir "$CA" >/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out "$WORK/origin-key.pem" 2>/dev/null
openssl req -new -key "$WORK/origin-key.pem" -subj "/CN=localhost" -out "$WORK/origin.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$WORK/ext.cnf"
openssl x509 -req -in "$WORK/origin.csr" -CA "$CA/ca-cert.pem" -CAkey "$CA/ca-key.pem" \
  -CAcreateserial -days 2 -sha256 -extfile "$WORK/ext.cnf" -out "$WORK/origin-cert.pem" 2>/dev/null
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

P=$(free_port); PORT[intact]=$P
start intact "$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" \
  --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet
SPID[intact]=$PID_intact; TARGETS+=(intact)

P=$(free_port); PORT[intact_rec]=$P
start intact_rec "$INTACT" proxy --listen "127.0.0.1:$P" --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" \
  --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet --record "$WORK/recording.jsonl"
SPID[intact_rec]=$PID_intact_rec; TARGETS+=(intact_rec)

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
  bind 127.0.0.1:$P ssl crt $WORK/origin.pem alpn h2,http/1.1
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

if command -v mitmdump >/dev/null; then
  P=$(free_port); PORT[mitmproxy]=$P
  start mitmproxy mitmdump -q --mode "reverse:https://127.0.0.1:$ORIGIN_PORT" --listen-host 127.0.0.1 \
    --listen-port "$P" --set "ssl_verify_upstream_trusted_ca=$CA/ca-cert.pem" --set confdir="$WORK/mitm"
  SPID[mitmproxy]=$PID_mitmproxy; TARGETS+=(mitmproxy)
else
  log "mitmdump not installed: mitmproxy is not measured"
fi

FWD_PORT=$(free_port)
start forward "$INTACT" proxy --listen "127.0.0.1:$FWD_PORT" --ca-dir "$CA" --upstream-ca "$CA/ca-cert.pem" --quiet

for t in "${TARGETS[@]}"; do wait_port "${PORT[$t]}"; done
wait_port "$FWD_PORT"

# --- correctness first ------------------------------------------------------------------
# check TARGET FILE HTTPFLAG EXPECTED-VERSION [curl args...]
check() {
  local t=$1 f=$2 flag=$3 want=$4; shift 4
  local out got sha
  out=$(curl -sS --cacert "$CA/ca-cert.pem" "$flag" -o "$WORK/body" -w '%{http_code} %{http_version}' "$@" \
    "https://127.0.0.1:${PORT[$t]:-$ORIGIN_PORT}/$f") || die "$t: curl failed for /$f"
  sha=$(sha256sum "$WORK/body" | cut -d' ' -f1)
  local expect; eval "expect=\$SHA_$f"
  [[ $out == "200 $want" ]] || die "$t /$f $flag: got '$out', want '200 $want'"
  [[ $sha == "$expect" ]] || die "$t /$f $flag: body SHA-256 $sha differs from the file's $expect"
}
for t in "${TARGETS[@]}"; do
  for f in 1k 1m; do
    check "$t" "$f" --http1.1 1.1
    check "$t" "$f" --http2 2
  done
done
for f in 1k 1m; do check forward "$f" --http1.1 1.1 -x "http://127.0.0.1:$FWD_PORT"; done
log "correctness: status 200, SHA-256 and ALPN (h2, http/1.1) right on ${TARGETS[*]} and forward"

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
      r=$(rss_kib "$pid" 2>/dev/null || echo 0); ((r > peak)) && peak=$r; echo "$peak" >"$WORK/peak"; sleep 0.05
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
  peak=$(cat "$WORK/peak" 2>/dev/null || echo 0)
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
    hey)
      reqs=$(awk '/\[200\]/ {print $2}' <<<"$out")
      secs=$(awk '/Total:/ {print $2}' <<<"$out")
      p50=$(awk '$1 == "50%" {print $3 * 1000000}' <<<"$out") ;;
  esac
  echo -e "$sc\t$t\t$rep\t${reqs:-0}\t${secs:-0}\t$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" 'BEGIN{print (b-a)/hz}')\t${p50:-0}\t$peak" >>"$RESULTS"
}

# wrk sends the URL host as SNI, and an IP there is forbidden (RFC 6066): name it localhost
# (only its 127.0.0.1 address listens).
url() { echo "https://localhost:${PORT[$1]}/$2"; }
SCENARIOS=(${BENCH_SCENARIOS:-h1_1k_c1 h1_1k_c50 h1_1m_c50 h2_1k_c10})
[[ $MODE == full ]] && SCENARIOS+=(h1_1m_c10)
run_scenario() { # SCENARIO TARGET REP
  local sc=$1 t=$2 rep=$3 pid=${SPID[$2]}
  if ! kill -0 "$pid" 2>/dev/null; then
    log "$sc $t: the server (PID $pid) is no longer running; skipped (see its output above)"
    return 0
  fi
  case "$sc" in
    h1_1k_c1)  measure "$sc" "$t" "$rep" "$pid" wrk -t1 -c1 -d"${DUR}s" --latency "$(url "$t" 1k)" ;;
    h1_1k_c50) measure "$sc" "$t" "$rep" "$pid" wrk -t2 -c50 -d"${DUR}s" --latency "$(url "$t" 1k)" ;;
    h1_1m_c10) measure "$sc" "$t" "$rep" "$pid" wrk -t2 -c10 -d"${DUR}s" --latency "$(url "$t" 1m)" ;;
    h1_1m_c50) measure "$sc" "$t" "$rep" "$pid" wrk -t2 -c50 -d"${DUR}s" --latency "$(url "$t" 1m)" ;;
    h2_1k_c10) measure "$sc" "$t" "$rep" "$pid" h2load -c10 -m10 -t1 -D "$DUR" "$(url "$t" 1k)" ;;
  esac
}

log "mode $MODE: ${#SCENARIOS[@]} scenarios x ${#TARGETS[@]} targets x $REPS repetitions of ${DUR}s, A B A B"
for sc in "${SCENARIOS[@]}"; do
  for rep in $(seq "$REPS"); do
    for t in "${TARGETS[@]}"; do run_scenario "$sc" "$t" "$rep"; done
    if command -v hey >/dev/null && [[ $sc == h1_1k_c50 ]]; then
      measure fwd_1k_c50 forward "$rep" "$PID_forward" hey -z "${DUR}s" -c 50 -x "http://127.0.0.1:$FWD_PORT" \
        "https://localhost:$ORIGIN_PORT/1k"
    fi
  done
done

# Idle keep-alive connections: RSS growth of the server per connection held.
declare -A IDLE_KIB=()
for t in "${TARGETS[@]}"; do
  pid=${SPID[$t]}
  kill -0 "$pid" 2>/dev/null || { IDLE_KIB[$t]="(exited)"; continue; }
  before=$(rss_kib "$pid")
  mkfifo "$WORK/idle-in"
  python3 "$ROOT/Benchmarks/idle.py" 127.0.0.1 "${PORT[$t]}" "$IDLE" "$CA/ca-cert.pem" <"$WORK/idle-in" >"$WORK/idle-out" 2>&1 &
  idle_pid=$!; PIDS+=("$idle_pid")
  exec 4>"$WORK/idle-in"
  for _ in $(seq 600); do grep -q ready "$WORK/idle-out" && break; kill -0 "$idle_pid" 2>/dev/null || break; sleep 0.1; done
  grep -q ready "$WORK/idle-out" || { exec 4>&-; die "idle connections to $t failed: $(cat "$WORK/idle-out")"; }
  sleep 0.5
  after=$(rss_kib "$pid")
  IDLE_KIB[$t]=$(awk -v a="$after" -v b="$before" -v n="$IDLE" 'BEGIN{printf "%.1f", (a-b)/n}')
  exec 4>&-
  wait "$idle_pid" 2>/dev/null || true
  rm -f "$WORK/idle-in"
done

# --- report -----------------------------------------------------------------------------
# Per scenario and target: mean req/s, total requests per server CPU-second, median p50, peak RSS.
summary=$WORK/summary.tsv
awk -F'\t' '
  { k = $1 "\t" $2; reqs[k] += $4; secs[k] += $5; cpu[k] += $6; n[k]++; p[k, n[k]] = $7; if ($8 > pk[k]) pk[k] = $8 }
  END { for (k in n) {
          m = n[k]; for (i = 1; i <= m; i++) a[i] = p[k, i]
          for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
          med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
          printf "%s\t%.0f\t%.0f\t%.0f\t%.0f\n", k, reqs[k] / secs[k], (cpu[k] > 0 ? reqs[k] / cpu[k] : 0), med, pk[k] / 1024 } }
' "$RESULTS" | sort >"$summary"
get() { awk -F'\t' -v s="$1" -v t="$2" -v c="$3" '$1 == s && $2 == t {print $c}' "$summary"; }

echo
echo "## Results ($MODE mode: ${DUR}s x $REPS repetitions, A B A B; $(nproc) cores; $(date -u +%Y-%m-%d))"
echo
echo "Server CPU is that of the process under test only (for proxies, not the origin)."
echo "intact_rec is Intact with --record; forward is Intact forward mode driven by hey -x."
echo
echo "| scenario | target | req/s | req per server CPU-s | p50 latency | peak RSS |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
while IFS=$'\t' read -r sc t rps rpc p50 pk; do
  lat="—"; [[ $p50 != 0 ]] && lat="${p50} µs"
  echo "| $sc | $t | $rps | $rpc | $lat | ${pk} MiB |"
done <"$summary"
echo
echo "| target | RSS per idle keep-alive TLS connection ($IDLE held) |"
echo "| --- | ---: |"
for t in "${TARGETS[@]}"; do echo "| $t | ${IDLE_KIB[$t]} KiB |"; done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "Ratios measured in this run:"
echo
echo "| ratio | value |"
echo "| --- | ---: |"
echo "| Intact ÷ HAProxy, req per CPU-s, h1 1 KiB 50 conns | $(ratio "$(get h1_1k_c50 intact 4)" "$(get h1_1k_c50 haproxy 4)") |"
echo "| Intact ÷ nginx proxy, req per CPU-s, h1 1 KiB 50 conns | $(ratio "$(get h1_1k_c50 intact 4)" "$(get h1_1k_c50 nginx 4)") |"
echo "| Intact ÷ HAProxy, req per CPU-s, h2 1 KiB | $(ratio "$(get h2_1k_c10 intact 4)" "$(get h2_1k_c10 haproxy 4)") |"
echo "| Intact ÷ HAProxy, req per CPU-s, h1 1 MiB 50 conns | $(ratio "$(get h1_1m_c50 intact 4)" "$(get h1_1m_c50 haproxy 4)") |"
echo "| Intact ÷ direct, req/s, h1 1 KiB 50 conns | $(ratio "$(get h1_1k_c50 intact 3)" "$(get h1_1k_c50 direct 3)") |"
echo "| Intact ÷ direct, req/s, h2 1 KiB | $(ratio "$(get h2_1k_c10 intact 3)" "$(get h2_1k_c10 direct 3)") |"
[[ -n ${SPID[mitmproxy]:-} ]] &&
  echo "| Intact ÷ mitmproxy, req per CPU-s, h1 1 KiB 50 conns | $(ratio "$(get h1_1k_c50 intact 4)" "$(get h1_1k_c50 mitmproxy 4)") |"
echo "| recording on ÷ off, req per CPU-s, h1 1 KiB 50 conns | $(ratio "$(get h1_1k_c50 intact_rec 4)" "$(get h1_1k_c50 intact 4)") |"
echo "| recording on ÷ off, req per CPU-s, h1 1 MiB 50 conns | $(ratio "$(get h1_1m_c50 intact_rec 4)" "$(get h1_1m_c50 intact 4)") |"
d=$(get h1_1k_c1 direct 5)
for t in intact intact_rec haproxy nginx mitmproxy; do
  v=$(get h1_1k_c1 "$t" 5); [[ -n $v ]] || continue
  echo "| added p50 latency, 1 conn, $t | $((v - d)) µs |"
done
for t in intact haproxy nginx; do
  echo "| peak RSS, 50 concurrent 1 MiB responses, $t | $(get h1_1m_c50 "$t" 6) MiB |"
done
[[ -n $(get fwd_1k_c50 forward 3) ]] &&
  echo "| Intact forward (hey -x, 50 conns) req/s; req per CPU-s | $(get fwd_1k_c50 forward 3); $(get fwd_1k_c50 forward 4) |"
