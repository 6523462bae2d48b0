//! What a request's [`Context`] holds of the server and the session it came on, and what it
//! does with the session's own state (progress).

use std::sync::Arc;

use super::ServerInner;
use super::state::SessionState;
use crate::engine::PeerError;
use crate::handler::Context;

/// The server a context was made by.
pub(crate) fn server_of(ctx: &Context) -> &ServerInner {
    // Only the server makes contexts (`for_request`), always with its own state.
    ctx.server_state().downcast_ref().expect("a context holds the state of the server that made it")
}

/// [`server_of`], shared.
pub(crate) fn server_arc(ctx: &Context) -> Arc<ServerInner> {
    ctx.server_state().clone().downcast().expect("a context holds the state of the server that made it")
}

/// The session a context's request came on.
pub(crate) fn session_of(ctx: &Context) -> &SessionState {
    ctx.session_opaque().downcast_ref().expect("a context holds the state of the session that made it")
}

/// Whether progress reaches the client: the request carries a `progressToken`, or the handler
/// runs as a task.
pub(crate) fn wants_progress(ctx: &Context) -> bool {
    ctx.has_progress_token() || session_of(ctx).task.get().is_some()
}

/// Reports progress: `notifications/progress` in an ordinary request, the task's
/// `statusMessage` in a task (see [`Context::progress`]).
pub(crate) async fn progress(
    ctx: &Context,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Result<(), PeerError> {
    let Some(run) = session_of(ctx).task.get() else {
        return ctx.notify_progress(progress, total, message).await;
    };
    if !progress.is_finite() {
        tracing::warn!(progress, "progress must be a finite number; not reported");
        return Ok(());
    }
    let message = match (message, total) {
        (Some(message), _) => message.to_owned(),
        (None, Some(total)) => format!("{progress}/{total}"),
        (None, None) => progress.to_string(),
    };
    run.progress(message).await.map_err(|e| PeerError::Transport(format!("the task could not be saved: {e}")))
}
