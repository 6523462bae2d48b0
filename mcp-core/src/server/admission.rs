//! Admitting a request that came over HTTP, before it is served: whether its token has the
//! scopes of what it calls (else the client is told to step up), and, in the 2026 era,
//! whether its headers agree with its body.

use axum::http::HeaderMap;

use super::ServerInner;
use crate::auth::RequestIdentity;
use crate::protocol::codes::HEADER_MISMATCH;
use crate::protocol::era_2026::{MCP_METHOD_HEADER, MCP_NAME_HEADER, decode_header_value};
use crate::protocol::methods::{Era, Method, MethodInfo};
use crate::protocol::view::{Meta2026Text, ParamsView};
use crate::protocol::{ErrorObject, JsonObject, Request};
use crate::transport::http::{PROTOCOL_VERSION_HEADER, Refusal};

/// Whether the token of the request, of `method` about `target`, has every scope it needs:
/// those the endpoint asks of every request (`endpoint`) and those of the tool, prompt or
/// resource it names. Nothing is checked for a request without a verified identity.
pub(crate) fn scopes(
    server: &ServerInner,
    identity: &RequestIdentity,
    endpoint: &[String],
    method: &MethodInfo,
    target: Option<&str>,
) -> Result<(), Refusal> {
    let Some(info) = &identity.identity else { return Ok(()) };
    let mut needed = endpoint.to_vec();
    needed.extend(super::scopes::required(server, method, target).iter().cloned());
    let missing: Vec<String> = info.missing(&needed).into_iter().map(str::to_owned).collect();
    if missing.is_empty() { Ok(()) } else { Err(Refusal::InsufficientScope { needed, missing }) }
}

/// The header rules of the 2026 era: `Mcp-Method` (and `Mcp-Name` where the method has a
/// target) must be present and agree with the body, as must `MCP-Protocol-Version` with
/// `_meta`, and the `Mcp-Param-*` headers of a tool call with the arguments they mirror.
pub(crate) fn headers_2026(
    server: &ServerInner,
    headers: &HeaderMap,
    request: &Request,
    method: Option<&MethodInfo>,
    text: &str,
    view: &ParamsView,
    meta: &Meta2026Text<'_>,
) -> Result<(), ErrorObject> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    match (header(PROTOCOL_VERSION_HEADER), meta.version()) {
        (Some(h), Some(b)) if h != b => {
            return Err(mismatch(format!("MCP-Protocol-Version header `{h}` does not match `_meta` version `{b}`")));
        }
        (None, Some(_)) => return Err(mismatch("missing MCP-Protocol-Version header".into())),
        _ => {}
    }
    match header(MCP_METHOD_HEADER).and_then(decode_header_value) {
        None => return Err(mismatch("missing Mcp-Method header".into())),
        Some(m) if m != request.method.as_str() => {
            return Err(mismatch(format!("Mcp-Method header `{m}` does not match body method `{}`", request.method)));
        }
        Some(_) => {}
    }
    let Some(method) = method.filter(|m| m.target.is_some() && m.valid_in(Era::Y2026)) else { return Ok(()) };
    let name = view.target(text);
    match (header(MCP_NAME_HEADER).and_then(decode_header_value), name) {
        (None, _) => return Err(mismatch("missing Mcp-Name header".into())),
        (Some(h), Some(b)) if h != b => {
            return Err(mismatch(format!("Mcp-Name header value '{h}' does not match body value '{b}'")));
        }
        (Some(_), None) => return Err(mismatch("Mcp-Name header given but the body names nothing".into())),
        _ => {}
    }
    match (method.id, name) {
        (Method::ToolsCall, Some(tool)) => {
            param_headers(server, tool, ParamsView::text(text, &view.arguments), headers)
        }
        _ => Ok(()),
    }
}

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

/// Whether the `Mcp-Param-*` headers of a call of `tool` agree with its `arguments` (JSON
/// text), as the tool's `x-mcp-header` annotations say.
fn param_headers(
    server: &ServerInner,
    tool: &str,
    arguments: Option<&str>,
    headers: &HeaderMap,
) -> Result<(), ErrorObject> {
    // Read where they were checked, without cloning the tool (a tool the server does not
    // have fails on its own, later).
    let Some(params) = server.tools.read(|tools| tools.get(tool).map(|t| t.mirrored_headers())) else {
        return Ok(());
    };
    if params.is_empty() {
        return Ok(());
    }
    let arguments: JsonObject = arguments.and_then(|a| serde_json::from_str(a).ok()).unwrap_or_default();
    for param in params.iter() {
        let header = format!("mcp-param-{}", param.header);
        let at = param.path.join(".");
        match (param.value(&arguments), headers.get(header.as_str())) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Mcp-Param-{} header given but the arguments have no `{at}`",
                    param.header
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!("missing Mcp-Param-{} header for the argument `{at}`", param.header)));
            }
            (Some(body), Some(raw)) => {
                let decoded = raw.to_str().ok().and_then(decode_header_value).ok_or_else(|| {
                    mismatch(format!("Mcp-Param-{} header holds invalid characters or invalid Base64", param.header))
                })?;
                if !param.matches(&decoded, body) {
                    return Err(mismatch(format!(
                        "Mcp-Param-{} header value '{decoded}' does not match the argument `{at}` ({body})",
                        param.header
                    )));
                }
            }
        }
    }
    Ok(())
}
