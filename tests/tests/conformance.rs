//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance/`) against the `conformance` test server, served over Streamable HTTP.
//!
//! Three runs, each a test judged against its own expected-failures baseline:
//! - 0.1.16, the stable release, with its active suite (`baseline-0.1.16.yml`);
//! - 0.2.0-alpha.12 with `--requirements 2025-11-25`, what spec revision 2025-11-25 requires
//!   (`baseline-2025-11-25.yml`);
//! - 0.2.0-alpha.12 with `--requirements 2026-07-28`, what spec revision 2026-07-28 requires:
//!   2026-07-28 requests, `server/discover`, multi round-trip requests, `subscriptions/listen`
//!   (`baseline-2026-07-28.yml`).
//!
//! Each test starts the server on a free loopback port, runs `tests/conformance/run.sh` for its
//! suite and stops the server. It passes iff every scenario outside the baseline passes and
//! every baselined scenario still fails: the suite checks that for the scenarios it scores, and
//! this test checks it again from the per-scenario results for every scenario that ran (the
//! 0.2 runs also run scenarios they do not score, which must pass too unless baselined), and
//! that every baseline entry names a scenario that ran. That includes the optional extensions
//! the revision's requirements file runs without scoring (`not_scored` entries of the server
//! leg with `reason: extension`): the SDK implements the one there is, the tasks extension of
//! 2026-07-28, so its ten `tasks-*` scenarios are judged like any other.
//!
//! The suite and the Node.js 22 it needs are installed on first use (`tests::provision`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tests::interop::{run_with_deadline, workspace_root};

/// What to do when `tests/conformance/` does not hold what its pins say.
const REINSTALL_HINT: &str = "delete tests/conformance/.provisioned and run the tests again to reinstall";

/// A run takes seconds; each scenario has its own 30 s timeout in the suite. This only stops a
/// hung run from hanging `cargo test`.
const SUITE_DEADLINE: Duration = Duration::from_secs(600);

/// How long the server may take to answer its first HTTP request.
const STARTUP_DEADLINE: Duration = Duration::from_secs(30);

fn conformance_dir() -> PathBuf {
    workspace_root().join("tests").join("conformance")
}

