//! The skills extension between our server and our client, in process, in both eras: the
//! `skills` example's folder served and read back verified; the rules a skill folder must
//! follow, each failing `build()` with the file named; bad requests answered with -32602 while
//! the server goes on serving.

use std::path::{Path, PathBuf};

use typed_mcp::BuildError;
use typed_mcp::client::{ClientError, ProtocolEra, SkillReadError};
use typed_mcp::prelude::*;
use typed_mcp::protocol::skills::digest;
use typed_mcp::skills::{SkillResources, Skills};
use typed_mcp::testing::{ElicitationScript, connect_in_era};

fn example_skills() -> PathBuf {
    tests::interop::workspace_root().join("examples").join("skills")
}

fn server() -> Server {
    Server::builder("skills", "1.0.0")
        .skills(Skills::dir(example_skills()))
        .build()
        .expect("the example's skills are valid")
}

async fn reads_back_verified(era: ProtocolEra) {
    let client = connect_in_era(&server(), &ElicitationScript::new(), era).await.into_inner();
    assert!(client.server_supports_skills());
    let skills = client.list_skills().await.unwrap();
    let uris: Vec<_> = skills.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, ["skill://release-notes/SKILL.md", "skill://team/code-review/SKILL.md"]);
    assert_eq!(client.get_skill("skill://team/code-review/SKILL.md").await.unwrap(), skills[1]);

    let notes = client.load_skill(&skills[0]).await.unwrap();
    assert_eq!(notes.name(), "release-notes");
    assert!(notes.instructions().starts_with("# Release notes"), "{}", notes.instructions());
    assert_eq!(notes.frontmatter()["metadata"]["version"], "1.0");
    let files: Vec<_> = notes.files().map(|f| f.uri.clone()).collect();
    assert_eq!(files, ["skill://release-notes/references/STYLE.md", "skill://release-notes/scripts/collect.sh"]);
    for file in notes.files() {
        let bytes = client.read_skill_file(&notes.entry, &file.uri).await.unwrap();
        let on_disk = example_skills().join(file.uri.trim_start_matches("skill://"));
        assert_eq!(bytes, std::fs::read(on_disk).unwrap(), "{}", file.uri);
    }
    // Only listed files are read: nothing to verify another against.
    let other = client.read_skill_file(&notes.entry, "skill://team/code-review/SKILL.md").await.unwrap_err();
    assert!(matches!(other, SkillReadError::NotListed { .. }), "{other}");

    let unknown = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
    assert!(matches!(&unknown, ClientError::Rpc(e) if e.code == -32602), "{unknown}");
    client.close().await;
}

#[tokio::test]
async fn our_client_reads_our_skills_verified_in_a_2025_11_25_session() {
    reads_back_verified(ProtocolEra::Y2025).await;
}

#[tokio::test]
async fn our_client_reads_our_skills_verified_in_2026_07_28() {
    reads_back_verified(ProtocolEra::Y2026).await;
}

#[tokio::test]
async fn a_listing_that_disagrees_with_the_file_is_refused() {
    let client = connect_in_era(&server(), &ElicitationScript::new(), ProtocolEra::Y2025).await.into_inner();
    let mut entry = client.list_skills().await.unwrap().remove(0);
    // The same bytes under another description: the frontmatter check catches it.
    entry.frontmatter.insert("description".into(), "Does something else.".into());
    let refused = client.load_skill(&entry).await.unwrap_err();
    assert!(
        matches!(&refused, SkillReadError::Frontmatter { problem, .. } if problem.contains("description")),
        "{refused}"
    );
    // A listed digest the bytes do not have.
    let SkillResources::Files(files) = &mut entry.resources else { panic!("a manifest") };
    files[0].digest = digest(b"something else");
    let refused = client.load_skill(&entry).await.unwrap_err();
    assert!(matches!(refused, SkillReadError::Digest { .. }), "{refused}");
    // And a listed size they do not have.
    let SkillResources::Files(files) = &mut entry.resources else { panic!("a manifest") };
    files[0].size += 1;
    let refused = client.load_skill(&entry).await.unwrap_err();
    assert!(matches!(refused, SkillReadError::Size { .. }), "{refused}");
    client.close().await;
}

