#!/usr/bin/env bash
# Checks that canon serves the contract its OpenAPI document states: schemathesis (installed
# into vendor/schemathesis by provision.sh) generates requests from /openapi.json against a
# canon on the embedded defaults with a fresh data directory, an API key and a dashboard
# token, and fails on a server error or on a status, content type or body the document does
# not allow. Bounded: a few examples per operation and a time limit (a minute on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/canon/target}
VENDOR=${CANON_VENDOR_DIR:-vendor}
SCHEMATHESIS_DIR=${CANON_SCHEMATHESIS_DIR:-$VENDOR/schemathesis}
MAX_EXAMPLES=${CANON_SCHEMATHESIS_EXAMPLES:-20}
TIME_LIMIT=${CANON_SCHEMATHESIS_TIMEOUT:-420}

cargo build --locked --quiet --bin canon
canon="$CARGO_TARGET_DIR/debug/canon"

data=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
server=""
cleanup() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$data"
}
trap cleanup EXIT

export CANON_DATA_DIR=$data CANON_VENDOR_DIR=$VENDOR CANON_LISTEN=127.0.0.1:$port
# The run checks the contract, not the rate limit: a generous one keeps every example useful.
export CANON_RATE_LIMIT_PER_SECOND=10000 CANON_RATE_LIMIT_BURST=10000
key=$("$canon" keys create --account schemathesis --environment sandbox)
# The reviewer endpoints take dashboard tokens only; elsewhere the API key decides.
token=$("$canon" users create --account schemathesis --environment sandbox --email st@example.com --role admin)
"$canon" serve >"$data/canon.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || { cat "$data/canon.log" >&2; exit 1; }
    sleep 0.5
done

echo "== schemathesis against /openapi.json ($MAX_EXAMPLES examples per operation)"
status=0
PYTHONPATH=$SCHEMATHESIS_DIR timeout "$TIME_LIMIT" python3 -m schemathesis.cli run \
    "http://127.0.0.1:$port/openapi.json" \
    --header "x-api-key: $key" --header "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "$MAX_EXAMPLES" --seed 1 --workers 1 --request-timeout 30 \
    --suppress-health-check all --generation-database none --no-color ${CANON_SCHEMATHESIS_ARGS:-} || status=$?
if [ "$status" -ne 0 ]; then
    kept=${TMPDIR:-/tmp}/canon-schemathesis.log
    cp "$data/canon.log" "$kept"
    cp "$data/falkordb/falkordb.log" "${kept%.log}-falkordb.log" 2>/dev/null || true
    echo "schemathesis failed ($status); canon's errors (whole log: $kept):" >&2
    grep -E "ERROR|panicked" "$data/canon.log" | tail -20 | cut -c1-400 >&2 || true
fi
exit "$status"
