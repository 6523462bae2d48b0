//! The bus at work: one subscriber per instance (on two channels), the questions waiting for
//! their replies, and one queue publishing what needs no answer, in order.
//!
//! Two members hear what arrives: the transport (what is about sessions) and the server (its
//! announcements, and the questions about URL-mode flows and tasks it answers).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::messages::{EVERYONE, Envelope, Message, Question, Reply, VERSION, tag_of, to_instance};
use super::seal::{Keys, fresh, now_ms};
use super::store::{BackplaneError, MessageBus};
use crate::engine::BoxFuture;

/// How long a question waits for its reply: past it, no instance that could answer heard it.
pub(crate) const ASK_PATIENCE: Duration = Duration::from_secs(2);

/// How many messages may wait to be published; more are dropped (with a warning).
const QUEUE: usize = 1024;

/// What hears the messages of the bus.
pub(crate) trait Member: Send + Sync + 'static {
    /// Acts on `message` from the instance `from` (never a question or a reply).
    fn hear(&self, from: &str, message: Message);

    /// The reply to `question`, or `None` when this instance cannot answer it (another may).
    fn answer(&self, question: Question) -> BoxFuture<'static, Option<Reply>>;

    /// Messages may have been lost: the subscription to the bus broke and was made again.
    fn missed(&self) {}
}

/// This instance's end of the deployment's bus.
pub(crate) struct DeploymentBus {
    bus: Arc<dyn MessageBus>,
    instance: Arc<str>,
    keys: Keys,
    /// The transport: what is about sessions.
    sessions: OnceLock<Arc<dyn Member>>,
    /// The server: announcements, and questions.
    server: OnceLock<Arc<dyn Member>>,
    /// The questions asked and not done with, by token: where their replies go.
    waiting: Mutex<HashMap<u64, mpsc::UnboundedSender<Reply>>>,
    next: AtomicU64,
    queue: mpsc::Sender<(String, String)>,
    /// Messages dropped on arrival: unreadable, or of another version.
    dropped: AtomicU64,
}

/// A question waiting for its replies; it stops waiting when dropped.
struct Asked<'a> {
    bus: &'a DeploymentBus,
    token: u64,
    replies: mpsc::UnboundedReceiver<Reply>,
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.bus.waiting.lock() {
            waiting.remove(&self.token);
        }
    }
}

impl std::fmt::Debug for DeploymentBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeploymentBus").field("instance", &self.instance).finish_non_exhaustive()
    }
}

