//! `embed_skills!("folder")`: every file of a folder of agent skills compiled into the program,
//! handed to `typed_mcp::skills::Skills::files`. The folder is read when the crate compiles;
//! each file is embedded with `include_bytes!`, so Cargo rebuilds when one of them changes.
//! The skills themselves are checked where every skill is, by the server's `build()`.

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

/// Parses the argument, reads the folder, expands; errors become `compile_error!`.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match parse(input).and_then(|folder| valid(&folder).map(|files| generate(&folder, &files))) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.to_compile_error();
            // A value of the right type beside the error: one mistake, one message.
            quote! {{ #error; ::typed_mcp::__private_v0_1::Skills::files("", ::core::iter::empty::<(&'static str, &'static [u8])>()) }}
        }
    }
}

/// The one argument: a string literal.
fn parse(input: TokenStream) -> syn::Result<LitStr> {
    syn::parse2::<LitStr>(input.clone()).map_err(|_| {
        syn::Error::new_spanned(
            &input,
            "`embed_skills!` expects a string literal: the skills folder, relative to the crate's `Cargo.toml`, e.g. `embed_skills!(\"skills\")`",
        )
    })
}

/// Every file under the folder, as (path under the folder, absolute path), in path order.
/// Names beginning with `.` are left out, as `Skills::dir` leaves them out.
fn valid(folder: &LitStr) -> syn::Result<Vec<(String, PathBuf)>> {
    let base = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default();
    let root = base.join(folder.value());
    if !root.is_dir() {
        return Err(syn::Error::new_spanned(
            folder,
            format!("`{}` is not a folder; the path is relative to the crate's `Cargo.toml`", folder.value()),
        ));
    }
    let mut files = Vec::new();
    walk(&root, "", &mut files).map_err(|e| syn::Error::new_spanned(folder, e))?;
    files.sort();
    if files.is_empty() {
        return Err(syn::Error::new_spanned(folder, format!("`{}` holds no file", folder.value())));
    }
    Ok(files)
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let path = entry.path();
        let name =
            entry.file_name().into_string().map_err(|_| format!("{} has a name that is not UTF-8", path.display()))?;
        if name.starts_with('.') {
            continue;
        }
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        if path.is_dir() {
            walk(&path, &relative, out)?;
        } else if path.is_file() {
            out.push((relative, path));
        }
    }
    Ok(())
}

fn generate(folder: &LitStr, files: &[(String, PathBuf)]) -> TokenStream {
    let origin = format!("{}/", folder.value().trim_end_matches('/'));
    let entries = files.iter().map(|(relative, absolute)| {
        let absolute = absolute.display().to_string();
        quote! { (#relative, ::core::include_bytes!(#absolute) as &'static [u8]) }
    });
    quote! {{
        const FILES: &[(&str, &[u8])] = &[#(#entries),*];
        ::typed_mcp::__private_v0_1::Skills::files(#origin, FILES.iter().copied())
    }}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anything_but_a_string_literal_is_refused() {
        let error = parse(quote!(skills)).unwrap_err();
        assert!(error.to_string().contains("expects a string literal"), "{error}");
        assert!(parse(quote!("skills")).is_ok());
    }

    #[test]
    fn a_missing_folder_is_named() {
        let error = valid(&syn::parse_quote!("no/such/folder")).unwrap_err();
        assert!(error.to_string().contains("`no/such/folder` is not a folder"), "{error}");
    }

    #[test]
    fn each_file_is_included_by_its_absolute_path() {
        let files = vec![("a/SKILL.md".to_owned(), PathBuf::from("/x/skills/a/SKILL.md"))];
        let code = generate(&syn::parse_quote!("skills"), &files).to_string();
        assert!(code.contains("\"a/SKILL.md\""), "{code}");
        assert!(code.contains("include_bytes ! (\"/x/skills/a/SKILL.md\")"), "{code}");
        assert!(code.contains("Skills :: files (\"skills/\""), "{code}");
    }
}
