#!/usr/bin/env bash
# Lints every .cypher file with Neo4j's own parser (tools/cypher-lint), since no Neo4j server
# can run in CI: a query FalkorDB accepts but Neo4j 5 would reject fails here.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d tools/cypher-lint/node_modules ]; then
  npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error >/dev/null
fi
exec node tools/cypher-lint/lint.mjs cypher "$@"
