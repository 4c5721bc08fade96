#!/usr/bin/env bash
# Builds the browser inspector: wasm/www/pkg (wasm-bindgen --target web, loaded by
# wasm/www/index.html) and wasm/test/pkg (--target nodejs, for wasm/test/node_test.mjs).
# Neither is committed.
#
#   bash wasm/build.sh                 build; install the wasm32 target and wasm-bindgen-cli if missing
#   bash wasm/build.sh --test          … then run the node test against the nodejs build
#   bash wasm/build.sh --no-install    never install; missing tools are an error
# There is no skipping: a tool that cannot be had fails the build (and so CI).
set -euo pipefail
cd "$(dirname "$0")/.."

test=0 install=1
for a in "$@"; do
    case "$a" in
        --test) test=1 ;;
        --no-install) install=0 ;;
        *) echo "usage: bash wasm/build.sh [--test] [--no-install]" >&2; exit 2 ;;
    esac
done

missing() {
    echo "wasm/build.sh: $*" >&2
    exit 1
}

# The wasm32 standard library.
sysroot=$(rustc --print sysroot)
if [ ! -d "$sysroot/lib/rustlib/wasm32-unknown-unknown" ]; then
    if [ "$install" = 1 ] && command -v rustup >/dev/null 2>&1; then
        echo "wasm/build.sh: installing the wasm32-unknown-unknown target"
        rustup target add wasm32-unknown-unknown || true
    fi
    [ -d "$sysroot/lib/rustlib/wasm32-unknown-unknown" ] ||
        missing "the wasm32-unknown-unknown target is not installed (rustup target add wasm32-unknown-unknown)"
fi

# wasm-bindgen-cli must be exactly the version of the wasm-bindgen crate in Cargo.lock.
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
[ -n "$want" ] || { echo "wasm/build.sh: no wasm-bindgen in Cargo.lock" >&2; exit 1; }
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$want" ]; then
    if [ "$install" = 1 ]; then
        echo "wasm/build.sh: installing wasm-bindgen-cli $want (found: ${have:-none}); this takes a few minutes"
        # Not --locked: the CLI's own lock file may name versions a registry mirror lacks.
        cargo install -q wasm-bindgen-cli --version "$want" || true
        have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
    fi
    [ "$have" = "$want" ] ||
        missing "wasm-bindgen-cli $want is needed (found: ${have:-none}): cargo install wasm-bindgen-cli --version $want"
fi

# Release build for the browser: no debug info (the workspace keeps it for profiling), one
# codegen unit and LTO (smaller and faster). These apply to this build only.
export CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_LTO=true CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
cargo build -q -p rocescope-wasm --target wasm32-unknown-unknown --release --locked
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
wasm="$target_dir/wasm32-unknown-unknown/release/rocescope_wasm.wasm"

# (No name section: function names only label a trap's stack trace, and cost 20 KB gzipped.)
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section --out-dir wasm/www/pkg "$wasm"
wasm-bindgen --target nodejs --no-typescript --out-dir wasm/test/pkg "$wasm"
size=$(wc -c < wasm/www/pkg/rocescope_wasm_bg.wasm)
gz=$(gzip -9c wasm/www/pkg/rocescope_wasm_bg.wasm | wc -c)
echo "wasm/build.sh: wasm/www/pkg/rocescope_wasm_bg.wasm: $size bytes ($gz gzipped)"
# The page's budget (issue 14): the module a visitor downloads stays under 400 KB gzipped.
if [ "$gz" -ge 409600 ]; then
    echo "wasm/build.sh: the module is $gz bytes gzipped, over the page's budget of 400 KB" >&2
    exit 1
fi

if [ "$test" = 1 ]; then
    node --test wasm/test/node_test.mjs
fi
