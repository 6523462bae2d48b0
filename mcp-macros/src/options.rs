//! The one attribute grammar of every macro (`#[tool]`, `#[toolbox]`, `#[prompt]`,
//! `#[resource]`, `#[derive(Elicit)]`'s `#[elicit]`): options as `key = "value"` or bare flags,
//! each given once, unknown keys answered with "did you mean"; and the one reading and check of
//! a function's signature that the function macros share (the body stays opaque tokens: no
//! macro parses it). The same mistake therefore reads the same in every macro.

use std::collections::HashMap;

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, FnArg, Ident, Lit, LitStr, Meta, Pat, Signature, Token, Type, Visibility};

use crate::common::{Errors, doc_line_naming, doc_text, split_arguments_section};

/// The key of an option (`name` in `name = "…"`).
pub(crate) fn key(meta: &Meta) -> String {
    meta.path().get_ident().map(Ident::to_string).unwrap_or_else(|| meta.path().to_token_stream().to_string())
}

/// Splits `a = 1, b` into the options of `#[attr(…)]`, reporting syntax errors.
pub(crate) fn metas(tokens: TokenStream, attr: &str, errors: &mut Errors) -> Vec<Meta> {
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            errors.push(syn::Error::new(
                e.span(),
                format!("invalid `#[{attr}(…)]` options ({e}); write them as `key = \"value\"`, separated by commas"),
            ));
            Vec::new()
        }
    }
}

/// The string of `key = "…"`.
pub(crate) fn string_value(meta: &Meta, attr: &str, errors: &mut Errors) -> Option<LitStr> {
    let key = key(meta);
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
            other => {
                errors.spanned(other, format!("`#[{attr}({key} = …)]` expects a string literal, e.g. `{key} = \"…\"`"));
                None
            }
        },
        _ => {
            errors.spanned(meta, format!("`#[{attr}({key})]` expects a string: write `{key} = \"…\"`"));
            None
        }
    }
}

/// The strings of `key = ["…", "…"]`: an array of string literals, each checked by `check`
/// (which returns why a string is refused).
pub(crate) fn string_list_value(
    meta: &Meta,
    attr: &str,
    check: fn(&str) -> Option<&'static str>,
    errors: &mut Errors,
) -> Option<Vec<LitStr>> {
    let key = key(meta);
    let example = format!("e.g. `{key} = [\"…\", \"…\"]`");
    let Meta::NameValue(nv) = meta else {
        errors.spanned(meta, format!("`#[{attr}({key})]` expects a list of strings, {example}"));
        return None;
    };
    let Expr::Array(array) = &nv.value else {
        errors.spanned(&nv.value, format!("`#[{attr}({key} = …)]` expects an array of string literals, {example}"));
        return None;
    };
    let mut values = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => match check(&s.value()) {
                Some(problem) => errors.spanned(s, format!("`#[{attr}({key} = …)]`: {problem}")),
                None => values.push(s.clone()),
            },
            other => errors.spanned(other, format!("`#[{attr}({key} = …)]` takes string literals only, {example}")),
        }
    }
    Some(values)
}

/// Stores an option's value, reporting a repeated option at the repetition.
pub(crate) fn set_once<T>(slot: &mut Option<T>, value: Option<T>, meta: &Meta, attr: &str, errors: &mut Errors) {
    if slot.is_some() {
        errors.spanned(meta, format!("`{}` is given more than once in `#[{attr}(…)]`; keep one", key(meta)));
    } else if value.is_some() {
        *slot = value;
    }
}

/// A boolean option, bare (`read_only`) or explicit (`read_only = false`).
#[derive(Clone, Copy)]
pub(crate) struct Flag {
    pub(crate) value: bool,
}

/// The value of a flag option.
pub(crate) fn flag_value(meta: &Meta, attr: &str, errors: &mut Errors) -> Option<Flag> {
    let key = key(meta);
    match meta {
        Meta::Path(_) => Some(Flag { value: true }),
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Some(Flag { value: b.value }),
            other => {
                errors.spanned(other, format!("`#[{attr}({key} = …)]` expects `true` or `false`"));
                None
            }
        },
        Meta::List(_) => {
            errors.spanned(meta, format!("`#[{attr}({key})]` takes no list: write `{key}` or `{key} = false`"));
            None
        }
    }
}

