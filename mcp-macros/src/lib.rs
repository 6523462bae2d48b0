//! Procedural macros for [`typed-mcp`](https://docs.rs/mcp-core). Use them through `typed-mcp`
//! (its default `macros` feature re-exports them); generated code refers to `::typed_mcp`.
//!
//! Generated code names `::typed_mcp::__private_v0_1`, the private module of the one typed-mcp
//! version this crate goes with (typed-mcp depends on it at `=` that version): a mismatched pair
//! fails to compile with "could not find `__private_v0_1` in `typed_mcp`".
//!
//! Each macro parses, then validates, then expands, in separate modules. Errors are collected
//! and reported together, spanned at the user's tokens; code is still emitted beside them so
//! that one mistake does not cascade into unrelated errors.

use proc_macro::TokenStream;

mod codegen;
mod common;
mod elicit;
mod options;
mod prompt;
mod resource;
mod skills;
#[cfg(test)]
mod snapshots;
mod tool;

/// Turns a function into an MCP tool.
///
/// ```ignore
/// /// Adds two integers.
/// ///
/// /// # Arguments
/// /// * `a` - The first addend.
/// /// * `b` - The second addend.
/// #[tool(read_only, idempotent)]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// let server = Server::builder("calc", "1.0.0").tools(tools![add]).build()?;
/// ```
///
/// The function stays callable as written. Its arguments become the tool's input schema
/// (`Option<T>` arguments are optional), except injected ones (`Context`, `State<T>`). The doc
/// comment becomes the description; an `# Arguments` section (or `#[arg(description = "…")]`
/// on the argument) describes each argument.
///
/// Options: `name = "…"`, `title = "…"`, `description = "…"`, and the hints `read_only`,
/// `destructive`, `idempotent`, `open_world` (bare for `true`, or `= true`/`= false`),
/// `scopes = ["…"]` (the OAuth scopes a call needs), and `task = "optional"` or
/// `task = "required"` (the tool runs as a task for clients of the 2026-07-28 tasks extension;
/// see `typed_mcp::task`). On an argument: `#[arg(rename = "…", description = "…")]`.
///
/// On methods, put `#[toolbox]` on the `impl` block.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand_free(args.into(), input.into()).into()
}

/// Gathers the `#[tool]` methods of an `impl` block into a toolbox, registered with
/// `ServerBuilder::toolbox(value)`. Methods take `&self`, or no receiver.
///
/// ```ignore
/// struct Counter { start: i64 }
///
/// #[toolbox]
/// impl Counter {
///     /// Adds `n` to the starting value.
///     #[tool]
///     async fn bump(&self, n: i64) -> i64 { self.start + n }
/// }
///
/// let server = Server::builder("counter", "1.0.0").toolbox(Counter { start: 10 }).build()?;
/// ```
#[proc_macro_attribute]
pub fn toolbox(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand_toolbox(args.into(), input.into()).into()
}

/// Derives `typed_mcp::elicit::Elicit` for a flat struct (a form), or the traits that make a
/// unit-only enum a choice field (single select; a `Vec` of it is a multi-select). The type
/// also derives `serde::Deserialize` and `schemars::JsonSchema`: the form's schema is the one
/// schemars generates, turned into MCP's restricted subset.
///
/// ```ignore
/// #[derive(Deserialize, JsonSchema, Elicit)]
/// #[serde(rename_all = "camelCase")]
/// struct ProjectDetails {
///     /// Name of the project.
///     #[schemars(length(min = 1, max = 64))]
///     project_name: String,
///     /// Front-end framework.
///     framework: Option<Framework>,
///     /// Set up tests too.
///     #[serde(default)]
///     include_tests: bool,
/// }
///
/// #[derive(Deserialize, JsonSchema, Elicit)]
/// #[serde(rename_all = "lowercase")]
/// enum Framework {
///     /// React
///     React,
///     /// Vue.js
///     Vue,
/// }
/// ```
///
/// Names, defaults and skipped fields follow serde; doc comments and `#[schemars(title,
/// description, length, range, email, url, extend("format" = …))]` shape each field (see
/// `typed_mcp::elicit::Elicit` for the full table). `#[elicit(…)]` says only what schemars
/// cannot: `style = "plain" | "titled" | "enum_names"` (on an enum or a choice field),
/// `title = "…"` (on a variant) and `not_secret` (on a field). A field whose type cannot be a
/// form field, whose name looks like a password, key, token or payment credential (MCP forbids
/// asking for those in a form), or whose schemars attributes leave MCP's subset (`regex`,
/// `contains`, `inner`…) is a compile error at that field.
#[proc_macro_derive(Elicit, attributes(elicit))]
pub fn derive_elicit(input: TokenStream) -> TokenStream {
    elicit::derive(input.into()).into()
}

