//! What a client needs from its transport: to be told the negotiated revision, and to close.
//! The line transport (a child's stdio, any reader/writer pair, an in-process server) lives
//! here; Streamable HTTP is in [`crate::client::http`].

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::process::Child;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::http_headers::ToolHeaders;
use super::service::ClientService;
use crate::engine::{BoxFuture, Outbound, Session};
use crate::transport::{LineOptions, serve_lines};

/// How long a server child process gets to exit after its input closes, before it is killed.
pub(crate) const CHILD_EXIT_GRACE: Duration = Duration::from_secs(5);

/// A running transport, as the client drives it.
pub(crate) trait Connection: Send + Sync + 'static {
    /// `initialize` negotiated `version`; later messages must say so where the transport can.
    fn negotiated(&self, _version: &str) {}

    /// Whether messages are 2026-07-28 requests, whose HTTP headers mirror their body
    /// (with the `x-mcp-header` marks of the tools in `headers`), or not (`None`).
    fn era_2026(&self, _headers: Option<Arc<ToolHeaders>>) {}

    /// Whether the transport is busy authorizing (an OAuth flow waiting for the person): time
    /// spent there does not count against [`ProtocolEra::Auto`](super::ProtocolEra::Auto)'s probe.
    fn authorizing(&self) -> bool {
        false
    }

    /// Ends the connection: pending requests fail, the server is told where the transport can,
    /// and whatever the transport started (a child process) is stopped.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// Resolves once the connection has ended, whoever ended it.
    fn ended(&self) -> CancellationToken;

    /// Stops everything at once, without waiting (the client was dropped unclosed).
    fn abort(&self);
}

/// A reader that reports end of file as soon as `stop` is cancelled, so the line transport
/// ends its session as if the server had closed its output.
pub(crate) struct StopReader<R> {
    inner: R,
    stop: Pin<Box<WaitForCancellationFutureOwned>>,
    stopped: bool,
}

impl<R> StopReader<R> {
    pub(crate) fn new(inner: R, stop: CancellationToken) -> Self {
        StopReader { inner, stop: Box::pin(stop.cancelled_owned()), stopped: false }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for StopReader<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.stopped || this.stop.as_mut().poll(cx).is_ready() {
            this.stopped = true;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

/// A session served over a reader/writer pair, one JSON message per line.
pub(crate) struct LineConnection {
    stop: CancellationToken,
    ended: CancellationToken,
    task: Mutex<Option<JoinHandle<()>>>,
    child: Mutex<Option<Child>>,
    /// A task serving the other end in this process, awaited on close.
    server: Mutex<Option<JoinHandle<()>>>,
}

impl LineConnection {
    /// Starts serving `session` over `reader`/`writer`.
    pub(crate) fn start<R, W>(
        session: Session<ClientService>,
        outbound: mpsc::Receiver<Outbound>,
        reader: R,
        writer: W,
        options: LineOptions,
    ) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let stop = CancellationToken::new();
        let ended = CancellationToken::new();
        let reader = StopReader::new(reader, stop.clone());
        let done = ended.clone();
        let task = tokio::spawn(async move {
            if let Err(e) = serve_lines(session, outbound, reader, writer, options).await {
                tracing::debug!(error = %e, "the connection to the server failed");
            }
            done.cancel();
        });
        LineConnection { stop, ended, task: Mutex::new(Some(task)), child: Mutex::new(None), server: Mutex::new(None) }
    }

    /// Owns the server's child process: stopped on close.
    pub(crate) fn with_child(self, child: Child) -> Self {
        if let Ok(mut c) = self.child.lock() {
            *c = Some(child);
        }
        self
    }

    /// Owns the task serving the other end in this process: awaited on close.
    pub(crate) fn with_server_task(self, task: JoinHandle<()>) -> Self {
        if let Ok(mut s) = self.server.lock() {
            *s = Some(task);
        }
        self
    }
}

impl Connection for LineConnection {
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.stop.cancel();
            let task = self.task.lock().ok().and_then(|mut t| t.take());
            if let Some(task) = task {
                // Ends once the session has shut down and the writer is flushed and dropped:
                // the server sees the end of its input.
                let _ = task.await;
            }
            let child = self.child.lock().ok().and_then(|mut c| c.take());
            if let Some(mut child) = child {
                match tokio::time::timeout(CHILD_EXIT_GRACE, child.wait()).await {
                    Ok(Ok(status)) => tracing::debug!(%status, "the server process exited"),
                    Ok(Err(e)) => tracing::debug!(error = %e, "waiting for the server process failed"),
                    Err(_) => {
                        tracing::warn!("the server process did not exit after its input closed; killing it");
                        let _ = child.kill().await;
                    }
                }
            }
            let server = self.server.lock().ok().and_then(|mut s| s.take());
            if let Some(server) = server
                && tokio::time::timeout(CHILD_EXIT_GRACE, server).await.is_err()
            {
                tracing::warn!("the in-process server did not end after its input closed");
            }
        })
    }

    fn ended(&self) -> CancellationToken {
        self.ended.clone()
    }

    fn abort(&self) {
        self.stop.cancel();
        // A child configured with `kill_on_drop` is killed when dropped here.
        if let Ok(mut c) = self.child.lock() {
            c.take();
        }
    }
}