/// The version `package.json` pins for the dependency `alias` (`npm:NAME@VERSION` or `VERSION`).
fn pinned(alias: &str) -> String {
    let path = conformance_dir().join("package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let manifest: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let spec = manifest["dependencies"][alias]
        .as_str()
        .unwrap_or_else(|| panic!("{} does not list `{alias}` in dependencies", path.display()));
    spec.rsplit_once('@').map_or(spec, |(_, version)| version).to_owned()
}

/// The version of the package installed as `alias`, if any.
fn installed(alias: &str) -> Option<String> {
    let path = conformance_dir().join("node_modules").join(alias).join("package.json");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// Fails unless the pinned Node.js and suite versions are installed in `tests/conformance/`.
fn require_installation() {
    tests::provision::conformance_suite();
    let node = conformance_dir().join("node_modules").join(".bin").join("node");
    let want_node = pinned("node");
    let output = Command::new(&node).arg("--version").stdin(Stdio::null()).output();
    match output {
        Ok(o) if o.status.success() => {
            let version = String::from_utf8_lossy(&o.stdout).trim().trim_start_matches('v').to_owned();
            assert_eq!(
                version,
                want_node,
                "{} is Node.js {version}, but tests/conformance/package.json pins {want_node}: {REINSTALL_HINT}",
                node.display()
            );
        }
        _ => panic!(
            "Node.js {want_node} is not installed at {} (the conformance suite needs Node.js 22): {REINSTALL_HINT}",
            node.display()
        ),
    }
    for alias in ["conformance-0.1", "conformance-0.2"] {
        let want = pinned(alias);
        match installed(alias) {
            Some(v) if v == want => {}
            Some(v) => panic!(
                "tests/conformance/node_modules/{alias} is @modelcontextprotocol/conformance {v}, but package.json pins \
                 {want}: {REINSTALL_HINT}"
            ),
            None => panic!(
                "@modelcontextprotocol/conformance {want} is not installed in tests/conformance/node_modules/{alias}: \
                 {REINSTALL_HINT}"
            ),
        }
    }
}

/// The `conformance` test server, running; killed when dropped.
pub(crate) struct ExampleServer {
    child: Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
    log: PathBuf,
}

impl ExampleServer {
    /// Starts the server on a free loopback port and waits until it answers HTTP.
    pub(crate) fn start(log: PathBuf) -> Self {
        let binary = std::path::PathBuf::from(crate::support::servers::CONFORMANCE);
        // The port is free when picked, but another process may take it before the server
        // binds it; then the server exits and another port is tried.
        for _ in 0..5 {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .and_then(|l| l.local_addr())
                .expect("a free loopback port")
                .port();
            let stderr = std::fs::File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
            let child = Command::new(&binary)
                .args(["--port", &port.to_string()])
                .env("RUST_LOG", "warn")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
            let mut server = ExampleServer { child, url: format!("http://127.0.0.1:{port}/mcp"), log: log.clone() };
            if server.wait_until_answering(port) {
                return server;
            }
        }
        panic!("the conformance server did not start; its log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
    }

    /// Whether the server answers an HTTP request (any status) before the deadline; false when
    /// it exits first.
    fn wait_until_answering(&mut self, port: u16) -> bool {
        let started = Instant::now();
        while started.elapsed() < STARTUP_DEADLINE {
            if self.child.try_wait().expect("waiting on the server").is_some() {
                return false;
            }
            if let Some(status) = http_status(port) {
                println!("the conformance server answers at {} (GET: HTTP {status})", self.url);
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the conformance server did not answer at {} within {STARTUP_DEADLINE:?}", self.url);
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for ExampleServer {
    fn drop(&mut self) {
        // It may have exited already; either way it is reaped.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status code of a bare `GET /mcp` (answered with an error without a session), if the
/// server answers at all.
fn http_status(port: u16) -> Option<u16> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head).ok()?.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

/// The scenario names a baseline lists under `server:` (a YAML block list of plain names, or
/// `server: []`).
fn baseline(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut in_server = false;
    let mut entries = BTreeSet::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim_end();
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with([' ', '-']) {
            in_server = line == "server:";
            let rest = line.strip_prefix("server:").map(str::trim);
            assert!(
                rest.is_none_or(|rest| rest.is_empty() || rest == "[]"),
                "{}: write the `server` entries one per line (`  - scenario`), or `server: []` for none",
                path.display()
            );
            continue;
        }
        if let (true, Some(entry)) = (in_server, line.trim().strip_prefix("- ")) {
            assert!(entries.insert(entry.trim().to_owned()), "{} lists `{}` twice", path.display(), entry.trim());
        }
    }
    entries
}

/// The server scenarios the requirements file of `revision` (in the installed 0.2 suite) runs
/// without scoring because they test an optional extension: `not_scored` entries with
/// `leg: server` and `reason: extension`. Empty for a suite without requirements files.
fn optional_extensions(revision: &str) -> BTreeSet<String> {
    let path = conformance_dir()
        .join("node_modules")
        .join("conformance-0.2")
        .join("requirements")
        .join(format!("{revision}.yaml"));
    let Ok(text) = std::fs::read_to_string(&path) else { return BTreeSet::new() };
    let mut extensions = BTreeSet::new();
    let mut in_not_scored = false;
    // One entry: `  - scenario: NAME` followed by `    leg: …` and `    reason: …` lines.
    let mut entry: Option<(String, Option<String>, Option<String>)> = None;
    let mut finish = |entry: Option<(String, Option<String>, Option<String>)>| {
        if let Some((scenario, Some(leg), Some(reason))) = entry
            && leg == "server"
            && reason == "extension"
        {
            extensions.insert(scenario);
        }
    };
    for line in text.lines() {
        let line = line.split(" #").next().unwrap_or_default().trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') && !line.starts_with('-') {
            in_not_scored = line == "not_scored:";
            finish(entry.take());
            continue;
        }
        if !in_not_scored {
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(scenario) = trimmed.strip_prefix("- scenario:") {
            finish(entry.take());
            entry = Some((scenario.trim().to_owned(), None, None));
        } else if let (Some(e), Some(leg)) = (entry.as_mut(), trimmed.strip_prefix("leg:")) {
            e.1 = Some(leg.trim().to_owned());
        } else if let (Some(e), Some(reason)) = (entry.as_mut(), trimmed.strip_prefix("reason:")) {
            e.2 = Some(reason.trim().to_owned());
        }
    }
    finish(entry.take());
    extensions
}

/// Each scenario that ran, with the checks that failed (`FAILURE` or `WARNING`, as the suite
/// counts them), from `DIR/server-<scenario>-<time>/checks.json`.
fn results(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("no results in {}: {e}", dir.display()));
    let mut results = BTreeMap::new();
    for entry in entries {
        let entry = entry.expect("a results directory entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        // `server-<scenario>-2026-01-02T03-04-05-678Z`
        let scenario = name
            .strip_prefix("server-")
            .and_then(|rest| rest.len().checked_sub(25).map(|end| &rest[..end]))
            .unwrap_or_else(|| panic!("unexpected results entry {name}"));
        let path = entry.path().join("checks.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let checks: Vec<serde_json::Value> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not a list of checks: {e}", path.display()));
        let failed = checks
            .iter()
            .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
            .map(|c| {
                let message = c["errorMessage"].as_str().unwrap_or_default();
                format!("{} ({}): {message}", c["id"].as_str().unwrap_or("?"), c["status"].as_str().unwrap_or("?"))
            })
            .collect();
        assert!(results.insert(scenario.to_owned(), failed).is_none(), "scenario {scenario} ran twice");
    }
    results
}

/// Runs one suite of `tests/conformance/run.sh` against a fresh conformance server.
fn run_suite(suite: &str) {
    require_installation();
    let dir = scratch(&format!("conformance-{suite}"));
    let server = ExampleServer::start(dir.join("server.log"));
    run_suite_at(suite, &dir, &server.url, || server.log());
}

/// A fresh scratch folder for a run, `name` under the test's temporary folder.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Runs one suite of `tests/conformance/run.sh` against the server at `url` (its results in
/// `dir`), and judges it against the suite's baseline; `logs` says what the servers logged, for
/// the failure message.
pub(crate) fn run_suite_at(suite: &str, dir: &Path, url: &str, logs: impl FnOnce() -> String) {
    run_suite_judged_by("baseline", suite, dir, url, logs);
}

/// Like [`run_suite_at`], judged against `tests/conformance/<prefix>-<suite>.yml`.
pub(crate) fn run_suite_judged_by(prefix: &str, suite: &str, dir: &Path, url: &str, logs: impl FnOnce() -> String) {
    require_installation();
    let results_dir = dir.join("results");
    let started = Instant::now();
    let output = run_with_deadline(
        Command::new("bash")
            .arg(conformance_dir().join("run.sh"))
            .args(["--suite", suite, "--baseline-prefix", prefix, "--output-dir"])
            .arg(&results_dir)
            .arg(url)
            .env("NO_COLOR", "1"),
        SUITE_DEADLINE,
    );
    println!("conformance {suite} at {url}: {:.1} s\n{}", started.elapsed().as_secs_f64(), output.stdout);
    let server_log = logs();

    let baseline_path = conformance_dir().join(format!("{prefix}-{suite}.yml"));
    let expected = baseline(&baseline_path);
    let results = results(&results_dir.join(suite));
    let extensions = optional_extensions(suite);
    let mut problems = Vec::new();
    for scenario in extensions.iter().filter(|s| !results.contains_key(*s)) {
        problems.push(format!("{scenario}, a scenario of an optional extension, did not run"));
    }
    for (scenario, failed) in &results {
        match (expected.contains(scenario), failed.is_empty()) {
            (false, false) => problems.push(format!("{scenario} fails:\n    {}", failed.join("\n    "))),
            (true, true) => problems
                .push(format!("{scenario} passes but is in {}: remove it from the baseline", baseline_path.display())),
            _ => {}
        }
    }
    for scenario in expected.iter().filter(|s| !results.contains_key(*s)) {
        problems.push(format!("{} lists {scenario}, which did not run: remove it", baseline_path.display()));
    }
    if !output.success() {
        problems.push(format!("the suite reports a regression or a stale baseline entry ({})", output.describe()));
    }
    assert!(
        problems.is_empty(),
        "conformance {suite} at {url}:\n  {}\n--- server log ---\n{server_log}",
        problems.join("\n  ")
    );
}

#[test]
fn conformance_suite_0_1_16() {
    run_suite("0.1.16");
}

#[test]
fn conformance_requirements_2025_11_25() {
    run_suite("2025-11-25");
}

#[test]
fn conformance_requirements_2026_07_28() {
    run_suite("2026-07-28");
}

/// The ten scenarios of the tasks extension, which the 2026-07-28 run judges (none is in its
/// baseline).
const TASKS_SCENARIOS: [&str; 10] = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
];

#[test]
fn the_tasks_extension_is_judged_in_2026_07_28() {
    require_installation();
    let extensions = optional_extensions("2026-07-28");
    assert_eq!(
        extensions,
        TASKS_SCENARIOS.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>(),
        "the optional extension scenarios of the 2026-07-28 requirements are the tasks extension's"
    );
    let expected = baseline(&conformance_dir().join("baseline-2026-07-28.yml"));
    assert!(expected.is_disjoint(&extensions), "no tasks scenario is an expected failure: {expected:?}");
    assert!(optional_extensions("2025-11-25").is_empty(), "2025-11-25 has no server-side extension");
}
