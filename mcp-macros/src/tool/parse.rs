//! Reading `#[tool(…)]`, `#[arg(…)]` and the function signature. No semantic checks here.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Generics, Ident, ImplItem, Lit, LitStr, Meta, Pat, Path, Signature, Token, Type,
    TypePath, Visibility, braced, token,
};

use crate::common::{Errors, doc_line_naming, doc_text, split_arguments_section};
use crate::options;

/// A function as `#[tool]` reads it: the signature parsed, the body kept as tokens. The macro
/// never looks inside the body, so a body that does not parse (the compiler reports that
/// itself) must not become a second, misleading error, nor cost the tool its definition.
pub(crate) struct LooseFn {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    pub(crate) body: Group,
}

impl Parse for LooseFn {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body: Group = input.parse()?;
        if body.delimiter() != Delimiter::Brace {
            return Err(syn::Error::new(body.span(), "expected the function's body"));
        }
        Ok(LooseFn { attrs, vis, sig, body })
    }
}

impl ToTokens for LooseFn {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for attr in &self.attrs {
            attr.to_tokens(tokens);
        }
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
}

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

/// A boolean option, bare (`read_only`) or explicit (`read_only = false`).
#[derive(Clone, Copy)]
pub(crate) struct Flag {
    pub(crate) value: bool,
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
}

const TOOL_OPTIONS: &[&str] = &["name", "title", "description", "read_only", "destructive", "idempotent", "open_world"];
const ARG_OPTIONS: &[&str] = &["rename", "description"];

fn string_value(meta: &Meta, key: &str, errors: &mut Errors) -> Option<LitStr> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
            other => {
                errors.spanned(other, format!("`{key} = …` expects a string literal, e.g. `{key} = \"…\"`"));
                None
            }
        },
        _ => {
            errors.spanned(meta, format!("`{key}` expects a string: write `{key} = \"…\"`"));
            None
        }
    }
}

fn flag_value(meta: &Meta, key: &str, errors: &mut Errors) -> Option<Flag> {
    match meta {
        Meta::Path(_) => Some(Flag { value: true }),
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Some(Flag { value: b.value }),
            other => {
                errors.spanned(other, format!("`{key} = …` expects `true` or `false`"));
                None
            }
        },
        Meta::List(_) => {
            errors.spanned(meta, format!("`{key}` takes no list: write `{key}` or `{key} = false`"));
            None
        }
    }
}

/// Stores an option's value, reporting a repeated option at the repetition. `attr` names the
/// attribute (`tool`, `arg`) for the message.
fn set_once<T>(slot: &mut Option<T>, value: Option<T>, meta: &Meta, attr: &str, errors: &mut Errors) {
    if slot.is_some() {
        let key = meta.path().get_ident().map(Ident::to_string).unwrap_or_default();
        errors.spanned(meta, format!("`{key}` is given more than once in `#[{attr}(…)]`; keep one"));
    } else {
        *slot = value;
    }
}

fn metas(tokens: TokenStream, errors: &mut Errors) -> Vec<Meta> {
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    }
}

/// Parses the tokens inside `#[tool(…)]`.
pub(crate) fn tool_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    for meta in metas(tokens, errors) {
        let key = meta.path().get_ident().map(Ident::to_string).unwrap_or_default();
        match key.as_str() {
            "name" => set_once(&mut attr.name, string_value(&meta, &key, errors), &meta, "tool", errors),
            "title" => set_once(&mut attr.title, string_value(&meta, &key, errors), &meta, "tool", errors),
            "description" => set_once(&mut attr.description, string_value(&meta, &key, errors), &meta, "tool", errors),
            "read_only" => set_once(&mut attr.read_only, flag_value(&meta, &key, errors), &meta, "tool", errors),
            "destructive" => set_once(&mut attr.destructive, flag_value(&meta, &key, errors), &meta, "tool", errors),
            "idempotent" => set_once(&mut attr.idempotent, flag_value(&meta, &key, errors), &meta, "tool", errors),
            "open_world" => set_once(&mut attr.open_world, flag_value(&meta, &key, errors), &meta, "tool", errors),
            _ => options::unknown_option(&meta, "tool", TOOL_OPTIONS, errors),
        }
    }
    attr
}

