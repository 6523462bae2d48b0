//! The three published packages are ready to publish, and a new user's project builds.
//!
//! - `cargo package` packages `typed-mcp`, `typed-mcp-macros` and
//!   `typed-mcp-redis` and builds each from its own `.crate` file, as the registry would, so a
//!   file missing from `include` or a path outside the package fails here.
//! - Each package has what a registry page and docs.rs need (README, license files,
//!   keywords, categories, documentation, docs.rs metadata) and no placeholder URL.
//! - The minimum Rust version is honest: no dependency in the lock file declares a newer one.
//! - Every feature of `typed-mcp` builds on its own, with none, and all together.
//! - A crate outside the workspace, with the README's `[dependencies]` block as written and the
//!   three packages taken from this checkout, builds the README's complete elicitation
//!   program, which is `examples/src/bin/elicitation.rs` word for word.

use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tests::interop::{target_dir, workspace_root};

/// The packages a user depends on, by the directory each lives in.
const PUBLISHED: [(&str, &str); 3] =
    [("typed-mcp", "mcp-core"), ("typed-mcp-macros", "mcp-macros"), ("typed-mcp-redis", "mcp-redis")];

fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut command = Command::new(cargo);
    command.current_dir(workspace_root()).stdin(Stdio::null()).env("CARGO_TERM_COLOR", "never");
    command
}

/// Runs `command`, failing the test with its output when it fails or warns.
fn run_clean(command: Command, what: &str) -> Output {
    let output = run(command, what);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("warning"), "{what} warns:\n{stderr}");
    output
}

/// Runs `command`, failing the test with its output when it fails.
fn run(mut command: Command, what: &str) -> Output {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run cargo for {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn metadata(no_deps: bool) -> Value {
    let mut command = cargo();
    command.args(["metadata", "--format-version", "1", "--locked"]);
    if no_deps {
        command.arg("--no-deps");
    }
    let output = run(command, "cargo metadata");
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

fn package<'a>(metadata: &'a Value, name: &str) -> &'a Value {
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == name && p["source"].is_null())
        .unwrap_or_else(|| panic!("no workspace package `{name}`"))
}

/// `1.88` or `1.88.0` as comparable numbers.
fn version(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap_or_else(|_| panic!("rust-version `{text}`")));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn the_three_packages_package_and_build_from_their_crate_files() {
    forget_earlier_packagings();
    let mut command = cargo();
    // `--allow-dirty`: what is checked is what the files hold, committed or not.
    command.args(["package", "--locked", "--allow-dirty"]);
    for (name, _) in PUBLISHED {
        command.args(["--package", name]);
    }
    run(command, "cargo package");
}

/// Cargo verifies a package against the others through a local registry, which it unpacks
/// under `$CARGO_HOME/registry/src/-<hash>/` and never unpacks again for the same version: a
/// second run would build against the sources of the first. Those copies of our packages (and
/// only those: local registries' directories start with `-`) are removed first.
fn forget_earlier_packagings() {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")));
    let Some(sources) = home.map(|h| h.join("registry").join("src")) else { return };
    let Ok(registries) = std::fs::read_dir(&sources) else { return };
    for registry in registries.flatten().filter(|r| r.file_name().to_string_lossy().starts_with('-')) {
        for (name, _) in PUBLISHED {
            let unpacked = registry.path().join(format!("{name}-{}", env!("CARGO_PKG_VERSION")));
            if unpacked.is_dir() {
                let _ = std::fs::remove_dir_all(&unpacked);
            }
        }
    }
}

