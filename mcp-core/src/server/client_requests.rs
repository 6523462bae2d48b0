//! What a handler asks of the client (`ctx.elicit`, `ctx.sample`, `ctx.roots`): a request
//! sent on the session (2025 era), a question of the `input_required` result (2026 era), or
//! a question of the task the call became.

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Context;
use super::state::RequestSide;
use crate::engine::{PeerError, RequestOptions};
use crate::protocol::ErrorObject;

/// The parameters of a request to the client: a value, or JSON text written beforehand (a
/// form's schema is serialized once per form, not once per question).
pub(crate) enum ClientParams {
    /// A value, serialized when sent.
    Value(Value),
    /// JSON text, sent as it is.
    Raw(Box<RawValue>),
}

impl ClientParams {
    fn into_value(self) -> Result<Value, PeerError> {
        match self {
            ClientParams::Value(v) => Ok(v),
            ClientParams::Raw(raw) => serde_json::from_str(raw.get()).map_err(|e| PeerError::Codec(e.to_string())),
        }
    }
}

impl serde::Serialize for ClientParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ClientParams::Value(v) => v.serialize(serializer),
            ClientParams::Raw(raw) => raw.serialize(serializer),
        }
    }
}

/// Sends a request to the client of `ctx`, or, in the 2026 era, asks for it in the
/// `input_required` result of the current request (answered on the client's retry).
pub(crate) async fn request<R: DeserializeOwned>(
    side: &RequestSide,
    ctx: &Context,
    method: &str,
    params: Value,
    options: RequestOptions,
) -> Result<R, PeerError> {
    request_keyed(side, ctx, method, ClientParams::Value(params), options, None, false).await
}

/// [`request`], whose input request (2026 era) has the key `key` instead of the next in call
/// order. In a call that may become a task, the question goes to the task (see
/// [`crate::task`]), unless `before_task` asks for it in the call's own round while the task
/// has not started.
pub(crate) async fn request_keyed<R: DeserializeOwned>(
    side: &RequestSide,
    ctx: &Context,
    method: &str,
    params: ClientParams,
    options: RequestOptions,
    key: Option<&str>,
    before_task: bool,
) -> Result<R, PeerError> {
    let scoped = if key.is_none() { crate::multi_round::scoped_key() } else { None };
    let key = key.or(scoped.as_deref());
    // While the call is held from becoming a task, every question is asked as `before_task`.
    let before_task = before_task || side.rounds().is_some_and(crate::multi_round::Rounds::held);
    if let Some(run) = side.session.task.get().filter(|run| run.started() || !before_task) {
        let key = run.key(key);
        let answer = run.ask(key.clone(), method, params.into_value()?, options.timeout).await?;
        // `tasks/update` checked the answer's shape.
        return R::deserialize(answer)
            .map_err(|e| PeerError::Codec(format!("input response `{key}` is not a valid `{method}` result: {e}")));
    }
    match side.rounds() {
        Some(rounds) => {
            let key = rounds.key(key);
            let params = params.into_value()?;
            match rounds.answer_or_ask(&key, method, params) {
                Some(answer) => match R::deserialize(answer) {
                    Ok(answer) => Ok(answer),
                    // Not an answer to the question: the client's mistake, not the
                    // handler's; the request fails with invalid params and the run ends.
                    Err(e) => {
                        rounds.reject(ErrorObject::invalid_params(format!(
                            "input response `{key}` is not a valid `{method}` result: {e}"
                        )));
                        rounds.ended().await;
                        Err(PeerError::Cancelled)
                    }
                },
                // The run ends here: the server answers `input_required` and the client's
                // retry runs the handler again with the answer. (A question asked from a
                // task the handler spawned may outlive the run: it ends with it.)
                None => {
                    rounds.ended().await;
                    Err(PeerError::Cancelled)
                }
            }
        }
        // The parameters are dropped once encoded, not kept while the client answers.
        #[cfg(feature = "otel")]
        None if side.server.telemetry.is_some() => traced_request(side, ctx, method, params, options).await,
        None => ctx.peer().request_owned(method, params, options).await,
    }
}

/// Notes that the request of `side` needed the client capability at `path` (`sampling`,
/// `sampling.tools`, `roots`, `elicitation`…), which the client did not declare. In the 2026
/// era, a handler that then fails makes the request fail with -32021
/// (`MissingRequiredClientCapability`) naming it; in the 2025 era nothing changes.
pub(crate) fn missing_capability(side: &RequestSide, path: &str) {
    if let Some(rounds) = side.rounds() {
        rounds.require(path);
    }
}

/// A request to the client in its `CLIENT` span, with the span's context in its `_meta`.
#[cfg(feature = "otel")]
async fn traced_request<R: DeserializeOwned>(
    side: &RequestSide,
    ctx: &Context,
    method: &str,
    params: ClientParams,
    options: RequestOptions,
) -> Result<R, PeerError> {
    use crate::telemetry::{Failure, Transport};
    let Some(telemetry) = &side.server.telemetry else { unreachable!("checked by the caller") };
    let mut params = match params.into_value()? {
        Value::Object(object) => object,
        _ => crate::protocol::JsonObject::new(),
    };
    #[cfg(feature = "http")]
    let transport = if ctx.http().is_some() { Transport::Tcp } else { Transport::Pipe };
    #[cfg(not(feature = "http"))]
    let transport = Transport::Pipe;
    let operation = telemetry.sending(method, &mut params, ctx.protocol_version(), transport, None);
    let outcome = ctx.peer().request_raw(method, &params, options).await;
    operation.end(match &outcome {
        Ok(raw) => Ok(Some(raw.get())),
        Err(e) => Err(Failure::of_peer(e)),
    });
    let raw = outcome?;
    serde_json::from_str(raw.get()).map_err(|e| PeerError::Codec(format!("invalid `{method}` result: {e}")))
}
