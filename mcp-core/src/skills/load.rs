//! From a tree of files (a folder on disk, or files compiled into the program) to checked
//! skills: which folders are skills, their frontmatter, their files with digests, the limits.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::protocol::JsonObject;
use crate::protocol::skills::{SKILL_MD, SKILL_URI_SCHEME, digest};

use super::SkillError;
use super::frontmatter;

/// The most files one skill may have, `SKILL.md` included.
pub const MAX_FILES_PER_SKILL: usize = 512;

/// The most bytes the files of one skill may add up to (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// One checked skill.
#[derive(Debug, Clone)]
pub(crate) struct Skill {
    /// `a/b/name`: the folders from the root to the skill's, joined with `/`.
    pub(crate) path: String,
    pub(crate) frontmatter: JsonObject,
    /// `SKILL.md` first, then the others by path.
    pub(crate) files: Vec<File>,
}

/// One file of a skill.
#[derive(Debug, Clone)]
pub(crate) struct File {
    /// Its path inside the skill's folder, `/`-separated.
    pub(crate) relative: String,
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) digest: String,
}

impl Skill {
    /// `skill://<path>`.
    pub(crate) fn directory_uri(&self) -> String {
        format!("{SKILL_URI_SCHEME}{}", self.path)
    }

    /// The URI of one of its files.
    pub(crate) fn file_uri(&self, relative: &str) -> String {
        let mut uri = self.directory_uri();
        for segment in relative.split('/') {
            uri.push('/');
            uri.extend(percent_encoding::utf8_percent_encode(segment, SEGMENT));
        }
        uri
    }

    pub(crate) fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// What a file name keeps as it is in a URI: RFC 3986's unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Every file under `root`, by its `/`-separated path from there. Names beginning with `.`
/// (`.git`, `.DS_Store`) are left out.
pub(crate) fn read_dir(root: &Path) -> Result<Vec<(String, Vec<u8>)>, SkillError> {
    let mut out = Vec::new();
    let mut pending = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let io = |e: std::io::Error| SkillError::new(dir.display().to_string(), format!("cannot be read: {e}"));
        for entry in std::fs::read_dir(&dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let path = entry.path();
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(SkillError::new(path.display().to_string(), "the file name is not UTF-8"));
            };
            if name.starts_with('.') {
                continue;
            }
            let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            let meta = std::fs::metadata(&path)
                .map_err(|e| SkillError::new(path.display().to_string(), format!("cannot be read: {e}")))?;
            if meta.is_dir() {
                pending.push((path, relative));
            } else if meta.is_file() {
                if meta.len() > MAX_SKILL_BYTES {
                    return Err(SkillError::new(path.display().to_string(), too_big(meta.len())));
                }
                let bytes = std::fs::read(&path)
                    .map_err(|e| SkillError::new(path.display().to_string(), format!("cannot be read: {e}")))?;
                out.push((relative, bytes));
            }
        }
    }
    Ok(out)
}

/// A hash of the path, size and modification time of every file under `root` (names beginning
/// with `.` left out, as [`read_dir`] leaves them out); an unreadable folder hashes its error.
pub(crate) fn fingerprint(root: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut pending = vec![root.to_path_buf()];
    let mut seen = Vec::new();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            dir.hash(&mut hasher);
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => pending.push(path),
                Ok(meta) => seen.push((path, meta.len(), meta.modified().ok())),
                Err(_) => seen.push((path, u64::MAX, None)),
            }
        }
    }
    seen.sort();
    seen.hash(&mut hasher);
    hasher.finish()
}

fn too_big(bytes: u64) -> String {
    format!("the skill's files add up to {bytes} bytes; a skill may have at most {MAX_SKILL_BYTES} (16 MiB)")
}

