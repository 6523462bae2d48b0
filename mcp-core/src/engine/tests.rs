//! The engine driven directly: frames in through `handle_frame`, frames out of the outbound queue.

use std::collections::HashSet;
use std::sync::Mutex as StdMutex;

use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc as tmpsc};

use super::*;
use crate::protocol::codes;
use tokio_util::sync::CancellationToken;

/// An upper bound for waits that should end almost at once; never a synchronization device.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the test service lets a test observe.
#[derive(Default)]
struct Probe {
    /// Every method `handle_request` was called with, in order.
    calls: StdMutex<Vec<String>>,
    /// Lets one `slow` handler finish per `notify_one`.
    release: Notify,
}

/// Sends the request id to a channel when a handler's future is dropped before finishing.
struct DropGuard {
    id: RequestId,
    finished: bool,
    dropped: tmpsc::UnboundedSender<RequestId>,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.dropped.send(self.id.clone());
        }
    }
}

/// A service whose behaviour is chosen by the method name:
/// - `echo` answers its params;
/// - `slow` waits for `Probe::release`;
/// - `ask` asks the peer `test/question` (through the request's scope) and answers the reply;
/// - `hang` never finishes;
/// - `panic` panics in its future;
/// - `now` answers at once, without a future; `panic now` panics before making one.
struct TestService {
    probe: Arc<Probe>,
    started: tmpsc::UnboundedSender<RequestId>,
    dropped: tmpsc::UnboundedSender<RequestId>,
}

fn raw(value: &Value) -> ResultText {
    ResultText::serialize(value).expect("a JSON value always encodes")
}

impl Service for TestService {
    fn handle_request(&self, request: Request, scope: RequestScope) -> Handling {
        self.probe.calls.lock().unwrap().push(request.method.to_string());
        match request.method.as_str() {
            "now" => return Handling::Ready(Ok(raw(&json!("at once")))),
            "panic now" => panic!("the handler blew up before its future"),
            _ => {}
        }
        let probe = self.probe.clone();
        let started = self.started.clone();
        let guard = DropGuard { id: request.id.clone(), finished: false, dropped: self.dropped.clone() };
        Handling::future(async move {
            // Moves the whole guard into the future (a closure would capture only `finished`).
            let mut guard = guard;
            let _ = started.send(request.id.clone());
            let result = match request.method.as_str() {
                "echo" => Ok(request.params.map_or_else(|| raw(&Value::Null), ResultText::from)),
                "slow" => {
                    probe.release.notified().await;
                    Ok(raw(&json!("slow done")))
                }
                "ask" => {
                    match scope.peer.request::<_, Value>("test/question", &json!({}), RequestOptions::default()).await {
                        Ok(answer) => Ok(raw(&json!({ "answer": answer }))),
                        Err(e) => Err(ErrorObject::internal(e.to_string())),
                    }
                }
                "hang" => std::future::pending().await,
                "panic" => panic!("the handler blew up"),
                other => Err(ErrorObject::method_not_found(other)),
            };
            guard.finished = true;
            result
        })
    }

    fn handle_notification(&self, _: Notification, _: &Peer) {}
}

struct Harness {
    session: Session<TestService>,
    out: mpsc::Receiver<Outbound>,
    probe: Arc<Probe>,
    started: tmpsc::UnboundedReceiver<RequestId>,
    dropped: tmpsc::UnboundedReceiver<RequestId>,
}

fn harness() -> Harness {
    harness_with(SessionConfig::default())
}

fn harness_with(config: SessionConfig) -> Harness {
    let probe = Arc::new(Probe::default());
    let (started_tx, started) = tmpsc::unbounded_channel();
    let (dropped_tx, dropped) = tmpsc::unbounded_channel();
    let service = TestService { probe: probe.clone(), started: started_tx, dropped: dropped_tx };
    let (session, out) = Session::new(service, config);
    Harness { session, out, probe, started, dropped }
}

async fn within<F: Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(PATIENCE, f).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

impl Harness {
    async fn send(&self, frame: Value) {
        self.session.handle_frame(&frame.to_string()).await;
    }

