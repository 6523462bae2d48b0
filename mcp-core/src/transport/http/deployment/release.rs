//! A session ending here, told to the deployment: its record forgotten in the shared registry,
//! and the other instances told (they drop their replicas of it).

use super::messages::{Message, Question};
use crate::transport::http::Shared;

/// How long the end of a session waits for the other instances to drop their replicas (within
/// the second the client waits in all).
const ACK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(700);

/// Forgets a session the client ended (`DELETE`) in the shared registry, and has the other
/// instances drop their replicas of it (each says when it has), before the client is answered:
/// its next request, wherever it lands, then finds the session gone. The client waits a second at most (the store
/// may be down); a slower store still gets the release, in the background, rather than keeping
/// the record until it expires.
pub(crate) async fn release_now(shared: &Shared, session: &str) {
    let Some(forwarder) = &shared.forwarder else { return };
    let bp = forwarder.backplane.clone();
    let bus = forwarder.bus.clone();
    let ended = session.to_owned();
    let told = tokio::spawn(async move {
        if let Err(e) = bp.registry.release(&ended, &bp.instance).await {
            tracing::debug!(error = %e, session = ended, "cannot forget an ended session in the shared session store");
        }
        // Every instance drops its replica and says so, so that the client's next request
        // finds the session gone wherever it lands (a replica still holding it would serve it).
        if let Some(bus) = bus {
            let (replied, reached) =
                bus.ask_everyone_all(Question::SessionEnded { session: ended }, ACK_PATIENCE).await;
            if reached.is_some_and(|reached| replied < reached) {
                tracing::debug!(replied, ?reached, "not every instance said it dropped an ended session in time");
            }
        }
    });
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
    let Some(bus) = shared.forwarder.as_ref().and_then(|f| f.bus.as_ref()) else { return };
    bus.tell_everyone(Message::SessionChanged { session: session.to_owned() });
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
