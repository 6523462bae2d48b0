//! Reading a `#[derive(Elicit)]` input: the serde attributes that shape the wire form and our
//! own `#[elicit(…)]` options. No semantic checks here.

use proc_macro2::Span;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Fields, Ident, Lit, LitStr, Meta, Token, Type};

use crate::common::{Errors, doc_text};

/// An option's value, with the spans of its key (`min_length` in `min_length = 1`) and of its
/// value, for diagnostics.
pub(crate) struct Spanned_<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
    pub(crate) value_span: Span,
}

impl<T> Spanned_<T> {
    fn new(value: T, meta: &Meta) -> Self {
        let value_span = match meta {
            Meta::NameValue(nv) => nv.value.span(),
            _ => meta.span(),
        };
        Spanned_ { value, span: meta.path().span(), value_span }
    }
}

/// `#[elicit(…)]` on a field.
#[derive(Default)]
pub(crate) struct FieldOptions {
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) min_length: Option<Spanned_<u64>>,
    pub(crate) max_length: Option<Spanned_<u64>>,
    pub(crate) format: Option<Spanned_<String>>,
    pub(crate) minimum: Option<Spanned_<f64>>,
    pub(crate) maximum: Option<Spanned_<f64>>,
    pub(crate) min_items: Option<Spanned_<u64>>,
    pub(crate) max_items: Option<Spanned_<u64>>,
    pub(crate) default: Option<Spanned_<Expr>>,
    pub(crate) style: Option<Spanned_<String>>,
    pub(crate) not_secret: bool,
}

/// What serde does with a field (or, on a container, with every field) when it is missing.
pub(crate) enum SerdeDefault {
    None,
    /// `#[serde(default)]`.
    Default(Span),
    /// `#[serde(default = "path")]`.
    Path(syn::ExprPath, Span),
}

impl SerdeDefault {
    pub(crate) fn span(&self) -> Option<Span> {
        match self {
            SerdeDefault::None => None,
            SerdeDefault::Default(span) | SerdeDefault::Path(_, span) => Some(*span),
        }
    }
}

/// One named field.
pub(crate) struct Field {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) doc: String,
    pub(crate) rename: Option<String>,
    pub(crate) skip: bool,
    pub(crate) flatten: Option<Span>,
    pub(crate) serde_default: SerdeDefault,
    /// Set when serde will reject one of the field's attributes itself (and report it).
    pub(crate) serde_broken: bool,
    pub(crate) options: FieldOptions,
}

/// One enum variant.
pub(crate) struct Variant {
    pub(crate) ident: Ident,
    pub(crate) doc: String,
    pub(crate) rename: Option<String>,
    pub(crate) skip: bool,
    pub(crate) title: Option<LitStr>,
    /// The span of the variant's data, if it has any.
    pub(crate) data: Option<Span>,
}

/// Container-level attributes.
pub(crate) struct Container {
    pub(crate) rename_all: Option<Spanned_<String>>,
    pub(crate) serde_default: SerdeDefault,
    pub(crate) style: Option<Spanned_<String>>,
    /// Serde options that make the type deserialize from something other than its own
    /// fields or variant names (`transparent`, `from`, `tag`, …), with their spans.
    pub(crate) reshaping: Vec<(String, Span)>,
    /// Set when serde will reject one of the attributes itself (and report it).
    pub(crate) broken: bool,
}

pub(crate) fn metas(tokens: proc_macro2::TokenStream, errors: &mut Errors) -> Vec<Meta> {
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    }
}

fn list_tokens(attr: &Attribute, errors: &mut Errors) -> Option<proc_macro2::TokenStream> {
    match &attr.meta {
        Meta::List(list) => Some(list.tokens.clone()),
        other => {
            errors.spanned(other, "expected a list of options, e.g. `#[elicit(title = \"…\")]`");
            None
        }
    }
}

fn lit_of(meta: &Meta) -> Option<&Lit> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit, .. }) => Some(lit),
            _ => None,
        },
        _ => None,
    }
}

fn key_of(meta: &Meta) -> String {
    let path = meta.path();
    match path.get_ident() {
        Some(ident) => ident.to_string(),
        None => path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::"),
    }
}

fn string(meta: &Meta, errors: &mut Errors) -> Option<LitStr> {
    match lit_of(meta) {
        Some(Lit::Str(s)) => Some(s.clone()),
        _ => {
            let key = key_of(meta);
            errors.spanned(meta, format!("`{key}` expects a string literal: `{key} = \"…\"`"));
            None
        }
    }
}