    async fn request(&self, id: impl Into<Value>, method: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id.into(), "method": method})).await;
    }

    async fn next(&mut self) -> (Value, Outbound) {
        let out = within("an outbound frame", self.out.recv()).await.expect("the outbound queue closed");
        let value: Value = serde_json::from_str(&out.frame).expect("outbound frames are JSON");
        assert_eq!(value["jsonrpc"], "2.0", "{value}");
        (value, out)
    }

    async fn next_json(&mut self) -> Value {
        self.next().await.0
    }

    async fn started(&mut self) -> RequestId {
        within("a handler to start", self.started.recv()).await.expect("started channel closed")
    }

    async fn dropped(&mut self) -> RequestId {
        within("a handler to be dropped", self.dropped.recv()).await.expect("dropped channel closed")
    }

    /// Everything queued right now, without waiting.
    fn drain(&mut self) -> Vec<Value> {
        let mut frames = Vec::new();
        while let Ok(out) = self.out.try_recv() {
            frames.push(serde_json::from_str(&out.frame).unwrap());
        }
        frames
    }

    fn calls(&self) -> Vec<String> {
        self.probe.calls.lock().unwrap().clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outgoing_request_ids_are_unique_and_increase_per_caller() {
    const CALLERS: usize = 8;
    const EACH: usize = 10;
    let mut h = harness();
    let mut callers = Vec::new();
    for _ in 0..CALLERS {
        let peer = h.session.peer().clone();
        callers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..EACH {
                // The answer is the id the request went out with.
                let id: i64 = peer.request("test/id", &json!({}), RequestOptions::default()).await.unwrap();
                ids.push(id);
            }
            ids
        }));
    }
    let mut on_wire = HashSet::new();
    for _ in 0..CALLERS * EACH {
        let (frame, out) = h.next().await;
        assert_eq!(out.kind, OutboundKind::Request);
        assert_eq!(out.related, None, "a request made on the session's own peer belongs to no request");
        assert_eq!(frame["method"], "test/id");
        let id = frame["id"].as_i64().unwrap_or_else(|| panic!("ids of ours are integers: {frame}"));
        assert!(on_wire.insert(id), "id {id} was sent twice");
        h.send(json!({"jsonrpc": "2.0", "id": id, "result": id})).await;
    }
    let mut answered = HashSet::new();
    for caller in callers {
        let ids = within("a caller to finish", caller).await.unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids of one caller must increase: {ids:?}");
        answered.extend(ids);
    }
    assert_eq!(answered, on_wire);
    assert_eq!(h.session.peer().pending_count(), 0);
}

#[tokio::test]
async fn a_slow_handler_blocks_neither_other_requests_nor_responses_to_a_handler() {
    let mut h = harness();
    h.request(1, "slow").await;
    assert_eq!(h.started().await, RequestId::Number(1));

    // A handler that waits for the client's answer, while `slow` is still running.
    h.request(2, "ask").await;
    let (question, out) = h.next().await;
    assert_eq!(question["method"], "test/question");
    assert_eq!((out.kind, out.related), (OutboundKind::Request, Some(RequestId::Number(2))));
    let question_id = question["id"].clone();

    // Another request completes meanwhile.
    h.send(json!({"jsonrpc": "2.0", "id": "e", "method": "echo", "params": {"x": 1}})).await;
    let (echo, out) = h.next().await;
    assert_eq!(echo, json!({"jsonrpc": "2.0", "id": "e", "result": {"x": 1}}));
    assert_eq!((out.kind, out.related), (OutboundKind::Response, Some(RequestId::from("e"))));

    // The client answers; the waiting handler completes though `slow` still runs.
    h.send(json!({"jsonrpc": "2.0", "id": question_id, "result": 42})).await;
    assert_eq!(h.next_json().await, json!({"jsonrpc": "2.0", "id": 2, "result": {"answer": 42}}));
    assert_eq!(h.session.in_flight_count(), 1);

    h.probe.release.notify_one();
    assert_eq!(h.next_json().await, json!({"jsonrpc": "2.0", "id": 1, "result": "slow done"}));
    assert_eq!(h.session.in_flight_count(), 0);
}

