//! Reading `#[tool(…)]`, `#[arg(…)]` and the function signature. No semantic checks here.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Generics, ImplItem, LitStr, Meta, Path, Signature, Token, Type, TypePath, braced, token};

use crate::common::Errors;
pub(crate) use crate::options::{Flag, LooseFn, Receiver};
use crate::options::{
    FnParts, flag_value, key, metas, read_fn, set_once, string_list_value, string_value, unknown_option,
};

/// An `impl` block as `#[toolbox]` reads it: every method a [`LooseFn`] (so a method whose
/// body does not parse still yields its tool), other items parsed as usual.
pub(crate) struct ToolboxImpl {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) inner_attrs: Vec<Attribute>,
    pub(crate) unsafety: Option<Token![unsafe]>,
    pub(crate) impl_token: Token![impl],
    pub(crate) generics: Generics,
    pub(crate) trait_: Option<(Path, Token![for])>,
    pub(crate) self_ty: Type,
    pub(crate) brace: token::Brace,
    pub(crate) items: Vec<ToolboxItem>,
}

/// An item of a [`ToolboxImpl`].
pub(crate) enum ToolboxItem {
    Fn(Box<LooseFn>),
    Other(Box<ImplItem>),
}

impl Parse for ToolboxImpl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let unsafety = input.parse()?;
        let impl_token = input.parse()?;
        let mut generics: Generics = input.parse()?;
        let first: Type = input.parse()?;
        let (trait_, self_ty) = match input.parse::<Option<Token![for]>>()? {
            Some(for_token) => {
                let Type::Path(TypePath { qself: None, path }) = first else {
                    return Err(syn::Error::new_spanned(first, "expected a trait"));
                };
                (Some((path, for_token)), input.parse()?)
            }
            None => (None, first),
        };
        generics.where_clause = input.parse()?;
        let content;
        let brace = braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let mut items = Vec::new();
        while !content.is_empty() {
            let fork = content.fork();
            if fork.parse::<LooseFn>().is_ok() {
                items.push(ToolboxItem::Fn(content.parse()?));
            } else {
                items.push(ToolboxItem::Other(content.parse()?));
            }
        }
        Ok(ToolboxImpl { attrs, inner_attrs, unsafety, impl_token, generics, trait_, self_ty, brace, items })
    }
}

impl ToTokens for ToolboxImpl {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for attr in &self.attrs {
            attr.to_tokens(tokens);
        }
        self.unsafety.to_tokens(tokens);
        self.impl_token.to_tokens(tokens);
        self.generics.to_tokens(tokens);
        if let Some((path, for_token)) = &self.trait_ {
            path.to_tokens(tokens);
            for_token.to_tokens(tokens);
        }
        self.self_ty.to_tokens(tokens);
        self.generics.where_clause.to_tokens(tokens);
        self.brace.surround(tokens, |tokens| {
            for attr in &self.inner_attrs {
                attr.to_tokens(tokens);
            }
            for item in &self.items {
                match item {
                    ToolboxItem::Fn(f) => f.to_tokens(tokens),
                    ToolboxItem::Other(i) => i.to_tokens(tokens),
                }
            }
        });
    }
}

/// The options of `#[tool(…)]`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: Option<Flag>,
    pub(crate) destructive: Option<Flag>,
    pub(crate) idempotent: Option<Flag>,
    pub(crate) open_world: Option<Flag>,
    /// The OAuth scopes a call needs (`scopes = ["notes:write"]`).
    pub(crate) scopes: Option<Vec<LitStr>>,
    /// Whether the tool runs as a task (`task = "optional"` or `"required"`).
    pub(crate) task: Option<TaskMode>,
    /// The view of an MCP App shown with the tool's results (`ui = "ui://…"`).
    pub(crate) ui: Option<LitStr>,
    /// Who may call the tool (`visibility = "app"`, or the wire's list `["model", "app"]`).
    pub(crate) visibility: Option<Visibility>,
}

/// The value of `#[tool(visibility = …)]`.
#[derive(Clone, Copy)]
pub(crate) enum Visibility {
    ModelAndApp,
    Model,
    App,
}

/// The value of `#[tool(task = …)]`.
#[derive(Clone, Copy)]
pub(crate) enum TaskMode {
    Optional,
    Required,
}

const TOOL_OPTIONS: &[&str] = &[
    "name",
    "title",
    "description",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "scopes",
    "task",
    "ui",
    "visibility",
];

const VISIBILITY_USAGE: &str = "write `visibility = \"model\"`, `\"app\"` (only the app's view calls it) or `[\"model\", \"app\"]` (both, the default)";

/// Why an entry of `visibility = […]` is refused, if it is.
fn audience_problem(entry: &str) -> Option<&'static str> {
    (!matches!(entry, "model" | "app")).then_some("the audiences are `\"model\"` and `\"app\"`")
}

