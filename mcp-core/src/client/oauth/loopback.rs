//! The redirect for command-line programs: a one-shot listener on the loopback interface.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

use super::{Authorizer, OAuthError};
use crate::engine::BoxFuture;

/// The path the redirect comes back to.
const CALLBACK_PATH: &str = "/callback";
/// The most a browser's request head may take.
const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How the person is shown the authorization URL.
type Opener = Arc<dyn Fn(&str) + Send + Sync>;

/// An [`Authorizer`] for command-line programs (RFC 8252 section 7.3): it listens on
/// `127.0.0.1` on a port the system picks, has the person open the authorization URL (by
/// default it prints it to stderr; [`open_browser`](Self::open_browser) launches the browser,
/// [`on_open`](Self::on_open) does anything else),
/// and waits for the browser to come back to `http://127.0.0.1:<port>/callback`.
///
/// Requests to other paths, and redirects whose `state` is not the one of the pending
/// authorization, are answered 404/400 and ignored: only the real redirect ends the wait.
///
/// ```no_run
/// use typed_mcp::client::Client;
/// use typed_mcp::client::oauth::{LoopbackAuthorizer, OAuth};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let authorizer = LoopbackAuthorizer::bind().await?;
/// let client = Client::builder("my-app", "1.0.0")
///     .oauth(OAuth::new(authorizer).client_name("My app"))
///     .connect_http("https://example.com/mcp")
///     .await?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
pub struct LoopbackAuthorizer {
    listener: Arc<Mutex<TcpListener>>,
    port: u16,
    opener: Opener,
    timeout: Duration,
}

impl fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackAuthorizer").field("port", &self.port).field("timeout", &self.timeout).finish()
    }
}

impl LoopbackAuthorizer {
    /// Listens on `127.0.0.1` on a free port.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackAuthorizer {
            listener: Arc::new(Mutex::new(listener)),
            port,
            opener: Arc::new(|url| eprintln!("Open this address in your browser to authorize:\n\n    {url}\n")),
            timeout: Duration::from_secs(5 * 60),
        })
    }

    /// Shows the authorization URL with `open` (for example by launching a browser) instead of
    /// printing it.
    pub fn on_open(mut self, open: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.opener = Arc::new(open);
        self
    }

    /// Opens the authorization URL in the system's browser (`xdg-open` on Linux and the BSDs,
    /// `open` on macOS, the URL handler on Windows), and prints it as well, for when no browser
    /// opens. Only `http(s)://` URLs are handed to the system; the URL is passed as an argument,
    /// never through a shell.
    pub fn open_browser(self) -> Self {
        self.on_open(|url| {
            eprintln!("Opening your browser to authorize; if it does not open, visit:\n\n    {url}\n");
            if let Err(e) = launch_browser(url) {
                tracing::debug!(error = %e, "could not open a browser");
            }
        })
    }

    /// How long to wait for the redirect (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Waits for the request to the callback path carrying `state`, answering the others.
    /// Connections are served side by side: one that stalls does not hold up the redirect.
    async fn wait(&self, state: Option<String>) -> Result<String, OAuthError> {
        let listener = self.listener.lock().await;
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, _) = accepted
                        .map_err(|e| OAuthError::Callback(format!("the loopback listener failed: {e}")))?;
                    connections.spawn(serve(stream, self.port, state.clone()));
                }
                Some(served) = connections.join_next() => match served {
                    Ok(Ok(Some(redirect))) => return Ok(redirect),
                    Ok(Ok(None)) => {}
                    Ok(Err(e)) => tracing::debug!(error = %e, "a connection to the loopback listener failed"),
                    Err(e) => tracing::debug!(error = %e, "a connection to the loopback listener failed"),
                },
            }
        }
    }
}