#[tokio::test]
async fn cancelled_notification_drops_the_handler_and_nothing_is_sent() {
    let mut h = harness();
    h.request(7, "hang").await;
    assert_eq!(h.started().await, RequestId::Number(7));
    h.request(8, "hang").await;
    assert_eq!(h.started().await, RequestId::Number(8));

    h.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no"}}))
        .await;
    assert_eq!(h.dropped().await, RequestId::Number(7));

    // Cancelling an unknown request, or with malformed params, changes nothing.
    h.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})).await;
    h.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [8]}})).await;
    h.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled"})).await;

    h.request(9, "echo").await;
    assert_eq!(h.next_json().await["id"], 9);
    assert_eq!(h.session.in_flight_count(), 1, "request 8 is still running");
    assert!(h.dropped.try_recv().is_err(), "only request 7 was cancelled");

    h.session.shutdown().await;
    assert_eq!(h.dropped().await, RequestId::Number(8));
    assert_eq!(h.drain(), Vec::<Value>::new(), "cancelled requests get no response");
}

#[tokio::test]
async fn cancelling_a_handler_withdraws_its_pending_request_to_the_peer() {
    let mut h = harness();
    h.request(2, "ask").await;
    let question = h.next_json().await;
    assert_eq!(h.session.peer().pending_count(), 1);

    h.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})).await;
    assert_eq!(h.dropped().await, RequestId::Number(2));
    assert_eq!(h.session.peer().pending_count(), 0);
    let (withdrawn, out) = h.next().await;
    assert_eq!(withdrawn["method"], "notifications/cancelled");
    assert_eq!(withdrawn["params"]["requestId"], question["id"]);
    assert_eq!((out.kind, out.related), (OutboundKind::Notification, Some(RequestId::Number(2))));

    // The answer arriving anyway is ignored; the cancelled request itself gets no response.
    h.send(json!({"jsonrpc": "2.0", "id": question["id"], "result": 1})).await;
    assert_eq!(h.drain(), Vec::<Value>::new());
}

#[tokio::test(start_paused = true)]
async fn a_peer_request_times_out_frees_its_slot_and_tells_the_peer() {
    let mut h = harness();
    let peer = h.session.peer().clone();
    let started = tokio::time::Instant::now();
    let timeout = Duration::from_secs(5);
    let wait = tokio::spawn(async move {
        peer.request_raw("test/slow", &json!({}), RequestOptions { timeout: Some(timeout), cancel: None }).await
    });
    let request = h.next_json().await;
    assert_eq!(h.session.peer().pending_count(), 1);

    tokio::time::advance(Duration::from_secs(4)).await;
    assert!(!wait.is_finished(), "gave up before the timeout");

    let result = within("the timeout", wait).await.unwrap();
    assert_eq!(result.unwrap_err(), PeerError::Timeout { method: "test/slow".into(), timeout });
    assert!(started.elapsed() >= timeout);
    assert_eq!(h.session.peer().pending_count(), 0, "the pending slot is removed");

    let cancelled = h.next_json().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);

    // A late answer is ignored and answered with nothing.
    h.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}})).await;
    assert_eq!(h.drain(), Vec::<Value>::new());
}

/// A session whose outbound queue (capacity 1) is already full: the peer is not reading.
async fn stalled() -> Harness {
    let h = harness_with(SessionConfig { outbound_capacity: 1, ..SessionConfig::default() });
    h.session.peer().notify("test/filler", &json!({})).await.unwrap();
    h
}

#[tokio::test(start_paused = true)]
async fn the_timeout_covers_a_request_stuck_behind_a_full_queue() {
    let mut h = stalled().await;
    let peer = h.session.peer().clone();
    let timeout = Duration::from_secs(5);
    let options = RequestOptions { timeout: Some(timeout), cancel: None };
    let wait = tokio::spawn(async move { peer.request_raw("test/q", &json!({}), options).await });
    let result = within("the timeout", wait).await.unwrap();
    assert_eq!(result.unwrap_err(), PeerError::Timeout { method: "test/q".into(), timeout });
    assert_eq!(h.session.peer().pending_count(), 0);
    let queued = h.drain();
    assert_eq!(queued.len(), 1, "the request never went out, so nothing is withdrawn: {queued:?}");
    assert_eq!(queued[0]["method"], "test/filler");
}

