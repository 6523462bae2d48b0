//! The skills extension on the server: registering a folder of skills on the builder, their
//! files as resources, the extension in the capabilities, and the answers to `skills/list`,
//! `skills/get` and `resources/directory/read` (see [`crate::skills`]).

use std::sync::Arc;

use super::handling::{params, to_raw};
use super::{BuildError, ServerBuilder, ServerInner};
use crate::engine::HandlerResult;
use crate::protocol::methods::Method;
use crate::protocol::{ErrorObject, PaginatedParams, Request, ServerCapabilities};
use crate::skills::Skills;
use crate::skills::catalog::Catalog;

impl ServerBuilder {
    /// Serves agent skills (the `io.modelcontextprotocol/skills` extension): each skill's
    /// files as `skill://` resources, `skills/list`, `skills/get` and, unless turned off,
    /// `resources/directory/read`. [`build`](Self::build) reads and checks them, and fails
    /// with [`BuildError::InvalidSkill`] naming the file of the first rule a skill breaks.
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills = Some(skills);
        self
    }
}

/// Reads and checks the builder's skills, and registers their files as resources.
pub(crate) fn prepare(builder: &mut ServerBuilder) -> Result<Option<Arc<Catalog>>, BuildError> {
    let Some(skills) = builder.skills.take() else { return Ok(None) };
    let mut catalog = skills.catalog().map_err(|e| BuildError::InvalidSkill { file: e.file, rule: e.rule })?;
    builder.surface.resources.extend(catalog.take_resources());
    Ok(Some(Arc::new(catalog)))
}

/// Declares the extension (the files make `resources` declared already).
pub(crate) fn declare(capabilities: &mut ServerCapabilities, catalog: &Catalog) {
    let extensions = capabilities.extensions.get_or_insert_with(Default::default);
    extensions.insert(crate::skills::EXTENSION.into(), crate::skills::capability(catalog.directory_read));
}

/// Whether the server answers the skills methods (`directory`: `resources/directory/read`).
pub(crate) fn offers(server: &ServerInner, directory: bool) -> bool {
    server.skills.as_ref().is_some_and(|c| !directory || c.directory_read)
}

/// Answers `skills/list`, `skills/get` or `resources/directory/read`.
pub(crate) fn answer(server: &ServerInner, method: Method, request: &Request) -> HandlerResult {
    let Some(catalog) = &server.skills else { return Err(ErrorObject::method_not_found(method.name())) };
    match method {
        Method::SkillsList => to_raw(&catalog.list(params::<PaginatedParams>(request)?.cursor.as_deref())?),
        Method::SkillsGet => to_raw(&catalog.get(params(request)?)?),
        Method::ResourcesDirectoryRead if catalog.directory_read => to_raw(&catalog.directory(params(request)?)?),
        _ => Err(ErrorObject::method_not_found(method.name())),
    }
}
