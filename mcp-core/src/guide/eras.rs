//! # One handler, both protocol eras
//!
//! A request whose `_meta` names `io.modelcontextprotocol/protocolVersion: "2026-07-28"` is served
//! in the 2026 era: no `initialize`, no session (over HTTP: no `Mcp-Session-Id`; `Mcp-Method` and
//! `Mcp-Name` must match the body), the client's capabilities in each request's `_meta`,
//! `server/discover`, results with `resultType` and the server's identity, caching hints
//! (`ttlMs`, `cacheScope`; `ServerBuilder::cache_hint`). Every other request belongs to a
//! 2025-era session. One server process serves both at once, with the same handlers.
//!
//! What changes for a handler is how it asks the user. In a 2025-era session `ctx.elicit(…)`
//! sends `elicitation/create` and waits. A 2026-era request gets an `input_required` result
//! instead (the questions in `inputRequests`, a sealed `requestState`), and the client sends the
//! request again with the answers. **The handler is replayed**: each round runs it again from the
//! start, and its questions are answered from what the client has given so far
//! (`typed_mcp::multi_round` has the details). What that means for your code:
//!
//! ```rust
//! use std::collections::HashSet;
//! use std::sync::Mutex;
//!
//! use typed_mcp::prelude::*;
//!
//! /// Payments made, by request.
//! #[derive(Default)]
//! struct Ledger(Mutex<HashSet<String>>);
//!
//! impl Ledger {
//!     /// Records `id`; false if it was recorded before.
//!     fn first_time(&self, id: &str) -> bool {
//!         self.0.lock().map(|mut ids| ids.insert(id.to_owned())).unwrap_or(false)
//!     }
//! }
//!
//! /// Sends money once the user confirms.
//! ///
//! /// # Arguments
//! /// * `to` - Who receives it.
//! /// * `cents` - How much.
//! #[tool]
//! async fn pay(ctx: Context, ledger: State<Ledger>, to: String, cents: u64) -> Result<String, String> {
//!     // Before a question: runs again on every round, so it only reads.
//!     let question = format!("Send {cents} cents to {to}?");
//!     if !ctx.confirm(question).key("confirm").await.map_err(|e| e.to_string())? {
//!         return Ok("Nothing was sent.".into());
//!     }
//!     // After the last question. A client may still resend its last retry, so the side effect
//!     // is keyed by the request: `round_trip_id` is the same in every round of one request.
//!     if let Some(id) = ctx.round_trip_id() {
//!         if !ledger.first_time(id) {
//!             return Ok("Already sent.".into());
//!         }
//!     }
//!     Ok(format!("Sent {cents} cents to {to}."))
//! }
//!
//! let server = Server::builder("payments", "1.0.0").state(Ledger::default()).tools(tools![pay]).build().unwrap();
//! # let _ = server;
//! ```
//!
//! - **Side effects**: code before a question runs again on every round (a handler asking two
//!   questions in turn runs its first part three times). Do what must happen once after the last
//!   question, and guard it with an idempotency key such as `ctx.round_trip_id()`.
//! - **Keys**: each question is keyed by the order the run asks it in (`input-0`, `input-1`, …;
//!   `ctx.sample` and `ctx.roots` count too), so ask in the same order on every run. A question
//!   that depends on anything but the arguments and earlier answers (the time, a database read, a
//!   deployment in between) gets a stable key: `.key("…")` on `ctx.elicit`, `elicit_value`,
//!   `confirm`, `choose` and `elicit_url`. Questions asked together (`tokio::join!`) go out in one
//!   round.
//! - **Why**: nothing is kept between rounds, so the server stays stateless: any instance behind a
//!   load balancer can take any round. Give every instance the same
//!   `ServerBuilder::request_state_key(StateKey::from_bytes(secret))`; a retry on an instance with
//!   another key (by default each process has a random one) is refused with -32602
//!   `invalid requestState: requestState failed verification` before the handler runs.
//! - **The sealed state**: HMAC-SHA256, bound to the method, the tool/prompt/resource, a digest of
//!   the arguments and the principal, and valid for `request_state_ttl` (15 minutes by default).
//!   A state that was altered, expired or presented on another request is refused and the handler
//!   does not run. It is signed, not encrypted: it carries only the answers the client gave and
//!   the request's round-trip id.
//! - **URL mode**: there is no `elicitationId` on the wire and no
//!   `notifications/elicitation/complete`; `url_elicitations().complete(id)` marks the flow done
//!   and the client's retry finds it done. The ids a handler makes (`new_url_elicitation_id`,
//!   `elicit_url`) and `ctx.session_key()` are the same in every round of one request (and new for
//!   the next request), so the flow the user visited is the one the handler sees. A tool's `UrlElicitationRequired` error
//!   becomes a URL input request; once the user has been to the page, the retry succeeds (a
//!   declined flow ends the call with the error).
//! - Questions are possible in `tools/call`, `prompts/get` and `resources/read`. Timeouts of
//!   questions do not apply (nothing waits), and logs are sent only when the request's `_meta`
//!   names a level. `ctx.is_multi_round_trip()` tells the eras apart.
//! - **Capabilities**: a handler that fails after `ctx.elicit`, `ctx.sample` or `ctx.roots` found
//!   the client lacking the capability makes the request fail with -32021
//!   (`MissingRequiredClientCapability`, naming it in `data.requiredCapabilities`); check
//!   `ctx.can_elicit()` / `can_sample()` / `can_list_roots()` to degrade gracefully instead. An
//!   answer that is not a result of the request it answers is refused with -32602.
//! - **Change notifications**: a 2026-era client opens `subscriptions/listen` instead of the GET
//!   stream and `resources/subscribe`. The server acknowledges, then sends on that request's
//!   stream only what the client opted in to, tagged with the subscription id:
//!   `add_tool`/`remove_prompt`/`notify_list_changed` reach the subscriptions that asked for that
//!   list (with `dynamic_tools()` and friends), `notify_resource_updated(uri)` those naming the
//!   URI (with `resource_subscriptions()`). `server.end_subscriptions()` closes them gracefully.
//! - **HTTP**: a 2026-era error has its status (404 with -32601; 400 with -32602, -32020, -32021
//!   or -32022). `ToolDef::header_param("region", "Region")` mirrors an argument into the
//!   `Mcp-Param-Region` header (`x-mcp-header`), which the server checks against the body.
//!
//! `tests/tests/era_2026_wire.rs` shows all of it in raw JSON-RPC; the interop tests run the pinned
//! Python client against the `elicitation` and `url_elicitation` examples in both eras, over stdio
//! and HTTP.