#[tokio::test]
async fn the_cancellation_token_covers_a_request_stuck_behind_a_full_queue() {
    let mut h = stalled().await;
    let peer = h.session.peer().clone();
    let token = CancellationToken::new();
    let options = RequestOptions { timeout: None, cancel: Some(token.clone()) };
    let wait = tokio::spawn(async move { peer.request_raw("test/q", &json!({}), options).await });
    // On this single-threaded runtime, one yield lets the request run until it blocks on the queue.
    tokio::task::yield_now().await;
    token.cancel();
    assert_eq!(within("the wait to end", wait).await.unwrap().unwrap_err(), PeerError::Cancelled);
    assert_eq!(h.session.peer().pending_count(), 0);
    assert_eq!(h.drain().len(), 1);
}

#[tokio::test]
async fn a_cancellation_token_abandons_the_wait() {
    let mut h = harness();
    let peer = h.session.peer().clone();
    let token = CancellationToken::new();
    let options = RequestOptions { timeout: None, cancel: Some(token.clone()) };
    let wait = tokio::spawn(async move { peer.request_raw("test/slow", &json!({}), options).await });
    let request = h.next_json().await;
    assert_eq!(h.session.peer().pending_count(), 1);

    token.cancel();
    assert_eq!(within("the wait to end", wait).await.unwrap().unwrap_err(), PeerError::Cancelled);
    assert_eq!(h.session.peer().pending_count(), 0);
    let cancelled = h.next_json().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn shutdown_fails_waits_cancels_handlers_and_refuses_new_requests() {
    let mut h = harness();
    let peer = h.session.peer().clone();
    let wait = tokio::spawn(async move { peer.request_raw("test/slow", &json!({}), RequestOptions::default()).await });
    h.next_json().await;
    h.request(1, "hang").await;
    h.started().await;
    h.request(2, "ask").await;
    assert_eq!(h.next_json().await["method"], "test/question");
    assert_eq!(h.session.peer().pending_count(), 2);

    within("shutdown", h.session.shutdown()).await;
    assert_eq!(within("the wait to fail", wait).await.unwrap().unwrap_err(), PeerError::Closed);
    let mut dropped = vec![h.dropped().await, h.dropped().await];
    dropped.sort();
    assert_eq!(dropped, [RequestId::Number(1), RequestId::Number(2)]);
    assert_eq!((h.session.in_flight_count(), h.session.peer().pending_count()), (0, 0));
    assert!(h.session.peer().is_closed());

    let after = h.session.peer().request_raw("test/late", &json!({}), RequestOptions::default()).await;
    assert_eq!(after.unwrap_err(), PeerError::Closed);

    let calls_before = h.calls().len();
    h.request(3, "echo").await;
    assert_eq!(h.calls().len(), calls_before, "a closed session must not hand requests to the service");
    assert_eq!(h.session.in_flight_count(), 0);
    assert_eq!(h.drain(), Vec::<Value>::new(), "nothing is sent after shutdown");
}

#[tokio::test]
async fn dropping_the_session_fails_waits_and_cancels_handlers() {
    let mut h = harness();
    h.request(1, "hang").await;
    h.started().await;
    h.request(2, "ask").await;
    h.next_json().await;
    let peer = h.session.peer().clone();
    let wait = tokio::spawn(async move { peer.request_raw("test/slow", &json!({}), RequestOptions::default()).await });
    h.next_json().await;

    let Harness { session, mut dropped, .. } = h;
    drop(session);
    assert_eq!(within("the wait to fail", wait).await.unwrap().unwrap_err(), PeerError::Closed);
    let mut ids = vec![
        within("a handler to be dropped", dropped.recv()).await.unwrap(),
        within("a handler to be dropped", dropped.recv()).await.unwrap(),
    ];
    ids.sort();
    assert_eq!(ids, [RequestId::Number(1), RequestId::Number(2)]);
}

#[tokio::test]
async fn a_request_that_completes_at_once_is_answered_even_if_shutdown_follows_immediately() {
    let mut h = harness();
    // On this single-threaded runtime nothing below yields before `shutdown`, so no handler
    // task has been polled when the session closes: what happens must not depend on that.
    h.request(1, "echo").await;
    h.request(2, "hang").await;
    h.session.shutdown().await;
    assert_eq!(h.drain(), [json!({"jsonrpc": "2.0", "id": 1, "result": null})]);
    assert_eq!(h.dropped().await, RequestId::Number(2), "a handler that must wait is cancelled");
}

#[tokio::test]
async fn responses_to_unknown_ids_and_duplicate_responses_are_ignored() {
    let mut h = harness();
    let peer = h.session.peer().clone();
    let wait = tokio::spawn(async move { peer.request_raw("test/q", &json!({}), RequestOptions::default()).await });
    let id = h.next_json().await["id"].as_i64().unwrap();

    h.send(json!({"jsonrpc": "2.0", "id": id + 1000, "result": "stray"})).await;
    h.send(json!({"jsonrpc": "2.0", "id": id.to_string(), "result": "wrong type of id"})).await;
    h.send(json!({"jsonrpc": "2.0", "id": id + 1000, "error": {"code": -1, "message": "stray"}})).await;
    assert_eq!(h.session.peer().pending_count(), 1);
    assert!(!wait.is_finished());

    h.send(json!({"jsonrpc": "2.0", "id": id, "result": "first"})).await;
    assert_eq!(within("the answer", wait).await.unwrap().unwrap().get(), "\"first\"");
    h.send(json!({"jsonrpc": "2.0", "id": id, "result": "second"})).await;
    h.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "third"}})).await;
    assert_eq!(h.session.peer().pending_count(), 0);

    // Responses are never answered; the session still serves.
    h.request(5, "echo").await;
    assert_eq!(h.next_json().await, json!({"jsonrpc": "2.0", "id": 5, "result": null}));
    assert_eq!(h.drain(), Vec::<Value>::new());
}

