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
