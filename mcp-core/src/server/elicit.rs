//! Elicitation from a request context: sending `elicitation/create` for `ctx.elicit::<T>(…)`
//! and its shorthands, and checking the answer against the form.

use std::time::Duration;

use serde_json::value::RawValue;

use super::Context;
use super::client_requests::{self, ClientParams};
use super::state::RequestSide;
use crate::elicit::{ElicitError, Elicitation, FormSchema};
use crate::engine::RequestOptions;
use crate::protocol::{ElicitAction, ElicitRequestParams, ElicitResult, JsonObject};

/// The default time a human has to answer an elicitation.
pub const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(10 * 60);

use crate::handler::context::MODE_REVISION;

/// [`Context::elicit_raw`], with the key of its 2026-era input request.
pub(crate) async fn elicit_raw(
    side: &RequestSide,
    ctx: &Context,
    params: ElicitRequestParams,
    timeout: Option<Duration>,
    key: Option<&str>,
) -> Result<ElicitResult, ElicitError> {
    {
        match &params {
            ElicitRequestParams::Form { requested_schema, .. } => {
                crate::elicit::validate::check_form_schema(requested_schema)
                    .map_err(|e| ElicitError::InvalidRequest(e.to_string()))?;
            }
            ElicitRequestParams::Url { elicitation_id, url, .. } => {
                if elicitation_id.is_empty() {
                    return Err(ElicitError::InvalidRequest("a URL elicitation needs an `elicitationId`".into()));
                }
                if !url.contains(':') {
                    return Err(ElicitError::InvalidRequest(format!("`{url}` is not an absolute URL")));
                }
            }
        }
        send(side, ctx, params, timeout, key).await
    }
}

/// Checks that the client declared `mode` (`form` or `url`), and
/// returns the server's default timeout. When the client did not declare it, notes the
/// missing capability (2026 era) and fails.
fn ready_for(side: &RequestSide, ctx: &Context, mode: &'static str) -> Result<Duration, ElicitError> {
    let default_timeout = side.server.elicitation_timeout;
    let capabilities = ctx.client_capabilities().ok_or(ElicitError::NoSession)?;
    let supported = match mode {
        "form" => capabilities.elicitation.as_ref().is_some_and(|e| e.supports_form()),
        _ => ctx.can_elicit_url(),
    };
    if !supported {
        client_requests::missing_capability(side, if mode == "form" { "elicitation" } else { "elicitation.url" });
        return Err(ElicitError::NotSupported { mode });
    }
    Ok(default_timeout)
}

/// The options of an elicitation request: its timeout, and cancellation with the request.
fn elicit_options(ctx: &Context, timeout: Option<Duration>, default_timeout: Duration) -> RequestOptions {
    RequestOptions { timeout: Some(timeout.unwrap_or(default_timeout)), cancel: Some(ctx.cancellation().clone()) }
}

/// Whether the negotiated revision knows `mode` in `elicitation/create` (older ones know only
/// forms, without the member).
fn sends_mode(ctx: &Context) -> bool {
    ctx.protocol_version().is_none_or(|v| v >= MODE_REVISION)
}

async fn send(
    side: &RequestSide,
    ctx: &Context,
    params: ElicitRequestParams,
    timeout: Option<Duration>,
    key: Option<&str>,
) -> Result<ElicitResult, ElicitError> {
    let default_timeout = ready_for(side, ctx, params.mode())?;
    let mut wire = serde_json::to_value(&params).map_err(|e| ElicitError::InvalidRequest(e.to_string()))?;
    if ctx.is_multi_round_trip() {
        // 2026-07-28 has no completion notifications, and no `elicitationId` to tie them to.
        if let Some(o) = wire.as_object_mut() {
            o.remove("elicitationId");
        }
    }
    if !sends_mode(ctx) {
        // URL requests were refused above.
        if let Some(o) = wire.as_object_mut() {
            o.remove("mode");
        }
    }
    // The request is all that is sent: a form's schema copied into `params` must not be kept
    // for as long as the user takes to answer.
    drop(params);
    let options = elicit_options(ctx, timeout, default_timeout);
    client_requests::request_keyed(side, ctx, "elicitation/create", ClientParams::Value(wire), options, key, false)
        .await
        .map_err(ElicitError::from_peer)
}

/// Sends a form and checks the answer against it.
pub(crate) async fn send_form(
    side: &RequestSide,
    ctx: &Context,
    message: &str,
    schema: &FormSchema,
    timeout: Option<Duration>,
    key: Option<&str>,
    before_task: bool,
) -> Result<Elicitation<JsonObject>, ElicitError> {
    let default_timeout = ready_for(side, ctx, "form")?;
    // Written out here rather than through `ElicitRequestParams`: the schema's text is kept
    // in the `FormSchema`, so a question neither copies the schema nor serializes it again.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct FormParams<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        mode: Option<&'static str>,
        message: &'a str,
        requested_schema: &'a RawValue,
    }
    let params = FormParams { mode: sends_mode(ctx).then_some("form"), message, requested_schema: schema.as_raw() };
    // The schema is written from its text as it is, not parsed again.
    let wire = serde_json::value::to_raw_value(&params).map_err(|e| ElicitError::InvalidRequest(e.to_string()))?;
    let options = elicit_options(ctx, timeout, default_timeout);
    let result: ElicitResult = client_requests::request_keyed(
        side,
        ctx,
        "elicitation/create",
        ClientParams::Raw(wire),
        options,
        key,
        before_task,
    )
    .await
    .map_err(ElicitError::from_peer)?;
    Ok(match result.action {
        ElicitAction::Accept => {
            let mut content = result.content.unwrap_or_default();
            schema
                .validate(&mut content)
                .map_err(|e| ElicitError::InvalidResponse { field: Some(e.field), reason: e.rule })?;
            Elicitation::Accept(content)
        }
        ElicitAction::Decline => Elicitation::Decline,
        ElicitAction::Cancel => Elicitation::Cancel,
    })
}
