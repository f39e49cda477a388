//! The admin API's request bodies and answers, declared once: the handlers read and write
//! them, and the typed client ([`AdminClient`](crate::client::AdminClient), feature
//! `client`) sends and reads the same types. The bulk uploads answer a
//! [`BulkReport`](crate::service::BulkReport).

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::domain::{ApiKeyRecord, BillingStatus, CompanyId, KeyId, Plan};

/// An issued API key's record: never the key itself (but in the answer that issues it) nor
/// its hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Key")]
#[non_exhaustive]
pub struct AdminKey {
    /// The record's identifier, which the commands and these paths take.
    pub id: KeyId,
    /// The key itself: in the answer to `POST /admin/v1/keys` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^jl_live_[A-Za-z0-9]{38}$"))]
    pub key: Option<String>,
    /// Its first characters, such as `jl_live_Ab3d…`, to tell keys apart.
    pub hint: String,
    /// Free-form label, such as the customer's e-mail.
    pub label: String,
    /// The paid plan.
    pub plan: Plan,
    /// Only keys whose billing is active are accepted by the public API.
    pub billing_status: BillingStatus,
    /// The instant monthly periods are counted from.
    pub billing_anchor: DateTime<Utc>,
    /// When the key was issued.
    pub created_at: DateTime<Utc>,
    /// When the key was revoked, or null.
    pub revoked_at: Option<DateTime<Utc>>,
}

impl AdminKey {
    /// A stored key as the admin API shows it, with the key itself when it was just issued.
    pub fn of(r: &ApiKeyRecord, key: Option<&str>) -> Self {
        Self {
            id: r.id,
            key: key.map(str::to_owned),
            hint: r.hint.clone(),
            label: r.label.clone(),
            plan: r.plan,
            billing_status: r.billing_status,
            billing_anchor: r.billing_anchor,
            created_at: r.created_at,
            revoked_at: r.revoked_at,
        }
    }
}

/// `POST /admin/v1/keys`: a key to issue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "NewKey")]
#[non_exhaustive]
pub struct NewKeyRequest {
    /// The plan bought.
    pub plan: Plan,
    /// Free-form label, such as the customer's e-mail.
    #[serde(default)]
    pub label: String,
    /// When monthly periods start counting: now or earlier (a later time is a 400
    /// `invalid_parameter`); null or left out: now. Kept to the whole second.
    #[serde(default)]
    pub billing_anchor: Option<DateTime<Utc>>,
}

impl NewKeyRequest {
    /// A key of `plan`, labelled `label`, billed from `billing_anchor` (or from now).
    pub fn new(plan: Plan, label: String, billing_anchor: Option<DateTime<Utc>>) -> Self {
        Self {
            plan,
            label,
            billing_anchor,
        }
    }
}

/// `PATCH /admin/v1/keys/{id}`: a key's new plan, billing status or both; at least one of
/// the two, not null (else 400 `invalid_body`); null is the same as left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "KeyPatch")]
#[schemars(extend("anyOf" = [
    {"required": ["plan"], "properties": {"plan": {"type": "string"}}},
    {"required": ["billing_status"], "properties": {"billing_status": {"type": "string"}}}
]))]
#[non_exhaustive]
pub struct KeyChange {
    /// The new plan: its quota and rate apply at once, usage in the current period is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// The new billing status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_status: Option<BillingStatus>,
}

impl KeyChange {
    /// A change of plan.
    pub fn plan(plan: Plan) -> Self {
        Self {
            plan: Some(plan),
            billing_status: None,
        }
    }

    /// A change of billing status.
    pub fn billing_status(status: BillingStatus) -> Self {
        Self {
            plan: None,
            billing_status: Some(status),
        }
    }
}

/// `{"data": [...]}`: the admin lists are whole, not paged (keys and subscriptions number in
/// the thousands at most).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DataList<T> {
    /// Every item.
    pub data: Vec<T>,
}

/// `POST /admin/v1/companies/lookup`: the ids to look up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanyLookup {
    /// Company ids, at most 10,000.
    #[schemars(length(max = 10000))]
    pub ids: Vec<CompanyId>,
}

/// Which of the ids looked up name a stored company.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CompanyLookupResult")]
#[non_exhaustive]
pub struct LookedUp {
    /// The ids asked for that name a stored company, in the order asked.
    pub found: Vec<CompanyId>,
    /// The others, in the order asked.
    pub missing: Vec<CompanyId>,
}

/// `POST /admin/v1/jobs/close-unseen`: which jobs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseUnseen {
    /// Close the active jobs last seen strictly before this instant (RFC 3339).
    pub seen_before: chrono::DateTime<chrono::Utc>,
    /// Only count them.
    #[serde(default)]
    pub dry_run: bool,
}

/// What `POST /admin/v1/jobs/close-unseen` found and did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[non_exhaustive]
pub struct UnseenClosedView {
    /// The instant asked for.
    pub seen_before: chrono::DateTime<chrono::Utc>,
    /// Whether it only counted.
    pub dry_run: bool,
    /// Active jobs last seen before it.
    pub matched: u64,
    /// Those closed: 0 on a dry run.
    pub closed: u64,
}

/// `POST /admin/v1/backup`: where to write the backup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupRequest {
    /// The absolute path, on the server's machine, of a new or empty folder to write the
    /// backup into: in a folder that exists, outside the server's data folder.
    pub to: PathBuf,
}

/// What a backup holds and what it cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Backup", deny_unknown_fields)]
#[non_exhaustive]
pub struct BackupWritten {
    /// Where it was written.
    pub to: PathBuf,
    /// Jobs in it.
    pub jobs: u64,
    /// Companies in it.
    pub companies: u64,
    /// Keys in it.
    pub keys: u64,
    /// Webhook subscriptions in it.
    pub webhooks: u64,
    /// Its size.
    pub bytes: u64,
    /// How long it took.
    pub took_ms: u64,
    /// How long writes waited while the copy was made (reads never wait).
    pub writes_paused_ms: u64,
}
