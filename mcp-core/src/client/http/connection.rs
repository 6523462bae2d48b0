//! The connection over Streamable HTTP: started with its settings and OAuth, told the revision
//! and era, and closed (the session deleted with `DELETE`) or dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use reqwest::StatusCode;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::config::HttpClientConfig;
use super::posting::pump;
use super::shared::Shared;
use crate::client::ClientError;
use crate::client::connection::Connection;
use crate::client::http_headers::ToolHeaders;
use crate::client::oauth::{OAuth, OAuthLogin};
use crate::client::service::ClientService;
use crate::engine::{BoxFuture, Outbound, Session};

/// How long closing waits for the server to acknowledge `DELETE`.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

/// A client session over Streamable HTTP.
pub(crate) struct HttpConnection {
    shared: Arc<Shared>,
    pump: Mutex<Option<JoinHandle<()>>>,
    closing: AtomicBool,
}

impl HttpConnection {
    /// Starts delivering the session's messages to `url`.
    pub(crate) fn start(
        session: Session<ClientService>,
        outbound: mpsc::Receiver<Outbound>,
        url: &str,
        config: HttpClientConfig,
        oauth: Option<OAuth>,
    ) -> Result<Self, ClientError> {
        let url = reqwest::Url::parse(url).map_err(|e| ClientError::Transport(format!("invalid URL {url:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ClientError::Transport(format!("{url} is not an http:// or https:// URL")));
        }
        let http = config.build_client()?;
        if oauth.is_some() && config.headers.contains_key(reqwest::header::AUTHORIZATION) {
            return Err(ClientError::Transport(
                "an `Authorization` header is configured and OAuth is enabled: use one or the other".into(),
            ));
        }
        let max_step_ups = oauth.as_ref().map_or(0, |o| o.max_step_ups);
        let oauth = match oauth {
            Some(o) => {
                o.check_issuer().map_err(ClientError::Authorization)?;
                let flow_http = config.oauth_client(&o, &url)?.unwrap_or_else(|| http.clone());
                Some(OAuthLogin::new(o, flow_http, url.clone()))
            }
            None => None,
        };
        let shared = Arc::new(Shared {
            http,
            url,
            config,
            session: Arc::new(session),
            session_id: RwLock::default(),
            protocol_version: RwLock::default(),
            era_2026: RwLock::default(),
            open_requests: Mutex::default(),
            stop: CancellationToken::new(),
            ended: CancellationToken::new(),
            tasks: TaskTracker::new(),
            standalone_opened: AtomicBool::new(false),
            oauth,
            max_step_ups,
        });
        let pump = tokio::spawn(pump(shared.clone(), outbound));
        Ok(HttpConnection { shared, pump: Mutex::new(Some(pump)), closing: AtomicBool::new(false) })
    }
}

impl Connection for HttpConnection {
    fn negotiated(&self, version: &str) {
        if let Ok(mut v) = self.shared.protocol_version.write() {
            *v = Some(version.to_owned());
        }
    }

    fn era_2026(&self, headers: Option<Arc<ToolHeaders>>) {
        if let Ok(mut s) = self.shared.era_2026.write() {
            *s = headers;
        }
    }

    fn authorizing(&self) -> bool {
        self.shared.oauth.as_ref().is_some_and(OAuthLogin::authorizing)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.closing.swap(true, Ordering::AcqRel) {
                self.shared.ended.cancelled().await;
                return;
            }
            let shared = &self.shared;
            shared.stop.cancel();
            shared.delete_session().await;
            shared.session.shutdown().await;
            shared.tasks.close();
            shared.tasks.wait().await;
            let pump = self.pump.lock().ok().and_then(|mut p| p.take());
            if let Some(pump) = pump {
                let _ = pump.await;
            }
            shared.ended.cancel();
        })
    }

    fn ended(&self) -> CancellationToken {
        self.shared.ended.clone()
    }

    fn abort(&self) {
        if self.closing.swap(true, Ordering::AcqRel) {
            return;
        }
        self.shared.stop.cancel();
        self.shared.ended.cancel();
        // Best effort: tell the server, if there is a runtime to do it on.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let shared = self.shared.clone();
            runtime.spawn(async move { shared.delete_session().await });
        }
    }
}

impl Shared {
    async fn delete_session(&self) {
        if !self.has_session_id() {
            return;
        }
        let mut request = self.with_session(self.http.delete(self.url.clone()));
        if let Some(oauth) = &self.oauth
            && let Some(token) = oauth.current()
        {
            request = oauth.authorize_request(request, &token, "DELETE");
        }
        let request = request.send();
        match tokio::time::timeout(DELETE_TIMEOUT, request).await {
            Ok(Ok(r)) if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED => {}
            Ok(Ok(r)) => tracing::debug!(status = %r.status(), "the server refused to end the session"),
            Ok(Err(e)) => tracing::debug!(error = %e, "could not end the session"),
            Err(_) => tracing::debug!("the server did not answer DELETE in time"),
        }
    }
}
