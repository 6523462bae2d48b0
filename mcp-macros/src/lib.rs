//! Procedural macros for [`mcp-core`](https://docs.rs/mcp-core). Use them through `mcp-core`
//! (its default `macros` feature re-exports them); generated code refers to `::mcp_core`.
//!
//! Each macro parses, then validates, then expands, in separate modules. Errors are collected
//! and reported together, spanned at the user's tokens; code is still emitted beside them so
//! that one mistake does not cascade into unrelated errors.

use proc_macro::TokenStream;

mod common;
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
/// `destructive`, `idempotent`, `open_world` (bare for `true`, or `= true`/`= false`).
/// On an argument: `#[arg(rename = "…", description = "…")]`.
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