/// Turns a function into an MCP prompt.
///
/// ```ignore
/// /// Asks for a code review.
/// ///
/// /// # Arguments
/// /// * `code` - The code to review.
/// /// * `focus` - What to look at first.
/// #[prompt(title = "Code review")]
/// fn review(code: String, focus: Option<String>) -> Vec<PromptMessage> {
///     vec![PromptMessage::user(format!("Review this code, focusing on {}:\n{code}", focus.as_deref().unwrap_or("anything")))]
/// }
///
/// let server = Server::builder("writer", "1.0.0").prompts(prompts![review]).build()?;
/// ```
///
/// The function stays callable as written. Its arguments become the prompt's arguments
/// (strings on the wire, parsed into the argument's type; `Option<T>` arguments are optional),
/// except injected ones (`Context`, `State<T>`). The doc comment becomes the description; an
/// `# Arguments` section (or `#[arg(description = "…")]`) describes each argument.
///
/// Options: `name = "…"`, `title = "…"`, `description = "…"`. On an argument:
/// `#[arg(rename = "…", description = "…")]`. The function returns text (one user message),
/// `PromptMessage`, `Vec<PromptMessage>`, `GetPromptResult`, or a `Result` of one of these.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    prompt::expand(args.into(), input.into()).into()
}

/// Turns a function into an MCP resource (a URI) or resource template (an RFC 6570 URI
/// template, whose variables are arguments of the function with the same names).
///
/// ```ignore
/// /// The README.
/// #[resource("file:///README.md", name = "readme", mime_type = "text/markdown")]
/// fn readme() -> &'static str { "# Hello" }
///
/// /// One user's profile.
/// #[resource("users://{id}/profile", mime_type = "application/json")]
/// async fn profile(id: u64, db: State<Db>) -> Option<String> { db.profile(id) }
///
/// let server = Server::builder("files", "1.0.0").resources(resources![readme, profile]).build()?;
/// ```
///
/// A template variable without an argument of that name is a compile error naming the
/// variable; any other argument must be injected (`Context`, `State<T>`, `ResourceUri`).
/// Options after the URI: `name = "…"` (default: the function's name), `title = "…"`,
/// `description = "…"` (default: the doc comment), `mime_type = "…"`. The function returns
/// text, bytes (`Vec<u8>`, `Blob`), `Json<T>`, `ResourceContents`, or an `Option` (`None` is
/// "resource not found") or `Result` of one of these.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    resource::expand(args.into(), input.into()).into()
}

/// Compiles a folder of agent skills into the program, for `ServerBuilder::skills`: one
/// executable carries them.
///
/// ```ignore
/// let server = Server::builder("skills", "1.0.0").skills(embed_skills!("skills")).build()?;
/// ```
///
/// The path is relative to the crate's `Cargo.toml`. Every file under it (names beginning with
/// `.` left out) is embedded with `include_bytes!`, so Cargo rebuilds when one changes; a file
/// added to the folder is picked up by the next build of the crate. The value is a
/// `typed_mcp::skills::Skills`, whose skills `build()` checks as it checks a folder on disk.
#[proc_macro]
pub fn embed_skills(input: TokenStream) -> TokenStream {
    skills::expand(input.into()).into()
}

#[cfg(test)]
mod tests {
    /// The private module generated code names follows this crate's version.
    #[test]
    fn private_module_matches_the_version() {
        let version = env!("CARGO_PKG_VERSION");
        let mut parts = version.split('.');
        let (major, minor) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
        assert_eq!(format!("__private_v{major}_{minor}"), "__private_v0_1", "rename the module in typed-mcp and here");
    }
}
