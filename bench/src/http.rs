//! A minimal HTTP/1.1 client for Streamable HTTP: one keep-alive connection, POSTs with
//! `Content-Length`, answers read as JSON or as an SSE stream (chunked or until close).
//! Written for the driver so that its own cost is small and the same for every server.

use std::borrow::Cow;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::wire;

/// How long any single read or write may take before the run fails.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

fn other(message: impl Into<String>) -> io::Error {
    io::Error::other(message.into())
}

async fn timed<T>(f: impl Future<Output = io::Result<T>>) -> io::Result<T> {
    tokio::time::timeout(IO_TIMEOUT, f).await.map_err(|_| other("timed out"))?
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

/// The head of a response.
#[derive(Debug)]
pub struct Head {
    /// The status code.
    pub status: u16,
    /// `Mcp-Session-Id`, if sent.
    pub session: Option<String>,
    /// Whether the answer is an SSE stream (else a plain body).
    pub sse: bool,
    framing: Framing,
    close: bool,
}

/// One connection to the MCP endpoint.
pub struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    host: String,
    /// Bytes of the current body still to read (`Length`), or of the current chunk.
    remaining: usize,
    framing: Framing,
    body_done: bool,
    sse: Vec<u8>,
    request: Vec<u8>,
    /// The server said `Connection: close`, or a body was left unread.
    pub broken: bool,
    /// The `Authorization` header value sent with every request, if any.
    pub authorization: Option<String>,
    /// DPoP proofs: each request takes the next one, sent as its `DPoP` header.
    pub proofs: Option<std::sync::Arc<Proofs>>,
}

/// DPoP proofs signed ahead of time, each used once.
pub struct Proofs {
    all: Vec<String>,
    next: std::sync::atomic::AtomicUsize,
}

impl Proofs {
    /// The proofs in `path`, one per line.
    pub fn read(path: &std::path::Path) -> Result<Proofs, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Proofs { all: text.lines().map(str::to_owned).collect(), next: Default::default() })
    }

    fn take(&self) -> io::Result<&str> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.all.get(i).map(String::as_str).ok_or_else(|| other("out of DPoP proofs"))
    }
}

/// A message from the server, as far as the driver cares.
#[derive(Deserialize)]
pub struct Incoming<'a> {
    /// The id, raw.
    #[serde(borrow)]
    pub id: Option<&'a RawValue>,
    /// The method of a request or notification.
    #[serde(borrow)]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    result: Option<Outcome<'a>>,
    error: Option<IgnoredAny>,
}

impl Incoming<'_> {
    /// Whether this is a response reporting success.
    pub fn succeeded(&self) -> bool {
        self.error.is_none() && self.result.as_ref().is_some_and(|r| !r.is_error)
    }

    /// The result's `resultType` (2026-07-28), if it has one.
    pub fn result_type(&self) -> Option<&str> {
        self.result.as_ref()?.result_type.as_deref()
    }
}

#[derive(Deserialize)]
struct Outcome<'a> {
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
}

