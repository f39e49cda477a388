use bytes::Bytes;
use serde_json::{json, Value};

use crate::domain::OutboxEvent;

/// The largest delivery body sent. A job whose post text would push its event over this is
/// sent with the text shortened and `description_truncated: true`; the full job is one
/// `GET /jobs/{id}` away.
pub const MAX_PAYLOAD_BYTES: usize = 20 * 1024;

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
        let over = body.len() - MAX_PAYLOAD_BYTES;
        // Leave room for the flag and for escapes the shortened text may still carry.
        let keep = text.len().saturating_sub(over + 256);
        let cut: String = text
            .char_indices()
            .take_while(|(i, c)| i + c.len_utf8() <= keep)
            .map(|(_, c)| c)
            .collect();
        data["description"] = Value::String(cut);
        data["description_truncated"] = Value::Bool(true);
    }
    Bytes::from(render(&data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use crate::domain::EventId;

    #[test]
    fn long_posts_are_shortened_to_fit() {
        let mut job = Dataset::generate(3, 1, 1).jobs.remove(0);
        job.description = "ünïcode ".repeat(10_000);
        let event = OutboxEvent {
            id: EventId::new_random(),
            kind: "job.new".into(),
            created_at: job.posted_at,
            data: serde_json::to_value(&job).unwrap_or_default(),
            deliveries: Vec::new(),
        };
        let body = payload(&event);
        assert!(body.len() <= MAX_PAYLOAD_BYTES, "{}", body.len());
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(v["data"]["description_truncated"], true);
        assert_eq!(v["type"], "job.new");
    }
}
