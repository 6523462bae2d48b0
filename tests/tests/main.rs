//! Every integration, interop, conformance and UI test of the SDK, linked into one test binary.
//!
//! One binary instead of one per file: each would link tokio, hyper, axum and the SDK again,
//! which made a clean `cargo test --workspace` slow to link and heavy on disk. Each file below
//! stays a module of its own; run one with `cargo test -p tests --test integration <module>::`.

mod support;

mod apps;
mod apps_browser;
mod authorization;
mod backplane_failover;
mod backplane_interop;
mod backplane_load;
mod backplane_redis;
mod backplane_sharing;
mod backplane_takeover;
mod bad_input;
mod client_get_stream;
mod client_http;
mod client_in_process;
mod client_protocol;
mod client_stateless;
mod client_stdio;
mod completion;
mod conformance;
mod conformance_client;
mod elicit_schema;
mod elicitation;
mod example_programs;
mod examples_table;
mod faults;
mod http_transport;
mod inspector;
mod interop_client;
mod interop_elicitation;
mod interop_http;
mod interop_oauth;
mod interop_stdio;
mod interop_surface;
mod interop_v2_client;
mod interop_v2_server;
mod isolation;
mod load;
mod logging;
mod middleware;
mod modern;
mod oauth_client;
mod param_headers;
mod prompts;
mod resources;
mod sampling_roots;
mod session_limits;
mod stdio_server;
mod subscriptions;
mod tasks;
mod tasks_redis;
mod telemetry;
mod testing_harness;
mod tls;
mod tool_macro;
mod ui;
mod ui_elicit;
mod ui_surface;
mod url_elicitation;
