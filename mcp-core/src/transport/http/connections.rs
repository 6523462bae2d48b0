//! Accepting connections: HTTP/1 by hyper, over TLS when configured, with a limit on how long a
//! request's headers may take, and a graceful end.

use std::io;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How accepted connections are served.
pub(crate) struct Accept {
    /// TLS, when the endpoint serves `https://`.
    #[cfg(feature = "http-tls")]
    pub(crate) tls: Option<tokio_rustls::TlsAcceptor>,
    /// How long a request's headers (and the TLS handshake) may take.
    pub(crate) header_timeout: Duration,
}

/// Accepts connections until `closing`, each served by hyper's HTTP/1 with a limit on the time
/// its request headers may take (over TLS when configured, the handshake taking no longer);
/// then waits a little for the open ones to finish.
pub(crate) async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    accept: Accept,
    closing: CancellationToken,
) -> io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let header_timeout = accept.header_timeout;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = closing.cancelled() => break,
        };
        let (stream, remote) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: wait rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        // Each request carries the address it came from (`ConnectInfo`, as axum's own server
        // sets it): handlers and middleware read it, and spans record it.
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(axum::extract::ConnectInfo(remote));
            tower_service::Service::call(&mut router.clone(), request)
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
        #[cfg(feature = "http-tls")]
        if let Some(acceptor) = &accept.tls {
            // The handshake runs in the connection's task, so that a slow client holds up no
            // other; the watcher keeps shutdown waiting for the connection once it is served.
            let (acceptor, watcher, closing) = (acceptor.clone(), graceful.watcher(), closing.clone());
            tokio::spawn(async move {
                let handshake = tokio::time::timeout(header_timeout, acceptor.accept(stream));
                let stream = tokio::select! {
                    done = handshake => match done {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(e)) => return tracing::debug!(error = %e, "a TLS handshake failed"),
                        Err(_) => return tracing::debug!("a TLS handshake took too long"),
                    },
                    () = closing.cancelled() => return,
                };
                let connection = watcher.watch(builder.serve_connection(TokioIo::new(stream), service));
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "an HTTPS connection ended with an error");
                }
            });
            continue;
        }
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "an HTTP connection ended with an error");
            }
        });
    }
    drop(listener);
    // Sessions are closed by now, so their streams end; a connection still busy after this
    // is dropped with the runtime.
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
    Ok(())
}