/// Answers one connection; the redirect URL when it is the one awaited.
async fn serve(mut stream: TcpStream, port: u16, state: Option<String>) -> std::io::Result<Option<String>> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    let read = tokio::time::timeout(READ_TIMEOUT, async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_HEAD {
            let n = stream.read(&mut buffer).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buffer[..n]);
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
    if !matches!(read, Ok(Ok(()))) {
        return Ok(None);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        respond(&mut stream, "400 Bad Request", "Not an HTTP request.").await?;
        return Ok(None);
    };
    let redirect = format!("http://127.0.0.1:{port}{target}");
    let Ok(url) = reqwest::Url::parse(&redirect) else {
        respond(&mut stream, "400 Bad Request", "Not a valid address.").await?;
        return Ok(None);
    };
    if method != "GET" || url.path() != CALLBACK_PATH {
        respond(&mut stream, "404 Not Found", "Nothing here.").await?;
        return Ok(None);
    }
    let got_state = url.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned());
    if state.is_some() && got_state != state {
        respond(&mut stream, "400 Bad Request", "This answer is not for the pending authorization.").await?;
        return Ok(None);
    }
    respond(&mut stream, "200 OK", "Authorization complete: you can close this window and return to the application.")
        .await?;
    Ok(Some(redirect))
}

/// Hands `url` to the system's URL opener.
fn launch_browser(url: &str) -> std::io::Result<()> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not an http(s) URL"));
    }
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("rundll32");
        c.arg("url.dll,FileProtocolHandler");
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|mut child| {
            // Reaped when the opener exits (it hands the URL over and ends).
            std::thread::spawn(move || child.wait());
        })
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body = format!("<!doctype html><meta charset=utf-8><title>Authorization</title><p>{text}</p>\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

impl Authorizer for LoopbackAuthorizer {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, OAuthError>> {
        Box::pin(async move {
            let state = reqwest::Url::parse(&authorization_url)
                .ok()
                .and_then(|u| u.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()));
            (self.opener)(&authorization_url);
            tokio::time::timeout(self.timeout, self.wait(state))
                .await
                .map_err(|_| OAuthError::Callback("no redirect arrived in time".into()))?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[tokio::test]
    async fn waits_for_the_redirect_with_the_pending_state() {
        let opened = Arc::new(Mutex::new(Vec::new()));
        let seen = opened.clone();
        let authorizer = LoopbackAuthorizer::bind()
            .await
            .unwrap()
            .timeout(Duration::from_secs(20))
            .on_open(move |url| seen.lock().unwrap().push(url.to_owned()));
        let redirect_uri = authorizer.redirect_uri();
        assert_eq!(redirect_uri, format!("http://127.0.0.1:{}/callback", authorizer.port()));
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{}", authorizer.port());
        let browser = async {
            // Wait until the authorizer listens for this flow.
            while opened.lock().unwrap().is_empty() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let other_path = http.get(format!("{base}/favicon.ico")).send().await.unwrap();
            assert_eq!(other_path.status(), 404);
            let forged = http.get(format!("{redirect_uri}?code=evil&state=forged")).send().await.unwrap();
            assert_eq!(forged.status(), 400);
            // Half a request, then nothing: it must not hold the listener.
            let mut stalled = TcpStream::connect(("127.0.0.1", authorizer.port())).await.unwrap();
            stalled.write_all(b"GET /callback?state=s1").await.unwrap();
            let good = http.get(format!("{redirect_uri}?code=c1&state=s1&iss=x")).send().await.unwrap();
            assert_eq!(good.status(), 200);
            drop(stalled);
        };
        let (redirect, ()) =
            tokio::join!(authorizer.authorize("http://as.test/authorize?client_id=c&state=s1".into()), browser);
        assert_eq!(redirect.unwrap(), format!("{redirect_uri}?code=c1&state=s1&iss=x"));
        assert_eq!(opened.lock().unwrap().as_slice(), ["http://as.test/authorize?client_id=c&state=s1"]);
    }

    #[test]
    fn only_web_urls_reach_the_browser() {
        let refused = launch_browser("file:///etc/passwd").unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
        assert!(launch_browser("javascript:alert(1)").is_err());
    }

    #[tokio::test]
    async fn gives_up_after_its_timeout() {
        let authorizer = LoopbackAuthorizer::bind().await.unwrap().timeout(Duration::from_millis(50)).on_open(|_| {});
        let result = authorizer.authorize("http://as.test/authorize?state=s".into()).await;
        assert!(matches!(result, Err(OAuthError::Callback(_))), "{result:?}");
    }
}
