//! The client as a host of agent skills ([`crate::skills`]): listing a server's skills,
//! loading one, and reading its files, each checked against the size and digest its entry
//! lists before the caller sees a byte of it.
//!
//! Nothing is read ahead of need: listing reads no file, loading a skill reads its
//! `SKILL.md` only, and each other file is read when asked for.

use serde_json::Value;

use super::{Client, ClientError};
use crate::protocol::skills::{
    GetSkillParams, GetSkillResult, ListSkillsResult, SKILLS_EXTENSION, SkillEntry, SkillFile, SkillResources,
};
use crate::protocol::{JsonObject, ResourceContents};
use crate::skills::frontmatter;

/// A skill whose `SKILL.md` was read, verified against its entry's digest and size, and whose
/// frontmatter matched the entry's field by field.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// The entry the server listed.
    pub entry: SkillEntry,
    /// The whole `SKILL.md`, frontmatter included.
    pub markdown: String,
}

impl Skill {
    /// The skill's name (the frontmatter's `name`).
    pub fn name(&self) -> &str {
        self.entry.name().unwrap_or_default()
    }

    /// What the skill does and when to use it (the frontmatter's `description`).
    pub fn description(&self) -> &str {
        self.entry.description().unwrap_or_default()
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> &str {
        &self.entry.uri
    }

    /// The frontmatter, as the server listed it and as the file has it.
    pub fn frontmatter(&self) -> &JsonObject {
        &self.entry.frontmatter
    }

    /// The instructions: `SKILL.md` after its frontmatter.
    pub fn instructions(&self) -> &str {
        body(&self.markdown)
    }

    /// The skill's other files (its manifest without `SKILL.md`), to read with
    /// [`Client::read_skill_file`] when the instructions call for one.
    pub fn files(&self) -> impl Iterator<Item = &SkillFile> {
        let files = match &self.entry.resources {
            SkillResources::Files(files) => files.as_slice(),
            SkillResources::Dynamic => &[],
        };
        files.iter().filter(move |f| f.uri != self.entry.uri)
    }
}

/// The text after the frontmatter block (all of it when there is none).
fn body(markdown: &str) -> &str {
    let text = markdown.strip_prefix('\u{feff}').unwrap_or(markdown);
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else { return markdown };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end() == "---" {
            return rest[offset..].trim_start_matches(['\r', '\n']);
        }
    }
    markdown
}

/// Why a skill or one of its files was not handed over.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillReadError {
    /// The request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The file is not in the skill's manifest: nothing to verify it against.
    #[error("`{uri}` is not a file the skill lists")]
    NotListed {
        /// The file asked for.
        uri: String,
    },
    /// The skill's entry has no manifest (`"dynamic"`): its files cannot be verified.
    #[error("the skill `{uri}` lists no files (\"dynamic\"), so none of them can be verified")]
    Unverifiable {
        /// The skill's URI.
        uri: String,
    },
    /// The server sent no contents for the file, or contents of another URI.
    #[error("the server sent no contents for `{uri}`")]
    NoContents {
        /// The file.
        uri: String,
    },
    /// The file's length is not the size its entry lists.
    #[error("`{uri}` has {actual} bytes but its entry lists {expected}: refused")]
    Size {
        /// The file.
        uri: String,
        /// The size listed.
        expected: u64,
        /// The size read.
        actual: u64,
    },
    /// The file's SHA-256 is not the digest its entry lists.
    #[error("`{uri}` does not match its digest {expected} (it hashes to {actual}): refused")]
    Digest {
        /// The file.
        uri: String,
        /// The digest listed.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The frontmatter of `SKILL.md` cannot be read, or differs from the entry's.
    #[error("the frontmatter of `{uri}` {problem}: the skill is not loaded")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// What is wrong.
        problem: String,
    },
}

impl Client {
    /// Whether the server declared the skills extension.
    pub fn server_supports_skills(&self) -> bool {
        self.server_capabilities().has_extension(SKILLS_EXTENSION)
    }

