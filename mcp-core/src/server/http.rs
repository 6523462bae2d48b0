//! The server behind the Streamable HTTP transport.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use serde_json::value::RawValue;

use super::session::ServerSession;
use super::{Server, ServerInner, admission};
use crate::engine::{Handling, RequestScope, Service, SessionConfig};
use crate::protocol::Request;
use crate::protocol::methods::MethodInfo;
use crate::protocol::view::{Meta2026, Meta2026Text, NO_PARAMS, ParamsView};
use crate::transport::http::{Admission, HttpConfig, HttpService, Incoming, Opening, Refusal, Served, StreamableHttp};

impl HttpService for Server {
    fn session_config(&self) -> &SessionConfig {
        &self.inner.session
    }

    fn open(&self, opening: Opening<'_>, principal: Option<String>) -> Box<dyn Service> {
        let server = self.inner.clone();
        let session = match opening {
            Opening::Initialize => ServerSession::for_principal(server, principal),
            Opening::Preinitialized(version) => ServerSession::preinitialized(server, principal, version),
            Opening::Restore(snapshot) => ServerSession::restore(server, principal, snapshot),
        };
        Box::new(session.over_http())
    }

    fn serve(&self, incoming: Incoming, admission: Admission<'_>) -> Served {
        match incoming {
            Incoming::ToSession(request) => match admit_2025(&self.inner, &request, &admission) {
                Ok(()) => Served::ToSession(request),
                Err(refusal) => Served::Refused(refusal),
            },
            Incoming::Alone { request, method, view, principal, scope } => {
                match serve_2026(&self.inner, request, method, view, principal, &admission, scope) {
                    Ok(handling) => Served::Handling(handling),
                    Err(refusal) => Served::Refused(refusal),
                }
            }
        }
    }

    fn join(&self, bus: &Arc<crate::transport::http::deployment::bus::DeploymentBus>) {
        self.join_deployment(bus);
    }

    fn running_tasks(&self) -> usize {
        self.inner.tasks.running()
    }

    fn cancel_tasks(&self) {
        self.inner.tasks.cancel_running();
    }

    #[cfg(feature = "otel")]
    fn telemetry(&self) -> Option<&crate::telemetry::Telemetry> {
        self.inner.telemetry.as_ref()
    }
}

/// Admits a 2025-era request on its way to its session: a call of something needing scopes
/// its token lacks is refused.
fn admit_2025(server: &ServerInner, request: &Request, admission: &Admission<'_>) -> Result<(), Refusal> {
    if admission.identity.identity.is_none() {
        return Ok(());
    }
    let Some(method) = request.method.info().filter(|m| m.target.is_some()) else { return Ok(()) };
    let text = request.params.as_deref().map_or(NO_PARAMS, RawValue::get);
    let view = ParamsView::read(text, Some(method)).unwrap_or_default();
    admission::scopes(server, admission.identity, admission.endpoint_scopes, method, view.target(text))
}

/// Admits a 2026-era request (its `_meta`, its token's scopes, its headers, in that order)
/// and serves it.
fn serve_2026(
    server: &Arc<ServerInner>,
    request: Request,
    method: Option<&'static MethodInfo>,
    view: ParamsView,
    principal: Option<String>,
    admission: &Admission<'_>,
    scope: RequestScope,
) -> Result<Handling, Refusal> {
    let text = request.params.as_deref().map_or(NO_PARAMS, RawValue::get);
    let meta_text = ParamsView::text(text, &view.meta)
        .map_or(Ok(Meta2026Text::default()), Meta2026Text::read)
        .map_err(Refusal::Malformed)?;
    if let Some(method) = method {
        admission::scopes(server, admission.identity, admission.endpoint_scopes, method, view.target(text))?;
    }
    if let Some(http) = &scope.http {
        admission::headers_2026(server, &http.headers, &request, method, text, &view, &meta_text)
            .map_err(Refusal::Malformed)?;
    }
    let meta = Meta2026::read(&meta_text).map_err(Refusal::Malformed)?;
    let auth = (admission.identity.identity.clone(), admission.identity.hide_unauthorized);
    Ok(super::observe::observe(server, request, scope, None, Some(view.clone()), |request, scope, _| {
        super::era_2026::handle_read(server, principal, auth, request, view, meta, scope)
    }))
}

impl StreamableHttp {
    /// The endpoint for `server`. Call from within a tokio runtime (a task expires idle sessions).
    pub fn new(server: &Server, config: HttpConfig) -> Self {
        StreamableHttp::for_service(Arc::new(server.clone()), config)
    }
}

impl Server {
    /// The Streamable HTTP endpoint of this server, to mount in an application.
    pub fn streamable_http(&self, config: HttpConfig) -> StreamableHttp {
        StreamableHttp::new(self, config)
    }

