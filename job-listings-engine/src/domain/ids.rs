use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::DomainError;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A new random identifier.
            pub fn new_random() -> Self {
                Self(Uuid::new_v4())
            }

            /// Parses a UUID: hyphenated (canonical), simple, braced or `urn:uuid:` form, any case.
            pub fn parse(raw: &str) -> Result<Self, DomainError> {
                Uuid::try_parse(raw).map(Self).map_err(|_| {
                    DomainError::new($field, format!("`{}` is not a UUID such as 3f2b8c1e-9d4a-4b7e-8f00-1a2b3c4d5e6f", truncate(raw)))
                })
            }
        }

        // An id is a UUID on the wire: inline, so that it is not a schema of its own.
        #[cfg(feature = "schema")]
        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "format": "uuid" })
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = DomainError;
            fn from_str(raw: &str) -> Result<Self, Self::Err> {
                Self::parse(raw)
            }
        }
    };
}

uuid_id!(
    /// Identifies a job listing.
    JobId, "id"
);
uuid_id!(
    /// Identifies a company.
    CompanyId, "id"
);
uuid_id!(
    /// Identifies a webhook subscription.
    WebhookId, "id"
);
uuid_id!(
    /// Identifies an API key record (never the secret key itself).
    KeyId, "id"
);
uuid_id!(
    /// Identifies an outbox event; also the `webhook-id` receivers deduplicate on.
    EventId, "id"
);
uuid_id!(
    /// Identifies one pending or finished delivery of an event to one subscription.
    DeliveryId, "id"
);

/// Cuts echoed input so an error message never carries a huge value back.
pub fn truncate(raw: &str) -> String {
    const MAX: usize = 64;
    if raw.chars().count() <= MAX {
        raw.to_owned()
    } else {
        let cut: String = raw.chars().take(MAX).collect();
        format!("{cut}…")
    }
}
