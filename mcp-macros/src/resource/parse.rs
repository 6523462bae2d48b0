//! Reading `#[resource("uri", …)]` and the function signature. No semantic checks here.

use proc_macro2::{TokenStream, TokenTree};
use syn::{Attribute, LitStr, Meta, Signature};

use crate::common::Errors;
use crate::options::{
    Flag, FnParts, flag_value, key, metas, read_fn, set_once, string_list_value, string_value, unknown_option,
};

/// The options of `#[resource(…)]`.
#[derive(Default)]
pub(crate) struct ResourceAttr {
    pub(crate) uri: Option<LitStr>,
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    /// The resource is the view of an MCP App (`app`), with these `_meta.ui` options.
    pub(crate) app: Option<(Meta, Flag)>,
    pub(crate) app_options: AppOptions,
}

/// The options of a view (`#[resource("ui://…", app, …)]`), each kept with its option for
/// errors about it.
#[derive(Default)]
pub(crate) struct AppOptions {
    pub(crate) connect_domains: Option<(Meta, Vec<LitStr>)>,
    pub(crate) resource_domains: Option<(Meta, Vec<LitStr>)>,
    pub(crate) frame_domains: Option<(Meta, Vec<LitStr>)>,
    pub(crate) base_uri_domains: Option<(Meta, Vec<LitStr>)>,
    pub(crate) permissions: Option<(Meta, Vec<LitStr>)>,
    pub(crate) domain: Option<(Meta, LitStr)>,
    pub(crate) prefers_border: Option<(Meta, Flag)>,
}

impl AppOptions {
    /// The options given, for the error when `app` is missing.
    pub(crate) fn given(&self) -> Vec<&Meta> {
        let lists = [&self.connect_domains, &self.resource_domains, &self.frame_domains, &self.base_uri_domains];
        let mut given: Vec<&Meta> = lists.into_iter().flatten().map(|(m, _)| m).collect();
        given.extend(self.permissions.as_ref().map(|(m, _)| m));
        given.extend(self.domain.as_ref().map(|(m, _)| m));
        given.extend(self.prefers_border.as_ref().map(|(m, _)| m));
        given
    }
}

const OPTIONS: &[&str] = &[
    "name",
    "title",
    "description",
    "mime_type",
    "app",
    "connect_domains",
    "resource_domains",
    "frame_domains",
    "base_uri_domains",
    "permissions",
    "domain",
    "prefers_border",
];

/// The browser features a view may ask for, as `permissions = [...]` names them.
pub(crate) const PERMISSIONS: &[&str] = &["camera", "microphone", "geolocation", "clipboard_write"];

fn permission_problem(name: &str) -> Option<&'static str> {
    (!PERMISSIONS.contains(&name))
        .then_some("the permissions are `\"camera\"`, `\"microphone\"`, `\"geolocation\"` and `\"clipboard_write\"`")
}

fn origin_problem(origin: &str) -> Option<&'static str> {
    crate::common::origin_problem(origin)
}

/// Stores `value` with its option, reporting a repetition.
fn keep<T>(slot: &mut Option<(Meta, T)>, value: Option<T>, meta: &Meta, errors: &mut Errors) {
    if slot.is_some() {
        errors.spanned(meta, format!("`{}` is given more than once in `#[resource(…)]`; keep one", key(meta)));
    } else if let Some(value) = value {
        *slot = Some((meta.clone(), value));
    }
}
const USAGE: &str = "`#[resource]` expects the URI (or URI template) first, as a string: `#[resource(\"scheme://path/{id}\", name = \"…\")]`";

/// Parses the tokens inside `#[resource(…)]`.
pub(crate) fn resource_attr(tokens: TokenStream, errors: &mut Errors) -> ResourceAttr {
    let mut attr = ResourceAttr::default();
    let mut tokens = tokens.into_iter().peekable();
    let first: Option<TokenTree> = tokens.peek().cloned();
    let rest: TokenStream = match &first {
        Some(TokenTree::Literal(lit)) => match syn::parse2::<LitStr>(TokenTree::Literal(lit.clone()).into()) {
            Ok(s) => {
                attr.uri = Some(s);
                tokens.next();
                match tokens.next() {
                    None => TokenStream::new(),
                    Some(TokenTree::Punct(p)) if p.as_char() == ',' => tokens.collect(),
                    Some(other) => {
                        errors.spanned(other, "expected `,` after the URI");
                        return attr;
                    }
                }
            }
            Err(_) => {
                errors.spanned(lit, USAGE);
                tokens.skip(1).skip_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ',')).skip(1).collect()
            }
        },
        Some(TokenTree::Ident(_)) => {
            // Options without a URI: report once, still read the options.
            errors.spanned(first.clone().into_iter().collect::<TokenStream>(), USAGE);
            tokens.collect()
        }
        Some(other) => {
            errors.spanned(other, USAGE);
            return attr;
        }
        None => {
            errors.push(syn::Error::new(proc_macro2::Span::call_site(), USAGE));
            return attr;
        }
    };
    for meta in metas(rest, "resource", errors) {
        let app = &mut attr.app_options;
        match key(&meta).as_str() {
            "app" => {
                let value = flag_value(&meta, "resource", errors);
                keep(&mut attr.app, value, &meta, errors);
                continue;
            }
            "prefers_border" => {
                let value = flag_value(&meta, "resource", errors);
                keep(&mut app.prefers_border, value, &meta, errors);
                continue;
            }
            "domain" => {
                let value = string_value(&meta, "resource", errors);
                keep(&mut app.domain, value, &meta, errors);
                continue;
            }
            "permissions" => {
                let value = string_list_value(&meta, "resource", permission_problem, errors);
                keep(&mut app.permissions, value, &meta, errors);
                continue;
            }
            list @ ("connect_domains" | "resource_domains" | "frame_domains" | "base_uri_domains") => {
                let slot = match list {
                    "connect_domains" => &mut app.connect_domains,
                    "resource_domains" => &mut app.resource_domains,
                    "frame_domains" => &mut app.frame_domains,
                    _ => &mut app.base_uri_domains,
                };
                let value = string_list_value(&meta, "resource", origin_problem, errors);
                keep(slot, value, &meta, errors);
                continue;
            }
            _ => {}
        }
        let slot = match key(&meta).as_str() {
            "name" => &mut attr.name,
            "title" => &mut attr.title,
            "description" => &mut attr.description,
            "mime_type" => &mut attr.mime_type,
            _ => {
                unknown_option(&meta, "resource", OPTIONS, errors);
                continue;
            }
        };
        let value = string_value(&meta, "resource", errors);
        set_once(slot, value, &meta, "resource", errors);
    }
    attr
}

/// A parsed `#[resource]` function: its options and what every function macro reads.
pub(crate) struct ResourceFn {
    pub(crate) attr: ResourceAttr,
    pub(crate) parts: FnParts,
}

impl std::ops::Deref for ResourceFn {
    type Target = FnParts;
    fn deref(&self) -> &FnParts {
        &self.parts
    }
}

/// Reads the function.
pub(crate) fn resource_fn(
    attr: ResourceAttr,
    attrs: &[Attribute],
    sig: &mut Signature,
    errors: &mut Errors,
) -> ResourceFn {
    let parts = read_fn(attrs, sig, attr.description.as_ref(), "resource", false, errors);
    ResourceFn { attr, parts }
}
