use crate::domain::Plan;
use std::time::Duration;

use super::{RateLimits, SecretKey};
use crate::webhooks::{CallbackPolicy, RetryPolicy};

/// Monthly call quotas per plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Quotas {
    /// Developer plan; default 10,000.
    pub developer: u64,
    /// Agent Pro plan; default 100,000.
    pub agent_pro: u64,
    /// Enterprise plan; default 1,000,000.
    pub enterprise: u64,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            developer: 10_000,
            agent_pro: 100_000,
            enterprise: 1_000_000,
        }
    }
}

impl Quotas {
    /// The quota of a plan.
    pub fn of(&self, plan: Plan) -> u64 {
        match plan {
            Plan::Developer => self.developer,
            Plan::AgentPro => self.agent_pro,
            Plan::Enterprise => self.enterprise,
        }
    }
}

/// Where calls are counted against the monthly quota. Either way exactly the quota succeeds
/// however many calls race, and a failed call is given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Metering {
    /// Counted in memory with one atomic operation per call and written to the store every
    /// `flush_interval` and at shutdown. The fastest; a crash (kill -9, power loss) loses at
    /// most the counting of the last `flush_interval`, and never counts a call twice. For one
    /// process on its own store; a store shared by replicas (one with a
    /// [change feed](crate::store::Store::change_feed)) always counts [`Metering::InStore`].
    InMemory {
        /// How often changed counters are written.
        flush_interval: Duration,
    },
    /// Counted in the store with a compare-and-swap of the key's counter
    /// ([`UsageStore::swap_usage`](crate::store::UsageStore::swap_usage)), durably, before the
    /// call is answered: nothing is lost in a crash (a crash between counting and
    /// answering can count a call whose answer was never sent), and several processes sharing
    /// one store (PostgreSQL replicas) count against one quota. Costs a store read and a
    /// durable store write per call (and another of each per swap lost to a concurrent call).
    InStore,
    /// Not counted at all: every call succeeds whatever the quota, and usage reads 0. For
    /// deployments that meter elsewhere and for measuring what metering itself costs.
    Off,
}

impl Default for Metering {
    fn default() -> Self {
        Metering::InMemory {
            flush_interval: Duration::from_millis(100),
        }
    }
}

/// Settings of a [`JobListingsService`](super::JobListingsService).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServiceConfig {
    /// Monthly quotas per plan.
    pub quotas: Quotas,
    /// The most webhook subscriptions one key may hold; default 25.
    pub max_webhooks_per_key: usize,
    /// Which callback URLs webhooks may use.
    pub callback_policy: CallbackPolicy,
    /// Where calls are counted; default [`Metering::InMemory`] every 100 ms.
    pub metering: Metering,
    /// How webhook deliveries are scheduled.
    pub delivery: DeliveryConfig,
    /// Per-key request rates by plan; `None` (the library default) means no rate limit
    /// beyond the monthly quota. The bundled server turns on [`RateLimits::default`].
    pub rate_limits: Option<RateLimits>,
    /// Seals webhook signing secrets before they are stored. Without one they are stored in
    /// clear (and a warning is logged); the bundled server always sets one.
    pub secret_key: Option<SecretKey>,
    /// With a store shared by several replicas, how often this one reads the change feed
    /// when no notification woke it (a notification lost to a dropped connection costs at
    /// most this much delay); default one second.
    pub follow_poll_interval: Duration,
    /// How often the search index is saved to the store when jobs were written since
    /// ([`JobListingsService::save_index_snapshot`]); default five minutes, `None` for only
    /// at shutdown. A start after a crash loads the last one and indexes again only the jobs
    /// written after it, where it would otherwise index every stored job. Job writes wait
    /// while a save copies the index out (0.14–0.26 s at a million jobs), not while the copy
    /// is written.
    ///
    /// [`JobListingsService::save_index_snapshot`]: super::JobListingsService::save_index_snapshot
    pub index_snapshot_interval: Option<Duration>,
    /// How long the store may refuse every write before the service reports itself not live
    /// ([`JobListingsService::health`](super::JobListingsService::health)), so an
    /// orchestrator restarts it; default one minute. It is not ready from the first failure.
    pub write_failure_grace: Duration,
    /// On a store shared by replicas, the most changes of other replicas this one may have
    /// left to apply and still be ready; default 10,000. Beyond it (a replica catching up
    /// after a pause, or one whose follower cannot keep up) it answers searches with data
    /// that far behind, so it reports itself not ready until it catches up.
    pub max_follower_lag: u64,
    /// How long the job change feed (`GET /changes`) keeps events; default 30 days. A client
    /// whose cursor is older starts again from a search. Pruned with the outbox, every
    /// [`DeliveryConfig::prune_interval`].
    pub change_retention: Duration,
    /// How many recent search results are kept for the searches asked again; default
    /// 4,096, 0 for none. A result is kept only until the index next changes, and holds
    /// the matches' count and one page of ids (a few hundred bytes to 2 KB), so the
    /// default costs a few MB at most.
    pub search_memo_entries: usize,
    /// The free space a backup must leave on the disk it is written to, in bytes; default
    /// 64 MiB. A backup whose copy (reckoned by the store: on sled, 1.5 times its files)
    /// would leave less is refused before any of it is written
    /// ([`ServiceError::InsufficientStorage`]), so a backup onto the live store's own disk
    /// does not fill it.
    ///
    /// [`ServiceError::InsufficientStorage`]: super::ServiceError::InsufficientStorage
    pub backup_headroom_bytes: u64,
    /// Whether copies of a job are grouped as they arrive ([`crate::query::is_repost`]);
    /// default true. Off, each copy is a job of its own and groups already stored stay as
    /// they are: for measuring what grouping costs, or a source that never posts twice.
    pub group_reposts: bool,
}

