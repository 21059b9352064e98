#!/usr/bin/env bash
# A PostgreSQL server of the project's own, for the tests and benchmarks on PostgreSQL:
#   scripts/postgres.sh start   provision (Debian's postgresql on first use), start it on
#                               127.0.0.1, wait until it answers; the last line printed is its
#                               URL (postgres://postgres@127.0.0.1:PORT/test)
#   scripts/postgres.sh stop    stop it (its data stays for the next start)
#   scripts/postgres.sh url     print the URL without starting anything
# Idempotent: `start` on a running server prints the URL again. Data lives in the build cache
# ($CANON_CACHE_DIR, default ~/.cache/canon) under postgres/, next to the Rust builds.
# CANON_POSTGRES_PORT picks the port (default 5432); CANON_POSTGRES_INSTALL=0 makes `start`
# exit 3 instead of installing when no server is installed (what `make test` does).
#
# This is a test server: trust authentication on loopback only, and fsync off (a crash of the
# machine may lose or corrupt its data, which the tests recreate anyway: each makes its own
# database). Do not keep data you care about in it. CANON_POSTGRES_DURABLE=1 starts it with
# PostgreSQL's own defaults for those instead (fsync, synchronous commits, full-page writes),
# as a production server runs: what a benchmark of the records on PostgreSQL should measure.
# The flags are the start's: a running server keeps its own (give the benchmark's another
# CANON_POSTGRES_PORT and CANON_CACHE_DIR).
#
# PostgreSQL refuses to run as root. As root (CI, containers) the server runs as an unprivileged
# user of a user namespace (`unshare --map-user`), which keeps its files owned by the caller in
# the build cache; where user namespaces are not allowed it runs as Debian's `postgres` user
# with its data under that user's home instead.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${CANON_CACHE_DIR:-$HOME/.cache/canon}
PORT=${CANON_POSTGRES_PORT:-5432}
URL="postgres://postgres@127.0.0.1:$PORT/test"

say() { echo "postgres.sh: $*" >&2; }

bindir() { # the newest installed server's bin folder, or nothing
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [ -n "$dir" ] && [ -x "$dir/postgres" ]; then
        echo "$dir"
    elif command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then
        dirname "$(command -v pg_ctl)"
    fi
}

provision() {
    [ -n "$(bindir)" ] && return 0
    if [ "${CANON_POSTGRES_INSTALL:-1}" = 0 ]; then
        say "no PostgreSQL server installed (and CANON_POSTGRES_INSTALL=0)"
        exit 3
    fi
    if ! command -v apt-get >/dev/null; then
        say "no PostgreSQL server found and no apt-get to install one; install PostgreSQL (initdb, pg_ctl) and retry"
        exit 1
    fi
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    # Debian's package makes and starts a cluster of its own on 5432 unless told not to: this
    # script runs its own, so none is made.
    if [ ! -f /etc/postgresql-common/createcluster.conf ]; then
        $sudo mkdir -p /etc/postgresql-common
        echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    say "installing Debian's postgresql (first use)"
    $sudo apt-get update -qq >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >&2
    [ -n "$(bindir)" ] || { say "postgresql installed but no server binaries found"; exit 1; }
}

# How the server's commands run: as the caller, in a user namespace, or as `postgres`.
as_server=()
DATA=$CACHE/postgres/data
choose_user() {
    if [ "$(id -u)" -ne 0 ]; then
        as_server=()
    elif unshare --user --map-user=1000 --map-group=1000 true 2>/dev/null; then
        as_server=(unshare --user --map-user=1000 --map-group=1000)
    elif getent passwd postgres >/dev/null; then
        DATA=$(getent passwd postgres | cut -d: -f6)/canon-test/data
        as_server=(runuser -u postgres --)
    else
        say "running as root with neither user namespaces nor a postgres user; run as another user"
        exit 1
    fi
}

server() { "${as_server[@]}" "$@"; }

running() { server "$BIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1; }

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

start() {
    provision
    BIN=$(bindir)
    choose_user
    if ! running; then
        if [ ! -f "$DATA/PG_VERSION" ]; then
            say "creating a cluster in $DATA"
            mkdir -p "$(dirname "$DATA")"
            [ ${#as_server[@]} -gt 0 ] && [ "${as_server[0]}" = runuser ] &&
                install -d -o postgres -g postgres "$(dirname "$DATA")"
            server "$BIN/initdb" -D "$DATA" --username=postgres --auth=trust \
                --encoding=UTF8 --locale=C.UTF-8 >"$(dirname "$DATA")/initdb.log" 2>&1 ||
                { cat "$(dirname "$DATA")/initdb.log" >&2; exit 1; }
        fi
        if port_taken; then
            say "something else already listens on 127.0.0.1:$PORT; set CANON_POSTGRES_PORT to another port"
            exit 1
        fi
        local unsafe="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        [ "${CANON_POSTGRES_DURABLE:-0}" = 1 ] && unsafe=""
        say "starting PostgreSQL on 127.0.0.1:$PORT${unsafe:+ (fsync off)}"
        # The tests open a pool per test, many at once: 300 connections leave room for that.
        server "$BIN/pg_ctl" start -D "$DATA" -w -t 60 -l "$(dirname "$DATA")/server.log" \
            -o "-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories='$DATA' \
                -c max_connections=300 -c shared_buffers=128MB $unsafe" >&2 ||
            { tail -20 "$(dirname "$DATA")/server.log" >&2; exit 1; }
    fi
    for _ in $(seq 1 60); do
        "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && break
        sleep 0.5
    done
    "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" || { say "PostgreSQL did not answer on $PORT"; exit 1; }
    if ! "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -Atqc \
        "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1; then
        "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "CREATE DATABASE test" >&2
    fi
    echo "$URL"
}

stop() {
    BIN=$(bindir)
    [ -n "$BIN" ] || { say "no PostgreSQL installed: nothing to stop"; return 0; }
    choose_user
    if running; then
        server "$BIN/pg_ctl" stop -D "$DATA" -m fast -w >&2
    else
        say "not running"
    fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
url) echo "$URL" ;;
*)
    echo "usage: $0 start|stop|url" >&2
    exit 2
    ;;
esac
