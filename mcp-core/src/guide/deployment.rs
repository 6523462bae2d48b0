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
//! - **What runs on the owner**, one HTTP hop away, and why: the `GET` stream and the
//!   `Last-Event-ID` resumption of the streams it served (the owner numbers and keeps their
//!   events, and receives the session's announcements); `DELETE` (it ends the session and its
//!   record); `logging/setLevel` and `resources/subscribe`/`unsubscribe` (they change the
//!   record; replicas then start again from the new state); the answer to a question the
//!   owner's own handler asked (the handler awaits it there); and the calls of tools named with
//!   `Backplane::on_owner` (tools keeping per-session state in their process, keyed by
//!   `Context::session_key`). Requests landing on their owner cost what they cost in a single
//!   process: the owner does not ask Redis.
//! - **A replica's streams are resumable too.** Their event ids end with `@<instance>`: the
//!   instance serving the replica keeps their events (up to 256 per session, for as long as
//!   it keeps the replica), in its memory and, with `Redis::backplane`, written behind to Redis
//!   under the session and its own name. A client reconnecting with one of them on any instance
//!   is sent there in one hop, for the events it missed and then the live ones. Once that
//!   instance has left (a rolling restart, a crash), the instance the client reconnects to
//!   replays what it missed from Redis, and the stream ends there (the request ran on the
//!   instance that left; one still running then was cancelled, and its client retries it).
//!   Another user's id, an event no longer kept, or a session that ended is answered `404`; a
//!   malformed id `400`.
//! - **Takeover in about a second.** When the owner is needed and its connection is refused (or
//!   not made within a second), the instance that needed it takes the session over on the spot
//!   and serves the request: the client sees no error. When its lease lapsed (it renews its
//!   presence every third of a second, and counts as gone after a second without:
//!   `Backplane::heartbeat`), the next request needing it does the same; a request forwarded
//!   to an owner that accepts it but answers nothing (its process hung or was stopped: its
//!   kernel still accepts connections) waits while the forwarding instance looks at the owner's
//!   lease every quarter second, and is served there once the lease lapsed: about a second after
//!   the owner stopped, with no `503` (measured: 1.01 s to 1.02 s, a `shared` process stopped
//!   with SIGSTOP). Requests served on replicas never wait for the owner at all. A session
//!   taken over counts against the new owner's `max_sessions` like one it opened. A call that
//!   was running on an instance that died ends with a JSON-RPC error the client receives; so
//!   does one still running on an instance whose session moved away (it left, or lost the
//!   session to a takeover).
//! - **A store outage is not a death.** When Redis was out of reach for longer than a lease
//!   (a failover takes two or three seconds), every instance's announcement lapsed, though they
//!   all live. An instance that finds its own announcement lapsed when it reaches Redis again
//!   gives the others three leases to announce themselves again before it takes a session
//!   over from one of them (a request needing such an owner waits meanwhile), and a takeover
//!   is dropped when the owner announced itself again in the meantime. After its subscription
//!   to the bus was made again, an instance drops its replicas (a message it missed could have
//!   made them stale) and builds them again from Redis as requests come; a replica dropped
//!   while a call of its runs still takes the answers to that call's questions.
//! - **Slow is not gone.** An instance's beats run on a thread of their own, through a Redis
//!   connection of their own: an instance whose runtime is busy (its workers held by long
//!   polls or blocking work, its host overloaded for a moment) keeps its lease, and a request
//!   forwarded to it waits for its answer instead of running twice. Beats stop when the
//!   server's runtime made no progress for 5 s (`RUNTIME_STALL_LIMIT`): a runtime stuck for good
//!   loses its sessions about six seconds after it stopped, a stopped process after one.
//!   Measured: an owner whose only worker was blocked for 2.5 s (two and a half leases) kept its
//!   session, and a request forwarded to it meanwhile was answered by it, once.
//! - **No session before the first beat.** An instance records a session as its own (opens
//!   one, takes one over) only while its lease is confirmed: just started, it waits for its
//!   first beat to reach Redis (up to 5 s, then `503` with `Retry-After`). A session recorded
//!   earlier would name an owner Redis has no address for, which the next instance it reaches
//!   takes for gone: it would take the session over while its owner still serves it.
//! - **An owner taken over while it lives** (its process stopped and resumed, or cut off from
//!   Redis but not from the other instances) does not serve the sessions it lost. Its next beat that reaches Redis finds the lease lapsed, asks Redis which
//!   of its sessions are someone else's now, and ends its copy of those (their running requests
//!   end with an error, their `GET` streams close; the client's next `GET` reaches the new
//!   owner). A request forwarded to it while its own lease, as it last renewed it, is older than
//!   a second waits for that beat first (so a request another instance gave up waiting for is
//!   not run here too when it resumes: the session is another's by then). Its tasks are not
//!   failed by such a stall: a task's runner counts as gone 6 s after its last beat. One case is
//!   not covered: a forwarded request that a live owner was running, unanswered, when its beats
//!   stopped reaching Redis for a second is run again by the instance that took the session
//!   over. Where processes may be stopped that long and resumed, give them a longer heartbeat.
//! - **Graceful shutdown** (`StreamableHttp::drain`, or `serve` with `HttpConfig::shutdown_grace`
//!   when its shutdown future completes): `/ready` answers `503` and `initialize` is refused
//!   with `503` and `Retry-After`; what runs here (requests from their arrival to the end of
//!   their response streams, requests relayed to other instances, questions awaiting answers,
//!   tasks' handlers) finishes within the grace while the instance keeps serving what comes for
//!   it. A request another instance forwards to it for a session with nothing running here is
//!   handed back (`503` with `mcp-instance-leaving`, between instances only): that instance
//!   takes the session over, with its events written out first, and serves the request, so
//!   sessions leave a draining instance as soon as they are used. Once nothing runs, no new work
//!   is let in (answers and cancellations still are); the SSE events not yet written behind are
//!   flushed to Redis; streams relayed from other instances end (their clients reopen them
//!   elsewhere); then the instance withdraws from Redis and closes, and the next request needing
//!   one of its sessions takes it over at once. A task still running when the grace ends cannot
//!   move (its handler is a future in this process): it is cancelled, and reported so.
//! - **Answers that meet trouble on the way.** Our client sends an answer to a server's question
//!   again when a gateway or an instance refuses it with `502`, `503` or `504` (or the
//!   connection fails), up to four more times within about two seconds: a server ignores an
//!   answer it already has, and a lost one would leave the question's call waiting.
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
//! `instance:{id}` (address; the heartbeat lease, 1 s, renewed every ⅓ s) and `alive:{id}` (6 s:
//! how long an instance's tasks outlive its last beat before they count as failed),
//! `session:{id}` (owner) and `state:{id}` (what a takeover needs), for the idle timeout plus
//! 3 s, renewed every 2 s while the session is in use and deleted when it ends; `events:{id}`
//! (the session's newest 256 SSE events, expiring 31 minutes after the newest, deleted when the
//! session ends; `Redis::events` sets both);
//! `deployment:started` and, for a lease after Redis came back empty, `deployment:recovering`
//! (one small key each); `secret:{name}` (shared keys, one per name); `task:{id}` (a task's
//! record: status, questions, result or error, user, running instance; for the task's `ttlMs`
//! from its creation, a day when it has none; a Redis that comes back empty has lost them, and
//! their ids are then unknown). The bus is pub/sub: nothing of it is stored. A load balancer
//! needs nothing sticky; it should stop sending to an instance that refuses connections.
//!
//! ## Where Redis runs: one node, a Cluster, Sentinel, TLS
//!
//! `Redis::connect` (and the examples' `--redis` / `REDIS_URL`) reads one connection string per
//! topology:
//!
//! | form | topology |
//! |---|---|
//! | `redis://host:6379/0` | one node (`rediss://host:6380/0` over TLS) |
//! | `redis://a:7000,redis://b:7000,redis://c:7000` | a Redis Cluster: some of its nodes, comma-separated (`rediss://` for TLS); the others are found from them |
//! | `redis+sentinel://s1:26379,s2:26379/mymaster` | a primary and its replicas watched by Sentinels, the primary found by its name (`rediss+sentinel://` when the primary speaks TLS) |
//!
//! On a Cluster every script names its keys, a session's keys share its id as hash tag (one
//! slot), and the bus is sharded pub/sub on Redis 7. During a master's failover (the node
//! timeout plus an election, about two seconds with a one-second node timeout) or a Sentinel
//! promotion, requests needing Redis get `503` with `Retry-After`; requests served from a
//! session held in memory (on its owner or a replica) go on.
//!
//! Over TLS (`rediss://`), the server's certificate is checked against the platform's roots (or
//! those in the file `SSL_CERT_FILE` names). A Redis whose certificate a private authority
//! signed (as managed services often give) is reached with
//! `Redis::connect_with_ca(spec, ca_pem)`, one node or a Cluster; the examples take the
//! authority's PEM file from `--redis-ca` or `REDIS_CA_FILE`. `tests/tests/backplane_redis.rs` runs the
//! registry, the bus, the task store and two `shared` processes against a `redis-server` speaking
//! TLS only, its certificate signed by a CA of the test's own.
//!
//! ## Trust: the deployment secret, and what access to Redis allows
//!
//! The instances of a deployment trust each other: a request one of them forwards to a
//! session's owner is served on its word, and what one says on the bus (a client's answer for
//! the instance that asked, a message for a session's `GET` stream, a task's change) is acted
//! on. Give every instance the same secret, `Backplane::secret` (32 random bytes or more; the
//! `shared` example takes `--secret` or `DEPLOYMENT_SECRET`), and that word is sealed:
//!
//! - every message on the bus is sealed with HMAC-SHA256 over the message, the instance sending
//!   it and the time; a message that is not sealed with the secret, was sent over a minute ago,
//!   or is of a version of the bus's vocabulary the instance does not speak (an instance of
//!   another release) is dropped, logged and counted (`StreamableHttp::bus_messages_dropped`);
//! - a request an instance forwards carries its sealed word (`mcp-forwarded-seal`): the user it
//!   verified, the access token's details, the session, the method, a digest of the body and
//!   the time. The owner serves the request on that word, without checking the token again
//!   (so a DPoP proof, good once, is not refused as replayed by the owner); a request that
//!   names an instance (`mcp-forwarded-by`) without a valid seal is refused with `403`, and the
//!   instance that forwards never passes on a client's own such headers.
//!
//! **With a secret**, access to Redis gives its holder what Redis holds, and nothing of the
//! instances': it can read the records (which instance owns which session, the sessions'
//! state: protocol version, client capabilities, log level, subscriptions, user name; tasks'
//! records and results; SSE events kept for resumption) and delete or change them (ending
//! sessions, or making an instance take a session over), but it cannot make an instance run a
//! request, answer a question, or send anything to a client. Keep secrets that Redis must not
//! read out of it: `Redis::shared_secret` keeps its secret *in* Redis (fit for a deployment
//! that trusts Redis like itself, as the `shared` example does without `--secret`).
//!
//! **Without a secret**, whoever can publish on the bus can act as an instance: deliver
//! answers into sessions, announce changes, reach the `GET` streams. The instance logs a
//! warning at start. A client still cannot skip anything by naming an instance: a request
//! claiming to be forwarded is never served on a replica, and a draining instance hands over
//! only the claimant's own session.
//!
//! **The hop over TLS**: a forwarded request carries the client's headers, its access token
//! included. Where the network between the instances is not private, serve each instance over
//! TLS (`HttpConfig::tls`, feature `http-tls`) and announce its `https://` address in
//! `Backplane::new`: the others then reach it over TLS, checking its certificate against the
//! platform's roots and those given with `Backplane::hop_roots` (a deployment's own CA). An
//! owner whose certificate is not trusted (or that does not speak TLS at its `https://`
//! address) is answered `503` and logged, and its session is not taken over: it is alive.
//! `tests/tests/backplane_tls.rs` runs two instances this way with a CA of the test's own.
//!
//! **Rotating the secret**: deploy the new secret with the old one as
//! `Backplane::previous_secret` to every instance (each seals with the new one, and accepts
//! both); once every instance runs with both, deploy again without the old one.
//!
//! **One Redis, several deployments**: give each its own prefix (`Redis::with_prefix`, the
//! examples' `--redis-prefix` or `REDIS_PREFIX`); deployments under one prefix share sessions,
//! secrets and messages. The default prefix, `mcp`, is warned about at start.
//!
//! ## Rolling restarts
//!
//! 1. Give every instance `HttpConfig::shutdown_grace` longer than your longest request or task
//!    (and keep `Backplane::heartbeat` short: ⅓ s by default), and point the load balancer's
//!    readiness check at `GET /ready` and its liveness check at `GET /live` (served next to `/mcp` by
//!    `serve`; `StreamableHttp::health_router` mounts them elsewhere).
//! 2. Restart one instance at a time: send it SIGTERM (the examples stop on it). It answers
//!    `/ready` with `503`, so the balancer stops sending it new work; it keeps serving what is
//!    addressed to it (answers to its questions, cancellations, its sessions' `GET` streams)
//!    while what runs finishes, flushes its events to Redis, withdraws and exits. Its sessions
//!    are taken over by the first instance that needs their owner; the rest of their requests
//!    are already served wherever they land.
//! 3. Wait until the new instance answers `/ready` with `200`, then go on with the next one.
//!
//! Clients see no error beyond `503` with `Retry-After` (an `initialize` that reached the
//! instance after it began to drain); a task is never failed by the restart (one still
//! running when the grace ends is cancelled, and says so). `tests/tests/backplane_load.rs` restarts
//! three instances this way under continuous load (form elicitations in flight, calls, tasks
//! running) and checks exactly that.
//!
//! ## Capacity
//!
//! Measured on one `redis-server` with two instances of the `shared` example (`INFO
//! commandstats` and `MEMORY USAGE` around each step; `bench http-backplane` counts the same):
//!
//! | what | Redis commands | bytes |
//! |---|---|---|
//! | a session opened (`initialize`) | 1 round trip: `MULTI`, 2 × `SET … PX`, `EXEC` | ~560 sent; kept: 152 (owner key) + 280 (state, a 176-byte JSON) = **~430 bytes per session** |
//! | a call on the session's owner | **0** | 0 |
//! | the first call of a session on another instance | 3 `GET` (owner, its address, state) | ~270 received |
//! | the following calls there | **0** | 0 |
//! | a heartbeat, per instance, every ⅓ s | `SET … PX … GET` (its address), `SET … PX` (its `alive` mark) + one `EVAL` (deployment mark), pipelined | ~200 |
//! | per session used since the last renewal (every 2 s), per instance serving it | 2 `PEXPIRE`, in that beat's pipeline; and one `PUBLISH` per owner listing the sessions a replica served | ~60 |
//! | SSE events (only for requests that stream) | per batch: `RPUSH` per event, then `LTRIM` + `PEXPIRE` per session, one round trip per batch | the frames; at most 256 per session |
//! | a session ended | one `EVAL` (`DEL` of both keys if still its owner), one `PUBLISH` | — |
//!
//! Tasks (from the store's commands): created with one `SET … NX PX`; each change (working,
//! a question, an answer, the end) one `EVALSHA` and one `PUBLISH` on `tasks:changes`; each
//! `tasks/get` one `GET` (and one `EXISTS` for the running instance's key while the task is not
//! over and runs elsewhere); a record is its JSON, a few hundred bytes, kept for its `ttlMs`.
//!
//! **1,000,000 sessions on 100 instances**, heartbeat ⅓ s (records renewed every 2 s), each
//! session calling once a minute (so ~16,700 calls/s) and landing anywhere:
//!
//! - **Memory**: 1,000,000 × ~430 bytes ≈ **430 MB** of session records (plus Redis's own
//!   overhead, budget ~0.6 GB), plus the events of streaming requests (256 events at most per
//!   session, 31 minutes; a deployment streaming little keeps little) and task records.
//! - **Operations**: calls cost nothing on the owner or on a warm replica; a cold replica costs
//!   3 `GET`s. With 100 instances and a random balancer, each session is, over its life, warmed
//!   on up to 100 instances (each replica is kept 60 s without use): at one call a minute, almost
//!   every call is on a cold replica → ~16,700 × 3 ≈ **50,000 GET/s**. Renewals: every instance
//!   renews the sessions it served since its last beat: ~16,700 calls/s × 2 s × 2 `PEXPIRE` ÷ 2 s
//!   ≈ **33,000 PEXPIRE/s**, plus ~900 heartbeat commands/s (100 instances × 3 beats/s × 3),
//!   plus one `PUBLISH` per (instance, owner) pair per renewal: up to 100 × 99 / 2 s ≈
//!   **5,000 PUBLISH/s**. Sessions opened (say 1 % renewing per minute): a few hundred round trips/s. Total **~90,000 commands/s**,
//!   almost all O(1) on small keys.
//! - **Pub/sub fan-out**: the per-instance channels (`sessions:{tag}`, `instance:{id}`,
//!   `tasks:{id}`) reach one subscriber; the broadcast ones (`sessions`, `broadcast`,
//!   `tasks:changes`: record changes, cancellations, resource and list notifications, task
//!   changes) reach all 100 instances, so each such message costs 100 deliveries.
//! - **What saturates first**: a single Redis node serves ~100,000 small commands/s on one core:
//!   the cold-replica `GET`s and the renewals reach it first, well before memory. Sticky-ish
//!   balancing (hashing the `Mcp-Session-Id` header to a few instances) keeps replicas warm and
//!   cuts the `GET`s to near zero; a heartbeat longer than 2 s (records are then renewed at each
//!   beat) cuts the renewals proportionally. Next is broadcast fan-out, if the application sends
//!   many resource notifications: each is one delivery per instance.
//! - **How Cluster shards it**: every per-session key carries the session's id as its hash tag,
//!   so sessions spread evenly over the slots and each script touches one node; three masters
//!   carry a third of the memory and operations each, and adding masters scales both linearly.
//!   The heartbeat pipeline is split per slot (one round trip per node). Sharded pub/sub keeps
//!   each per-instance channel on one shard; the broadcast channels each live on one shard,
//!   which carries their fan-out.
//!
//! ## Failures under load, measured
//!
//! `tests/tests/backplane_load.rs` kills and replaces instances at random (every second) and kills
//! the Sentinels' primary half way, while clients call continuously through a round-robin
//! balancer: every call ends with its answer, a `503` with `Retry-After` (retried with the same
//! call, which then runs once), or, for a call the killed instance was running, the error of its
//! death; none is lost or runs twice. The test command runs it for 8 s; `MCP_SOAK_SECS=180
//! cargo test -p tests --test integration backplane_load::soak -- --nocapture` runs it longer. Last
//! long run (180 s, debug build, two shared cores, a one-second lease): 335,221 calls, 177
//! instances killed, one Sentinel failover (a replica promoted after 2.2 s); 335,082 answered,
//! 84 refused with `503` and retried, 139 cut by a kill, 0 lost, 0 run twice. The run after the
//! heartbeat moved to a thread of its own (180 s, beside a release build taking both cores
//! most of the time): 131,069 calls, 177 instances killed, a replica promoted after 2.3 s;
//! 130,911 answered, 80 retried on `503`, 158 cut by a kill, 0 lost, 0 run twice.
//!
//! On a six-node Redis Cluster, `backplane_interop.rs` runs the TypeScript SDK client's checks
//! across three instances, kills the master serving the deployment's broadcast channel, and
//! runs them again once the Cluster is healthy: they pass (five runs in five). A command that
//! ran on no node while its slot changed hands (a refused connection, `MOVED`, `READONLY`,
//! `CLUSTERDOWN`) is tried again for up to three seconds, so requests wait through the
//! failover rather than fail. Requests during the two seconds of the failover itself may still
//! get a retryable `503` (an instance that cannot renew its lease serves no forwarded request);
//! clients that honour `Retry-After` see them go through.
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
//! `tests/tests/backplane_*.rs` runs these scenarios against a `redis-server` of its own and
//! server processes behind a
//! round-robin proxy: an elicitation asked on one instance answered through another, a URL flow
//! completed from another instance's page, a resource update reaching a subscriber elsewhere, the
//! owner killed mid-call, a stream resumed on another instance after its owner was killed, an
//! instance shutting down and handing its sessions over, an owner refusing connections taken
//! over at once, Redis stopped and restarted under load, 300 sessions under load, a rolling
//! restart, and the soak above.
