//! `tools/list` and `tools/call`.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::ServerInner;
use super::handling::{params, ready};
use super::state::SessionState;
use crate::engine::{Handling, RequestScope};
use crate::handler::Meta;
use crate::protocol::methods::{Method, MethodInfo};
use crate::protocol::scan::{Key, without_position};
use crate::protocol::view::{NO_PARAMS, ParamsView};
use crate::protocol::{ErrorObject, PaginatedParams, ProgressToken, Request, TaskSupport};
use crate::tool::{Arguments, ToolCall};

/// `tools/list`: the page the cursor names, or, for a token that hides what it may not use,
/// the tools it may call.
pub(crate) fn list(server: &ServerInner, state: &SessionState, scope: &RequestScope, request: &Request) -> Handling {
    if let Some(filtered) = super::scopes::filtered_list(server, state, scope, Method::ToolsList) {
        return ready(filtered);
    }
    ready(params(request).and_then(|p: PaginatedParams| server.tools.page(p.cursor.as_deref())))
}

/// `tools/call`: the tool's own future, if it has one, is the request's handler (no second box
/// around it). The parameters are read in place: the name is looked up where it is, and the
/// arguments stay in the request's text, which the call keeps (see `Arguments`). `view` is
/// the parameters already read (a 2026-era request is read once, before it gets here).
pub(crate) fn call(
    server: &Arc<ServerInner>,
    state: &Arc<SessionState>,
    method: &MethodInfo,
    request: Request,
    view: Option<ParamsView>,
    scope: RequestScope,
) -> Result<Handling, ErrorObject> {
    let invalid =
        |e: &dyn std::fmt::Display| ErrorObject::invalid_params(format!("invalid `tools/call` parameters: {e}"));
    let text: Box<str> = request.params.map_or_else(|| NO_PARAMS.into(), Into::into);
    let view = match view {
        Some(view) => view,
        None => ParamsView::read(&text, Some(method)).map_err(|e| invalid(&e))?,
    };
    let name = view.target.ok_or_else(|| invalid(&"missing field `name`"))?;
    // A task outlives the request that carried the token: its progress would go nowhere once
    // the task is returned. It becomes the task's `statusMessage` instead (the client follows
    // the task with `tasks/get`; see `Context::progress`).
    let meta_text = ParamsView::text(&text, &view.meta);
    let progress_token = match meta_text {
        Some(meta) if state.task.get().is_none() => progress_token(meta).map_err(|e| invalid(&e))?,
        _ => None,
    };
    // Checked to be an object by `progress_token`, or read as one already by the 2026 era.
    let meta = Meta::checked(meta_text.filter(|m| m.trim_start().starts_with('{')));
    // The arguments keep the whole text, where the name is found again.
    let (name, arguments) = match view.arguments {
        Some(object) => (name, Arguments::within(text, object).map_err(|e| invalid(&e))?),
        None => (Key::Decoded(name.in_text(&text).into()), Arguments::default()),
    };
    // The tool is used in place: cloning its definition (schemas included) for every call
    // would cost more than most tools do.
    server.tools.read(|tools| {
        let name = name.in_text(arguments.source());
        let tool = tools.get(name).ok_or_else(|| ErrorObject::invalid_params(format!("unknown tool: `{name}`")))?;
        if tool.task_mode() == TaskSupport::Required && state.task.get().is_none() {
            return Err(super::tasks::extension_required(&format!(
                "the tool `{name}` runs only as a task, and the client did not negotiate the tasks extension"
            )));
        }
        let ctx = super::context_side::for_request(scope, progress_token, meta, state.clone(), server.clone());
        // A handler written by hand may panic before it returns its future, too.
        Ok(match std::panic::catch_unwind(AssertUnwindSafe(|| tool.call_raw(ToolCall { ctx, arguments }))) {
            Ok(call) => call,
            Err(panic) => ready(crate::tool::panicked(tool.name(), &*panic)),
        })
    })
}

/// The progress token in a request's `_meta`, if it has one. Only that member is read: the
/// rest of `_meta` (in the 2026 era, the client's capabilities and identity) is not built
/// into a tree for nothing.
fn progress_token(meta: &str) -> Result<Option<ProgressToken>, String> {
    #[derive(serde::Deserialize)]
    struct TokenOnly<'a> {
        #[serde(rename = "progressToken", borrow, default)]
        token: Option<&'a RawValue>,
    }
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("progressToken"));
    if KEY.find(meta.as_bytes()).is_none() {
        // Still an object, as `_meta` must be.
        return if meta.trim_start().starts_with('{') {
            Ok(None)
        } else {
            Err("invalid `_meta`: expected an object".to_owned())
        };
    }
    let only: TokenOnly<'_> =
        serde_json::from_str(meta).map_err(|e| format!("invalid `_meta`: {}", without_position(&e)))?;
    only.token
        .filter(|t| t.get() != "null")
        .map(|t| serde_json::from_str(t.get()))
        .transpose()
        .map_err(|e| format!("invalid `_meta`: {}", without_position(&e)))
}
