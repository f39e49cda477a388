//! `keys`: issue, revoke, list API keys and change their plan or billing status, in the store
//! directly or through a running server's admin API, with the same output either way.

use anyhow::{anyhow, Result};
use chrono::{DateTime, SecondsFormat, Utc};

use job_listings::api::admin::wire::{AdminKey, KeyChange, NewKeyRequest};
use job_listings::client::{AdminClient, ClientError};
use job_listings::domain::{BillingStatus, KeyId, Plan};
use job_listings::service::{JobListingsService, NewKey};

use crate::cli::KeysCommand;

/// Where the keys are changed.
pub(crate) enum Keys<'a> {
    /// In the store, with the service opened on it.
    Direct(&'a JobListingsService),
    /// Through a running server.
    Remote(&'a AdminClient),
}

pub(crate) async fn keys(keys: Keys<'_>, command: KeysCommand) -> Result<()> {
    match command {
        KeysCommand::Create {
            plan,
            label,
            anchor,
        } => {
            let mut new = NewKey::new(plan.into()).label(label);
            if let Some(anchor) = anchor {
                new = new.billing_anchor(anchor);
            }
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
    async fn create(&self, new: NewKey) -> Result<(String, AdminKey)> {
        match self {
            Keys::Direct(service) => {
                let (key, record) = service.create_key(new).await?;
                Ok((key.expose().to_owned(), AdminKey::of(&record, None)))
            }
            Keys::Remote(admin) => {
                let asked = NewKeyRequest::new(new.plan, new.label, new.billing_anchor);
                let info = admin.create_key(&asked).await?.into_inner();
                let key = info
                    .key
                    .clone()
                    .ok_or_else(|| anyhow!("the server did not send the new key"))?;
                Ok((key, info))
            }
        }
    }

    async fn list(&self) -> Result<Vec<AdminKey>> {
        match self {
            Keys::Direct(service) => Ok(service
                .list_keys()
                .iter()
                .map(|r| AdminKey::of(r, None))
                .collect()),
            Keys::Remote(admin) => Ok(admin.list_keys().await?.into_inner()),
        }
    }

    async fn find(&self, id: KeyId) -> Result<AdminKey> {
        let found = match self {
            Keys::Direct(service) => service.key_record(id).ok().map(|r| AdminKey::of(&r, None)),
            Keys::Remote(admin) => found(admin.get_key(id).await)?,
        };
        found.ok_or_else(|| no_such_key(id))
    }

    async fn change(&self, id: KeyId, change: Change) -> Result<AdminKey> {
        match self {
            Keys::Direct(service) => {
                let record = match change {
                    Change::Revoke => service.revoke_key(id).await?,
                    Change::Billing(status) => service.set_billing_status(id, status).await?,
                    Change::Plan(plan) => service.set_plan(id, plan).await?,
                };
                Ok(AdminKey::of(&record, None))
            }
            Keys::Remote(admin) => {
                let answer = match change {
                    Change::Revoke => admin.revoke_key(id).await,
                    Change::Billing(status) => {
                        admin
                            .change_key(id, &KeyChange::billing_status(status))
                            .await
                    }
                    Change::Plan(plan) => admin.change_key(id, &KeyChange::plan(plan)).await,
                };
                found(answer)?.ok_or_else(|| no_such_key(id))
            }
        }
    }
}

/// A key the server answered with, or `None` when it has no key of that id.
fn found(
    answer: Result<job_listings::client::Response<AdminKey>, ClientError>,
) -> Result<Option<AdminKey>> {
    match answer {
        Ok(info) => Ok(Some(info.into_inner())),
        Err(e) if e.code() == Some("not_found") => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn no_such_key(id: KeyId) -> anyhow::Error {
    anyhow!("no key has the id {id}; `keys list` shows every key")
}

fn print_keys(keys: &[AdminKey]) {
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
