//! Replicas: sessions other instances own, served here from their recorded state; what the
//! other instances say about sessions (the transport's part of the bus); and the replicas'
//! part in each heartbeat.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use axum::response::Response;

use super::bus::Member;
use super::forwarder::{self, Forwarder, Recorded, Replica, unavailable};
use super::messages::{Message, Question, Reply};
use super::takeover::take_over;
use crate::engine::BoxFuture;
use crate::transport::http::responses::header_str;
use crate::transport::http::session::HttpSession;
use crate::transport::http::{Opening, SESSION_HEADER, Shared};

/// How making a replica went.
pub(crate) enum Replicated {
    /// The request is served here (on a new replica, or on the session taken over).
    Served,
    /// Served nowhere: this answer says why.
    Refused(Response),
    /// To be forwarded to the owner after all.
    Forward,
}

/// Makes a replica of session `id`, which another instance owns, from its recorded state; or,
/// when its owner is gone, takes the session over.
pub(crate) async fn replicate(shared: &Arc<Shared>, forwarder: &Forwarder, id: &str) -> Replicated {
    let bp = &forwarder.backplane;
    let owner = match forwarder.locate(id).await {
        forwarder::Whereabouts::Owner { instance, .. } => instance,
        forwarder::Whereabouts::Gone(gone) => {
            return match take_over(shared, forwarder, id, &gone, true).await {
                Ok(true) => Replicated::Served,
                Ok(false) => Replicated::Forward,
                Err(None) => Replicated::Refused(unavailable("the shared session store is unavailable; retry later")),
                Err(Some(refused)) => Replicated::Refused(refused),
            };
        }
        // Unknown: answered as such by the caller.
        forwarder::Whereabouts::Here => return Replicated::Served,
        forwarder::Whereabouts::Unavailable => {
            return Replicated::Refused(unavailable("the shared session store is unavailable; retry later"));
        }
    };
    let too_many = forwarder.replicas.read().map_or(true, |r| r.len() >= shared.config.max_sessions);
    if too_many {
        return Replicated::Forward;
    }
    let state = match bp.registry.state(id).await {
        Ok(Some(state)) => state,
        Ok(None) => return Replicated::Forward,
        Err(e) => {
            tracing::warn!(error = %e, session = id, "cannot read a session's state");
            return Replicated::Refused(unavailable("the shared session store is unavailable; retry later"));
        }
    };
    let Ok(recorded) = serde_json::from_str::<Recorded>(&state) else {
        tracing::warn!(session = id, "a session has an unreadable record");
        return Replicated::Forward;
    };
    let service = shared.server.open(Opening::Restore(&recorded.session), recorded.principal.clone());
    // Its events are kept here, in this instance's own store (the owner numbers and keeps the
    // session's other events): their ids name this instance, where a client resuming from one
    // of them is sent, whichever instance it reconnects to.
    let events = forwarder.replica_events.clone();
    let session = HttpSession::start(id.to_owned(), service, recorded.principal, shared, Some(events));
    session.keep_events_on(&bp.instance);
    // Its questions name this instance, for the client's answers to come back here.
    session.engine().peer().number_requests_as(&forwarder::question_prefix(&bp.instance));
    if let Some(bus) = forwarder.bus.clone() {
        let session_id = id.to_owned();
        let to = owner.clone();
        session.relay_unrelated(Box::new(move |frame| {
            bus.tell(&to, Message::Notify { session: session_id.clone(), frame });
        }));
    }
    let replica = Replica { session: session.clone(), owner };
    let kept = match forwarder.replicas.write() {
        Ok(mut replicas) => Arc::ptr_eq(&replicas.entry(id.to_owned()).or_insert(replica).session, &session),
        Err(_) => false,
    };
    if !kept {
        // Another request made one first: it is used instead.
        session.close().await;
    } else {
        tracing::debug!(session = id, "serving a session owned by another instance");
    }
    Replicated::Served
}

/// How long a replica is kept without a request.
const REPLICA_IDLE: Duration = Duration::from_secs(60);

