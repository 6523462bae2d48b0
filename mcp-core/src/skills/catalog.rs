//! The skills a server serves, ready to answer: the entries of `skills/list` in order, each
//! skill's folders for `resources/directory/read`, and a resource for each file.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::protocol::skills::{
    DIRECTORY_MIME_TYPE, DirectoryReadParams, DirectoryReadResult, GetSkillParams, GetSkillResult, ListSkillsResult,
    SKILL_MD, SkillEntry, SkillFile, SkillResources,
};
use crate::protocol::{ErrorObject, Resource, ResourceContents};
use crate::resource::{ResourceCall, ResourceDef};

use super::load::{File, Skill};

/// The answers of one server's skills.
#[derive(Debug)]
pub(crate) struct Catalog {
    entries: Vec<SkillEntry>,
    /// The children of each folder of a skill (its root included), by the folder's URI.
    directories: HashMap<String, Vec<Resource>>,
    page_size: usize,
    pub(crate) directory_read: bool,
    resources: Vec<ResourceDef>,
}

impl Catalog {
    pub(crate) fn new(skills: Vec<Skill>, page_size: usize, directory_read: bool) -> Catalog {
        let mut entries = Vec::with_capacity(skills.len());
        let mut directories = HashMap::new();
        let mut resources = Vec::new();
        for skill in &skills {
            entries.push(entry(skill));
            let mut folders: BTreeMap<String, Vec<Resource>> = BTreeMap::new();
            folders.insert(String::new(), Vec::new());
            for file in &skill.files {
                let uri = skill.file_uri(&file.relative);
                resources.push(resource(skill, file, uri.clone()));
                // Each folder on the way down lists the next one, once.
                let mut parent = String::new();
                let segments: Vec<&str> = file.relative.split('/').collect();
                for (i, segment) in segments.iter().enumerate() {
                    let here = if parent.is_empty() { (*segment).to_owned() } else { format!("{parent}/{segment}") };
                    let is_file = i + 1 == segments.len();
                    let child = if is_file {
                        let mime = mime_type(&file.relative, &file.bytes);
                        Some(listed(uri.clone(), segment, mime, Some(file.bytes.len() as u64)))
                    } else if !folders.contains_key(&here) {
                        Some(listed(skill.file_uri(&here), segment, DIRECTORY_MIME_TYPE, None))
                    } else {
                        None
                    };
                    if let Some(child) = child {
                        folders.entry(parent.clone()).or_default().push(child);
                    }
                    if !is_file {
                        folders.entry(here.clone()).or_default();
                    }
                    parent = here;
                }
            }
            for (folder, children) in folders {
                let uri = if folder.is_empty() { skill.directory_uri() } else { skill.file_uri(&folder) };
                directories.insert(uri, children);
            }
        }
        Catalog { entries, directories, page_size: page_size.max(1), directory_read, resources }
    }

    /// A resource for each file, to register with the server.
    pub(crate) fn take_resources(&mut self) -> Vec<ResourceDef> {
        std::mem::take(&mut self.resources)
    }

    /// `skills/list`.
    pub(crate) fn list(&self, cursor: Option<&str>) -> Result<ListSkillsResult, ErrorObject> {
        let (page, next) = page(&self.entries, cursor, self.page_size)?;
        Ok(ListSkillsResult { skills: page.to_vec(), next_cursor: next })
    }

    /// `skills/get`: -32602 for a URI that names no skill.
    pub(crate) fn get(&self, params: GetSkillParams) -> Result<GetSkillResult, ErrorObject> {
        match self.entries.iter().find(|e| e.uri == params.uri) {
            Some(entry) => Ok(GetSkillResult { skill: entry.clone() }),
            None => Err(ErrorObject::invalid_params(format!("no skill is served at `{}`", shorten(&params.uri)))),
        }
    }

