#!/usr/bin/env bash
# A Neo4j server of the project's own, for the tests on Neo4j (the production graph engine):
#   scripts/neo4j.sh start   provision (tools/neo4j-launcher, built once with Maven from Maven
#                            Central), start it on 127.0.0.1, wait until Bolt answers; the last
#                            line printed is its URL (bolt://127.0.0.1:PORT)
#   scripts/neo4j.sh stop    stop it (its data stays for the next start)
#   scripts/neo4j.sh url     print the URL without starting anything
#   scripts/neo4j.sh build   build the launcher only (what `start` does on first use)
# Idempotent: `start` on a running server prints the URL again. Everything lives in the build
# cache ($CANON_CACHE_DIR, default ~/.cache/canon) under neo4j/: the launcher and its jars in
# launcher/, the server's data and logs in server/.
# CANON_NEO4J_PORT picks the port (default 7687); CANON_NEO4J_HOME the server's folder (data,
# logs, PID file; default the build cache's neo4j/server), so a test can run a Neo4j of its own
# beside the shared one. CANON_NEO4J_BUILD=0 makes `start` exit 3 instead of building the
# launcher when it is not built yet. User `neo4j`, password $CANON_NEO4J_PASSWORD
# (default `canon-test-password`): a test server, do not keep data you care about in it.
# CANON_NEO4J_HEAP (default 768m, the JVM's -Xmx) and CANON_NEO4J_PAGECACHE_MB (default 128)
# size its memory: the defaults suit the tests; `make bench-graph-neo4j` raises both for a
# million entities. They apply when the server starts (stop it first to change them).
# CANON_NEO4J_HEAP_MIN is the starting heap (-Xms, default 256m), CANON_NEO4J_GC the collector
# (default -XX:+UseG1GC), CANON_NEO4J_JAVA_OPTS more JVM flags (the bench's, see the Makefile).
# The JVM logs its collections and safepoints to gc.log in the server's folder (at most two
# files of 10 MB): a pause there at the time of a slow statement is the JVM's, not canon's.
#
# The server is embedded Neo4j Community (org.neo4j:neo4j, DatabaseManagementServiceBuilder) in
# a small launcher run as its own `java` process with the JVM flags Neo4j's own launcher passes;
# Maven runs only to build it, never at server time. Needs Java 17+ and Maven (exit 3 without).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${CANON_CACHE_DIR:-$HOME/.cache/canon}
PORT=${CANON_NEO4J_PORT:-7687}
PASSWORD=${CANON_NEO4J_PASSWORD:-canon-test-password}
URL="bolt://127.0.0.1:$PORT"
SRC=tools/neo4j-launcher
BUILD=$CACHE/neo4j/launcher
HOME_DIR=${CANON_NEO4J_HOME:-$CACHE/neo4j/server}
PIDFILE=$HOME_DIR/launcher.pid
LOG=$HOME_DIR/launcher.log

say() { echo "neo4j.sh: $*" >&2; }

# The launcher is rebuilt when its sources change (a stamp of their hash).
sources_hash() { cat "$SRC/pom.xml" $(find "$SRC/src" -type f | sort) | sha256sum | cut -d' ' -f1; }

provision() {
    local hash
    hash=$(sources_hash)
    [ -f "$BUILD/stamp" ] && [ "$(cat "$BUILD/stamp")" = "$hash" ] && return 0
    if [ "${CANON_NEO4J_BUILD:-1}" = 0 ]; then
        say "the launcher is not built (and CANON_NEO4J_BUILD=0)"
        exit 3
    fi
    command -v java >/dev/null || { say "no java: Neo4j 5.26 needs Java 17 or newer"; exit 3; }
    command -v mvn >/dev/null || { say "no mvn: Maven builds the launcher (first use only)"; exit 3; }
    say "building the Neo4j launcher with Maven (first use; downloads Neo4j from Maven Central)"
    rm -rf "$BUILD"
    mkdir -p "$BUILD"
    mvn -q -B -f "$SRC/pom.xml" -Dcanon.build="$BUILD" package dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$BUILD/lib" >&2 ||
        { say "Maven could not build $SRC"; exit 1; }
    echo "$hash" >"$BUILD/stamp"
}

pid() { [ -f "$PIDFILE" ] && cat "$PIDFILE"; }
running() { local p; p=$(pid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

start() {
    provision
    if ! running; then
        if answers; then
            say "something else already listens on 127.0.0.1:$PORT; set CANON_NEO4J_PORT to another port"
            exit 1
        fi
        mkdir -p "$HOME_DIR"
        say "starting Neo4j on 127.0.0.1:$PORT (data in $HOME_DIR)"
        # The flags of Neo4j's own launcher (neo4j-admin server console): its storage and
        # off-heap code reach into these JDK internals. A small heap: a test server on a
        # 2-core machine shared with the build.
        # shellcheck disable=SC2086 # CANON_NEO4J_JAVA_OPTS is a list of flags
        setsid java -Xms"${CANON_NEO4J_HEAP_MIN:-256m}" -Xmx"${CANON_NEO4J_HEAP:-768m}" \
            -Xlog:gc,safepoint:file="$HOME_DIR/gc.log":time,uptime,level,tags:filecount=2,filesize=10m \
            "${CANON_NEO4J_GC:--XX:+UseG1GC}" -XX:-OmitStackTraceInFastThrow \
            -XX:+UnlockExperimentalVMOptions -XX:+TrustFinalNonStaticFields \
            -XX:+DisableExplicitGC -Djdk.nio.maxCachedBufferSize=1024 -Dio.netty.tryReflectionSetAccessible=true \
            -Djdk.tls.ephemeralDHKeySize=2048 -Djdk.tls.rejectClientInitiatedRenegotiation=true \
            -XX:FlightRecorderOptions=stackdepth=256 -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
            --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
            --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
            --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
            --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED \
            --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
            -Dlog4j2.disable.jmx=true -Dfile.encoding=UTF-8 ${CANON_NEO4J_JAVA_OPTS:-} \
            -cp "$BUILD/neo4j-launcher-1.jar:$BUILD/lib/*" canon.Launcher "$HOME_DIR" "$PORT" "$PASSWORD" \
            >"$LOG" 2>&1 </dev/null &
        echo $! >"$PIDFILE"
    fi
    for _ in $(seq 1 240); do
        grep -q "listening on" "$LOG" 2>/dev/null && answers && break
        running || { tail -30 "$LOG" >&2; say "Neo4j exited while starting (log: $LOG)"; exit 1; }
        sleep 0.5
    done
    answers || { tail -30 "$LOG" >&2; say "Neo4j did not answer on $PORT within 120 s"; exit 1; }
    echo "$URL"
}

stop() {
    if running; then
        local p
        p=$(pid)
        kill "$p"
        for _ in $(seq 1 120); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
        kill -0 "$p" 2>/dev/null && { say "Neo4j did not stop within 60 s; killing it"; kill -9 "$p"; }
        rm -f "$PIDFILE"
    else
        say "not running"
    fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
url) echo "$URL" ;;
build) provision ;;
*)
    echo "usage: $0 start|stop|url|build" >&2
    exit 2
    ;;
esac
