//! # Running on more than one machine
//!
//! A Streamable HTTP server keeps a 2025-era session in the process that opened it: its pending
//! questions to the user, its SSE streams, its URL-mode flows, its subscriptions. To run N
//! identical instances behind any load balancer, give each a *backplane*: the `typed-mcp-redis` crate
//! keeps in Redis what the instances must share, and `HttpConfig::backplane` switches a server to it.
//!
//! ```text
//!                  ┌──────────────┐   a request is served where it lands (a replica of the
//!  clients ──LB──▶ │ instance A   │   session, from its state in Redis); only what must run on
//!   (nothing       │ instance B   │◀─ the owner takes one HTTP hop there; answers to questions
//!    sticky)       │ instance C   │   and cancellations travel on the bus
//!                  └──────┬───────┘
//!                         │ owners, heartbeats, session state, events, tasks, pub/sub
//!                      ┌──▼──┐
//!                      │Redis│  one node, a Cluster, or a primary behind Sentinels
//!                      └─────┘
//! ```
//!
//! ```rust,no_run
//! # #[cfg(feature = "http")]
//! # async fn run(server: typed_mcp::Server,
//! #              registry: std::sync::Arc<dyn typed_mcp::transport::http::SessionRegistry>) -> std::io::Result<()> {
//! use typed_mcp::transport::http::{Backplane, HttpConfig};
//!
//! // With typed-mcp-redis: `typed_mcp_redis::Redis::connect("redis://redis:6379/")?.backplane(address)`,
//! // which also carries notifications between the instances and keeps SSE events for resumption.
//! let backplane = Backplane::new(registry, "http://10.0.0.7:8080/mcp"); // how the others reach this one
//! let config = HttpConfig::default().backplane(backplane).disable_host_checks();
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
//! server.streamable_http(config).serve(listener, std::future::pending()).await
//! # }
//! ```
//!
//! - **Sessions, served where they land.** The instance that answers `initialize` owns the
//!   session and records it, with its state, in Redis. A request that lands on another instance
//!   is served there, on a *replica* built from that state (three reads the first time, none
//!   after): what its handler sends (progress, logs, elicitation and sampling requests, the
//!   result) goes back on the connection the client opened. A question a replica asks carries
//!   its instance in its id, so the client's answer, POSTed anywhere, reaches it over the bus;
//!   cancellations reach whichever instance runs the request the same way.
//! - **What runs on the owner**, one HTTP hop away, and why: the `GET` stream and `Last-Event-ID`
//!   resumption (the owner numbers and keeps the session's events, and receives its
//!   announcements); `DELETE` (it ends the session and its record); `logging/setLevel` and
//!   `resources/subscribe`/`unsubscribe` (they change the record; replicas then start again
//!   from the new state); the answer to a question the owner's own handler asked (the handler
//!   awaits it there); and the calls of tools named with `Backplane::on_owner` (tools keeping
//!   per-session state in their process, keyed by `Context::session_key`). A replica's streams
//!   carry no event ids: a client whose connection to it drops retries the request. Requests
//!   landing on their owner cost what they cost in a single process: the owner does not ask
//!   Redis.
//! - **Takeover in about a second.** When the owner is needed and its connection is refused (or
//!   not made within a second), the instance that needed it takes the session over on the spot
//!   and serves the request: the client sees no error. When its heartbeat lapsed (three beats
//!   of 2 s by default, `Backplane::heartbeat`), the next request needing it does the same.
//!   Requests served on replicas never wait for the owner at all. A session taken over counts
//!   against the new owner's `max_sessions` like one it opened. A call that was running on an
//!   instance that died ends with a JSON-RPC error the client receives.
//! - **Graceful shutdown** (`StreamableHttp::drain`, or `serve` with `HttpConfig::shutdown_grace`
//!   when its shutdown future completes): `/ready` answers `503` and `initialize` is refused
//!   with `503` and `Retry-After`; what runs here (requests, questions awaiting answers, tasks'
//!   handlers) finishes within the grace while the instance keeps serving what comes for it;
//!   the SSE events not yet written behind are flushed to Redis; then the instance withdraws from
//!   Redis and closes, and the next request needing one of its sessions takes it over at once.
//!   A task still running when the grace ends cannot move (its handler is a future in this
//!   process): it is cancelled, and reported so.
//! - **Resumption.** SSE events are kept in the owner's memory (a resumption on the owner costs no
//!   Redis round trip) and written behind to Redis: a background task sends what was stored since
//!   its last round trip in one pipelined round trip, so no request waits for Redis. After a
//!   takeover, the new owner loads them, and a client resuming with `Last-Event-ID` on any instance
//!   gets what it missed, then the session's new events (under ids it has not seen). An event
//!   Redis never got (the instance died first, or Redis was unreachable) cannot be replayed:
//!   resuming from before it is refused with `404`, as when it was trimmed, rather than answered
//!   with a gap; a request that was running on the lost instance replays what was stored of its
//!   stream, then its stream ends (its call ends with an error).
//! - **Notifications and URL flows.** `notify_resource_updated`, list changes and 2026-era
//!   `subscriptions/listen` reach subscribers on every instance (Redis pub/sub).
//!   `url_elicitations().complete(id)` and `url_elicitations().state(id)` work on any instance:
//!   the instance that owns the flow completes it and notifies its session.
//! - **2026-era requests** carry their state in `requestState`: give every instance the same
//!   sealing key (`ServerBuilder::request_state_key`; `Redis::shared_secret` makes one the
//!   instances agree on) and a retry may land anywhere.
//! - **Tasks.** With `ServerBuilder::task_store(redis.task_store())`, every instance answers
//!   `tasks/get` from Redis, and a finished task's result outlives the instance that ran it. The
//!   handler runs on the instance that created the task; a `tasks/update` or `tasks/cancel` landing
//!   elsewhere is handed to it over pub/sub (the handler gets its answer, or is dropped), and its
//!   changes reach `subscriptions/listen` streams naming it on every instance. A task whose
//!   instance died (its heartbeat lapsed) is reported `failed` on the next `tasks/get`.
//! - **Redis trouble is not an outage.** Commands time out within two seconds: a request landing
//!   on its session's owner or on a replica goes on being served, one that needs Redis (a new
//!   session, the first request of a session on an instance) gets `503` with `Retry-After`, and the connection is made
//!   again once Redis is back. A Redis that comes back empty (no persistence) loses the records:
//!   each instance notices at its next heartbeat and records its sessions again; for one lease
//!   meanwhile, a session Redis does not record is answered `503`, not `404`, so no client is
//!   told its live session is gone.
//!
//! What lives in Redis, under the prefix `mcp:` (`Redis::with_prefix`), all of it bounded:
//! `instance:{id}` (address; the heartbeat lease, 6 s), `session:{id}` (owner) and `state:{id}`
//! (what a takeover needs), for the idle timeout plus the lease, renewed while the session is in
//! use and deleted when it ends; `events:{id}` (the session's newest 256 SSE events, expiring
//! 31 minutes after the newest, deleted when the session ends; `Redis::events` sets both);
//! `deployment:started` and, for a lease after Redis came back empty, `deployment:recovering`
//! (one small key each); `secret:{name}` (shared keys, one per name); `task:{id}` (a task's
//! record: status, questions, result or error, user, running instance; for the task's `ttlMs`
//! from its creation, a day when it has none; a Redis that comes back empty has lost them, and
//! their ids are then unknown). The bus is pub/sub: nothing of it is stored. A load balancer
//! needs nothing sticky; it should stop sending to an instance that refuses connections.
//!
//! Three instances locally, behind any round-robin proxy on top of them:
//!
//! ```sh
//! redis-server --port 6379 --save '' --appendonly no &
//! for i in 1 2 3; do
//!   cargo run -p examples --bin shared -- --port 800$i --redis redis://127.0.0.1:6379/ &
//! done
//! ```
//!
//! The `shared` example keeps its tasks and the `requestState` key in that Redis too.
//! `tests/tests/backplane.rs` runs these scenarios against a `redis-server` of its own and
//! server processes behind a
//! round-robin proxy: an elicitation asked on one instance answered through another, a URL flow
//! completed from another instance's page, a resource update reaching a subscriber elsewhere, the
//! owner killed mid-call, a stream resumed on another instance after its owner was killed, an
//! instance shutting down and handing its sessions over, Redis stopped and restarted under load,
//! and 300 sessions under load.