impl Conn {
    /// Connects to `addr`.
    pub async fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = timed(TcpStream::connect(addr)).await?;
        stream.set_nodelay(true)?;
        let (r, w) = stream.into_split();
        Ok(Conn {
            reader: BufReader::with_capacity(16 * 1024, r),
            writer: w,
            host: addr.to_string(),
            remaining: 0,
            framing: Framing::Length(0),
            body_done: true,
            sse: Vec::new(),
            request: Vec::with_capacity(1024),
            broken: false,
            authorization: None,
            proofs: None,
        })
    }

    /// Sends a POST to `/mcp` and reads the head of the answer.
    pub async fn post(&mut self, session: Option<&str>, body: &str) -> io::Result<Head> {
        self.post_with(session, "", body).await
    }

    /// [`Conn::post`] with `extra` header lines (each ending in CRLF) too.
    async fn post_with(&mut self, session: Option<&str>, extra: &str, body: &str) -> io::Result<Head> {
        if !self.body_done || self.broken {
            return Err(other("the connection is not reusable"));
        }
        let r = &mut self.request;
        r.clear();
        r.extend_from_slice(b"POST /mcp HTTP/1.1\r\nHost: ");
        r.extend_from_slice(self.host.as_bytes());
        r.extend_from_slice(
            b"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ",
        );
        r.extend_from_slice(body.len().to_string().as_bytes());
        if let Some(s) = session {
            r.extend_from_slice(b"\r\nMcp-Session-Id: ");
            r.extend_from_slice(s.as_bytes());
            r.extend_from_slice(b"\r\nMcp-Protocol-Version: ");
            r.extend_from_slice(wire::PROTOCOL_VERSION.as_bytes());
        }
        if let Some(a) = &self.authorization {
            r.extend_from_slice(b"\r\nAuthorization: ");
            r.extend_from_slice(a.as_bytes());
        }
        if let Some(proofs) = &self.proofs {
            r.extend_from_slice(b"\r\nDPoP: ");
            r.extend_from_slice(proofs.take()?.as_bytes());
        }
        r.extend_from_slice(b"\r\n");
        r.extend_from_slice(extra.as_bytes());
        r.extend_from_slice(b"\r\n");
        r.extend_from_slice(body.as_bytes());
        timed(self.writer.write_all(&self.request)).await?;
        let head = timed(self.read_head()).await?;
        self.framing = head.framing;
        self.remaining = match head.framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        self.body_done = head.framing == Framing::Length(0);
        self.sse.clear();
        self.broken = head.close;
        Ok(head)
    }

    async fn read_head(&mut self) -> io::Result<Head> {
        let mut line = String::new();
        if self.reader.read_line(&mut line).await? == 0 {
            return Err(other("the server closed the connection"));
        }
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| other(format!("bad status line {line:?}")))?;
        let mut head = Head { status, session: None, sse: false, framing: Framing::UntilClose, close: false };
        loop {
            line.clear();
            if self.reader.read_line(&mut line).await? == 0 {
                return Err(other("the server closed the connection in the head"));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let Some((name, value)) = l.split_once(':') else { continue };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => {
                    head.framing = Framing::Length(value.parse().map_err(|_| other("bad content-length"))?)
                }
                "transfer-encoding" if value.eq_ignore_ascii_case("chunked") => head.framing = Framing::Chunked,
                "content-type" => head.sse = value.starts_with("text/event-stream"),
                "mcp-session-id" => head.session = Some(value.to_owned()),
                "connection" => head.close = value.eq_ignore_ascii_case("close"),
                _ => {}
            }
        }
        if matches!(head.status, 204 | 304) {
            head.framing = Framing::Length(0);
        }
        if head.framing == Framing::UntilClose {
            head.close = true;
        }
        Ok(head)
    }

    /// Appends the next piece of the body to `out`; false at the end of the body.
    async fn read_some(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        if self.body_done {
            return Ok(false);
        }
        match self.framing {
            Framing::Length(_) => {
                let n = self.take(out, self.remaining).await?;
                self.remaining -= n;
                self.body_done = self.remaining == 0;
            }
            Framing::UntilClose => {
                let buf = self.reader.fill_buf().await?;
                if buf.is_empty() {
                    self.body_done = true;
                    return Ok(false);
                }
                out.extend_from_slice(buf);
                let n = buf.len();
                self.reader.consume(n);
            }
            Framing::Chunked => {
                if self.remaining == 0 {
                    let mut line = String::new();
                    if self.reader.read_line(&mut line).await? == 0 {
                        return Err(other("the server closed the connection in a chunked body"));
                    }
                    let size = line.trim().split(';').next().unwrap_or("");
                    let size =
                        usize::from_str_radix(size, 16).map_err(|_| other(format!("bad chunk size {line:?}")))?;
                    if size == 0 {
                        // Trailers, then the blank line.
                        loop {
                            line.clear();
                            self.reader.read_line(&mut line).await?;
                            if line.trim().is_empty() {
                                break;
                            }
                        }
                        self.body_done = true;
                        return Ok(false);
                    }
                    self.remaining = size;
                }
                let n = self.take(out, self.remaining).await?;
                self.remaining -= n;
                if self.remaining == 0 {
                    let mut crlf = [0u8; 2];
                    self.reader.read_exact(&mut crlf).await?;
                }
            }
        }
        Ok(true)
    }

    /// Reads up to `max` bytes (at least one) into `out`.
    async fn take(&mut self, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        let buf = self.reader.fill_buf().await?;
        if buf.is_empty() {
            return Err(other("the server closed the connection in a body"));
        }
        let n = buf.len().min(max);
        out.extend_from_slice(&buf[..n]);
        self.reader.consume(n);
        Ok(n)
    }

    /// Reads the whole body.
    pub async fn read_body(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        while timed(self.read_some(&mut body)).await? {}
        Ok(body)
    }

    /// The data of the next SSE event that has any, or `None` at the end of the stream.
    pub async fn next_event(&mut self) -> io::Result<Option<String>> {
        loop {
            if let Some(end) = self.sse.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.sse.drain(..end + 2).collect();
                let text = String::from_utf8_lossy(&event);
                let mut data = String::new();
                for line in text.lines() {
                    if let Some(d) = line.strip_prefix("data:") {
                        if !data.is_empty() {
                            data.push('\n');
                        }
                        data.push_str(d.strip_prefix(' ').unwrap_or(d));
                    }
                }
                if !data.trim().is_empty() {
                    return Ok(Some(data));
                }
                continue;
            }
            let mut piece = Vec::new();
            if !timed(self.read_some(&mut piece)).await? {
                return Ok(None);
            }
            piece.retain(|&b| b != b'\r');
            self.sse.extend_from_slice(&piece);
        }
    }

    /// Sends a request and returns the server's response to it (JSON, or the SSE event
    /// carrying it), leaving the connection ready for the next request. Requests the server
    /// makes meanwhile are an error.
    pub async fn request(&mut self, session: Option<&str>, body: &str) -> io::Result<(Head, String)> {
        self.request_with(session, "", body).await
    }

    /// [`Conn::request`] with `extra` header lines (each ending in CRLF) too.
    pub async fn request_with(&mut self, session: Option<&str>, extra: &str, body: &str) -> io::Result<(Head, String)> {
        let head = self.post_with(session, extra, body).await?;
        if !(200..300).contains(&head.status) {
            let body = self.read_body().await.unwrap_or_default();
            return Err(other(format!("HTTP {}: {}", head.status, String::from_utf8_lossy(&body))));
        }
        if !head.sse {
            let body = self.read_body().await?;
            return Ok((head, String::from_utf8(body).map_err(|_| other("the body is not UTF-8"))?));
        }
        let mut response = None;
        while let Some(data) = self.next_event().await? {
            let m: Incoming = serde_json::from_str(&data).map_err(|e| other(format!("bad event {data:?}: {e}")))?;
            match (&m.id, &m.method) {
                (Some(_), None) => response = Some(data),
                (Some(_), Some(method)) => return Err(other(format!("unexpected request `{method}`"))),
                _ => {}
            }
        }
        Ok((head, response.ok_or_else(|| other("the stream ended without a response"))?))
    }

    /// Sends a message that gets no response (a notification, or a response of ours).
    pub async fn send(&mut self, session: &str, body: &str) -> io::Result<()> {
        let head = self.post(Some(session), body).await?;
        let rest = self.read_body().await?;
        if head.status != 202 && head.status != 200 {
            return Err(other(format!("HTTP {}: {}", head.status, String::from_utf8_lossy(&rest))));
        }
        Ok(())
    }

    /// Opens a session: `initialize`, then `notifications/initialized`.
    pub async fn open_session(&mut self) -> io::Result<String> {
        let (head, body) = self.request(None, &wire::initialize_request(0)).await?;
        let session = head.session.ok_or_else(|| other("`initialize` was answered without a session id"))?;
        let m: Incoming = serde_json::from_str(&body).map_err(|e| other(format!("bad answer {body:?}: {e}")))?;
        if m.result.is_none() {
            return Err(other(format!("`initialize` failed: {body}")));
        }
        self.send(&session, wire::INITIALIZED).await?;
        Ok(session)
    }

    /// Sends a call and reads its stream until the server asks for something, and returns that
    /// request's method and raw id; the connection stays open (the call is pending) and cannot
    /// be reused for another call.
    pub async fn call_until_request(&mut self, session: &str, body: &str) -> io::Result<(String, String)> {
        let head = self.post(Some(session), body).await?;
        if !head.sse {
            let body = self.read_body().await?;
            return Err(other(format!("HTTP {} without a stream: {}", head.status, String::from_utf8_lossy(&body))));
        }
        while let Some(data) = self.next_event().await? {
            let m: Incoming = serde_json::from_str(&data).map_err(|e| other(format!("bad event {data:?}: {e}")))?;
            if let (Some(id), Some(method)) = (&m.id, &m.method) {
                let asked = (method.to_string(), id.get().to_owned());
                self.broken = true;
                return Ok(asked);
            }
        }
        Err(other("the stream ended before the server asked anything"))
    }

    /// Reads the stream of a pending call until its response, and returns that response.
    pub async fn response_on_stream(&mut self) -> io::Result<String> {
        while let Some(data) = self.next_event().await? {
            let m: Incoming = serde_json::from_str(&data).map_err(|e| other(format!("bad event {data:?}: {e}")))?;
            match (&m.id, &m.method) {
                (Some(_), None) => return Ok(data),
                (Some(_), Some(method)) => return Err(other(format!("unexpected request `{method}`"))),
                _ => {}
            }
        }
        Err(other("the stream ended without a response"))
    }
}
