//! Elicitation: asking the human for input in the middle of a request.
//!
//! - [`Elicit`] (usually `#[derive(Elicit)]`) describes a form: a flat struct whose fields are
//!   [`ElicitField`]s. Its `requestedSchema` is built once per type and cached.
//! - [`Context::elicit`](crate::Context::elicit) sends the form and returns an
//!   [`Elicitation<T>`]: `Accept(T)`, `Decline` or `Cancel`. On accept, the content is checked
//!   against the exact schema that was sent (after filling in defaults) before `T` is
//!   deserialized.
//! - [`validate`] has the checks, usable on their own: whether a schema is in MCP's restricted
//!   subset, and whether content matches a schema.

mod error;
pub(crate) mod fields;
mod form;
pub mod url;
pub mod validate;

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub use error::ElicitError;
#[doc(hidden)]
pub use form::{FormField, type_schema};
pub use form::{FormTransform, form_schema_for, form_settings};
#[cfg(feature = "macros")]
pub use typed_mcp_macros::Elicit;
pub(crate) use url::url_mode_not_declared;
pub use url::{UrlElicitation, UrlElicitationRequired};
pub use validate::{ContentError, SchemaError};

use crate::protocol::{ElicitAction, JsonObject};

/// The kind of a form field, as MCP's restricted schema subset defines them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// `type: string` (with `minLength`, `maxLength`, `format`).
    String,
    /// `type: integer` (with `minimum`, `maximum`).
    Integer,
    /// `type: number` (with `minimum`, `maximum`).
    Number,
    /// `type: boolean`.
    Boolean,
    /// A single choice among string options.
    SingleSelect,
    /// Several choices among string options (`type: array`, with `minItems`, `maxItems`).
    MultiSelect,
}

impl FieldKind {
    /// Whether `minLength`/`maxLength`/`format` apply.
    pub const fn is_string(self) -> bool {
        matches!(self, FieldKind::String)
    }
    /// Whether `length(min, max)` applies (`minLength`/`maxLength` on a string,
    /// `minItems`/`maxItems` on a multi-select).
    pub const fn takes_length(self) -> bool {
        matches!(self, FieldKind::String | FieldKind::MultiSelect)
    }
    /// Whether `minimum`/`maximum` apply.
    pub const fn is_numeric(self) -> bool {
        matches!(self, FieldKind::Integer | FieldKind::Number)
    }
    /// Whether the field is a single choice (where `enumNames` can spell the titles).
    pub const fn is_single_select(self) -> bool {
        matches!(self, FieldKind::SingleSelect)
    }
    /// Whether a default can be written as text: the string itself, or the value of one option.
    pub const fn takes_text_default(self) -> bool {
        matches!(self, FieldKind::String | FieldKind::SingleSelect)
    }
    /// Whether `minItems`/`maxItems` apply.
    pub const fn is_multi_select(self) -> bool {
        matches!(self, FieldKind::MultiSelect)
    }
    /// Whether the field offers options (single or multiple choice).
    pub const fn has_options(self) -> bool {
        matches!(self, FieldKind::SingleSelect | FieldKind::MultiSelect)
    }
}

/// How the options of a choice are spelled in the schema. All three are valid MCP; clients
/// differ in which they render best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OptionStyle {
    /// `oneOf`/`anyOf` of `{const, title}` when any option has a title, else plain `enum`.
    #[default]
    Auto,
    /// A plain `enum` of values, no titles.
    Plain,
    /// `oneOf` (single) or `anyOf` (multiple) of `{const, title}`.
    Titled,
    /// `enum` with the legacy `enumNames` titles (single choice only).
    EnumNames,
}

/// One option of a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChoiceOption {
    /// The value sent back when chosen.
    pub value: &'static str,
    /// What the user sees, if different from the value.
    pub title: Option<&'static str>,
}

/// A type whose values are a fixed set of string options: a unit-only enum with
/// `#[derive(Elicit)]`. It can be a single-select field, and `Vec<Self>` a multi-select one.
pub trait ElicitOptions: DeserializeOwned + Send + 'static {
    /// The options, in declaration order.
    fn options() -> &'static [ChoiceOption];
    /// The option style the type asks for (`#[elicit(style = "…")]` on the enum).
    fn style() -> OptionStyle {
        OptionStyle::Auto
    }
    /// The value of this variant.
    fn value(&self) -> &'static str;
}

