//! What may stand as an argument of a `#[tool]` function.

use std::ops::Deref;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{InputSchema, ToolCall};
use crate::protocol::ErrorObject;

/// An argument of a `#[tool]` function.
///
/// Plain values (anything `Deserialize + JsonSchema`) are properties of the tool's input
/// schema, required unless they accept absence (`Option<T>`); a [`Params<T>`] adds the
/// properties of `T` instead. Extractors ([`Context`](crate::Context), [`State<T>`](crate::State)
/// and the others of [`crate::handler::FromContext`]) are taken from the request and never
/// appear in the schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a `#[tool]` function",
    label = "not a tool argument",
    note = "a tool argument is either a JSON value (a type implementing `serde::Deserialize` and `schemars::JsonSchema`, e.g. `i64`, `String`, `Option<T>`, `Vec<T>` or a struct deriving both), `Params<T>` of such a struct (its fields become the tool's arguments), or taken from the request (`typed_mcp::Context`, `typed_mcp::State<T>`, the request's `Meta`, `Identity`, `Headers`, `Extension<T>`, or `Extract<T>` of your own `FromContext` type)"
)]
pub trait ToolArgument: Sized + Send {
    /// Adds this argument to the input schema (injected arguments add nothing).
    fn describe(schema: &mut InputSchema, name: &str, description: Option<&str>);

    /// Takes this argument out of the call.
    fn extract(call: &mut ToolCall, name: &str) -> Result<Self, ErrorObject>;
}

/// Whether absence (read as `null`) is an acceptable value of `T`: then the argument is optional.
fn accepts_absence<T: DeserializeOwned>() -> bool {
    T::deserialize(Value::Null).is_ok()
}

impl<T> ToolArgument for T
where
    T: DeserializeOwned + JsonSchema + Send,
{
    fn describe(schema: &mut InputSchema, name: &str, description: Option<&str>) {
        schema.property::<T>(name, description, !accepts_absence::<T>());
    }

    fn extract(call: &mut ToolCall, name: &str) -> Result<Self, ErrorObject> {
        match call.arguments.value_text(name) {
            Some(text) => super::arguments::read_value(text).map_err(|e| {
                ErrorObject::invalid_params(format!("invalid argument `{name}`: {}", super::without_position(&e)))
            }),
            None => T::deserialize(Value::Null)
                .map_err(|_| ErrorObject::invalid_params(format!("missing required argument `{name}`"))),
        }
    }
}

/// A struct whose fields are the tool's top-level arguments, for a tool that already has a
/// parameter struct: `{"city": "Paris", "days": 3}` rather than `{"query": {"city": …}}`.
///
/// ```
/// use typed_mcp::prelude::*;
/// use typed_mcp::tool::{Params, ToolFn};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Forecast {
///     /// The city.
///     city: String,
///     /// How many days ahead.
///     days: Option<u8>,
/// }
///
/// /// Forecasts the weather.
/// #[tool]
/// fn forecast(query: Params<Forecast>) -> String {
///     format!("{} for {} days: sunny", query.city, query.days.unwrap_or(1))
/// }
///
/// let definition = <forecast as ToolFn>::definition();
/// let schema = &definition.tool().input_schema;
/// assert_eq!(schema["properties"]["city"]["description"], "The city.");
/// assert_eq!(schema["required"], serde_json::json!(["city"]));
/// ```
///
/// `T`'s properties join the other arguments' (name them differently); its schema must be an
/// object with properties (a struct with named fields), or the server refuses the tool when
/// it is built. Unknown arguments are ignored unless `T` says `#[serde(deny_unknown_fields)]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Params<T>(pub T);

impl<T> Deref for Params<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: DeserializeOwned + JsonSchema + Send> ToolArgument for Params<T> {
    fn describe(schema: &mut InputSchema, _: &str, _: Option<&str>) {
        schema.properties_of::<T>();
    }

    fn extract(call: &mut ToolCall, _: &str) -> Result<Self, ErrorObject> {
        call.arguments
            .deserialize::<T>()
            .map(Params)
            .map_err(|e| ErrorObject::invalid_params(format!("invalid arguments: {}", super::without_position(&e))))
    }
}

/// Extractors ([`crate::handler::FromContext`]) are injected by the server and never appear in
/// the schema.
macro_rules! wire_tool {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> ToolArgument for $ty {
            fn describe(_: &mut InputSchema, _: &str, _: Option<&str>) {}

            fn extract(call: &mut ToolCall, _: &str) -> Result<Self, ErrorObject> {
                <$ty as crate::handler::FromContext>::from_context(&call.ctx)
            }
        }
    };
}
crate::handler::for_each_extractor!(wire_tool);