#[test]
fn each_package_has_what_a_registry_page_and_docs_rs_need() {
    let metadata = metadata(true);
    let ours = version(package(&metadata, "typed-mcp")["rust_version"].as_str().expect("typed-mcp has a rust-version"));
    for (name, dir) in PUBLISHED {
        let p = package(&metadata, name);
        for field in ["description", "license", "readme", "documentation"] {
            assert!(p[field].as_str().is_some_and(|v| !v.is_empty()), "{name} has no `{field}`");
        }
        assert_eq!(p["license"], "MIT OR Apache-2.0", "{name}");
        assert_eq!(p["documentation"].as_str(), Some(format!("https://docs.rs/{name}").as_str()), "{name}");
        assert!(p["repository"].is_null() && p["homepage"].is_null(), "{name} names a home it does not have yet: {p}");
        let keywords = p["keywords"].as_array().expect("keywords");
        assert!((1..=5).contains(&keywords.len()), "{name}: 1 to 5 keywords, not {keywords:?}");
        assert!(!p["categories"].as_array().expect("categories").is_empty(), "{name} has no categories");
        assert_eq!(version(p["rust_version"].as_str().expect("rust-version")), ours, "{name}");
        let rustdoc_args = &p["metadata"]["docs"]["rs"]["rustdoc-args"];
        assert!(
            rustdoc_args.as_array().is_some_and(|a| a.windows(2).any(|w| w[0] == "--cfg" && w[1] == "docsrs")),
            "{name}: [package.metadata.docs.rs] passes `--cfg docsrs`, so gated items show their feature: {rustdoc_args}"
        );

        let mut list = cargo();
        list.args(["package", "--list", "--allow-dirty", "--package", name]);
        let listed = String::from_utf8(run(list, "cargo package --list").stdout).expect("UTF-8 file list");
        let files: Vec<&str> = listed.lines().collect();
        for needed in ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "Cargo.toml", "src/lib.rs"] {
            assert!(files.contains(&needed), "{name} does not ship {needed}: {files:?}");
        }
        let unexpected: Vec<&&str> = files
            .iter()
            .filter(|f| {
                !f.starts_with("src/")
                    && ![
                        "README.md",
                        "LICENSE-MIT",
                        "LICENSE-APACHE",
                        "Cargo.toml",
                        "Cargo.toml.orig",
                        "Cargo.lock",
                        ".cargo_vcs_info.json",
                    ]
                    .contains(f)
            })
            .collect();
        assert!(unexpected.is_empty(), "{name} ships files a user's build does not need: {unexpected:?}");

        let readme = std::fs::read_to_string(workspace_root().join(dir).join("README.md")).expect("readable README");
        assert!(readme.contains("```rust"), "{name}'s README shows code");
        for text in [&readme, &std::fs::read_to_string(workspace_root().join(dir).join("Cargo.toml")).unwrap()] {
            assert!(!text.contains("example.invalid"), "{name} holds a placeholder URL");
        }
    }
}

#[test]
fn no_locked_dependency_needs_a_newer_rust_than_ours() {
    let metadata = metadata(false);
    let ours_text = package(&metadata, "typed-mcp")["rust_version"].as_str().expect("typed-mcp has a rust-version");
    let ours = version(ours_text);
    let newer: Vec<String> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| {
            let theirs = p["rust_version"].as_str()?;
            (version(theirs) > ours).then(|| format!("{} {} (rust-version {theirs})", p["name"], p["version"]))
        })
        .collect();
    assert!(
        newer.is_empty(),
        "these locked dependencies need a newer Rust than our rust-version {ours_text}: raise ours, or lock older \
         versions of them: {newer:?}"
    );
}

#[test]
fn every_feature_builds_alone_with_none_and_all_together() {
    let features = [
        "macros",
        "http",
        "http-client",
        "auth",
        "tracing-bridge",
        "rustls",
        "http-tls",
        "otel",
        "otel-sdk",
        "otel-otlp",
        "skills",
    ];
    let mut combinations: Vec<Vec<&str>> = vec![vec!["--no-default-features"], vec!["--all-features"]];
    for feature in features {
        combinations.push(vec!["--no-default-features", "--features", feature]);
    }
    // The client and the verifiers without TLS: what a user who brings a reqwest client builds.
    combinations.push(vec!["--no-default-features", "--features", "macros,http-client,auth"]);
    for args in combinations {
        let mut command = cargo();
        command.args(["check", "--quiet", "--package", "typed-mcp", "--lib"]).args(&args);
        // Warnings fail it too: an import used only under one feature is unused under the others.
        run_clean(command, &format!("cargo check -p typed-mcp {}", args.join(" ")));
    }
    for args in [vec![], vec!["--all-features"]] {
        let mut command = cargo();
        command.args(["check", "--quiet", "--package", "typed-mcp-redis", "--lib"]).args(&args);
        run_clean(command, &format!("cargo check -p typed-mcp-redis {}", args.join(" ")));
    }
}

