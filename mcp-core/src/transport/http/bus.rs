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

/// Whether a POSTed body is an answer to a server's question, or a cancellation: what an
/// instance still takes while it drains (its questions wait for their answers), and what an
/// owner relays to the replica that asked. A request of the session (the common case, on every
/// POST) is told at once by its `"method"` key and no mention of a cancellation; anything else
/// has its top-level `method` member read as JSON (escapes and all), and what is not one
/// message, or names another method, is new work.
pub(crate) fn answers_or_cancels(body: &[u8]) -> bool {
    if memchr::memmem::find(body, b"\"method\"").is_some()
        && memchr::memmem::find(body, b"notifications/cancelled").is_none()
    {
        return false;
    }
    #[derive(serde::Deserialize)]
    struct Peek {
        method: Option<crate::protocol::MethodName>,
    }
    if !body.trim_ascii_start().starts_with(b"{") {
        return false;
    }
    match serde_json::from_slice::<Peek>(body) {
        Ok(Peek { method: None }) => true,
        Ok(Peek { method: Some(method) }) => method.id() == Some(crate::protocol::Method::Cancelled),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::answers_or_cancels;

    #[test]
    fn a_draining_instance_takes_answers_and_cancellations_and_nothing_else() {
        let taken = [
            r#"{"jsonrpc":"2.0","id":"q-1","result":{"action":"accept","content":{}}}"#,
            r#"{"jsonrpc":"2.0","id":"q-1","error":{"code":-1,"message":"no"}}"#,
            r#" {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        ];
        for body in taken {
            assert!(answers_or_cancels(body.as_bytes()), "{body}");
        }
        let handed_over = [
            // The text of a cancellation inside a request's parameters.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notifications/cancelled"}}"#,
            // A method key written with an escape.
            r#"{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{"name":"x"}}"#,
            // Two method members.
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","method":"tools/call","id":1}"#,
            r#"[{"jsonrpc":"2.0","id":"q-1","result":{}}]"#,
            "not json",
            "",
        ];
        for body in handed_over {
            assert!(!answers_or_cancels(body.as_bytes()), "{body}");
        }
    }
}
