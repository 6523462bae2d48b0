//! The life of sessions: finding the one a request names, making room within the caps, and
//! expiring idle ones (a shared deployment forgets closed ones too).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::responses::{header_str, plain, session_not_found};
use super::session::HttpSession;
use super::{SESSION_HEADER, Shared};

pub(crate) async fn expire_idle(shared: std::sync::Weak<Shared>) {
    loop {
        let period = match shared.upgrade() {
            Some(s) => (s.config.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(60)),
            None => return,
        };
        tokio::time::sleep(period).await;
        let Some(shared) = shared.upgrade() else { return };
        let idle: Vec<Arc<HttpSession>> = match shared.sessions.write() {
            Ok(mut sessions) => {
                let expired: Vec<String> = sessions
                    .iter()
                    .filter(|(_, s)| s.idle_for() >= shared.config.idle_timeout && s.in_flight() == 0)
                    .map(|(k, _)| k.clone())
                    .collect();
                expired.iter().filter_map(|k| sessions.remove(k)).collect()
            }
            Err(_) => return,
        };
        for session in idle {
            tracing::debug!(session = session.id(), "idle session expired");
            session.close().await;
            shared.release(session.id());
        }
    }
}

/// Finds the session a request names, or says why it cannot be used.
#[allow(clippy::result_large_err)] // an error response is built once per rejected request
pub(crate) fn lookup(
    shared: &Shared,
    headers: &HeaderMap,
    principal: &Option<String>,
) -> Result<Arc<HttpSession>, Response> {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        return Err(plain(StatusCode::BAD_REQUEST, "missing Mcp-Session-Id header; send `initialize` first"));
    };
    let session = shared.sessions.read().ok().and_then(|s| s.get(id).cloned());
    match session {
        Some(s) if s.principal() == principal.as_deref() => {
            s.touch();
            Ok(s)
        }
        // Another user's session id is answered exactly like an unknown one.
        _ => Err(session_not_found()),
    }
}

/// Makes room for one more session (of `principal`) within the caps: closes the session idle
/// the longest, of that user when the user is at their cap, else of anyone when the server is
/// at its cap; `503` when every candidate is busy.
#[allow(clippy::result_large_err)] // an error response is built once per refused request
pub(crate) fn make_room(shared: &Arc<Shared>, principal: Option<&str>) -> Result<(), Response> {
    let evicted = {
        let Ok(mut sessions) = shared.sessions.write() else { return Ok(()) };
        let mut evicted = Vec::new();
        // At the global cap, a sixteenth of the sessions go at once (the idle-longest ones), so
        // that a burst of `initialize` does not scan every session for each call.
        let mut pick = |sessions: &mut HashMap<String, Arc<HttpSession>>, mine: bool| -> Result<(), Response> {
            let mut idle: Vec<(std::time::Instant, &str)> = sessions
                .values()
                .filter(|s| !mine || s.principal() == principal)
                .filter(|s| s.in_flight() == 0)
                .map(|s| (s.last_active(), s.id()))
                .collect();
            let batch = if mine { 1 } else { (shared.config.max_sessions / 16).clamp(1, idle.len().max(1)) };
            if batch < idle.len() {
                idle.select_nth_unstable(batch - 1);
                idle.truncate(batch);
            }
            let victims: Vec<String> = idle.into_iter().map(|(_, id)| id.to_owned()).collect();
            let before = evicted.len();
            evicted.extend(victims.iter().filter_map(|id| sessions.remove(id)));
            if evicted.len() > before {
                Ok(())
            } else {
                tracing::warn!(mine, "no session can be closed to open another: refusing `initialize`");
                let mut r = plain(StatusCode::SERVICE_UNAVAILABLE, "too many open sessions; retry later");
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                Err(r)
            }
        };
        if principal.is_some() {
            let count = sessions.values().filter(|s| s.principal() == principal).count();
            if count >= shared.config.max_sessions_per_subject {
                pick(&mut sessions, true)?;
            }
        }
        if sessions.len() >= shared.config.max_sessions {
            pick(&mut sessions, false)?;
        }
        evicted
    };
    for session in evicted {
        tracing::debug!(session = session.id(), "closed the session idle the longest to make room");
        shared.release(session.id());
        tokio::spawn(async move { session.close().await });
    }
    Ok(())
}
