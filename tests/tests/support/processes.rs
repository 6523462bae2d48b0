//! Server programs a test starts as child processes, serving Streamable HTTP on a free port.

use std::time::Duration;

/// A server process serving Streamable HTTP, killed when dropped.
pub struct Example {
    pub child: std::process::Child,
    pub url: String,
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `combined` test server (forms, URL mode and a task in one server, named `elicitation`)
/// over HTTP.
pub async fn combined_server() -> Example {
    http_server(std::path::Path::new(crate::support::servers::COMBINED), &["--url-port", "0"]).await
}

/// `binary` started with `--port <free port>` and `args`, once it listens.
pub async fn http_server(binary: &std::path::Path, args: &[&str]) -> Example {
    for _ in 0..5 {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new(binary)
            .arg("--port")
            .arg(port.to_string())
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut example = Example { child, url: format!("http://127.0.0.1:{port}/mcp") };
        for _ in 0..300 {
            if example.child.try_wait().unwrap().is_some() {
                break;
            }
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return example;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = example.child.kill();
    }
    panic!("{} did not start", binary.display());
}
