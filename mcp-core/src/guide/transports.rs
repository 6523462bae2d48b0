//! # A transport of your own
//!
//! The SDK serves stdio and Streamable HTTP. Anything else that can carry JSON-RPC between a
//! client and your server is a transport you write outside this crate, with one of two seams:
//!
//! | your channel carries | use | you write |
//! | --- | --- | --- |
//! | bytes (a Unix socket, a named pipe, a serial line, a TLS stream) | [`Server::serve_io`](crate::Server::serve_io) | accepting connections; the SDK frames messages one per line |
//! | whole messages (a WebSocket, a message queue, length-prefixed frames) | [`Server::connect`](crate::Server::connect) | moving each message in and out |
//!
//! Either way each connection is one session of the 2025-11-25 era (the client opens it with
//! `initialize`), with everything a session has: elicitation, sampling, progress,
//! cancellation, logging. The transport only moves text; it never decodes a message.
//!
//! ## Bytes: a Unix socket
//!
//! Each accepted connection is served by [`serve_io`](crate::Server::serve_io), which reads one
//! JSON message per line and writes the session's messages the same way, until the client
//! closes its end. Here the client is a few lines of the same program, which sends
//! `initialize` and reads the answer:
//!
//! ```
//! # #[cfg(unix)]
//! # mod unix {
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//! use tokio::net::{UnixListener, UnixStream};
//! use typed_mcp::prelude::*;
//!
//! /// Adds two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! /// Serves `server` on the socket `listener` listens on: one session per connection.
//! async fn serve_unix(server: Server, listener: UnixListener) -> std::io::Result<()> {
//!     loop {
//!         let (stream, _) = listener.accept().await?;
//!         let server = server.clone();
//!         tokio::spawn(async move {
//!             let (reader, writer) = stream.into_split();
//!             if let Err(e) = server.serve_io(reader, writer).await {
//!                 eprintln!("a session ended with an error: {e}");
//!             }
//!         });
//!     }
//! }
//!
//! # pub async fn run() {
//! let dir = std::env::temp_dir().join(format!("mcp-guide-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("calculator.sock");
//! let _ = std::fs::remove_file(&path);
//! let server = Server::builder("calculator", "1.0.0").tools(tools![add]).build().unwrap();
//! tokio::spawn(serve_unix(server, UnixListener::bind(&path).unwrap()));
//!
//! // A client: one JSON-RPC message per line each way.
//! let (reader, mut writer) = UnixStream::connect(&path).await.unwrap().into_split();
//! let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"guide","version":"1"}}}"#;
//! writer.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();
//! let mut lines = BufReader::new(reader).lines();
//! let answer: serde_json::Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
//! assert_eq!(answer["result"]["serverInfo"]["name"], "calculator");
//! # let _ = std::fs::remove_file(&path);
//! # }
//! # }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # #[cfg(unix)]
//! # unix::run().await;
//! # }
//! ```
//!
//! ## Messages: length-prefixed frames over TCP
//!
//! A channel that already delimits messages needs no line framing: open a session with
//! [`Server::connect`](crate::Server::connect), give each message the peer sent to
//! [`Connection::receive`](crate::server::Connection::receive), and deliver each one
//! [`Outgoing::next`](crate::server::Outgoing::next) gives you, in order, until it gives `None`.
//! Keep the two loops independent (here: two tasks): a request whose handler asks the user a
//! question waits for an answer that comes in through `receive`, while its question goes out
//! through `next`. When the peer goes away, [`Connection::close`](crate::server::Connection::close)
//! cancels what is still running.
//!
//! This transport sends each message as a 4-byte big-endian length and the JSON text. A
//! WebSocket transport has the same shape: a text message in is one `receive`, each message
//! out is one text message (and `OutgoingMessage::related` tells which request it belongs to,
//! for a transport that answers each request on a channel of its own).
//!
//! ```
//! use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
//! use tokio::net::{TcpListener, TcpStream};
//! use typed_mcp::prelude::*;
//!
//! /// The longest message this transport accepts; the session enforces the server's own limit too.
//! const MAX_FRAME: u32 = 4 * 1024 * 1024;
//!
//! async fn read_frame(reader: &mut (impl AsyncRead + Unpin)) -> std::io::Result<Option<String>> {
//!     let length = match reader.read_u32().await {
//!         Ok(length) => length,
//!         Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
//!         Err(e) => return Err(e),
//!     };
//!     if length > MAX_FRAME {
//!         return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "frame too long"));
//!     }
//!     let mut text = vec![0; length as usize];
//!     reader.read_exact(&mut text).await?;
//!     String::from_utf8(text).map(Some).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
//! }
//!
//! async fn write_frame(writer: &mut (impl AsyncWrite + Unpin), text: &str) -> std::io::Result<()> {
//!     let length = u32::try_from(text.len()).map_err(std::io::Error::other)?;
//!     writer.write_u32(length).await?;
//!     writer.write_all(text.as_bytes()).await?;
//!     writer.flush().await
//! }
//!
//! /// Serves one session of `server` over `stream`.
//! async fn serve_framed(server: Server, stream: TcpStream) {
//!     let (mut reader, mut writer) = stream.into_split();
//!     let (connection, mut outgoing) = server.connect();
//!     // Out: every message the session sends, in order, until it ends.
//!     let out = tokio::spawn(async move {
//!         while let Some(message) = outgoing.next().await {
//!             if write_frame(&mut writer, &message.text).await.is_err() {
//!                 break;
//!             }
//!         }
//!     });
//!     // In: every message the peer sends, until it closes its end (or sends garbage).
//!     while let Ok(Some(text)) = read_frame(&mut reader).await {
//!         connection.receive(&text).await;
//!     }
//!     connection.close().await;
//!     let _ = out.await;
//! }
//!
//! /// Adds two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("calculator", "1.0.0").tools(tools![add]).build().unwrap();
//! let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let address = listener.local_addr().unwrap();
//! tokio::spawn(async move {
//!     while let Ok((stream, _)) = listener.accept().await {
//!         tokio::spawn(serve_framed(server.clone(), stream));
//!     }
//! });
//!
//! // A client speaking the same framing: initialize, then call `add`.
//! let mut client = TcpStream::connect(address).await.unwrap();
//! for message in [
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"guide","version":"1"}}}"#,
//!     r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}"#,
//! ] {
//!     write_frame(&mut client, message).await.unwrap();
//! }
//! let mut answers = Vec::new();
//! while answers.len() < 2 {
//!     let text = read_frame(&mut client).await.unwrap().expect("an answer");
//!     answers.push(serde_json::from_str::<serde_json::Value>(&text).unwrap());
//! }
//! assert_eq!(answers[0]["result"]["serverInfo"]["name"], "calculator");
//! assert_eq!(answers[1]["result"]["content"][0]["text"], "42");
//! # }
//! ```
//!
//! ## What the SDK does for you, and what it does not
//!
//! - A malformed message, or one over the server's limit
//!   ([`ServerBuilder::max_message_size`](crate::ServerBuilder::max_message_size)), is answered
//!   with the JSON-RPC error the protocol says, and the session goes on.
//! - `receive` waits only while the outgoing queue is full: a peer that stops reading slows its
//!   own session down, and nothing is buffered without bound.
//! - Authentication is the transport's: these seams serve whoever connects. Put the check in
//!   front (a Unix socket's file permissions or peer credentials, a WebSocket's upgrade
//!   request), as the HTTP transport does with its resource server
//!   ([Protecting an HTTP server](super::authorization)).
//! - The 2026-07-28 era, requests without `initialize`, is served by Streamable HTTP;
//!   a session here is always of the 2025-11-25 era.
