//! The calls in flight through the gateway, and what an upstream asks during one: each ask
//! (a form or URL elicitation, a sampling request, a roots request) goes to the downstream
//! request it belongs to, and the answer comes back to the waiting upstream.
//!
//! A call is a [`Held`]: the upstream request runs in a task of its own, and the downstream
//! handler reads what it asks, in order, and answers each. In a 2025-era downstream session
//! the handler runs once and asks the client as the upstream asks. In the 2026-07-28 era the
//! handler runs again from the start on each round; the held call is kept in a table under the
//! request's round-trip id, so the retry finds the upstream request still waiting instead of
//! calling it again, replays the questions already answered (their answers come from the
//! sealed request state) and delivers the new answer.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry::context::FutureExt;
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;
use typed_mcp::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitRequestParams, ElicitResult, LoggingMessageParams, ProgressParams,
    Root,
};
use typed_mcp::task::TaskStartHold;
use typed_mcp::{Context, Elicitation, ErrorObject};

/// What an upstream asks during a call.
#[derive(Debug, Clone)]
pub(crate) enum Ask {
    /// `elicitation/create` (or an `input_required` elicitation of a 2026 upstream).
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`.
    Sample(Box<CreateMessageParams>),
    /// `roots/list`.
    Roots,
}

/// What an upstream tells during a call, passed on to the client in order, before the call's
/// outcome, and once however many times a 2026-era handler runs.
#[derive(Debug, Clone)]
pub(crate) enum Note {
    /// `notifications/message`.
    Log(LoggingMessageParams),
    /// `notifications/progress`.
    Progress(ProgressParams),
}

/// Most notes waiting to be passed on for one call; past it, new ones are dropped (a client
/// that reads slower than its upstream writes loses log lines and progress, not memory).
const MAX_NOTES: usize = 1024;

/// The downstream client's answer to an [`Ask`].
#[derive(Debug)]
pub(crate) enum Answer {
    /// To an elicitation.
    Elicit(ElicitResult),
    /// To a sampling request.
    Sample(Result<CreateMessageResult, ErrorObject>),
    /// To a roots request.
    Roots(Result<Vec<Root>, ErrorObject>),
}

struct Pending {
    ask: Ask,
    /// The key the upstream gave the question (2026 era), kept when the client is asked.
    key: Option<String>,
    reply: Option<oneshot::Sender<Answer>>,
}

struct HeldState<T> {
    asks: Vec<Pending>,
    notes: VecDeque<Note>,
    outcome: Option<T>,
    /// Whether the upstream answered the call with a task (which its client follows).
    tasked: bool,
}

/// One upstream request in flight, with what it asked so far and its outcome once it has one.
pub(crate) struct Held<T> {
    state: Mutex<HeldState<T>>,
    changed: Notify,
    /// Cancels the upstream request.
    pub(crate) cancel: CancellationToken,
    started: Instant,
}

impl<T> Held<T> {
    fn new() -> Self {
        Held {
            state: Mutex::new(HeldState { asks: Vec::new(), notes: VecDeque::new(), outcome: None, tasked: false }),
            changed: Notify::new(),
            cancel: CancellationToken::new(),
            started: Instant::now(),
        }
    }

    /// Records something the upstream told, to pass on to the client.
    pub(crate) fn note(&self, note: Note) {
        {
            let mut state = lock(&self.state);
            if state.notes.len() >= MAX_NOTES {
                tracing::debug!("a call's client reads slower than its upstream tells; a note is dropped");
                return;
            }
            state.notes.push_back(note);
        }
        self.changed.notify_waiters();
    }

    /// Records a question of the upstream's; the answer comes on the returned receiver.
    /// Called from the gateway's client handler answering it: a question of a 2026-era
    /// upstream keeps its key (unless an earlier question of this call had it: keys are unique
    /// within the client's request, and the upstream's are only within one of its rounds).
    pub(crate) fn ask(&self, ask: Ask) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        let mut state = lock(&self.state);
        let key = typed_mcp::client::input_key()
            .filter(|key| !state.asks.iter().any(|p| p.key.as_deref() == Some(key.as_str())));
        state.asks.push(Pending { ask, key, reply: Some(tx) });
        drop(state);
        self.changed.notify_waiters();
        rx
    }

    /// Records that the upstream answered the call with a task.
    pub(crate) fn tasked(&self) {
        lock(&self.state).tasked = true;
        self.changed.notify_waiters();
    }

    fn finish(&self, outcome: T) {
        lock(&self.state).outcome = Some(outcome);
        self.changed.notify_waiters();
    }

    /// Waits for a note not passed on yet, the questions from the `index`-th on, the upstream's
    /// task (when `for_task`), or the outcome, in that order of preference (so that every note
    /// precedes the outcome).
    async fn next(&self, index: usize, for_task: bool) -> Next<T>
    where
        T: Clone,
    {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = lock(&self.state);
                if let Some(note) = state.notes.pop_front() {
                    return Next::Note(note);
                }
                if state.asks.len() > index {
                    return Next::Asks(state.asks[index..].iter().map(|p| (p.ask.clone(), p.key.clone())).collect());
                }
                if for_task && state.tasked {
                    return Next::Tasked;
                }
                if let Some(outcome) = &state.outcome {
                    return Next::Done(outcome.clone());
                }
            }
            notified.await;
        }
    }

    /// Waits for the outcome.
    async fn outcome(&self) -> T
    where
        T: Clone,
    {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(outcome) = &lock(&self.state).outcome {
                return outcome.clone();
            }
            notified.await;
        }
    }

    /// Gives the `index`-th question its answer, unless an earlier run already did.
    fn deliver(&self, index: usize, answer: Answer) {
        let reply = lock(&self.state).asks.get_mut(index).and_then(|p| p.reply.take());
        if let Some(reply) = reply {
            let _ = reply.send(answer);
        }
    }
}

enum Next<T> {
    Note(Note),
    /// The questions from the one waited for on, asked together (one round of a 2026
    /// upstream may ask several at once).
    Asks(Vec<(Ask, Option<String>)>),
    /// The upstream answered the call with a task.
    Tasked,
    Done(T),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How long a held call of the 2026-07-28 era waits for the client's retry.
pub(crate) const HOLD_FOR: Duration = Duration::from_secs(15 * 60);

/// Most held calls kept at once; the oldest is given up past it.
const MAX_HELD: usize = 10_000;

/// The calls of 2026-era requests kept between rounds, by round-trip id.
pub(crate) struct HeldCalls<T> {
    calls: Mutex<HashMap<String, Arc<Held<T>>>>,
}

impl<T> Default for HeldCalls<T> {
    fn default() -> Self {
        HeldCalls { calls: Mutex::default() }
    }
}

impl<T: Clone + Send + 'static> HeldCalls<T> {
    /// Serves one run of a downstream handler for a call that `start` makes upstream: starts
    /// the call (or, on a later round of the same 2026-era request, finds it still waiting),
    /// answers what it asks through `ctx`, and returns its outcome. With `hold`, the
    /// downstream call becomes a task of the gateway's only once the upstream answered with a
    /// task: what the upstream asks before goes in the call's own round.
    pub(crate) async fn serve<F, Fut>(self: &Arc<Self>, ctx: &Context, mut hold: Option<TaskStartHold>, start: F) -> T
    where
        F: FnOnce(Arc<Held<T>>) -> Fut,
        Fut: Future<Output = T> + Send + 'static,
    {
        let key = ctx.round_trip_id().filter(|_| ctx.is_multi_round_trip()).map(str::to_owned);
        let (held, fresh) = match &key {
            Some(key) => self.find_or_make(key),
            None => (Arc::new(Held::new()), true),
        };
        if fresh {
            // Boxed: the upstream request's future is large, and a task moves what it is given.
            let run = Box::pin(start(held.clone()));
            let task_held = held.clone();
            // In the trace of the request that started it (the span of the client's request,
            // with telemetry): the upstream request's span is that span's child.
            let trace = opentelemetry::Context::current();
            tokio::spawn(
                async move {
                    let outcome = run.await;
                    task_held.finish(outcome);
                }
                .with_context(trace),
            );
        }
        // A 2025-era call ends with its handler: dropping the handler (the client cancelled, or
        // the session closed) cancels the upstream request.
        let _guard = key.is_none().then(|| held.cancel.clone().drop_guard());
        let mut index = 0;
        loop {
            match held.next(index, hold.is_some()).await {
                Next::Tasked => hold = None,
                Next::Done(outcome) => {
                    if let Some(key) = &key {
                        lock(&self.calls).remove(key);
                    }
                    return outcome;
                }
                // Boxed: most calls tell nothing, and every call's future would carry it.
                Next::Note(note) => Box::pin(tell(ctx, note)).await,
                Next::Asks(asks) => {
                    // Asked of the client together (in a 2026-era request, one round asks them
                    // all), in order, so that each keeps its place on every replay. The
                    // upstream may end (fail, die) while the client is being asked.
                    let asked = futures_util::future::join_all(asks.into_iter().map(|(ask, key)| async move {
                        match key {
                            Some(key) => typed_mcp::multi_round::keyed(key, answer(ctx, ask)).await,
                            None => answer(ctx, ask).await,
                        }
                    }));
                    tokio::select! {
                        answers = asked => {
                            for answer in answers {
                                held.deliver(index, answer);
                                index += 1;
                            }
                        }
                        outcome = held.outcome() => {
                            if let Some(key) = &key {
                                lock(&self.calls).remove(key);
                            }
                            return outcome;
                        }
                    }
                }
            }
        }
    }

    fn find_or_make(&self, key: &str) -> (Arc<Held<T>>, bool) {
        let mut calls = lock(&self.calls);
        if let Some(held) = calls.get(key) {
            return (held.clone(), false);
        }
        calls.retain(|_, h| {
            let keep = h.started.elapsed() < HOLD_FOR;
            if !keep {
                h.cancel.cancel();
            }
            keep
        });
        if calls.len() >= MAX_HELD
            && let Some(oldest) = calls.iter().min_by_key(|(_, h)| h.started).map(|(k, _)| k.clone())
            && let Some(h) = calls.remove(&oldest)
        {
            h.cancel.cancel();
        }
        let held = Arc::new(Held::new());
        calls.insert(key.to_owned(), held.clone());
        (held, true)
    }
}

/// Passes `note` on to the downstream client through `ctx`.
async fn tell(ctx: &Context, note: Note) {
    match note {
        Note::Log(params) => ctx.log_to(params.level, params.logger.as_deref(), params.data).await,
        Note::Progress(p) => {
            if let Err(e) = ctx.progress(p.progress, p.total, p.message.as_deref()).await {
                tracing::debug!(error = %e, "an upstream's progress could not be passed on");
            }
        }
    }
}

/// Asks the downstream client `ask` through `ctx`, in either era.
async fn answer(ctx: &Context, ask: Ask) -> Answer {
    match ask {
        // A URL flow is recorded as this session's, so that the upstream's
        // `notifications/elicitation/complete` for it reaches the client that was sent there.
        Ask::Elicit(ElicitRequestParams::Url { message, elicitation_id, url }) => {
            Answer::Elicit(match ctx.elicit_url_with_id(elicitation_id, url, message).await {
                Ok(Elicitation::Accept(_)) => ElicitResult::accept_url(),
                Ok(Elicitation::Decline) => ElicitResult::decline(),
                Ok(Elicitation::Cancel) => ElicitResult::cancel(),
                Err(e) => {
                    tracing::debug!(error = %e, "the client could not answer an upstream's URL elicitation");
                    ElicitResult::cancel()
                }
            })
        }
        Ask::Elicit(params) => Answer::Elicit(match ctx.elicit_raw(params, None).await {
            Ok(result) => result,
            Err(e) => {
                tracing::debug!(error = %e, "the client could not answer an upstream's elicitation");
                ElicitResult::cancel()
            }
        }),
        Ask::Sample(params) => {
            Answer::Sample(ctx.sample(*params).await.map_err(|e| ErrorObject::internal(e.to_string())))
        }
        Ask::Roots => Answer::Roots(ctx.roots().await.map_err(|e| ErrorObject::internal(e.to_string()))),
    }
}
