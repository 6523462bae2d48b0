//! The server behind the Streamable HTTP transport.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use super::Server;
use super::session::ServerSession;
use crate::engine::{Service, SessionConfig};
use crate::tool::ToolDef;
use tokio_util::sync::CancellationToken;

use crate::transport::http::{Backplane, HttpConfig, HttpService, Opening, StreamableHttp};

impl HttpService for Server {
    fn session_config(&self) -> &SessionConfig {
        &self.inner.session
    }

    fn open(
        &self,
        opening: Opening<'_>,
        principal: Option<String>,
        auth: Arc<crate::auth::AuthSlot>,
    ) -> Box<dyn Service> {
        let server = self.inner.clone();
        let session = match opening {
            Opening::Initialize => ServerSession::for_principal(server, principal),
            Opening::Preinitialized(version) => ServerSession::preinitialized(server, principal, version),
            Opening::Request2026 => ServerSession::only_2026(server, principal),
            Opening::Restore(snapshot) => ServerSession::restore(server, principal, snapshot),
        };
        Box::new(session.with_auth(auth))
    }

    fn required_scopes(&self, request: &crate::protocol::Request) -> Arc<[String]> {
        super::scopes::required(&self.inner, request)
    }

    fn tool(&self, name: &str) -> Option<ToolDef> {
        self.inner.tools.get(name)
    }

    fn join(&self, backplane: &Backplane, closing: CancellationToken) {
        super::task_routing::join(&self.inner, backplane, closing.clone());
        self.join_deployment(backplane, closing);
    }
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
}
