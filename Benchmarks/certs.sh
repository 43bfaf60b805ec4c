# Sourced by the benchmark scripts (run.sh, verify.sh, callgrind.sh): a CA made by Intact
# in $WORK/ca ($CA) and an ECDSA P-256 certificate it signed for localhost and 127.0.0.1
# ($WORK/origin-cert.pem, $WORK/origin-key.pem), for the nginx origin; and that origin's
# configuration for verify.sh and callgrind.sh (run.sh writes its own, for several nginx);
# the argument check of the scripts that take none; and the frame verify.sh and
# callgrind.sh share (bench_frame).

# Exits after printing the caller's `usage` for --help; refuses any other argument.
bench_no_arguments() { # SCRIPT-NAME [ARGUMENT]
  case "${2:-}" in
    "") ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$1: unknown argument '$2' (it takes none; see --help)" >&2; exit 2 ;;
  esac
}
bench_certs() { # WORK INTACT
  CA=$1/ca
  "$2" ca init --dir "$CA" >/dev/null
  openssl ecparam -name prime256v1 -genkey -noout -out "$1/origin-key.pem" 2>/dev/null
  openssl req -new -key "$1/origin-key.pem" -subj "/CN=localhost" -out "$1/origin.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$1/ext.cnf"
  openssl x509 -req -in "$1/origin.csr" -CA "$CA/ca-cert.pem" -CAkey "$CA/ca-key.pem" \
    -CAcreateserial -days 2 -sha256 -extfile "$1/ext.cnf" -out "$1/origin-cert.pem" 2>/dev/null
}

# $WORK/origin.conf: one nginx process serving $WORK/www over TLS 1.3 on 127.0.0.1:PORT,
# with the certificate above. LISTEN holds the listen options ("ssl" or "ssl http2").
bench_origin_conf() { # WORK PORT LISTEN WORKER-CONNECTIONS [MORE-SERVER-DIRECTIVES]
  mkdir -p "$1/www" "$1/tmp"
  cat >"$1/origin.conf" <<EOF_ORIGIN
master_process off;
daemon off;
worker_processes 1;
pid $1/origin.pid;
error_log $1/origin-error.log warn;
events { worker_connections $4; }
http {
  access_log off;
  client_body_temp_path $1/tmp; proxy_temp_path $1/tmp; fastcgi_temp_path $1/tmp;
  uwsgi_temp_path $1/tmp; scgi_temp_path $1/tmp;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$2 $3;
    ssl_certificate $1/origin-cert.pem;
    ssl_certificate_key $1/origin-key.pem;
    ssl_protocols TLSv1.3;
    ${5:-}
    location / { root $1/www; default_type application/octet-stream; }
  }
}
EOF_ORIGIN
}

# The frame of a script that starts servers: PIDS (what to stop), the EXIT trap that stops
# them all (TERM, then waits) and removes $WORK unless BENCH_KEEP is set, and `log`/`die`
# prefixed with LABEL.
bench_frame() { # LABEL
  BENCH_LABEL=$1
  PIDS=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
  log() { echo "$BENCH_LABEL: $*" >&2; }
  die() { log "$*"; exit 1; }
}
bench_cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -n ${BENCH_KEEP:-} ]]; then echo "$BENCH_LABEL: kept $WORK" >&2; else rm -rf "$WORK"; fi
}
