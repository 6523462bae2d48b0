//! What every handler uses: reading a request's parameters, encoding a result, the request's
//! [`Context`]. A leaf: it imports no other file of the server.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::state::SessionState;
use super::{Context, ServerInner};
use crate::engine::{HandlerResult, Handling, RequestScope, ResultText};
use crate::handler::Meta;
use crate::protocol::{ErrorObject, Request, RequestMeta, codes};

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

/// The request context for `request`, with its `_meta` and the progress token there, if any.
pub(crate) fn context(
    server: &Arc<ServerInner>,
    session: &Arc<SessionState>,
    request: &Request,
    scope: RequestScope,
) -> Context {
    #[derive(serde::Deserialize)]
    struct MetaOnly<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<&'a RawValue>,
    }
    let meta = request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<MetaOnly<'_>>(p.get()).ok())
        .and_then(|m| m.meta)
        .filter(|m| m.get().starts_with('{'));
    let token = meta.and_then(|m| serde_json::from_str::<RequestMeta>(m.get()).ok()).and_then(|m| m.progress_token);
    let meta = Meta::checked(meta.map(RawValue::get));
    Context::for_request(scope, token, meta, session.clone(), server.clone())
}

/// Error codes that changed in the 2026 era.
pub(crate) fn error_2026(mut error: ErrorObject) -> ErrorObject {
    if error.code == codes::RESOURCE_NOT_FOUND {
        error.code = codes::INVALID_PARAMS;
    }
    error
}
