//! URL-mode elicitation on the server: ids owned by sessions, sending the request, and
//! completing a flow from outside any request.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::Context;
use super::client_requests;
use super::state::RequestSide;
use crate::elicit::url::new_elicitation_id;
use crate::elicit::{ElicitError, Elicitation};
#[cfg(feature = "http")]
use crate::engine::BoxFuture;
use crate::engine::Peer;
use crate::handler::context::{CompleteError, Completed, SessionKey, UrlElicitRequest};
use crate::protocol::{ElicitAction, ElicitRequestParams, ElicitationCompleteParams};

/// Where a URL-mode flow stands ([`UrlElicitations::state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlFlowState {
    /// Waiting for the user.
    Pending,
    /// Completed.
    Completed,
}

struct Entry {
    session: SessionKey,
    principal: Option<String>,
    /// Where the completion notification goes; `None` for a 2026-era request, which has no
    /// notifications (its client retries instead).
    peer: Option<Peer>,
    /// When a 2026-era entry is forgotten: no session ends to remove it.
    expires: Option<Instant>,
    completed: bool,
}

/// How many ids one 2025-era session may own; past that, its oldest id is forgotten (completing
/// it is then refused as unknown). A session that keeps starting flows nobody finishes must not
/// grow the server's memory without bound.
pub(crate) const MAX_FLOWS_PER_SESSION: usize = 1024;

/// How many ids of 2026-era requests are kept (each until its request's state expires); past
/// that, the oldest is forgotten. No session ends to remove them, so without a bound a client
/// sending requests in a loop would grow the server's memory for the whole state lifetime.
pub(crate) const MAX_STATELESS_FLOWS: usize = 65_536;

#[derive(Default)]
struct Table {
    entries: HashMap<String, Entry>,
    /// The ids of each 2025-era session, oldest first.
    by_session: HashMap<SessionKey, VecDeque<String>>,
    /// The ids of 2026-era requests, in the order they expire (they all live as long).
    expiring: VecDeque<(Instant, String)>,
}

impl Table {
    /// Forgets `id` if the entry under it is still the one `matches` describes.
    fn forget(&mut self, id: &str, matches: impl FnOnce(&Entry) -> bool) {
        if self.entries.get(id).is_some_and(matches) {
            self.entries.remove(id);
        }
    }

    /// Forgets 2026-era ids that have expired.
    fn expire(&mut self, now: Instant) {
        while self.expiring.front().is_some_and(|(at, _)| *at <= now) {
            self.forget_oldest_expiring();
        }
    }

    fn forget_oldest_expiring(&mut self) {
        if let Some((at, id)) = self.expiring.pop_front() {
            self.forget(&id, |e| e.expires == Some(at));
        }
    }

    fn insert(&mut self, id: String, entry: Entry) {
        match entry.expires {
            Some(at) => {
                while self.expiring.len() >= MAX_STATELESS_FLOWS {
                    self.forget_oldest_expiring();
                }
                self.expiring.push_back((at, id.clone()));
            }
            None => {
                let owned = self.by_session.entry(entry.session).or_default();
                owned.push_back(id.clone());
                if owned.len() > MAX_FLOWS_PER_SESSION
                    && let Some(oldest) = owned.pop_front()
                {
                    let session = entry.session;
                    self.forget(&oldest, |e| e.session == session);
                }
            }
        }
        self.entries.insert(id, entry);
    }
}

/// The URL-mode elicitations of a server, by id. Keep a clone (from
/// [`Server::url_elicitations`](super::Server::url_elicitations)) wherever flows finish, for
/// example in the HTTP handler of the page the user is sent to.
///
/// Memory is bounded: a session keeps at most 1024 ids (until it ends), and 2026-era requests
/// at most 65,536 in all (until their state expires); past that, the oldest are forgotten.
#[derive(Clone, Default)]
pub struct UrlElicitations {
    table: Arc<Mutex<Table>>,
    /// The deployment this server is an instance of, if any: flows other instances own are
    /// completed there.
    #[cfg(feature = "http")]
    deployment: Arc<std::sync::OnceLock<Arc<dyn FlowsElsewhere>>>,
}