/// A type that can be one field of a form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a form field",
    note = "MCP forms are flat: a field is a `String`, `bool`, an integer, `f32`/`f64`, a unit-only enum with `#[derive(Elicit)]` (single choice), a `Vec` of such an enum (multiple choice), or an `Option` of one of these",
    note = "nested structs, maps, tuples, and lists of anything but such an enum (`Vec<String>`, `Vec<i32>`) cannot be form fields; ask for their parts as separate fields, or in several steps"
)]
pub trait ElicitField: Send + 'static {
    /// The field's kind.
    const KIND: FieldKind;
    /// Whether the form requires the field (`false` for `Option<T>`).
    const REQUIRED: bool = true;
    /// For a number field, the lowest and highest values the type can hold (`#[derive(Elicit)]`
    /// refuses `minimum`/`maximum` options outside them: the client could send an answer the
    /// type cannot read).
    const RANGE: (f64, f64) = (f64::NEG_INFINITY, f64::INFINITY);
    /// The field's schema: its type and kind-specific keys, before title, description,
    /// constraints and default are added.
    fn field_schema(style: OptionStyle) -> JsonObject;
    /// This value as a schema `default` (`None` for an absent `Option`).
    fn default_json(&self) -> Option<Value>;
    /// This type as the field `name` of a `#[derive(Elicit)]` form (called by generated code).
    #[doc(hidden)]
    fn form_field(name: &'static str, style: OptionStyle) -> FormField
    where
        Self: Sized + schemars::JsonSchema,
    {
        FormField { name, kind: Self::KIND, schema: Self::field_schema, style, type_schema: type_schema::<Self> }
    }
}

/// A form: a struct whose fields are [`ElicitField`]s. Derive it with `#[derive(Elicit)]`, next
/// to `serde::Deserialize` and `schemars::JsonSchema`: the form's schema is the one schemars
/// generates, through [`FormTransform`] into MCP's restricted subset.
///
/// ```
/// use typed_mcp::elicit::Elicit;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema, Elicit)]
/// #[serde(rename_all = "camelCase")]
/// struct ProjectDetails {
///     /// Name of the project.
///     #[schemars(length(min = 1))]
///     project_name: String,
///     /// Include a test setup.
///     #[serde(default)]
///     include_tests: bool,
/// }
///
/// let schema = ProjectDetails::form_schema().unwrap().to_value();
/// assert_eq!(schema["required"], serde_json::json!(["projectName"]));
/// assert_eq!(schema["properties"]["projectName"]["minLength"], 1);
/// ```
///
/// What each attribute does in a form, and the `#[elicit(…)]` keys kept for what schemars
/// cannot say:
///
/// | In the form | Write |
/// |---|---|
/// | property name | the field name, `#[serde(rename = "…")]`, `#[serde(rename_all = "…")]` |
/// | `description` / `title` | a doc comment; `#[schemars(description = "…")]`, `#[schemars(title = "…")]` |
/// | `minLength`/`maxLength` (string), `minItems`/`maxItems` (multi-select) | `#[schemars(length(min = …, max = …))]` |
/// | `minimum`/`maximum` | `#[schemars(range(min = …, max = …))]` |
/// | `format` | `#[schemars(email)]`, `#[schemars(url)]` (`uri`), `#[schemars(extend("format" = "date"))]` (or `"date-time"`) |
/// | `default`, not `required` | `#[serde(default)]`, `#[serde(default = "path")]` (the type must be `Serialize`), or `#[schemars(extend("default" = …))]` |
/// | not asked | `#[serde(skip)]` |
/// | an option's label | a doc comment or `#[schemars(title = "…")]` on the variant, or `#[elicit(title = "…")]` |
/// | how options are spelled | `#[elicit(style = "plain" \| "titled" \| "enum_names")]` on the enum or the field (no schemars equivalent) |
/// | a name that only looks like a secret | `#[elicit(not_secret)]` on the field (no schemars equivalent) |
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an elicitation form",
    label = "not a form",
    note = "add `#[derive(serde::Deserialize, schemars::JsonSchema, Elicit)]` to `{Self}` (a flat struct whose fields are strings, numbers, booleans or `#[derive(Elicit)]` enums)"
)]
pub trait Elicit: DeserializeOwned + Send + 'static {
    /// The form's schema, built once per type. An error means the declaration is
    /// inconsistent (for example a `default` that breaks the field's own constraints).
    fn form_schema() -> Result<&'static FormSchema, &'static SchemaError>;
}

