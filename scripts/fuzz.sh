#!/usr/bin/env bash
# Runs every libFuzzer target of intact-fuzz for FUZZ_SECONDS each (make fuzz).
# Usage: scripts/fuzz.sh BINARY SECONDS [TARGET...]
# New inputs go to .build/fuzz/corpus/TARGET (Tests/Fuzz/Corpus/TARGET is read
# as seeds and never written); crashes to .build/fuzz/crashes/. A crash must
# become a file in Tests/Fuzz/Corpus/TARGET/ and be fixed (Docs/Fuzzing.md).
set -u
binary=$1; seconds=$2; shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(http1-request http1-response http2-server http2-client client-hello recording-reader located-json fault-rules)
fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/.build/fuzz
mkdir -p "$work/crashes" "$work/logs"
failed=()
printf '%-18s %12s %10s %8s %8s  %s\n' target executions exec/s cov ft result
for target in "${targets[@]}"; do
    mkdir -p "$work/corpus/$target"
    log=$work/logs/$target.log
    dict=()
    [ -f "$root/Tests/Fuzz/Dictionaries/$target.dict" ] && dict=(-dict="$root/Tests/Fuzz/Dictionaries/$target.dict")
    # Leak detection stays off: the Swift runtime keeps metadata caches for the process's life.
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 "$binary" "$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="$work/crashes/$target-" "${dict[@]}" \
        "$work/corpus/$target" "$root/Tests/Fuzz/Corpus/$target" >"$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    result=ok
    if [ $status -ne 0 ]; then result="CRASH (exit $status, see $log)"; failed+=("$target"); fi
    printf '%-18s %12s %10s %8s %8s  %s\n' "$target" "${runs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: crashes in ${failed[*]}; inputs in $work/crashes/" >&2
    exit 1
fi
