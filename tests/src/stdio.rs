//! Talking newline-delimited JSON-RPC to a server: in this process (over `tokio::io::duplex`) or
//! as a child process (over its stdin and stdout).

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

/// Upper bound for anything that should happen at once. Never used to wait for something to
/// happen, only to fail instead of hanging when it does not.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Awaits `f`, failing the test if it takes longer than [`PATIENCE`].
pub async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(PATIENCE, f).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

type Reader = BufReader<Box<dyn AsyncRead + Send + Unpin>>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// The client end of a line transport. Every line read must be a JSON-RPC 2.0 object.
pub struct LineClient {
    reader: Reader,
    writer: Option<Writer>,
    next_id: i64,
}

impl LineClient {
    /// A client reading the server's output from `reader` and writing to its input.
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        LineClient { reader: BufReader::new(Box::new(reader)), writer: Some(Box::new(writer)), next_id: 1000 }
    }

    /// Writes bytes exactly as given and flushes.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let writer = self.writer.as_mut().expect("the input was closed");
        writer.write_all(bytes).await.expect("write to the server");
        writer.flush().await.expect("flush to the server");
    }

    /// Writes one line (a newline is added).
    pub async fn send_line(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes()).await;
    }

    /// Writes one message.
    pub async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Sends a request with the given id, without waiting.
    pub async fn send_request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})).await;
    }

    /// Reads the next message; `None` at the end of the output.
    pub async fn recv_or_eof(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = within("a line from the server", self.reader.read_line(&mut line)).await.expect("read from server");
        if n == 0 {
            return None;
        }
        assert!(line.ends_with('\n'), "every message ends with a newline: {line:?}");
        let value: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("the server wrote a non-JSON line ({e}): {line:?}"));
        assert!(value.is_object(), "the server wrote a non-object: {line}");
        assert_eq!(value["jsonrpc"], "2.0", "the server wrote a non-JSON-RPC line: {line}");
        Some(value)
    }

    /// Reads the next message.
    pub async fn recv(&mut self) -> Value {
        self.recv_or_eof().await.expect("the server closed its output")
    }

    /// Sends a request and reads messages until its response, returning the response and
    /// whatever came before it.
    pub async fn request_collect(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.next_id += 1;
        let id = self.next_id;
        self.send_request(id, method, params).await;
        let mut before = Vec::new();
        loop {
            let message = self.recv().await;
            if message["id"] == id && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// Sends a request and returns its response; nothing else may arrive before it.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let (response, before) = self.request_collect(method, params).await;
        assert_eq!(before, Vec::<Value>::new(), "unexpected messages before the response to `{method}`");
        response
    }

    /// Sends a request and returns its result, failing on an error response.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.get("error").is_none(), "`{method}` failed: {response}");
        response["result"].clone()
    }

    /// Initializes the session with `protocol_version` and returns the `initialize` result.
    pub async fn initialize(&mut self, protocol_version: &str) -> Value {
        let result = self
            .result(
                "initialize",
                json!({
                    "protocolVersion": protocol_version,
                    "capabilities": {},
                    "clientInfo": {"name": "stdio-tests", "version": "0.0.0"}
                }),
            )
            .await;
        self.notify("notifications/initialized", json!({})).await;
        result
    }

    /// Calls `add(a, b)` and checks the sum: proof that the session still serves.
    pub async fn assert_serving(&mut self) {
        let result = self.result("tools/call", json!({"name": "add", "arguments": {"a": 2, "b": 40}})).await;
        assert_eq!(result["content"][0]["text"], "42", "{result}");
        assert_ne!(result["isError"], true, "{result}");
    }

    /// Closes the server's input (end of file for the server).
    pub async fn close_input(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            let _ = writer.shutdown().await;
        }
    }

    /// Reads every remaining message until the server closes its output.
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(message) = self.recv_or_eof().await {
            messages.push(message);
        }
        messages
    }
}

/// The error code of an error response, failing if it is not one.
pub fn error_code(response: &Value) -> i64 {
    response["error"]["code"].as_i64().unwrap_or_else(|| panic!("expected an error response, got {response}"))
}

/// The error message of an error response.
pub fn error_message(response: &Value) -> &str {
    response["error"]["message"].as_str().unwrap_or_else(|| panic!("expected an error response, got {response}"))
}

/// The path of the `quickstart` example binary, built once per test run (in the profile the
/// tests use) with `cargo build`, or taken from `MCP_QUICKSTART_BIN`.
pub fn quickstart_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("MCP_QUICKSTART_BIN") {
        Some(path) => PathBuf::from(path),
        None => build_example("quickstart"),
    })
}

/// The path of the example binary `name` (from `examples/src/bin/`), built once per test run
/// like [`quickstart_binary`].
pub fn example_binary(name: &str) -> PathBuf {
    static BUILT: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    if name == "quickstart" {
        return quickstart_binary().to_owned();
    }
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, path)) = built.iter().find(|(n, _)| n == name) {
        return path.clone();
    }
    let path = build_example(name);
    built.push((name.to_owned(), path.clone()));
    path
}

/// Builds an example binary and returns the executable cargo reports for it.
fn build_example(name: &str) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the workspace");
    let mut command = std::process::Command::new(cargo);
    command
        .current_dir(workspace)
        .args(["build", "--quiet", "--package", "examples", "--bin", name, "--message-format=json-render-diagnostics"])
        .stderr(Stdio::inherit());
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    let output = command.output().expect("run cargo build");
    assert!(output.status.success(), "cargo build of the `{name}` example failed");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo reported no executable for the `{name}` example"))
}

/// A server running as a child process, spoken to over its stdin and stdout.
pub struct ServerProcess {
    /// The client on the child's stdin and stdout.
    pub client: LineClient,
    child: Child,
    stderr: JoinHandle<String>,
}

impl ServerProcess {
    /// Starts `program` with `envs` added to its environment.
    pub fn spawn(program: &Path, envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(program)
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let stderr = tokio::spawn(async move {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text).await;
            text
        });
        ServerProcess { client: LineClient::new(stdout, stdin), child, stderr }
    }

    /// The child's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Starts the quickstart example.
    pub fn quickstart(envs: &[(&str, &str)]) -> Self {
        Self::spawn(quickstart_binary(), envs)
    }

    /// Waits for the process to exit on its own (within [`PATIENCE`]); returns its status, the
    /// messages it wrote after those already read, and everything it wrote to stderr.
    pub async fn wait(mut self) -> (ExitStatus, Vec<Value>, String) {
        let rest = self.client.rest().await;
        let status = within("the server process to exit", self.child.wait()).await.expect("wait for the child");
        let stderr = within("the server's stderr to close", self.stderr).await.expect("stderr reader");
        (status, rest, stderr)
    }

    /// Closes the server's stdin, then [`wait`](Self::wait)s.
    pub async fn finish(mut self) -> (ExitStatus, Vec<Value>, String) {
        self.client.close_input().await;
        self.wait().await
    }
}