/// A form's `requestedSchema`, checked to be in MCP's restricted subset.
#[derive(Debug, Clone)]
pub struct FormSchema {
    schema: JsonObject,
    /// The schema's JSON text, written once: every question asking for this form sends it.
    wire: Box<RawValue>,
}

impl PartialEq for FormSchema {
    /// Equal when the schemas are (the text is written from the schema).
    fn eq(&self, other: &Self) -> bool {
        self.schema == other.schema
    }
}

impl FormSchema {
    /// Checks `schema` against MCP's restricted subset.
    pub fn new(schema: JsonObject) -> Result<Self, SchemaError> {
        validate::check_form_schema(&schema)?;
        let wire = serde_json::value::to_raw_value(&schema)
            .map_err(|e| SchemaError { property: None, reason: format!("cannot be written as JSON: {e}") })?;
        Ok(FormSchema { schema, wire })
    }

    /// The schema as a JSON object.
    pub fn as_object(&self) -> &JsonObject {
        &self.schema
    }

    /// The schema as JSON text, as it goes on the wire.
    pub fn as_json(&self) -> &str {
        self.wire.get()
    }

    /// The schema's JSON text, to write into a request as it is.
    pub(crate) fn as_raw(&self) -> &RawValue {
        &self.wire
    }

    /// The schema as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.schema.clone())
    }

    /// Fills defaults into `content` and checks it against this schema.
    pub fn validate(&self, content: &mut JsonObject) -> Result<(), ContentError> {
        validate::validate_content(&self.schema, content)
    }
}

/// Builds a [`FormSchema`] field by field. Used by `#[derive(Elicit)]`; usable by hand.
#[derive(Debug, Default)]
pub struct FormBuilder {
    properties: JsonObject,
    required: Vec<Value>,
}

/// One field being added to a [`FormBuilder`].
#[derive(Debug)]
#[must_use = "call `add` to put the field in the form"]
pub struct FieldBuilder<'a> {
    form: &'a mut FormBuilder,
    name: String,
    schema: JsonObject,
    required: bool,
}

impl FormBuilder {
    /// An empty form.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a field of type `T`, spelled with `style` if it is a choice.
    pub fn field<T: ElicitField>(&mut self, name: &str, style: OptionStyle) -> FieldBuilder<'_> {
        self.property(name, T::field_schema(style), T::REQUIRED)
    }

    /// Starts a field from its schema (for example an [`ElicitField::field_schema`]), required
    /// or not. The form is checked against MCP's subset when built.
    pub fn property(&mut self, name: &str, schema: JsonObject, required: bool) -> FieldBuilder<'_> {
        FieldBuilder { form: self, name: name.to_owned(), schema, required }
    }

    /// Checks the form and returns its schema.
    pub fn build(self) -> Result<FormSchema, SchemaError> {
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), Value::Object(self.properties));
        if !self.required.is_empty() {
            schema.insert("required".into(), Value::Array(self.required));
        }
        FormSchema::new(schema)
    }
}

impl FieldBuilder<'_> {
    fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.schema.insert(key.to_owned(), value.into());
        self
    }
    /// Sets the label shown to the user.
    pub fn title(self, title: &str) -> Self {
        self.set("title", title)
    }
    /// Sets the help text.
    pub fn description(self, description: &str) -> Self {
        self.set("description", description)
    }
    /// Sets `minLength`.
    pub fn min_length(self, n: u64) -> Self {
        self.set("minLength", n)
    }
    /// Sets `maxLength`.
    pub fn max_length(self, n: u64) -> Self {
        self.set("maxLength", n)
    }
    /// Sets `format` (`email`, `uri`, `date` or `date-time`).
    pub fn format(self, format: &str) -> Self {
        self.set("format", format)
    }
    /// Sets `minimum`.
    pub fn minimum(self, n: f64) -> Self {
        self.set("minimum", number(n))
    }
    /// Sets `maximum`.
    pub fn maximum(self, n: f64) -> Self {
        self.set("maximum", number(n))
    }
    /// Sets `minItems`.
    pub fn min_items(self, n: u64) -> Self {
        self.set("minItems", n)
    }
    /// Sets `maxItems`.
    pub fn max_items(self, n: u64) -> Self {
        self.set("maxItems", n)
    }
    /// Sets the default value (a field with a default is not required: a missing value is
    /// filled in from it).
    pub fn default_value(mut self, value: Option<Value>) -> Self {
        if let Some(v) = value {
            self.schema.insert("default".into(), v);
            self.required = false;
        }
        self
    }
    /// Marks the field required or not, overriding what its type implies.
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }
    /// Adds the field to the form.
    pub fn add(self) {
        if self.required {
            self.form.required.push(Value::String(self.name.clone()));
        }
        self.form.properties.insert(self.name, Value::Object(self.schema));
    }
}

