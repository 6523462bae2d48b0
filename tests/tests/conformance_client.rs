//! The official MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance`,
//! pinned in `tests/conformance/`) against our client, the `conformance-client` test program.
//!
//! Three runs, each a test (all through `tests/conformance/run-client.sh`):
//! - 0.1.16, one run per scenario: `initialize`, `tools_call`,
//!   `elicitation-sep1034-client-defaults` and `sse-retry`; every check must pass;
//! - 0.2.0-alpha.12 with `client --requirements 2025-11-25`: every client scenario the revision
//!   runs, scored or not (the `auth/*` extensions: client credentials, enterprise-managed
//!   authorization, DPoP, workload identity), then the 2025-03-26 authorization fallbacks,
//!   judged against `tests/conformance/client-baseline-2025-11-25.yml` (empty). Every scenario
//!   that runs must pass unless the baseline lists it, and every baseline entry must still fail;
//! - 0.2.0-alpha.12 with `client --requirements 2026-07-28`: the 2026-07-28 revision (the
//!   client speaks it when the suite says so), judged the same way against
//!   `tests/conformance/client-baseline-2026-07-28.yml` (empty as well).
//!
//! The suite and the Node.js 22 it needs are installed on first use (`tests::provision`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tests::interop::{run_with_deadline, workspace_root};

/// What to do when `tests/conformance/` does not hold what its pins say.
const REINSTALL_HINT: &str = "delete tests/conformance/.provisioned and run the tests again to reinstall";

/// Each scenario has its own 30 s timeout in the suite; this only stops a hung run.
const SUITE_DEADLINE: Duration = Duration::from_secs(600);

/// What the 0.1.16 run covers.
const SCENARIOS_0_1: &[&str] = &["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"];

/// The OAuth scenarios both revisions score.
const AUTH_2025_11_25: &[&str] = &[
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
];

/// The OAuth scenarios only 2026-07-28 scores (RFC 9207 `iss`, resource mismatch,
/// `offline_access`, authorization server migration, metadata issuer checks).
const AUTH_2026_07_28: &[&str] = &[
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
];

/// The authorization extensions both revisions run without scoring them; we require them.
const AUTH_EXTENSIONS: &[&str] = &[
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
];

/// Servers without protected resource metadata (2025-03-26), run after each requirement set.
const AUTH_LEGACY: &[&str] = &["auth/2025-03-26-oauth-endpoint-fallback", "auth/2025-03-26-oauth-metadata-backcompat"];

/// Scenarios the 2025-11-25 run must pass besides its OAuth ones (and any other outside `auth/`).
const REQUIRED_2025_11_25: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "json-schema-2020-12-preservation",
];

/// Scenarios the 2026-07-28 run must pass besides its OAuth ones (and any other outside `auth/`).
const REQUIRED_2026_07_28: &[&str] = &[
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
];

fn conformance_dir() -> PathBuf {
    workspace_root().join("tests").join("conformance")
}

/// Fails unless Node.js and both suite versions are installed in `tests/conformance/`.
pub(crate) fn require_installation() {
    tests::provision::conformance_suite();
    let modules = conformance_dir().join("node_modules");
    let node = modules.join(".bin").join("node");
    let ok = Command::new(&node).arg("--version").stdin(Stdio::null()).output().is_ok_and(|o| o.status.success());
    assert!(ok, "Node.js is not installed at {} (the suite needs Node.js 22): {REINSTALL_HINT}", node.display());
    for alias in ["conformance-0.1", "conformance-0.2"] {
        assert!(
            modules.join(alias).join("package.json").is_file(),
            "@modelcontextprotocol/conformance is not installed as tests/conformance/node_modules/{alias}: run \
             {REINSTALL_HINT}"
        );
    }
}

