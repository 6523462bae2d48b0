//! Every integration, interop, conformance and UI test of the SDK, linked into one test binary.
//!
//! One binary instead of one per file: each would link tokio, hyper, axum and the SDK again,
//! which made a clean `cargo test --workspace` slow to link and heavy on disk. Each file below
//! stays a module of its own; run one with `cargo test -p tests --test integration <module>::`.
//!
//! A file is named `<area>_<feature>`, so that one area's files sit together; a feature alone
//! in its area keeps its plain name. Helpers two files need live in `support/` (or in the
//! `tests` library, `tests/src/`, when a test program of `tests/src/bin/` needs them too).
//!
//! | area | files |
//! | --- | --- |
//! | server features, in process | `skills` (the skills extension, server and client), `completion`, `logging`, `prompts`, `resources`, `sampling_roots`, `middleware`, `telemetry`, `testing_harness`, `apps` (MCP Apps; `apps_browser` in Chromium) |
//! | the 2026-07-28 revision | `era_2026_wire`, `subscriptions`, `tasks` (`tasks_redis` on a shared deployment) |
//! | elicitation | `elicitation_form`, `elicitation_url`, `elicitation_page` (the URL example's page under attack), `elicitation_schema` (what `#[derive(Elicit)]` sends) |
//! | macros | `macros_tool` (run time), `macros_ui_tool`, `macros_ui_elicit`, `macros_ui_prompt_resource`, `macros_ui_skills` (compile-time diagnostics, trybuild) |
//! | transports, server side | `http_transport`, `http_param_headers`, `http_session_limits`, `http_tls`, `authorization` (bearer tokens), `stdio_server` |
//! | our client | `client_in_process`, `client_stdio`, `client_http`, `client_get_stream`, `client_protocol`, `client_era_2026`, `oauth_client` |
//! | robustness | `bad_input`, `faults`, `isolation`, `load` |
//! | shared deployment (Redis) | `backplane_redis`, `backplane_release`, `backplane_resume`, `backplane_sharing`, `backplane_tls`, `backplane_trust`, `backplane_takeover`, `backplane_failover`, `backplane_load`, `backplane_interop`, `backplane_isolation` |
//! | official SDKs and tools | `interop_stdio`, `interop_http`, `interop_elicitation`, `interop_surface`, `interop_oauth`, `interop_client` (our client, their server), `interop_v2_client`, `interop_v2_server`, `interop_skills` (the skills extension with the TypeScript v2 SDK, both ways), `interop_inspector` |
//! | the gateway (`mcp-gateway`) | `gateway_peers` (our client; the TypeScript v1 and v2 and Python SDK servers behind it), `gateway_clients` (the TypeScript v2 and Python SDK clients and the Inspector, to the same servers), `gateway_conformance` (the suite's server scenarios through the gateway) |
//! | conformance suite | `conformance` (server scenarios), `conformance_client`, `conformance_skills` (the skills extension's scenarios, run by name) |
//! | examples | `examples_programs`, `examples_table` |
//!
//! Packaging and documentation builds (`packaging`, `docs`) are the `publishing` binary
//! (`publishing.rs`), run after this one.

mod support;

mod apps;
mod apps_browser;
mod authorization;
mod backplane_failover;
mod backplane_interop;
mod backplane_isolation;
mod backplane_load;
mod backplane_redis;
mod backplane_release;
mod backplane_resume;
mod backplane_sharing;
mod backplane_takeover;
mod backplane_tls;
mod backplane_trust;
mod bad_input;
mod client_era_2026;
mod client_get_stream;
mod client_http;
mod client_in_process;
mod client_protocol;
mod client_stdio;
mod completion;
mod conformance;
mod conformance_client;
mod conformance_skills;
mod elicitation_form;
mod elicitation_page;
mod elicitation_schema;
mod elicitation_url;
mod era_2026_wire;
mod examples_programs;
mod examples_table;
mod faults;
mod gateway_clients;
mod gateway_conformance;
mod gateway_elicitation;
mod gateway_lifecycle;
mod gateway_peers;
mod gateway_relay;
mod gateway_relays;
mod http_param_headers;
mod http_session_limits;
mod http_tls;
mod http_transport;
mod interop_client;
mod interop_elicitation;
mod interop_http;
mod interop_inspector;
mod interop_oauth;
mod interop_skills;
mod interop_stdio;
mod interop_surface;
mod interop_v2_client;
mod interop_v2_server;
mod isolation;
mod load;
mod logging;
mod macros_tool;
mod macros_ui_elicit;
mod macros_ui_prompt_resource;
mod macros_ui_skills;
mod macros_ui_tool;
mod middleware;
mod oauth_client;
mod prompts;
mod resources;
mod sampling_roots;
mod skills;
mod stdio_server;
mod subscriptions;
mod tasks;
mod tasks_redis;
mod telemetry;
mod testing_harness;