    /// `resources/directory/read`: -32602 for a URI that is not a folder of a skill.
    pub(crate) fn directory(&self, params: DirectoryReadParams) -> Result<DirectoryReadResult, ErrorObject> {
        let uri = params.uri.strip_suffix('/').unwrap_or(&params.uri);
        let Some(children) = self.directories.get(uri) else {
            return Err(ErrorObject::invalid_params(format!("`{}` is not a directory of a skill", shorten(uri))));
        };
        let (page, next) = page(children, params.cursor.as_deref(), self.page_size)?;
        Ok(DirectoryReadResult { resources: page.to_vec(), next_cursor: next })
    }

    pub(crate) fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// The URI of every file of every skill.
    pub(crate) fn file_uris(&self) -> impl Iterator<Item = String> + '_ {
        self.entries.iter().flat_map(|e| match &e.resources {
            SkillResources::Files(files) => files.iter().map(|f| f.uri.clone()).collect::<Vec<_>>(),
            SkillResources::Dynamic => Vec::new(),
        })
    }
}

/// A child in `resources/directory/read`.
fn listed(uri: String, name: &str, mime: &str, size: Option<u64>) -> Resource {
    Resource {
        uri,
        name: name.to_owned(),
        title: None,
        description: None,
        mime_type: Some(mime.to_owned()),
        annotations: None,
        size,
        icons: None,
        meta: None,
    }
}

fn shorten(uri: &str) -> String {
    uri.chars().take(200).collect()
}

/// One page of `items` from `cursor` (the index it starts at, as the previous page gave it).
fn page<'a, T>(items: &'a [T], cursor: Option<&str>, size: usize) -> Result<(&'a [T], Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => match c.parse::<usize>() {
            Ok(n) if n > 0 && n < items.len() => n,
            _ => return Err(ErrorObject::invalid_params(format!("invalid cursor `{}`", shorten(c)))),
        },
    };
    let end = (start + size).min(items.len());
    Ok((&items[start..end], (end < items.len()).then(|| end.to_string())))
}

fn entry(skill: &Skill) -> SkillEntry {
    let files = skill
        .files
        .iter()
        .map(|f| SkillFile { uri: skill.file_uri(&f.relative), digest: f.digest.clone(), size: f.bytes.len() as u64 })
        .collect();
    SkillEntry {
        uri: skill.file_uri(SKILL_MD),
        frontmatter: skill.frontmatter.clone(),
        resources: SkillResources::Files(files),
        meta: None,
    }
}

/// The resource serving one file: text when it is UTF-8, else bytes. `SKILL.md` takes the
/// skill's name and description.
fn resource(skill: &Skill, file: &File, uri: String) -> ResourceDef {
    let mime = mime_type(&file.relative, &file.bytes);
    let bytes = file.bytes.clone();
    let read = move |call: ResourceCall| {
        let bytes = bytes.clone();
        async move {
            let contents = match std::str::from_utf8(&bytes) {
                Ok(text) => ResourceContents::text(call.uri, Some(mime.to_owned()), text),
                Err(_) => ResourceContents::blob(call.uri, Some(mime.to_owned()), &bytes),
            };
            Ok::<_, ErrorObject>(contents)
        }
    };
    let def = if file.relative == SKILL_MD {
        let description = skill.frontmatter.get("description").and_then(Value::as_str).unwrap_or_default();
        ResourceDef::new(uri, skill.name(), read).description(description)
    } else {
        ResourceDef::new(uri, format!("{}/{}", skill.name(), file.relative), read)
    };
    def.mime_type(mime).size(file.bytes.len() as u64)
}

