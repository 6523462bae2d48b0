//! Prompts: definitions, argument extraction and result conversion.
//!
//! `#[prompt]` expands to calls into this module; everything it generates can also be written
//! by hand with [`PromptDef::new`].

mod value;

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

pub use value::ArgumentValue;

use crate::engine::BoxFuture;
use crate::handler::{Completer, Context};
use crate::protocol::{ErrorObject, GetPromptResult, Prompt, PromptArgument, PromptMessage};

/// One `prompts/get` as a handler sees it: the request context and the argument values.
#[derive(Debug)]
pub struct PromptCall {
    /// The request context.
    pub ctx: Context,
    /// The arguments, as sent (strings).
    pub arguments: HashMap<String, String>,
}

type Handler = dyn Fn(PromptCall) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> + Send + Sync;

/// A prompt: what `prompts/list` shows and what `prompts/get` runs.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Arc<Handler>,
    pub(crate) completers: HashMap<String, Completer>,
    /// OAuth scopes a `prompts/get` needs.
    pub(crate) scopes: Arc<[String]>,
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef").field("prompt", &self.prompt).finish_non_exhaustive()
    }
}

impl PromptDef {
    /// A prompt named `name`, filled in by `handler`. Declare its arguments with
    /// [`argument`](Self::argument): the server refuses a `prompts/get` that lacks a required one
    /// before the handler runs.
    ///
    /// ```
    /// use typed_mcp::prompt::{PromptCall, PromptDef};
    /// use typed_mcp::protocol::PromptMessage;
    /// let prompt = PromptDef::new("greet", |call: PromptCall| async move {
    ///     let name = call.arguments.get("name").cloned().unwrap_or_default();
    ///     Ok::<_, typed_mcp::ErrorObject>(vec![PromptMessage::user(format!("Say hello to {name}."))])
    /// })
    /// .description("Greets someone.")
    /// .argument("name", Some("Who to greet."), true);
    /// assert_eq!(prompt.name(), "greet");
    /// ```
    pub fn new<F, Fut, R>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(PromptCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoPromptResult,
    {
        PromptDef {
            prompt: Prompt {
                name: name.into(),
                title: None,
                description: None,
                arguments: None,
                icons: None,
                meta: None,
            },
            handler: Arc::new(move |call| {
                let fut = handler(call);
                Box::pin(async move { fut.await.and_then(IntoPromptResult::into_prompt_result) })
            }),
            completers: HashMap::new(),
            scopes: Arc::from([]),
        }
    }

    /// A prompt exactly as `prompt` describes it (title, arguments, icons, `_meta`), filled
    /// in by `handler`: for a server that relays another's prompts as that server listed them.
    ///
    /// ```
    /// use typed_mcp::protocol::{Prompt, PromptMessage};
    /// use typed_mcp::prompt::{PromptCall, PromptDef};
    /// let wire: Prompt = serde_json::from_value(serde_json::json!({"name": "greet", "title": "Greeting"})).unwrap();
    /// let prompt = PromptDef::from_prompt(wire, |_: PromptCall| async move {
    ///     Ok::<_, typed_mcp::ErrorObject>(vec![PromptMessage::user("Hello.")])
    /// });
    /// assert_eq!(prompt.prompt().title.as_deref(), Some("Greeting"));
    /// ```
    pub fn from_prompt<F, Fut, R>(prompt: Prompt, handler: F) -> Self
    where
        F: Fn(PromptCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoPromptResult,
    {
        let mut def = Self::new(prompt.name.clone(), handler);
        def.prompt = prompt;
        def
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.prompt.name
    }

    /// The prompt as `prompts/list` shows it.
    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// The OAuth scopes a `prompts/get` of this prompt needs, on a server with
    /// authorization (`HttpConfig::authorization`, feature `http`) (see
    /// [`ToolDef::scopes`](crate::ToolDef::scopes)).
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The OAuth scopes a `prompts/get` of this prompt needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, name: impl Into<String>, description: Option<&str>, required: bool) -> Self {
        self.prompt.arguments.get_or_insert_with(Vec::new).push(PromptArgument {
            name: name.into(),
            title: None,
            description: description.map(str::to_owned),
            required: Some(required),
        });
        self
    }

    /// Replaces the declared arguments.
    pub fn arguments(mut self, arguments: Vec<PromptArgument>) -> Self {
        self.prompt.arguments = (!arguments.is_empty()).then_some(arguments);
        self
    }

    /// Suggests values for `argument` in `completion/complete`.
    pub fn complete(mut self, argument: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(argument.into(), completer);
        self
    }

    /// Whether `argument` is declared.
    pub(crate) fn has_argument(&self, argument: &str) -> bool {
        self.prompt.arguments.iter().flatten().any(|a| a.name == argument)
    }

    /// Runs the prompt.
    pub fn get(&self, call: PromptCall) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> {
        (self.handler)(call)
    }
}

/// A prompt defined by `#[prompt]` on a function: the macro implements this for a hidden type
/// named like the function, which [`prompts!`](crate::prompts) turns into definitions.
pub trait PromptFn {
    /// Builds the definition. Called once, at registration.
    fn definition() -> PromptDef;
}

/// The definitions of `#[prompt]` functions, for
/// [`ServerBuilder::prompts`](crate::server::ServerBuilder::prompts).
///
/// ```ignore
/// Server::builder("writer", "1.0.0").prompts(prompts![review, summarize])
/// ```
#[macro_export]
macro_rules! prompts {
    ($($prompt:path),* $(,)?) => {
        ::std::vec![$(<$prompt as $crate::prompt::PromptFn>::definition()),*]
    };
}

/// An argument of a `#[prompt]` function.
///
/// Values parsed from a string ([`ArgumentValue`]: `String`, numbers, `bool` …) are prompt
/// arguments, required unless wrapped in `Option`. [`Context`] and [`State<T>`](crate::State) are injected by
/// the server and are not prompt arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a `#[prompt]` function",
    label = "not a prompt argument",
    note = "prompt arguments are strings on the wire: take `String`, a number, `bool`, `char`, `Option` of one of these, or a type implementing `typed_mcp::ArgumentValue`; or take something from the request (`typed_mcp::Context`, `typed_mcp::State<T>`, `Meta`, `Identity`, `Headers`, `Extension<T>`, `Extract<T>`)"
)]
pub trait PromptArg: Sized + Send {
    /// Adds this argument to the prompt's list (injected arguments add nothing).
    fn describe(arguments: &mut Vec<PromptArgument>, name: &str, description: Option<&str>);

