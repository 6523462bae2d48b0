//! Newline-delimited JSON over a byte stream (stdin/stdout, or any pipe).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::engine::{DirectFrames, Outbound, Service, Session};
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
    /// A line, now in the buffer.
    Frame,
    TooLong(usize),
    Eof,
}

/// Reads one line into `buf` (without its newline), keeping at most `max` bytes of it in memory.
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
                Line::Frame
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
            return Ok(if seen > max { Line::TooLong(seen) } else { Line::Frame });
        }
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// What the writer does next.
enum Next {
    /// Write the answers the reader wrote directly.
    Direct,
    /// Write a message from the queue.
    Queued(Outbound),
    /// Stop: every sender is gone, or `finish` was cancelled.
    Stop,
}

/// The error answering a message of `length` bytes, over the `limit`.
pub(crate) fn too_long(length: usize, limit: usize) -> ErrorObject {
    ErrorObject::invalid_request(format!("message of {length} bytes exceeds the limit of {limit} bytes"))
}

/// Drains the answers written directly (`direct`, when the reader shares one) and the outbound
/// queue into `writer`, one line per message, flushing when both are empty. Ends when every
/// sender is gone, or once `finish` is cancelled and the queue is empty.
pub(crate) async fn write_frames<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Outbound>,
    writer: W,
    finish: CancellationToken,
    direct: Option<&DirectFrames>,
) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    let mut taken = Vec::new();
    let finished = finish.cancelled();
    tokio::pin!(finished);
    loop {
        // Answers written directly come first: whatever is in the queue was queued after them
        // (the reader writes directly only while the queue is empty).
        let next = std::future::poll_fn(|cx| {
            if direct.is_some_and(|d| !d.is_empty()) {
                return Poll::Ready(Next::Direct);
            }
            match rx.poll_recv(cx) {
                Poll::Ready(Some(out)) => return Poll::Ready(Next::Queued(out)),
                Poll::Ready(None) => return Poll::Ready(Next::Stop),
                Poll::Pending => {}
            }
            match finished.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Next::Stop),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        match next {
            Next::Direct => {
                if let Some(direct) = direct {
                    direct.take(&mut taken);
                    w.write_all(&taken).await?;
                }
            }
            Next::Queued(out) => {
                w.write_all(out.frame.as_bytes()).await?;
                w.write_all(b"\n").await?;
            }
            Next::Stop => break,
        }
        if rx.is_empty() && direct.is_none_or(DirectFrames::is_empty) {
            w.flush().await?;
        }
    }
    if let Some(direct) = direct {
        direct.take(&mut taken);
        w.write_all(&taken).await?;
    }
    w.flush().await?;
    Ok(())
}

/// Serves `session` over a reader and a writer until the reader ends, then shuts the session
/// down (pending waits fail, handlers in flight are cancelled) and flushes what is left.
///
/// Reading and writing run concurrently in the caller's task, neither ever waiting on the other:
/// a peer that sends everything before it reads anything is still served. Keeping them in one
/// task means a response produced while reading is written without waking another thread.
pub(crate) async fn serve_lines<S, R, W>(
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
    let direct = DirectFrames::default();
    let read = async {
        let result = read_frames(&session, reader, &options, &direct).await;
        session.shutdown().await;
        drop(session);
        // Every response is queued by now. A peer handle that outlived its handler (a task the
        // handler left behind) must not keep the output, and so the caller, waiting forever.
        finish.cancel();
        result
    };
    let (result, written) = Both::new(read, write_frames(outbound, writer, finish.clone(), Some(&direct))).await;
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => tracing::debug!(error = %e, "writer stopped"),
        _ => {}
    }
    result
}

/// Runs a reader and a writer concurrently in one task, like `join!`, except for one thing: a
/// wake of the writer that happens while this task is running (the reader queued a response, so
/// the writer's queue woke it) is not passed on to the runtime, since the writer is polled right
/// after the reader anyway. Passed on, it would make the runtime reschedule the task once more,
/// and wake another worker to maybe run it, for every batch of messages read.
struct Both<A: Future, B: Future> {
    a: Pin<Box<A>>,
    a_out: Option<A::Output>,
    b: Pin<Box<B>>,
    b_out: Option<B::Output>,
    local: Arc<LocalWake>,
    local_waker: Waker,
}

/// The writer's waker.
struct LocalWake {
    /// The task's waker, to pass wakes on to when the task is not running.
    task: Mutex<Option<Waker>>,
    /// The task is polling its futures.
    polling: AtomicBool,
    /// The writer was woken since it was last polled.
    woken: AtomicBool,
}

impl Wake for LocalWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Paired with `Both::poll`: either the task sees `woken` after it stops polling, or this
        // sees that it stopped and wakes it.
        self.woken.store(true, Ordering::SeqCst);
        if !self.polling.load(Ordering::SeqCst)
            && let Some(w) = self.task.lock().ok().and_then(|t| t.clone())
        {
            w.wake();
        }
    }
}

