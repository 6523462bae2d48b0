//! Where the members of a JSON object are, in text serde_json has read already: each member's
//! name and the span of its value, found at the speed of `memchr` without building a tree.
//! Tool arguments are read this way, and so is a request's `params` (see [`super::view`]).

use std::ops::Range;

/// Why a text is not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ScanError(pub(crate) String);

/// A member's name: where it is in the text, or, when it holds escapes, its decoded form.
#[derive(Debug, Clone)]
pub(crate) enum Key {
    Span(Range<usize>),
    Decoded(Box<str>),
}

impl Key {
    /// The name, found in `text` (the text it was read from).
    pub(crate) fn in_text<'t>(&'t self, text: &'t str) -> &'t str {
        match self {
            Key::Span(span) => text.get(span.clone()).unwrap_or_default(),
            Key::Decoded(key) => key,
        }
    }
}

/// The value of `text`, one JSON string already read by serde_json, when it holds no escape:
/// the text between its quotes.
pub(crate) fn unescaped_str(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    memchr::memchr2(b'\\', b'"', inner.as_bytes()).is_none().then_some(inner)
}

/// The members of a JSON object, read from text known to be JSON: each member's name (where
/// it is, or decoded when it holds escapes) and where its value is. `null` reads as no members.
pub(crate) struct Members<'a> {
    text: &'a str,
    at: usize,
    end: usize,
    done: bool,
}

impl<'a> Members<'a> {
    /// The members of the object at `text[object]`; an error if the value there is neither
    /// an object nor `null`.
    pub(crate) fn of(text: &'a str, object: Range<usize>) -> Result<Self, ScanError> {
        let bytes = text.as_bytes();
        let end = object.end.min(bytes.len());
        let at = skip_space(bytes, object.start);
        match bytes.get(at) {
            Some(b'{') => Ok(Members { text, at: at + 1, end, done: false }),
            Some(b'n') if text.get(at..end).is_some_and(|t| t.trim_end() == "null") => {
                Ok(Members { text, at, end, done: true })
            }
            _ => Err(not_object()),
        }
    }

    fn member(&mut self) -> Result<Option<(Key, Range<usize>)>, ScanError> {
        let (text, bytes) = (self.text, self.text.as_bytes());
        loop {
            let at = skip_space(bytes, self.at);
            match bytes.get(at) {
                Some(b'}') => return Ok(None),
                Some(b',') => self.at = at + 1,
                Some(b'"') => {
                    let (key_end, escaped) = string_end(bytes, at + 1).ok_or_else(not_object)?;
                    let key = match text.get(at + 1..key_end) {
                        Some(_) if !escaped => Key::Span(at + 1..key_end),
                        _ => {
                            let quoted = text.get(at..=key_end).ok_or_else(not_object)?;
                            let key: String =
                                serde_json::from_str(quoted).map_err(|e| ScanError(without_position(&e)))?;
                            Key::Decoded(key.into_boxed_str())
                        }
                    };
                    let colon = skip_space(bytes, key_end + 1);
                    if bytes.get(colon) != Some(&b':') {
                        return Err(not_object());
                    }
                    let start = skip_space(bytes, colon + 1);
                    let value_end = value_end(bytes, start).filter(|&e| e <= self.end).ok_or_else(not_object)?;
                    self.at = value_end;
                    return Ok(Some((key, start..value_end)));
                }
                _ => return Err(not_object()),
            }
        }
    }
}

impl Iterator for Members<'_> {
    type Item = Result<(Key, Range<usize>), ScanError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let member = self.member().transpose();
        self.done = !matches!(member, Some(Ok(_)));
        member
    }
}

fn not_object() -> ScanError {
    ScanError("expected an object".into())
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the string whose text starts at `at` (after its opening quote) ends (its closing
/// quote), and whether it holds escapes.
fn string_end(bytes: &[u8], mut at: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        let i = at + quote_or_backslash(bytes.get(at..)?)?;
        if bytes[i] == b'"' {
            return Some((i, escaped));
        }
        escaped = true;
        at = i + 2;
    }
}

/// The first `"` or `\` in `bytes` (the rest of the text, from inside a string). Most strings
/// here are names and short values, for which memchr's setup costs more than the search: their
/// first 64 bytes are read eight at a time, and memchr searches only beyond.
pub(crate) fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    const NEAR: usize = 64;
    match bytes.split_at_checked(NEAR) {
        Some((near, far)) => {
            quote_or_backslash_near(near).or_else(|| memchr::memchr2(b'"', b'\\', far).map(|i| NEAR + i))
        }
        None => quote_or_backslash_near(bytes),
    }
}

/// [`quote_or_backslash`] in a few bytes, eight at a time.
fn quote_or_backslash_near(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        // A byte of `x` is zero where `word` has the byte looked for; the lowest flagged byte
        // is always a true match (flags above one may be carries).
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        let found = zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks.remainder().iter().position(|&b| b == b'"' || b == b'\\').map(|i| offset + i)
}

/// Where the value starting at `at` ends (one past its last byte).
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at + 1).map(|(e, _)| e + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match bytes.get(i)? {
                    b'"' => i = string_end(bytes, i + 1)?.0,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while bytes.get(i).is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                i += 1;
            }
            Some(i)
        }
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