/// Once per heartbeat: the replicas used since `since` (their records are renewed, and their
/// owners are told), and the end of those idle for long.
pub(crate) fn replicas_beat(shared: &Shared, since: Instant) -> Vec<String> {
    let Some(forwarder) = &shared.forwarder else { return Vec::new() };
    let idle_limit = REPLICA_IDLE.min(shared.config.idle_timeout);
    let mut used: std::collections::HashMap<Arc<str>, Vec<String>> = std::collections::HashMap::new();
    let mut idle = Vec::new();
    if let Ok(replicas) = forwarder.replicas.read() {
        for (id, replica) in replicas.iter() {
            if replica.session.last_active() >= since || replica.session.in_flight() > 0 {
                used.entry(replica.owner.clone()).or_default().push(id.clone());
            } else if replica.session.idle_for() >= idle_limit {
                idle.push(id.clone());
            }
        }
    }
    for id in idle {
        forwarder.drop_replica(&id);
    }
    forwarder.prune_retiring();
    let mut active = Vec::new();
    if let Some(bus) = &forwarder.bus {
        for (owner, sessions) in used {
            active.extend(sessions.iter().cloned());
            bus.tell(&owner, Message::Touch { sessions });
        }
    }
    active
}

/// The session `id` held here: the one owned here, else its replica (or one dropped whose
/// requests still run, for their answers).
fn held(shared: &Shared, id: &str) -> Option<Arc<HttpSession>> {
    let owned = shared.sessions.read().ok().and_then(|s| s.get(id).cloned());
    owned.or_else(|| shared.forwarder.as_ref()?.answering(id))
}

/// The transport's part of the bus: what the other instances say about sessions.
pub(crate) struct SessionsMember(pub(crate) Weak<Shared>);

impl Member for SessionsMember {
    fn hear(&self, _from: &str, message: Message) {
        let Some(shared) = self.0.upgrade() else { return };
        match message {
            Message::Deliver { session, principal, frame } => {
                // Another user's session is not theirs to answer in.
                let Some(session) = held(&shared, &session).filter(|s| s.principal() == principal.as_deref()) else {
                    return;
                };
                let Ok(message) = crate::protocol::Message::decode(&frame) else { return };
                session.touch();
                tokio::spawn(async move { session.engine().handle_message(message).await });
            }
            Message::Notify { session, frame } => {
                let owned = shared.sessions.read().ok().and_then(|s| s.get(&session).cloned());
                if let Some(session) = owned {
                    session.deliver_unrelated(frame);
                }
            }
            Message::Touch { sessions } => {
                if let Ok(owned) = shared.sessions.read() {
                    sessions.iter().filter_map(|id| owned.get(id)).for_each(|s| s.touch());
                }
            }
            Message::SessionChanged { session } => {
                if let Some(forwarder) = &shared.forwarder {
                    forwarder.drop_replica(&session);
                }
            }
            _ => {}
        }
    }

    fn answer(&self, question: Question) -> BoxFuture<'static, Option<Reply>> {
        let reply = match question {
            Question::SessionEnded { session } => {
                if let Some(shared) = self.0.upgrade()
                    && let Some(forwarder) = &shared.forwarder
                {
                    forwarder.drop_replica(&session);
                }
                Some(Reply::SessionDropped)
            }
            _ => None,
        };
        Box::pin(std::future::ready(reply))
    }

    /// A replica may be stale after what this instance did not hear (its session ended, or its
    /// recorded state changed): every replica is dropped, and made again from the session's
    /// record by the next request needing it.
    fn missed(&self) {
        let Some(shared) = self.0.upgrade() else { return };
        let Some(forwarder) = &shared.forwarder else { return };
        let ids: Vec<String> = forwarder.replicas.read().map(|r| r.keys().cloned().collect()).unwrap_or_default();
        for id in ids {
            forwarder.drop_replica(&id);
        }
    }
}

/// The replica a POST names, if this instance serves one for the request's user.
pub(crate) fn replica(
    shared: &Shared,
    headers: &axum::http::HeaderMap,
    principal: &Option<String>,
) -> Option<Arc<HttpSession>> {
    let id = header_str(headers, SESSION_HEADER)?;
    let replica = shared.forwarder.as_ref()?.replica(id)?.session;
    (replica.principal() == principal.as_deref()).then(|| {
        replica.touch();
        replica
    })
}
