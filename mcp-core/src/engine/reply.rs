//! The JSON text of a result, written with room in front for the response around it.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::protocol::RequestId;

/// Room kept in front of a result's text. The response's head, `{"jsonrpc":"2.0","id":`, the
/// id and `,"result":`, fits in it for any numeric id and for string ids of up to 24 bytes,
/// and is then written in place: the result is never copied into a second buffer.
const ROOM: usize = 56;
const PAD: &str = "                                                        ";
const HEAD: &str = "{\"jsonrpc\":\"2.0\",\"id\":";
const TAIL: &str = ",\"result\":";

/// Buffers larger than this are not kept for reuse.
const SPARE_LIMIT: usize = 16 * 1024;

thread_local! {
    /// A result buffer whose response was written out, kept for the next result made on this
    /// thread: a session's reader makes and writes out most answers itself, so one kept
    /// buffer spares an allocation per request.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// An empty buffer of at least `capacity` bytes, the kept one if there is one.
fn new_buffer(capacity: usize) -> Vec<u8> {
    let mut buf = SPARE.take();
    buf.clear();
    buf.reserve(capacity);
    buf
}

/// The JSON text of a successful result, as a request handler returns it.
///
/// Made by serializing a value ([`ResultText::serialize`]) or from JSON text written before
/// ([`ResultText::from_raw`], or `From<Box<RawValue>>`). The engine writes the response
/// around the text in the buffer that holds it.
#[derive(Clone)]
pub struct ResultText {
    /// `ROOM` bytes of padding, then the result's JSON text: always UTF-8 (it is kept as bytes
    /// so that serde_json's output needs no check until the response is made).
    buf: Vec<u8>,
}

impl ResultText {
    /// The JSON text of `value`.
    pub fn serialize<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        let mut buf = new_buffer(ROOM + 128);
        buf.extend_from_slice(PAD.as_bytes());
        serde_json::to_writer(&mut buf, value)?;
        Ok(ResultText { buf })
    }

    /// A copy of JSON text written before.
    pub fn from_raw(raw: &RawValue) -> Self {
        let mut buf = new_buffer(ROOM + raw.get().len() + 1);
        buf.extend_from_slice(PAD.as_bytes());
        buf.extend_from_slice(raw.get().as_bytes());
        ResultText { buf }
    }

    /// A buffer to write a result's JSON text into, with [`written`](Self::written) after.
    pub(crate) fn buffer(capacity: usize) -> String {
        let mut buf = new_buffer(ROOM + capacity + 1);
        buf.extend_from_slice(PAD.as_bytes());
        // Empty but for the padding, which is text.
        String::from_utf8(buf).unwrap_or_default()
    }

    /// The result written into a buffer from [`buffer`](Self::buffer); the caller vouches that
    /// what it appended is one JSON value.
    pub(crate) fn written(buf: String) -> Self {
        debug_assert!(buf.starts_with(PAD) && serde_json::from_str::<&RawValue>(&buf[ROOM..]).is_ok());
        ResultText { buf: buf.into_bytes() }
    }

    /// The result's JSON text.
    pub fn get(&self) -> &str {
        // UTF-8 by construction.
        std::str::from_utf8(&self.buf[ROOM..]).unwrap_or_default()
    }

    /// The result as a `RawValue` (a copy).
    pub fn to_raw(&self) -> Box<RawValue> {
        // The text is one JSON value by construction.
        serde_json::from_str::<&RawValue>(self.get()).map(RawValue::to_owned).unwrap_or_default()
    }

    /// Appends the response to request `id` carrying this result to `out`, and keeps this
    /// result's buffer for the next result made on this thread.
    pub(crate) fn write_response(self, id: &RequestId, out: &mut Vec<u8>) {
        out.extend_from_slice(HEAD.as_bytes());
        match id {
            RequestId::Number(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            // Writing a str to a Vec cannot fail.
            RequestId::String(s) => serde_json::to_writer(&mut *out, &**s).unwrap_or_default(),
        }
        out.extend_from_slice(TAIL.as_bytes());
        out.extend_from_slice(&self.buf[ROOM..]);
        out.push(b'}');
        if self.buf.capacity() <= SPARE_LIMIT {
            SPARE.set(self.buf);
        }
    }

    /// The response to request `id` carrying this result.
    pub(crate) fn into_response(self, id: &RequestId) -> String {
        let mut number = itoa::Buffer::new();
        let quoted;
        let id_text = match id {
            RequestId::Number(n) => number.format(*n),
            RequestId::String(s) => {
                // Serializing a str to JSON cannot fail.
                quoted = serde_json::to_string(&**s).unwrap_or_default();
                &quoted
            }
        };
        let len = HEAD.len() + id_text.len() + TAIL.len();
        let mut buf = self.buf;
        if len <= ROOM {
            // The head goes right before the result, and the room left over is cut off.
            let mut at = ROOM - len;
            for part in [HEAD, id_text, TAIL] {
                buf[at..at + part.len()].copy_from_slice(part.as_bytes());
                at += part.len();
            }
            buf.drain(..ROOM - len);
        } else {
            let mut out = Vec::with_capacity(len + buf.len() - ROOM + 1);
            for part in [HEAD, id_text, TAIL] {
                out.extend_from_slice(part.as_bytes());
            }
            out.extend_from_slice(&buf[ROOM..]);
            buf = out;
        }
        buf.push(b'}');
        // Text and whole strs make text: the check never fails (and costs less than a copy).
        String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

impl From<Box<RawValue>> for ResultText {
    fn from(raw: Box<RawValue>) -> Self {
        ResultText::from_raw(&raw)
    }
}

impl From<&RawValue> for ResultText {
    fn from(raw: &RawValue) -> Self {
        ResultText::from_raw(raw)
    }
}

impl std::fmt::Debug for ResultText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ResultText").field(&self.get()).finish()
    }
}

impl PartialEq for ResultText {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(result: &ResultText, id: RequestId) -> serde_json::Value {
        let frame = result.clone().into_response(&id);
        serde_json::from_str(&frame).unwrap_or_else(|e| panic!("{frame}: {e}"))
    }

    #[test]
    fn responses_are_written_around_the_result() {
        let result = ResultText::serialize(&serde_json::json!({"a": [1, "é"]})).unwrap();
        assert_eq!(result.get(), r#"{"a":[1,"é"]}"#);
        let ids = [
            RequestId::Number(0),
            RequestId::Number(i64::MIN),
            RequestId::String("short".into()),
            RequestId::String("exactly twenty-four byte".into()),
            RequestId::String("a string id much longer than the room left in front".into()),
            RequestId::String("quote \" and \\ and é".into()),
        ];
        for id in ids {
            let expected = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"a": [1, "é"]}});
            assert_eq!(response(&result, id.clone()), expected, "{id:?}");
            let frame = result.clone().into_response(&id);
            assert!(frame.starts_with("{\"jsonrpc\"") && !frame.contains("  "), "{frame}");
            // Appended to a buffer, the same bytes.
            let mut out = b"before\n".to_vec();
            result.clone().write_response(&id, &mut out);
            assert_eq!(out, [b"before\n", frame.as_bytes()].concat(), "{id:?}");
        }
    }

    #[test]
    fn a_written_out_buffer_is_reused_empty() {
        let first = ResultText::serialize(&"a long result that fills the buffer with text").unwrap();
        let kept = first.buf.as_ptr();
        first.write_response(&RequestId::Number(1), &mut Vec::new());
        let next = ResultText::serialize(&1).unwrap();
        assert_eq!(next.buf.as_ptr(), kept, "the buffer was not reused");
        assert_eq!(next.get(), "1");
        assert_eq!(next.into_response(&RequestId::Number(2)), r#"{"jsonrpc":"2.0","id":2,"result":1}"#);
    }

    #[test]
    fn made_from_text_written_before() {
        let raw = serde_json::value::to_raw_value(&[true]).unwrap();
        let result = ResultText::from(raw);
        assert_eq!(result.get(), "[true]");
        assert_eq!(result.to_raw().get(), "[true]");
        assert_eq!(response(&result, RequestId::Number(3))["result"], serde_json::json!([true]));
    }
}
