//! The skills extension (`io.modelcontextprotocol/skills`) against the official conformance
//! suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12). No revision's requirement list
//! runs these scenarios (the extension is not on the spec's timeline), so each is run by name,
//! with `--force`:
//!
//! - the server scenarios `sep-2640-skills-enumeration`, `sep-2640-skills-manifest` and
//!   `sep-2640-skills-directory` against the `skills` example over Streamable HTTP: in the
//!   2026-07-28 era every check is SUCCESS; in the 2025-11-25 era too, except the two cache
//!   attribute checks, which the suite defines from 2026-07-28 only and reports SKIPPED;
//! - the client scenarios `sep-2640-client-no-prefetch`, `-verify-digest`, `-verify-size` and
//!   `-verify-frontmatter` with the SDK's conformance client (`tests/src/bin/conformance-client.rs`):
//!   its one check is SUCCESS in each (no file read before a skill is loaded; tampered content
//!   refused, so the skill's other file is never read).

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tests::interop::{example_binary, run_with_deadline, workspace_root};

/// One scenario takes a second or two; the suite's own timeout per scenario is 30 s.
const SCENARIO_DEADLINE: Duration = Duration::from_secs(120);

const SERVER_SCENARIOS: [&str; 3] =
    ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"];

const CLIENT_SCENARIOS: [&str; 4] = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// The checks the suite defines only from 2026-07-28 on, SKIPPED in the 2025-11-25 era.
const CACHE_CHECKS: [&str; 2] = ["sep-2640-skills-list-cache-attributes", "sep-2640-skills-get-cache-attributes"];

fn suite() -> (PathBuf, PathBuf) {
    crate::conformance_client::require_installation();
    let dir = workspace_root().join("tests").join("conformance").join("node_modules");
    (dir.join(".bin").join("node"), dir.join("conformance-0.2").join("dist").join("index.js"))
}

/// The `skills` example serving Streamable HTTP on a free port; killed when dropped.
struct SkillsExample(Child, String);

impl SkillsExample {
    fn start() -> SkillsExample {
        let binary = example_binary("skills");
        let port =
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).and_then(|l| l.local_addr()).expect("a free port").port();
        let child = Command::new(&binary)
            .args(["--port", &port.to_string()])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "the skills example did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        SkillsExample(child, format!("http://127.0.0.1:{port}/mcp"))
    }
}

impl Drop for SkillsExample {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every check of every scenario that wrote its results under `dir`: `(scenario, check) → status`.
fn checks(dir: &Path) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("no results in {}: {e}", dir.display())) {
        let path = entry.expect("a results entry").path();
        let file = path.join("checks.json");
        if !file.is_file() {
            continue;
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        // `[server-]<scenario>-2026-01-02T03-04-05-678Z`
        let scenario = name.trim_start_matches("server-");
        let scenario = scenario.get(..scenario.len().saturating_sub(25)).unwrap_or_default().to_owned();
        let text = std::fs::read_to_string(&file).expect("readable checks.json");
        let list: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a list of checks");
        for check in list {
            let id = check["id"].as_str().unwrap_or("?").to_owned();
            let status = check["status"].as_str().unwrap_or("?").to_owned();
            let message = check["errorMessage"].as_str().map(|m| format!(" ({m})")).unwrap_or_default();
            out.insert((scenario.clone(), id), format!("{status}{message}"));
        }
    }
    out
}

fn run_suite(args: &[&str], output: &Path) -> String {
    let (node, index) = suite();
    let mut command = Command::new(node);
    command.arg(index).args(args).arg("--force").arg("--output-dir").arg(output);
    let run = run_with_deadline(&mut command, SCENARIO_DEADLINE);
    format!("{}{}", run.stdout, run.stderr)
}

#[test]
fn the_skills_example_passes_every_server_check_of_the_skills_extension() {
    let example = SkillsExample::start();
    for era in ["2026-07-28", "2025-11-25"] {
        let output = tempdir(&format!("skills-server-{era}"));
        let mut log = String::new();
        for scenario in SERVER_SCENARIOS {
            log += &run_suite(&["server", "--url", &example.1, "--scenario", scenario, "--spec-version", era], &output);
        }
        let results = checks(&output);
        for scenario in SERVER_SCENARIOS {
            assert!(results.keys().any(|(s, _)| s == scenario), "{scenario} did not run in {era}:\n{log}");
        }
        let unexpected: Vec<String> = results
            .iter()
            .filter(|((_, id), status)| {
                let skipped_here = era == "2025-11-25" && CACHE_CHECKS.contains(&id.as_str());
                if skipped_here { !status.starts_with("SKIPPED") } else { *status != "SUCCESS" }
            })
            .map(|((s, id), status)| format!("{s} / {id}: {status}"))
            .collect();
        assert!(unexpected.is_empty(), "in the {era} era:\n  {}\n{log}", unexpected.join("\n  "));
        // The suite's checks, not just a scenario that ran empty.
        assert!(results.len() >= 40, "only {} checks ran in {era}:\n{log}", results.len());
    }
}

#[test]
fn the_conformance_client_passes_the_client_scenarios_of_the_skills_extension() {
    let client = crate::support::servers::CONFORMANCE_CLIENT;
    let output = tempdir("skills-client");
    let mut log = String::new();
    for scenario in CLIENT_SCENARIOS {
        log += &run_suite(&["client", "--command", client, "--scenario", scenario], &output);
    }
    let results = checks(&output);
    for scenario in CLIENT_SCENARIOS {
        let mine: Vec<_> = results.iter().filter(|((s, _), _)| s == scenario).collect();
        assert!(!mine.is_empty(), "{scenario} did not run:\n{log}");
        for ((_, id), status) in mine {
            assert_eq!(status, "SUCCESS", "{scenario} / {id}\n{log}");
        }
    }
}

/// A fresh directory in the system temporary directory for one run's results.
fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("typed-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}
