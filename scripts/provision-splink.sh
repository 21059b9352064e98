#!/usr/bin/env bash
# Splink (with DuckDB) in its own venv, for `make bench-resolution`'s comparison only:
# canon never imports it. Prints the venv's Python.
set -euo pipefail
VENV=${SPLINK_VENV:-$HOME/.cache/canon/splink}
VERSION=5.0.0
# DuckDB pinned too: splink allows any, and a new DuckDB can refuse what an older one took
# (2.x refuses the `x -> ...` lambdas splink_run.py once used).
DUCKDB_VERSION=2.0.1
if [ ! -f "$VENV/.splink-$VERSION" ]; then
    echo "provision: installing splink $VERSION from PyPI into $VENV (the resolution benchmark's baseline)" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "splink==$VERSION" "duckdb==$DUCKDB_VERSION" >&2
    touch "$VENV/.splink-$VERSION"
fi
echo "$VENV/bin/python"
