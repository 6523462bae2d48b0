//! The API documentation builds without a single rustdoc warning (a broken intra-doc link, an
//! unclosed HTML tag, a code block that does not parse): once for the whole workspace as docs.rs
//! builds a crate (every feature, `--cfg docsrs`), where every feature-gated item must carry
//! the badge naming its feature, and once for `typed-mcp` alone with its default features,
//! which is what a user who adds the crate and runs `cargo doc` gets.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use tests::interop::{target_dir, workspace_root};

fn rustdoc_is_clean(args: &[&str], docs_rs: bool) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut command = Command::new(&cargo);
    command.arg("doc").args(args).args(["--no-deps", "--color", "never"]);
    if docs_rs {
        // docs.rs documents with a nightly rustdoc and `--cfg docsrs`, which turns on
        // `feature(doc_cfg)`; on a stable toolchain, RUSTC_BOOTSTRAP lets rustdoc do the same.
        command.env("RUSTDOCFLAGS", "-D warnings --cfg docsrs").env("RUSTC_BOOTSTRAP", "1");
    } else {
        command.env("RUSTDOCFLAGS", "-D warnings");
    }
    let output = command.current_dir(workspace_root()).stdin(Stdio::null()).output().expect("cargo runs");
    assert!(
        output.status.success(),
        "`cargo doc {} --no-deps` ({}) failed:\n{}",
        args.join(" "),
        if docs_rs { "as docs.rs builds it" } else { "plain" },
        String::from_utf8_lossy(&output.stderr)
    );
}

fn doc_dir() -> PathBuf {
    target_dir().join("doc")
}

#[test]
fn workspace_docs_build_as_docs_rs_does_with_a_feature_badge_on_gated_items() {
    rustdoc_is_clean(&["--workspace", "--all-features"], true);
    // A page of each feature's items, and the feature its badge must name.
    let gated = [
        ("typed_mcp/transport/http/struct.HttpConfig.html", "http"),
        ("typed_mcp/auth/struct.JwtVerifier.html", "auth"),
        ("typed_mcp/client/oauth/index.html", "http-client"),
        ("typed_mcp/server/struct.ClientLogLayer.html", "tracing-bridge"),
        ("typed_mcp/tls/struct.ServerCertificate.html", "http-tls"),
        ("typed_mcp/attr.tool.html", "macros"),
        ("typed_mcp/telemetry/struct.Telemetry.html", "otel-sdk"),
        ("typed_mcp/skills/struct.Skills.html", "skills"),
        ("typed_mcp_redis/testing/index.html", "testing"),
    ];
    for (page, feature) in gated {
        let path = doc_dir().join(page);
        let html = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            html.contains(&format!("crate feature <code>{feature}</code>")),
            "{page} does not say it needs the `{feature}` feature"
        );
    }
}

#[test]
fn typed_mcp_docs_build_without_warnings_with_default_features() {
    rustdoc_is_clean(&["-p", "typed-mcp"], false);
}

/// The public modules `mcp-core/src/lib.rs` declares, each with the line of its declaration:
/// `pub mod name;` or `pub mod name {`, unless the attributes just above it hide it from the
/// documentation (`#[doc(hidden)]`).
fn public_modules(lib: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = lib.lines().collect();
    let mut modules = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("pub mod ") else { continue };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let attributes = lines[..index].iter().rev().take_while(|l| l.trim_start().starts_with("#["));
        if attributes.clone().any(|a| a.contains("doc(hidden)")) {
            continue;
        }
        modules.push((index + 1, name));
    }
    modules
}

/// The crate documentation of `lib.rs`: its leading `//!` lines.
fn crate_docs(lib: &str) -> String {
    lib.lines().map_while(|line| line.strip_prefix("//!")).collect::<Vec<_>>().join("\n")
}

/// The public modules of `lib` that its map of modules (the crate docs after `# Layers`) does
/// not name, as a link (`[`name`]`) or as a feature-gated name (`` `name` (feature …``).
fn left_out_of_the_map(lib: &str) -> Vec<String> {
    let docs = crate_docs(lib);
    let map = docs.split_once("# Layers").map_or("", |(_, map)| map);
    public_modules(lib)
        .into_iter()
        .filter(|(_, name)| !map.contains(&format!("[`{name}`]")) && !map.contains(&format!("`{name}` (")))
        .map(|(line, name)| format!("`{name}` (lib.rs:{line})"))
        .collect()
}

#[test]
fn the_crate_docs_map_names_every_public_module() {
    let path = workspace_root().join("mcp-core/src/lib.rs");
    let lib = std::fs::read_to_string(&path).expect("mcp-core/src/lib.rs is readable");
    assert!(crate_docs(&lib).contains("# Layers"), "the crate docs have a `# Layers` map");
    let modules = public_modules(&lib);
    assert!(modules.len() >= 15, "too few public modules found in lib.rs: {modules:?}");
    let missing = left_out_of_the_map(&lib);
    assert!(
        missing.is_empty(),
        "the crate docs' map of modules (`# Layers` in lib.rs) leaves out {}: say where each sits and what it holds",
        missing.join(", ")
    );
}

#[test]
fn the_module_map_check_sees_a_module_left_out() {
    let lib = "//! # Layers\n//! 1. [`protocol`]: wire types.\n//! `gated` (feature `x`): more.\n\n\
               pub mod protocol;\n#[cfg(feature = \"x\")]\npub mod gated;\npub mod newcomer;\n#[doc(hidden)]\npub mod hidden;\n";
    let modules: Vec<String> = public_modules(lib).into_iter().map(|(_, name)| name).collect();
    assert_eq!(modules, ["protocol", "gated", "newcomer"]);
    assert_eq!(left_out_of_the_map(lib), ["`newcomer` (lib.rs:8)"]);
}