/// The value of `visibility = …`: one audience as a string, or the wire's list.
fn visibility_value(meta: &Meta, errors: &mut Errors) -> Option<Visibility> {
    let list: Vec<LitStr> = match meta {
        Meta::NameValue(nv) if matches!(nv.value, syn::Expr::Array(_)) => {
            string_list_value(meta, "tool", audience_problem, errors)?
        }
        _ => vec![string_value(meta, "tool", errors)?],
    };
    let model = list.iter().any(|s| s.value() == "model");
    let app = list.iter().any(|s| s.value() == "app");
    match (model, app) {
        (true, true) => Some(Visibility::ModelAndApp),
        (true, false) => Some(Visibility::Model),
        (false, true) => Some(Visibility::App),
        (false, false) => {
            let message = match list.first() {
                Some(s) => format!("`{}` is not an audience: {VISIBILITY_USAGE}", s.value()),
                None => format!("a tool must be visible to someone: {VISIBILITY_USAGE}"),
            };
            match (list.first(), meta) {
                (Some(s), _) => errors.spanned(s, message),
                (None, Meta::NameValue(nv)) => errors.spanned(&nv.value, message),
                (None, other) => errors.spanned(other, message),
            }
            None
        }
    }
}

/// The mode of `task = "…"`, or the error at the string.
fn task_mode(value: &LitStr, errors: &mut Errors) -> Option<TaskMode> {
    match value.value().as_str() {
        "optional" => Some(TaskMode::Optional),
        "required" => Some(TaskMode::Required),
        other => {
            errors.spanned(
                value,
                format!(
                    "`#[tool(task = \"{other}\")]` is not a task mode: write `task = \"optional\"` (a task when the \
                     client supports tasks) or `task = \"required\"` (only as a task)"
                ),
            );
            None
        }
    }
}

/// Why `scope` cannot be an OAuth scope token (RFC 6749, section 3.3), if it cannot.
fn scope_problem(scope: &str) -> Option<&'static str> {
    if scope.is_empty() {
        Some("a scope cannot be empty")
    } else if scope.chars().any(|c| !(c == '!' || ('#'..='[').contains(&c) || (']'..='~').contains(&c))) {
        Some("a scope is printable ASCII without spaces, `\"` or `\\` (RFC 6749, section 3.3)")
    } else {
        None
    }
}
/// Parses the tokens inside `#[tool(…)]`.
pub(crate) fn tool_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    for meta in metas(tokens, "tool", errors) {
        let text = match key(&meta).as_str() {
            "name" => Some(&mut attr.name),
            "title" => Some(&mut attr.title),
            "description" => Some(&mut attr.description),
            _ => None,
        };
        if let Some(slot) = text {
            let value = string_value(&meta, "tool", errors);
            set_once(slot, value, &meta, "tool", errors);
            continue;
        }
        if key(&meta) == "task" {
            let value = string_value(&meta, "tool", errors).and_then(|v| task_mode(&v, errors));
            set_once(&mut attr.task, value, &meta, "tool", errors);
            continue;
        }
        if key(&meta) == "ui" {
            let value = string_value(&meta, "tool", errors);
            set_once(&mut attr.ui, value, &meta, "tool", errors);
            continue;
        }
        if key(&meta) == "visibility" {
            let value = visibility_value(&meta, errors);
            set_once(&mut attr.visibility, value, &meta, "tool", errors);
            continue;
        }
        if key(&meta) == "scopes" {
            let value = string_list_value(&meta, "tool", scope_problem, errors);
            set_once(&mut attr.scopes, value, &meta, "tool", errors);
            continue;
        }
        let slot = match key(&meta).as_str() {
            "read_only" => &mut attr.read_only,
            "destructive" => &mut attr.destructive,
            "idempotent" => &mut attr.idempotent,
            "open_world" => &mut attr.open_world,
            _ => {
                unknown_option(&meta, "tool", TOOL_OPTIONS, errors);
                continue;
            }
        };
        let value = flag_value(&meta, "tool", errors);
        set_once(slot, value, &meta, "tool", errors);
    }
    attr
}

/// A parsed `#[tool]` function: its options and what every function macro reads.
pub(crate) struct ToolFn {
    pub(crate) attr: ToolAttr,
    pub(crate) parts: FnParts,
}

impl std::ops::Deref for ToolFn {
    type Target = FnParts;
    fn deref(&self) -> &FnParts {
        &self.parts
    }
}

/// Reads the function, removing `#[arg]` attributes from its arguments (they are ours).
pub(crate) fn tool_fn(attr: ToolAttr, attrs: &[Attribute], sig: &mut Signature, errors: &mut Errors) -> ToolFn {
    let parts = read_fn(attrs, sig, attr.description.as_ref(), "tool", true, errors);
    ToolFn { attr, parts }
}
