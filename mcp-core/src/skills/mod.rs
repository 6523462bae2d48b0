//! Agent skills over MCP (the `io.modelcontextprotocol/skills` extension): a server offers a
//! folder of skills, each a `SKILL.md` (YAML frontmatter with `name` and `description`, then
//! instructions in Markdown) and the files beside it; a client lists them, and reads a skill's
//! files checked against the digest and size the listing gave.
//!
//! ```no_run
//! use typed_mcp::prelude::*;
//! use typed_mcp::skills::Skills;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // skills/pdf-processing/SKILL.md, skills/pdf-processing/references/FORMS.md, …
//! let server = Server::builder("skills", "1.0.0").skills(Skills::dir("skills")).build()?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! The server then answers `skills/list` and `skills/get`, serves every file as a resource
//! `skill://<skill-path>/<file>` (`SKILL.md` as `text/markdown`, named and described by its
//! frontmatter), answers `resources/directory/read` unless
//! [`Skills::directory_read`] turns it off, and declares the extension, with `resources`, in
//! both eras. [`build`](crate::server::ServerBuilder::build) reads and checks the skills: each
//! rule a skill breaks fails the build with a [`BuildError::InvalidSkill`] naming the file.
//!
//! | rule | |
//! | --- | --- |
//! | frontmatter | `SKILL.md` begins with YAML frontmatter between `---` lines, a mapping |
//! | `name` | 1 to 64 lowercase letters, digits and hyphens, no hyphen first, last or doubled; the skill's folder has this name, and no other skill of the server has it |
//! | `description` | a non-empty string of at most 1024 characters |
//! | `metadata` | a mapping whose keys do not begin with `io.modelcontextprotocol/` (reserved) |
//! | limits | at most 512 files and 16 MiB per skill |
//! | paths | skills may be grouped in folders (`team/review/SKILL.md` is the skill `review` at `skill://team/review/SKILL.md`), not nested in another skill; folder names of a skill path are ASCII letters, digits, `-`, `.`, `_`, `~` |
//!
//! Files and folders whose names begin with `.` are left out; files outside any skill's folder
//! are ignored.
//!
//! On the client side, [`Client::list_skills`](crate::client::Client::list_skills),
//! [`Client::load_skill`](crate::client::Client::load_skill) and
//! [`Client::read_skill_file`](crate::client::Client::read_skill_file) hand over only content
//! that matched its size, digest and frontmatter. The [guide chapter](crate::guide::skills) has
//! the whole story.
//!
//! [`BuildError::InvalidSkill`]: crate::BuildError::InvalidSkill

pub(crate) mod catalog;
pub mod frontmatter;
pub(crate) mod load;

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::protocol::skills::{
    DIRECTORY_MIME_TYPE, SKILL_MD, SKILL_URI_SCHEME, SKILLS_EXTENSION as EXTENSION, SkillEntry, SkillFile,
    SkillResources,
};
pub use load::{MAX_FILES_PER_SKILL, MAX_SKILL_BYTES};
/// Compiles a folder of skills into the program (feature `macros`): `embed_skills!("skills")`
/// is a [`Skills`] of every file under `skills/` (relative to the crate's `Cargo.toml`), each
/// embedded with `include_bytes!`; `build()` checks them as it checks a folder on disk.
///
/// ```ignore
/// let server = Server::builder("skills", "1.0.0").skills(typed_mcp::skills::embed_skills!("skills")).build()?;
/// ```
#[cfg(feature = "macros")]
pub use typed_mcp_macros::embed_skills;

/// How many skills (and folder children) one page holds by default.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// A skill that breaks a rule: the file (or folder) and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {rule}")]
#[non_exhaustive]
pub struct SkillError {
    /// The file or folder, as on disk (or as embedded).
    pub file: String,
    /// The rule it breaks, and how.
    pub rule: String,
}

impl SkillError {
    pub(crate) fn new(file: impl Into<String>, rule: impl Into<String>) -> SkillError {
        SkillError { file: file.into(), rule: rule.into() }
    }
}

/// Where a server's skills come from, and how it serves them: give it to
/// `ServerBuilder::skills`.
#[derive(Debug, Clone)]
#[must_use = "a `Skills` does nothing until given to `ServerBuilder::skills`"]
pub struct Skills {
    source: Source,
    page_size: usize,
    directory_read: bool,
    watch: Option<Duration>,
}

#[derive(Debug, Clone)]
enum Source {
    Dir(PathBuf),
    Files { name: Cow<'static, str>, files: Vec<(Cow<'static, str>, Cow<'static, [u8]>)> },
}

impl Skills {
    /// The skills in the folder `path`, read when the server is built: each folder under it
    /// that holds a `SKILL.md` is a skill.
    pub fn dir(path: impl Into<PathBuf>) -> Skills {
        Skills { source: Source::Dir(path.into()), page_size: DEFAULT_PAGE_SIZE, directory_read: true, watch: None }
    }

