//! # What the macros generate
//!
//! The macros write little code: each calls into a trait of typed-mcp, where the logic lives. To
//! see it for any program, install [cargo-expand](https://github.com/dtolnay/cargo-expand)
//! (`cargo install cargo-expand`; it prints rustc's `-Zunpretty=expanded` output, formatted
//! with prettyplease; its README says which toolchain it needs) and run:
//!
//! ```sh
//! cargo expand -p examples --bin quickstart
//! ```
//!
//! For the quickstart's `add` (`#[tool(read_only, idempotent)] async fn add(a: i64, b: i64) ->
//! Result<i64, String>`), the tool part of that output is (`format!` left unexpanded):
//!
//! ```rust
//! /// Adds two integers and returns the sum.
//! ///
//! /// # Arguments
//! /// * `a` - The first addend.
//! /// * `b` - The second addend.
//! #[allow(clippy::needless_pass_by_value)]
//! async fn add(a: i64, b: i64) -> Result<i64, String> {
//!     a.checked_add(b).ok_or_else(|| format!("{a} + {b} overflows a 64-bit integer"))
//! }
//! #[doc(hidden)]
//! #[allow(non_camel_case_types, dead_code, missing_docs, unreachable_pub)]
//! struct add {}
//! const _: () = {
//!     #[automatically_derived]
//!     impl ::typed_mcp::__private_v0_1::ToolFn for add {
//!         fn definition() -> ::typed_mcp::__private_v0_1::ToolDef {
//!             {
//!                 let mut __schema = ::typed_mcp::__private_v0_1::InputSchema::new();
//!                 <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::describe(
//!                     &mut __schema,
//!                     "a",
//!                     ::core::option::Option::Some("The first addend."),
//!                 );
//!                 <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::describe(
//!                     &mut __schema,
//!                     "b",
//!                     ::core::option::Option::Some("The second addend."),
//!                 );
//!                 let __handler = move |mut __call: ::typed_mcp::__private_v0_1::ToolCall| {
//!                     async move {
//!                         let a = <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::extract(
//!                             &mut __call,
//!                             "a",
//!                         )?;
//!                         let b = <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::extract(
//!                             &mut __call,
//!                             "b",
//!                         )?;
//!                         ::core::result::Result::Ok::<
//!                             _,
//!                             ::typed_mcp::__private_v0_1::ErrorObject,
//!                         >(add(a, b).await)
//!                     }
//!                 };
//!                 ::typed_mcp::__private_v0_1::ToolDef::new(
//!                         "add",
//!                         __schema.finish(),
//!                         __handler,
//!                     )
//!                     .description("Adds two integers and returns the sum.")
//!                     .annotations(::typed_mcp::__private_v0_1::ToolAnnotations {
//!                         read_only_hint: ::core::option::Option::Some(true),
//!                         destructive_hint: ::core::option::Option::None,
//!                         idempotent_hint: ::core::option::Option::Some(true),
//!                         open_world_hint: ::core::option::Option::None,
//!                         ..::core::default::Default::default()
//!                     })
//!             }
//!         }
//!     }
//! };
//! ```
//!
//! - The function stays as written, callable from your code and tests (the `#[allow]` keeps
//!   clippy quiet about arguments taken by value, which a tool must do).
//! - A hidden unit struct with the function's name (types and functions live in different
//!   namespaces) implements `ToolFn`; `tools![add]` names that struct.
//! - `definition()` runs once, at registration: each argument's `ToolArgument::describe` adds
//!   it to the input schema (injected ones such as `Context` add nothing), and the handler
//!   extracts each argument with `ToolArgument::extract`, calls the function and converts the
//!   result through `IntoToolResult`. A wrong argument or return type fails these trait bounds at
//!   your token.
//! - The description and hints come from the doc comment and the attribute.
//!
//! A form, `#[derive(Deserialize, JsonSchema, Elicit)] struct Signup { /// Your name.
//! #[schemars(length(min = 1))] name: String, /// Send the newsletter. newsletter: bool }`:
//!
//! ```rust
//! # #[derive(serde::Deserialize, schemars::JsonSchema)]
//! # struct Signup {
//! #     /// Your name.
//! #     #[schemars(length(min = 1))]
//! #     name: String,
//! #     /// Send the newsletter.
//! #     newsletter: bool,
//! # }
//! const _: () = {
//!     const _: () = {
//!         const __KIND: ::typed_mcp::__private_v0_1::FieldKind = <String as ::typed_mcp::__private_v0_1::ElicitField>::KIND;
//!         const _: () = ::core::assert!(
//!             __KIND.takes_length(),
//!             "`length` applies to string fields (`minLength`/`maxLength`) and multi-select fields (`minItems`/`maxItems`) only, and `String` is neither"
//!         );
//!     };
//!     const _: () = {
//!         const __KIND: ::typed_mcp::__private_v0_1::FieldKind = <bool as ::typed_mcp::__private_v0_1::ElicitField>::KIND;
//!     };
//!     #[automatically_derived]
//!     impl ::typed_mcp::__private_v0_1::Elicit for Signup {
//!         fn form_schema() -> ::core::result::Result<
//!             &'static ::typed_mcp::__private_v0_1::FormSchema,
//!             &'static ::typed_mcp::__private_v0_1::SchemaError,
//!         > {
//!             static SCHEMA: ::typed_mcp::__private_v0_1::OnceLock<
//!                 ::core::result::Result<
//!                     ::typed_mcp::__private_v0_1::FormSchema,
//!                     ::typed_mcp::__private_v0_1::SchemaError,
//!                 >,
//!             > = ::typed_mcp::__private_v0_1::OnceLock::new();
//!             SCHEMA
//!                 .get_or_init(|| ::typed_mcp::__private_v0_1::form_schema_for::<
//!                     Self,
//!                 >(
//!                     &[
//!                         <String as ::typed_mcp::__private_v0_1::ElicitField>::form_field(
//!                             "name",
//!                             ::typed_mcp::__private_v0_1::OptionStyle::Auto,
//!                         ),
//!                         <bool as ::typed_mcp::__private_v0_1::ElicitField>::form_field(
//!                             "newsletter",
//!                             ::typed_mcp::__private_v0_1::OptionStyle::Auto,
//!                         ),
//!                     ],
//!                 ))
//!                 .as_ref()
//!         }
//!     }
//! };
//! ```
//!
//! - One `const` block per field checks at compile time that its type is a form field
//!   (`ElicitField`, with a note on what is allowed) and that each schemars attribute fits its
//!   kind (`length` on a string or multi-select, `range` on a number…), at your attribute.
//! - `form_schema()` builds the schema once: schemars' schema of the type through
//!   `elicit::FormTransform`, with the options of any choice field spelled as the field asks;
//!   the result is checked against MCP's subset and cached, its JSON text written once.
//!
//! Every expansion is kept as a snapshot in `mcp-macros/snapshots/` (`#[tool]` free and in a
//! `#[toolbox]`, sync and async, each result kind; `#[prompt]`; `#[resource]` static and
//! template; `#[derive(Elicit)]` on a form, a choice and a multi-select), formatted with
//! prettyplease as `cargo expand` formats it, and compared by `cargo test`; after a deliberate
//! change, re-bless with `MACROS_SNAPSHOT=overwrite cargo test -p typed-mcp-macros snapshots` and review
//! `git diff mcp-macros/snapshots`.