/// How the webhook delivery worker runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeliveryConfig {
    /// When failed deliveries are retried.
    pub retry: RetryPolicy,
    /// How often the outbox is polled when nothing wakes the worker; default one second.
    pub poll_interval: Duration,
    /// Most deliveries in flight at once; default 256.
    pub max_in_flight: usize,
    /// Most deliveries in flight to one subscription; default 4. A slow or dead receiver
    /// holds at most this many slots, so the others keep theirs.
    pub max_in_flight_per_subscription: usize,
    /// Most deliveries in flight for the subscriptions of one API key; default 16. One
    /// customer's subscriptions (up to `max_webhooks_per_key` of them) all pointing at slow
    /// receivers hold at most this many slots, and subscriptions take slots in turn.
    pub max_in_flight_per_key: usize,
    /// Most pending deliveries one subscription holds; default 100. A subscription this far
    /// behind (a receiver down or slower than the jobs arrive) gets no more until some settle:
    /// it keeps its place in the outbox log instead, so its backlog costs storage that does
    /// not grow with the jobs ingested meanwhile.
    pub max_pending_per_subscription: usize,
    /// How long settled (succeeded or failed) deliveries and events are kept before they
    /// are pruned; default 30 days. `GET /webhooks/{id}/deliveries` shows what is kept.
    pub retention: Duration,
    /// How often the outbox is pruned; default ten minutes.
    pub prune_interval: Duration,
    /// How long an attempt holds its delivery against other processes sharing the store;
    /// default one minute, well beyond the sender's timeouts. A process that dies mid-attempt
    /// delays that delivery by at most this much.
    pub lease: Duration,
    /// Test pings (`POST /webhooks/{id}/test`) one subscription may queue a minute, all at
    /// once at most; default 5. More are refused as rate limited, so pings cannot crowd the
    /// outbox that every customer's deliveries share.
    pub test_pings_per_minute: u32,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            poll_interval: Duration::from_secs(1),
            max_in_flight: 256,
            max_in_flight_per_subscription: 4,
            max_in_flight_per_key: 16,
            max_pending_per_subscription: 100,
            retention: Duration::from_secs(30 * 86_400),
            prune_interval: Duration::from_secs(600),
            lease: Duration::from_secs(60),
            test_pings_per_minute: 5,
        }
    }
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            quotas: Quotas::default(),
            max_webhooks_per_key: 25,
            callback_policy: CallbackPolicy::default(),
            metering: Metering::default(),
            delivery: DeliveryConfig::default(),
            rate_limits: None,
            secret_key: None,
            follow_poll_interval: Duration::from_secs(1),
            index_snapshot_interval: Some(Duration::from_secs(300)),
            write_failure_grace: Duration::from_secs(60),
            max_follower_lag: 10_000,
            change_retention: Duration::from_secs(30 * 86_400),
            search_memo_entries: 4_096,
            backup_headroom_bytes: 64 * 1024 * 1024,
            group_reposts: true,
        }
    }
}

setters!(Quotas {
    developer: u64,
    agent_pro: u64,
    enterprise: u64,
});

setters!(ServiceConfig {
    quotas: Quotas,
    max_webhooks_per_key: usize,
    callback_policy: CallbackPolicy,
    metering: Metering,
    delivery: DeliveryConfig,
    rate_limits: Option<RateLimits>,
    secret_key: Option<SecretKey>,
    follow_poll_interval: Duration,
    index_snapshot_interval: Option<Duration>,
    write_failure_grace: Duration,
    max_follower_lag: u64,
    change_retention: Duration,
    search_memo_entries: usize,
    backup_headroom_bytes: u64,
    group_reposts: bool,
});

setters!(DeliveryConfig {
    retry: RetryPolicy,
    poll_interval: Duration,
    max_in_flight: usize,
    max_in_flight_per_subscription: usize,
    max_in_flight_per_key: usize,
    max_pending_per_subscription: usize,
    retention: Duration,
    prune_interval: Duration,
    lease: Duration,
    test_pings_per_minute: u32,
});