/// The other instances of a shared deployment, as far as URL flows go: a flow this instance
/// does not know may be another's.
#[cfg(feature = "http")]
pub(crate) trait FlowsElsewhere: Send + Sync {
    /// Completes `id` on the instance that owns it.
    fn complete<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Completed, CompleteError>>;

    /// Where `id` stands on the instance that owns it.
    fn state<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<UrlFlowState>>;
}

impl std::fmt::Debug for UrlElicitations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UrlElicitations").field("pending", &self.len()).finish()
    }
}

impl UrlElicitations {
    /// How many ids are recorded (pending or completed, for sessions still open).
    pub fn len(&self) -> usize {
        self.table.lock().map(|t| t.entries.len()).unwrap_or(0)
    }

    /// Whether no id is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The session that owns `id`, if it is recorded.
    pub fn owner(&self, id: &str) -> Option<SessionKey> {
        self.table.lock().ok()?.entries.get(id).map(|e| e.session)
    }

    /// Whether `id` was completed.
    pub fn is_completed(&self, id: &str) -> bool {
        self.table.lock().ok().and_then(|t| t.entries.get(id).map(|x| x.completed)).unwrap_or(false)
    }

    fn register(
        &self,
        id: String,
        session: SessionKey,
        principal: Option<String>,
        peer: Option<Peer>,
        expires: Option<Instant>,
    ) -> Result<(), ElicitError> {
        let mut table = self.table.lock().map_err(|_| ElicitError::ConnectionClosed)?;
        table.expire(Instant::now());
        match table.entries.get(&id) {
            Some(e) if e.session != session => {
                Err(ElicitError::InvalidRequest(format!("elicitation id `{id}` is already used by another session")))
            }
            Some(_) => Ok(()),
            None => {
                table.insert(id, Entry { session, principal, peer, expires, completed: false });
                Ok(())
            }
        }
    }

    /// Completes the flow `id`: sends `notifications/elicitation/complete` to the session that
    /// asked, and only to it. Unknown or already completed ids are refused and nothing is sent.
    /// A flow started by a 2026-era request is only marked complete (that era has no
    /// notification: the client retries the request, which sees the flow done).
    ///
    /// In a shared deployment (an HTTP endpoint with a backplane that has a message bus), a flow
    /// another instance owns is completed there, and the notification goes out from there;
    /// [`Completed::session`] then names the session on that instance.
    pub async fn complete(&self, id: &str) -> Result<Completed, CompleteError> {
        self.complete_anywhere(id, None).await
    }

    /// Like [`complete`](Self::complete), but only if the flow was started by `principal`
    /// (the authenticated user finishing it).
    pub async fn complete_for(&self, id: &str, principal: &str) -> Result<Completed, CompleteError> {
        self.complete_anywhere(id, Some(principal)).await
    }

    async fn complete_anywhere(&self, id: &str, principal: Option<&str>) -> Result<Completed, CompleteError> {
        match self.complete_here(id, principal).await {
            #[cfg(feature = "http")]
            Err(CompleteError::Unknown(_)) if self.deployment.get().is_some() => match self.deployment.get() {
                Some(deployment) => deployment.complete(id, principal).await,
                None => Err(CompleteError::Unknown(id.to_owned())),
            },
            outcome => outcome,
        }
    }

    /// Completes `id` if this instance knows it.
    pub(crate) async fn complete_here(&self, id: &str, principal: Option<&str>) -> Result<Completed, CompleteError> {
        self.complete_checked(id, |e| principal.is_none() || e.principal.as_deref() == principal).await
    }

