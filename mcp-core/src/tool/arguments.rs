//! The arguments of one `tools/call`, kept as the client's JSON text.
//!
//! A call's arguments are read once, when the call arrives, into an index of where each
//! argument's value lies in the request's text; each argument is then parsed straight from
//! that text into its type. No JSON tree is built for them: a `String` argument costs one
//! allocation, not a map, its entries, its keys and a tree of values to convert afterwards.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeOwned, Deserializer as _, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::protocol::JsonObject;

/// The arguments object of a `tools/call` (`{}` when the client sent none), as JSON text.
///
/// Tools written with `#[tool]` never see this: each of their arguments is parsed from it.
/// A handler written by hand with [`ToolDef::new`](super::ToolDef::new) reads its arguments
/// one by one with [`get`](Self::get), all at once into a struct with
/// [`deserialize`](Self::deserialize), or as a JSON object with [`to_object`](Self::to_object).
///
/// ```
/// use mcp_core::tool::Arguments;
/// let args = Arguments::from_json(r#"{"text": "hi", "times": 3}"#).unwrap();
/// assert_eq!(args.get::<String>("text").unwrap().as_deref(), Some("hi"));
/// assert_eq!(args.get::<u8>("times").unwrap(), Some(3));
/// assert_eq!(args.get::<u8>("absent").unwrap(), None);
/// assert!(args.get::<u8>("text").is_err());
/// ```
#[derive(Clone)]
pub struct Arguments {
    /// Text holding the object; the object is `text[object]`.
    text: Box<str>,
    object: Range<usize>,
    /// Every member of the object, in order.
    entries: Vec<Entry>,
}

#[derive(Clone)]
struct Entry {
    key: Key,
    value: Range<usize>,
}

/// A member's name: where it is in the text, or, when it holds escapes, its decoded form.
#[derive(Clone)]
enum Key {
    Span(Range<usize>),
    Decoded(Box<str>),
}

/// Why a text is not an arguments object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the arguments are not a JSON object: {0}")]
pub struct ArgumentsError(String);

impl Arguments {
    /// Arguments from the JSON text of an object.
    pub fn from_json(text: impl Into<Box<str>>) -> Result<Self, ArgumentsError> {
        let text = text.into();
        let object = 0..text.len();
        Self::within(text, object)
    }

    /// The arguments object found at `text[object]` (a member of a request's parameters:
    /// the text is kept whole rather than copied). `null` stands for no arguments.
    pub(crate) fn within(text: Box<str>, object: Range<usize>) -> Result<Self, ArgumentsError> {
        let entries = index(&text, object.clone())?;
        Ok(Arguments { text, object, entries })
    }

    fn key<'s>(&'s self, entry: &'s Entry) -> &'s str {
        match &entry.key {
            Key::Span(span) => &self.text[span.clone()],
            Key::Decoded(key) => key,
        }
    }

    /// The JSON text of the argument `name`, if the client sent it. When a name occurs twice,
    /// the last one counts, as when the object is read as a map.
    pub fn value_text(&self, name: &str) -> Option<&str> {
        self.entries.iter().rev().find(|e| self.key(e) == name).map(|e| &self.text[e.value.clone()])
    }

    /// The argument `name` as a `T`: `Ok(None)` when the client did not send it, an error
    /// when what it sent is not a `T`.
    pub fn get<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, serde_json::Error> {
        self.value_text(name).map(serde_json::from_str).transpose()
    }

    /// The whole object as a `T` (a struct with a field per argument, say).
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.as_json())
    }

    /// The whole object as a JSON object.
    pub fn to_object(&self) -> JsonObject {
        // The text was read as an object when these arguments were made.
        serde_json::from_str(self.as_json()).unwrap_or_default()
    }

    /// The JSON text of the whole object, as the client sent it (`{}` when it sent none).
    pub fn as_json(&self) -> &str {
        let text = &self.text[self.object.clone()];
        if text == "null" { "{}" } else { text }
    }

    /// The names of the arguments the client sent, in its order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| self.key(e))
    }

    /// Whether the client sent the argument `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.value_text(name).is_some()
    }

    /// How many members the object has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Default for Arguments {
    /// No arguments: `{}`.
    fn default() -> Self {
        Arguments { text: "{}".into(), object: 0..2, entries: Vec::new() }
    }
}

