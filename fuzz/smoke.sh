#!/usr/bin/env bash
# Smoke fuzz for CI: runs each cargo-fuzz target for a short while (FUZZ_SECONDS, default 30)
# starting from the committed corpus, and exits non-zero if any target crashes, panics, times
# out or runs out of memory. See docs/fuzzing.md.
#
#   bash fuzz/smoke.sh                     # every target, 30 s each
#   FUZZ_SECONDS=120 bash fuzz/smoke.sh frame_decode
#
# Works with only the stable toolchain: installs cargo-fuzz when it is missing, and uses a
# nightly toolchain when rustup has one, else stable with RUSTC_BOOTSTRAP=1 (cargo-fuzz needs
# -Zsanitizer and friends). Set FUZZ_TOOLCHAIN=stable or FUZZ_TOOLCHAIN=nightly to choose.
# The committed corpus is only read: inputs found during the run go to a temporary directory,
# and crash reproducers to fuzz/artifacts/<target>/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")"

seconds="${FUZZ_SECONDS:-30}"
if [ $# -gt 0 ]; then
    targets=("$@")
else
    targets=(frame_decode capture_file roundtrip analysis)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "smoke: installing cargo-fuzz"
    cargo install cargo-fuzz --locked --version '^0.13'
fi

toolchain="${FUZZ_TOOLCHAIN:-}"
if [ -z "$toolchain" ]; then
    if command -v rustup >/dev/null 2>&1 && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
        toolchain=nightly
    else
        toolchain=stable
    fi
fi
if [ "$toolchain" = nightly ]; then
    fuzz=(cargo +nightly fuzz)
    rustc_version="$(rustc +nightly --version)"
else
    # Stable rustc accepts the nightly-only flags cargo-fuzz passes once RUSTC_BOOTSTRAP is set.
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
    rustc_version="$(rustc --version) with RUSTC_BOOTSTRAP=1"
fi
echo "smoke: $("${fuzz[@]}" --version) on $rustc_version; ${seconds}s per target"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
for t in "${targets[@]}"; do
    mkdir -p "$work/$t" "artifacts/$t" "corpus/$t"
    echo "smoke: === $t"
    # The first corpus directory receives new inputs; the committed one is only read.
    if "${fuzz[@]}" run "$t" "$work/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" 2>"$work/$t.log"; then
        grep -E '^(#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|average_exec_per_sec|new_units_added))' "$work/$t.log" || true
    else
        failed+=("$t")
        tail -n 60 "$work/$t.log"
        grep -m1 -A1 -E 'panicked at|ERROR: (AddressSanitizer|libFuzzer)' "$work/$t.log" || true
        echo "smoke: $t FAILED; reproducer(s) in fuzz/artifacts/$t/:"
        ls -l "artifacts/$t/" || true
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "smoke: crashes in: ${failed[*]}"
    exit 1
fi
echo "smoke: ${#targets[@]} target(s) ran ${seconds}s each without a crash"
