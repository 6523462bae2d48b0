//! The Redis side of a shared deployment, on one node, a Cluster, behind Sentinel and over TLS
//! (helpers in `support/backplane.rs`):
//!
//! - The registry itself: owners recorded, found, forgotten; an instance whose heartbeat
//!   lapsed is reported gone.
//! - SSE events written behind to Redis, bounded and expiring, and restored by another
//!   instance.
//! - On a Redis Cluster (six nodes, shared by the tests running at once) and behind Sentinel (a
//!   primary, a replica, three Sentinels): the registry, the bus and the task store contract.
//! - Over TLS: a `redis-server` speaking TLS only, its certificate signed by a CA of the test's
//!   own, which the client trusts (`Redis::connect_with_ca`; `REDIS_CA_FILE` for the `shared`
//!   example): the registry, the bus, the task store contract, and two `shared` processes
//!   serving one session; without the CA the connection is refused.
//! - Cost, with a registry and no bus (every request for another instance's session is then
//!   forwarded): a request landing on its session's owner asks the registry nothing; one
//!   landing elsewhere asks it who owns the session, unless it asked within the last heartbeat;
//!   opening a session records it once.

use crate::support::backplane::{Instance, add, post, shared_cluster, started_redis, user};

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::Client;
use typed_mcp::prelude::*;
use typed_mcp::testing::ToolResultExt;
use typed_mcp::transport::http::{HttpConfig, SessionRegistry};
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::{RedisServer, RoundRobinProxy, free_port};

#[tokio::test]
async fn the_registry_records_owners_and_notices_lapsed_instances() {
    let server = RedisServer::start();
    registry_contract(&server.url()).await;
}

/// What a registry on the Redis at `url` (any topology) must do, under the prefix `t`.
async fn registry_contract(url: &str) {
    registry_contract_on(&|| Redis::connect(url).unwrap()).await;
}