#[tokio::test]
async fn an_error_response_fails_the_wait_with_the_peer_error() {
    let mut h = harness();
    let peer = h.session.peer().clone();
    let wait = tokio::spawn(async move { peer.request_raw("test/q", &json!({}), RequestOptions::default()).await });
    let id = h.next_json().await["id"].clone();
    h.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "nope"}})).await;
    let error = within("the answer", wait).await.unwrap().unwrap_err();
    assert_eq!(error, PeerError::Rpc(ErrorObject::new(codes::METHOD_NOT_FOUND, "nope")));
}

#[tokio::test]
async fn a_duplicate_in_flight_id_is_rejected_and_reusable_once_done() {
    let mut h = harness();
    h.request(5, "hang").await;
    h.started().await;
    h.request(5, "echo").await;
    let error = h.next_json().await;
    assert_eq!(error["id"], 5);
    assert_eq!(error["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(h.calls(), ["hang"], "the duplicate never reaches the service");
    assert_eq!(h.session.in_flight_count(), 1);
    assert_eq!(h.dropped.try_recv(), Err(tmpsc::error::TryRecvError::Empty), "the original request keeps running");

    h.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})).await;
    h.dropped().await;
    // The task forgets the id in the same poll that drops the handler.
    assert_eq!(h.session.in_flight_count(), 0);
    h.request(5, "echo").await;
    assert_eq!(h.next_json().await, json!({"jsonrpc": "2.0", "id": 5, "result": null}));
}

#[tokio::test]
async fn a_panicking_handler_yields_an_internal_error_and_the_session_keeps_serving() {
    let mut h = harness();
    h.request(1, "panic").await;
    let error = h.next_json().await;
    assert_eq!(error["id"], 1);
    assert_eq!(error["error"]["code"], codes::INTERNAL_ERROR);
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("the handler blew up"), "{message}");
    assert_eq!(h.session.in_flight_count(), 0);

    h.request(1, "echo").await;
    assert_eq!(h.next_json().await, json!({"jsonrpc": "2.0", "id": 1, "result": null}));

    // A service that panics before it returns a future is answered the same way.
    h.request(2, "panic now").await;
    let error = h.next_json().await;
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(2), json!(codes::INTERNAL_ERROR)));
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("the handler of `panic now` panicked: the handler blew up before"), "{message}");
    h.request(3, "now").await;
    assert_eq!(h.next_json().await, json!({"jsonrpc": "2.0", "id": 3, "result": "at once"}));
    assert_eq!(h.session.in_flight_count(), 0);
}