#[tokio::test]
async fn bad_skills_requests_are_invalid_params_and_the_server_goes_on() {
    let client = connect_in_era(&server(), &ElicitationScript::new(), ProtocolEra::Y2025).await.into_inner();
    let bad: [(&str, serde_json::Value); 5] = [
        ("skills/list", serde_json::json!({"cursor": "not a cursor"})),
        ("skills/get", serde_json::json!({})),
        ("skills/get", serde_json::json!({"uri": 7})),
        ("resources/directory/read", serde_json::json!({"uri": "skill://release-notes/SKILL.md"})),
        ("resources/directory/read", serde_json::json!({"uri": "skill://release-notes", "cursor": "99"})),
    ];
    for (method, params) in bad {
        let error = client.request::<_, serde_json::Value>(method, &params).await.unwrap_err();
        assert!(matches!(&error, ClientError::Rpc(e) if e.code == -32602), "{method} {params}: {error}");
    }
    let folder: serde_json::Value = client
        .request("resources/directory/read", &serde_json::json!({"uri": "skill://release-notes/references"}))
        .await
        .unwrap();
    assert_eq!(folder["resources"][0]["uri"], "skill://release-notes/references/STYLE.md");
    assert_eq!(client.list_skills().await.unwrap().len(), 2);
    client.close().await;
}

#[tokio::test]
async fn without_skills_the_methods_are_not_offered() {
    let server = Server::builder("plain", "1.0.0").build().unwrap();
    let client = connect_in_era(&server, &ElicitationScript::new(), ProtocolEra::Y2025).await.into_inner();
    assert!(!client.server_supports_skills());
    let error = client.list_skills().await.unwrap_err();
    assert!(matches!(&error, ClientError::Rpc(e) if e.code == -32601), "{error}");
    client.close().await;
}

#[test]
fn the_capability_declares_the_extension_and_directory_read() {
    let capabilities = |skills: Skills| {
        let server = Server::builder("s", "1").skills(skills).build().unwrap();
        tokio::runtime::Runtime::new().unwrap().block_on(async {
            let client = typed_mcp::testing::connect(&server).await;
            let caps = client.server_capabilities().clone();
            client.close().await;
            caps
        })
    };
    let on = capabilities(Skills::dir(example_skills()));
    assert_eq!(on.extensions.unwrap()["io.modelcontextprotocol/skills"], serde_json::json!({"directoryRead": true}));
    assert!(on.resources.is_some());
    let off = capabilities(Skills::dir(example_skills()).directory_read(false));
    assert_eq!(off.extensions.unwrap()["io.modelcontextprotocol/skills"], serde_json::json!({}));
}

/// A folder of skills written for one test, removed after it.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str, files: &[(&str, &str)]) -> Folder {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("skills-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Folder(root)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn build_error(root: &Path) -> (String, String) {
    match Server::builder("s", "1").skills(Skills::dir(root)).build() {
        Err(BuildError::InvalidSkill { file, rule }) => (file, rule),
        other => panic!("expected an invalid skill, got {other:?}"),
    }
}

#[test]
fn a_folder_that_breaks_a_rule_fails_build_with_the_file_named() {
    let good = "---\nname: pdf\ndescription: Fills forms.\n---\n";
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        ("no-frontmatter", &[("pdf/SKILL.md", "# PDF\n")], "pdf/SKILL.md", "YAML frontmatter"),
        ("bad-yaml", &[("pdf/SKILL.md", "---\nname: [pdf\n---\n")], "pdf/SKILL.md", "not a YAML mapping"),
        ("no-description", &[("pdf/SKILL.md", "---\nname: pdf\n---\n")], "pdf/SKILL.md", "`description`"),
        ("bad-name", &[("Pdf/SKILL.md", "---\nname: Pdf\ndescription: d\n---\n")], "Pdf/SKILL.md", "naming rules"),
        ("folder-name", &[("forms/SKILL.md", good)], "forms/SKILL.md", "named after the skill"),
        ("duplicate", &[("a/pdf/SKILL.md", good), ("b/pdf/SKILL.md", good)], "b/pdf/SKILL.md", "unique"),
        (
            "reserved",
            &[("pdf/SKILL.md", "---\nname: pdf\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n")],
            "pdf/SKILL.md",
            "reserved",
        ),
    ];
    for (name, files, file, rule) in cases {
        let folder = Folder::new(name, files);
        let (named, broken) = build_error(&folder.0);
        assert_eq!(Path::new(&named), folder.0.join(file), "{name}: {broken}");
        assert!(broken.contains(rule), "{name}: {broken}");
    }
    let missing = build_error(Path::new("/nonexistent/skills"));
    assert_eq!(missing.0, "/nonexistent/skills");
}

