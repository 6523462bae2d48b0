//! What every handler uses: reading a request's parameters, encoding a result. A leaf: it
//! imports no other file of the server.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::engine::{HandlerResult, Handling, ResultText};
use crate::protocol::{ErrorObject, Request, codes};

/// How long an announcement waits for room in one session's outbound queue.
pub(crate) const BROADCAST_PATIENCE: Duration = Duration::from_secs(1);

pub(crate) fn params<T: DeserializeOwned>(request: &Request) -> Result<T, ErrorObject> {
    let text = request.params.as_deref().map_or("{}", RawValue::get);
    serde_json::from_str(text)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid `{}` parameters: {e}", request.method)))
}

pub(crate) fn to_raw<T: Serialize>(value: &T) -> HandlerResult {
    ResultText::serialize(value).map_err(|e| ErrorObject::internal(format!("result could not be encoded: {e}")))
}

pub(crate) fn ready(result: HandlerResult) -> Handling {
    Handling::Ready(result)
}

/// Error codes that changed in the 2026 era.
pub(crate) fn error_2026(mut error: ErrorObject) -> ErrorObject {
    if error.code == codes::RESOURCE_NOT_FOUND {
        error.code = codes::INVALID_PARAMS;
    }
    error
}