    /// Where the flow `id` stands; `None` when no flow has this id (or its session ended). In a
    /// shared deployment, the instance that owns the flow answers when this one does not know it.
    pub async fn state(&self, id: &str) -> Option<UrlFlowState> {
        if let Some(state) = self.state_here(id) {
            return Some(state);
        }
        #[cfg(feature = "http")]
        if let Some(deployment) = self.deployment.get() {
            return deployment.state(id).await;
        }
        None
    }

    /// Where the flow `id` stands, if this instance knows it.
    pub(crate) fn state_here(&self, id: &str) -> Option<UrlFlowState> {
        let table = self.table.lock().ok()?;
        let entry = table.entries.get(id)?;
        Some(if entry.completed { UrlFlowState::Completed } else { UrlFlowState::Pending })
    }

    /// Joins a deployment; false when already in one.
    #[cfg(feature = "http")]
    pub(crate) fn join(&self, deployment: Arc<dyn FlowsElsewhere>) -> bool {
        self.deployment.set(deployment).is_ok()
    }

    async fn complete_checked(
        &self,
        id: &str,
        allowed: impl FnOnce(&Entry) -> bool,
    ) -> Result<Completed, CompleteError> {
        let (peer, done) = {
            let mut table = self.table.lock().map_err(|_| CompleteError::Unknown(id.to_owned()))?;
            let entry = table.entries.get_mut(id).ok_or_else(|| CompleteError::Unknown(id.to_owned()))?;
            if !allowed(entry) {
                return Err(CompleteError::Foreign(id.to_owned()));
            }
            if entry.completed {
                return Err(CompleteError::AlreadyCompleted(id.to_owned()));
            }
            entry.completed = true;
            let done =
                Completed { elicitation_id: id.to_owned(), session: entry.session, principal: entry.principal.clone() };
            (entry.peer.clone(), done)
        };
        if let Some(peer) = peer {
            let params = ElicitationCompleteParams { elicitation_id: id.to_owned() };
            peer.notify("notifications/elicitation/complete", &params).await.map_err(CompleteError::Send)?;
        }
        Ok(done)
    }

    /// Forgets every id of a session that ended.
    pub(crate) fn remove_session(&self, session: SessionKey) {
        if let Ok(mut table) = self.table.lock() {
            for id in table.by_session.remove(&session).unwrap_or_default() {
                table.forget(&id, |e| e.session == session);
            }
        }
    }
}

/// Sends a URL-mode elicitation: checks the client's capability, records the id (made here
/// unless the handler chose one) as the session's, puts it in the URL, and returns it when the
/// user accepts.
pub(crate) async fn elicit(
    side: &RequestSide,
    request: UrlElicitRequest<'_>,
) -> Result<Elicitation<String>, ElicitError> {
    let ctx = request.ctx;
    // Checked before an id is recorded, so a refusal leaves nothing behind.
    check_url_capability(side, ctx)?;
    let id = match request.id {
        Some(id) if id.is_empty() => {
            return Err(ElicitError::InvalidRequest("an elicitation id cannot be empty".into()));
        }
        Some(id) => {
            register_url_id(side, ctx, id.clone())?;
            id
        }
        None => new_url_elicitation_id(side, ctx),
    };
    let url = request.url.replace("{elicitationId}", &id);
    let params = ElicitRequestParams::Url { message: request.message, elicitation_id: id.clone(), url };
    let result = super::elicit::elicit_raw(side, ctx, params, request.timeout, request.key.as_deref()).await?;
    Ok(match result.action {
        ElicitAction::Accept => Elicitation::Accept(id),
        ElicitAction::Decline => Elicitation::Decline,
        ElicitAction::Cancel => Elicitation::Cancel,
    })
}

/// Creates an elicitation id owned by the session of `ctx` (see
/// [`Context::new_url_elicitation_id`]).
pub(crate) fn new_url_elicitation_id(side: &RequestSide, ctx: &Context) -> String {
    if let Some(rounds) = side.rounds() {
        let id = rounds.url_elicitation_id();
        // Only a replay of this request holds the same id; it is this request's already.
        let _ = register_url_id(side, ctx, id.clone());
        return id;
    }
    loop {
        let id = new_elicitation_id();
        if register_url_id(side, ctx, id.clone()).is_ok() {
            return id;
        }
    }
}

