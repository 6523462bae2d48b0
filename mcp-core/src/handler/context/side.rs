//! What a context reaches of the server and the session that made it.

use std::sync::Arc;
use std::time::Duration;

use super::{ClientRequestError, CompleteError, Completed, Context, SessionKey, UrlElicitRequest};
use crate::auth::AuthInfo;
use crate::elicit::{ElicitError, Elicitation, FormSchema};
use crate::engine::{BoxFuture, PeerError};
use crate::protocol::view::ClientState;
use crate::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitRequestParams, ElicitResult, JsonObject, LoggingLevel, Root,
};
use crate::state_map::StateMap;

/// The server's side of a [`Context`]: what a context reaches of the server and of the
/// session its request came on (a 2025-era session, a 2026-era request, or the task the call
/// became). The server makes one for each context it makes, holding the server and the
/// session as their own types; a method of `Context` that needs them is a short call here,
/// and what `Context` can work out from these answers alone is written there, not here.
pub(crate) trait ServerSide: Send + Sync {
    // The session and the client: data.

    /// The session the request came on.
    fn session_key(&self) -> SessionKey;

    /// The authenticated user behind the request, where the transport knows one.
    fn principal(&self) -> Option<&str>;

    /// The verified identity behind the request `ctx`, on a server with OAuth authorization.
    fn auth(&self, ctx: &Context) -> Option<Arc<AuthInfo>>;

    /// What the client said of itself: revision, `clientInfo`, capabilities.
    fn client(&self) -> Option<&ClientState>;

    /// The application's shared state.
    fn states(&self) -> &StateMap;

    /// The number of the server that made the context, in the server's table of live servers
    /// (what [`Context::server_handle`] reads).
    fn server_number(&self) -> u64;

    /// The least severe level a log message must reach to be sent now, if any is sent.
    fn log_threshold(&self) -> Option<LoggingLevel>;

    /// Whether the handler runs as a task (its progress becomes the task's status).
    fn runs_as_task(&self) -> bool;

    /// A hold on making the call a task, when it may become one and has not yet (see
    /// [`crate::task::hold_start`]).
    fn hold_task_start(&self) -> Option<crate::multi_round::Hold> {
        None
    }

    /// Whether the request is one of the 2026 era, whose handler runs again on each round
    /// (cheaper than asking for [`round_trip_id`](Self::round_trip_id), which makes the id).
    fn is_multi_round_trip(&self) -> bool;

    /// The id of the request that is the same in each of its rounds (2026 era; `None` in the
    /// 2025 era).
    fn round_trip_id(&self) -> Option<&str>;

    // Questions to the client, and what goes to it: where they go differs.

    /// Sends the form `schema` (with its `message`) and checks the answer against it; `key`
    /// and `before_task` as in [`ElicitRequest`](super::ElicitRequest).
    fn send_form<'a>(
        &'a self,
        ctx: &'a Context,
        message: &'a str,
        schema: &'a FormSchema,
        timeout: Option<Duration>,
        key: Option<&'a str>,
        before_task: bool,
    ) -> BoxFuture<'a, Result<Elicitation<JsonObject>, ElicitError>>;

    /// Sends `elicitation/create` with parameters built at run time, once checked.
    fn elicit_raw<'a>(
        &'a self,
        ctx: &'a Context,
        params: ElicitRequestParams,
        timeout: Option<Duration>,
    ) -> BoxFuture<'a, Result<ElicitResult, ElicitError>>;

    /// Creates an elicitation id owned by the session.
    fn new_url_elicitation_id(&self, ctx: &Context) -> String;

    /// Sends a URL-mode elicitation.
    fn elicit_url<'a>(
        &'a self,
        request: UrlElicitRequest<'a>,
    ) -> BoxFuture<'a, Result<Elicitation<String>, ElicitError>>;

    /// Completes a URL-mode elicitation of the session.
    fn complete_url_elicitation<'a>(
        &'a self,
        elicitation_id: &'a str,
    ) -> BoxFuture<'a, Result<Completed, CompleteError>>;

    /// Asks the client to sample its model.
    fn sample<'a>(
        &'a self,
        ctx: &'a Context,
        params: CreateMessageParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ClientRequestError>>;

    /// Asks the client for its roots.
    fn roots<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<Vec<Root>, ClientRequestError>>;

    /// Reports the progress of a handler that runs as a task (see [`runs_as_task`](Self::runs_as_task)).
    fn task_progress<'a>(&'a self, message: String) -> BoxFuture<'a, Result<(), PeerError>>;
}
