//! An incremental parser of `text/event-stream` bodies, as the Streamable HTTP client reads
//! them. What it holds is bounded by the message size limit.

use std::time::Duration;

/// An incremental parser of `text/event-stream` bodies (the WHATWG format), yielding the data
/// of `message` events. Lines longer than the limit spoil their event, which is dropped.
pub(crate) struct SseParser {
    line: Vec<u8>,
    line_too_long: bool,
    after_cr: bool,
    at_start: bool,
    data: String,
    event: String,
    spoiled: bool,
    max: usize,
    /// The last event id seen (what `Last-Event-ID` resumes from).
    pub(crate) last_event_id: Option<String>,
    /// The reconnection delay the server asked for.
    pub(crate) retry: Option<Duration>,
}

impl SseParser {
    pub(crate) fn new(max: usize) -> Self {
        SseParser {
            line: Vec::new(),
            line_too_long: false,
            after_cr: false,
            at_start: true,
            data: String::new(),
            event: String::new(),
            spoiled: false,
            max,
            last_event_id: None,
            retry: None,
        }
    }

    /// Parses `bytes`, appending the data of each complete `message` event to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out);
                }
                b'\n' => self.end_line(out),
                _ if self.line.len() < self.max => self.line.push(b),
                _ => self.line_too_long = true,
            }
        }
    }

    fn end_line(&mut self, out: &mut Vec<String>) {
        let mut line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.line_too_long) {
            self.spoiled = true;
            return;
        }
        if std::mem::take(&mut self.at_start) && line.starts_with(&[0xEF, 0xBB, 0xBF]) {
            line.drain(..3);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        let Ok(text) = String::from_utf8(line) else {
            self.spoiled = true;
            return;
        };
        if text.starts_with(':') {
            return;
        }
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_str(), ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max {
                    self.spoiled = true;
                } else {
                    self.data.push_str(value);
                    self.data.push('\n');
                }
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<String>) {
        let mut data = std::mem::take(&mut self.data);
        let event = std::mem::take(&mut self.event);
        if std::mem::take(&mut self.spoiled) {
            tracing::warn!("dropped an SSE event that was too long or not UTF-8");
            return;
        }
        data.pop();
        // An event without data (the priming event a server sends first) carries no message.
        if data.trim().is_empty() || !(event.is_empty() || event == "message") {
            return;
        }
        out.push(data);
    }
}

/// Parses `data` whole and in chunks (their lengths read from the data), with a limit read from
/// its first byte, and panics unless both give the same events, event id and retry delay, and
/// what the parser keeps stays within the limit.
#[cfg(any(test, fuzzing))]
pub(crate) fn check_chunking(data: &[u8]) {
    let Some((&first, text)) = data.split_first() else { return };
    let max = 16 + usize::from(first) * 4;
    let (mut whole, mut chunked) = (SseParser::new(max), SseParser::new(max));
    let (mut at_once, mut in_chunks) = (Vec::new(), Vec::new());
    whole.feed(text, &mut at_once);
    let mut rest = text;
    let mut lengths = text.iter().map(|b| 1 + usize::from(b % 7)).cycle();
    while !rest.is_empty() {
        let (chunk, after) = rest.split_at(lengths.next().unwrap_or(1).min(rest.len()));
        chunked.feed(chunk, &mut in_chunks);
        assert!(chunked.line.len() <= max && chunked.data.len() <= max, "the parser holds more than its limit");
        rest = after;
    }
    assert_eq!(at_once, in_chunks, "chunking changed the events");
    assert_eq!(whole.last_event_id, chunked.last_event_id);
    assert_eq!(whole.retry, chunked.retry);
    for event in &at_once {
        assert!(event.len() < max, "an event of {} bytes passed the limit of {max}", event.len());
    }
    assert!(whole.last_event_id.as_ref().is_none_or(|id| id.len() <= max));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]], max: usize) -> (Vec<String>, SseParser) {
        let mut parser = SseParser::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        (out, parser)
    }

    #[test]
    fn parses_events_across_chunks_and_line_endings() {
        let (out, p) = parse(
            &[
                b"\xEF\xBB\xBFid: 1-1\nretry: 500\ndata: \n\n",
                b"event: message\r\nid: 1-2\r",
                b"\ndata: {\"a\":\r\ndata: 1}\r\n\r\n",
            ],
            1024,
        );
        assert_eq!(out, ["{\"a\":\n1}"]);
        assert_eq!(p.last_event_id.as_deref(), Some("1-2"));
        assert_eq!(p.retry, Some(Duration::from_millis(500)));
        let (out, _) = parse(&[b": keep-alive\n\ndata:x\n\nevent: other\ndata: y\n\ndata: z\r\r"], 1024);
        assert_eq!(out, ["x", "z"]);
    }

    #[test]
    fn drops_events_over_the_limit() {
        let long = format!("data: {}\n\ndata: ok\n\n", "x".repeat(100));
        let (out, _) = parse(&[long.as_bytes()], 32);
        assert_eq!(out, ["ok"]);
        let (out, _) = parse(&[b"data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\ndata: ok\n\n"], 24);
        assert_eq!(out, ["ok"]);
        let (out, _) = parse(&[b"data: \xFF\n\ndata: ok\n\n"], 24);
        assert_eq!(out, ["ok"]);
    }

    #[test]
    fn chunking_does_not_change_what_is_parsed() {
        check_chunking(b"\x04\xEF\xBB\xBFid: 1-1\nretry: 500\ndata: \n\nevent: message\r\nid: 1-2\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n");
        check_chunking(b"\x00data: 0123456789abcdef0123\n\ndata: ok\r\rdata:\xFF\n\n: c\n\n");
        check_chunking(b"\xFF\r\n\r\r\n\ndata\nid\nretry: x\nretry: 12\n\n");
    }
}