fn register_url_id(side: &RequestSide, ctx: &Context, id: String) -> Result<(), ElicitError> {
    let server = &side.server;
    let (peer, expires) = match side.rounds() {
        // Forgotten when the request's state expires: no retry can need it after that.
        Some(_) => (None, Some(Instant::now() + server.request_state.ttl())),
        // A client that did not declare URL mode is never told of flows it cannot show.
        None => (ctx.can_elicit_url().then(|| ctx.peer().unrelated()), None),
    };
    server.url_elicitations.register(id, ctx.session_key(), ctx.principal().map(str::to_owned), peer, expires)
}

fn check_url_capability(side: &RequestSide, ctx: &Context) -> Result<(), ElicitError> {
    ctx.client_capabilities().ok_or(ElicitError::NoSession)?;
    if ctx.can_elicit_url() {
        return Ok(());
    }
    client_requests::missing_capability(side, "elicitation.url");
    Err(ElicitError::NotSupported { mode: "url" })
}

/// Completes a URL-mode elicitation of the session of `side`; an id of another session is
/// refused (see [`Context::complete_url_elicitation`]).
pub(crate) async fn complete(side: &RequestSide, elicitation_id: &str) -> Result<Completed, CompleteError> {
    let session = side.session.key();
    side.server.url_elicitations.complete_checked(elicitation_id, |e| e.session == session).await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn peer() -> Peer {
        Peer::new(tokio::sync::mpsc::channel(1).0)
    }

    #[test]
    fn a_session_owns_a_bounded_number_of_ids_and_forgets_them_when_it_ends() {
        let flows = UrlElicitations::default();
        let (a, b) = (SessionKey(1), SessionKey(2));
        for n in 0..MAX_FLOWS_PER_SESSION + 10 {
            flows.register(format!("a{n}"), a, None, Some(peer()), None).unwrap();
        }
        flows.register("b0".into(), b, None, Some(peer()), None).unwrap();
        assert_eq!(flows.len(), MAX_FLOWS_PER_SESSION + 1);
        assert_eq!(flows.owner("a0"), None, "the oldest ids are forgotten first");
        assert_eq!(flows.owner(&format!("a{}", MAX_FLOWS_PER_SESSION + 9)), Some(a));
        flows.remove_session(a);
        assert_eq!(flows.len(), 1);
        assert_eq!(flows.owner("b0"), Some(b));
    }

    #[test]
    fn ids_of_2026_era_requests_expire_and_are_bounded() {
        let flows = UrlElicitations::default();
        let now = Instant::now();
        let past = now.checked_sub(Duration::from_secs(1)).unwrap_or(now);
        flows.register("old".into(), SessionKey(1 << 63), None, None, Some(past)).unwrap();
        let later = now + Duration::from_secs(600);
        for n in 0..MAX_STATELESS_FLOWS + 10 {
            flows.register(format!("m{n}"), SessionKey((1 << 63) + n as u64), None, None, Some(later)).unwrap();
        }
        assert_eq!(flows.owner("old"), None, "expired");
        assert_eq!(flows.len(), MAX_STATELESS_FLOWS);
        assert_eq!(flows.owner("m0"), None, "the oldest is forgotten first");
        assert!(flows.owner(&format!("m{}", MAX_STATELESS_FLOWS + 9)).is_some());
        // A replay of the request that owns an id registers it again without a second entry.
        let last = format!("m{}", MAX_STATELESS_FLOWS + 9);
        let owner = flows.owner(&last).unwrap();
        flows.register(last, owner, None, None, Some(later)).unwrap();
        assert_eq!(flows.len(), MAX_STATELESS_FLOWS);
    }
}
