//! How each job of a search page is written: every field or only those `fields` names, and
//! with `highlight=true` why it matched. Written from the job's rendered JSON, so a page of
//! small answers costs little more than a page of whole ones.

use std::fmt;

use bytes::Bytes;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::render::JOB_FIELDS;
use crate::domain::Job;
use crate::query::Match;

/// How the jobs of one answer are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct JobShape {
    /// The fields to keep, as bits over [`JOB_FIELDS`] (`id` always among them); `None`
    /// keeps every field.
    pub(crate) fields: Option<u32>,
    /// With `highlight=true`, the search text to show the match for.
    pub(crate) highlight: Option<String>,
}

impl JobShape {
    /// Keeps the fields named (each one of [`JOB_FIELDS`]) and `id`.
    pub(crate) fn keep<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<u32> {
        let mut bits = 1 << field_bit("id")?;
        for name in names {
            bits |= 1 << field_bit(name)?;
        }
        Some(bits)
    }

    /// Whether jobs are written as rendered.
    pub(crate) fn is_whole(&self) -> bool {
        self.fields.is_none() && self.highlight.is_none()
    }

    /// `job`, whose rendered JSON is `rendered`, in this shape.
    pub(crate) fn write(&self, rendered: Bytes, job: &Job) -> Bytes {
        if self.is_whole() {
            return rendered;
        }
        let mut out = Vec::with_capacity(rendered.len() + 320);
        out.push(b'{');
        match self.fields {
            None => out.extend_from_slice(&rendered[1..rendered.len() - 1]),
            Some(bits) => {
                // A rendered job is an object of the fields in `JOB_FIELDS`.
                let fields = serde_json::from_slice::<Fields<'_>>(&rendered)
                    .map(|f| f.0)
                    .unwrap_or_default();
                for (name, value) in fields {
                    if field_bit(name).is_some_and(|bit| bits & (1 << bit) != 0) {
                        if out.len() > 1 {
                            out.push(b',');
                        }
                        out.push(b'"');
                        out.extend_from_slice(name.as_bytes());
                        out.extend_from_slice(b"\":");
                        out.extend_from_slice(value.get().as_bytes());
                    }
                }
            }
        }
        if let Some(q) = &self.highlight {
            out.extend_from_slice(b",\"match\":");
            // A struct of strings always serializes.
            let _ = serde_json::to_writer(&mut out, &Match::of(job, q));
        }
        out.push(b'}');
        Bytes::from(out)
    }
}

/// Where a field is in [`JOB_FIELDS`].
fn field_bit(name: &str) -> Option<usize> {
    JOB_FIELDS.iter().position(|f| *f == name)
}

/// The fields of a JSON object, in order, their values as written.
struct Fields<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Fields<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(20));
                while let Some(entry) = map.next_entry::<&str, &RawValue>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::render::JobView;
    use crate::demo::Dataset;
    use serde_json::Value;

    fn rendered(job: &Job) -> Bytes {
        Bytes::from(serde_json::to_vec(&JobView::from(job)).unwrap())
    }

    #[test]
    fn the_fields_kept_are_those_named_and_id_in_the_jobs_order() {
        let job = &Dataset::generate(3, 2, 4).jobs[0];
        let shape = JobShape {
            fields: JobShape::keep(["salary", "role"]),
            highlight: None,
        };
        let written = shape.write(rendered(job), job);
        let text = std::str::from_utf8(&written).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        let whole: Value = serde_json::from_slice(&rendered(job)).unwrap();
        assert_eq!(value.as_object().unwrap().len(), 3);
        for name in ["id", "role", "salary"] {
            assert_eq!(value[name], whole[name], "{name}");
        }
        assert!(text.starts_with("{\"id\":") && text.find("\"role\"") < text.find("\"salary\""));
        assert_eq!(JobShape::keep(["role", "nope"]), None);
    }

    #[test]
    fn a_highlight_adds_the_match_to_every_field_or_to_those_kept() {
        let job = &Dataset::generate(3, 2, 4).jobs[0];
        let q = job.role.clone();
        let whole = JobShape {
            fields: None,
            highlight: Some(q.clone()),
        };
        let value: Value = serde_json::from_slice(&whole.write(rendered(job), job)).unwrap();
        let mut expected: Value = serde_json::from_slice(&rendered(job)).unwrap();
        expected["match"] = serde_json::to_value(Match::of(job, &q)).unwrap();
        assert_eq!(value, expected);
        assert!(!value["match"]["terms"].as_array().unwrap().is_empty());

        let small = JobShape {
            fields: JobShape::keep([]),
            highlight: Some(q),
        };
        let value: Value = serde_json::from_slice(&small.write(rendered(job), job)).unwrap();
        assert_eq!(value.as_object().unwrap().len(), 2);
        assert_eq!(value["match"], expected["match"]);
    }
}
