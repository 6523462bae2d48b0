//! A 2026-07-28 request from start to finish: sent with the client's `_meta`, and while the
//! server answers `input_required`, its questions answered by the client's handlers (all the
//! questions of one round at once) and the request sent again with the answers in
//! `inputResponses` and the server's `requestState` as it was given.
//!
//! A round that asks nothing (a flow the user is completing in the browser) is retried after
//! a pause that grows from 100 ms to 2 s, for at most the URL elicitation timeout. Rounds that
//! ask something are bounded by the client's `max_input_rounds`. The whole exchange shares
//! one timeout and one cancellation token, as a session-era call does.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::ClientError;
use super::era::{Era2026, Sent};
use super::service::{ClientShared, answer_input};
use crate::engine::{Peer, PeerError, RequestOptions};
use crate::protocol::era_2026::{
    InputRequest, InputRequiredResult, RESULT_COMPLETE, RESULT_INPUT_REQUIRED, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::{ErrorObject, JsonObject};

/// The `resultType` of a call answered with a task.
pub(crate) const RESULT_TASK: &str = "task";

/// How many rounds with questions a request may take unless configured otherwise.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 16;

/// The first pause before retrying a round that asked nothing.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between such retries.
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// A 2026-07-28 request's complete result, as the server wrote it.
pub(crate) struct Completed {
    pub(crate) raw: Box<RawValue>,
    /// Whether it is a task (the tasks extension), not the request's result.
    pub(crate) task: bool,
}

impl Completed {
    /// The result read as `R`.
    pub(crate) fn decode<R: DeserializeOwned>(&self, method: &str) -> Result<R, ClientError> {
        serde_json::from_str(self.raw.get()).map_err(|e| ClientError::Codec(format!("invalid `{method}` result: {e}")))
    }
}

/// The member of a result that says what it is.
#[derive(Deserialize)]
struct ResultKind<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
}

/// What a 2026-07-28 request needs of its client.
pub(crate) struct RoundTrip<'a> {
    pub(crate) peer: &'a Peer,
    pub(crate) shared: &'a Arc<ClientShared>,
    pub(crate) era_2026: &'a Era2026,
    pub(crate) max_rounds: usize,
    pub(crate) url_wait: Duration,
    /// The client's telemetry: the request, all its rounds, is one `CLIENT` span.
    #[cfg(feature = "otel")]
    pub(crate) traced: Option<&'a super::traced::Traced>,
}