#[tokio::test]
async fn undecodable_frames_are_answered_and_malformed_responses_are_not() {
    let mut h = harness();
    h.session.handle_frame("{oops").await;
    let error = h.next_json().await;
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (Value::Null, json!(codes::PARSE_ERROR)));
    h.session.handle_frame(r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#).await;
    h.session.handle_frame(r#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":""}}"#).await;
    h.request(2, "echo").await;
    assert_eq!(h.next_json().await["id"], 2, "malformed responses get no answer");
}

#[tokio::test]
async fn a_peer_that_does_not_read_holds_the_reader_back_after_a_bounded_backlog() {
    // Queue 2, and as many answers again waiting for room: the next request waits on the reader.
    let mut h = harness_with(SessionConfig { outbound_capacity: 2, ..SessionConfig::default() });
    for id in 1..=4 {
        within("a request answered at once", h.request(id, "echo")).await;
    }
    let fifth = json!({"jsonrpc": "2.0", "id": 5, "method": "echo"}).to_string();
    let first = {
        let (session, out) = (&h.session, &mut h.out);
        let mut fifth = std::pin::pin!(session.handle_frame(&fifth));
        let held = tokio::time::timeout(Duration::from_millis(200), &mut fifth).await;
        assert!(held.is_err(), "the reader went on although nobody reads the answers");
        // Once the peer reads, the reader goes on, and every answer arrives in full.
        let first = within("an answer", out.recv()).await.unwrap();
        within("the held request", fifth).await;
        first
    };
    let mut ids = vec![serde_json::from_str::<Value>(&first.frame).unwrap()["id"].as_i64().unwrap()];
    for _ in 0..4 {
        ids.push(h.next_json().await["id"].as_i64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn at_most_max_in_flight_handlers_wait_at_once() {
    let mut h = harness_with(SessionConfig { max_in_flight: 2, ..SessionConfig::default() });
    for id in [1, 2] {
        h.request(id, "hang").await;
        h.started().await;
    }
    // A third handler that waits is refused (and its future dropped); one that answers at once
    // is still served.
    h.request(3, "hang").await;
    assert_eq!(h.started().await, RequestId::Number(3));
    let refused = h.next_json().await;
    assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (json!(3), json!(codes::INTERNAL_ERROR)));
    assert!(refused["error"]["message"].as_str().unwrap().contains("in flight"), "{refused}");
    assert_eq!(h.dropped().await, RequestId::Number(3));
    h.request(4, "echo").await;
    assert_eq!(h.started().await, RequestId::Number(4));
    assert_eq!(h.next_json().await["id"], 4);
    assert_eq!(h.session.in_flight_count(), 2);
    // Once one ends, another may wait.
    h.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})).await;
    h.dropped().await;
    h.request(5, "hang").await;
    assert_eq!(h.started().await, RequestId::Number(5));
    assert_eq!(h.session.in_flight_count(), 2);
    assert_eq!(h.drain(), Vec::<Value>::new());
}

#[tokio::test]
async fn a_peer_numbering_with_a_prefix_sends_string_ids_and_takes_only_its_own_answers() {
    let mut h = harness();
    h.session.peer().number_requests_as("instance-a-");
    let peer = h.session.peer().clone();
    let wait = tokio::spawn(async move { peer.request_raw("test/q", &json!({}), RequestOptions::default()).await });
    let id = h.next_json().await["id"].clone();
    let text = id.as_str().unwrap_or_else(|| panic!("a prefixed id is a string: {id}"));
    let n = text.strip_prefix("instance-a-").expect("the id starts with the prefix");
    assert!(n.parse::<i64>().is_ok(), "then the request's number: {text}");

    // The number alone, another prefix, or a number written otherwise answer nothing.
    for stray in [json!(n.parse::<i64>().unwrap()), json!(format!("instance-b-{n}")), json!(format!("instance-a-0{n}"))]
    {
        h.send(json!({"jsonrpc": "2.0", "id": stray, "result": "stray"})).await;
    }
    assert_eq!(h.session.peer().pending_count(), 1);
    assert!(!wait.is_finished());

    h.send(json!({"jsonrpc": "2.0", "id": id, "result": "mine"})).await;
    assert_eq!(within("the answer", wait).await.unwrap().unwrap().get(), "\"mine\"");
    assert_eq!(h.session.peer().pending_count(), 0);
}
