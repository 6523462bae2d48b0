//! `Context`: URL-mode elicitation.

use std::future::IntoFuture;
use std::time::Duration;

use super::{Context, SessionKey};
use crate::elicit::{ElicitError, Elicitation};
use crate::engine::{BoxFuture, PeerError};

/// Why a URL-mode elicitation could not be completed. Nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CompleteError {
    /// No elicitation has this id (or its session has ended).
    #[error("no URL elicitation with id `{0}` is pending")]
    Unknown(String),
    /// The elicitation was already completed.
    #[error("URL elicitation `{0}` is already complete")]
    AlreadyCompleted(String),
    /// The elicitation belongs to another session (or user) than the one completing it.
    #[error("URL elicitation `{0}` belongs to another session")]
    Foreign(String),
    /// The notification could not be delivered.
    #[error("the completion notification could not be sent: {0}")]
    Send(PeerError),
    /// The flow belongs to a session another instance of the deployment holds, and that
    /// instance could not deliver the notification (its reason).
    #[error("the instance holding the flow could not complete it: {0}")]
    Remote(String),
}

/// The result of a completion: whose flow it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completed {
    /// The elicitation.
    pub elicitation_id: String,
    /// The session that asked for it.
    pub session: SessionKey,
    /// The authenticated user who asked, where the transport knows one.
    pub principal: Option<String>,
}

/// A URL-mode elicitation being prepared. Await it to send it; `.timeout(…)` first to override
/// the default wait for the user's consent.
#[must_use = "an elicitation is sent only when awaited"]
#[derive(Debug)]
pub struct UrlElicitRequest<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) id: Option<String>,
    pub(crate) url: String,
    pub(crate) message: String,
    pub(crate) timeout: Option<Duration>,
    pub(crate) key: Option<String>,
}

impl UrlElicitRequest<'_> {
    /// Waits at most `timeout` for the user's answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The key of this request in a 2026-era `input_required` result, instead of its place in
    /// call order (`input-0`, `input-1`, …); see [`crate::multi_round`]. Ignored in the 2025 era.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl<'a> IntoFuture for UrlElicitRequest<'a> {
    /// On accept (the user agreed to open the URL — the flow itself is not done yet), the
    /// elicitation id; the flow's page completes it through [`UrlElicitations::complete`](crate::server::UrlElicitations::complete).
    type Output = Result<Elicitation<String>, ElicitError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        self.ctx.side().elicit_url(self)
    }
}

impl Context {
    // URL elicitation.

    /// Creates an elicitation id (128 random bits) owned by this session, for a URL the user
    /// will visit: use it in a [`UrlElicitationRequired`](crate::elicit::UrlElicitationRequired)
    /// error, or build a URL with it first.
    ///
    /// In the 2026 era the handler is replayed on each round of a request (see
    /// [`crate::multi_round`]), and the ids it makes are too: the n-th id made in any round of one
    /// request is the same, so the flow the user was sent to in an earlier round is the one
    /// the handler sees on the retry.
    pub fn new_url_elicitation_id(&self) -> String {
        self.side().new_url_elicitation_id(self)
    }

    /// Asks the user to open `url` (URL mode). The SDK creates the elicitation id and replaces
    /// `{elicitationId}` in `url` with it, so the page can tell which flow it serves:
    ///
    /// ```no_run
    /// # async fn f(ctx: typed_mcp::Context) -> Result<(), typed_mcp::ElicitError> {
    /// use typed_mcp::Elicitation;
    /// match ctx.elicit_url("https://example.com/connect?flow={elicitationId}", "Connect your calendar").await? {
    ///     Elicitation::Accept(id) => println!("the user is completing flow {id}"),
    ///     Elicitation::Decline | Elicitation::Cancel => println!("the user refused"),
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Never put secrets in the URL: the client and the model see it.
    pub fn elicit_url(&self, url: impl Into<String>, message: impl Into<String>) -> UrlElicitRequest<'_> {
        UrlElicitRequest { ctx: self, id: None, url: url.into(), message: message.into(), timeout: None, key: None }
    }

    /// Like [`elicit_url`](Self::elicit_url) with an id of the caller's choosing (recorded as
    /// owned by this session; an id another session owns is refused).
    pub fn elicit_url_with_id(
        &self,
        elicitation_id: impl Into<String>,
        url: impl Into<String>,
        message: impl Into<String>,
    ) -> UrlElicitRequest<'_> {
        UrlElicitRequest {
            ctx: self,
            id: Some(elicitation_id.into()),
            url: url.into(),
            message: message.into(),
            timeout: None,
            key: None,
        }
    }

    /// Completes a URL-mode elicitation of this session: sends
    /// `notifications/elicitation/complete`. An id of another session is refused.
    pub async fn complete_url_elicitation(&self, elicitation_id: &str) -> Result<Completed, CompleteError> {
        self.side().complete_url_elicitation(elicitation_id).await
    }
}
