#!/usr/bin/env bash
# The soak (make soak): the reverse proxy with --record in front of an nginx
# origin that closes keep-alive connections every 50 requests, driven for
# MINUTES by h2load (HTTP/2), wrk (HTTP/1.1), curl loops (GET and POST, both
# versions) and slow and idle clients that come and go. Then it asserts:
# zero failed requests, the proxy's descriptors back to their baseline, RSS
# under RSS_LIMIT_MB (the curve is printed), the recording complete (every
# line parses, at least one record per request the clients saw answered),
# and `intact verify` passing on the recording (which also reads every line:
# a line that does not parse fails it). Docs/soak.md explains it.
#
# Usage: scripts/soak.sh MINUTES INTACT_BINARY [RSS_LIMIT_MB]
set -u
minutes=$1
intact=$(realpath "$2")
rss_limit_mb=${3:-256}
seconds=$((minutes * 60))
work=$(mktemp -d /tmp/intact-soak-XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null
}
trap cleanup EXIT
failures=()
fail() { failures+=("$1"); echo "soak: FAIL: $1"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The origin: nginx over TLS (h2 and h1), keepalive_requests 50, a 1 KiB page; POST answered too.
origin_port=$(free_port)
mkdir -p "$work/www" "$work/tmp" "$work/logs"
head -c 1024 /dev/urandom | base64 -w 0 | head -c 1024 > "$work/www/1k"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/origin.key" -out "$work/origin.pem" 2>/dev/null
cat > "$work/nginx.conf" <<EOF
worker_processes 1;
user root;
daemon on;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    keepalive_requests 50;
    keepalive_timeout 5s;
    server {
        listen 127.0.0.1:$origin_port ssl http2;
        ssl_certificate $work/origin.pem;
        ssl_certificate_key $work/origin.key;
        root $work/www;
        location = /post { client_max_body_size 1m; return 200 "posted\n"; }
    }
}
EOF
nginx -p "$work" -c "$work/nginx.conf" || { echo "soak: nginx did not start"; exit 1; }

# The proxy.
proxy_port=$(free_port)
"$intact" proxy --listen "127.0.0.1:$proxy_port" --mode "reverse:https://127.0.0.1:$origin_port" \
    --upstream-ca "$work/origin.pem" --ca-dir "$work/ca" --record "$work/proxy.jsonl" --log-format json \
    > "$work/proxy.log" 2> "$work/proxy.err" &
proxy=$!
pids+=("$proxy")
for _ in $(seq 100); do
    curl -s -o /dev/null --cacert "$work/ca/ca-cert.pem" "https://127.0.0.1:$proxy_port/1k" && break
    sleep 0.1
