//! The YAML frontmatter of a `SKILL.md`: finding it, reading it as a JSON object, and the
//! Agent Skills rules it must follow. The server checks its skills with these; the client
//! compares what it reads with the listing through [`parse`].

use serde_json::Value;

use crate::protocol::JsonObject;
use crate::protocol::skills::{RESERVED_METADATA_PREFIX, valid_skill_name};

/// The longest `description` the Agent Skills specification allows, in characters.
pub const MAX_DESCRIPTION: usize = 1024;

/// The longest `compatibility` the Agent Skills specification allows, in characters.
pub const MAX_COMPATIBILITY: usize = 500;

/// Why a `SKILL.md`'s frontmatter was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The file does not begin with a `---` line, or the block is never closed by another.
    #[error("SKILL.md must begin with YAML frontmatter between two `---` lines")]
    Missing,
    /// The block is not YAML, or not a mapping.
    #[error("the frontmatter is not a YAML mapping: {0}")]
    NotYaml(String),
    /// A required field is missing or not a non-empty string.
    #[error("the frontmatter needs `{0}`, a non-empty string")]
    Required(&'static str),
    /// `name` breaks the naming rules.
    #[error(
        "the name `{0}` breaks the naming rules: 1 to 64 lowercase letters, digits and hyphens, no hyphen first, last or doubled"
    )]
    Name(String),
    /// A field is longer than the specification allows.
    #[error("`{field}` has {length} characters; at most {max} are allowed")]
    TooLong {
        /// The field.
        field: &'static str,
        /// Its length in characters.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// An optional field has the wrong type.
    #[error("`{0}` must be {1}")]
    Type(&'static str, &'static str),
    /// A `metadata` key uses the prefix reserved for MCP extensions.
    #[error(
        "the metadata key `{0}` uses the prefix `io.modelcontextprotocol/`, which is reserved for MCP extensions (none defines a key yet)"
    )]
    ReservedMetadata(String),
}

/// The frontmatter block of `text` (without its `---` lines), if the text begins with one.
/// A byte-order mark before the first line is allowed; lines may end in `\r\n`.
pub fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\r\n").or_else(|| text.strip_prefix("---\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" {
            return Some(rest[..offset].trim_end_matches(['\n', '\r']));
        }
        offset += line.len();
    }
    None
}

/// The frontmatter of a `SKILL.md` as a JSON object, unchecked beyond being a mapping.
pub fn parse(text: &str) -> Result<JsonObject, FrontmatterError> {
    let block = block(text).ok_or(FrontmatterError::Missing)?;
    if block.trim().is_empty() {
        return Err(FrontmatterError::NotYaml("the block is empty".into()));
    }
    let value: Value = serde_norway::from_str(block).map_err(|e| FrontmatterError::NotYaml(e.to_string()))?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(FrontmatterError::NotYaml(format!("found {}", kind(&other)))),
    }
}

/// The frontmatter of a `SKILL.md`, checked against the Agent Skills rules and this extension's
/// reserved metadata prefix.
pub fn parse_checked(text: &str) -> Result<JsonObject, FrontmatterError> {
    let map = parse(text)?;
    check(&map)?;
    Ok(map)
}

/// Checks a frontmatter object: `name` and `description` present and valid, the optional
/// fields of the right type, no reserved metadata key.
pub fn check(map: &JsonObject) -> Result<(), FrontmatterError> {
    let name = non_empty(map, "name")?;
    if !valid_skill_name(name) {
        return Err(FrontmatterError::Name(name.chars().take(80).collect()));
    }
    let description = non_empty(map, "description")?;
    longest(description, "description", MAX_DESCRIPTION)?;
    for field in ["license", "allowed-tools"] {
        if map.get(field).is_some_and(|v| !v.is_string()) {
            return Err(FrontmatterError::Type(field, "a string"));
        }
    }
    if let Some(compatibility) = map.get("compatibility") {
        let text = compatibility.as_str().ok_or(FrontmatterError::Type("compatibility", "a string"))?;
        longest(text, "compatibility", MAX_COMPATIBILITY)?;
    }
    if let Some(metadata) = map.get("metadata") {
        let metadata = metadata.as_object().ok_or(FrontmatterError::Type("metadata", "a mapping"))?;
        if let Some(key) = metadata.keys().find(|k| k.starts_with(RESERVED_METADATA_PREFIX)) {
            return Err(FrontmatterError::ReservedMetadata(key.clone()));
        }
    }
    Ok(())
}

fn non_empty<'a>(map: &'a JsonObject, field: &'static str) -> Result<&'a str, FrontmatterError> {
    match map.get(field).and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => Ok(text),
        _ => Err(FrontmatterError::Required(field)),
    }
}

fn longest(text: &str, field: &'static str, max: usize) -> Result<(), FrontmatterError> {
    let length = text.chars().count();
    if length > max {
        return Err(FrontmatterError::TooLong { field, length, max });
    }
    Ok(())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str =
        "---\nname: pdf-processing\ndescription: Fill PDF forms.\nmetadata:\n  author: me\n---\n\n# Body\n";

    #[test]
    fn the_block_is_found_with_either_line_ending_and_a_bom() {
        assert_eq!(block(GOOD), Some("name: pdf-processing\ndescription: Fill PDF forms.\nmetadata:\n  author: me"));
        assert_eq!(block("\u{feff}---\r\nname: a\r\n---\r\nbody"), Some("name: a"));
        assert_eq!(block("---\nname: a\n--- \n"), Some("name: a"));
        assert_eq!(block("# no frontmatter\n---\nname: a\n---\n"), None);
        assert_eq!(block("---\nname: a\n"), None);
    }

    #[test]
    fn a_good_frontmatter_reads_as_a_json_object() {
        let map = parse_checked(GOOD).unwrap();
        assert_eq!(map["name"], "pdf-processing");
        assert_eq!(map["metadata"]["author"], "me");
    }

    #[test]
    fn each_rule_names_what_is_wrong() {
        let cases = [
            ("# Title\n", FrontmatterError::Missing),
            ("---\n- a\n---\n", FrontmatterError::NotYaml("found a sequence".into())),
            ("---\ndescription: d\n---\n", FrontmatterError::Required("name")),
            ("---\nname: PDF\ndescription: d\n---\n", FrontmatterError::Name("PDF".into())),
            ("---\nname: pdf\n---\n", FrontmatterError::Required("description")),
            ("---\nname: pdf\ndescription: ''\n---\n", FrontmatterError::Required("description")),
            ("---\nname: pdf\ndescription: d\nmetadata: [1]\n---\n", FrontmatterError::Type("metadata", "a mapping")),
            ("---\nname: pdf\ndescription: d\nlicense: 3\n---\n", FrontmatterError::Type("license", "a string")),
            (
                "---\nname: pdf\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n",
                FrontmatterError::ReservedMetadata("io.modelcontextprotocol/x".into()),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_checked(text), Err(expected), "{text}");
        }
        let long = format!("---\nname: pdf\ndescription: {}\n---\n", "d".repeat(1025));
        assert_eq!(
            parse_checked(&long),
            Err(FrontmatterError::TooLong { field: "description", length: 1025, max: MAX_DESCRIPTION })
        );
        assert!(matches!(parse("---\nname: [\n---\n"), Err(FrontmatterError::NotYaml(_))));
    }
}