#[test]
fn the_limits_of_a_skill_fail_build() {
    let mut files = vec![("pdf/SKILL.md".to_owned(), "---\nname: pdf\ndescription: d\n---\n".to_owned())];
    files.extend((0..512).map(|i| (format!("pdf/refs/{i}.md"), String::new())));
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let folder = Folder::new("too-many", &borrowed);
    let (file, rule) = build_error(&folder.0);
    assert_eq!(Path::new(&file), folder.0.join("pdf"));
    assert!(rule.contains("513 files") && rule.contains("at most 512"), "{rule}");
}

#[tokio::test]
async fn skills_compiled_in_are_served_as_the_folder_is() {
    let embedded = Server::builder("skills", "1.0.0")
        .skills(typed_mcp::skills::embed_skills!("../examples/skills"))
        .build()
        .expect("the embedded skills are valid");
    let listed = |server: Server| async move {
        let client = typed_mcp::testing::connect(&server).await;
        let skills = client.list_skills().await.unwrap();
        client.close().await;
        skills
    };
    let from_binary = listed(embedded).await;
    assert_eq!(from_binary.len(), 2);
    assert_eq!(from_binary, listed(server()).await, "the same entries, digests included");
}

#[tokio::test]
async fn a_watched_folder_that_changes_is_served_anew_and_announced() {
    let skill = |name: &str| format!("---\nname: {name}\ndescription: Does {name}.\n---\n# {name}\n");
    let folder = Folder::new("watched", &[("pdf/SKILL.md", &skill("pdf"))]);
    let interval = std::time::Duration::from_millis(50);
    let server = Server::builder("s", "1").skills(Skills::dir(&folder.0).watch(interval)).build().unwrap();
    let client = typed_mcp::testing::connect(&server).await;
    let resources = client.server_capabilities().resources.clone().expect("resources declared");
    assert_eq!(resources.list_changed, Some(true));
    let mut notifications = client.notifications();
    assert_eq!(client.list_skills().await.unwrap().len(), 1);

    // A skill added: served, and the resource list announced as changed.
    std::fs::create_dir_all(folder.0.join("docx")).unwrap();
    std::fs::write(folder.0.join("docx/SKILL.md"), skill("docx")).unwrap();
    let announced = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            if let Ok(typed_mcp::client::ServerNotification::ResourceListChanged) = notifications.recv().await {
                return;
            }
        }
    })
    .await;
    assert!(announced.is_ok(), "no notifications/resources/list_changed after a skill was added");
    let skills = client.list_skills().await.unwrap();
    assert_eq!(skills.len(), 2);
    let docx = client.load_skill(&skills[0]).await.unwrap();
    assert_eq!(docx.name(), "docx");

    // A change that breaks a rule: refused, and the skills before stay served.
    std::fs::write(folder.0.join("docx/SKILL.md"), skill("word")).unwrap();
    tokio::time::sleep(interval * 6).await;
    assert_eq!(client.list_skills().await.unwrap().len(), 2);
    let error = server.reload_skills().await.unwrap_err();
    assert_eq!(Path::new(&error.file), folder.0.join("docx/SKILL.md"), "{error}");
    // Nothing changed since the last reload: nothing to announce.
    std::fs::write(folder.0.join("docx/SKILL.md"), skill("docx")).unwrap();
    assert!(server.reload_skills().await.unwrap() || client.list_skills().await.unwrap().len() == 2);
    assert!(!server.reload_skills().await.unwrap());
    client.close().await;
}

#[test]
fn watching_without_a_runtime_is_a_build_error() {
    let result = Server::builder("s", "1")
        .skills(Skills::dir(example_skills()).watch(std::time::Duration::from_secs(1)))
        .build();
    assert!(
        matches!(&result, Err(BuildError::InvalidSkill { rule, .. }) if rule.contains("Tokio runtime")),
        "{result:?}"
    );
}

#[tokio::test]
async fn pages_of_one_skill_are_walked_to_the_end() {
    let server = Server::builder("s", "1").skills(Skills::dir(example_skills()).page_size(1)).build().unwrap();
    let client = typed_mcp::testing::connect(&server).await;
    let first: serde_json::Value = client.request("skills/list", &serde_json::json!({})).await.unwrap();
    assert_eq!(first["skills"].as_array().map(Vec::len), Some(1));
    let cursor = first["nextCursor"].as_str().expect("a second page").to_owned();
    let second: serde_json::Value =
        client.request("skills/list", &serde_json::json!({"cursor": cursor})).await.unwrap();
    assert_eq!(second["skills"][0]["uri"], "skill://team/code-review/SKILL.md");
    assert!(second.get("nextCursor").is_none(), "{second}");
    let all = client.list_skills().await.unwrap();
    assert_eq!(all.len(), 2);
    client.close().await;
}