/// Each scenario that ran, with its failed checks (`FAILURE` or `WARNING`), from
/// `DIR/**/<scenario>-<time>/checks.json` (scenario names may contain `/`).
fn results(dir: &Path) -> BTreeMap<String, Vec<String>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<String>>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("no results in {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a results directory entry").path();
            let checks = path.join("checks.json");
            if checks.is_file() {
                // `<scenario>-2026-01-02T03-04-05-678Z`
                let relative = path.strip_prefix(base).expect("below the base").to_string_lossy().into_owned();
                let scenario = relative
                    .len()
                    .checked_sub(25)
                    .map(|end| relative[..end].to_owned())
                    .unwrap_or_else(|| panic!("unexpected results entry {relative}"));
                let text = std::fs::read_to_string(&checks).expect("readable checks.json");
                let checks: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a list of checks");
                let failed = checks
                    .iter()
                    .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
                    .map(|c| {
                        let message = c["errorMessage"].as_str().unwrap_or_default();
                        format!(
                            "{} ({}): {message}",
                            c["id"].as_str().unwrap_or("?"),
                            c["status"].as_str().unwrap_or("?")
                        )
                    })
                    .collect();
                assert!(out.insert(scenario.clone(), failed).is_none(), "scenario {scenario} ran twice");
            } else if path.is_dir() {
                walk(base, &path, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The scenario names a baseline lists under `client:`.
fn baseline(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut in_client = false;
    let mut entries = BTreeSet::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim_end();
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with([' ', '-']) {
            in_client = line.trim() == "client:";
            continue;
        }
        if let (true, Some(entry)) = (in_client, line.trim().strip_prefix("- ")) {
            assert!(entries.insert(entry.trim().to_owned()), "{} lists `{}` twice", path.display(), entry.trim());
        }
    }
    entries
}

/// Runs one suite of `run-client.sh`; returns the per-scenario results and the suite's verdict.
fn run_suite(suite: &str) -> (BTreeMap<String, Vec<String>>, Result<(), String>, String) {
    require_installation();
    let client = std::path::PathBuf::from(crate::support::servers::CONFORMANCE_CLIENT);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("conformance-client-{suite}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a results directory");
    let started = Instant::now();
    let output = run_with_deadline(
        Command::new("bash")
            .arg(conformance_dir().join("run-client.sh"))
            .args(["--suite", suite, "--output-dir"])
            .arg(&dir)
            .arg(&client)
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "warn"),
        SUITE_DEADLINE,
    );
    println!("conformance client {suite}: {:.1} s\n{}", started.elapsed().as_secs_f64(), output.stdout);
    let verdict = if output.success() { Ok(()) } else { Err(output.describe()) };
    (results(&dir.join(suite)), verdict, output.stdout.clone())
}

#[test]
fn conformance_client_0_1_16() {
    let (results, verdict, log) = run_suite("0.1.16");
    let mut problems = Vec::new();
    for scenario in SCENARIOS_0_1 {
        match results.get(*scenario) {
            None => problems.push(format!("{scenario} did not run")),
            Some(failed) if !failed.is_empty() => {
                problems.push(format!("{scenario} fails:\n    {}", failed.join("\n    ")))
            }
            Some(_) => {}
        }
    }
    if let Err(e) = verdict {
        problems.push(format!("the suite reports a failure ({e})"));
    }
    assert!(problems.is_empty(), "conformance client 0.1.16:\n  {}\n--- log ---\n{log}", problems.join("\n  "));
}

#[test]
fn conformance_client_requirements_2025_11_25() {
    let required: Vec<&str> =
        REQUIRED_2025_11_25.iter().chain(AUTH_2025_11_25).chain(AUTH_EXTENSIONS).chain(AUTH_LEGACY).copied().collect();
    check_requirements("2025-11-25", &required);
}

#[test]
fn conformance_client_requirements_2026_07_28() {
    let baseline_path = conformance_dir().join("client-baseline-2026-07-28.yml");
    let outside_auth: Vec<String> = baseline(&baseline_path).into_iter().filter(|s| !s.starts_with("auth/")).collect();
    assert!(outside_auth.is_empty(), "{} may list only auth/* scenarios: {outside_auth:?}", baseline_path.display());
    let required: Vec<&str> = REQUIRED_2026_07_28
        .iter()
        .chain(AUTH_2025_11_25)
        .chain(AUTH_2026_07_28)
        .chain(AUTH_EXTENSIONS)
        .chain(AUTH_LEGACY)
        .copied()
        .collect();
    check_requirements("2026-07-28", &required);
}

/// Runs the `revision` requirements: every scenario that runs (scored or not) passes unless the
/// baseline lists it, the baseline is exact, and each of `required` ran.
fn check_requirements(revision: &str, required: &[&str]) {
    let (results, verdict, log) = run_suite(revision);
    let baseline_path = conformance_dir().join(format!("client-baseline-{revision}.yml"));
    let expected = baseline(&baseline_path);
    let mut problems = Vec::new();
    for (scenario, failed) in &results {
        let listed = expected.contains(scenario);
        if listed && failed.is_empty() {
            problems.push(format!("{scenario} passes but is in {}: remove it", baseline_path.display()));
        } else if !listed && !failed.is_empty() {
            problems.push(format!("{scenario} fails:\n    {}", failed.join("\n    ")));
        }
    }
    for scenario in required {
        if !results.contains_key(*scenario) {
            problems.push(format!("{scenario} did not run"));
        }
    }
    for scenario in expected.iter().filter(|s| !results.contains_key(*s)) {
        problems.push(format!("{} lists {scenario}, which did not run: remove it", baseline_path.display()));
    }
    if let Err(e) = verdict {
        problems.push(format!("the suite reports a regression or a stale baseline entry ({e})"));
    }
    assert!(problems.is_empty(), "conformance client {revision}:\n  {}\n--- log ---\n{log}", problems.join("\n  "));
}
