//! The gateway program for the tests that start it: its binary, built once per test run, and
//! configuration files written for a test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The path of the `mcp-gateway` binary (package `typed-mcp-gateway`), built on first use with
/// the cargo that runs the tests, in the profile the tests use.
///
/// # Panics
///
/// Panics with cargo's output when the build fails.
pub fn gateway_binary() -> PathBuf {
    static BUILT: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = built.as_ref() {
        return path.clone();
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut command = Command::new(&cargo);
    command
        .args(["build", "-p", "typed-mcp-gateway", "--bin", "mcp-gateway", "--message-format=json-render-diagnostics"])
        .current_dir(crate::interop::workspace_root())
        .stdin(Stdio::null());
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", Path::new(&cargo).display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "`cargo build -p typed-mcp-gateway` failed ({})\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let path = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "mcp-gateway")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no executable named `mcp-gateway`; its messages:\n{stdout}"));
    *built = Some(path.clone());
    path
}

/// Writes `text` to a fresh configuration file in the system's temporary directory, named
/// after `name`, and returns its path.
///
/// # Panics
///
/// Panics when the file cannot be written.
pub fn write_config(name: &str, text: &str) -> PathBuf {
    let unique = getrandom::u64().unwrap_or_default();
    let path = std::env::temp_dir().join(format!("mcp-gateway-{name}-{unique:016x}.toml"));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// A TOML string literal of `text` (for paths in configurations).
pub fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}
