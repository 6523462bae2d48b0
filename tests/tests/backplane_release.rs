//! A session the client ends leaves nothing in the shared store, however late the store answers
//! and whatever the heartbeat is doing at that moment; and no instance serves it afterwards,
//! however late that instance hears of the end.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tests::stdio::within;
use tokio_util::sync::CancellationToken;
use typed_mcp::engine::BoxFuture;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::{Backplane, BackplaneError, HttpConfig, MessageBus};
use typed_mcp_redis::RedisBus;

use crate::support::backplane::{SECRET, add, add_call, open_session, post, started_redis};
use crate::support::registry::{Hooked, Hooks};

/// One instance of a deployment on `redis` whose registry is `registry`; its URL.
async fn instance(redis: &typed_mcp_redis::Redis, registry: Hooked) -> (String, tokio::task::JoinHandle<()>) {
    instance_on(Arc::new(redis.bus()), registry).await
}

/// One instance of a deployment whose bus is `bus` and registry `registry`; its URL.
async fn instance_on(bus: Arc<dyn MessageBus>, registry: Hooked) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let backplane =
        Backplane::new(Arc::new(registry), url.clone()).bus(bus).heartbeat(Duration::from_millis(100)).secret(SECRET);
    let server = Server::builder("t", "1").tools(tools![add]).build().unwrap();
    let http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let task = tokio::spawn(async move {
        let _ = http.serve(listener, std::future::pending()).await;
    });
    (url, task)
}

/// Ends `session` with a `DELETE`, which must succeed.
async fn delete(url: &str, session: &str) {
    let ended = crate::support::http_client()
        .delete(url)
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);
}

