//! # Agent skills (feature `skills`)
//!
//! An agent skill is a folder of instructions for a model: a `SKILL.md` whose YAML frontmatter
//! says what the skill is for (`name`, `description`), followed by the instructions in
//! Markdown, and the files those instructions refer to (references, templates, scripts). The
//! skills extension of MCP (`io.modelcontextprotocol/skills`) lets a server offer skills and a
//! host read them: `skills/list` tells the host which skills there are and lists each file with
//! its SHA-256 digest and size; the host reads a skill's `SKILL.md` when the skill fits the
//! task, and its other files when the instructions call for them, as resources
//! `skill://<skill-path>/<file>`.
//!
//! ## Serving a folder of skills
//!
//! ```text
//! skills/
//!   release-notes/
//!     SKILL.md                 ---\nname: release-notes\ndescription: …\n---\n# Release notes …
//!     references/STYLE.md
//!     scripts/collect.sh
//!   team/                      a folder that groups skills: skill://team/code-review/SKILL.md
//!     code-review/
//!       SKILL.md
//!       CHECKLIST.md
//! ```
//!
//! ```no_run
//! use typed_mcp::prelude::*;
//! use typed_mcp::skills::Skills;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder("skills", "1.0.0").skills(Skills::dir("skills")).build()?;
//! server.serve_stdio_or_http().await?;
//! # Ok(()) }
//! ```
//!
//! `build()` reads the folder and checks every skill; the first rule a skill breaks is a
//! [`BuildError::InvalidSkill`](crate::BuildError::InvalidSkill) naming the file and the rule,
//! so a broken skill never reaches a host:
//!
//! ```text
//! skill skills/forms/SKILL.md: the skill's folder is `forms` but its name is `pdf`: the folder must be named after the skill
//! ```
//!
//! The rules are the table of [`crate::skills`]: frontmatter present and a mapping, `name` by
//! the Agent Skills naming rules and equal to the folder's name, unique across the server,
//! `description` present, no `metadata` key under the reserved prefix
//! `io.modelcontextprotocol/`, at most 512 files and 16 MiB per skill. [`Skills::check`]
//! runs the same checks without a server, for a test of your own skills folder:
//!
//! ```no_run
//! # use typed_mcp::skills::Skills;
//! #[test]
//! fn the_skills_are_valid() {
//!     Skills::dir(concat!(env!("CARGO_MANIFEST_DIR"), "/skills")).check().unwrap();
//! }
//! ```
//!
//! What the server then answers:
//!
//! | request | answer |
//! | --- | --- |
//! | `skills/list` | one entry per skill, in path order: `uri` (its `SKILL.md`), `frontmatter` (as JSON), `resources` (every file as `{uri, digest, size}`); pages of [`Skills::page_size`] skills, never splitting one; `ttlMs` and `cacheScope` in the 2026-07-28 era |
//! | `skills/get` | the entry of the skill whose `SKILL.md` is `uri`; -32602 for any other URI |
//! | `resources/read` | a file's content: text when it is UTF-8 (`SKILL.md` as `text/markdown`), else bytes |
//! | `resources/list` | every file, `SKILL.md` named and described by its frontmatter |
//! | `resources/directory/read` | a skill folder's direct children, subfolders as `inode/directory`, paged; -32602 for a URI that is not a folder of a skill. Declared as `directoryRead: true`; [`Skills::directory_read`]`(false)` turns it off |
//!
//! ## Watching the folder
//!
//! [`Skills::watch`]`(interval)` has the server look at the folder every `interval`: when a
//! file was added, removed or changed, it reads the skills again, serves the new ones, and
//! sends `notifications/resources/list_changed` (declaring `resources.listChanged`). A change
//! that breaks a rule is logged and refused; the skills before stay served.
//! [`Server::reload_skills`](crate::server::Server::reload_skills) does the same on demand.
//!
//! ## Skills compiled into the program
//!
//! One executable can carry its skills: `embed_skills!("skills")` (feature `macros`, on by
//! default) is a [`Skills`] of every file under `skills/`, relative to the crate's
//! `Cargo.toml`, each embedded with `include_bytes!`, so Cargo rebuilds the program when one of
//! them changes (a file added to the folder is picked up by the crate's next build):
//!
//! ```ignore
//! let server = Server::builder("skills", "1.0.0").skills(typed_mcp::skills::embed_skills!("skills")).build()?;
//! ```
//!
//! Or give [`Skills::files`] the files yourself, by their path under the skills folder. Either
//! way they are checked by `build()` exactly as a folder is.
//!
//! ```
//! use typed_mcp::prelude::*;
//! use typed_mcp::skills::Skills;
//!
//! const FILES: &[(&str, &[u8])] = &[
//!     ("greeting/SKILL.md", b"---\nname: greeting\ndescription: Greets the user by name.\n---\n\nAsk for their name, then greet them.\n"),
//!     // ("greeting/references/TONE.md", include_bytes!("../skills/greeting/references/TONE.md")),
//! ];
//!
//! let server = Server::builder("greeter", "1.0.0").skills(Skills::files("skills/", FILES.iter().copied())).build()?;
//! # let _ = server;
//! # Ok::<(), typed_mcp::BuildError>(())
//! ```
//!
//! ## Reading skills from a host
//!
//! A host lists the skills when it connects and shows the model their names and descriptions;
//! nothing else is read until a skill is needed. Loading it reads its `SKILL.md`, checks the
//! bytes against the size and digest of the listing, and compares its frontmatter with the
//! listed one field by field; each other file is read the same way when asked for. Content that
//! fails a check is never handed over: the call fails with a [`SkillReadError`] that says which
//! check.
//!
//! ```no_run
//! use typed_mcp::client::{Client, SkillReadError};
//!
//! # async fn run(client: Client) -> Result<(), Box<dyn std::error::Error>> {
//! for entry in client.list_skills().await? {
//!     println!("{}: {}", entry.name().unwrap_or("?"), entry.description().unwrap_or(""));
//! }
//! let entry = client.get_skill("skill://release-notes/SKILL.md").await?;
//! match client.load_skill(&entry).await {
//!     Ok(skill) => {
//!         println!("{}", skill.instructions());
//!         for file in skill.files() {
//!             let bytes = client.read_skill_file(&skill.entry, &file.uri).await?;
//!             println!("{}: {} bytes, verified", file.uri, bytes.len());
//!         }
//!     }
//!     Err(SkillReadError::Digest { uri, .. }) => eprintln!("{uri} was changed since it was listed"),
//!     Err(other) => return Err(other.into()),
//! }
//! # Ok(()) }
//! ```
//!
//! An entry whose `resources` is `"dynamic"` lists no files, so nothing of it can be verified:
//! [`Client::load_skill`](crate::client::Client::load_skill) refuses it with
//! [`SkillReadError::Unverifiable`].
//!
//! ## Tested against
//!
//! The `skills` example passes every check of the conformance suite's three server scenarios
//! of the extension, and the SDK's conformance client its four client scenarios (no prefetch;
//! tampered digest, size and frontmatter refused). The TypeScript SDK v2's `SkillsClient` reads
//! and verifies the example's skills in both eras, and our client reads the skills a TypeScript
//! v2 server serves.
//!
//! [`Skills`]: crate::skills::Skills
//! [`Skills::watch`]: crate::skills::Skills::watch
//! [`Skills::check`]: crate::skills::Skills::check
//! [`Skills::files`]: crate::skills::Skills::files
//! [`Skills::page_size`]: crate::skills::Skills::page_size
//! [`Skills::directory_read`]: crate::skills::Skills::directory_read
//! [`SkillReadError`]: crate::client::SkillReadError
//! [`SkillReadError::Unverifiable`]: crate::client::SkillReadError::Unverifiable
