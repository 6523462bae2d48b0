//! The arguments of one `tools/call`, kept as the client's JSON text.
//!
//! The arguments stay in the request's text. Looking one up scans the object for where its
//! value lies (from the second lookup on, an index of every member made by one scan serves
//! instead), and the value is parsed straight from that text into its type. No JSON tree is
//! built: a `String` argument costs one allocation, not a map, its entries, its keys and a
//! tree of values to convert afterwards.

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::protocol::JsonObject;
#[cfg(test)]
use crate::protocol::scan::without_position;
use crate::protocol::scan::{Key, Members, ScanError, unescaped_str};

/// The arguments object of a `tools/call` (`{}` when the client sent none), as JSON text.
///
/// Tools written with `#[tool]` never see this: each of their arguments is parsed from it.
/// A handler written by hand with [`ToolDef::new`](super::ToolDef::new) reads its arguments
/// one by one with [`get`](Self::get), all at once into a struct with
/// [`deserialize`](Self::deserialize), or as a JSON object with [`to_object`](Self::to_object).
///
/// ```
/// use typed_mcp::tool::Arguments;
/// let args = Arguments::from_json(r#"{"text": "hi", "times": 3}"#).unwrap();
/// assert_eq!(args.get::<String>("text").unwrap().as_deref(), Some("hi"));
/// assert_eq!(args.get::<u8>("times").unwrap(), Some(3));
/// assert_eq!(args.get::<u8>("absent").unwrap(), None);
/// assert!(args.get::<u8>("text").is_err());
/// ```
pub struct Arguments {
    /// Text holding the object (one JSON value); the object is `text[object]`.
    text: Box<str>,
    object: Range<usize>,
    /// Every member of the object, in order: made on the second lookup (most tools look up
    /// one or two arguments, and one scan costs less than building the index).
    index: OnceLock<Vec<Entry>>,
    /// One lookup was made.
    looked_up: AtomicBool,
}

impl Clone for Arguments {
    fn clone(&self) -> Self {
        Arguments {
            text: self.text.clone(),
            object: self.object.clone(),
            index: self.index.clone(),
            looked_up: AtomicBool::new(self.looked_up.load(Ordering::Relaxed)),
        }
    }
}

#[derive(Clone)]
struct Entry {
    key: Key,
    value: Range<usize>,
}

/// Why a text is not an arguments object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the arguments are not a JSON object: {0}")]
pub struct ArgumentsError(String);

impl From<ScanError> for ArgumentsError {
    fn from(e: ScanError) -> Self {
        ArgumentsError(e.0)
    }
}

impl Arguments {
    /// Arguments from the JSON text of an object.
    pub fn from_json(text: impl Into<Box<str>>) -> Result<Self, ArgumentsError> {
        let text = text.into();
        serde_json::from_str::<&RawValue>(&text).map_err(|e| ArgumentsError(e.to_string()))?;
        let object = 0..text.len();
        Self::within(text, object)
    }

    /// The arguments object found at `text[object]`, which must be one JSON value (a member of
    /// a request's parameters: the text is kept whole rather than copied). `null` stands for
    /// no arguments.
    pub(crate) fn within(text: Box<str>, object: Range<usize>) -> Result<Self, ArgumentsError> {
        Members::of(&text, object.clone())?;
        let eager = text.get(object.clone()).is_some_and(|t| may_hold_surrogates(t.as_bytes()));
        let arguments = Arguments { text, object, index: OnceLock::new(), looked_up: AtomicBool::new(false) };
        if eager {
            // A name may hold a lone surrogate, which is not text: that must be an error now,
            // not a member quietly missing later. Such names are found by indexing them all.
            let entries = index(&arguments.text, arguments.object.clone())?;
            let _ = arguments.index.set(entries);
        }
        Ok(arguments)
    }

    /// The whole text the arguments were found in.
    pub(crate) fn source(&self) -> &str {
        &self.text
    }

    fn key<'s>(&'s self, entry: &'s Entry) -> &'s str {
        entry.key.in_text(&self.text)
    }

    fn entries(&self) -> &[Entry] {
        // The text is JSON and its value an object (or null): the scan cannot fail.
        self.index.get_or_init(|| index(&self.text, self.object.clone()).unwrap_or_default())
    }

