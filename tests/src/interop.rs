//! Helpers for the interop tests: locate the example server binaries, the pinned client
//! installations under `tests/interop/`, and run a client script with a deadline.
//!
//! The clients are installed on first use by [`crate::provision::interop_clients`] (Node
//! packages into `tests/interop/node_modules`, the Python SDK into the virtualenv
//! `tests/interop/.venv`). A missing toolchain or a failed install is a test failure whose
//! message says what to install, never a silent skip.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// What to do when an installation in `tests/interop/` does not hold what its pins say.
const REINSTALL_HINT: &str = "delete tests/interop/.provisioned and run the tests again to reinstall";

/// The workspace root (the directory holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives one level below the workspace root")
        .to_path_buf()
}

/// What `cargo metadata --no-deps` says of the workspace (its packages, their features and
/// dependencies, the target directory).
///
/// # Panics
///
/// Panics when cargo cannot be run or fails.
pub fn cargo_metadata() -> serde_json::Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let output = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

/// The workspace's target directory as cargo resolves it (`CARGO_TARGET_DIR`,
/// `build.target-dir`, or `target/`), asked of `cargo metadata` once per test process.
pub fn target_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let metadata = cargo_metadata();
        PathBuf::from(metadata["target_directory"].as_str().expect("cargo metadata names the target directory"))
    })
    .clone()
}

/// `tests/interop/`: the client scripts and their pinned dependencies.
pub fn interop_dir() -> PathBuf {
    workspace_root().join("tests").join("interop")
}

/// The path of an example server binary from the `examples` crate, built on first use (see
/// [`package_binary`]).
///
/// # Panics
///
/// Panics with cargo's output when the build fails.
pub fn example_binary(name: &str) -> PathBuf {
    package_binary("examples", name)
}

/// The path of binary `name` of workspace package `package`, built on first use.
///
/// A test in this crate cannot name another crate's binary (`CARGO_BIN_EXE_*` only exists for
/// the crate's own bins), and the target directory may be moved by `CARGO_TARGET_DIR` or
/// `build.target-dir`. So this runs `cargo build -p PACKAGE --bin NAME` with the cargo that
/// runs the tests and takes the executable path from cargo's JSON artifact messages. Cargo
/// has released its build lock by the time tests run; when the binary is up to date the
/// build is a no-op. Each binary is built at most once per test process.
///
/// # Panics
///
/// Panics with cargo's output when the build fails.
pub fn package_binary(package: &str, name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<(String, String), PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    let key = (package.to_owned(), name.to_owned());
    if let Some(path) = built.get(&key) {
        return path.clone();
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let output = Command::new(&cargo)
        .args(["build", "-p", package, "--bin", name, "--message-format=json-render-diagnostics"])
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", Path::new(&cargo).display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "`cargo build -p {package} --bin {name}` failed ({})\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let path = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact" && message["target"]["name"] == name)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no executable named `{name}`; its messages:\n{stdout}"));
    built.insert(key, path.clone());
    path
}

/// Fails the test when `program` cannot be started, saying what to install.
///
/// # Panics
///
/// Panics when `program --version` cannot be run or fails.
pub fn require_program(program: &str, install_hint: &str) -> String {
    match Command::new(program).arg("--version").stdin(Stdio::null()).output() {
        Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        Ok(output) => panic!(
            "`{program} --version` failed ({}): {}\n{install_hint}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => panic!("`{program}` is not available ({error}).\n{install_hint}"),
    }
}

/// The exact version pinned for npm `package` in `tests/interop/package.json`.
///
/// # Panics
///
/// Panics when the manifest cannot be read or does not pin `package`.
pub fn pinned_npm_version(package: &str) -> String {
    let path = interop_dir().join("package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    let manifest: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{} is not JSON: {error}", path.display()));
    manifest["dependencies"][package]
        .as_str()
        .unwrap_or_else(|| panic!("{} does not list `{package}` in dependencies", path.display()))
        .to_owned()
}