    /// Every skill the server lists (`skills/list`, every page). Reads none of their files.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        let mut seen = std::collections::HashSet::new();
        self.all_pages(|cursor| {
            let repeated = cursor.as_ref().is_some_and(|c| !seen.insert(c.clone()));
            async move {
                if repeated {
                    return Err(ClientError::Codec("`skills/list` sent a cursor it had sent before".into()));
                }
                let page: ListSkillsResult = self.list_page("skills/list", cursor.as_deref()).await?;
                Ok((page.skills, page.next_cursor))
            }
        })
        .await
    }

    /// The entry of one skill (`skills/get`), by the URI of its `SKILL.md`.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, ClientError> {
        let result: GetSkillResult = self.request("skills/get", &GetSkillParams { uri: uri.to_owned() }).await?;
        if result.skill.uri != uri {
            return Err(ClientError::Codec(format!("`skills/get` for `{uri}` answered with `{}`", result.skill.uri)));
        }
        Ok(result.skill)
    }

    /// Loads a listed skill: reads its `SKILL.md`, verifies it against the entry's size and
    /// digest, and compares its frontmatter with the entry's field by field. Any difference
    /// is an error, and the skill is not handed over.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<Skill, SkillReadError> {
        let bytes = self.read_skill_file(entry, &entry.uri).await?;
        let problem = |problem: String| SkillReadError::Frontmatter { uri: entry.uri.clone(), problem };
        let markdown = String::from_utf8(bytes).map_err(|_| problem("is not UTF-8 text".into()))?;
        let read = frontmatter::parse(&markdown).map_err(|e| problem(format!("cannot be read ({e})")))?;
        if let Some(field) = first_difference(&read, &entry.frontmatter) {
            return Err(problem(format!("differs from the listing in `{field}`")));
        }
        Ok(Skill { entry: entry.clone(), markdown })
    }

    /// Reads one file of a skill (`resources/read`), and hands it over only when its length
    /// is the size and its SHA-256 the digest that `entry` lists for it.
    pub async fn read_skill_file(&self, entry: &SkillEntry, uri: &str) -> Result<Vec<u8>, SkillReadError> {
        let listed = match &entry.resources {
            SkillResources::Dynamic => return Err(SkillReadError::Unverifiable { uri: entry.uri.clone() }),
            SkillResources::Files(_) => {
                entry.file(uri).ok_or_else(|| SkillReadError::NotListed { uri: uri.to_owned() })?.clone()
            }
        };
        let result = self.read_resource(uri).await?;
        let no_contents = || SkillReadError::NoContents { uri: uri.to_owned() };
        let bytes = match result.contents.into_iter().next().ok_or_else(no_contents)? {
            ResourceContents::Text { uri: got, text, .. } if got == uri => text.into_bytes(),
            ResourceContents::Blob { uri: got, blob, .. } if got == uri => {
                crate::protocol::decode_base64_lenient(&blob).ok_or_else(no_contents)?
            }
            _ => return Err(no_contents()),
        };
        verify(&listed, bytes)
    }
}

/// `bytes` if they are what `listed` says: the size first, then the digest.
pub(crate) fn verify(listed: &SkillFile, bytes: Vec<u8>) -> Result<Vec<u8>, SkillReadError> {
    if bytes.len() as u64 != listed.size {
        return Err(SkillReadError::Size {
            uri: listed.uri.clone(),
            expected: listed.size,
            actual: bytes.len() as u64,
        });
    }
    let actual = crate::protocol::skills::digest(&bytes);
    if actual != listed.digest {
        return Err(SkillReadError::Digest { uri: listed.uri.clone(), expected: listed.digest.clone(), actual });
    }
    Ok(bytes)
}

/// The first field whose value differs between two frontmatters (a missing field counts as
/// `null`).
fn first_difference(read: &JsonObject, listed: &JsonObject) -> Option<String> {
    let null = Value::Null;
    read.keys()
        .chain(listed.keys())
        .find(|k| read.get(*k).unwrap_or(&null) != listed.get(*k).unwrap_or(&null))
        .map(|k| k.chars().take(64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(bytes: &[u8]) -> SkillFile {
        SkillFile {
            uri: "skill://a/SKILL.md".into(),
            digest: crate::protocol::skills::digest(bytes),
            size: bytes.len() as u64,
        }
    }

    #[test]
    fn only_bytes_of_the_listed_size_and_digest_are_handed_over() {
        let file = listed(b"Skill body.");
        assert_eq!(verify(&file, b"Skill body.".to_vec()).unwrap(), b"Skill body.");
        assert!(matches!(verify(&file, b"Evil body!!".to_vec()), Err(SkillReadError::Digest { .. })));
        assert!(matches!(
            verify(&file, b"Skill body. and more".to_vec()),
            Err(SkillReadError::Size { expected: 11, actual: 20, .. })
        ));
    }

    #[test]
    fn frontmatters_are_compared_field_by_field() {
        let a = frontmatter::parse("---\nname: a\ndescription: Does a.\n---\n").unwrap();
        let b = frontmatter::parse("---\nname: a\ndescription: Exfiltrates.\n---\n").unwrap();
        let c = frontmatter::parse("---\nname: a\ndescription: Does a.\nlicense: MIT\n---\n").unwrap();
        assert_eq!(first_difference(&a, &a), None);
        assert_eq!(first_difference(&a, &b).as_deref(), Some("description"));
        assert_eq!(first_difference(&a, &c).as_deref(), Some("license"));
    }

    #[test]
    fn the_instructions_follow_the_frontmatter() {
        assert_eq!(body("---\nname: a\n---\n\n# Title\n"), "# Title\n");
        assert_eq!(body("# No frontmatter\n"), "# No frontmatter\n");
    }
}