/// The message for an option `#[attr(…)]` does not know, with a suggestion when the option
/// looks like a misspelling of a known one. Every macro words this mistake the same way.
pub(crate) fn unknown_message(attr: &str, key: &str, known: &[&str]) -> String {
    unknown_message_on(attr, "", key, known)
}

/// [`unknown_message`] for an attribute whose options depend on what it is on (`place`, such
/// as " on a variant").
pub(crate) fn unknown_message_on(attr: &str, place: &str, key: &str, known: &[&str]) -> String {
    let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    match crate::common::closest(key, known) {
        Some(k) => format!("unknown `#[{attr}]` option `{key}`{place}; did you mean `{k}`? (options: {list})"),
        None => format!("unknown `#[{attr}]` option `{key}`{place}; the options are {list}"),
    }
}

/// The error for an option `#[attr(…)]` does not know.
pub(crate) fn unknown_option(meta: &Meta, attr: &str, known: &[&str], errors: &mut Errors) {
    errors.spanned(meta.path(), unknown_message(attr, &key(meta), known));
}

/// A function as a function macro reads it: the signature parsed, the body kept as tokens. No
/// macro looks inside the body, so a body that does not parse (the compiler reports that
/// itself) becomes neither a second, misleading error nor the loss of the item's definition.
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

/// How a function receives `self`.
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
    /// The argument's name on the wire.
    pub(crate) fn wire_name(&self) -> String {
        match (&self.rename, &self.ident) {
            (Some(r), _) => r.value(),
            (None, Some(i)) => i.to_string().trim_start_matches("r#").to_owned(),
            (None, None) => String::new(),
        }
    }
}

/// What every function macro reads from its function.
pub(crate) struct FnParts {
    pub(crate) sig: Signature,
    pub(crate) receiver: Receiver,
    pub(crate) params: Vec<Param>,
    /// The description: the attribute's, else the doc comment without its `# Arguments` section.
    pub(crate) description: Option<String>,
    /// Names from `# Arguments` that match no argument, with the doc line naming them (for the
    /// error's span).
    pub(crate) documented: Vec<(String, Option<Attribute>)>,
}

/// Reads the function's signature and docs, taking `#[arg(…)]` off its arguments (they are
/// ours). `allow_arg` tells whether the macro accepts `#[arg]` at all.
pub(crate) fn read_fn(
    attrs: &[Attribute],
    sig: &mut Signature,
    description: Option<&LitStr>,
    attr: &str,
    allow_arg: bool,
    errors: &mut Errors,
) -> FnParts {
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
                let (rename, description) = arg_attrs(&mut pt.attrs, attr, allow_arg, errors);
                let ident = match &*pt.pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(pi.ident.clone()),
                    _ => None,
                };
                params.push(Param { ident, pat: pt.pat.clone(), ty: pt.ty.clone(), rename, description });
            }
        }
    }
    let mut documented = Vec::new();
    if allow_arg {
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
    }
    let description = match description {
        Some(d) => Some(d.value()),
        None => (!doc.is_empty()).then_some(doc),
    };
    FnParts { sig: sig.clone(), receiver, params, description, documented }
}

const ARG_OPTIONS: &[&str] = &["rename", "description"];

fn arg_attrs(
    attrs: &mut Vec<Attribute>,
    macro_name: &str,
    allow: bool,
    errors: &mut Errors,
) -> (Option<LitStr>, Option<String>) {
    let mut rename = None;
    let mut description = None;
    attrs.retain(|a| {
        if !a.path().is_ident("arg") {
            return true;
        }
        if !allow {
            errors.spanned(
                a,
                format!("`#[{macro_name}]` arguments take no `#[arg]` options: a URI-template variable is named by the argument"),
            );
            return false;
        }
        let tokens = match &a.meta {
            Meta::List(list) => list.tokens.clone(),
            other => {
                errors.spanned(other, "`#[arg]` expects options: `#[arg(rename = \"…\", description = \"…\")]`");
                return false;
            }
        };
        for meta in metas(tokens, "arg", errors) {
            match key(&meta).as_str() {
                "rename" => set_once(&mut rename, string_value(&meta, "arg", errors), &meta, "arg", errors),
                "description" => {
                    let value = string_value(&meta, "arg", errors).map(|s| s.value());
                    set_once(&mut description, value, &meta, "arg", errors)
                }
                _ => unknown_option(&meta, "arg", ARG_OPTIONS, errors),
            }
        }
        false
    });
    (rename, description)
}