/// The version of npm `package` installed in `tests/interop/node_modules`, if any.
pub fn installed_npm_version(package: &str) -> Option<String> {
    let path = interop_dir().join("node_modules").join(package).join("package.json");
    let text = std::fs::read_to_string(path).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// The exact version pinned (`name==version`) for PyPI `package` in
/// `tests/interop/requirements.txt`.
///
/// # Panics
///
/// Panics when the file cannot be read or does not pin `package` exactly.
pub fn pinned_python_version(package: &str) -> String {
    let path = interop_dir().join("requirements.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter_map(|line| line.split_once("=="))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case(package))
        .map(|(_, version)| version.trim().to_owned())
        .unwrap_or_else(|| panic!("{} does not pin `{package}==VERSION`", path.display()))
}

/// The Python interpreter of the interop virtualenv, `tests/interop/.venv`.
pub fn venv_python() -> PathBuf {
    let venv = interop_dir().join(".venv");
    if cfg!(windows) { venv.join("Scripts").join("python.exe") } else { venv.join("bin").join("python") }
}

/// What a finished (or killed) child process left behind.
#[derive(Debug)]
pub struct RunOutput {
    /// The exit code, `None` when the process was killed by a signal or by the deadline.
    pub code: Option<i32>,
    /// Whether the deadline passed and the process was killed.
    pub timed_out: bool,
    /// Everything the process wrote to stdout.
    pub stdout: String,
    /// Everything the process wrote to stderr.
    pub stderr: String,
}

impl RunOutput {
    /// Whether the process exited on its own with status 0.
    pub fn success(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }

    /// A report of the run for a failure message.
    pub fn describe(&self) -> String {
        let status = if self.timed_out {
            "killed after the deadline".to_owned()
        } else {
            match self.code {
                Some(code) => format!("exit code {code}"),
                None => "killed by a signal".to_owned(),
            }
        };
        format!("{status}\n--- stdout ---\n{}\n--- stderr ---\n{}", self.stdout, self.stderr)
    }
}

/// Runs `command` with stdin closed, collecting its output, and kills it after `deadline`.
///
/// # Panics
///
/// Panics when the command cannot be started.
pub fn run_with_deadline(command: &mut Command, deadline: Duration) -> RunOutput {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
    let collect = |mut stream: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            // A read error ends the capture; whatever arrived before it is kept.
            let _ = stream.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = collect(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = collect(Box::new(child.stderr.take().expect("stderr is piped")));

    let started = Instant::now();
    let (code, timed_out) = loop {
        if let Some(status) = child.try_wait().expect("waiting on the child process") {
            break (status.code(), false);
        }
        if started.elapsed() >= deadline {
            // The child may exit between the check and the kill; either way it is reaped below.
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        thread::sleep(Duration::from_millis(50));
    };
    RunOutput { code, timed_out, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() }
}

/// The Node.js that runs every interop script: the one `tests/interop/package.json` pins (the
/// npm package `node`, installed beside the clients), whatever Node.js runs npm. So the suite
/// needs only a Node.js that runs npm, and each script runs on the same version everywhere.
pub fn node_program() -> PathBuf {
    interop_dir().join("node_modules").join(".bin").join("node")
}

/// A command running the pinned Node.js ([`node_program`]) in `tests/interop/`.
pub fn node() -> Command {
    let mut command = Command::new(node_program());
    command.current_dir(interop_dir());
    command
}

/// Installs the interop clients if needed ([`crate::provision::interop_clients`]), then fails
/// the test unless the pinned Node.js runs and `tests/interop/node_modules` holds npm `package` at the
/// version pinned in `package.json`; returns its `node --version`.
///
/// # Panics
///
/// Panics, naming what to install, when node or the package is missing or outdated.
pub fn require_node_package(package: &str) -> String {
    crate::provision::interop_clients();
    let node = require_program(
        node_program().to_str().expect("the workspace path is UTF-8"),
        &format!("The pinned Node.js of tests/interop did not install: {REINSTALL_HINT}"),
    );
    let pinned = pinned_npm_version(package);
    match installed_npm_version(package) {
        Some(installed) if installed == pinned => node,
        Some(installed) => {
            panic!(
                "tests/interop/node_modules has {package} {installed}, but package.json pins {pinned}: {REINSTALL_HINT}"
            )
        }
        None => panic!("{package} {pinned} is not installed in tests/interop/node_modules: {REINSTALL_HINT}"),
    }
}

/// Installs the interop clients if needed ([`crate::provision::interop_clients`]), then fails
/// the test unless the interop virtualenv's Python runs and has PyPI `package` at the version
/// pinned in `requirements.txt`; returns the interpreter's path and `python --version`.
///
/// # Panics
///
/// Panics, naming what to install, when the virtualenv or the package is missing or outdated.
pub fn require_python_package(package: &str) -> (PathBuf, String) {
    crate::provision::interop_clients();
    let python = venv_python();
    assert!(python.exists(), "{} does not exist: {REINSTALL_HINT}", python.display());
    let version = require_program(python.to_str().expect("the workspace path is UTF-8"), REINSTALL_HINT);
    let pinned = pinned_python_version(package);
    let probe = run_with_deadline(
        Command::new(&python).args(["-c", &format!("import importlib.metadata as m; print(m.version({package:?}))")]),
        Duration::from_secs(60),
    );
    assert!(
        probe.success(),
        "the Python package `{package}` is not installed in tests/interop/.venv: {REINSTALL_HINT}\n{}",
        probe.describe()
    );
    let installed = probe.stdout.trim();
    assert_eq!(
        installed, pinned,
        "tests/interop/.venv has {package} {installed}, but requirements.txt pins {pinned}: {REINSTALL_HINT}"
    );
    (python, version)
}