/// [`registry_contract`] on the Redis that `connect` reaches.
async fn registry_contract_on(connect: &(dyn Fn() -> Redis + Sync)) {
    let redis = connect().with_prefix("t").unwrap();
    let sessions = redis.sessions();
    // A store no instance has beaten on yet is not known to be complete.
    let recovering = sessions.owner("s1").await;
    assert!(matches!(recovering, Err(typed_mcp::transport::http::BackplaneError::Recovering)), "{recovering:?}");
    sessions.heartbeat("a", "http://a/mcp", Duration::from_millis(300), &[], Duration::from_secs(60)).await.unwrap();
    sessions.claim("s1", "a", "{}", Duration::from_secs(60)).await.unwrap();
    let owner = sessions.owner("s1").await.unwrap().unwrap();
    assert_eq!((owner.instance.as_str(), owner.address.as_deref()), ("a", Some("http://a/mcp")));
    // Only the owner's release forgets the session.
    sessions.release("s1", "b").await.unwrap();
    assert!(sessions.owner("s1").await.unwrap().is_some());
    // The heartbeat lapses: the session is still recorded, its owner reported gone.
    tokio::time::sleep(Duration::from_millis(450)).await;
    let owner = sessions.owner("s1").await.unwrap().unwrap();
    assert_eq!((owner.instance.as_str(), owner.address), ("a", None));
    // One instance takes it over, with its state; a second, later, gets nothing.
    sessions.save_state("s1", "state-1", Duration::from_secs(60)).await.unwrap();
    let taken = sessions.take_over("s1", "a", "b", Duration::from_secs(60)).await.unwrap();
    assert_eq!(taken.as_deref(), Some("state-1"));
    assert_eq!(sessions.take_over("s1", "a", "c", Duration::from_secs(60)).await.unwrap(), None);
    assert_eq!(sessions.owner("s1").await.unwrap().unwrap().instance, "b");
    sessions.release("s1", "a").await.unwrap();
    assert!(sessions.owner("s1").await.unwrap().is_some(), "a no longer owns it");
    sessions.release("s1", "b").await.unwrap();
    assert_eq!(sessions.owner("s1").await.unwrap(), None);
    // A session's record expires unless a heartbeat keeps it.
    sessions.claim("s2", "a", "{}", Duration::from_millis(200)).await.unwrap();
    sessions
        .heartbeat("a", "http://a/mcp", Duration::from_secs(5), &["s2".into()], Duration::from_secs(5))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(sessions.owner("s2").await.unwrap().is_some(), "the heartbeat renewed the session's record");
    sessions.claim("s3", "a", "{}", Duration::from_millis(100)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(sessions.owner("s3").await.unwrap(), None, "an unrenewed record expires");
    // The first beat finds the instance unannounced; the next ones find it announced, until
    // it leaves (or the store loses it).
    assert!(
        !sessions.heartbeat("d", "http://d/mcp", Duration::from_secs(5), &[], Duration::from_secs(5)).await.unwrap()
    );
    assert!(
        sessions.heartbeat("d", "http://d/mcp", Duration::from_secs(5), &[], Duration::from_secs(5)).await.unwrap()
    );
    sessions.claim("s4", "d", "state-4", Duration::from_secs(60)).await.unwrap();
    sessions.leave("d").await.unwrap();
    let owner = sessions.owner("s4").await.unwrap().unwrap();
    assert_eq!((owner.instance.as_str(), owner.address), ("d", None), "a leaving instance is gone at once");
    // Reclaiming records a session only where no owner is recorded, and says whether the
    // instance reclaiming it owns it.
    assert!(!sessions.reclaim("s4", "e", "other", Duration::from_secs(60)).await.unwrap(), "d owns s4");
    assert_eq!(sessions.owner("s4").await.unwrap().unwrap().instance, "d");
    assert!(sessions.reclaim("s4", "d", "state-4", Duration::from_secs(60)).await.unwrap(), "d owns s4");
    assert!(sessions.reclaim("s5", "e", "state-5", Duration::from_secs(60)).await.unwrap(), "s5 was nobody's");
    assert_eq!(sessions.owner("s5").await.unwrap().unwrap().instance, "e");
    assert_eq!(sessions.take_over("s5", "e", "f", Duration::from_secs(60)).await.unwrap().as_deref(), Some("state-5"));
    // Every instance agrees on a shared secret.
    let one = redis.shared_secret("k").await.unwrap();
    let other = connect().with_prefix("t").unwrap().shared_secret("k").await.unwrap();
    assert_eq!(one, other);
}

#[tokio::test]
async fn events_are_written_behind_to_redis_bounded_and_restored_elsewhere() {
    use typed_mcp::transport::http::{EventId, EventStore};
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("t").unwrap();
    let owner = redis.events(3, Duration::from_secs(60));
    let id = |stream, seq| EventId { stream, seq };
    for seq in 1..=4 {
        owner.store("s", id(1, seq), &format!(r#"{{"n":{seq}}}"#));
    }
    owner.store("gone", id(1, 1), "{}");
    owner.forget("gone");
    // Written behind: within moments, and trimmed to the newest three, with an expiry.
    let deadline = Instant::now() + Duration::from_secs(5);
    while typed_mcp_redis::testing::query::<Vec<String>>(&server.url(), &["LRANGE", "t:events:{s}", "0", "-1"])
        .await
        .last()
        != Some(&"1-4\n{\"n\":4}".to_owned())
    {
        assert!(Instant::now() < deadline, "the events did not reach Redis");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let kept: i64 = typed_mcp_redis::testing::query(&server.url(), &["LLEN", "t:events:{s}"]).await;
    assert_eq!(kept, 3);
    let ttl: i64 = typed_mcp_redis::testing::query(&server.url(), &["PTTL", "t:events:{s}"]).await;
    assert!((1..=60_000).contains(&ttl), "the events expire: {ttl}");
    assert!(typed_mcp_redis::testing::keys(&server.url(), "t:events:{gone}").await.is_empty(), "forgotten");
    // Another instance knows nothing of them until it restores the session.
    let heir = redis.events(3, Duration::from_secs(60));
    assert_eq!(heir.replay("s", id(1, 2)), Some(vec![]));
    heir.restore("s").await;
    assert_eq!(
        heir.replay("s", id(1, 2)),
        Some(vec![(id(1, 3), r#"{"n":3}"#.into()), (id(1, 4), r#"{"n":4}"#.into())])
    );
    assert_eq!(heir.replay("s", id(1, 0)), None, "the first event was trimmed: no replay with a gap");
    // Restoring without Redis leaves nothing to replay, and does not hang.
    let mut server = server;
    server.kill();
    let orphan = redis.events(3, Duration::from_secs(60));
    within("restoring without Redis", orphan.restore("s")).await;
    assert_eq!(orphan.replay("s", id(1, 2)), Some(vec![]));
}

/// A registry counting the calls made of it, passing them on to Redis.
struct Counting {
    inner: typed_mcp_redis::RedisSessions,
    claims: std::sync::atomic::AtomicUsize,
    lookups: std::sync::atomic::AtomicUsize,
    saves: std::sync::atomic::AtomicUsize,
}

impl SessionRegistry for Counting {
    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        address: &'a str,
        lease: Duration,
        active: &'a [String],
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<bool, typed_mcp::transport::http::BackplaneError>> {
        self.inner.heartbeat(instance, address, lease, active, session_ttl)
    }

    fn leave<'a>(
        &'a self,
        instance: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.inner.leave(instance)
    }

    fn claim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.claims.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.claim(session, instance, state, session_ttl)
    }

    fn save_state<'a>(
        &'a self,
        session: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.saves.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.save_state(session, state, session_ttl)
    }

    fn take_over<'a>(
        &'a self,
        session: &'a str,
        gone: &'a str,
        instance: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<String>, typed_mcp::transport::http::BackplaneError>> {
        self.inner.take_over(session, gone, instance, session_ttl)
    }

    fn owner<'a>(
        &'a self,
        session: &'a str,
    ) -> typed_mcp::engine::BoxFuture<
        'a,
        Result<Option<typed_mcp::transport::http::Owner>, typed_mcp::transport::http::BackplaneError>,
    > {
        self.lookups.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.owner(session)
    }

    fn release<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.inner.release(session, instance)
    }
}

#[tokio::test]
async fn a_request_on_its_owner_asks_the_registry_nothing_and_forwarded_ones_remember_the_owner() {
    use std::sync::atomic::Ordering::Relaxed;
    let (_redis_server, redis) = started_redis();
    let registry = std::sync::Arc::new(Counting {
        inner: redis.sessions(),
        claims: Default::default(),
        lookups: Default::default(),
        saves: Default::default(),
    });
    let mut urls = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let server = Server::builder("t", "1").tools(tools![add]).build().unwrap();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let backplane = typed_mcp::transport::http::Backplane::new(registry.clone(), url.clone());
        let http = server.streamable_http(HttpConfig::default().backplane(backplane));
        tasks.push(tokio::spawn(async move {
            let _ = http.serve(listener, std::future::pending()).await;
        }));
        urls.push(url);
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&urls[0], None, init).await;
    assert_eq!(status, 200);
    let session = session.unwrap();
    assert_eq!((registry.claims.load(Relaxed), registry.lookups.load(Relaxed)), (1, 0), "initialize records once");
    for id in 2..12 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}});
        let (status, _, body) = post(&urls[0], Some(&session), call).await;
        assert_eq!(status, 200, "{body}");
    }
    assert_eq!(registry.lookups.load(Relaxed), 0, "requests on the owner never ask the registry");
    for id in 12..22 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}});
        let (status, _, body) = post(&urls[1], Some(&session), call).await;
        assert_eq!(status, 200, "{body}");
    }
    let lookups = registry.lookups.load(Relaxed);
    assert!(
        (1..=2).contains(&lookups),
        "the first forwarded request asks who owns the session, the next ones (within a heartbeat) remember it: {lookups}"
    );
    assert_eq!((registry.claims.load(Relaxed), registry.saves.load(Relaxed)), (1, 0));
    for task in tasks {
        task.abort();
    }
}

