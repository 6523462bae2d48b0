//! Wire types of the skills extension (`io.modelcontextprotocol/skills`): `skills/list`,
//! `skills/get` and `resources/directory/read`.
//!
//! A skill is a folder whose root holds a `SKILL.md` (YAML frontmatter, then Markdown) and the
//! files its instructions refer to. A server lists each skill as a [`SkillEntry`]: the URI of
//! its `SKILL.md`, the frontmatter as a JSON object, and every file with its SHA-256 digest and
//! size, which a client checks what it reads against.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{JsonObject, Resource};

/// The extension's identifier, under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The scheme of the URIs of skill files.
pub const SKILL_URI_SCHEME: &str = "skill://";

/// The file at the root of every skill.
pub const SKILL_MD: &str = "SKILL.md";

/// The MIME type of a directory in `resources/directory/read`.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// The prefix of frontmatter `metadata` keys reserved for MCP extensions.
pub const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// One skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`, `skill://<skill-path>/SKILL.md`; the last segment of
    /// the skill path is the skill's name.
    pub uri: String,
    /// The frontmatter of `SKILL.md` as a JSON object, with at least `name` and `description`.
    pub frontmatter: JsonObject,
    /// The skill's files, or `"dynamic"` when the server publishes no manifest.
    pub resources: SkillResources,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SkillEntry {
    /// The frontmatter's `name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The frontmatter's `description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The skill's folder, `skill://<skill-path>` (the URI without `/SKILL.md`).
    pub fn directory(&self) -> Option<&str> {
        self.uri.strip_suffix(SKILL_MD)?.strip_suffix('/')
    }

    /// The listed file at `uri`, if the entry has a manifest that lists it.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }
}

/// The files of a skill: a complete manifest, or none (`"dynamic"`).
#[derive(Debug, Clone, PartialEq)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each once.
    Files(Vec<SkillFile>),
    /// The server publishes no manifest (`"dynamic"`): its files are found through
    /// `resources/directory/read` and cannot be verified.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Files(Vec<SkillFile>),
            Word(String),
        }
        match Wire::deserialize(deserializer)? {
            Wire::Files(files) => Ok(SkillResources::Files(files)),
            Wire::Word(word) if word == "dynamic" => Ok(SkillResources::Dynamic),
            Wire::Word(word) => Err(serde::de::Error::custom(format!(
                "`resources` must be an array of files or \"dynamic\", not {:?}",
                word.chars().take(64).collect::<String>()
            ))),
        }
    }
}

/// One file of a skill's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// Its URI, within the skill's folder.
    pub uri: String,
    /// `sha256:` and the 64 lowercase hex digits of the SHA-256 of its raw bytes.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// `skills/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// The skills of this page; a skill is never split across pages.
    pub skills: Vec<SkillEntry>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `skills/get` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
}

/// `skills/get` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillResult {
    /// The skill, as `skills/list` lists it.
    pub skill: SkillEntry,
}

/// `resources/directory/read` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectoryReadParams {
    /// The directory's URI.
    pub uri: String,
    /// Where to continue from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `resources/directory/read` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryReadResult {
    /// The directory's direct children; subdirectories have the MIME type
    /// [`DIRECTORY_MIME_TYPE`].
    pub resources: Vec<Resource>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The digest of `bytes` as the extension writes it: `sha256:` and 64 lowercase hex digits.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 characters of lowercase
/// ASCII letters, digits and hyphens, with no hyphen first, last or next to another.
pub fn valid_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_files_or_dynamic() {
        let entry: SkillEntry = serde_json::from_str(
            r#"{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},
                "resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":3}]}"#,
        )
        .unwrap();
        assert_eq!(entry.name(), Some("a"));
        assert_eq!(entry.directory(), Some("skill://a"));
        assert_eq!(entry.file("skill://a/SKILL.md").unwrap().size, 3);
        let dynamic: SkillResources = serde_json::from_str(r#""dynamic""#).unwrap();
        assert_eq!(dynamic, SkillResources::Dynamic);
        assert_eq!(serde_json::to_string(&dynamic).unwrap(), r#""dynamic""#);
        assert!(serde_json::from_str::<SkillResources>(r#""static""#).is_err());
    }

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(digest(b"abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["pdf", "pdf-processing", "a1", &"a".repeat(64)] {
            assert!(valid_skill_name(good), "{good}");
        }
        for bad in ["", "-pdf", "pdf-", "pdf--x", "PDF", "pdf_x", "pdf.x", &"a".repeat(65)] {
            assert!(!valid_skill_name(bad), "{bad}");
        }
    }
}