/// How a method receives `self`.
pub(crate) enum Receiver {
    /// A free function or an associated function.
    None,
    /// `&self`.
    Shared(Box<syn::Receiver>),
    /// Anything else (`self`, `&mut self`, `self: Box<Self>` …).
    Unsupported(Box<syn::Receiver>),
}

/// One argument of the function.
pub(crate) struct Param {
    /// The binding (`None` when the pattern is not a plain identifier).
    pub(crate) ident: Option<Ident>,
    pub(crate) pat: Box<Pat>,
    pub(crate) ty: Box<Type>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) description: Option<String>,
}

impl Param {
    /// The argument's name in the input schema.
    pub(crate) fn wire_name(&self) -> String {
        match (&self.rename, &self.ident) {
            (Some(r), _) => r.value(),
            (None, Some(i)) => i.to_string().trim_start_matches("r#").to_owned(),
            (None, None) => String::new(),
        }
    }
}

/// A parsed `#[tool]` function.
pub(crate) struct ToolFn {
    pub(crate) attr: ToolAttr,
    pub(crate) sig: Signature,
    pub(crate) receiver: Receiver,
    pub(crate) params: Vec<Param>,
    /// The description: the attribute's, else the doc comment without its `# Arguments` section.
    pub(crate) description: Option<String>,
    /// Names from `# Arguments` that match no argument, with the doc line naming them (for
    /// the error's span), for validation.
    pub(crate) documented: Vec<(String, Option<Attribute>)>,
}

/// Reads the function, removing `#[arg]` attributes from its arguments (they are ours).
pub(crate) fn tool_fn(attr: ToolAttr, attrs: &[Attribute], sig: &mut Signature, errors: &mut Errors) -> ToolFn {
    let (doc, arg_docs) = split_arguments_section(&doc_text(attrs));
    let mut receiver = Receiver::None;
    let mut params = Vec::new();
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => {
                let shared = r.reference.is_some() && r.mutability.is_none() && r.colon_token.is_none();
                let r = Box::new(r.clone());
                receiver = if shared { Receiver::Shared(r) } else { Receiver::Unsupported(r) };
            }
            FnArg::Typed(pt) => {
                let (rename, description) = arg_attrs(&mut pt.attrs, errors);
                let ident = match &*pt.pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(pi.ident.clone()),
                    _ => None,
                };
                params.push(Param { ident, pat: pt.pat.clone(), ty: pt.ty.clone(), rename, description });
            }
        }
    }
    let mut documented = Vec::new();
    for (name, text) in arg_docs {
        match params.iter_mut().find(|p| p.ident.as_ref().is_some_and(|i| *i == name) || p.wire_name() == name) {
            Some(p) if p.description.is_none() => p.description = Some(text),
            Some(_) => {}
            None => {
                let line = doc_line_naming(attrs, &name).cloned();
                documented.push((name, line));
            }
        }
    }
    let description = match &attr.description {
        Some(d) => Some(d.value()),
        None => (!doc.is_empty()).then_some(doc),
    };
    ToolFn { attr, sig: sig.clone(), receiver, params, description, documented }
}

fn arg_attrs(attrs: &mut Vec<Attribute>, errors: &mut Errors) -> (Option<LitStr>, Option<String>) {
    let mut rename = None;
    let mut description = None;
    attrs.retain(|a| {
        if !a.path().is_ident("arg") {
            return true;
        }
        let tokens = match &a.meta {
            Meta::List(list) => list.tokens.clone(),
            other => {
                errors.spanned(other, "`#[arg]` expects options: `#[arg(rename = \"…\", description = \"…\")]`");
                return false;
            }
        };
        for meta in metas(tokens, errors) {
            let key = meta.path().get_ident().map(Ident::to_string).unwrap_or_default();
            match key.as_str() {
                "rename" => set_once(&mut rename, string_value(&meta, &key, errors), &meta, "arg", errors),
                "description" => {
                    let value = string_value(&meta, &key, errors).map(|s| s.value());
                    set_once(&mut description, value, &meta, "arg", errors)
                }
                _ => options::unknown_option(&meta, "arg", ARG_OPTIONS, errors),
            }
        }
        false
    });
    (rename, description)
}
