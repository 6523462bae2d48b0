#!/usr/bin/env bash
# Installs the pinned interop clients that `cargo test` drives against the example servers:
#   - the TypeScript SDK (v1, and the v2 client and server), the MCP Inspector and the MCP Apps host-side
#     bridge, from package-lock.json, into tests/interop/node_modules (npm ci);
#   - the Python SDK, from requirements.txt, into the virtualenv tests/interop/.venv.
# Needs node and npm (Node.js 18 or newer: npm runs on it, the scripts on the pinned Node.js 22) and python3 (3.10 or newer, with its venv module).
# Safe to run again: it reinstalls exactly what the pins say.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

python="${PYTHON:-python3}"

echo "interop: installing the TypeScript client (npm ci)"
npm ci --no-audit --no-fund

echo "interop: installing the Python client into $here/.venv"
if [[ ! -x .venv/bin/python ]]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt

echo "interop: node $(node --version), $(.venv/bin/python --version), \
@modelcontextprotocol/sdk $(node -p 'require("./node_modules/@modelcontextprotocol/sdk/package.json").version'), \
@modelcontextprotocol/client $(node -p 'require("./node_modules/@modelcontextprotocol/client/package.json").version'), \
@modelcontextprotocol/ext-apps $(node -p 'require("./node_modules/@modelcontextprotocol/ext-apps/package.json").version'), \
mcp $(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("mcp"))')"
