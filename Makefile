# The README's two commands: `make run` and `make test`.
# Builds go to a cache outside the clone (unless CARGO_TARGET_DIR is set), so repeated runs
# are incremental.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/canon/target

.PHONY: run test provision lint bench bench-graph bench-resolution bench-collections bench-graphql bench-calls bench-delivery bench-views bench-accuracy bench-fs

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
