//! The API documentation builds without a single rustdoc warning (a broken intra-doc link, an
//! unclosed HTML tag, a code block that does not parse): once for the whole workspace, with the
//! features the tests enable, and once for `typed-mcp` alone with its default features, which is
//! what a user who adds the crate and runs `cargo doc` gets.

use std::process::{Command, Stdio};

use tests::interop::workspace_root;

fn rustdoc_is_clean(args: &[&str]) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let output = Command::new(&cargo)
        .arg("doc")
        .args(args)
        .args(["--no-deps", "--color", "never"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "`RUSTDOCFLAGS=\"-D warnings\" cargo doc {} --no-deps` failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn workspace_docs_build_without_warnings() {
    rustdoc_is_clean(&["--workspace"]);
}

#[test]
fn mcp_core_docs_build_without_warnings_with_default_features() {
    rustdoc_is_clean(&["-p", "typed-mcp"]);
}