/// The skills in a tree of files. `shown` turns a path of the tree into the name errors give
/// (the path on disk, or the path as embedded). A folder holding a `SKILL.md` is a skill, and
/// every file below it is one of its files; files outside any skill are ignored.
pub(crate) fn skills(files: Vec<(String, Vec<u8>)>, shown: &dyn Fn(&str) -> String) -> Result<Vec<Skill>, SkillError> {
    let mut roots: Vec<String> = Vec::new();
    for (path, _) in &files {
        if path == SKILL_MD {
            return Err(SkillError::new(
                shown(path),
                "a SKILL.md at the root of the skills folder: put each skill in a folder named after it",
            ));
        }
        if let Some(root) = path.strip_suffix(SKILL_MD).and_then(|p| p.strip_suffix('/')) {
            roots.push(root.to_owned());
        }
    }
    roots.sort();
    for pair in roots.windows(2) {
        if pair[1].starts_with(&format!("{}/", pair[0])) {
            return Err(SkillError::new(
                shown(&format!("{}/{SKILL_MD}", pair[1])),
                format!("a skill inside the skill `{}`: skills may be grouped in folders, not nested", pair[0]),
            ));
        }
    }
    let mut grouped: BTreeMap<&str, Vec<(String, Vec<u8>)>> = roots.iter().map(|r| (r.as_str(), Vec::new())).collect();
    for (path, bytes) in files {
        // The deepest root above the file: with no nesting, the only one.
        let owner = roots.iter().filter(|r| path.starts_with(&format!("{r}/"))).max_by_key(|r| r.len());
        if let Some(owner) = owner {
            let relative = path[owner.len() + 1..].to_owned();
            if let Some(list) = grouped.get_mut(owner.as_str()) {
                list.push((relative, bytes));
            }
        }
    }
    let mut skills = Vec::with_capacity(grouped.len());
    let mut names: HashMap<String, String> = HashMap::new();
    for (root, files) in grouped {
        let skill = skill(root, files, shown)?;
        if let Some(other) = names.insert(skill.name().to_owned(), skill.path.clone()) {
            return Err(SkillError::new(
                shown(&format!("{root}/{SKILL_MD}")),
                format!("the name `{}` is also the name of the skill at `{other}`; names must be unique", skill.name()),
            ));
        }
        skills.push(skill);
    }
    Ok(skills)
}