impl DeploymentBus {
    /// This instance's end of `bus`, heard until `closing`.
    pub(crate) fn start(
        bus: Arc<dyn MessageBus>,
        instance: Arc<str>,
        keys: Keys,
        closing: &CancellationToken,
    ) -> Arc<Self> {
        if !keys.enforced() {
            tracing::warn!(
                "the deployment's bus is not authenticated: whoever can publish on it can act as an instance \
                 (give every instance the same `Backplane::secret`)"
            );
        }
        let tag = tag_of(&instance);
        let (queue, mut queued) = mpsc::channel::<(String, String)>(QUEUE);
        let this = Arc::new(DeploymentBus {
            bus: bus.clone(),
            instance,
            keys,
            sessions: OnceLock::new(),
            server: OnceLock::new(),
            waiting: Mutex::default(),
            next: AtomicU64::new(1),
            queue,
            dropped: AtomicU64::new(0),
        });
        let publisher = bus.clone();
        let stop = closing.clone();
        tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    next = queued.recv() => next,
                    () = stop.cancelled() => None,
                };
                let Some((channel, payload)) = next else { return };
                if let Err(e) = publisher.publish(&channel, payload).await {
                    tracing::warn!(error = %e, channel, "cannot tell the other instances");
                }
            }
        });
        for channel in [EVERYONE.to_owned(), to_instance(tag)] {
            let weak = Arc::downgrade(&this);
            let hear = move |payload: String| {
                if let Some(this) = weak.upgrade() {
                    this.arrived(&payload);
                }
            };
            bus.subscribe(channel, Box::new(hear), closing.clone());
        }
        this
    }

    /// Counts and reports a message dropped unread.
    fn drop_unread(&self, what: &'static str, detail: &str) {
        let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        // Each of the first ten, then one in a thousand: a flood of forgeries floods no log.
        if dropped <= 10 || dropped.is_multiple_of(1000) {
            tracing::warn!(dropped, detail, "{what}");
        }
    }

    /// This instance's id.
    pub(crate) fn instance(&self) -> &str {
        &self.instance
    }

    /// How many messages arrived that were dropped unread (unreadable, or of another version).
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Makes the transport hear what is about sessions (`member` holds the transport weakly).
    pub(crate) fn hear_sessions(&self, member: Arc<dyn Member>) {
        let _ = self.sessions.set(member);
    }

    /// Makes the server hear its announcements and questions (`member` holds the server weakly);
    /// `false` when one does already.
    pub(crate) fn hear_server(&self, member: Arc<dyn Member>) -> bool {
        self.server.set(member).is_ok()
    }

    /// The envelope of `message` for `to` (every instance when `None`), as sent.
    fn seal(&self, to: Option<&str>, message: Message) -> Option<String> {
        let at = now_ms();
        let envelope = Envelope { v: VERSION, from: self.instance.to_string(), to: to.map(str::to_owned), at, message };
        match serde_json::to_string(&envelope) {
            // The seal, then the envelope: `<seal>.<json>` (the seal is base64url, without dots).
            Ok(json) => Some(format!("{}.{json}", self.keys.seal(&[json.as_bytes()]))),
            Err(e) => {
                tracing::warn!(error = %e, "cannot write a message for the other instances");
                None
            }
        }
    }

    /// Queues `message` for every instance (published in order, in the background).
    pub(crate) fn tell_everyone(&self, message: Message) {
        self.enqueue(EVERYONE.to_owned(), None, message);
    }

    /// Queues `message` for the instance `to` (published in order, in the background).
    pub(crate) fn tell(&self, to: &str, message: Message) {
        self.enqueue(to_instance(tag_of(to)), Some(to), message);
    }

    fn enqueue(&self, channel: String, to: Option<&str>, message: Message) {
        let Some(payload) = self.seal(to, message) else { return };
        if self.queue.try_send((channel, payload)).is_err() {
            tracing::warn!("too many messages waiting for the other instances: one is dropped");
        }
    }

    /// Publishes `message` for the instance `to` (for every instance when `None`), now, and
    /// says how many subscribers received it when the bus can tell (on `to`'s channel, those of
    /// any instance sharing its tag, which ignore it).
    pub(crate) async fn send_now(&self, to: Option<&str>, message: Message) -> Result<Option<usize>, BackplaneError> {
        let channel = to.map_or_else(|| EVERYONE.to_owned(), |to| to_instance(tag_of(to)));
        let Some(payload) = self.seal(to, message) else { return Ok(None) };
        self.bus.publish_counted(&channel, payload).await
    }

    /// Asks `question` of the instance `to` (of every instance when `None`): the first reply,
    /// or `None` when none came within [`ASK_PATIENCE`].
    pub(crate) async fn ask(&self, to: Option<&str>, question: Question) -> Option<Reply> {
        let (mut asked, _) = self.put(to, question).await?;
        tokio::time::timeout(ASK_PATIENCE, asked.replies.recv()).await.ok().flatten()
    }

    /// Asks `question` of every instance and waits, at most `patience`, for a reply from each
    /// one the bus delivered it to (this one included); how many replied, of how many. When
    /// the bus cannot count its subscribers, no reply is waited for.
    pub(crate) async fn ask_everyone_all(&self, question: Question, patience: Duration) -> (usize, Option<usize>) {
        let Some((mut asked, Some(reached))) = self.put(None, question).await else { return (0, None) };
        let mut replied = 0;
        let gathered = async {
            while replied < reached && asked.replies.recv().await.is_some() {
                replied += 1;
            }
        };
        let _ = tokio::time::timeout(patience, gathered).await;
        (replied, Some(reached))
    }

    /// Publishes `question` for `to` (every instance when `None`) under a new token: where its
    /// replies arrive, and how many subscribers it reached when the bus can tell. `None` when
    /// it could not be sent.
    async fn put(&self, to: Option<&str>, question: Question) -> Option<(Asked<'_>, Option<usize>)> {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, replies) = mpsc::unbounded_channel();
        self.waiting.lock().ok()?.insert(token, tx);
        let asked = Asked { bus: self, token, replies };
        let channel = to.map_or_else(|| EVERYONE.to_owned(), |to| to_instance(tag_of(to)));
        let payload = self.seal(to, Message::Ask { token, question })?;
        match self.bus.publish_counted(&channel, payload).await {
            Ok(reached) => Some((asked, reached)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot ask the other instances");
                None
            }
        }
    }

    /// Acts on one payload from the bus.
    fn arrived(self: &Arc<Self>, payload: &str) {
        if payload.is_empty() {
            // The subscription was made again after a break (see `MessageBus::subscribe`).
            tracing::info!(
                "this instance may have missed messages of the deployment's bus while it was not subscribed"
            );
            if let Some(sessions) = self.sessions.get() {
                sessions.missed();
            }
            return;
        }
        let Some((seal, json)) = payload.split_once('.') else {
            self.drop_unread("an unreadable message from another instance is dropped", "no seal");
            return;
        };
        if self.keys.enforced() && !self.keys.verify(&[json.as_bytes()], seal) {
            self.drop_unread("a message not sealed with the deployment secret is dropped", "bad seal");
            return;
        }
        let envelope = match serde_json::from_str::<Envelope>(json) {
            Ok(envelope) if self.keys.enforced() && !fresh(envelope.at) => {
                self.drop_unread(
                    "a message sent over a minute ago (replayed, or from a clock far off) is dropped",
                    &envelope.from,
                );
                return;
            }
            Ok(envelope) if envelope.v == VERSION => envelope,
            Ok(envelope) => {
                let detail = format!("version {} from {}; this instance speaks {VERSION}", envelope.v, envelope.from);
                self.drop_unread("a message from an instance of another version is dropped", &detail);
                return;
            }
            Err(e) => {
                self.drop_unread("an unreadable message from another instance is dropped", &e.to_string());
                return;
            }
        };
        if envelope.to.as_deref().is_some_and(|to| to != &*self.instance) {
            // For another instance sharing this one's tag.
            return;
        }
        let Envelope { from, message, .. } = envelope;
        let member = |slot: &OnceLock<Arc<dyn Member>>| slot.get().cloned();
        match message {
            Message::Deliver { .. }
            | Message::Notify { .. }
            | Message::Touch { .. }
            | Message::SessionChanged { .. } => {
                if let Some(sessions) = member(&self.sessions) {
                    sessions.hear(&from, message);
                }
            }
            Message::ResourceUpdated { .. } | Message::ListChanged { .. } | Message::TaskChanged { .. } => {
                // Our own announcement, back from the bus: our sessions were told already.
                if from == *self.instance {
                    return;
                }
                if let Some(server) = member(&self.server) {
                    server.hear(&from, message);
                }
            }
            Message::Ask { token, question } => {
                // Questions about sessions go to the transport, the others to the server.
                let answerer = match question {
                    Question::SessionEnded { .. } => &self.sessions,
                    _ => &self.server,
                };
                let Some(answerer) = member(answerer) else { return };
                let answering = answerer.answer(question);
                let this = self.clone();
                tokio::spawn(async move {
                    if let Some(reply) = answering.await {
                        this.tell(&from, Message::Reply { token, reply });
                    }
                });
            }
            Message::Reply { token, reply } => {
                // The asker takes its question out of `waiting` once it has what it needs.
                let waiter = self.waiting.lock().ok().and_then(|w| w.get(&token).cloned());
                if let Some(waiter) = waiter {
                    let _ = waiter.send(reply);
                }
            }
        }
    }
}
