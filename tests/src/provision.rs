//! Installs, on first use, the pinned programs that the interop and conformance tests drive, so
//! that `cargo test --workspace` needs nothing but the toolchains on a fresh clone.
//!
//! Two installations, each in its own folder and each described by files under version control:
//! - [`interop_clients`]: `tests/interop/`, the TypeScript SDK client and the MCP Inspector
//!   (`npm ci` from `package-lock.json`, with the Node.js 22 the Inspector needs) and the Python
//!   SDK client (a virtualenv `.venv` from `requirements.txt`);
//! - [`conformance_suite`]: `tests/conformance/`, the official conformance suite and the Node.js
//!   22 it runs on (`npm ci` from `package-lock.json`).
//!
//! Each is installed once and again only when its pins change: a stamp file in the folder holds a
//! SHA-256 of the files that pin it, and a matching stamp means the installation is current.
//! Test threads of one process wait for the first one to finish ([`OnceLock`]); test processes
//! running at once take an exclusive lock on a file in the folder, so two `npm ci` never run in
//! the same `node_modules`. A missing toolchain fails the test at once with one line naming what
//! to install; a failed install fails it with the installer's output. Nothing is ever skipped.
//!
//! `tests/interop/setup.sh` and `tests/conformance/setup.sh` do the same installs by hand, for
//! people who want them up front.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::interop::workspace_root;

/// What is installed, and the stamp that says which pins it was installed from.
struct Installation {
    /// A short name for messages.
    name: &'static str,
    /// The folder, relative to the workspace root.
    folder: &'static str,
    /// The files whose contents decide what is installed.
    pins: &'static [&'static str],
    /// Runs the installers in the folder.
    install: fn(&Path) -> Result<(), String>,
    /// Whether what the stamp vouches for is still on disk (a folder deleted by hand).
    present: fn(&Path) -> bool,
}

/// The stamp file's name in an installation's folder (ignored by git).
const STAMP: &str = ".provisioned";
/// The lock file's name in an installation's folder (ignored by git).
const LOCK: &str = ".provision.lock";
/// Changes whenever the install steps below change, so that a stamp written by older steps
/// does not vouch for what newer ones would install.
const STEPS_VERSION: &str = "1";

const INTEROP: Installation = Installation {
    name: "the interop clients",
    folder: "tests/interop",
    pins: &["package.json", "package-lock.json", "requirements.txt"],
    install: install_interop,
    present: |dir| dir.join("node_modules").is_dir() && venv_python_in(dir).is_file(),
};

const CONFORMANCE: Installation = Installation {
    name: "the conformance suite",
    folder: "tests/conformance",
    pins: &["package.json", "package-lock.json"],
    install: install_npm_packages,
    present: |dir| dir.join("node_modules").is_dir(),
};

/// Makes sure `tests/interop/` holds the pinned TypeScript SDK, MCP Inspector and Python SDK
/// clients, installing them first if needed; returns the folder.
///
/// # Panics
///
/// Panics, saying what to install, when Node.js (with npm) or Python 3 (with its venv module) is
/// missing, or with the installer's output when an install fails.
pub fn interop_clients() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| provision(&INTEROP))
}

/// Makes sure `tests/conformance/` holds the pinned conformance suite and its Node.js, installing
/// them first if needed; returns the folder.
///
/// # Panics
///
/// Panics, saying what to install, when Node.js (with npm) is missing, or with the installer's
/// output when the install fails.
pub fn conformance_suite() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| provision(&CONFORMANCE))
}

fn provision(installation: &Installation) -> PathBuf {
    let dir = workspace_root().join(installation.folder);
    let key = pin_digest(&dir, installation);
    let current = |dir: &Path| {
        std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|stamp| stamp.trim() == key) && (installation.present)(dir)
    };
    if current(&dir) {
        return dir;
    }
    let lock = lock_folder(&dir);
    // Another process may have installed while this one waited for the lock.
    if !current(&dir) {
        eprintln!("installing {} in {} (once, and again when their pins change)", installation.name, dir.display());
        // A stamp that no longer matches is removed first, so that an install that fails half-way
        // is never taken for a finished one.
        let _ = std::fs::remove_file(dir.join(STAMP));
        if let Err(message) = (installation.install)(&dir) {
            panic!("installing {} in {} failed: {message}", installation.name, dir.display());
        }
        std::fs::write(dir.join(STAMP), format!("{key}\n"))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", dir.join(STAMP).display()));
    }
    drop(lock);
    dir
}

/// Holds an exclusive lock on the folder's lock file until dropped.
fn lock_folder(dir: &Path) -> File {
    let path = dir.join(LOCK);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    file.lock().unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    file
}

/// SHA-256 over the install steps' version and each pin file's name and contents.
fn pin_digest(dir: &Path, installation: &Installation) -> String {
    let mut hasher = Sha256::new();
    hasher.update(STEPS_VERSION.as_bytes());
    for pin in installation.pins {
        let path = dir.join(pin);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        hasher.update((pin.len() as u64).to_le_bytes());
        hasher.update(pin.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    format!("{:x}", hasher.finalize())
}

/// Fails at once, in one line, when a toolchain the installs need is missing.
fn require_toolchain(program: &str, args: &[&str], what_to_install: &str) {
    let works = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(works, "`{program}` is missing or does not work: install {what_to_install}");
}

fn require_node_and_npm() {
    require_toolchain("node", &["--version"], "Node.js 18 or newer (Debian: `apt-get install nodejs npm`)");
    require_toolchain("npm", &["--version"], "npm (Debian: `apt-get install npm`; Node.js from nodejs.org brings it)");
}

/// The Python 3 interpreter that makes the interop virtualenv (`PYTHON` or `python3`).
fn system_python() -> String {
    std::env::var("PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".to_owned())
}

/// `.venv`'s interpreter in `dir`.
fn venv_python_in(dir: &Path) -> PathBuf {
    let venv = dir.join(".venv");
    if cfg!(windows) { venv.join("Scripts").join("python.exe") } else { venv.join("bin").join("python") }
}

/// Runs `program args` in `dir`, returning its output in the error when it fails.
fn run(dir: &Path, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Result<(), String> {
    let program = program.as_ref();
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "`{} {}` failed ({})\n--- stdout ---\n{}\n--- stderr ---\n{}",
        program.to_string_lossy(),
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

fn install_npm_packages(dir: &Path) -> Result<(), String> {
    require_node_and_npm();
    run(dir, "npm", &["ci", "--no-audit", "--no-fund"])
}

fn install_interop(dir: &Path) -> Result<(), String> {
    require_node_and_npm();
    let python = system_python();
    require_toolchain(
        &python,
        &["-c", "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))"],
        "Python 3.10 or newer with its venv module (on Debian and Ubuntu: python3-venv)",
    );
    install_npm_packages(dir)?;
    let venv_python = venv_python_in(dir);
    if !venv_python.is_file() {
        run(dir, &python, &["-m", "venv", ".venv"])?;
    }
    run(
        dir,
        &venv_python,
        &["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", "requirements.txt"],
    )
}