    /// Takes this argument out of the call.
    fn extract(call: &mut PromptCall, name: &str) -> Result<Self, ErrorObject>;
}

fn declare(arguments: &mut Vec<PromptArgument>, name: &str, description: Option<&str>, required: bool) {
    arguments.push(PromptArgument {
        name: name.to_owned(),
        title: None,
        description: description.map(str::to_owned),
        required: Some(required),
    });
}

fn parse<T: ArgumentValue>(name: &str, value: String) -> Result<T, ErrorObject> {
    T::parse_argument(value).map_err(|e| ErrorObject::invalid_params(format!("invalid argument `{name}`: {e}")))
}

impl<T: ArgumentValue> PromptArg for T {
    fn describe(arguments: &mut Vec<PromptArgument>, name: &str, description: Option<&str>) {
        declare(arguments, name, description, true);
    }

    fn extract(call: &mut PromptCall, name: &str) -> Result<Self, ErrorObject> {
        match call.arguments.remove(name) {
            Some(value) => parse(name, value),
            None => Err(ErrorObject::invalid_params(format!("missing required argument `{name}`"))),
        }
    }
}

impl<T: ArgumentValue> PromptArg for Option<T> {
    fn describe(arguments: &mut Vec<PromptArgument>, name: &str, description: Option<&str>) {
        declare(arguments, name, description, false);
    }

    fn extract(call: &mut PromptCall, name: &str) -> Result<Self, ErrorObject> {
        call.arguments.remove(name).map(|value| parse(name, value)).transpose()
    }
}

/// Extractors ([`crate::handler::FromContext`]) are taken from the request, and are not prompt
/// arguments.
macro_rules! wire_prompt {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> PromptArg for $ty {
            fn describe(_: &mut Vec<PromptArgument>, _: &str, _: Option<&str>) {}

            fn extract(call: &mut PromptCall, _: &str) -> Result<Self, ErrorObject> {
                <$ty as crate::handler::FromContext>::from_context(&call.ctx)
            }
        }
    };
}
crate::handler::for_each_extractor!(wire_prompt);

/// A value a prompt may return.
///
/// `String` and `&str` become one user message; [`PromptMessage`] and `Vec<PromptMessage>` are
/// sent as they are; [`GetPromptResult`] too, description included. `Result<T, E>`: `Ok`
/// converts as `T`; `Err` becomes a JSON-RPC error (an [`ErrorObject`] as it is, anything else
/// as an internal error carrying its message).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[prompt]` function",
    label = "not a prompt result",
    note = "a prompt returns `String` (one user message), `PromptMessage`, `Vec<PromptMessage>`, `GetPromptResult`, or `Result<T, E>` of one of these with `E: Display`"
)]
pub trait IntoPromptResult: Send + 'static {
    /// Converts the value into a result, or into a JSON-RPC error.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(self)]))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(self)]))
    }
}

impl<T: IntoPromptResult, E: Display + Send + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        match self {
            Ok(v) => v.into_prompt_result(),
            Err(e) => Err(crate::tool::protocol_error(&e).unwrap_or_else(|| ErrorObject::internal(e.to_string()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let r = "Hi".into_prompt_result().unwrap();
        assert_eq!(r.messages, vec![PromptMessage::user("Hi")]);
        let e = Err::<String, _>("no".to_owned()).into_prompt_result().unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (-32603, "no"));
        let e = Err::<String, _>(ErrorObject::invalid_params("bad")).into_prompt_result().unwrap_err();
        assert_eq!(e.code, -32602);
    }

    #[test]
    fn arguments() {
        let mut list = Vec::new();
        <i64 as PromptArg>::describe(&mut list, "n", Some("A number."));
        <Option<String> as PromptArg>::describe(&mut list, "s", None);
        assert_eq!(
            serde_json::to_value(&list).unwrap(),
            serde_json::json!([{"name": "n", "description": "A number.", "required": true}, {"name": "s", "required": false}])
        );
    }
}
