#!/usr/bin/env bash
# `make test`: every test on the embedded defaults (FalkorDB child + SQLite), schemathesis
# against /openapi.json (scripts/schemathesis.sh), then the integration suite again with
# records on PostgreSQL, then once more on Neo4j + PostgreSQL, the production pair (below).
# Each pass prints how long it took.
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

# NAME COMMAND...: runs it and says how long it took. When it fails, each panic's first lines
# are repeated after it: with backtraces on, a failure's message sits hundreds of lines above the
# end, and a log cut to its head and tail (as CI's report is) lost the one that said why.
timed() {
    local name=$1 start=$SECONDS status=0 log
    shift
    log=$(mktemp)
    "$@" 2>&1 | tee "$log" || status=$?
    echo "== $name took $((SECONDS - start)) s"
    if [ "$status" != 0 ]; then
        echo "== why $name failed (each panic's first lines, repeated from above)"
        grep -A6 "panicked at" "$log" | grep -vE "^ +[0-9]+: |^ +at |^stack backtrace:" | head -80 || true
    fi
    rm -f "$log"
    return "$status"
}

echo "== tests on the embedded defaults (FalkorDB + SQLite)"
# CI exports CANON_TEST_DATABASE_URL for the second pass; this one is the embedded default.
timed "the FalkorDB + SQLite pass" env -u CANON_TEST_DATABASE_URL -u CANON_TEST_NEO4J_URI \
    timeout "$TEST_TIMEOUT" cargo test --locked

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
    timed "the PostgreSQL pass" env -u CANON_TEST_NEO4J_URI CANON_TEST_DATABASE_URL="$PG_URL" \
        timeout "$TEST_TIMEOUT" cargo test --locked --test api
else
    if [ "${CANON_REQUIRE_POSTGRES:-0}" = 1 ]; then
        echo "PostgreSQL is required (CANON_REQUIRE_POSTGRES=1) but none answers${PG_URL:+ at $PG_URL}" >&2
        exit 1
    fi
    echo "== SKIPPED: the PostgreSQL run (no PostgreSQL installed; scripts/postgres.sh start installs and starts one, or set CANON_TEST_DATABASE_URL)"
fi

# The Neo4j + PostgreSQL pass (the production pair): the Neo4j CANON_TEST_NEO4J_URI names, else
# the project's own (scripts/neo4j.sh, built with Maven on first use), when Java is present.
# Tests share the one database Neo4j Community has: each test's tenant is a fresh account, and
# every node carries its account, so they stay apart without a wipe. A Neo4j this script starts
# starts empty all the same: scripts/neo4j.sh keeps its data between starts, and run after run
# the suite's tenants grew it by gigabytes (whole-graph reads, such as a start's one-time
# migrations, grew slower with it).
# CANON_REQUIRE_NEO4J=1 makes a skipped pass a failure.
skip_neo4j() {
    if [ "${CANON_REQUIRE_NEO4J:-0}" = 1 ]; then
        echo "Neo4j is required (CANON_REQUIRE_NEO4J=1) but $1" >&2
        exit 1
    fi
    echo "== SKIPPED: the Neo4j + PostgreSQL run ($1)"
}
NEO4J_URI=${CANON_TEST_NEO4J_URI:-}
started_neo4j=0
if [ -z "$PG_URL" ] || ! answers "$PG_URL"; then
    skip_neo4j "no PostgreSQL answers"
elif [ -z "$NEO4J_URI" ] && ! command -v java >/dev/null; then
    skip_neo4j "no Java to run scripts/neo4j.sh, nor CANON_TEST_NEO4J_URI"
else
    if [ -z "$NEO4J_URI" ]; then
        if ./scripts/neo4j.sh url >/dev/null && ! (exec 3<>"/dev/tcp/127.0.0.1/${CANON_NEO4J_PORT:-7687}") 2>/dev/null; then
            started_neo4j=1
            rm -rf "${CANON_NEO4J_HOME:-${CANON_CACHE_DIR:-$HOME/.cache/canon}/neo4j/server}/data"
        fi
        NEO4J_URI=$(./scripts/neo4j.sh start | tail -1) || NEO4J_URI=""
        export CANON_TEST_NEO4J_PASSWORD=${CANON_TEST_NEO4J_PASSWORD:-${CANON_NEO4J_PASSWORD:-canon-test-password}}
    fi
    if [ -z "$NEO4J_URI" ]; then
        skip_neo4j "scripts/neo4j.sh could not start Neo4j"
    else
        # A Neo4j this script started is stopped at the end; one already running is left as it was.
        [ "$started_neo4j" = 1 ] && trap 'drop_test_databases; ./scripts/neo4j.sh stop || true' EXIT
        echo "== integration suite again on Neo4j + PostgreSQL ($NEO4J_URI, $PG_URL)"
        timed "the Neo4j + PostgreSQL pass" env CANON_TEST_DATABASE_URL="$PG_URL" \
            CANON_TEST_NEO4J_URI="$NEO4J_URI" timeout "$TEST_TIMEOUT" cargo test --locked --test api
    fi
fi