    /// Skills from files already in memory, by their `/`-separated path under the skills
    /// folder (`pdf-processing/SKILL.md`), for skills compiled into the program with
    /// `include_bytes!` or generated. `origin` names them in errors (`skills/` gives
    /// `skills/pdf-processing/SKILL.md: …`).
    ///
    /// ```
    /// use typed_mcp::skills::Skills;
    /// static FILES: &[(&str, &[u8])] = &[(
    ///     "hello/SKILL.md",
    ///     b"---\nname: hello\ndescription: Greets the user.\n---\nSay hello.\n",
    /// )];
    /// let skills = Skills::files("embedded/", FILES.iter().map(|(p, b)| (*p, *b)));
    /// assert_eq!(skills.check().unwrap(), ["skill://hello/SKILL.md"]);
    /// ```
    pub fn files<P, B>(origin: impl Into<Cow<'static, str>>, files: impl IntoIterator<Item = (P, B)>) -> Skills
    where
        P: Into<Cow<'static, str>>,
        B: Into<Cow<'static, [u8]>>,
    {
        let files = files.into_iter().map(|(p, b)| (p.into(), b.into())).collect();
        Skills {
            source: Source::Files { name: origin.into(), files },
            page_size: DEFAULT_PAGE_SIZE,
            directory_read: true,
            watch: None,
        }
    }

    /// How many skills one page of `skills/list` holds (and children one page of
    /// `resources/directory/read`); [`DEFAULT_PAGE_SIZE`] unless set.
    pub fn page_size(mut self, skills: usize) -> Skills {
        self.page_size = skills.max(1);
        self
    }

    /// Whether to answer `resources/directory/read` (declared as `directoryRead: true`); on
    /// by default.
    pub fn directory_read(mut self, on: bool) -> Skills {
        self.directory_read = on;
        self
    }

    /// Watches the folder: every `interval`, the server looks for files added, removed or
    /// changed (by size and modification time), reads the skills again when some are, serves
    /// the new ones and sends `notifications/resources/list_changed` (the server declares
    /// `resources.listChanged`). Skills that break a rule are logged, and the ones before stay
    /// served. The server must be built inside a Tokio runtime. Files compiled in never change,
    /// so this does nothing for [`Skills::files`]. `Server::reload_skills` does the same on
    /// demand.
    pub fn watch(mut self, interval: Duration) -> Skills {
        self.watch = Some(interval.max(Duration::from_millis(10)));
        self
    }

    /// Reads and checks the skills as `build` does, without a server: the URI of each skill's
    /// `SKILL.md`, in listing order.
    pub fn check(&self) -> Result<Vec<String>, SkillError> {
        Ok(self.load()?.iter().map(|s| s.file_uri(SKILL_MD)).collect())
    }

    fn load(&self) -> Result<Vec<load::Skill>, SkillError> {
        match &self.source {
            Source::Dir(root) => {
                if !root.is_dir() {
                    return Err(SkillError::new(root.display().to_string(), "is not a folder of skills"));
                }
                let files = load::read_dir(root)?;
                load::skills(files, &|p| root.join(p).display().to_string())
            }
            Source::Files { name, files } => {
                let files = files.iter().map(|(p, b)| (p.trim_start_matches('/').to_owned(), b.to_vec())).collect();
                load::skills(files, &|p| format!("{name}{p}"))
            }
        }
    }

    pub(crate) fn watch_interval(&self) -> Option<Duration> {
        match self.source {
            Source::Dir(_) => self.watch,
            Source::Files { .. } => None,
        }
    }

    pub(crate) fn directory_read_on(&self) -> bool {
        self.directory_read
    }

    /// Where the skills come from, as errors name it.
    pub(crate) fn origin(&self) -> String {
        match &self.source {
            Source::Dir(root) => root.display().to_string(),
            Source::Files { name, .. } => name.to_string(),
        }
    }

    /// A hash of every file's path, size and modification time: it changes when the folder
    /// does. Always 0 for files compiled in.
    pub(crate) fn fingerprint(&self) -> u64 {
        match &self.source {
            Source::Dir(root) => load::fingerprint(root),
            Source::Files { .. } => 0,
        }
    }

    /// The catalog a server answers from.
    pub(crate) fn catalog(&self) -> Result<catalog::Catalog, SkillError> {
        Ok(catalog::Catalog::new(self.load()?, self.page_size, self.directory_read))
    }
}

/// The value of the extension in the server's capabilities.
pub(crate) fn capability(directory_read: bool) -> serde_json::Value {
    if directory_read { serde_json::json!({ "directoryRead": true }) } else { serde_json::json!({}) }
}