/// The MIME type of a file, by its extension; UTF-8 files of unknown kinds are `text/plain`.
pub(crate) fn mime_type(path: &str, bytes: &[u8]) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "rs" => "text/x-rust",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "zip" => "application/zip",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::load::skills;

    fn catalog(page_size: usize) -> Catalog {
        let md = |n: &str| format!("---\nname: {n}\ndescription: Does {n}.\n---\n").into_bytes();
        let files = vec![
            ("pdf/SKILL.md".to_owned(), md("pdf")),
            ("pdf/references/FORMS.md".to_owned(), b"forms".to_vec()),
            ("pdf/references/deep/x.bin".to_owned(), vec![0xff, 0]),
            ("pdf/run.sh".to_owned(), b"echo".to_vec()),
            ("docx/SKILL.md".to_owned(), md("docx")),
            ("team/review/SKILL.md".to_owned(), md("review")),
        ];
        Catalog::new(skills(files, &str::to_owned).unwrap(), page_size, true)
    }

    #[test]
    fn pages_never_split_an_entry_and_chain_to_the_end() {
        let catalog = catalog(2);
        let first = catalog.list(None).unwrap();
        assert_eq!(first.skills.len(), 2);
        let second = catalog.list(first.next_cursor.as_deref()).unwrap();
        assert_eq!(second.skills.len(), 1);
        assert_eq!(second.next_cursor, None);
        let uris: Vec<_> = first.skills.iter().chain(&second.skills).map(|s| s.uri.as_str()).collect();
        assert_eq!(uris, ["skill://docx/SKILL.md", "skill://pdf/SKILL.md", "skill://team/review/SKILL.md"]);
        for bad in ["x", "0", "3", "-1"] {
            assert_eq!(catalog.list(Some(bad)).unwrap_err().code, -32602, "{bad}");
        }
    }

    #[test]
    fn an_entry_lists_every_file_with_its_digest_and_size() {
        let catalog = catalog(10);
        let pdf = &catalog.entries()[1];
        let SkillResources::Files(files) = &pdf.resources else { panic!("a manifest") };
        let uris: Vec<_> = files.iter().map(|f| f.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://pdf/SKILL.md",
                "skill://pdf/references/FORMS.md",
                "skill://pdf/references/deep/x.bin",
                "skill://pdf/run.sh"
            ]
        );
        assert_eq!(files[1].digest, crate::protocol::skills::digest(b"forms"));
        assert_eq!(files[1].size, 5);
        let got = catalog.get(GetSkillParams { uri: "skill://pdf/SKILL.md".into() }).unwrap();
        assert_eq!(&got.skill, pdf);
        let unknown = catalog.get(GetSkillParams { uri: "skill://nope/SKILL.md".into() }).unwrap_err();
        assert_eq!(unknown.code, -32602);
    }

    #[test]
    fn folders_list_their_direct_children() {
        let catalog = catalog(10);
        let read = |uri: &str| catalog.directory(DirectoryReadParams { uri: uri.into(), cursor: None });
        let root = read("skill://pdf").unwrap();
        let children: Vec<_> = root.resources.iter().map(|r| (r.uri.as_str(), r.mime_type.as_deref())).collect();
        assert_eq!(
            children,
            [
                ("skill://pdf/SKILL.md", Some("text/markdown")),
                ("skill://pdf/references", Some(DIRECTORY_MIME_TYPE)),
                ("skill://pdf/run.sh", Some("text/x-shellscript")),
            ]
        );
        let nested = read("skill://pdf/references/").unwrap();
        assert_eq!(nested.resources.len(), 2);
        assert_eq!(nested.resources[1].mime_type.as_deref(), Some(DIRECTORY_MIME_TYPE));
        assert_eq!(
            read("skill://pdf/references/deep").unwrap().resources[0].mime_type.as_deref(),
            Some("application/octet-stream")
        );
        for not_a_folder in ["skill://pdf/SKILL.md", "skill://nope", "skill://team"] {
            assert_eq!(read(not_a_folder).unwrap_err().code, -32602, "{not_a_folder}");
        }
        let small = self::catalog(2);
        let first = small.directory(DirectoryReadParams { uri: "skill://pdf".into(), cursor: None }).unwrap();
        assert_eq!(first.next_cursor.as_deref(), Some("2"));
        let rest =
            small.directory(DirectoryReadParams { uri: "skill://pdf".into(), cursor: first.next_cursor }).unwrap();
        assert_eq!(rest.resources.len(), 1);
    }
}
