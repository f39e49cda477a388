use bytes::Bytes;
use serde_json::{json, Value};

use crate::domain::OutboxEvent;

/// The largest delivery body sent. A job whose post text would push its event over this is
/// sent with the text shortened and `description_truncated: true`; one whose list of copies
/// still would, with its oldest copies left out and `reposts_truncated: true`. The full job is
/// one `GET /jobs/{id}` away.
pub const MAX_PAYLOAD_BYTES: usize = 20_000;

/// The delivery body of an event: `{"type", "timestamp", "data"}`.
pub fn payload(event: &OutboxEvent) -> Bytes {
    let render = |data: &Value| {
        serde_json::to_vec(&json!({
            "type": event.kind,
            "timestamp": event.created_at,
            "data": data,
        }))
        .unwrap_or_default()
    };
    let body = render(&event.data);
    if body.len() <= MAX_PAYLOAD_BYTES {
        return Bytes::from(body);
    }
    let mut data = event.data.clone();
    if let Some(text) = data.get("description").and_then(Value::as_str) {
        // Counted as the body writes them, escapes included: a text of quotes or control
        // characters takes two to six times its length. Room is left for the flag.
        let room = escaped_len(text).saturating_sub(body.len() - MAX_PAYLOAD_BYTES + 64);
        let mut used = 0;
        let cut: String = text
            .chars()
            .take_while(|&c| {
                used += escaped_char_len(c);
                used <= room
            })
            .collect();
        if cut.len() < text.len() {
            data["description"] = Value::String(cut);
            data["description_truncated"] = Value::Bool(true);
        }
    }
    let mut body = render(&data);
    // Every other field is bounded but the list of copies (newest first): the oldest go.
    while body.len() > MAX_PAYLOAD_BYTES {
        let Some(reposts) = data
            .get_mut("reposts")
            .and_then(Value::as_array_mut)
            .filter(|r| !r.is_empty())
        else {
            break;
        };
        // About as many as the excess takes, at least one.
        let listed = serde_json::to_vec(&reposts).map_or(1, |r| r.len());
        let each = (listed / reposts.len()).max(1);
        let drop = (body.len() - MAX_PAYLOAD_BYTES)
            .div_ceil(each)
            .clamp(1, reposts.len());
        reposts.truncate(reposts.len() - drop);
        data["reposts_truncated"] = Value::Bool(true);
        body = render(&data);
    }
    Bytes::from(body)
}

/// Bytes `c` takes inside a JSON string as serde_json writes it.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0C}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Bytes `text` takes inside a JSON string as serde_json writes it.
fn escaped_len(text: &str) -> usize {
    text.chars().map(escaped_char_len).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use crate::domain::EventId;

    /// A `job.new` event of a demo job with this post text.
    fn event_with(description: String) -> OutboxEvent {
        let mut job = Dataset::generate(3, 1, 1).jobs.remove(0);
        job.description = description;
        OutboxEvent {
            id: EventId::new_random(),
            kind: "job.new".into(),
            created_at: job.posted_at,
            data: serde_json::to_value(&job).unwrap_or_default(),
            deliveries: Vec::new(),
        }
    }

    #[test]
    fn long_posts_are_shortened_to_fit() {
        let body = payload(&event_with("ünïcode ".repeat(10_000)));
        assert!(body.len() <= MAX_PAYLOAD_BYTES, "{}", body.len());
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(v["data"]["description_truncated"], true);
        assert_eq!(v["type"], "job.new");
    }

    #[test]
    fn a_long_list_of_copies_is_cut_to_fit_from_its_oldest() {
        let mut event = event_with("a post ".repeat(3_000));
        let copies: Vec<Value> = (0..200)
            .map(|n| {
                serde_json::json!({
                    "id": EventId::new_random().to_string(),
                    "source_url": format!("https://x.com/{}/status/{n}", "r".repeat(300)),
                    "posted_at": "2026-11-01T00:00:00Z",
                })
            })
            .collect();
        event.data["reposts"] = Value::Array(copies.clone());
        let body = payload(&event);
        assert!(body.len() <= MAX_PAYLOAD_BYTES, "{}", body.len());
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(v["data"]["reposts_truncated"], true);
        assert_eq!(v["data"]["description_truncated"], true);
        let kept = v["data"]["reposts"].as_array().map_or(0, Vec::len);
        assert!(kept > 0 && kept < copies.len(), "{kept}");
        assert_eq!(v["data"]["reposts"][0], copies[0], "the newest are kept");
    }

    #[test]
    fn posts_written_with_escapes_keep_as_much_text_as_fits() {
        for unit in ["\u{1}", "\"\\", "é\n", "plain "] {
            let body = payload(&event_with(unit.repeat(30_000)));
            assert!(body.len() <= MAX_PAYLOAD_BYTES, "{unit:?}: {}", body.len());
            assert!(
                body.len() > MAX_PAYLOAD_BYTES - 200,
                "{unit:?}: {} bytes, cut shorter than it had to be",
                body.len()
            );
            let v: Value = serde_json::from_slice(&body).unwrap_or_default();
            assert_eq!(v["data"]["description_truncated"], true, "{unit:?}");
            let kept = v["data"]["description"].as_str().unwrap_or("");
            assert!(kept.starts_with(unit), "{unit:?}: {kept:.40}");
        }
    }
}