fn skill(root: &str, mut files: Vec<(String, Vec<u8>)>, shown: &dyn Fn(&str) -> String) -> Result<Skill, SkillError> {
    let manifest = format!("{root}/{SKILL_MD}");
    for (i, segment) in root.split('/').enumerate() {
        let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        if segment.is_empty() || !segment.bytes().all(unreserved) {
            let what = if i == 0 { "the first folder of a skill's path is the URI's authority" } else { "a folder" };
            return Err(SkillError::new(
                shown(&manifest),
                format!(
                    "the folder `{segment}` cannot be part of a skill URI: {what} may use only ASCII letters, digits, `-`, `.`, `_` and `~`"
                ),
            ));
        }
    }
    if files.len() > MAX_FILES_PER_SKILL {
        return Err(SkillError::new(
            shown(root),
            format!("the skill has {} files; a skill may have at most {MAX_FILES_PER_SKILL}", files.len()),
        ));
    }
    let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    if total > MAX_SKILL_BYTES {
        return Err(SkillError::new(shown(root), too_big(total)));
    }
    files.sort_by(|a, b| (a.0 != SKILL_MD, &a.0).cmp(&(b.0 != SKILL_MD, &b.0)));
    let text = std::str::from_utf8(&files[0].1)
        .map_err(|_| SkillError::new(shown(&manifest), "SKILL.md is not UTF-8 text"))?;
    let frontmatter = frontmatter::parse_checked(text).map_err(|e| SkillError::new(shown(&manifest), e.to_string()))?;
    let name = frontmatter.get("name").and_then(serde_json::Value::as_str).unwrap_or_default();
    let last = root.rsplit('/').next().unwrap_or(root);
    if last != name {
        return Err(SkillError::new(
            shown(&manifest),
            format!(
                "the skill's folder is `{last}` but its name is `{name}`: the folder must be named after the skill"
            ),
        ));
    }
    let files = files
        .into_iter()
        .map(|(relative, bytes)| File { digest: digest(&bytes), relative, bytes: bytes.into() })
        .collect();
    Ok(Skill { path: root.to_owned(), frontmatter, files })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(name: &str) -> Vec<u8> {
        format!("---\nname: {name}\ndescription: Does {name}.\n---\nBody\n").into_bytes()
    }

    fn load(files: &[(&str, Vec<u8>)]) -> Result<Vec<Skill>, SkillError> {
        skills(files.iter().map(|(p, b)| ((*p).to_owned(), b.clone())).collect(), &|p| format!("skills/{p}"))
    }

    #[test]
    fn folders_with_a_skill_md_are_skills_and_own_the_files_below_them() {
        let skills = load(&[
            ("README.md", b"ignored".to_vec()),
            ("pdf/references/FORMS.md", b"forms".to_vec()),
            ("pdf/SKILL.md", md("pdf")),
            ("team/review/SKILL.md", md("review")),
            ("team/review/check list.txt", b"x".to_vec()),
        ])
        .unwrap();
        assert_eq!(skills.len(), 2);
        assert_eq!(skills[0].path, "pdf");
        let files: Vec<_> = skills[0].files.iter().map(|f| f.relative.as_str()).collect();
        assert_eq!(files, ["SKILL.md", "references/FORMS.md"]);
        assert_eq!(skills[1].path, "team/review");
        assert_eq!(skills[1].file_uri("check list.txt"), "skill://team/review/check%20list.txt");
        assert_eq!(skills[1].files[1].digest, digest(b"x"));
    }

    #[test]
    fn each_broken_rule_names_the_file() {
        type Files<'a> = &'a [(&'a str, Vec<u8>)];
        let cases: [(Files, &str, &str); 6] = [
            (&[("pdf/SKILL.md", md("other"))], "skills/pdf/SKILL.md", "must be named after the skill"),
            (&[("pdf/SKILL.md", b"# no frontmatter".to_vec())], "skills/pdf/SKILL.md", "YAML frontmatter"),
            (&[("a/pdf/SKILL.md", md("pdf")), ("b/pdf/SKILL.md", md("pdf"))], "skills/b/pdf/SKILL.md", "unique"),
            (&[("pdf/SKILL.md", md("pdf")), ("pdf/x/SKILL.md", md("x"))], "skills/pdf/x/SKILL.md", "nested"),
            (&[("SKILL.md", md("pdf"))], "skills/SKILL.md", "folder named after it"),
            (&[("my team/pdf/SKILL.md", md("pdf"))], "skills/my team/pdf/SKILL.md", "authority"),
        ];
        for (files, file, rule) in cases {
            let error = load(files).unwrap_err();
            assert_eq!(error.file, file, "{error}");
            assert!(error.rule.contains(rule), "{error}");
        }
    }

    #[test]
    fn the_limits_hold() {
        let mut many = vec![("pdf/SKILL.md", md("pdf"))];
        let names: Vec<String> = (0..MAX_FILES_PER_SKILL).map(|i| format!("pdf/f{i}")).collect();
        many.extend(names.iter().map(|n| (n.as_str(), Vec::new())));
        assert!(load(&many).unwrap_err().rule.contains("at most 512"));
        many.pop();
        assert_eq!(load(&many).unwrap()[0].files.len(), MAX_FILES_PER_SKILL);
        let big = vec![0u8; (MAX_SKILL_BYTES / 2) as usize + 1];
        let error = load(&[("pdf/SKILL.md", md("pdf")), ("pdf/a", big.clone()), ("pdf/b", big)]).unwrap_err();
        assert!(error.rule.contains("16 MiB"), "{error}");
    }
}
