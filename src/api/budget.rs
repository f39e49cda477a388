//! The budget of requests that carry no valid API key, per client address.
//!
//! Requests with a valid key have their plan's rate; the others (`OPTIONS`, the OpenAPI
//! document, 401s, 404s…) are charged to the address they come from, so that nobody can keep
//! the server busy, or keep a connection looking active, for free.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::service::RateLimit;

/// The address a request came from, as its frontend saw the peer. The bundled hyper server
/// puts it into every request's extensions; a frontend of your own does the same
/// (`request.extensions_mut().insert(ClientAddr(ip))`) for the budget of
/// [`ApiConfig::unauthenticated_rate`](super::ApiConfig::unauthenticated_rate) to apply.
/// Requests without one are not charged. Behind a proxy, set the client's address the proxy
/// reports, not the proxy's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

impl ClientAddr {
    /// The address a client is counted as, for budgets and connection limits: an
    /// IPv4-mapped IPv6 address as the IPv4 address, any other IPv6 address as its /64
    /// prefix. A subscriber usually gets a whole /64, so counting single IPv6 addresses would
    /// hand one client 2^64 budgets.
    pub fn group(self) -> IpAddr {
        match self.0 {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
            },
            v4 => v4,
        }
    }
}

/// Most addresses whose budget is remembered at once: about 40 bytes each.
const MOST_ADDRESSES: usize = 65_536;

/// How often a full table may be swept for addresses whose budget is whole again; between
/// sweeps, a full table refuses new addresses rather than scan itself on every request.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// One token bucket per address, kept as the instant its bucket is full again (the
/// "theoretical arrival time" of the generic cell rate algorithm) rather than as tokens and a
/// time: an address whose instant has passed is exactly a full bucket, so it can be forgotten
/// without changing anything it will be answered. That keeps the table small without a
/// background task.
pub(crate) struct AddressBudget {
    limit: Option<RateLimit>,
    capacity: usize,
    table: Mutex<Table>,
}

struct Table {
    full_at: HashMap<IpAddr, Instant>,
    next_sweep: Option<Instant>,
}

impl fmt::Debug for AddressBudget {
    // The addresses stay out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AddressBudget")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl AddressBudget {
    /// A budget of `limit` per address; `None` charges nothing.
    pub(crate) fn new(limit: Option<RateLimit>) -> Self {
        Self::with_capacity(limit, MOST_ADDRESSES)
    }

    fn with_capacity(limit: Option<RateLimit>, capacity: usize) -> Self {
        Self {
            limit,
            capacity: capacity.max(1),
            table: Mutex::new(Table {
                full_at: HashMap::new(),
                next_sweep: None,
            }),
        }
    }

    /// The budget in force, if any.
    pub(crate) fn limit(&self) -> Option<RateLimit> {
        self.limit
    }

    /// Takes one request from `addr`'s budget, or says how long until it has one again.
    pub(crate) fn try_take(&self, addr: IpAddr, now: Instant) -> Result<(), Duration> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let interval = Duration::from_secs_f64(1.0 / limit.per_second.max(1e-6));
        let window = interval.saturating_mul(limit.burst.max(1));
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let known = table.full_at.get(&addr).copied();
        if known.is_none() && table.full_at.len() >= self.capacity {
            table.sweep(now);
            if table.full_at.len() >= self.capacity {
                // Every address remembered is still short of its budget: a newcomer waits
                // for the next sweep rather than push one of them out (which would hand that
                // one a full budget again).
                return Err(SWEEP_EVERY);
            }
        }
        let full_at = known.unwrap_or(now).max(now) + interval;
        let ahead = full_at - now;
        if ahead > window {
            return Err(ahead - window);
        }
        table.full_at.insert(addr, full_at);
        Ok(())
    }
}

impl Table {
    /// Forgets the addresses whose budget is whole again, at most once per [`SWEEP_EVERY`].
    fn sweep(&mut self, now: Instant) {
        if self.next_sweep.is_some_and(|at| now < at) {
            return;
        }
        self.full_at.retain(|_, full_at| *full_at > now);
        self.next_sweep = Some(now + SWEEP_EVERY);
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn v4(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(192, 0, 2, last))
    }

    #[test]
    fn an_address_gets_its_burst_then_its_rate() {
        let budget = AddressBudget::new(Some(RateLimit {
            per_second: 10.0,
            burst: 3,
        }));
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(budget.try_take(v4(1), t0).is_ok());
        }
        let wait = budget.try_take(v4(1), t0).err().unwrap_or_default();
        assert!(wait > Duration::from_millis(90) && wait <= Duration::from_millis(100));
        // Another address has a budget of its own.
        assert!(budget.try_take(v4(2), t0).is_ok());
        assert!(budget
            .try_take(v4(1), t0 + Duration::from_millis(100))
            .is_ok());
        assert!(budget
            .try_take(v4(1), t0 + Duration::from_millis(100))
            .is_err());
        // A long pause gives back the burst, not more.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..3 {
            assert!(budget.try_take(v4(1), later).is_ok());
        }
        assert!(budget.try_take(v4(1), later).is_err());
    }

    #[test]
    fn no_limit_charges_nothing() {
        let budget = AddressBudget::new(None);
        let t0 = Instant::now();
        assert!((0..1000).all(|_| budget.try_take(v4(1), t0).is_ok()));
    }

    #[test]
    fn a_full_table_forgets_whole_budgets_and_refuses_newcomers_while_all_are_spent() {
        let limit = RateLimit {
            per_second: 1.0,
            burst: 1,
        };
        let budget = AddressBudget::with_capacity(Some(limit), 2);
        let t0 = Instant::now();
        assert!(budget.try_take(v4(1), t0).is_ok());
        assert!(budget.try_take(v4(2), t0).is_ok());
        // Both are spent for a second: a third address waits.
        assert!(budget.try_take(v4(3), t0).is_err());
        // Once their budgets are whole, they are forgotten and the newcomer gets in.
        let later = t0 + Duration::from_secs(2);
        assert!(budget.try_take(v4(3), later).is_ok());
        let table = budget.table.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(table.full_at.len(), 1);
    }

    #[test]
    fn ipv6_clients_count_by_their_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap_or(v4(0));
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap_or(v4(0));
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap_or(v4(0));
        assert_eq!(ClientAddr(a).group(), ClientAddr(b).group());
        assert_ne!(ClientAddr(a).group(), ClientAddr(c).group());
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap_or(v4(0));
        assert_eq!(ClientAddr(mapped).group(), v4(7));
        assert_eq!(ClientAddr(v4(7)).group(), v4(7));
    }
}
