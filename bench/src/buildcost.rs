//! Build cost: a clean release build of the benchmark server crate, and a release rebuild after
//! a one-line edit inside a tool body, each in a fresh copy with its own target directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The line every server's `form` tool body carries, and what the edit turns it into.
const EDIT_FROM: &str = r#"let label = "contact"; // bench: edited line"#;
const EDIT_TO: &str = r#"let label = "contact card"; // bench: edited line"#;

/// What one build measured.
#[derive(Debug, Clone, Copy)]
pub struct BuildCost {
    /// Clean release build of the crate and all its dependencies.
    pub clean: Duration,
    /// Release rebuild after the one-line edit.
    pub rebuild: Duration,
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The member's manifest as a stand-alone crate: workspace-inherited keys spelled out, relative
/// paths made absolute, and a `[workspace]` of its own.
fn standalone_manifest(member: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(member.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for line in text.lines() {
        let line = match line.trim() {
            "version.workspace = true" => r#"version = "0.0.0""#.to_owned(),
            "edition.workspace = true" => r#"edition = "2024""#.to_owned(),
            "publish.workspace = true" => "publish = false".to_owned(),
            _ => match line.split_once("path = \"../") {
                Some((before, rest)) => {
                    let (relative, after) = rest.split_once('"').ok_or("unterminated path")?;
                    let absolute = member.join(format!("../{relative}"));
                    let absolute = absolute.canonicalize().map_err(|e| format!("{}: {e}", absolute.display()))?;
                    format!("{before}path = \"{}\"{after}", absolute.display())
                }
                None => line.to_owned(),
            },
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("\n[workspace]\n");
    Ok(out)
}

fn cargo_build(dir: &Path) -> Result<Duration, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let jobs = std::env::var("CARGO_BUILD_JOBS").unwrap_or_else(|_| "2".into());
    let start = Instant::now();
    let status = Command::new(cargo)
        .args(["build", "--release", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("CARGO_BUILD_JOBS", jobs)
        .env_remove("CARGO_MANIFEST_DIR")
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let elapsed = start.elapsed();
    if !status.success() {
        return Err(format!("cargo build failed in {}", dir.display()));
    }
    Ok(elapsed)
}

/// Builds a fresh copy of `bench/servers/<server>` in `scratch`, edits it, rebuilds it, and
/// removes the copy.
pub fn measure(bench_dir: &Path, server: &str, scratch: &Path) -> Result<BuildCost, String> {
    let member = bench_dir.join("servers").join(server);
    let dir: PathBuf = scratch.join(server);
    let _ = std::fs::remove_dir_all(&dir);
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    copy_dir(&member.join("src"), &dir.join("src")).map_err(io)?;
    std::fs::write(dir.join("Cargo.toml"), standalone_manifest(&member)?).map_err(io)?;
    // The same dependency versions as the benchmark servers.
    std::fs::copy(bench_dir.join("Cargo.lock"), dir.join("Cargo.lock")).map_err(io)?;
    let result = (|| {
        let clean = cargo_build(&dir)?;
        let main = dir.join("src/main.rs");
        let source = std::fs::read_to_string(&main).map_err(io)?;
        if !source.contains(EDIT_FROM) {
            return Err(format!("{} has no line `{EDIT_FROM}` to edit", main.display()));
        }
        std::fs::write(&main, source.replacen(EDIT_FROM, EDIT_TO, 1)).map_err(io)?;
        let rebuild = cargo_build(&dir)?;
        Ok(BuildCost { clean, rebuild })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
