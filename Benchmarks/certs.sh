# Sourced by the benchmark scripts (run.sh, verify.sh): a CA made by Intact in $WORK/ca
# ($CA) and an ECDSA P-256 certificate it signed for localhost and 127.0.0.1
# ($WORK/origin-cert.pem, $WORK/origin-key.pem), for the nginx origin.
bench_certs() { # WORK INTACT
  CA=$1/ca
  "$2" ca init --dir "$CA" >/dev/null
  openssl ecparam -name prime256v1 -genkey -noout -out "$1/origin-key.pem" 2>/dev/null
  openssl req -new -key "$1/origin-key.pem" -subj "/CN=localhost" -out "$1/origin.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$1/ext.cnf"
  openssl x509 -req -in "$1/origin.csr" -CA "$CA/ca-cert.pem" -CAkey "$CA/ca-key.pem" \
    -CAcreateserial -days 2 -sha256 -extfile "$1/ext.cnf" -out "$1/origin-cert.pem" 2>/dev/null
}