/// A JSON number, integral when the value is.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 { Value::from(n as i64) } else { Value::from(n) }
}

/// The user's answer to an elicitation. A refusal is an answer, not an error.
#[must_use = "the user may have declined or cancelled; handle every case"]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user submitted the form (or agreed to open the URL).
    Accept(T),
    /// The user explicitly refused.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(v) => Some(v),
            _ => None,
        }
    }
    /// Whether the user accepted.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Elicitation::Accept(_))
    }
    /// The wire action.
    pub fn action(&self) -> ElicitAction {
        match self {
            Elicitation::Accept(_) => ElicitAction::Accept,
            Elicitation::Decline => ElicitAction::Decline,
            Elicitation::Cancel => ElicitAction::Cancel,
        }
    }
    /// Maps the accepted value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Elicitation<U> {
        match self {
            Elicitation::Accept(v) => Elicitation::Accept(f(v)),
            Elicitation::Decline => Elicitation::Decline,
            Elicitation::Cancel => Elicitation::Cancel,
        }
    }
    /// A reference to the accepted value.
    pub fn as_ref(&self) -> Elicitation<&T> {
        match self {
            Elicitation::Accept(v) => Elicitation::Accept(v),
            Elicitation::Decline => Elicitation::Decline,
            Elicitation::Cancel => Elicitation::Cancel,
        }
    }
}

/// A single value asked for as a one-field form (see [`Context::elicit_value`](crate::Context::elicit_value)).
pub(crate) struct Single<V>(PhantomData<V>);

impl<V: ElicitField> Single<V> {
    /// The one-field form for `V`, under the property `name`.
    pub(crate) fn schema(name: &str, title: Option<&str>) -> Result<FormSchema, SchemaError> {
        let mut form = FormBuilder::new();
        let mut field = form.field::<V>(name, OptionStyle::Auto);
        if let Some(t) = title {
            field = field.title(t);
        }
        field.add();
        form.build()
    }
}

/// A choice offered at run time (see [`Context::choose`](crate::Context::choose)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The value returned when chosen.
    pub value: String,
    /// The label shown, if different.
    pub title: Option<String>,
}

impl Choice {
    /// A choice with a label.
    pub fn titled(value: impl Into<String>, title: impl Into<String>) -> Self {
        Choice { value: value.into(), title: Some(title.into()) }
    }
}

impl From<&str> for Choice {
    fn from(value: &str) -> Self {
        Choice { value: value.to_owned(), title: None }
    }
}

impl From<String> for Choice {
    fn from(value: String) -> Self {
        Choice { value, title: None }
    }
}

impl From<(&str, &str)> for Choice {
    fn from((value, title): (&str, &str)) -> Self {
        Choice::titled(value, title)
    }
}

/// The single-select schema of choices given at run time.
pub(crate) fn choice_schema(name: &str, choices: &[Choice]) -> Result<FormSchema, SchemaError> {
    let titled = choices.iter().any(|c| c.title.is_some());
    let mut field = Map::new();
    field.insert("type".into(), "string".into());
    if titled {
        let options = choices
            .iter()
            .map(|c| serde_json::json!({"const": c.value, "title": c.title.as_deref().unwrap_or(&c.value)}))
            .collect();
        field.insert("oneOf".into(), Value::Array(options));
    } else {
        field.insert("enum".into(), choices.iter().map(|c| Value::from(c.value.as_str())).collect());
    }
    let mut properties = Map::new();
    properties.insert(name.to_owned(), Value::Object(field));
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), serde_json::json!([name]));
    FormSchema::new(schema)
}