impl From<JsonObject> for Arguments {
    fn from(object: JsonObject) -> Self {
        let text = serde_json::Value::Object(object).to_string();
        // A serialized object is an object.
        Arguments::from_json(text).unwrap_or_default()
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Arguments").field(&self.as_json()).finish()
    }
}

impl PartialEq for Arguments {
    /// Equal when the objects are, member order and spacing aside.
    fn eq(&self, other: &Self) -> bool {
        self.to_object() == other.to_object()
    }
}

/// Where each member of the object at `text[object]` is.
fn index(text: &str, object: Range<usize>) -> Result<Vec<Entry>, ArgumentsError> {
    let part = text.get(object).ok_or_else(|| ArgumentsError("out of range".into()))?;
    let base = text.as_ptr() as usize;
    let mut de = serde_json::Deserializer::from_str(part);
    let entries = de.deserialize_any(Members { base }).map_err(|e| ArgumentsError(without_position(&e)))?;
    de.end().map_err(|e| ArgumentsError(without_position(&e)))?;
    Ok(entries)
}

/// Where `part`, a slice of the text starting at address `base`, lies in it.
fn span(base: usize, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - base;
    start..start + part.len()
}

/// Reads an object into [`Entry`]s.
struct Members {
    base: usize,
}

impl<'de> Visitor<'de> for Members {
    type Value = Vec<Entry>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(name) = map.next_key::<Name<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            let key = match name.0 {
                Cow::Borrowed(key) => Key::Span(span(self.base, key)),
                Cow::Owned(key) => Key::Decoded(key.into_boxed_str()),
            };
            entries.push(Entry { key, value: span(self.base, value.get()) });
        }
        Ok(entries)
    }
}

/// A member name, borrowed from the text unless it holds escapes.
struct Name<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Name<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Name(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// An error's message without serde_json's "at line 1 column 9": positions within one
/// argument's text mean nothing to whoever reads the message.
pub(crate) fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&suffix) {
        Some(m) => m.to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_members_where_they_are() {
        let text = r#"{"name":"echo","arguments":{"a":1,"b\u0041":"x\n","c":{"d":[1,2]},"a":2}}"#;
        let start = text.find("{\"a\"").unwrap();
        let args = Arguments::within(text.into(), start..text.len() - 1).unwrap();
        assert_eq!(args.names().collect::<Vec<_>>(), ["a", "bA", "c", "a"]);
        assert_eq!(args.get::<u8>("a").unwrap(), Some(2), "the last of a repeated name counts");
        assert_eq!(args.get::<String>("bA").unwrap().as_deref(), Some("x\n"));
        assert_eq!(args.value_text("c"), Some(r#"{"d":[1,2]}"#));
        assert_eq!(args.as_json(), &text[start..text.len() - 1]);
        assert_eq!(args.to_object().len(), 3);
        assert!(args.contains("c") && !args.contains("d"));
    }

    #[test]
    fn null_is_no_arguments_and_the_rest_is_refused() {
        let args = Arguments::from_json("null").unwrap();
        assert!(args.is_empty());
        assert_eq!(args.as_json(), "{}");
        for bad in ["[]", "\"x\"", "3", "{", "{} {}", "{\"a\":}"] {
            assert!(Arguments::from_json(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_name_no_position() {
        let args = Arguments::from_json(r#"{"n": "five"}"#).unwrap();
        let e = args.get::<u32>("n").unwrap_err();
        assert_eq!(without_position(&e), "invalid type: string \"five\", expected u32");
    }

    #[test]
    fn built_from_an_object() {
        let mut object = JsonObject::new();
        object.insert("k".into(), serde_json::json!([true]));
        let args = Arguments::from(object.clone());
        assert_eq!(args.get::<Vec<bool>>("k").unwrap(), Some(vec![true]));
        assert_eq!(args.to_object(), object);
        assert_eq!(Arguments::default().to_object(), JsonObject::new());
    }
}
