#!/usr/bin/env bash
# `make test`: every test on the embedded defaults (FalkorDB child + SQLite), schemathesis
# against /openapi.json (scripts/schemathesis.sh), then the integration suite again with
# records on PostgreSQL (below).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/canon/target}

./scripts/provision.sh

# A hung test fails the run with a message instead of eating CI's whole budget. The limit is
# for running the tests: they are built first, without one (a cold build on a busy 2-core
# machine once took longer than the limit by itself).
TEST_TIMEOUT=${CANON_TEST_TIMEOUT:-2400}

echo "== building the tests"
cargo test --locked --no-run

echo "== tests on the embedded defaults (FalkorDB + SQLite)"
# CI exports CANON_TEST_DATABASE_URL for the second pass; this one is the embedded default.
env -u CANON_TEST_DATABASE_URL timeout "$TEST_TIMEOUT" cargo test --locked

echo "== the OpenAPI document against the server (schemathesis)"
./scripts/schemathesis.sh

# The PostgreSQL pass: the server CANON_TEST_DATABASE_URL names, else the project's own
# (scripts/postgres.sh), started here when PostgreSQL is installed (this script installs
# nothing; `.ci/run` does). Without either the pass is skipped and says so;
# CANON_REQUIRE_POSTGRES=1 (CI) makes that a failure.
PG_URL=${CANON_TEST_DATABASE_URL:-}
if [ -z "$PG_URL" ]; then
    PG_URL=$(CANON_POSTGRES_INSTALL=0 ./scripts/postgres.sh start | tail -1) || PG_URL=""
fi
answers() { # URL: does a server answer at its host and port?
    local hostport host port
    hostport=$(echo "$1" | sed -E 's#^[a-z]+://([^@/]*@)?([^/:]+)(:([0-9]+))?/.*#\2 \4#')
    read -r host port <<<"$hostport"
    (exec 3<>"/dev/tcp/$host/${port:-5432}") 2>/dev/null
}
if [ -n "$PG_URL" ] && answers "$PG_URL"; then
    drop_test_databases() { # each test makes a database of its own; a run leaves ~300 (GBs)
        command -v psql >/dev/null || return 0
        psql "$PG_URL" -Atqc "SELECT datname FROM pg_database WHERE datname LIKE 'canon\_test\_%'" 2>/dev/null |
            while read -r db; do psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true; done
    }
    drop_test_databases # of earlier runs
    echo "== integration suite again with records on PostgreSQL ($PG_URL)"
    trap drop_test_databases EXIT
    CANON_TEST_DATABASE_URL=$PG_URL timeout "$TEST_TIMEOUT" cargo test --locked --test api
else
    if [ "${CANON_REQUIRE_POSTGRES:-0}" = 1 ]; then
        echo "PostgreSQL is required (CANON_REQUIRE_POSTGRES=1) but none answers${PG_URL:+ at $PG_URL}" >&2
        exit 1
    fi
    echo "== SKIPPED: the PostgreSQL run (no PostgreSQL installed; scripts/postgres.sh start installs and starts one, or set CANON_TEST_DATABASE_URL)"
fi
