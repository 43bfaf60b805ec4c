#!/usr/bin/env bash
# The verify row of `make bench` (Benchmarks/README.md): how fast one recording tap
# records against how fast `intact verify` judges, and verify's peak RSS at 100k and
# 400k records. Two Intact reverse taps in a row (tap-a → tap-b → an nginx origin,
# TLS everywhere, 127.0.0.1 only) record a wrk load of 1 KiB GETs (no Intact-Trace:
# pairing by method and path, as for a real app); the two recordings are verified
# together. The 100k and 400k runs replay those two recordings' records (fresh
# exchange ids, times shifted by the recording's length per copy) up to that many
# records in all, half per tap. Prints figures; asserts nothing about timing.
# Every process is started and stopped by its PID; the trap stops them all on exit.
#
#   Benchmarks/verify.sh INTACT [SECONDS]      (BENCH_VERIFY_SIZES="100000 400000")
set -euo pipefail

INTACT=${1:?usage: Benchmarks/verify.sh INTACT [SECONDS]}
DURATION=${2:-10}
SIZES=${BENCH_VERIFY_SIZES:-100000 400000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/intact-bench-verify.XXXXXX)
# shellcheck source=Benchmarks/certs.sh
. "$ROOT/Benchmarks/certs.sh"
bench_frame "bench verify"
for tool in wrk nginx openssl python3 /usr/bin/time; do command -v "$tool" >/dev/null || die "$tool is missing (make bench-deps)"; done
[[ -x $INTACT ]] || die "$INTACT is missing (swift build -c release --product intact)"
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() {
  local i
  for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done
  die "nothing listens on 127.0.0.1:$1"
}

bench_certs "$WORK" "$INTACT"
ORIGIN=$(free_port)
bench_origin_conf "$WORK" "$ORIGIN" ssl 4000
head -c 1024 /dev/urandom >"$WORK/www/1k"
nginx -p "$WORK" -c "$WORK/origin.conf" & PIDS+=($!)
wait_port "$ORIGIN"
B=$(free_port); A=$(free_port)
"$INTACT" proxy --listen "127.0.0.1:$B" --mode "reverse:https://127.0.0.1:$ORIGIN" --tap tap-b --ca-dir "$CA" \
  --upstream-ca "$CA/ca-cert.pem" --quiet --record "$WORK/tap-b.jsonl" --max-client-connections 4096 & PID_B=$!; PIDS+=($PID_B)
"$INTACT" proxy --listen "127.0.0.1:$A" --mode "reverse:https://127.0.0.1:$B" --tap tap-a --ca-dir "$CA" \
  --upstream-ca "$CA/ca-cert.pem" --quiet --record "$WORK/tap-a.jsonl" --max-client-connections 4096 & PID_A=$!; PIDS+=($PID_A)
wait_port "$B"; wait_port "$A"

log "wrk -c50 for $DURATION s through tap-a → tap-b → nginx"
wrk --timeout 10s -t2 -c50 -d"${DURATION}s" "https://localhost:$A/1k" >"$WORK/wrk.txt"
kill -INT "$PID_A"; wait "$PID_A" 2>/dev/null || true
kill -INT "$PID_B"; wait "$PID_B" 2>/dev/null || true
recorded=$(($(wc -l <"$WORK/tap-a.jsonl") - 1))
recorded_b=$(($(wc -l <"$WORK/tap-b.jsonl") - 1))
record_rate=$(python3 -c "print(round($recorded / $DURATION))")
log "tap-a recorded $recorded records in $DURATION s ($record_rate records/s; tap-b $recorded_b)"

# verify NAME FILES...: prints "records seconds peak_rss_kib exit" for one run.
verify() {
  local name=$1; shift
  local status=0
  /usr/bin/time -f "%e %M" -o "$WORK/$name.time" "$INTACT" verify --quiet "$@" >"$WORK/$name.txt" 2>"$WORK/$name.err" || status=$?
  local records=0 file
  for file in "$@"; do records=$((records + $(wc -l <"$file") - 1)); done
  read -r seconds rss < <(tail -n 1 "$WORK/$name.time")
  echo "$records $seconds $rss $status"
}

# replay COUNT: tap-a and tap-b recordings of COUNT records in all (COUNT/2 each), from the recorded ones.
replay() {
  python3 - "$WORK/tap-a.jsonl" "$WORK/tap-b.jsonl" "$1" "$WORK/r$1" <<'PY'
import json, sys
a, b, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def records(path):
    with open(path) as f:
        header = f.readline()
        return header, [json.loads(line) for line in f if line.endswith("\n")]
def times(record, shift):
    for leg in record.get("legs", []):
        for key in ("request", "response"):
            timings = (leg.get(key) or {}).get("timings", {})
            for name in ("start", "headersDone", "end"):
                if isinstance(timings.get(name), (int, float)):
                    timings[name] = round(timings[name] + shift, 3)
    if record.get("connection", {}).get("at") is not None:
        record["connection"]["at"] = round(record["connection"]["at"] + shift, 3)
sources = [records(a), records(b)]
def span(rs):
    ts = [t for r in rs for leg in r["legs"] for k in ("request", "response") if leg.get(k)
          for t in leg[k]["timings"].values()]
    return (max(ts) - min(ts)) if ts else 0
length = max(span(rs) for _, rs in sources) + 1000
for (header, rs), name in zip(sources, ("a", "b")):
    with open(f"{out}-{name}.jsonl", "w") as f:
        f.write(header)
        ids = [r["exchangeID"] for r in rs]
        copy, written = 0, 0
        while written < count // 2 and rs:
            if copy > 0:
                for r in rs:
                    times(r, length)
            for r, original in zip(rs, ids):
                if written >= count // 2:
                    break
                r["exchangeID"] = f"{original}-r{copy}"
                f.write(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n")
                written += 1
            copy += 1
PY
}

printf '\n%-58s %12s %12s %10s %14s\n' "verify" "records" "records/s" "× record" "peak RSS" >"$WORK/rows"
row() { # LABEL RECORDS SECONDS RSS STATUS
  local rate
  rate=$(python3 -c "print(round($2 / max($3, 0.01)))")
  printf '%-58s %12s %12s %10s %11s MiB%s\n' "$1" "$2" "$rate" "$(python3 -c "print(f'{$rate / max($record_rate, 1):.1f}')")" \
    "$(($4 / 1024))" "$([[ $5 == 0 ]] && echo "" || echo "  (exit $5: policy failed or unreadable, see $WORK)")" >>"$WORK/rows"
}
read -r n s r st < <(verify recorded "$WORK/tap-a.jsonl" "$WORK/tap-b.jsonl")
row "the two taps' recordings of the ${DURATION} s load" "$n" "$s" "$r" "$st"
for size in $SIZES; do
  replay "$size"
  read -r n s r st < <(verify "r$size" "$WORK/r$size-a.jsonl" "$WORK/r$size-b.jsonl")
  row "$size records replayed (fresh ids, shifted times), two taps" "$n" "$s" "$r" "$st"
  rm -f "$WORK/r$size-a.jsonl" "$WORK/r$size-b.jsonl"
done
echo
echo "One tap records $record_rate records/s (tap-a, wrk -c50, 1 KiB GETs through two recording taps)."
echo "Targets: verify ≥ 2× the rate one tap records (so a two-tap run verifies faster than it was recorded), peak RSS ≤ 256 MiB at any size."
cat "$WORK/rows"
