//! Records as JSON Lines, the form imports take them in (a file for the `import` command, a
//! streamed body for the admin API's bulk uploads): one JSON object per line, in the serde
//! form of [`Company`](super::Company) or [`Job`](super::Job). Both read a line with
//! [`parse_record`], so a bad line gets the same message either way.

use serde::de::DeserializeOwned;

use super::DomainError;

/// One line's record, or what is wrong with it (column, field and what to fix); `None` for
/// a blank line. `first` strips a byte order mark. A field no record has is refused (a
/// misspelt one would be lost); `validate` checks the record once it is read.
pub fn parse_record<T: DeserializeOwned>(
    text: &[u8],
    first: bool,
    validate: fn(&T) -> Result<(), DomainError>,
) -> Option<Result<T, String>> {
    let text = if first {
        text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text)
    } else {
        text
    };
    if text.trim_ascii().is_empty() {
        return None;
    }
    // serde would also read a positional array into a struct: only objects are records.
    if !text.trim_ascii_start().starts_with(b"{") {
        return Some(Err(
            "a record must be a JSON object, one per line".to_owned()
        ));
    }
    let mut unknown = None;
    let mut json = serde_json::Deserializer::from_slice(text);
    let mut note_unknown = |path: serde_ignored::Path| {
        unknown.get_or_insert_with(|| field_path(&path));
    };
    let parsed = serde_path_to_error::deserialize(serde_ignored::Deserializer::new(
        &mut json,
        &mut note_unknown,
    ))
    .map_err(|e| {
        let field = e.path().to_string();
        (field, e.into_inner())
    })
    .and_then(|value: T| json.end().map(|()| value).map_err(|e| (String::new(), e)));
    let misspelt = |field: &str| {
        format!(
            "unknown field `{field}`: check its spelling against the record's fields in \
             docs/operating.md (Importing your own data)"
        )
    };
    Some(match (parsed, unknown) {
        (Ok(_), Some(field)) => Err(misspelt(&field)),
        (Ok(value), None) => validate(&value).map(|()| value).map_err(|e| e.to_string()),
        // A missing field is most often a misspelt one: name the stranger too.
        (Err((field, e)), Some(stranger)) => Err(format!(
            "{}; {}",
            describe_json_error(&field, &e),
            misspelt(&stranger)
        )),
        (Err((field, e)), None) => Err(describe_json_error(&field, &e)),
    })
}

/// A field's place in a record as a reader writes it: `salary.period`, `enrichment.investors[2]`
/// (serde_ignored's own form marks optional values with a `?` level of their own).
fn field_path(path: &serde_ignored::Path) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", field_path(parent)),
        Path::Map { parent, key } => match field_path(parent) {
            above if above.is_empty() => key.clone(),
            above => format!("{above}.{key}"),
        },
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => field_path(parent),
    }
}

/// serde_json's message, with the column in front instead of a "line 1" that means nothing
/// for a single line, and the field the bad value is in (`field`, as serde_path_to_error
/// writes it: `.` for the record itself).
fn describe_json_error(field: &str, e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    let kind = match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not valid JSON",
        serde_json::error::Category::Data => "not a valid record",
        serde_json::error::Category::Io => "unreadable",
    };
    match field {
        "" | "." => format!("column {}: {kind}: {message}", e.column()),
        // A value's own check may name its field already ("confidence: must be …").
        field if message.starts_with(&format!("{field}: ")) => {
            format!("column {}: {kind}: {message}", e.column())
        }
        field => format!("column {}: {kind}: {field}: {message}", e.column()),
    }
}
