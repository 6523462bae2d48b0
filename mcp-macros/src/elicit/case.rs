//! serde's `rename_all` rules, so the form's names are the names serde deserializes.

/// A `rename_all` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl Rule {
    pub(crate) fn parse(s: &str) -> Option<Rule> {
        Some(match s {
            "lowercase" => Rule::Lower,
            "UPPERCASE" => Rule::Upper,
            "PascalCase" => Rule::Pascal,
            "camelCase" => Rule::Camel,
            "snake_case" => Rule::Snake,
            "SCREAMING_SNAKE_CASE" => Rule::ScreamingSnake,
            "kebab-case" => Rule::Kebab,
            "SCREAMING-KEBAB-CASE" => Rule::ScreamingKebab,
            _ => return None,
        })
    }

    /// Renames a field (written in snake_case).
    pub(crate) fn field(self, name: &str) -> String {
        match self {
            Rule::Lower | Rule::Snake => name.to_owned(),
            Rule::Upper | Rule::ScreamingSnake => name.to_ascii_uppercase(),
            Rule::Pascal => {
                let mut out = String::new();
                let mut capital = true;
                for c in name.chars() {
                    if c == '_' {
                        capital = true;
                    } else if capital {
                        out.extend(c.to_uppercase());
                        capital = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            Rule::Camel => {
                let pascal = Rule::Pascal.field(name);
                let mut chars = pascal.chars();
                chars.next().map(|f| f.to_lowercase().chain(chars).collect()).unwrap_or_default()
            }
            Rule::Kebab => name.replace('_', "-"),
            Rule::ScreamingKebab => name.replace('_', "-").to_ascii_uppercase(),
        }
    }

    /// Renames a variant (written in PascalCase).
    pub(crate) fn variant(self, name: &str) -> String {
        match self {
            Rule::Pascal => name.to_owned(),
            Rule::Lower => name.to_ascii_lowercase(),
            Rule::Upper => name.to_ascii_uppercase(),
            Rule::Camel => {
                let mut chars = name.chars();
                chars.next().map(|f| f.to_lowercase().chain(chars).collect()).unwrap_or_default()
            }
            Rule::Snake => {
                let mut out = String::new();
                for (i, c) in name.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.extend(c.to_lowercase());
                }
                out
            }
            Rule::ScreamingSnake => Rule::Snake.variant(name).to_ascii_uppercase(),
            Rule::Kebab => Rule::Snake.variant(name).replace('_', "-"),
            Rule::ScreamingKebab => Rule::ScreamingSnake.variant(name).replace('_', "-"),
        }
    }
}

/// Splits a name into lowercase words at `_`, `-` and lower-to-upper case changes.
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_variants() {
        assert_eq!(Rule::Camel.field("project_name"), "projectName");
        assert_eq!(Rule::Pascal.field("project_name"), "ProjectName");
        assert_eq!(Rule::ScreamingKebab.field("a_b"), "A-B");
        assert_eq!(Rule::Snake.variant("DateTime"), "date_time");
        assert_eq!(Rule::Kebab.variant("DateTime"), "date-time");
        assert_eq!(Rule::Camel.variant("DateTime"), "dateTime");
        assert_eq!(Rule::Lower.variant("DateTime"), "datetime");
        assert_eq!(Rule::ScreamingSnake.variant("DateTime"), "DATE_TIME");
    }

    #[test]
    fn splits_words() {
        assert_eq!(words("apiKey"), ["api", "key"]);
        assert_eq!(words("API_KEY"), ["api", "key"]);
        assert_eq!(words("user-password2"), ["user", "password2"]);
    }
}