impl<A: Future, B: Future> Both<A, B> {
    fn new(a: A, b: B) -> Self {
        let local = Arc::new(LocalWake {
            task: Mutex::new(None),
            polling: AtomicBool::new(false),
            woken: AtomicBool::new(false),
        });
        let local_waker = Waker::from(local.clone());
        Both { a: Box::pin(a), a_out: None, b: Box::pin(b), b_out: None, local, local_waker }
    }
}

// The futures are boxed, and their outputs are never pinned.
impl<A: Future, B: Future> Unpin for Both<A, B> {}

impl<A: Future, B: Future> Future for Both<A, B> {
    type Output = (A::Output, B::Output);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Ok(mut task) = this.local.task.lock()
            && !task.as_ref().is_some_and(|t| t.will_wake(cx.waker()))
        {
            *task = Some(cx.waker().clone());
        }
        // A few rounds at most, then the runtime gets the thread back.
        for _ in 0..8 {
            this.local.polling.store(true, Ordering::SeqCst);
            if this.a_out.is_none()
                && let Poll::Ready(out) = this.a.as_mut().poll(cx)
            {
                this.a_out = Some(out);
            }
            this.local.woken.store(false, Ordering::SeqCst);
            if this.b_out.is_none()
                && let Poll::Ready(out) = this.b.as_mut().poll(&mut Context::from_waker(&this.local_waker))
            {
                this.b_out = Some(out);
            }
            this.local.polling.store(false, Ordering::SeqCst);
            if this.a_out.is_some()
                && this.b_out.is_some()
                && let (Some(a), Some(b)) = (this.a_out.take(), this.b_out.take())
            {
                return Poll::Ready((a, b));
            }
            if !this.local.woken.swap(false, Ordering::SeqCst) {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Hands every line of `reader` to `session` until the reader ends.
async fn read_frames<S: Service, R: tokio::io::AsyncRead + Unpin>(
    session: &Session<S>,
    reader: R,
    options: &LineOptions,
    direct: &DirectFrames,
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut buf = Vec::new();
    loop {
        match read_line(&mut reader, &mut buf, options.max_line).await? {
            Line::Eof => return Ok(()),
            Line::TooLong(n) => {
                session.send_error(None, &too_long(n, options.max_line)).await;
            }
            Line::Frame => {
                let text = match std::str::from_utf8(&buf) {
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
                session.handle_frame_with(text, Some(direct)).await;
            }
        }
    }
}

/// This process's standard input, for the line transport.
///
/// Tokio's own `stdin()` reads on its blocking thread pool: every read is handed to another
/// thread and back, which costs more than parsing and answering the messages it returns. When
/// standard input is a pipe (as when an MCP host starts the server), it is read in non-blocking
/// mode from the runtime's event loop instead; anything else (a terminal, a file, a socket)
/// falls back to `tokio::io::stdin()`. Blocking mode is restored when the reader is dropped.
pub(crate) struct Stdin(StdinKind);

enum StdinKind {
    #[cfg(unix)]
    Pipe(Option<tokio::net::unix::pipe::Receiver>),
    Tokio(tokio::io::Stdin),
}

/// This process's standard output, for the line transport: like [`Stdin`], written in
/// non-blocking mode when it is a pipe of its own.
pub(crate) struct Stdout(StdoutKind);

enum StdoutKind {
    #[cfg(unix)]
    Pipe(Option<tokio::net::unix::pipe::Sender>),
    Tokio(tokio::io::Stdout),
}

/// Standard input and output for [`serve_lines`]. Call within a tokio runtime.
pub(crate) fn stdio() -> (Stdin, Stdout) {
    #[cfg(unix)]
    {
        let stdin = pipes::stdin().map_or_else(|| StdinKind::Tokio(tokio::io::stdin()), |p| StdinKind::Pipe(Some(p)));
        let stdout =
            pipes::stdout().map_or_else(|| StdoutKind::Tokio(tokio::io::stdout()), |p| StdoutKind::Pipe(Some(p)));
        (Stdin(stdin), Stdout(stdout))
    }
    #[cfg(not(unix))]
    {
        (Stdin(StdinKind::Tokio(tokio::io::stdin())), Stdout(StdoutKind::Tokio(tokio::io::stdout())))
    }
}

#[cfg(unix)]
mod pipes {
    use std::fs::File;
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;

    use tokio::net::unix::pipe;

    fn duplicate(fd: impl AsFd) -> Option<File> {
        fd.as_fd().try_clone_to_owned().ok().map(File::from)
    }

    pub(super) fn stdin() -> Option<pipe::Receiver> {
        pipe::Receiver::from_file(duplicate(std::io::stdin())?).ok()
    }

    pub(super) fn stdout() -> Option<pipe::Sender> {
        let out = duplicate(std::io::stdout())?;
        // Non-blocking mode belongs to the pipe, not to the descriptor: when stderr writes to the
        // same pipe (`2>&1`), a log line written while it is full would fail instead of waiting.
        let err = duplicate(std::io::stderr()).and_then(|f| f.metadata().ok());
        let shared = match (out.metadata(), err) {
            (Ok(o), Some(e)) => o.dev() == e.dev() && o.ino() == e.ino(),
            (Ok(_), None) => false,
            (Err(_), _) => true,
        };
        if shared {
            return None;
        }
        pipe::Sender::from_file(out).ok()
    }
}

impl AsyncRead for Stdin {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdinKind::Pipe(Some(p)) => Pin::new(p).poll_read(cx, buf),
            #[cfg(unix)]
            StdinKind::Pipe(None) => Poll::Ready(Ok(())),
            StdinKind::Tokio(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(Some(p)) => Pin::new(p).poll_write(cx, buf),
            #[cfg(unix)]
            StdoutKind::Pipe(None) => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            StdoutKind::Tokio(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(Some(p)) => Pin::new(p).poll_flush(cx),
            #[cfg(unix)]
            StdoutKind::Pipe(None) => Poll::Ready(Ok(())),
            StdoutKind::Tokio(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(Some(p)) => Pin::new(p).poll_shutdown(cx),
            #[cfg(unix)]
            StdoutKind::Pipe(None) => Poll::Ready(Ok(())),
            StdoutKind::Tokio(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

// Standard input and output outlive the transport: whoever uses them next expects blocking mode.
impl Drop for Stdin {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let StdinKind::Pipe(p) = &mut self.0
            && let Some(p) = p.take()
        {
            let _ = p.into_blocking_fd();
        }
    }
}

impl Drop for Stdout {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let StdoutKind::Pipe(p) = &mut self.0
            && let Some(p) = p.take()
        {
            let _ = p.into_blocking_fd();
        }
    }
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
                Line::Frame => out.push(String::from_utf8(buf.clone()).unwrap()),
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

    /// Answers each request at once; `notify` first sends a notification about it, `wait`
    /// answers only after yielding once (so from a task of its own).
    struct Answering;

    impl crate::engine::Service for Answering {
        fn handle_request(
            &self,
            request: crate::protocol::Request,
            scope: crate::engine::RequestScope,
        ) -> crate::engine::Handling {
            crate::engine::Handling::future(async move {
                let id = request.id.to_string();
                match request.method.as_str() {
                    "notify" => {
                        let _ = scope.peer.notify("test/before", &serde_json::json!({ "id": id })).await;
                    }
                    "wait" => tokio::task::yield_now().await,
                    _ => {}
                }
                crate::engine::ResultText::serialize(&serde_json::json!({ "id": id }))
                    .map_err(|e| ErrorObject::internal(e.to_string()))
            })
        }

        fn handle_notification(&self, _: crate::protocol::Notification, _: &crate::engine::Peer) {}
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_written_directly_keep_each_request_s_order_and_all_arrive() {
        const N: usize = 1500;
        let (session, outbound) = Session::new(Answering, crate::engine::SessionConfig::default());
        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server);
        let serving = tokio::spawn(serve_lines(session, outbound, read, write, LineOptions::default()));
        let (client_read, mut client_write) = tokio::io::split(client);
        let sending = tokio::spawn(async move {
            let mut batch = String::new();
            for n in 0..N {
                let method = ["notify", "plain", "wait"][n % 3];
                batch.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{n},\"method\":\"{method}\"}}\n"));
                if n % 50 == 49 {
                    client_write.write_all(batch.as_bytes()).await.unwrap();
                    batch.clear();
                }
            }
            client_write.write_all(batch.as_bytes()).await.unwrap();
            client_write
        });
        let mut lines = BufReader::new(client_read).lines();
        let mut notified = std::collections::HashSet::new();
        let mut answered = std::collections::HashSet::new();
        while answered.len() < N {
            let next = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await;
            let Ok(next) = next else {
                let missing: Vec<usize> = (0..N).filter(|n| !answered.contains(&n.to_string())).take(10).collect();
                panic!("{} of {N} answered; missing for example {missing:?}", answered.len());
            };
            let line = next.unwrap().expect("every request is answered");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "test/before" {
                let id = v["params"]["id"].as_str().unwrap().to_owned();
                assert!(!answered.contains(&id), "the notification about {id} came after its answer");
                notified.insert(id);
            } else {
                let id = v["result"]["id"].as_str().unwrap_or_else(|| panic!("not an answer: {line}")).to_owned();
                let n: usize = id.parse().unwrap();
                assert!(
                    !n.is_multiple_of(3) || notified.contains(&id),
                    "request {id} was answered before its notification"
                );
                assert!(answered.insert(id), "answered twice");
            }
        }
        assert_eq!(notified.len(), N / 3);
        // End of input ends the session.
        sending.await.unwrap().shutdown().await.unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(10), serving).await.expect("served").unwrap().unwrap();
    }
}