fn unsigned(meta: &Meta, errors: &mut Errors) -> Option<Spanned_<u64>> {
    match lit_of(meta) {
        Some(Lit::Int(i)) if !i.base10_digits().starts_with('-') => match i.base10_parse::<u64>() {
            Ok(value) => Some(Spanned_::new(value, meta)),
            Err(_) => {
                errors.spanned(i, format!("`{}` is too large: it must fit in a `u64`", key_of(meta)));
                None
            }
        },
        _ => {
            let key = key_of(meta);
            errors.spanned(meta, format!("`{key}` expects a non-negative integer: `{key} = 1`"));
            None
        }
    }
}

fn number(meta: &Meta, errors: &mut Errors) -> Option<Spanned_<f64>> {
    let parsed = match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<f64>().ok(),
            Expr::Lit(ExprLit { lit: Lit::Float(f), .. }) => f.base10_parse::<f64>().ok(),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
                Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<f64>().ok().map(|v| -v),
                Expr::Lit(ExprLit { lit: Lit::Float(f), .. }) => f.base10_parse::<f64>().ok().map(|v| -v),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    if parsed.is_none() {
        let key = key_of(meta);
        errors.spanned(meta, format!("`{key}` expects a number literal: `{key} = 0`"));
    }
    parsed.map(|value| Spanned_::new(value, meta))
}

fn once<T>(slot: &mut Option<T>, value: Option<T>, meta: &Meta, errors: &mut Errors) {
    if slot.is_some() {
        let key = key_of(meta);
        errors.spanned(meta, format!("`{key}` is given more than once; keep one `{key} = …`"));
    } else if value.is_some() {
        *slot = value;
    }
}

const FIELD_OPTIONS: &str = "`title`, `description`, `min_length`, `max_length`, `format`, `minimum`, `maximum`, `min_items`, `max_items`, `default`, `style`, `not_secret`";

fn field_options(attrs: &[Attribute], errors: &mut Errors) -> FieldOptions {
    let mut o = FieldOptions::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("elicit")) {
        let Some(tokens) = list_tokens(attr, errors) else { continue };
        for meta in metas(tokens, errors) {
            match key_of(&meta).as_str() {
                "title" => once(&mut o.title, string(&meta, errors), &meta, errors),
                "description" => once(&mut o.description, string(&meta, errors), &meta, errors),
                "min_length" => once(&mut o.min_length, unsigned(&meta, errors), &meta, errors),
                "max_length" => once(&mut o.max_length, unsigned(&meta, errors), &meta, errors),
                "min_items" => once(&mut o.min_items, unsigned(&meta, errors), &meta, errors),
                "max_items" => once(&mut o.max_items, unsigned(&meta, errors), &meta, errors),
                "minimum" => once(&mut o.minimum, number(&meta, errors), &meta, errors),
                "maximum" => once(&mut o.maximum, number(&meta, errors), &meta, errors),
                "format" => {
                    let v = string(&meta, errors).map(|s| Spanned_::new(s.value(), &meta));
                    once(&mut o.format, v, &meta, errors)
                }
                "style" => {
                    let v = string(&meta, errors).map(|s| Spanned_::new(s.value(), &meta));
                    once(&mut o.style, v, &meta, errors)
                }
                "default" => match &meta {
                    Meta::NameValue(nv) => {
                        once(&mut o.default, Some(Spanned_::new(nv.value.clone(), &meta)), &meta, errors)
                    }
                    _ => errors.spanned(&meta, "`default` expects a value: `default = …`"),
                },
                "not_secret" => match meta {
                    Meta::Path(_) => o.not_secret = true,
                    _ => errors.spanned(&meta, "`not_secret` takes no value: write `#[elicit(not_secret)]`"),
                },
                other => errors.spanned(
                    meta.path(),
                    format!("unknown `#[elicit]` field option `{other}`; expected one of {FIELD_OPTIONS}"),
                ),
            }
        }
    }
    o
}

/// The deserialize-side name in `rename = "…"` or `rename(deserialize = "…")`.
fn serde_name(meta: &Meta) -> Option<String> {
    match meta {
        Meta::NameValue(_) => match lit_of(meta) {
            Some(Lit::Str(s)) => Some(s.value()),
            _ => None,
        },
        Meta::List(list) => {
            let mut found = None;
            let _ = list.parse_nested_meta(|m| {
                if m.path.is_ident("deserialize") {
                    found = Some(m.value()?.parse::<LitStr>()?.value());
                } else if m.input.peek(Token![=]) {
                    m.value()?.parse::<LitStr>()?;
                }
                Ok(())
            });
            found
        }
        Meta::Path(_) => None,
    }
}

/// The serde attributes of a field or variant that change the form.
struct SerdeItem {
    rename: Option<String>,
    skip: bool,
    flatten: Option<Span>,
    default: SerdeDefault,
    /// Set when serde will reject the attribute itself (and report it).
    broken: bool,
}