impl RoundTrip<'_> {
    /// Sends `method` with `params` until the server's answer is complete; the result (its
    /// `resultType` included).
    pub(crate) async fn request(
        &self,
        method: &str,
        #[cfg_attr(not(feature = "otel"), allow(unused_mut))] mut params: JsonObject,
        options: RequestOptions,
    ) -> Result<Completed, ClientError> {
        #[cfg(feature = "otel")]
        if let Some(traced) = self.traced {
            use opentelemetry::context::FutureExt;
            let version = self.era_2026.version();
            let operation =
                traced.telemetry.sending(method, &mut params, Some(&version), traced.transport, traced.server());
            let cx = operation.context().clone();
            let outcome = self.untraced(method, params, options).with_context(cx).await;
            operation.end(match &outcome {
                Ok(completed) => Ok(Some(completed.raw.get())),
                Err(e) => Err(failure(e)),
            });
            return outcome;
        }
        self.untraced(method, params, options).await
    }

    async fn untraced(
        &self,
        method: &str,
        params: JsonObject,
        options: RequestOptions,
    ) -> Result<Completed, ClientError> {
        let cancel = options.cancel.clone();
        // One select over the exchange, the token and the deadline: the exchange's future is
        // held once, not once inside each wrapper.
        let cancelled = async {
            match &cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let expired = async {
            match options.timeout {
                Some(timeout) => tokio::time::sleep(timeout).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = cancelled => Err(ClientError::Cancelled),
            r = self.rounds(method, params, cancel.clone()) => r,
            () = expired => Err(ClientError::Timeout {
                method: method.to_owned(),
                timeout: options.timeout.unwrap_or_default(),
            }),
        }
    }

    async fn rounds(
        &self,
        method: &str,
        params: JsonObject,
        cancel: Option<CancellationToken>,
    ) -> Result<Completed, ClientError> {
        let mut state: Option<String> = None;
        let mut answers: Option<JsonObject> = None;
        let mut asked_rounds = 0;
        let mut waited = Duration::ZERO;
        let mut pause = FIRST_PAUSE;
        let mut version_retried = false;
        loop {
            // The answers of the last round go with this one only.
            let responses = answers.take();
            let sent = Sent {
                era: self.era_2026,
                params: &params,
                input_responses: responses.as_ref(),
                request_state: state.as_deref(),
            };
            let options = RequestOptions { timeout: None, cancel: cancel.clone() };
            let raw = match self.peer.request_raw(method, &sent, options).await {
                Ok(raw) => raw,
                Err(PeerError::Rpc(error)) if error.code == UNSUPPORTED_PROTOCOL_VERSION && !version_retried => {
                    version_retried = true;
                    if self.era_2026.switch_to_supported(&supported_versions(&error), true) {
                        tracing::debug!(%method, version = %self.era_2026.version(), "retrying with a revision the server supports");
                        // The same request again, from its first round.
                        state = None;
                        continue;
                    }
                    return Err(ClientError::from(PeerError::Rpc(error)));
                }
                Err(e) => return Err(e.into()),
            };
            let kind: ResultKind<'_> = serde_json::from_str(raw.get())
                .map_err(|e| ClientError::Codec(format!("invalid `{method}` result: {e}")))?;
            match kind.result_type.as_deref() {
                // A task (the tasks extension): the caller, which asked for one, polls it.
                None | Some(RESULT_COMPLETE) => return Ok(Completed { raw, task: false }),
                Some(RESULT_TASK) => return Ok(Completed { raw, task: true }),
                Some(RESULT_INPUT_REQUIRED) => {}
                Some(other) => return Err(ClientError::UnexpectedResultType(other.to_owned())),
            }
            let input: InputRequiredResult = serde_json::from_str(raw.get())
                .map_err(|e| ClientError::Codec(format!("invalid `input_required` result of `{method}`: {e}")))?;
            state = input.request_state;
            match input.input_requests.filter(|r| !r.is_empty()) {
                Some(requests) => {
                    asked_rounds += 1;
                    if asked_rounds > self.max_rounds {
                        return Err(ClientError::TooManyRounds(self.max_rounds));
                    }
                    tracing::debug!(%method, round = asked_rounds, questions = requests.len(), "answering the server's questions");
                    let asked = futures_util::future::try_join_all(
                        requests.into_iter().map(|(key, request)| answer(self.shared.clone(), key, request)),
                    )
                    .await?;
                    answers = Some(asked.into_iter().collect());
                }
                None => {
                    // Nothing to ask: something the user is doing elsewhere is under way.
                    if waited >= self.url_wait {
                        return Err(ClientError::Timeout { method: method.to_owned(), timeout: self.url_wait });
                    }
                    tokio::time::sleep(pause).await;
                    waited += pause;
                    pause = (pause * 2).min(MAX_PAUSE);
                }
            }
        }
    }
}

/// The revisions an -32022 error says the server supports.
fn supported_versions(error: &ErrorObject) -> Vec<String> {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

tokio::task_local! {
    static INPUT_KEY: String;
}

/// In a handler of the client (elicitation, sampling, roots) answering a question of a
/// 2026-07-28 `input_required` result or of a task's `inputRequests`: the key the server gave
/// the question. `None` for a request of a session (2025 era), which has no key. A gateway
/// passes it on ([`crate::multi_round::keyed`]) so that the question keeps its key.
pub fn input_key() -> Option<String> {
    INPUT_KEY.try_with(Clone::clone).ok()
}

/// Answers one question of an `input_required` result with the client's handlers.
pub(crate) async fn answer(
    shared: Arc<ClientShared>,
    key: String,
    request: Value,
) -> Result<(String, Value), ClientError> {
    let request: InputRequest = serde_json::from_value(request)
        .map_err(|e| ClientError::Codec(format!("invalid input request `{key}`: {e}")))?;
    let mut params = request.params;
    // A URL-mode question names no elicitation id in this era: the key stands for it.
    if request.method == "elicitation/create"
        && let Some(p) = params.as_object_mut()
        && p.get("mode").and_then(Value::as_str) == Some("url")
        && !p.contains_key("elicitationId")
    {
        p.insert("elicitationId".into(), Value::String(key.clone()));
    }
    match INPUT_KEY.scope(key.clone(), answer_input(&shared, &request.method, params)).await {
        Ok(answer) => Ok((key, answer)),
        Err(error) => Err(ClientError::InputRequest { key, method: request.method, error: Box::new(error) }),
    }
}

/// How a request failed, as telemetry records it.
#[cfg(feature = "otel")]
fn failure(error: &ClientError) -> crate::telemetry::Failure {
    use crate::telemetry::Failure;
    match error {
        ClientError::Rpc(e) => Failure::Rpc { code: e.code, message: e.message.clone() },
        ClientError::UrlElicitationRequired(_) => {
            Failure::Rpc { code: crate::protocol::codes::URL_ELICITATION_REQUIRED, message: error.to_string() }
        }
        ClientError::Timeout { .. } => Failure::Other("timeout", error.to_string()),
        ClientError::Cancelled => Failure::Other("cancelled", error.to_string()),
        ClientError::Closed => Failure::Other("closed", error.to_string()),
        _ => Failure::Other("_OTHER", error.to_string()),
    }
}