    /// Serves Streamable HTTP at `http://{addr}/mcp` (`https://` when the configuration has a
    /// TLS certificate, feature `http-tls`) until Ctrl-C. On a loopback address only loopback
    /// `Host`s are accepted; on any other, `Host` is not checked unless configured.
    pub async fn serve_http(&self, addr: SocketAddr, config: Option<HttpConfig>) -> io::Result<()> {
        let config = config.unwrap_or_else(|| {
            let default = HttpConfig::default();
            if addr.ip().is_loopback() { default } else { default.disable_host_checks() }
        });
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let scheme = if config.is_tls() { "https" } else { "http" };
        tracing::info!(address = %listener.local_addr()?, scheme, "serving MCP over Streamable HTTP at /mcp");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        self.streamable_http(config).serve(listener, shutdown).await
    }

    /// Serves Streamable HTTP at `http://127.0.0.1:PORT/mcp` until Ctrl-C when the program was
    /// started with `--port PORT` (or `--port=PORT`) or the environment variable `PORT` is set
    /// (`0` picks a free port; the address is logged), and one session over stdio
    /// ([`serve_stdio`](Self::serve_stdio)) otherwise. Other command-line arguments are left
    /// to the program.
    ///
    /// One `main` then serves both a host that starts the program and a client that connects
    /// to it:
    ///
    /// ```no_run
    /// use typed_mcp::prelude::*;
    ///
    /// /// Returns the text it is given.
    /// #[tool]
    /// fn echo(text: String) -> String {
    ///     text
    /// }
    ///
    /// #[tokio::main]
    /// async fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let server = Server::builder("echo", "1.0.0").tools(tools![echo]).build()?;
    ///     // `echo` speaks stdio; `echo --port 8080` serves http://127.0.0.1:8080/mcp.
    ///     server.serve_stdio_or_http().await?;
    ///     Ok(())
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// A port that is not a number ([`io::ErrorKind::InvalidInput`]) or cannot be listened on
    /// (most often [`io::ErrorKind::AddrInUse`]) is an error whose message names the port and
    /// `--port`; so is any error of the transport.
    pub async fn serve_stdio_or_http(&self) -> io::Result<()> {
        let Some(port) = port_option(std::env::args().skip(1), std::env::var("PORT").ok())? else {
            return self.serve_stdio().await;
        };
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await.map_err(|e| {
            let hint = if e.kind() == io::ErrorKind::AddrInUse {
                " (choose another with --port; 0 picks a free one)"
            } else {
                ""
            };
            io::Error::new(e.kind(), format!("cannot listen on 127.0.0.1:{port} (--port / PORT): {e}{hint}"))
        })?;
        tracing::info!(address = %listener.local_addr()?, "serving MCP over Streamable HTTP at /mcp");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        self.streamable_http(HttpConfig::default()).serve(listener, shutdown).await
    }
}

/// The port of `--port N` or `--port=N` among `args`, else of `env` (the value of `PORT`); an
/// empty `PORT` counts as unset.
fn port_option(args: impl IntoIterator<Item = String>, env: Option<String>) -> io::Result<Option<u16>> {
    let mut args = args.into_iter();
    let mut given = None;
    while let Some(arg) = args.next() {
        if arg == "--port" {
            given = Some(args.next().unwrap_or_default());
            break;
        }
        if let Some(value) = arg.strip_prefix("--port=") {
            given = Some(value.to_owned());
            break;
        }
    }
    let Some(value) = given.or(env.filter(|v| !v.is_empty())) else { return Ok(None) };
    value.trim().parse().map(Some).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("--port / PORT: `{value}` is not a port number"))
    })
}

#[cfg(test)]
mod tests {
    use super::port_option;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn the_port_comes_from_the_flag_then_the_environment() {
        assert_eq!(port_option(args(&["--port", "8080"]), Some("9000".into())).unwrap(), Some(8080));
        assert_eq!(port_option(args(&["--redis", "x", "--port=0"]), None).unwrap(), Some(0));
        assert_eq!(port_option(args(&["--url-port", "7"]), Some("9000".into())).unwrap(), Some(9000));
        assert_eq!(port_option(args(&[]), Some(String::new())).unwrap(), None);
        assert_eq!(port_option(args(&["--ports", "1"]), None).unwrap(), None);
    }

    #[test]
    fn a_port_that_is_not_a_number_is_an_error_naming_the_flag() {
        for (words, env) in [(&["--port", "http"][..], None), (&["--port"][..], None), (&[][..], Some("-1"))] {
            let error = port_option(args(words), env.map(str::to_owned)).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
            assert!(error.to_string().contains("--port"), "{error}");
        }
    }
}
