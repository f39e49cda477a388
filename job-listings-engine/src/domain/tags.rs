use std::fmt;

use serde::{Deserialize, Serialize};

use super::ids::truncate;
use super::DomainError;

fn normalise_label(field: &'static str, raw: &str) -> Result<String, DomainError> {
    let label = raw.to_ascii_lowercase();
    let valid = !label.is_empty()
        && label.len() <= 40
        && label
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.+".contains(&c));
    if valid {
        Ok(label)
    } else {
        Err(DomainError::new(
            field,
            format!(
                "`{}` is not a valid label: use 1 to 40 letters, digits, '-', '_', '.' or '+'",
                truncate(raw)
            ),
        ))
    }
}

macro_rules! label {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
        #[serde(try_from = "String")]
        pub struct $name(String);

        // The bare string, borrowed: `into = "String"` cloned each one to write it.
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl $name {
            /// Lowercases and validates a label: 1 to 40 ASCII letters, digits, `-`, `_`, `.`
            /// or `+`.
            pub fn parse(raw: &str) -> Result<Self, DomainError> {
                normalise_label($field, raw).map(Self)
            }

            /// The normalised label.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        // A label is a string on the wire, in the form `parse` takes (and sends it back in).
        #[cfg(feature = "schema")]
        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "pattern": "^[A-Za-z0-9._+-]{1,40}$" })
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl TryFrom<String> for $name {
            type Error = DomainError;
            fn try_from(raw: String) -> Result<Self, Self::Error> {
                Self::parse(&raw)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }
    };
}

label!(
    /// A domain tag such as `engineering`, `ai` or `design`; compared case-insensitively.
    DomainTag, "domain"
);
label!(
    /// A seniority level such as `senior`, `staff` or `lead`; compared case-insensitively.
    Seniority, "seniority"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_lowercased_and_strict() {
        assert_eq!(DomainTag::parse("AI").map(|t| t.0), Ok("ai".to_owned()));
        assert!(DomainTag::parse(" ai").is_err());
        assert!(DomainTag::parse("ünï").is_err());
        assert!(DomainTag::parse("").is_err());
        assert!(DomainTag::parse("a b").is_err());
        assert!(Seniority::parse(&"x".repeat(41)).is_err());
    }
}