/// The bus on the Redis at `url`: a message published by one connection reaches a subscriber
/// on another (on a Cluster, through sharded pub/sub).
async fn bus_delivers(url: &str) {
    bus_delivers_on(&|| Redis::connect(url).unwrap()).await;
}

/// [`bus_delivers`] on the Redis that `connect` reaches.
async fn bus_delivers_on(connect: &(dyn Fn() -> Redis + Sync)) {
    use typed_mcp::transport::http::MessageBus;
    let (sender, mut received) = tokio::sync::mpsc::unbounded_channel();
    let stop = tokio_util::sync::CancellationToken::new();
    let listener = connect().with_prefix("b").unwrap().bus();
    listener.subscribe("instance:x".into(), Box::new(move |m| drop(sender.send(m))), stop.clone());
    let speaker = connect().with_prefix("b").unwrap().bus();
    // Subscribing takes a moment: publish until the subscriber hears.
    let heard = within("a message on the bus", async {
        loop {
            speaker.publish("instance:x", "hello".into()).await.unwrap();
            if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), received.recv()).await {
                return m;
            }
        }
    })
    .await;
    assert_eq!(heard, "hello");
    // The bus counts who heard (on a Cluster, where the channel is sharded): one subscriber
    // here, nobody on a channel nobody listens to.
    let counted = speaker.publish_counted("instance:x", "again".into()).await.unwrap();
    assert_eq!(counted, Some(1), "one subscriber heard");
    let counted = speaker.publish_counted("instance:nobody", "hello?".into()).await.unwrap();
    assert_eq!(counted, Some(0), "nobody listens there");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_bus_and_task_store_work_on_a_cluster_and_behind_sentinel() {
    let cluster = shared_cluster();
    let sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    for url in [cluster.url(), sentinel.url()] {
        registry_contract(&url).await;
        bus_delivers(&url).await;
        let redis = Redis::connect(&url).unwrap().with_prefix(format!("c{}", free_port())).unwrap();
        typed_mcp::testing::assert_task_store_contract(&redis.task_store()).await;
    }
    // A session's records share one slot (the scripts touching them all are refused otherwise).
    assert!(!cluster.keys("t:state:{s5}").is_empty(), "{:?}", cluster.keys("t:*"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backplane_runs_over_tls_trusting_a_private_ca() {
    // A `redis-server` speaking TLS only, its certificate signed by a CA of the test's own.
    let ca = crate::support::pki::TestCa::new("Redis test CA");
    let (ca_file, cert_file, key_file) = ca.write_files("redis-tls");
    let server = RedisServer::start_tls(&cert_file, &key_file, &ca_file);
    let url = server.url();
    assert!(url.starts_with("rediss://"), "{url}");
    // The platform's roots do not know the CA: the connection is refused, not made unchecked.
    let untrusted = Redis::connect(&url).unwrap().sessions().owner("s").await;
    assert!(
        matches!(untrusted, Err(typed_mcp::transport::http::BackplaneError::Unavailable(_))),
        "a certificate of an unknown CA must not be accepted: {untrusted:?}"
    );
    // A CA that is not PEM, or given for a connection without TLS, is refused at once.
    assert!(Redis::connect_with_ca(&url, b"not a certificate").is_err());
    assert!(Redis::connect_with_ca("redis://127.0.0.1:6379/", ca.pem.as_bytes()).is_err());
    let connect = || Redis::connect_with_ca(&url, ca.pem.as_bytes()).unwrap();
    registry_contract_on(&connect).await;
    bus_delivers_on(&connect).await;
    let redis = connect().with_prefix("tasks").unwrap();
    typed_mcp::testing::assert_task_store_contract(&redis.task_store()).await;
    // Two `shared` processes on it (`REDIS_CA_FILE` names the CA): a session opened on one is
    // served through the other, elicitations answered across them.
    let env = [("REDIS_CA_FILE", ca_file.as_path())];
    let instances: Vec<Instance> = (0..2).map(|_| Instance::start_with("shared", Some(&url), &env)).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    let client = within(
        "connecting",
        Client::builder("t", "1").elicitation(user("over tls")).connect_http(&format!("{}/mcp", proxy.url())),
    )
    .await
    .unwrap();
    let mut answered_by = std::collections::BTreeSet::new();
    for _ in 0..4 {
        let created = within("create_project", client.call_tool("create_project", ())).await.unwrap();
        assert_eq!(created.text(), "Created project 'over tls'");
        answered_by.insert(within("served_by", client.call_tool("served_by", ())).await.unwrap().text());
    }
    assert_eq!(answered_by.len(), 2, "both instances served the session: {answered_by:?}");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn one_client_past_its_share_of_the_redis_replay_cache_locks_out_no_other() {
    use typed_mcp::auth::ReplayCache as _;
    let (_server, redis) = crate::support::backplane::started_redis();
    let cache = redis.replay_cache().per_client(3);
    let ttl = Duration::from_secs(60);
    for jti in ["a", "b", "c"] {
        assert_eq!(cache.first_use(&format!("greedy:{jti}"), ttl).await, Ok(true));
    }
    assert_eq!(cache.first_use("greedy:a", ttl).await, Ok(false), "a replay is still a replay");
    let refused = cache.first_use("greedy:d", ttl).await;
    assert!(refused.as_ref().is_err_and(|e| e.contains("more than 3")), "{refused:?}");
    assert_eq!(cache.first_use("polite:a", ttl).await, Ok(true), "another client goes on");
    // Every key under the prefix, each client's in one Cluster slot.
    let keys = typed_mcp_redis::testing::keys(&_server.url(), "mcp:dpop*").await;
    assert!(keys.iter().all(|k| k.contains("{greedy}") || k.contains("{polite}")), "{keys:?}");
}
