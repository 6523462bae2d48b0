//! The example programs as people and hosts start them.
//!
//! - A stdio example started by a person in a terminal explains itself on stderr (what
//!   `Server::serve_stdio` prints when stdin is a terminal); started by a host through pipes it
//!   writes nothing but JSON-RPC on stdout and nothing extra on stderr. The terminal case runs
//!   the example with its standard input on a pseudo-terminal, as a shell would start it.
//! - Two copies of the `url_elicitation` example run side by side with default settings (the
//!   second finds the page's usual port taken and uses another); a port asked for explicitly
//!   that is taken ends the program with an error naming the port and the flag, on one line.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tests::interop::example_binary;

/// Words of the banner that only a person is shown.
const BANNER_MARK: &str = "It waits for an MCP client";

#[test]
fn started_in_a_terminal_a_stdio_example_says_how_to_try_it() {
    for name in ["quickstart", "elicitation", "notes", "url_elicitation", "tasks", "apps"] {
        let binary = example_binary(name);
        let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
        let mut child = Command::new(&binary)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::from(pty.slave))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let (lines, banner) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut seen = Vec::new();
        while !seen.iter().any(|l: &String| l.starts_with("Press Ctrl-D")) {
            match banner.recv_timeout(Duration::from_secs(20)) {
                Ok(line) => seen.push(line),
                Err(_) => break,
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        drop(pty.master);
        let text = seen.join("\n");
        assert!(text.starts_with(&format!("{name}: an MCP server")), "{name} did not introduce itself: {text}");
        assert!(text.contains(BANNER_MARK), "{text}");
        let exe = binary.canonicalize().expect("the binary exists").display().to_string();
        assert!(
            text.contains(&format!("npx @modelcontextprotocol/inspector@2.12.0 --cli {exe} --method tools/list")),
            "{name}: no Inspector command for this binary: {text}"
        );
        let entry = seen.iter().find(|l| l.trim_start().starts_with('{')).expect("a host configuration line");
        let entry: Value = serde_json::from_str(entry.trim()).expect("the host entry is JSON");
        assert_eq!(entry, json!({"mcpServers": {name: {"command": exe, "args": []}}}), "{name}");
    }
}

#[test]
fn started_through_pipes_a_stdio_example_writes_only_json_rpc() {
    let binary = example_binary("quickstart");
    let mut child = Command::new(&binary)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 40}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    for message in [initialize, initialized, call] {
        writeln!(stdin, "{message}").expect("the server reads");
    }
    drop(stdin);
    let mut stdout = String::new();
    child.stdout.take().expect("piped").read_to_string(&mut stdout).expect("stdout is readable");
    let mut stderr = String::new();
    child.stderr.take().expect("piped").read_to_string(&mut stderr).expect("stderr is readable");
    let status = child.wait().expect("the server exits");
    assert!(status.success(), "the server failed: {status}\n{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout has a line that is not JSON ({e}): {line:?}"))
        })
        .collect();
    assert!(lines.iter().all(|m| m["jsonrpc"] == "2.0"), "{stdout}");
    assert_eq!(lines.len(), 2, "one answer per request: {stdout}");
    assert_eq!(lines[1]["result"]["content"][0]["text"], "42", "{stdout}");
    assert!(!stderr.contains(BANNER_MARK), "a host got the banner on stderr: {stderr}");
}

/// The quickstart's `initialize` and an `add` call, then end of input: what a host sends.
fn host_session(child: &mut std::process::Child) -> Vec<Value> {
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    writeln!(stdin, "{initialize}").expect("the server reads");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the server answers");
    drop(stdin);
    vec![serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))]
}

/// The page address a `url_elicitation` example logged (`authorization page on http://…/auth`).
fn page_address(stderr: impl Read + Send + 'static) -> String {
    let (found, address) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("authorization page on ").nth(1) {
                let _ = found.send(rest.trim().to_owned());
            }
        }
    });
    address.recv_timeout(Duration::from_secs(30)).expect("the example logs its page's address")
}

#[test]
fn two_url_elicitation_examples_run_side_by_side_with_default_settings() {
    let binary = example_binary("url_elicitation");
    let start = || {
        Command::new(&binary)
            .env("RUST_LOG", "info")
            .env_remove("ELICITATION_URL_PORT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()))
    };
    let mut first = start();
    let first_page = page_address(first.stderr.take().expect("piped"));
    let mut second = start();
    let second_page = page_address(second.stderr.take().expect("piped"));
    assert_ne!(first_page, second_page, "both copies serve their page at the same address");
    for child in [&mut first, &mut second] {
        let answers = host_session(child);
        assert_eq!(answers[0]["result"]["serverInfo"]["name"], "url_elicitation", "{answers:?}");
        let status = child.wait().expect("the example exits at the end of its input");
        assert!(status.success(), "a copy failed: {status}");
    }
}

#[test]
fn a_taken_port_that_was_asked_for_is_one_line_naming_the_flag() {
    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
    let port = taken.local_addr().expect("an address").port().to_string();
    for (name, flag, args) in [
        ("url_elicitation", "--url-port", vec!["--url-port", port.as_str()]),
        ("quickstart", "--port", vec!["--port", port.as_str()]),
    ] {
        let output = Command::new(example_binary(name))
            .args(&args)
            .env("RUST_LOG", "off")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run the {name} example: {e}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{name} {args:?} started on a taken port: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name} {args:?} must say it in one line: {stderr}");
        assert!(lines[0].contains(&port) && lines[0].contains(flag), "{name} {args:?}: {stderr}");
    }
    drop(taken);
}