/// The serde options in `#[serde(…)]` attributes. Unknown or malformed options are serde's to
/// report; we only read the ones that shape the form.
fn serde_metas(attrs: &[Attribute]) -> Vec<Meta> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .filter_map(|a| match &a.meta {
            Meta::List(list) => Some(metas(list.tokens.clone(), &mut Errors::default())),
            _ => None,
        })
        .flatten()
        .collect()
}

/// `default` or `default = "path"`; `None` (with `broken`) when serde will reject it.
fn serde_default(meta: &Meta, broken: &mut bool) -> SerdeDefault {
    match meta {
        Meta::Path(_) => SerdeDefault::Default(meta.span()),
        _ => match lit_of(meta).and_then(|lit| match lit {
            Lit::Str(s) => s.parse::<syn::ExprPath>().ok(),
            _ => None,
        }) {
            Some(path) => SerdeDefault::Path(path, meta.path().span()),
            None => {
                *broken = true;
                SerdeDefault::None
            }
        },
    }
}

fn serde_item(attrs: &[Attribute]) -> SerdeItem {
    let mut item = SerdeItem { rename: None, skip: false, flatten: None, default: SerdeDefault::None, broken: false };
    for meta in serde_metas(attrs) {
        match key_of(&meta).as_str() {
            "rename" => item.rename = serde_name(&meta).or(item.rename),
            "skip" | "skip_deserializing" => item.skip = true,
            "flatten" => item.flatten = Some(meta.span()),
            "default" => item.default = serde_default(&meta, &mut item.broken),
            _ => {}
        }
    }
    item
}

/// Container options after which serde no longer reads the type as an object of its fields
/// (or, for an enum, as one of its variant names).
const RESHAPING: &[&str] = &["transparent", "from", "try_from", "tag", "content", "untagged"];

pub(crate) fn container(attrs: &[Attribute], errors: &mut Errors) -> Container {
    let mut c = Container {
        rename_all: None,
        serde_default: SerdeDefault::None,
        style: None,
        reshaping: Vec::new(),
        broken: false,
    };
    for meta in serde_metas(attrs) {
        let key = key_of(&meta);
        match key.as_str() {
            "rename_all" => {
                if let Some(rule) = serde_name(&meta) {
                    c.rename_all = Some(Spanned_::new(rule, &meta));
                }
            }
            "default" => c.serde_default = serde_default(&meta, &mut c.broken),
            _ if RESHAPING.contains(&key.as_str()) => c.reshaping.push((key, meta.path().span())),
            _ => {}
        }
    }
    for attr in attrs.iter().filter(|a| a.path().is_ident("elicit")) {
        let Some(tokens) = list_tokens(attr, errors) else { continue };
        for meta in metas(tokens, errors) {
            match key_of(&meta).as_str() {
                "style" => {
                    let v = string(&meta, errors).map(|s| Spanned_::new(s.value(), &meta));
                    once(&mut c.style, v, &meta, errors)
                }
                other => errors.spanned(
                    meta.path(),
                    format!(
                        "unknown `#[elicit]` option `{other}` on a type; here only `style = \"…\"` is accepted (field options go on the fields)"
                    ),
                ),
            }
        }
    }
    c
}

pub(crate) fn fields(fields: &Fields, errors: &mut Errors) -> Vec<Field> {
    fields
        .iter()
        .filter_map(|f| {
            let ident = f.ident.clone()?;
            let serde = serde_item(&f.attrs);
            Some(Field {
                ident,
                ty: f.ty.clone(),
                doc: doc_text(&f.attrs),
                rename: serde.rename,
                skip: serde.skip,
                flatten: serde.flatten,
                serde_default: serde.default,
                serde_broken: serde.broken,
                options: field_options(&f.attrs, errors),
            })
        })
        .collect()
}

pub(crate) fn variants(data: &syn::DataEnum, errors: &mut Errors) -> Vec<Variant> {
    data.variants
        .iter()
        .map(|v| {
            let serde = serde_item(&v.attrs);
            let mut title = None;
            for attr in v.attrs.iter().filter(|a| a.path().is_ident("elicit")) {
                let Some(tokens) = list_tokens(attr, errors) else { continue };
                for meta in metas(tokens, errors) {
                    match key_of(&meta).as_str() {
                        "title" => once(&mut title, string(&meta, errors), &meta, errors),
                        other => errors.spanned(
                            meta.path(),
                            format!("unknown `#[elicit]` option `{other}` on a variant; expected `title = \"…\"`"),
                        ),
                    }
                }
            }
            Variant {
                ident: v.ident.clone(),
                doc: doc_text(&v.attrs),
                rename: serde.rename,
                skip: serde.skip,
                title,
                data: (!matches!(v.fields, Fields::Unit)).then(|| v.fields.span()),
            }
        })
        .collect()
}
