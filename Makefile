# The README's two commands: `make run` and `make test`.
# Builds go to a cache outside the clone (unless CARGO_TARGET_DIR is set), so repeated runs
# are incremental.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/canon/target

.PHONY: run test provision lint bench bench-graph bench-graph-neo4j bench-resolution bench-collections bench-graphql bench-calls bench-delivery bench-views bench-accuracy bench-fs bench-dashboard screenshots

provision:
	./scripts/provision.sh

run: provision
	cargo run --release --locked --bin canon -- serve

test: provision
	./scripts/test.sh

lint:
	cargo fmt --check
	cargo clippy --all-targets --locked -- -D warnings
	./scripts/lint-cypher.sh

bench: provision
	cargo bench --locked --bench platform


bench-graph: provision
	cargo bench --locked --bench graph

# The same bench on FalkorDB, then on a Neo4j of its own (scripts/neo4j.sh on another port
# and folder than the tests' server, its memory raised for a million entities), stopped and
# deleted afterwards. CANON_BENCH_NEO4J_ENTITIES sizes Neo4j's graph (default: the same 1M).
# Its JVM: a fixed heap touched at start, and ZGC, whose pauses stay under a millisecond where
# G1's young collections (Neo4j allocates ~300 MB/s serving pages) paused 10-30 ms every
# second or so, a page caught in one among the slowest (gc.log in CANON_NEO4J_HOME).
bench-graph-neo4j: provision
	export CANON_NEO4J_PORT=$${CANON_NEO4J_PORT:-7688} \
		CANON_NEO4J_HOME=$${CANON_NEO4J_HOME:-$${CANON_CACHE_DIR:-$$HOME/.cache/canon}/neo4j/bench} \
		CANON_NEO4J_HEAP=$${CANON_NEO4J_HEAP:-2g} CANON_NEO4J_PAGECACHE_MB=$${CANON_NEO4J_PAGECACHE_MB:-2048}; \
	export CANON_NEO4J_HEAP_MIN=$${CANON_NEO4J_HEAP_MIN:-$$CANON_NEO4J_HEAP} \
		CANON_NEO4J_GC=$${CANON_NEO4J_GC:--XX:+UseZGC} \
		CANON_NEO4J_JAVA_OPTS=$${CANON_NEO4J_JAVA_OPTS:--XX:+AlwaysPreTouch}; \
	uri=$$(./scripts/neo4j.sh start | tail -1); [ -n "$$uri" ] || exit 1; \
	CANON_BENCH_NEO4J_URI=$$uri CANON_BENCH_NEO4J_PASSWORD=$${CANON_NEO4J_PASSWORD:-canon-test-password} \
		cargo bench --locked --bench graph; status=$$?; \
	./scripts/neo4j.sh stop; rm -rf "$$CANON_NEO4J_HOME"; exit $$status

bench-resolution: provision
	SPLINK_PYTHON=$${SPLINK_PYTHON:-$$(./scripts/provision-splink.sh)} cargo bench --locked --bench resolution

bench-collections: provision
	cargo bench --locked --bench collections

bench-calls: provision
	cargo bench --locked --bench calls

bench-delivery: provision
	cargo bench --locked --bench delivery

bench-accuracy: provision
	cargo bench --locked --bench accuracy

bench-views: provision
	cargo bench --locked --bench views

bench-graphql: provision
	cargo bench --locked --bench graphql

bench-fs: provision
	cargo bench --locked --bench fs

# The review dashboard in chromium at 1,000,000 entities (CANON_BENCH_ENTITIES): first queue
# row and first suggestion card visible after navigation, beside the server time of each call.
bench-dashboard: provision
	cargo bench --locked --bench dashboard

# The README's screenshots of the dashboard (docs/screenshots/), on a small seeded graph.
screenshots: provision
	CANON_DASHBOARD_SCREENSHOTS=$(CURDIR)/docs/screenshots cargo bench --locked --bench dashboard