/// Waits up to five seconds for the store to hold no record of `session`.
async fn until_forgotten(redis_url: &str, session: &str, why: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = typed_mcp_redis::testing::keys(redis_url, &format!("*{session}*")).await;
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{why}: left in Redis {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_the_store_takes_late_still_forgets_the_session() {
    let (redis_server, redis) = started_redis();
    // The store takes each release 1.5 s late: longer than a DELETE waits for it.
    let hooks = Hooks { release_late: Some(Duration::from_millis(1500)), ..Hooks::default() };
    let (url, task) = instance(&redis, Hooked::new(redis.sessions(), hooks)).await;
    let session = open_session(&url).await;
    let asked = Instant::now();
    delete(&url, &session).await;
    assert!(asked.elapsed() < Duration::from_millis(1400), "the client waited for the slow store");
    until_forgotten(&redis_server.url(), &session, "a release the store took late was dropped").await;
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_while_the_heartbeat_records_it_again_is_forgotten() {
    let (redis_server, redis) = started_redis();
    let registry = Hooked::new(redis.sessions(), Hooks::default());
    let hooks = registry.hooks.clone();
    let (url, task) = instance(&redis, registry).await;
    let session = open_session(&url).await;
    // The instance's announcement lapses (a loaded host): it records its sessions again, and
    // the client ends the session after the instance listed it and before its record is
    // written back.
    hooks.hold_reclaim.store(true, Ordering::SeqCst);
    hooks.lapse_next_beat.store(true, Ordering::SeqCst);
    within("the heartbeat to record the session again", hooks.reclaiming.notified()).await;
    delete(&url, &session).await;
    until_forgotten(&redis_server.url(), &session, "the DELETE forgot the session").await;
    hooks.go_on.notify_one();
    // Written back by the heartbeat, then forgotten again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    until_forgotten(&redis_server.url(), &session, "the heartbeat wrote an ended session back").await;
    task.abort();
}

/// A bus that hands this instance what it hears `late` after it arrived (an instance busy or
/// slow to read its subscription), and nothing while `deaf` is set (messages published meanwhile
/// are lost to it, as to an instance whose subscription broke) but the empty message saying the
/// subscription was made again.
struct Hearing {
    bus: RedisBus,
    late: Duration,
    deaf: Arc<std::sync::atomic::AtomicBool>,
}

impl Hearing {
    fn new(bus: RedisBus) -> Self {
        Hearing { bus, late: Duration::ZERO, deaf: Arc::default() }
    }
}

impl MessageBus for Hearing {
    fn publish<'a>(&'a self, channel: &'a str, payload: String) -> BoxFuture<'a, Result<(), BackplaneError>> {
        self.bus.publish(channel, payload)
    }

    fn publish_counted<'a>(
        &'a self,
        channel: &'a str,
        payload: String,
    ) -> BoxFuture<'a, Result<Option<usize>, BackplaneError>> {
        self.bus.publish_counted(channel, payload)
    }

    fn subscribe(&self, channel: String, deliver: Box<dyn Fn(String) + Send + Sync>, stop: CancellationToken) {
        let deliver: Arc<dyn Fn(String) + Send + Sync> = Arc::from(deliver);
        let (late, deaf) = (self.late, self.deaf.clone());
        let heard = move |payload: String| {
            if !payload.is_empty() && deaf.load(Ordering::SeqCst) {
                return;
            }
            if late.is_zero() {
                return deliver(payload);
            }
            let deliver = deliver.clone();
            tokio::spawn(async move {
                tokio::time::sleep(late).await;
                deliver(payload);
            });
        };
        self.bus.subscribe(channel, Box::new(heard), stop);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_is_not_served_by_an_instance_that_hears_of_it_late() {
    let (_redis_server, redis) = started_redis();
    let (owner, owner_task) = instance(&redis, Hooked::new(redis.sessions(), Hooks::default())).await;
    // The other instance hears the bus 300 ms late.
    let late = Arc::new(Hearing { late: Duration::from_millis(300), ..Hearing::new(redis.bus()) });
    let (other, other_task) = instance_on(late, Hooked::new(redis.sessions(), Hooks::default())).await;
    let session = open_session(&owner).await;
    // Served on the other instance: it keeps a replica of the session.
    let (status, _, body) = within("a call on the other instance", post(&other, Some(&session), add_call(2))).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"result\""), "{body}");
    delete(&owner, &session).await;
    // Right after the DELETE, wherever the next request lands, the session is gone.
    let (status, _, body) = within("a call after the end", post(&other, Some(&session), add_call(3))).await;
    assert_eq!(status, 404, "the other instance still served the ended session: {body}");
    owner_task.abort();
    other_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_whose_bus_subscription_broke_serves_no_stale_replica() {
    let (redis_server, redis) = started_redis();
    let (owner, owner_task) = instance(&redis, Hooked::new(redis.sessions(), Hooks::default())).await;
    let bus = Arc::new(Hearing::new(redis.bus()));
    let deaf = bus.deaf.clone();
    let (other, other_task) = instance_on(bus, Hooked::new(redis.sessions(), Hooks::default())).await;
    let session = open_session(&owner).await;
    // Served on the other instance: it keeps a replica of the session.
    let (status, _, body) = within("a call on the other instance", post(&other, Some(&session), add_call(2))).await;
    assert_eq!(status, 200, "{body}");
    // The other instance misses the end of the session (its subscription is broken)...
    deaf.store(true, Ordering::SeqCst);
    delete(&owner, &session).await;
    deaf.store(false, Ordering::SeqCst);
    // ...and subscribes again: Redis drops every subscriber's connection.
    let killed = std::process::Command::new("redis-cli")
        .args(["-u", &redis_server.url(), "CLIENT", "KILL", "TYPE", "pubsub"])
        .output()
        .expect("redis-cli runs (install redis-tools, or Debian's redis-server package, which brings it)");
    assert!(killed.status.success(), "{}", String::from_utf8_lossy(&killed.stderr));
    // Once subscribed again, it knows it may have missed messages and drops its replicas.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, _, body) = within("a call after the end", post(&other, Some(&session), add_call(3))).await;
        if status == 404 {
            break;
        }
        assert!(Instant::now() < deadline, "the other instance still served the ended session: {status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    owner_task.abort();
    other_task.abort();
}