/// Checks what no function under `attr` may be, in the same words for every macro (a `const
/// fn` is fine: it is called like any other). With
/// `methods`, the caller checks the receiver itself (`#[tool]` in a `#[toolbox]`); otherwise a
/// receiver is an error.
pub(crate) fn check_signature(f: &FnParts, attr: &str, methods: bool, errors: &mut Errors) {
    let sig = &f.sig;
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            format!("`#[{attr}]` functions cannot be generic: the server calls one concrete function, with one schema"),
        );
    }
    if let Some(w) = &sig.generics.where_clause {
        errors.spanned(
            w,
            format!(
                "`#[{attr}]` functions cannot have a `where` clause: the server calls one concrete function, with one schema"
            ),
        );
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(
            u,
            format!("`#[{attr}]` functions cannot be `unsafe`: the server calls them with input from the wire"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, format!("`#[{attr}]` functions cannot have an `extern` ABI; remove it"));
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, format!("`#[{attr}]` functions cannot be variadic"));
    }
    if !methods && let Receiver::Shared(r) | Receiver::Unsupported(r) = &f.receiver {
        errors.spanned(
            r,
            format!("`#[{attr}]` applies to free functions; take what the {attr} needs as arguments instead of `self`"),
        );
    }
    let mut seen: HashMap<String, TokenStream> = HashMap::new();
    for p in &f.params {
        if p.ident.is_none() {
            errors.spanned(
                &p.pat,
                format!("`#[{attr}]` arguments must be plain identifiers: the name is the argument's name on the wire"),
            );
            continue;
        }
        match &*p.ty {
            Type::ImplTrait(t) => errors.spanned(
                t,
                format!("`impl Trait` arguments are not supported in `#[{attr}]` functions; use a concrete type"),
            ),
            // Arguments are read from the request into values the handler owns, so a borrowed
            // argument can never work: say so instead of a lifetime error.
            Type::Reference(r) => errors.spanned(
                r,
                format!(
                    "`#[{attr}]` arguments cannot be references: each argument is read from the request into an owned value; take {} instead",
                    owned_suggestion(r)
                ),
            ),
            _ => {}
        }
        if let Some(lit) = &p.rename
            && lit.value().is_empty()
        {
            errors.spanned(lit, "`#[arg(rename = …)]` cannot be empty");
        }
        let name = p.wire_name();
        let here = match &p.rename {
            Some(lit) => lit.to_token_stream(),
            None => p.pat.to_token_stream(),
        };
        if let Some(first) = seen.get(&name) {
            let mut e = syn::Error::new_spanned(
                &here,
                format!("two arguments are named `{name}` on the wire; rename one with `#[arg(rename = \"…\")]`"),
            );
            e.combine(syn::Error::new_spanned(first, format!("`{name}` is first used here")));
            errors.push(e);
        } else {
            seen.insert(name, here);
        }
    }
    for (name, line) in &f.documented {
        let arguments: Vec<String> = f
            .params
            .iter()
            .filter_map(|p| p.ident.as_ref())
            .map(|i| format!("`{}`", i.to_string().trim_start_matches("r#")))
            .collect();
        let have = match arguments.len() {
            0 => "this function has no arguments".to_owned(),
            _ => format!("the arguments are {}", arguments.join(", ")),
        };
        let message = format!("the `# Arguments` section documents `{name}`, which is not an argument; {have}");
        match line {
            Some(attr) => errors.spanned(attr, message),
            None => errors.spanned(&sig.ident, message),
        }
    }
}

/// What to take instead of a borrowed argument type.
fn owned_suggestion(r: &syn::TypeReference) -> String {
    match &*r.elem {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => "`String`".to_owned(),
        Type::Slice(s) => format!("`Vec<{}>`", type_text(&s.elem)),
        other => format!("`{}`", type_text(other)),
    }
}

/// A type as a person would write it (`Vec<u8>`, not `Vec < u8 >`).
fn type_text(ty: &Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (from, to) in
        [(" < ", "<"), ("< ", "<"), (" <", "<"), (" >", ">"), (" ,", ","), (" :: ", "::"), (":: ", "::"), ("& ", "&")]
    {
        text = text.replace(from, to);
    }
    text
}
