//! What a context reaches of the server and the session that made it.

use std::any::TypeId;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{ClientRequestError, CompleteError, Completed, Context, Opaque, SessionKey, UrlElicitRequest};
use crate::auth::AuthInfo;
use crate::elicit::{ElicitError, Elicitation, FormSchema};
use crate::engine::{BoxFuture, PeerError};
use crate::protocol::view::ClientState;
use crate::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitRequestParams, ElicitResult, JsonObject, LoggingLevel, Root,
};

/// The server's side of a [`Context`]: what a context reaches of the server and the session
/// its request came on. The server implements it, each method a call into the module that
/// holds the logic, and hands its implementation to every context it makes; a method of
/// `Context` that needs the server is a short call into it. The methods follow the topics of
/// `Context`'s methods.
pub(crate) trait ServerSide: Send + Sync {
    // The session and the client.

    /// The session the request came on.
    fn session_key(&self, ctx: &Context) -> SessionKey;

    /// The authenticated user behind the request, where the transport knows one.
    fn principal<'c>(&self, ctx: &'c Context) -> Option<&'c str>;

    /// The verified identity behind the request, on a server with OAuth authorization.
    fn auth(&self, ctx: &Context) -> Option<Arc<AuthInfo>>;

    /// What the client said of itself: revision, `clientInfo`, capabilities.
    fn client<'c>(&self, ctx: &'c Context) -> Option<&'c ClientState>;

    /// The shared state registered for the type `type_id`.
    fn state(&self, ctx: &Context, type_id: TypeId) -> Option<Opaque>;

    // Elicitation.

    /// Whether the client may be sent a URL-mode request.
    fn supports_url_mode(&self, ctx: &Context) -> bool;

    /// Sends the form `schema` (with its `message`) and checks the answer against it; `key`
    /// and `before_task` as in [`ElicitRequest`](super::ElicitRequest).
    fn send_form<'a>(
        &self,
        ctx: &'a Context,
        message: &'a str,
        schema: &'a FormSchema,
        timeout: Option<Duration>,
        key: Option<&'a str>,
        before_task: bool,
    ) -> BoxFuture<'a, Result<Elicitation<JsonObject>, ElicitError>>;

    /// Sends `elicitation/create` with parameters built at run time, once checked.
    fn elicit_raw<'a>(
        &self,
        ctx: &'a Context,
        params: ElicitRequestParams,
        timeout: Option<Duration>,
    ) -> BoxFuture<'a, Result<ElicitResult, ElicitError>>;

    // URL elicitation.

    /// Creates an elicitation id owned by the session.
    fn new_url_elicitation_id(&self, ctx: &Context) -> String;

    /// Sends a URL-mode elicitation.
    fn elicit_url<'a>(&self, request: UrlElicitRequest<'a>) -> BoxFuture<'a, Result<Elicitation<String>, ElicitError>>;

    /// Completes a URL-mode elicitation of the session.
    fn complete_url_elicitation<'a>(
        &self,
        ctx: &'a Context,
        elicitation_id: &'a str,
    ) -> BoxFuture<'a, Result<Completed, CompleteError>>;

    // Sampling and roots.

    /// Asks the client to sample its model.
    fn sample<'a>(
        &self,
        ctx: &'a Context,
        params: CreateMessageParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ClientRequestError>>;

    /// Asks the client for its roots.
    fn roots<'a>(&self, ctx: &'a Context) -> BoxFuture<'a, Result<Vec<Root>, ClientRequestError>>;

    // Logging and progress.

    /// Whether a message at `level` would be sent to the client now.
    fn logs(&self, ctx: &Context, level: LoggingLevel) -> bool;

    /// Sends `data` (its serialization) as a `notifications/message` at `level`, after
    /// [`logs`](Self::logs) let it through.
    fn log<'a>(
        &self,
        ctx: &'a Context,
        level: LoggingLevel,
        logger: Option<&'a str>,
        data: Result<Value, serde_json::Error>,
    ) -> BoxFuture<'a, ()>;

    /// Whether progress reports reach the client.
    fn wants_progress(&self, ctx: &Context) -> bool;

    /// Reports the handler's progress.
    fn progress<'a>(
        &self,
        ctx: &'a Context,
        progress: f64,
        total: Option<f64>,
        message: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), PeerError>>;

    // Multi-round trips.

    /// Whether the request is a multi round-trip one (revision 2026-07-28).
    fn is_multi_round_trip(&self, ctx: &Context) -> bool;

    /// The id of the request that is the same in each of its rounds (2026 era).
    fn round_trip_id<'c>(&self, ctx: &'c Context) -> Option<&'c str>;
}
