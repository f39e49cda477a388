//! `close-unseen`: closing the active jobs the crawler stopped sending, in the store or through
//! a running server's admin API.

use anyhow::{Context, Result};
use job_listings::client::AdminClient;
use job_listings::service::JobListingsService;

use crate::cli::CloseUnseenArgs;

/// Closes (or counts) them in the store this process opened.
pub(crate) async fn close_unseen(
    service: &JobListingsService,
    args: &CloseUnseenArgs,
) -> Result<()> {
    let done = service
        .close_unseen_jobs(args.seen_before, args.dry_run)
        .await
        .context("closing the jobs not seen since then")?;
    say(args, done.matched, done.closed);
    Ok(())
}

/// Has the running server close (or count) them.
pub(crate) async fn close_unseen_remote(admin: &AdminClient, args: &CloseUnseenArgs) -> Result<()> {
    let done = admin
        .close_unseen_jobs(args.seen_before, args.dry_run)
        .await
        .context("closing the jobs not seen since then through the running server")?;
    say(args, done.matched, done.closed);
    Ok(())
}

fn say(args: &CloseUnseenArgs, matched: u64, closed: u64) {
    let when = args.seen_before.to_rfc3339();
    if args.dry_run {
        println!("{matched} active jobs last seen before {when} (dry run: none closed)");
    } else {
        println!("{matched} active jobs last seen before {when}; {closed} closed");
    }
}
