//! The types that can be form fields.

use serde_json::{Map, Value, json};

use super::{ElicitField, ElicitOptions, FieldKind, OptionStyle};
use crate::protocol::JsonObject;

fn typed(ty: &str) -> JsonObject {
    let mut o = Map::new();
    o.insert("type".into(), ty.into());
    o
}

impl ElicitField for String {
    const KIND: FieldKind = FieldKind::String;
    fn field_schema(_: OptionStyle) -> JsonObject {
        typed("string")
    }
    fn default_json(&self) -> Option<Value> {
        Some(Value::String(self.clone()))
    }
}

impl ElicitField for bool {
    const KIND: FieldKind = FieldKind::Boolean;
    fn field_schema(_: OptionStyle) -> JsonObject {
        typed("boolean")
    }
    fn default_json(&self) -> Option<Value> {
        Some(Value::Bool(*self))
    }
}

macro_rules! integer_fields {
    ($($t:ty),*) => {$(
        impl ElicitField for $t {
            const KIND: FieldKind = FieldKind::Integer;
            const RANGE: (f64, f64) = (<$t>::MIN as f64, <$t>::MAX as f64);
            fn field_schema(_: OptionStyle) -> JsonObject {
                let mut o = typed("integer");
                // Bounds of the Rust type, so the client cannot submit a value we cannot hold.
                o.insert("minimum".into(), json!(<$t>::MIN));
                o.insert("maximum".into(), json!(<$t>::MAX));
                o
            }
            fn default_json(&self) -> Option<Value> {
                Some(json!(*self))
            }
        }
    )*};
}
integer_fields!(i8, i16, i32, u8, u16, u32);

// 64-bit bounds are left out: many clients hold numbers as doubles and cannot represent them
// exactly. Unsigned types still cannot go below zero.
macro_rules! wide_integer_fields {
    ($($t:ty => $unsigned:literal),*) => {$(
        impl ElicitField for $t {
            const KIND: FieldKind = FieldKind::Integer;
            const RANGE: (f64, f64) = (<$t>::MIN as f64, <$t>::MAX as f64);
            fn field_schema(_: OptionStyle) -> JsonObject {
                let mut o = typed("integer");
                if $unsigned {
                    o.insert("minimum".into(), json!(0));
                }
                o
            }
            fn default_json(&self) -> Option<Value> {
                Some(json!(*self))
            }
        }
    )*};
}
wide_integer_fields!(i64 => false, u64 => true, isize => false, usize => true);

macro_rules! float_fields {
    ($($t:ty),*) => {$(
        impl ElicitField for $t {
            const KIND: FieldKind = FieldKind::Number;
            const RANGE: (f64, f64) = (<$t>::MIN as f64, <$t>::MAX as f64);
            fn field_schema(_: OptionStyle) -> JsonObject {
                typed("number")
            }
            fn default_json(&self) -> Option<Value> {
                // Through the shortest text that reads back as the same value, so that an `f32`
                // default of `0.1` is `0.1`, not the `0.10000000149011612` of `f64::from`.
                let value: f64 = self.to_string().parse().ok()?;
                serde_json::Number::from_f64(value).map(Value::Number)
            }
        }
    )*};
}
float_fields!(f32, f64);

impl<T: ElicitField> ElicitField for Option<T> {
    const KIND: FieldKind = T::KIND;
    const RANGE: (f64, f64) = T::RANGE;
    const REQUIRED: bool = false;
    fn field_schema(style: OptionStyle) -> JsonObject {
        T::field_schema(style)
    }
    fn default_json(&self) -> Option<Value> {
        self.as_ref().and_then(T::default_json)
    }
}

fn resolve(style: OptionStyle, type_style: OptionStyle, titled: bool) -> OptionStyle {
    match (style, type_style) {
        (OptionStyle::Auto, OptionStyle::Auto) if titled => OptionStyle::Titled,
        (OptionStyle::Auto, OptionStyle::Auto) => OptionStyle::Plain,
        (OptionStyle::Auto, s) => s,
        (s, _) => s,
    }
}

/// The single-select schema of an options type, in the requested style.
pub(crate) fn options_schema<E: ElicitOptions>(style: OptionStyle) -> JsonObject {
    let options = E::options();
    let titled = options.iter().any(|o| o.title.is_some());
    let mut o = typed("string");
    let values = || options.iter().map(|x| Value::from(x.value)).collect::<Vec<_>>();
    let titles = || options.iter().map(|x| Value::from(x.title.unwrap_or(x.value))).collect::<Vec<_>>();
    match resolve(style, E::style(), titled) {
        OptionStyle::Titled => {
            let one_of =
                options.iter().map(|x| json!({"const": x.value, "title": x.title.unwrap_or(x.value)})).collect();
            o.insert("oneOf".into(), Value::Array(one_of));
        }
        OptionStyle::EnumNames => {
            o.insert("enum".into(), Value::Array(values()));
            o.insert("enumNames".into(), Value::Array(titles()));
        }
        OptionStyle::Plain | OptionStyle::Auto => {
            o.insert("enum".into(), Value::Array(values()));
        }
    }
    o
}

/// Implements [`ElicitField`] for a `#[derive(Elicit)]` enum (called by generated code).
#[doc(hidden)]
pub fn single_select_schema<E: ElicitOptions>(style: OptionStyle) -> JsonObject {
    options_schema::<E>(style)
}

// Not recommended in diagnostics: for `Vec<String>`, "`Vec<String>` cannot be a field" (with
// the list of what can) helps more than "`String` is not `ElicitOptions`".
#[diagnostic::do_not_recommend]
impl<E: ElicitOptions + ElicitField> ElicitField for Vec<E> {
    const KIND: FieldKind = FieldKind::MultiSelect;
    fn field_schema(style: OptionStyle) -> JsonObject {
        let options = E::options();
        let titled = options.iter().any(|o| o.title.is_some());
        let mut items = Map::new();
        match resolve(style, E::style(), titled) {
            OptionStyle::Titled => {
                let any_of =
                    options.iter().map(|x| json!({"const": x.value, "title": x.title.unwrap_or(x.value)})).collect();
                items.insert("anyOf".into(), Value::Array(any_of));
            }
            // `enumNames` has no multi-select spelling; plain values are the closest.
            _ => {
                items.insert("type".into(), "string".into());
                items.insert("enum".into(), options.iter().map(|x| Value::from(x.value)).collect());
            }
        }
        let mut o = typed("array");
        o.insert("items".into(), Value::Object(items));
        o
    }
    fn default_json(&self) -> Option<Value> {
        Some(Value::Array(self.iter().map(|e| Value::from(e.value())).collect()))
    }
}