done
url="https://127.0.0.1:$proxy_port"
# wrk and h2load send the URL's host as SNI; an IP address is no valid SNI (RFC 6066), so they name localhost.
load_url="https://localhost:$proxy_port"
ca="$work/ca/ca-cert.pem"
fds() { ls "/proc/$proxy/fd" 2>/dev/null | wc -l; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$proxy/status" 2>/dev/null; }
sleep 6 # nginx closes the warm-up's upstream connection (keepalive_timeout 5s)
baseline_fds=$(fds)
echo "soak: proxy pid $proxy on $url, origin 127.0.0.1:$origin_port, $minutes min, work dir $work"
echo "soak: baseline descriptors $baseline_fds, RSS $(rss_kb) KiB"

# RSS and descriptors every 10 s.
( while kill -0 "$proxy" 2>/dev/null; do echo "$(date +%s) $(rss_kb) $(fds)"; sleep 10; done ) > "$work/curve" &
pids+=($!)

end=$(( $(date +%s) + seconds ))
# curl loops: GET and POST, HTTP/1.1 and HTTP/2, new connection each time.
curl_loop() {
    local version=$1 out=$work/curl$1.txt
    while [ "$(date +%s)" -lt "$end" ]; do
        curl -s -o /dev/null -w '%{http_code}\n' --cacert "$ca" "$version" "$url/1k" >> "$out"
        curl -s -o /dev/null -w '%{http_code}\n' --cacert "$ca" "$version" --data-binary 'grant_type=soak' "$url/post" >> "$out"
    done
}
curl_loop --http1.1 & loop1=$!; pids+=($loop1)
curl_loop --http2 & loop2=$!; pids+=($loop2)
# Slow clients (a request head over ~6 s, byte by byte) and idle ones (connected 20 s, then gone), coming and going.
python3 - "$proxy_port" "$ca" "$end" > "$work/slow.txt" 2>&1 <<'EOF' &
import socket, ssl, sys, threading, time
port, ca, end = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
context = ssl.create_default_context(cafile=ca)
results, lock = [], threading.Lock()
def connect():
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    return context.wrap_socket(sock, server_hostname="127.0.0.1")
def slow():
    try:
        conn = connect()
        request = b"GET /1k HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: soak-slow\r\nConnection: close\r\n\r\n"
        for i in range(0, len(request), 4):
            conn.sendall(request[i:i + 4]); time.sleep(6 / (len(request) / 4))
        answer = b""
        while chunk := conn.recv(65536): answer += chunk
        status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.1 ") else "none"
    except Exception as error:
        status = f"error:{error}"
    with lock: results.append(status)
def idle():
    try:
        conn = connect(); time.sleep(20); conn.close()
    except Exception as error:
        with lock: results.append(f"idle-error:{error}")
threads = []
while time.time() < end - 25:
    for target in [slow] * 5 + [idle] * 5:
        thread = threading.Thread(target=target); thread.start(); threads.append(thread)
    time.sleep(5)
for thread in threads: thread.join()
for status in results: print(status)
EOF
pids+=($!)
slow=$!
# h2load (HTTP/2, 10 connections x 10 streams) and wrk (HTTP/1.1, 20 connections) in rounds of a fixed
# request count, so no request is cut off when the time is up.
h2_total=0; h2_failed=0; wrk_total=0; wrk_failed=0
while [ "$(date +%s)" -lt $((end - 20)) ]; do
    out=$(h2load -n 20000 -c 10 -m 10 "$load_url/1k" 2>&1)
    done_n=$(echo "$out" | sed -n 's/^requests: .* \([0-9]*\) succeeded, \([0-9]*\) failed, \([0-9]*\) errored.*/\1 \2 \3/p')
    read -r ok bad err <<< "${done_n:-0 20000 0}"
    h2_total=$((h2_total + ok)); h2_failed=$((h2_failed + bad + err))
    out=$(wrk -t1 -c20 -d10s "$load_url/1k" 2>&1)
    n=$(echo "$out" | sed -n 's/^ *\([0-9]*\) requests in.*/\1/p')
    non2xx=$(echo "$out" | sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\)/\1/p')
    socket=$(echo "$out" | sed -n 's/^ *Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\)/\1 \2 \3 \4/p')
    read -r c r w t <<< "${socket:-0 0 0 0}"
    wrk_total=$((wrk_total + ${n:-0})); wrk_failed=$((wrk_failed + ${non2xx:-0} + c + r + w + t))
done
wait "$slow" "$loop1" "$loop2"

curl_total=$(cat "$work"/curl--http*.txt | wc -l)
curl_failed=$(cat "$work"/curl--http*.txt | grep -vc '^200$')
slow_total=$(grep -c . "$work/slow.txt")
slow_failed=$(grep -vc '^200$' "$work/slow.txt")
echo "soak: h2load  $h2_total answered, $h2_failed failed"
echo "soak: wrk     $wrk_total answered, $wrk_failed failed (wrk cuts its last in-flight requests; they are not counted)"
echo "soak: curl    $curl_total requests, $curl_failed failed"
echo "soak: slow/idle clients $slow_total, $slow_failed failed"
[ "$h2_failed" -eq 0 ] || fail "h2load: $h2_failed failed requests"
[ "$wrk_failed" -eq 0 ] || fail "wrk: $wrk_failed failed requests"
[ "$curl_failed" -eq 0 ] || fail "curl: $curl_failed failed requests ($(cat "$work"/curl--http*.txt | grep -v '^200$' | sort | uniq -c | tr '\n' ' '))"
[ "$slow_failed" -eq 0 ] || fail "slow/idle clients: $slow_failed failed ($(grep -v '^200$' "$work/slow.txt" | sort | uniq -c | head -5 | tr '\n' ' '))"

# Descriptors back to baseline once the clients are gone and nginx closed the pooled connections.
for _ in $(seq 90); do [ "$(fds)" -le "$baseline_fds" ] && break; sleep 1; done
final_fds=$(fds)
echo "soak: descriptors $final_fds (baseline $baseline_fds)"
[ "$final_fds" -le "$baseline_fds" ] || fail "descriptors $final_fds, baseline $baseline_fds"

echo "soak: RSS curve (seconds, KiB, descriptors):"
start=$(head -1 "$work/curve" | cut -d' ' -f1)
awk -v s="$start" '{printf "  %5d s  %8d KiB  %5d fds\n", $1 - s, $2, $3}' "$work/curve"
peak=$(awk 'max < $2 {max = $2} END {print max + 0}' "$work/curve")
echo "soak: peak RSS $((peak / 1024)) MiB (limit $rss_limit_mb MiB)"
[ "$peak" -le $((rss_limit_mb * 1024)) ] || fail "peak RSS $((peak / 1024)) MiB over $rss_limit_mb MiB"

# Stop the proxy (SIGTERM drains), then the recording.
kill -TERM "$proxy"; wait "$proxy" 2>/dev/null
records=$(($(wc -l < "$work/proxy.jsonl") - 1))
answered=$((h2_total + wrk_total + curl_total + slow_total))
echo "soak: recording $records records for $answered answered requests"
[ "$records" -ge "$answered" ] || fail "recording incomplete: $records records, $answered requests answered"
# `intact verify` streams a recording of any size in bounded memory (Docs/verify.md):
# the whole recording is verified in one run, and its peak RSS must stay within
# SOAK_VERIFY_RSS_LIMIT_MB (default 256).
verify_rss_limit_mb=${SOAK_VERIFY_RSS_LIMIT_MB:-256}
verified=0
/usr/bin/time -f "%e %M" -o "$work/verify.time" "$intact" verify --quiet "$work/proxy.jsonl" > "$work/verify.txt" 2>&1 || verified=$?
read -r verify_seconds verify_rss_kib < <(tail -n 1 "$work/verify.time")
summary=$(grep -E '^Summary:' "$work/verify.txt" || true)
policy=$(grep -E '^Policy ' "$work/verify.txt" || true)
echo "soak: intact verify read $records records in $verify_seconds s, peak RSS $((verify_rss_kib / 1024)) MiB (limit $verify_rss_limit_mb MiB)"
[ "$verify_rss_kib" -le $((verify_rss_limit_mb * 1024)) ] \
    || fail "intact verify peak RSS $((verify_rss_kib / 1024)) MiB over $verify_rss_limit_mb MiB"
if [ "$verified" -eq 0 ]; then
    echo "soak: intact verify passed: $summary $policy"
else
    # Why the first exchanges failed the policy, or the last thing verify said.
    failed=$(grep -E '^ +hop [0-9]+ (broken|modified|missing|foreign)' "$work/verify.txt" | head -n 5 || true)
    [ -n "$failed" ] || failed=$(grep -v '^[[:space:]]*$' "$work/verify.txt" | tail -n 3 || true)
    fail "intact verify failed (exit $verified): $summary $policy
$failed"
fi

if [ ${#failures[@]} -ne 0 ]; then
    echo "soak: ${#failures[@]} assertion(s) failed; files in $work"
    exit 1
fi
echo "soak: passed"
rm -rf "$work"
