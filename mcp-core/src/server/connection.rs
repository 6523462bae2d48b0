//! The seam for transports of one's own: one session of a [`Server`] over any channel that
//! carries whole JSON-RPC messages (a WebSocket, a message queue, length-prefixed frames).
//!
//! [`Server::connect`] opens a session and returns its two ends: the [`Connection`], which
//! takes each message the peer sent ([`Connection::receive`]), and the [`Outgoing`] messages
//! the session sends, which the transport delivers in order ([`Outgoing::next`]). The
//! transport only moves text; the session does the rest (decoding, answering, elicitation,
//! cancellation), exactly as over stdio. A channel of bytes rather than messages (a Unix
//! socket, a pipe) needs none of this: [`Server::serve_io`] frames it one message per line.
//! The guide's [`transports`](crate::guide::transports) chapter builds one outside the crate.

use tokio::sync::mpsc;

use super::{Server, session};
use crate::engine::{Outbound, OutboundKind, Session};
use crate::protocol::RequestId;

/// The receiving end of one session opened by [`Server::connect`]: give it each message the
/// peer sent. Dropping it ends the session (as [`Connection::close`] does, without waiting).
pub struct Connection {
    session: Session<session::ServerSession>,
    max_message: usize,
}

/// The messages one session sends to its peer, in the order they must be delivered.
pub struct Outgoing {
    queue: mpsc::Receiver<Outbound>,
}

/// One message a session sends: its JSON text, and what it is.
#[derive(Debug)]
pub struct OutgoingMessage {
    /// The JSON-RPC message, as text (no trailing newline).
    pub text: String,
    /// The peer's request this message belongs to, if any: its response, or what the session
    /// sent while handling it (progress, a question to the user). A transport with a channel
    /// per request (as Streamable HTTP has) routes by it; others ignore it.
    pub related: Option<RequestId>,
    /// Whether it is a response to the peer, a request of the server's, or a notification.
    pub kind: OutgoingKind,
}

/// What an [`OutgoingMessage`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutgoingKind {
    /// A response to one of the peer's requests.
    Response,
    /// A request of the server's (`elicitation/create`, `sampling/createMessage`, `ping`, …).
    Request,
    /// A notification of the server's.
    Notification,
}

impl Server {
    /// Opens one session served over a transport of the caller's: see the
    /// [module documentation](crate::server::connection) and the guide's
    /// [`transports`](crate::guide::transports) chapter.
    ///
    /// The session is a 2025-era one (the client starts it with `initialize`), as over stdio.
    /// Feed it with [`Connection::receive`] and deliver what [`Outgoing::next`] gives until it
    /// gives `None`; call [`Connection::close`] when the peer goes away.
    pub fn connect(&self) -> (Connection, Outgoing) {
        let (session, queue) =
            Session::new(session::ServerSession::new(self.inner.clone()), self.inner.session.clone());
        (Connection { session, max_message: self.inner.line.max_line }, Outgoing { queue })
    }
}

impl Connection {
    /// Handles one message the peer sent (its JSON text). A request is answered through
    /// [`Outgoing`], at once or when its handler finishes; this waits only while the outgoing
    /// queue is full (the peer is not reading). A message that is not valid JSON-RPC, or is
    /// longer than the server's limit ([`ServerBuilder::max_message_size`](super::ServerBuilder::max_message_size)),
    /// is answered with the error the protocol says, and the session goes on.
    pub async fn receive(&self, message: &str) {
        if message.len() > self.max_message {
            let error = crate::transport::stdio::too_long(message.len(), self.max_message);
            self.session.send_error(None, &error).await;
            return;
        }
        self.session.handle_frame(message).await;
    }

    /// How many of the peer's requests are being handled now.
    pub fn requests_in_flight(&self) -> usize {
        self.session.in_flight_count()
    }

    /// Ends the session: what waits on the peer fails, handlers still running are cancelled
    /// and waited for (a few seconds at most), and [`Outgoing::next`] gives `None` once what
    /// was queued before has been taken.
    pub async fn close(self) {
        self.session.shutdown().await;
    }
}

impl Outgoing {
    /// The next message to deliver; `None` once the session has ended and everything it sent
    /// was taken.
    pub async fn next(&mut self) -> Option<OutgoingMessage> {
        let out = self.queue.recv().await?;
        let kind = match out.kind {
            OutboundKind::Response => OutgoingKind::Response,
            OutboundKind::Request => OutgoingKind::Request,
            OutboundKind::Notification => OutgoingKind::Notification,
        };
        Some(OutgoingMessage { text: out.frame, related: out.related, kind })
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("requests_in_flight", &self.requests_in_flight()).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outgoing").finish_non_exhaustive()
    }
}
