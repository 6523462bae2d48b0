//! The skills extension with the TypeScript SDK v2 (pinned in `tests/interop/`), both ways and
//! in both eras; the script is `tests/interop/v2_skills.mjs`.
//!
//! - Their client (`SkillsClient` of `@modelcontextprotocol/client`) against our `skills`
//!   example, over stdio and Streamable HTTP: lists, gets, reads every file verified (digest,
//!   size, and the frontmatter of `SKILL.md`), reads a skill's folder, and gets -32602 for a
//!   skill not served.
//! - Our client against their server (`loadSkills` of `@modelcontextprotocol/server`, serving
//!   the same folder over stdio): lists, gets, loads each skill and reads each file verified.

use std::time::Duration;

use tests::interop::{example_binary, interop_dir, require_node_package, run_with_deadline, workspace_root};
use tests::stdio::within;
use tokio::process::Command;
use typed_mcp::client::{Client, ClientError, ProtocolEra};

use crate::support::listening::Listening;

const SCRIPT_DEADLINE: Duration = Duration::from_secs(120);

fn their_client(era: &str, target: &[&str]) {
    println!("node {}", require_node_package("@modelcontextprotocol/client"));
    let output = run_with_deadline(
        tests::interop::node()
            .args(["v2_skills.mjs", "client", era])
            .args(target)
            .current_dir(interop_dir())
            .env_remove("PORT"),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains(&format!("all skills checks passed ({era})")),
        "the v2 client failed ({era}, {target:?}): {}",
        output.describe()
    );
}

fn over_stdio(era: &str) {
    let binary = example_binary("skills");
    their_client(era, &["--stdio", &binary.display().to_string()]);
}

fn over_http(era: &str) {
    let server = Listening::start(&example_binary("skills"), "skills", &[]);
    their_client(era, &["--http", &server.url]);
}

#[test]
fn their_client_reads_our_skills_over_stdio_in_2025_11_25() {
    over_stdio("2025-11-25");
}

#[test]
fn their_client_reads_our_skills_over_stdio_in_2026_07_28() {
    over_stdio("2026-07-28");
}

#[test]
fn their_client_reads_our_skills_over_http_in_2025_11_25() {
    over_http("2025-11-25");
}

#[test]
fn their_client_reads_our_skills_over_http_in_2026_07_28() {
    over_http("2026-07-28");
}

/// Their server, over stdio, serving the `skills` example's folder.
fn their_server() -> Command {
    require_node_package("@modelcontextprotocol/server");
    let mut command = Command::new(tests::interop::node_program());
    command
        .arg(interop_dir().join("v2_skills.mjs"))
        .arg("server")
        .arg(workspace_root().join("examples").join("skills"))
        .current_dir(interop_dir())
        .kill_on_drop(true);
    command
}

async fn our_client(era: ProtocolEra) {
    let client =
        within("connecting", Client::builder("rust-skills", "1.0.0").protocol_era(era).connect_stdio(their_server()))
            .await
            .unwrap();
    assert!(client.server_supports_skills());
    let skills = within("listing", client.list_skills()).await.unwrap();
    let uris: Vec<_> = skills.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, ["skill://release-notes/SKILL.md", "skill://team/code-review/SKILL.md"]);
    let review = within("getting", client.get_skill("skill://team/code-review/SKILL.md")).await.unwrap();
    assert_eq!(review.name(), Some("code-review"));
    let mut read = 0;
    for entry in &skills {
        let skill = within("loading", client.load_skill(entry)).await.unwrap();
        assert!(skill.instructions().trim_start().starts_with("# "), "{}", skill.instructions());
        for file in skill.files() {
            let bytes = within("reading", client.read_skill_file(entry, &file.uri)).await.unwrap();
            let on_disk = workspace_root().join("examples/skills").join(file.uri.trim_start_matches("skill://"));
            assert_eq!(bytes, std::fs::read(&on_disk).unwrap(), "{}", file.uri);
            read += 1;
        }
    }
    assert_eq!(read, 3, "STYLE.md, collect.sh and CHECKLIST.md");
    let unknown = within("getting", client.get_skill("skill://not-served/SKILL.md")).await.unwrap_err();
    assert!(matches!(&unknown, ClientError::Rpc(e) if e.code == -32602), "{unknown}");
    client.close().await;
}

#[tokio::test]
async fn our_client_reads_their_skills_in_a_2025_11_25_session() {
    our_client(ProtocolEra::Y2025).await;
}

#[tokio::test]
async fn our_client_reads_their_skills_in_2026_07_28() {
    our_client(ProtocolEra::Y2026).await;
}
