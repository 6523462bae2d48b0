//! Which OAuth scopes a request needs, and lists without what a token may not use.

#[cfg(feature = "http")]
use std::sync::Arc;

use serde_json::{Map, Value};

use super::ServerInner;
use super::catalog::Listed;
use super::state::SessionState;
use crate::auth::AuthInfo;
use crate::engine::ResultText;
use crate::protocol::ErrorObject;
use crate::protocol::methods::Method;
#[cfg(feature = "http")]
use crate::protocol::methods::MethodInfo;

/// The scopes the tool, prompt or resource a request of `method` about `target` needs (empty
/// for anything else, and for a target the server does not have: that request fails on its
/// own).
#[cfg(feature = "http")]
pub(crate) fn required(server: &ServerInner, method: &MethodInfo, target: Option<&str>) -> Arc<[String]> {
    let none = || Arc::from([]);
    let Some(target) = target else { return none() };
    match method.id {
        Method::ToolsCall => server.tools.read(|s| s.get(target).map(|t| t.scopes.clone())),
        Method::PromptsGet => server.surface.prompts.read(|s| s.get(target).map(|p| p.scopes.clone())),
        Method::ResourcesRead => super::resources::resolve(server, target).map(|(d, _)| d.scopes.clone()),
        _ => None,
    }
    .unwrap_or_else(none)
}

/// For a session whose token hides what it may not use: the list result `method` would give,
/// with only what `auth` has the scopes for, in one page. `None` when nothing is hidden.
pub(crate) fn filtered_list(
    server: &ServerInner,
    state: &SessionState,
    scope: &crate::engine::RequestScope,
    method: Method,
) -> Option<Result<ResultText, ErrorObject>> {
    let (auth, hides) = state.auth(scope);
    let auth = auth?;
    if !hides {
        return None;
    }
    let allowed = |scopes: &[String]| auth_has(&auth, scopes);
    let (field, items): (&str, Vec<Value>) = match method {
        Method::ToolsList => (
            "tools",
            server.tools.read(|s| s.items.iter().filter(|t| allowed(&t.scopes)).map(|t| to_value(&t.tool)).collect()),
        ),
        Method::PromptsList => (
            "prompts",
            server
                .surface
                .prompts
                .read(|s| s.items.iter().filter(|p| allowed(&p.scopes)).map(|p| to_value(&p.prompt)).collect()),
        ),
        Method::ResourcesList => (
            "resources",
            server
                .surface
                .resources
                .read(|s| s.items.iter().filter(|r| allowed(&r.def.scopes)).map(|r| to_value(r.wire())).collect()),
        ),
        _ => return None,
    };
    let mut result = Map::new();
    result.insert(field.to_owned(), Value::Array(items));
    Some(ResultText::serialize(&result).map_err(|e| ErrorObject::internal(e.to_string())))
}

fn auth_has(auth: &AuthInfo, scopes: &[String]) -> bool {
    scopes.iter().all(|s| auth.has_scope(s))
}

fn to_value<T: serde::Serialize>(item: &T) -> Value {
    serde_json::to_value(item).unwrap_or(Value::Null)
}
