//! `keys`: issue, revoke, list API keys and change their plan or billing status, in the store
//! directly or through a running server's admin API, with the same output either way.

use anyhow::{anyhow, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use job_listings::domain::{ApiKeyRecord, BillingStatus, KeyId, Plan};
use job_listings::service::{JobListingsService, NewKey};

use crate::cli::KeysCommand;
use crate::remote::Remote;

/// Where the keys are changed.
pub(crate) enum Keys<'a> {
    /// In the store, with the service opened on it.
    Direct(&'a JobListingsService),
    /// Through a running server.
    Remote(&'a Remote),
}

/// A key as the command shows it: the record without its hash, as the admin API sends it.
#[derive(Debug, Deserialize)]
struct KeyInfo {
    id: KeyId,
    /// The key itself, only when just issued.
    #[serde(default)]
    key: Option<String>,
    hint: String,
    label: String,
    plan: Plan,
    billing_status: BillingStatus,
    created_at: DateTime<Utc>,
    revoked_at: Option<DateTime<Utc>>,
}

impl From<ApiKeyRecord> for KeyInfo {
    fn from(r: ApiKeyRecord) -> Self {
        Self {
            id: r.id,
            key: None,
            hint: r.hint,
            label: r.label,
            plan: r.plan,
            billing_status: r.billing_status,
            created_at: r.created_at,
            revoked_at: r.revoked_at,
        }
    }
}

pub(crate) async fn keys(keys: Keys<'_>, command: KeysCommand) -> Result<()> {
    match command {
        KeysCommand::Create {
            plan,
            label,
            anchor,
        } => {
            let new = NewKey {
                plan: plan.into(),
                billing_anchor: anchor,
                label,
            };
            let (key, info) = keys.create(new).await?;
            // The key alone on the first line, so scripts can take it with `head -n1`.
            println!("{key}");
            println!("id {}  plan {}", info.id, info.plan);
            eprintln!("This is the only time the key is shown; the store keeps only its hash.");
        }
        KeysCommand::Revoke { id } => {
            let before = keys.find(id).await?;
            let info = keys.change(id, Change::Revoke).await?;
            match before.revoked_at {
                Some(at) => println!(
                    "Key {id} ({}) was already revoked at {}.",
                    info.hint,
                    time(at)
                ),
                None => println!("Revoked key {id} ({}).", info.hint),
            }
        }
        KeysCommand::Billing { id, status } => {
            keys.find(id).await?;
            let info = keys.change(id, Change::Billing(status.into())).await?;
            println!(
                "Key {id} ({}) billing is now {}.",
                info.hint,
                billing(info.billing_status)
            );
        }
        KeysCommand::Plan { id, plan } => {
            keys.find(id).await?;
            let info = keys.change(id, Change::Plan(plan.into())).await?;
            println!("Key {id} ({}) is now on the {} plan.", info.hint, info.plan);
        }
        KeysCommand::List => print_keys(&keys.list().await?),
    }
    Ok(())
}

/// One change to a key.
enum Change {
    Revoke,
    Billing(BillingStatus),
    Plan(Plan),
}

impl Keys<'_> {
    async fn create(&self, new: NewKey) -> Result<(String, KeyInfo)> {
        match self {
            Keys::Direct(service) => {
                let (key, record) = service.create_key(new).await?;
                Ok((key.expose().to_owned(), record.into()))
            }
            Keys::Remote(remote) => {
                let body = json!({
                    "plan": new.plan,
                    "label": new.label,
                    "billing_anchor": new.billing_anchor,
                });
                let info: KeyInfo = remote
                    .call(remote.request(Method::POST, "/keys").json(&body))
                    .await?
                    .ok_or_else(|| anyhow!("the server has no key endpoint"))?;
                let key = info
                    .key
                    .clone()
                    .ok_or_else(|| anyhow!("the server did not send the new key"))?;
                Ok((key, info))
            }
        }
    }

    async fn list(&self) -> Result<Vec<KeyInfo>> {
        match self {
            Keys::Direct(service) => Ok(service.list_keys().into_iter().map(Into::into).collect()),
            Keys::Remote(remote) => {
                #[derive(Deserialize)]
                struct List {
                    data: Vec<KeyInfo>,
                }
                let list: Option<List> = remote.call(remote.request(Method::GET, "/keys")).await?;
                Ok(list.map(|l| l.data).unwrap_or_default())
            }
        }
    }

    async fn find(&self, id: KeyId) -> Result<KeyInfo> {
        let found = match self {
            Keys::Direct(service) => service.key_record(id).ok().map(Into::into),
            Keys::Remote(remote) => {
                remote
                    .call(remote.request(Method::GET, &format!("/keys/{id}")))
                    .await?
            }
        };
        found.ok_or_else(|| anyhow!("no key has the id {id}; `keys list` shows every key"))
    }

    async fn change(&self, id: KeyId, change: Change) -> Result<KeyInfo> {
        match self {
            Keys::Direct(service) => {
                let record = match change {
                    Change::Revoke => service.revoke_key(id).await?,
                    Change::Billing(status) => service.set_billing_status(id, status).await?,
                    Change::Plan(plan) => service.set_plan(id, plan).await?,
                };
                Ok(record.into())
            }
            Keys::Remote(remote) => {
                let path = format!("/keys/{id}");
                let request = match change {
                    Change::Revoke => remote.request(Method::DELETE, &path),
                    Change::Billing(status) => remote
                        .request(Method::PATCH, &path)
                        .json(&json!({ "billing_status": status })),
                    Change::Plan(plan) => remote
                        .request(Method::PATCH, &path)
                        .json(&json!({ "plan": plan })),
                };
                remote
                    .call(request)
                    .await?
                    .ok_or_else(|| anyhow!("no key has the id {id}; `keys list` shows every key"))
            }
        }
    }
}

fn print_keys(keys: &[KeyInfo]) {
    if keys.is_empty() {
        println!("No keys yet. Issue one with `keys create --plan developer`.");
        return;
    }
    println!(
        "{:<36}  {:<13}  {:<10}  {:<8}  {:<20}  {:<20}  LABEL",
        "ID", "HINT", "PLAN", "BILLING", "CREATED", "REVOKED"
    );
    for k in keys {
        println!(
            "{:<36}  {:<13}  {:<10}  {:<8}  {:<20}  {:<20}  {}",
            k.id.to_string(),
            k.hint,
            k.plan.as_str(),
            billing(k.billing_status),
            time(k.created_at),
            k.revoked_at.map_or_else(|| "-".to_owned(), time),
            k.label
        );
    }
}

fn billing(status: BillingStatus) -> &'static str {
    match status {
        BillingStatus::Active => "active",
        BillingStatus::PastDue => "past_due",
        BillingStatus::Canceled => "canceled",
    }
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}