    /// The JSON text of the argument `name`, if the client sent it. When a name occurs twice,
    /// the last one counts, as when the object is read as a map.
    pub fn value_text(&self, name: &str) -> Option<&str> {
        // The flag only chooses between two ways to the same answer: a load and a store (no
        // read-modify-write) are enough, even when two threads look up at once.
        let indexed = self.index.get().is_some() || self.looked_up.load(Ordering::Relaxed);
        if !indexed {
            self.looked_up.store(true, Ordering::Relaxed);
        }
        let value = if indexed {
            self.entries().iter().rev().find(|e| self.key(e) == name).map(|e| e.value.clone())
        } else {
            let members = Members::of(&self.text, self.object.clone()).ok()?;
            members.flatten().filter(|(key, _)| key.in_text(&self.text) == name).last().map(|(_, value)| value)
        };
        self.text.get(value?)
    }

    /// The argument `name` as a `T`: `Ok(None)` when the client did not send it, an error
    /// when what it sent is not a `T`.
    pub fn get<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, serde_json::Error> {
        self.value_text(name).map(read_value).transpose()
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
        let text = self.text.get(self.object.clone()).unwrap_or_default().trim();
        if text == "null" { "{}" } else { text }
    }

    /// The names of the arguments the client sent, in its order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries().iter().map(|e| self.key(e))
    }

    /// Whether the client sent the argument `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.value_text(name).is_some()
    }

    /// How many members the object has.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }
}

impl Default for Arguments {
    /// No arguments: `{}`.
    fn default() -> Self {
        Arguments {
            text: "{}".into(),
            object: 0..2,
            index: OnceLock::from(Vec::new()),
            looked_up: AtomicBool::new(false),
        }
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

/// Reads one value found by the scanner (JSON text serde_json read already) as a `T`: like
/// `serde_json::from_str`, except that a string holding no escape is handed over as it stands
/// between its quotes, without being parsed a second time.
pub(crate) fn read_value<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    T::deserialize(ValueText(text))
}

/// A value's JSON text, already read by serde_json (so a string in it holds no control
/// character, and without a backslash it holds no escape either).
struct ValueText<'a>(&'a str);

impl<'a> ValueText<'a> {
    /// The value of a string without escapes: the text between its quotes.
    fn plain_str(&self) -> Option<&'a str> {
        unescaped_str(self.0)
    }

    /// Reads the text with serde_json, as a whole.
    fn with_serde<T>(
        self,
        read: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'a>>) -> serde_json::Result<T>,
    ) -> serde_json::Result<T> {
        let mut de = serde_json::Deserializer::from_str(self.0);
        let value = read(&mut de)?;
        de.end()?;
        Ok(value)
    }
}

/// Methods of [`ValueText`] that serde_json answers, unchanged.
macro_rules! by_serde {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: serde::de::Visitor<'a>>(self, $($arg: $ty,)* visitor: V) -> serde_json::Result<V::Value> {
            self.with_serde(|de| serde::Deserializer::$method(de, $($arg,)* visitor))
        }
    )*};
}

impl<'a> serde::Deserializer<'a> for ValueText<'a> {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'a>>(self, visitor: V) -> serde_json::Result<V::Value> {
        match self.plain_str() {
            Some(s) => visitor.visit_borrowed_str(s),
            None => self.with_serde(|de| serde::Deserializer::deserialize_any(de, visitor)),
        }
    }

    fn deserialize_str<V: serde::de::Visitor<'a>>(self, visitor: V) -> serde_json::Result<V::Value> {
        match self.plain_str() {
            Some(s) => visitor.visit_borrowed_str(s),
            None => self.with_serde(|de| serde::Deserializer::deserialize_str(de, visitor)),
        }
    }

    fn deserialize_string<V: serde::de::Visitor<'a>>(self, visitor: V) -> serde_json::Result<V::Value> {
        self.deserialize_str(visitor)
    }

    by_serde! {
        deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32(); deserialize_i64();
        deserialize_i128(); deserialize_u8(); deserialize_u16(); deserialize_u32(); deserialize_u64();
        deserialize_u128(); deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_bytes();
        deserialize_byte_buf(); deserialize_option(); deserialize_unit(); deserialize_seq(); deserialize_map();
        deserialize_identifier(); deserialize_ignored_any();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }
}

