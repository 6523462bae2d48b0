//! Newline-delimited JSON over a byte stream (stdin/stdout, or any pipe).

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::engine::{Outbound, Service, Session};
use crate::protocol::ErrorObject;

/// The default limit on one incoming line: 4 MiB.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// Options of the line transport.
#[derive(Debug, Clone)]
pub struct LineOptions {
    /// Longest accepted line in bytes; longer lines are rejected without being buffered.
    pub max_line: usize,
}

impl Default for LineOptions {
    fn default() -> Self {
        LineOptions { max_line: DEFAULT_MAX_LINE }
    }
}

enum Line {
    Frame(Vec<u8>),
    TooLong(usize),
    Eof,
}

/// Reads one line, keeping at most `max` bytes of it in memory.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    buf.clear();
    let mut seen = 0usize;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if seen == 0 {
                Line::Eof
            } else if seen > max {
                Line::TooLong(seen)
            } else {
                Line::Frame(std::mem::take(buf))
            });
        }
        let (part, done) = match memchr(chunk) {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        seen += part.len();
        if seen <= max {
            buf.extend_from_slice(part);
        } else if !buf.is_empty() {
            buf.clear();
            buf.shrink_to(64 * 1024);
        }
        let used = done.unwrap_or(chunk.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(if seen > max { Line::TooLong(seen) } else { Line::Frame(std::mem::take(buf)) });
        }
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Drains the outbound queue into `writer`, one line per message, flushing when idle. Ends when
/// every sender is gone, or once `finish` is cancelled and the queue is empty.
pub(crate) async fn write_frames<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Outbound>,
    writer: W,
    finish: CancellationToken,
) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    loop {
        let out = tokio::select! {
            biased;
            out = rx.recv() => match out {
                Some(out) => out,
                None => break,
            },
            () = finish.cancelled() => break,
        };
        w.write_all(out.frame.as_bytes()).await?;
        w.write_all(b"\n").await?;
        if rx.is_empty() {
            w.flush().await?;
        }
    }
    w.flush().await?;
    Ok(())
}

/// Serves `session` over a reader and a writer until the reader ends, then shuts the session
/// down (pending waits fail, handlers in flight are cancelled) and flushes what is left.
pub async fn serve_lines<S, R, W>(
    session: Session<S>,
    outbound: mpsc::Receiver<Outbound>,
    reader: R,
    writer: W,
    options: LineOptions,
) -> io::Result<()>
where
    S: Service,
    R: tokio::io::AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let finish = CancellationToken::new();
    let writer_task = tokio::spawn(write_frames(outbound, writer, finish.clone()));
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut buf = Vec::new();
    let result = loop {
        match read_line(&mut reader, &mut buf, options.max_line).await {
            Ok(Line::Eof) => break Ok(()),
            Ok(Line::TooLong(n)) => {
                let error = ErrorObject::invalid_request(format!(
                    "message of {n} bytes exceeds the limit of {} bytes",
                    options.max_line
                ));
                session.send_error(None, &error).await;
            }
            Ok(Line::Frame(bytes)) => {
                let text = match std::str::from_utf8(&bytes) {
                    Ok(t) => t.trim_end_matches('\r'),
                    Err(e) => {
                        session
                            .send_error(None, &ErrorObject::parse_error(format!("parse error: invalid UTF-8: {e}")))
                            .await;
                        continue;
                    }
                };
                if text.trim().is_empty() {
                    continue;
                }
                session.handle_frame(text).await;
            }
            Err(e) => break Err(e),
        }
    };
    session.shutdown().await;
    drop(session);
    // Every response is queued by now. A peer handle that outlived its handler (a task the
    // handler left behind) must not keep the output, and so the caller, waiting forever.
    finish.cancel();
    match writer_task.await {
        Ok(Err(e)) if e.kind() != io::ErrorKind::BrokenPipe => {
            tracing::debug!(error = %e, "writer stopped")
        }
        _ => {}
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut r = BufReader::with_capacity(7, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut r, &mut buf, max).await.unwrap() {
                Line::Eof => return out,
                Line::TooLong(n) => out.push(format!("too long: {n}")),
                Line::Frame(b) => out.push(String::from_utf8(b).unwrap()),
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_and_bounds_memory() {
        assert_eq!(lines(b"ab\ncd\n", 10).await, ["ab", "cd"]);
        assert_eq!(lines(b"ab\ncd", 10).await, ["ab", "cd"]);
        assert_eq!(lines(b"0123456789abc\nok\n", 10).await, ["too long: 13", "ok"]);
        assert_eq!(lines(b"0123456789abc", 10).await, ["too long: 13"]);
        assert_eq!(lines(b"0123456789\n", 10).await, ["0123456789"]);
    }
}
