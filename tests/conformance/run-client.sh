#!/usr/bin/env bash
# Runs the client scenarios of the pinned MCP conformance suite against a client command:
#
#   suite        what runs                                                      judged by
#   0.1.16       @modelcontextprotocol/conformance 0.1.16, one run per scenario:  every check passes
#                initialize, tools_call, elicitation-sep1034-client-defaults,
#                sse-retry
#   2025-11-25   0.2.0-alpha.12 `client --requirements 2025-11-25` (every        client-baseline-2025-11-25.yml
#                client scenario the revision requires, scored or not), then
#                the 2025-03-26 authorization fallbacks at this revision
#                (`--scenario … --spec-version 2025-11-25 --force`)
#   2026-07-28   0.2.0-alpha.12 `client --requirements 2026-07-28` (the          client-baseline-2026-07-28.yml
#                stateless revision; the client is told so in
#                MCP_CONFORMANCE_PROTOCOL_VERSION), then the same fallbacks
#
# Usage: tests/conformance/run-client.sh [--suite 0.1.16|2025-11-25|2026-07-28] [--output-dir DIR] [COMMAND]
#
# COMMAND defaults to target/debug/conformance-client (build it first with
# `cargo build -p tests --bin conformance-client`); the suite appends the test server's URL
# and sets MCP_CONFORMANCE_SCENARIO. Without --suite all three are run. With --output-dir, each
# scenario's checks are written under DIR/<suite>/.
#
# Exits 0 when every run passes. Install the suite first with tests/conformance/setup.sh.
# `cargo test` does all this itself (tests/tests/conformance_client.rs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
node="$here/node_modules/.bin/node"

suites=(0.1.16 2025-11-25 2026-07-28)
scenarios=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
# Servers without protected resource metadata: the requirement sets leave these out (the
# revision that described them is superseded), but a client still meets such servers.
legacy_scenarios=(auth/2025-03-26-oauth-endpoint-fallback auth/2025-03-26-oauth-metadata-backcompat)
output_dir=""
command="$root/target/debug/conformance-client"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --suite) suites=("$2"); shift 2 ;;
        --output-dir) output_dir="$2"; shift 2 ;;
        -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run-client.sh: unknown option $1" >&2; exit 2 ;;
        *) command="$1"; shift ;;
    esac
done

if [[ ! -x "$node" || ! -d "$here/node_modules/conformance-0.1" || ! -d "$here/node_modules/conformance-0.2" ]]; then
    echo "run-client.sh: the conformance suite is not installed; run tests/conformance/setup.sh" >&2
    exit 2
fi

status=0
for suite in "${suites[@]}"; do
    out=()
    case "$suite" in
        0.1.16)
            for scenario in "${scenarios[@]}"; do
                if [[ -n "$output_dir" ]]; then
                    out=(--output-dir "$output_dir/$suite")
                fi
                echo "==> conformance $suite client scenario $scenario"
                if ! "$node" "$here/node_modules/conformance-0.1/dist/index.js" client \
                    --command "$command" --scenario "$scenario" "${out[@]}"; then
                    status=1
                fi
            done
            ;;
        2025-11-25|2026-07-28)
            if [[ -n "$output_dir" ]]; then
                out=(--output-dir "$output_dir/$suite")
            fi
            echo "==> conformance $suite client requirements"
            if ! "$node" "$here/node_modules/conformance-0.2/dist/index.js" client \
                --command "$command" --requirements "$suite" \
                --expected-failures "$here/client-baseline-$suite.yml" "${out[@]}"; then
                status=1
            fi
            for scenario in "${legacy_scenarios[@]}"; do
                echo "==> conformance $suite client scenario $scenario"
                if ! "$node" "$here/node_modules/conformance-0.2/dist/index.js" client \
                    --command "$command" --scenario "$scenario" --spec-version "$suite" --force \
                    --expected-failures "$here/client-baseline-$suite.yml" "${out[@]}"; then
                    status=1
                fi
            done
            ;;
        *) echo "run-client.sh: unknown suite $suite (expected 0.1.16, 2025-11-25 or 2026-07-28)" >&2; exit 2 ;;
    esac
done
exit "$status"