/// Where each member of the object at `text[object]` is. The text must be one JSON value
/// (`Arguments::from_json` checks; a request's parameters were read by serde_json already):
/// it is then only scanned for where things start and end, at the speed of `memchr`.
fn index(text: &str, object: Range<usize>) -> Result<Vec<Entry>, ArgumentsError> {
    Ok(Members::of(text, object)?.map(|m| m.map(|(key, value)| Entry { key, value })).collect::<Result<_, _>>()?)
}

/// Whether `text` holds `\uD800` to `\uDFFF`, half of a surrogate pair (or a lone one, which
/// names and values that are text must not hold). Most arguments hold no backslash at all.
fn may_hold_surrogates(text: &[u8]) -> bool {
    memchr::memchr_iter(b'\\', text)
        .any(|i| matches!(text.get(i + 1..i + 4), Some([b'u', b'd' | b'D', b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'])))
}

/// What serde_json reads in `text`: for an object, its members (name, value text) in order;
/// `Some(empty)` for `null`; `None` for anything else, or for text that is not JSON. The
/// scanner above must agree with it on every input (unit tests, and the `arguments` fuzz
/// target).
#[cfg(any(test, fuzzing))]
pub(crate) fn members_by_serde(text: &str) -> Option<Vec<(String, String)>> {
    use serde::de::{Deserializer as _, MapAccess, Visitor};
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Option<Vec<(String, String)>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("anything")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Some(Vec::new()))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members = Vec::new();
            while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                members.push((key, value.get().to_owned()));
            }
            Ok(Some(members))
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let members = de.deserialize_any(Members).ok()?;
    de.end().ok()?;
    members
}

/// Checks the scanner against serde_json on `text`; panics, saying how, when they disagree.
#[cfg(any(test, fuzzing))]
pub(crate) fn check_against_serde(text: &str) {
    let expected = members_by_serde(text);
    let scanned = Arguments::from_json(text).ok().map(|a| {
        let members: Vec<_> =
            a.entries().iter().map(|e| (a.key(e).to_owned(), a.text[e.value.clone()].to_owned())).collect();
        // A lookup by scanning finds what the index finds, and a value reads as serde_json
        // reads it.
        for (name, value) in &members {
            let fresh = Arguments::from_json(text).ok();
            assert_eq!(fresh.as_ref().and_then(|f| f.value_text(name)), a.value_text(name), "{text:?}: `{name}`");
            let as_value = |read: serde_json::Result<serde_json::Value>| read.ok();
            assert_eq!(as_value(read_value(value)), as_value(serde_json::from_str(value)), "{value:?}");
            let as_string = |read: serde_json::Result<String>| read.ok();
            assert_eq!(as_string(read_value(value)), as_string(serde_json::from_str(value)), "{value:?}");
        }
        members
    });
    assert_eq!(scanned, expected, "arguments scanned differently from serde_json: {text:?}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::scan::quote_or_backslash;

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
        for null in ["null", " null\n"] {
            let args = Arguments::from_json(null).unwrap();
            assert!(args.is_empty());
            assert_eq!(args.as_json(), "{}");
            assert_eq!(args.deserialize::<JsonObject>().unwrap(), JsonObject::new());
        }
        for bad in ["[]", "\"x\"", "3", "{", "{} {}", "{\"a\":}"] {
            assert!(Arguments::from_json(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_scanner_reads_what_serde_json_reads() {
        let cases = [
            "{}",
            " { } ",
            "null",
            " null ",
            r#"{"a":1}"#,
            r#"{ "a" : -1.5e+3 , "b":true,"c" :null, "d":false }"#,
            r#"{"s":"x\"y\\","t":"\\"}"#,
            r#"{"k\"ey":"v","k\\":"w","\u00e9":"é"}"#,
            r#"{"o":{"p":[1,{"q":"]}"},[]],"r":"{"},"z":[]}"#,
            r#"{"a":1,"a":2}"#,
            "{\"ws\"\t:\r\n[ 1 , 2 ]\n}",
            r#"{"":""}"#,
            // Not objects.
            "[]",
            "[1,2]",
            r#""str""#,
            "3",
            "true",
            // Not JSON.
            "",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{} {}",
            "nul",
            "{\"a\":\"\\\"}",
            // Names that are not text: a lone surrogate, alone or beside a pair.
            r#"{"\uD9220":{}}"#,
            r#"{"\udc00":1}"#,
            r#"{"ok":"\ud83d\ude00","\ud83d\ude00":2}"#,
            r#"{"v":"\ud800"}"#,
        ];
        for text in cases {
            check_against_serde(text);
        }
    }

    #[test]
    fn quotes_and_backslashes_are_found_at_every_offset() {
        for len in 0..160 {
            for at in 0..len {
                for found in [b'"', b'\\'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = found;
                    if at + 1 < len {
                        bytes[at + 1] = b'"';
                    }
                    assert_eq!(quote_or_backslash(&bytes), Some(at), "{len} {at}");
                }
            }
            assert_eq!(quote_or_backslash(&vec![b'x'; len]), None);
        }
        // Bytes just below and above the ones looked for, and multi-byte text.
        assert_eq!(quote_or_backslash("!#[]é\u{7f}\u{80}ab\"".as_bytes()), Some(11));
    }

    #[test]
    fn values_read_as_serde_json_reads_them() {
        use std::collections::BTreeMap;

        use serde::Deserialize;
        use serde_json::Value;

        #[derive(Debug, PartialEq, Deserialize)]
        enum Mode {
            Fast,
            Slow { by: u8 },
        }
        #[derive(Debug, PartialEq, Deserialize)]
        #[serde(untagged)]
        enum Either {
            Number(i64),
            Text(String),
        }
        #[derive(Debug, PartialEq, Deserialize)]
        struct Point {
            x: i32,
            y: Option<i32>,
        }
        #[derive(Debug, PartialEq, Deserialize)]
        struct Meters(f64);

        fn same<T: DeserializeOwned + PartialEq + std::fmt::Debug>(text: &str) {
            match (read_value::<T>(text), serde_json::from_str::<T>(text)) {
                (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{text}"),
                (Err(_), Err(_)) => {}
                (ours, theirs) => {
                    panic!("{text} as {}: {ours:?} but serde_json: {theirs:?}", std::any::type_name::<T>())
                }
            }
        }
        let texts = [
            r#""plain""#,
            r#""""#,
            r#""é ✓ 😀""#,
            r#""tab\tand \"quotes\"""#,
            r#""\u00e9""#,
            r#""\uD83D\uDE00""#,
            r#""Fast""#,
            r#""x""#,
            r#""12""#,
            "12",
            "-3",
            "1.5",
            "1e400",
            "true",
            "null",
            "[]",
            r#"["a","b\n"]"#,
            r#"{"x":1}"#,
            r#"{"x":1,"y":2}"#,
            r#"{"Slow":{"by":3}}"#,
            r#"{"a":"b"}"#,
            "[1,2]",
            "[1.5]",
        ];
        for text in texts {
            same::<String>(text);
            same::<Option<String>>(text);
            same::<Value>(text);
            same::<char>(text);
            same::<i64>(text);
            same::<u8>(text);
            same::<f64>(text);
            same::<bool>(text);
            same::<()>(text);
            same::<Vec<String>>(text);
            same::<BTreeMap<String, Value>>(text);
            same::<Mode>(text);
            same::<Either>(text);
            same::<Point>(text);
            same::<Meters>(text);
            same::<(i32, i32)>(text);
            let raw = read_value::<Box<RawValue>>(text).map(|r| r.get().to_owned()).ok();
            assert_eq!(raw, serde_json::from_str::<Box<RawValue>>(text).map(|r| r.get().to_owned()).ok(), "{text}");
        }
        // A plain string is handed over as it stands, but only when it is one whole string.
        assert_eq!(read_value::<String>(r#""a b""#).unwrap(), "a b");
        assert!(read_value::<String>(r#""a","b""#).is_err());
        assert!(read_value::<String>(r#"""#).is_err());
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
