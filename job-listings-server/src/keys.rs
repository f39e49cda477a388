//! `keys`: issue, revoke, list API keys and change their plan or billing status.

use anyhow::{anyhow, Result};
use chrono::{DateTime, SecondsFormat, Utc};

use job_listings::domain::{ApiKeyRecord, BillingStatus, KeyId};
use job_listings::service::{JobListingsService, NewKey};

use crate::cli::KeysCommand;

pub(crate) async fn keys(service: &JobListingsService, command: KeysCommand) -> Result<()> {
    match command {
        KeysCommand::Create {
            plan,
            label,
            anchor,
        } => {
            let (key, record) = service
                .create_key(NewKey {
                    plan: plan.into(),
                    billing_anchor: anchor,
                    label,
                })
                .await?;
            // The key alone on the first line, so scripts can take it with `head -n1`.
            println!("{}", key.expose());
            println!("id {}  plan {}", record.id, record.plan);
            eprintln!("This is the only time the key is shown; the store keeps only its hash.");
        }
        KeysCommand::Revoke { id } => {
            let before = find_key(service, id)?;
            let record = service.revoke_key(id).await?;
            match before.revoked_at {
                Some(at) => println!(
                    "Key {id} ({}) was already revoked at {}.",
                    record.hint,
                    time(at)
                ),
                None => println!("Revoked key {id} ({}).", record.hint),
            }
        }
        KeysCommand::Billing { id, status } => {
            find_key(service, id)?;
            let record = service.set_billing_status(id, status.into()).await?;
            println!(
                "Key {id} ({}) billing is now {}.",
                record.hint,
                billing(record.billing_status)
            );
        }
        KeysCommand::Plan { id, plan } => {
            find_key(service, id)?;
            let record = service.set_plan(id, plan.into()).await?;
            println!(
                "Key {id} ({}) is now on the {} plan.",
                record.hint, record.plan
            );
        }
        KeysCommand::List => print_keys(&service.list_keys()),
    }
    Ok(())
}

fn find_key(service: &JobListingsService, id: KeyId) -> Result<ApiKeyRecord> {
    service
        .list_keys()
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| anyhow!("no key has the id {id}; `keys list` shows every key"))
}

fn print_keys(records: &[ApiKeyRecord]) {
    if records.is_empty() {
        println!("No keys yet. Issue one with `keys create --plan developer`.");
        return;
    }
    println!(
        "{:<36}  {:<13}  {:<10}  {:<8}  {:<20}  {:<20}  LABEL",
        "ID", "HINT", "PLAN", "BILLING", "CREATED", "REVOKED"
    );
    for r in records {
        println!(
            "{:<36}  {:<13}  {:<10}  {:<8}  {:<20}  {:<20}  {}",
            r.id.to_string(),
            r.hint,
            r.plan.as_str(),
            billing(r.billing_status),
            time(r.created_at),
            r.revoked_at.map_or_else(|| "-".to_owned(), time),
            r.label
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