/// The code of the first fenced block in `text` after `heading` whose info string starts with
/// `fence` (e.g. "rust" or "toml").
fn block_after<'a>(text: &'a str, heading: &str, fence: &str) -> &'a str {
    let section = text.split_once(heading).unwrap_or_else(|| panic!("README.md has no `{heading}`")).1;
    let mut rest = section;
    loop {
        let (_, after) = rest.split_once("```").unwrap_or_else(|| panic!("no ```{fence} block after `{heading}`"));
        let (info, body) = after.split_once('\n').expect("a fence line");
        let (code, tail) = body.split_once("\n```").expect("a closed block");
        if info.starts_with(fence) {
            return code;
        }
        rest = tail;
    }
}

#[test]
fn the_readme_is_a_front_door_with_both_commands_on_its_first_screen() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines: the front door fits in about 250; the rest goes to the guide");
    let first_screen: String = readme.lines().take(30).collect::<Vec<_>>().join("\n");
    for command in ["cargo run -p examples --bin elicitation", "cargo test --workspace", "cargo test -p typed-mcp"] {
        assert!(first_screen.contains(command), "the README's first screen does not show `{command}`");
    }
    let program = block_after(&readme, "\n## A first elicitation\n", "rust");
    let example = std::fs::read_to_string(workspace_root().join("examples/src/bin/elicitation.rs")).expect("example");
    assert_eq!(
        program.trim_end(),
        example.trim_end(),
        "the README's complete elicitation program is examples/src/bin/elicitation.rs word for word"
    );
}

#[test]
fn a_new_project_with_the_readmes_dependencies_builds_its_elicitation_program() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let dependencies = block_after(&readme, "\n## Install\n", "toml");
    assert!(dependencies.trim_start().starts_with("[dependencies]"), "the Install block is a [dependencies] table");
    let program = block_after(&readme, "\n## A first elicitation\n", "rust");

    // Below the workspace's target directory, so that the repository's `.cargo/config.toml`
    // (debug-info settings) applies and the dependencies already built are reused; its own
    // `[workspace]` table keeps it out of ours.
    let target = target_dir();
    let project = target.join("readme-project");
    std::fs::create_dir_all(project.join("src")).expect("project directory");
    let path = |dir: &str| root.join(dir).display().to_string().replace('\\', "/");
    let manifest = format!(
        "[package]\nname = \"readme-project\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [workspace]\n\n{dependencies}\n\
         # The third package, for a shared deployment.\ntyped-mcp-redis = \"0.1\"\n\n\
         # The packages of this checkout, under the names they are published as.\n[patch.crates-io]\n\
         typed-mcp = {{ path = \"{}\" }}\ntyped-mcp-macros = {{ path = \"{}\" }}\ntyped-mcp-redis = {{ path = \"{}\" }}\n",
        path("mcp-core"),
        path("mcp-macros"),
        path("mcp-redis"),
    );
    std::fs::write(project.join("Cargo.toml"), manifest).expect("manifest");
    std::fs::write(project.join("src/main.rs"), program).expect("main.rs");
    // The versions this repository is tested with.
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).expect("lock file");

    let mut command = cargo();
    command.current_dir(&project).args(["build", "--quiet"]).env("CARGO_TARGET_DIR", &target);
    run_clean(command, "building the README's program in a new project");
    let binary = target.join("debug").join(format!("readme-project{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.is_file(), "no binary at {}", binary.display());
}
