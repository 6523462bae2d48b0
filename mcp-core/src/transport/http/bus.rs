//! What the instances of a shared deployment say to each other about sessions: the messages,
//! their channels, and the announcements every part of the transport makes (a session's record
//! changed, a session ended here and is forgotten everywhere). It imports nothing of the parts
//! that use it, so the forwarder and the sessions' lifecycle both build on it.

use std::sync::Arc;

use super::Shared;
use super::backplane;

/// The channel every instance reads: cancellations, and changes of sessions' records.
pub(crate) const BROADCAST: &str = "sessions";

/// The channel the instances tagged `tag` read: answers to their replicas' questions, what
/// replicas send for the GET streams of the sessions they own, and which of those sessions were
/// used elsewhere.
pub(crate) fn tagged(tag: u64) -> String {
    format!("sessions:{tag}")
}

/// What travels between the instances about sessions.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Bus {
    /// A client's message (an answer, a cancellation) for whichever instance holds `session`
    /// and waits for it (others ignore it).
    Deliver { session: String, principal: Option<String>, frame: String },
    /// What a replica of `session` sent outside any request, for the owner's GET stream.
    Notify { session: String, frame: String },
    /// To their owner: these sessions were used on another instance (they are not idle).
    Touch { sessions: Vec<String> },
    /// The record of `session` changed, or the session ended: replicas start again from the
    /// record (or find it gone).
    Changed { session: String },
}

/// Forgets a session the client ended (`DELETE`) in the shared registry, and tells the other
/// instances (which drop their replicas of it), before the client is answered: its next request,
/// wherever it lands, then finds the session gone. A second at most (the store may be down: the
/// record expires anyway).
pub(crate) async fn release_now(shared: &Shared, session: &str) {
    let Some(forwarder) = &shared.forwarder else { return };
    let bp = &forwarder.backplane;
    let told = async {
        if let Err(e) = bp.registry.release(session, &bp.instance).await {
            tracing::debug!(error = %e, session, "cannot forget an ended session in the shared session store");
        }
        announce_changed_now(shared, session).await;
    };
    if tokio::time::timeout(std::time::Duration::from_secs(1), told).await.is_err() {
        tracing::debug!(session, "the shared session store did not take the end of a session within a second");
    }
}

/// Forgets a closed session in the shared registry, if there is one (in the background: the
/// record expires anyway).
pub(crate) fn release(shared: &Shared, session: &str) {
    if let Some(forwarder) = &shared.forwarder {
        announce_changed(shared, session);
        let bp = forwarder.backplane.clone();
        let session = session.to_owned();
        tokio::spawn(async move {
            if let Err(e) = bp.registry.release(&session, &bp.instance).await {
                tracing::debug!(error = %e, session, "cannot forget a closed session in the shared session store");
            }
        });
    }
}

/// Tells the other instances that the record of `session` changed or is gone (in the
/// background).
pub(crate) fn announce_changed(shared: &Shared, session: &str) {
    let Some((bus, payload)) = changed(shared, session) else { return };
    tokio::spawn(async move { publish_changed(&*bus, payload).await });
}

/// Tells the other instances that the record of `session` changed or is gone, and returns once
/// the bus took the message.
pub(crate) async fn announce_changed_now(shared: &Shared, session: &str) {
    let Some((bus, payload)) = changed(shared, session) else { return };
    publish_changed(&*bus, payload).await;
}

/// The bus, and the message saying that the record of `session` changed.
fn changed(shared: &Shared, session: &str) -> Option<(Arc<dyn backplane::MessageBus>, String)> {
    let bus = shared.forwarder.as_ref()?.backplane.bus.clone()?;
    let payload = serde_json::to_string(&Bus::Changed { session: session.to_owned() }).ok()?;
    Some((bus, payload))
}

async fn publish_changed(bus: &dyn backplane::MessageBus, payload: String) {
    if let Err(e) = bus.publish(BROADCAST, payload).await {
        tracing::debug!(error = %e, "cannot tell the other instances that a session changed");
    }
}
