//! The open connections: how many, from which address, and which have had no request in
//! flight for how long. With it the server caps connections per address, closes connections
//! that stay idle, and, once every slot is taken, closes the connection idle the longest to
//! serve a new one instead of leaving the newcomer in the accept queue.
//!
//! A request touches only its own connection's counters (two atomic adds and a clock read);
//! the table's lock is taken when a connection opens or ends, and the table is scanned only
//! when a slot must be freed, a batch of candidates at a time.

use std::collections::{BinaryHeap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{watch, Notify};

use crate::service::ListenerReport;

/// How many of the longest-idle connections one scan of the table picks, to be shed by the
/// next arrivals in turn: under a flood of new connections, a scan per arrival would cost
/// more than the arrivals.
const SHED_BATCH: usize = 64;

/// The open connections of one server.
pub(super) struct Connections {
    /// Connections counted as open at once, those told to close apart.
    max_open: usize,
    /// Connections kept at all, including those closing: an attacker who does not let go of
    /// a closing connection can hold it only until its drain time is over, so this bounds
    /// memory and file descriptors while new connections keep coming.
    max_kept: usize,
    max_per_address: usize,
    epoch: Instant,
    table: Mutex<Table>,
    /// How many connections are kept; shutdown waits for 0.
    kept: watch::Sender<usize>,
    /// Where the counts are published for health and metrics, if anywhere.
    report: Option<Arc<ListenerReport>>,
}

struct Table {
    next_id: u64,
    /// Every connection kept, open or closing: the one record of which connections exist.
    all: HashMap<u64, Arc<Conn>>,
    /// How many of `all` are closing. Only [`Table::start_closing`] raises it, for a
    /// connection in `all` not closing yet, and only [`Table::remove`] lowers it, for a
    /// closing connection it takes out of `all`: so it never exceeds `all.len()`, and the
    /// open count derived from the two cannot drift from the table.
    closing: usize,
    by_address: HashMap<IpAddr, usize>,
    /// The longest-idle open connections of the last scan, the oldest last, each with the
    /// time it was last active then: still kept and idle since then, it is still among the
    /// longest idle, since every connection idle for longer was picked too.
    candidates: Vec<(Arc<Conn>, u64)>,
}

/// One connection's state, shared by its task, its requests and the table.
pub(super) struct Conn {
    id: u64,
    address: IpAddr,
    epoch: Instant,
    in_flight: AtomicU32,
    /// When a request last started or ended, in milliseconds since `epoch`.
    last_active: AtomicU64,
    /// Told to close (set under the table's lock, with the table's count of closing ones).
    closing: AtomicBool,
    close: Notify,
}

impl Conn {
    fn millis(&self) -> u64 {
        millis_since(self.epoch)
    }

    fn is_idle(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0 && !self.closing.load(Ordering::Acquire)
    }

    /// Since when no request has been in flight; `None` while one is.
    fn idle_since(&self) -> Option<Instant> {
        (self.in_flight.load(Ordering::Acquire) == 0)
            .then(|| self.epoch + Duration::from_millis(self.last_active.load(Ordering::Acquire)))
    }
}

fn millis_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Connections {
    /// A table for at most `max_open` connections, `max_per_address` of them from one address,
    /// publishing its counts to `report`.
    pub(super) fn new(
        max_open: usize,
        max_per_address: usize,
        report: Option<Arc<ListenerReport>>,
    ) -> Arc<Self> {
        let max_open = max_open.max(1);
        Arc::new(Self {
            max_open,
            max_kept: max_open.saturating_add((max_open / 4).max(1)),
            max_per_address: max_per_address.max(1),
            epoch: Instant::now(),
            table: Mutex::new(Table {
                next_id: 0,
                all: HashMap::new(),
                closing: 0,
                by_address: HashMap::new(),
                candidates: Vec::new(),
            }),
            kept: watch::channel(0).0,
            report,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a new connection can be served now: below the limit, or at it with an idle
    /// connection to close for it. `false` while every slot has a request in flight, or too
    /// many connections are still closing.
    pub(super) fn has_room(&self) -> bool {
        let mut table = self.lock();
        if table.all.len() >= self.max_kept {
            return false;
        }
        table.open() < self.max_open || table.oldest_idle().is_some()
    }

    /// Takes in a connection accepted from `address` (as [`ClientAddr::group`] counts it),
    /// telling the connection idle the longest to close when every slot is taken; `None`
    /// when that address already has its most connections.
    ///
    /// [`ClientAddr::group`]: crate::api::ClientAddr::group
    pub(super) fn admit(self: &Arc<Self>, address: IpAddr) -> Option<Slot> {
        let mut table = self.lock();
        let from_address = table.by_address.get(&address).copied().unwrap_or(0);
        if from_address >= self.max_per_address {
            return None;
        }
        if table.open() >= self.max_open {
            if let Some(victim) = table.oldest_idle() {
                tracing::debug!(
                    address = %victim.address,
                    "every connection slot taken: closing the connection idle the longest"
                );
                table.start_closing(&victim);
            }
        }
        table.by_address.insert(address, from_address + 1);
        let id = table.next_id;
        table.next_id += 1;
        let conn = Arc::new(Conn {
            id,
            address,
            epoch: self.epoch,
            in_flight: AtomicU32::new(0),
            last_active: AtomicU64::new(millis_since(self.epoch)),
            closing: AtomicBool::new(false),
            close: Notify::new(),
        });
        table.all.insert(id, conn.clone());
        self.publish(&table);
        Some(Slot {
            connections: self.clone(),
            conn,
        })
    }

    /// Tells every connection to close, as the server stops.
    pub(super) fn close_all(&self) {
        let mut table = self.lock();
        let all: Vec<Arc<Conn>> = table.all.values().cloned().collect();
        for conn in &all {
            table.start_closing(conn);
        }
        self.publish(&table);
    }

    /// Tells shutdown and the report the table's counts after a change.
    fn publish(&self, table: &Table) {
        self.kept.send_replace(table.all.len());
        if let Some(report) = &self.report {
            report.connections(table.open(), table.all.len());
        }
    }

    /// Resolves once every connection has ended.
    pub(super) async fn all_ended(&self) {
        let mut kept = self.kept.subscribe();
        let _ = kept.wait_for(|n| *n == 0).await;
    }

    fn end(&self, conn: &Conn) {
        let mut table = self.lock();
        if table.remove(conn) {
            self.publish(&table);
        }
    }

    /// How many connections are open and how many are kept (open or closing), as the table
    /// holds them now.
    #[cfg(test)]
    fn counts(&self) -> ConnectionCounts {
        let table = self.lock();
        ConnectionCounts {
            open: table.open(),
            kept: table.all.len(),
        }
    }
}

/// The connections of a server at one moment.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ConnectionCounts {
    /// Served and not told to close.
    open: usize,
    /// Open or closing: each holds a file descriptor.
    kept: usize,
}

impl Table {
    /// Connections served and not told to close.
    fn open(&self) -> usize {
        self.all.len() - self.closing
    }

    /// Whether `conn` is still in the table (it is not once its task has ended).
    fn holds(&self, conn: &Conn) -> bool {
        self.all.contains_key(&conn.id)
    }

    /// Marks a connection of the table as closing (no longer open) and tells its task; a
    /// connection already closing, or no longer in the table, is left alone.
    fn start_closing(&mut self, conn: &Conn) {
        if self.holds(conn) && !conn.closing.swap(true, Ordering::AcqRel) {
            self.closing += 1;
            conn.close.notify_one();
        }
    }

    /// Takes an ended connection out of the table; `false` if it was not in it.
    fn remove(&mut self, conn: &Conn) -> bool {
        if self.all.remove(&conn.id).is_none() {
            return false;
        }
        if conn.closing.load(Ordering::Acquire) {
            self.closing -= 1;
        }
        if let Some(n) = self.by_address.get_mut(&conn.address) {
            *n -= 1;
            if *n == 0 {
                self.by_address.remove(&conn.address);
            }
        }
        true
    }

    /// The open connection that has had no request in flight for the longest, if any.
    fn oldest_idle(&mut self) -> Option<Arc<Conn>> {
        for rescanned in [false, true] {
            if rescanned {
                self.pick_candidates();
            }
            while let Some((conn, seen)) = self.candidates.last() {
                if self.holds(conn)
                    && conn.is_idle()
                    && conn.last_active.load(Ordering::Acquire) == *seen
                {
                    return Some(conn.clone());
                }
                self.candidates.pop();
            }
        }
        None
    }

    /// Picks the [`SHED_BATCH`] open connections idle the longest.
    fn pick_candidates(&mut self) {
        // A max-heap on the last active time keeps the earliest ones.
        let mut heap = BinaryHeap::with_capacity(SHED_BATCH + 1);
        for conn in self.all.values().filter(|c| c.is_idle()) {
            heap.push((conn.last_active.load(Ordering::Acquire), conn.id));
            if heap.len() > SHED_BATCH {
                heap.pop();
            }
        }
        // Ascending, then reversed: the oldest last, where `oldest_idle` looks first.
        let picked = heap.into_sorted_vec();
        self.candidates = picked
            .into_iter()
            .rev()
            .filter_map(|(seen, id)| Some((self.all.get(&id)?.clone(), seen)))
            .collect();
    }
}

/// A connection's place in the table, released when its task ends.
pub(super) struct Slot {
    connections: Arc<Connections>,
    conn: Arc<Conn>,
}

impl Slot {
    /// Counts a request as in flight until the returned guard is dropped.
    pub(super) fn request(&self) -> InFlight {
        InFlight::new(self.conn.clone())
    }

    /// Resolves once the server wants this connection closed: to free its slot, or to stop.
    pub(super) async fn close_requested(&self) {
        self.conn.close.notified().await;
    }

    /// Resolves once no request has been in flight for `limit`.
    pub(super) async fn idle_for(&self, limit: Duration) {
        loop {
            let now = Instant::now();
            let since = self.conn.idle_since();
            let Some(wake) = since.unwrap_or(now).checked_add(limit) else {
                // A limit too far away to name an instant: never.
                return std::future::pending().await;
            };
            if since.is_some() && now >= wake {
                return;
            }
            tokio::time::sleep_until(wake.into()).await;
        }
    }

    /// Gives up the slot's place among the open connections while it closes by itself.
    pub(super) fn closing(&self) {
        let mut table = self.connections.lock();
        table.start_closing(&self.conn);
        self.connections.publish(&table);
    }
}

#[cfg(test)]
impl Slot {
    fn is_closing(&self) -> bool {
        self.conn.closing.load(Ordering::Acquire)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections.end(&self.conn);
    }
}

/// A request in flight on a connection; dropping it (answered, or abandoned by the client)
/// ends it.
pub(super) struct InFlight(Arc<Conn>);

impl InFlight {
    fn new(conn: Arc<Conn>) -> Self {
        conn.last_active.store(conn.millis(), Ordering::Release);
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(conn)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.last_active.store(self.0.millis(), Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(192, 0, 2, last))
    }

    #[test]
    fn a_full_table_closes_the_connection_idle_the_longest() {
        let connections = Connections::new(3, 10, None);
        let first = connections.admit(ip(1)).expect("a slot");
        let second = connections.admit(ip(1)).expect("a slot");
        let third = connections.admit(ip(2)).expect("a slot");
        // The first is busy, the third was active after the second.
        let _busy = first.request();
        std::thread::sleep(Duration::from_millis(5));
        drop(third.request());
        assert!(connections.has_room());
        let _fourth = connections.admit(ip(3)).expect("a slot, for a shed one");
        assert!(second.conn.closing.load(Ordering::Acquire));
        assert!(!first.conn.closing.load(Ordering::Acquire));
        assert!(!third.conn.closing.load(Ordering::Acquire));
        // The next one sheds the third, then every open one is busy or new.
        let _fifth = connections.admit(ip(4)).expect("a slot, for a shed one");
        assert!(third.conn.closing.load(Ordering::Acquire));
    }

    #[test]
    fn with_every_slot_busy_there_is_no_room() {
        let connections = Connections::new(2, 10, None);
        let a = connections.admit(ip(1)).expect("a slot");
        let b = connections.admit(ip(2)).expect("a slot");
        let (_ra, rb) = (a.request(), b.request());
        assert!(!connections.has_room());
        drop(rb);
        assert!(connections.has_room());
    }

    #[test]
    fn an_address_gets_at_most_its_share_and_gets_it_back() {
        let connections = Connections::new(100, 2, None);
        let a = connections.admit(ip(1)).expect("a slot");
        let _b = connections.admit(ip(1)).expect("a slot");
        assert!(connections.admit(ip(1)).is_none());
        assert!(connections.admit(ip(2)).is_some());
        drop(a);
        assert!(connections.admit(ip(1)).is_some());
    }

    #[test]
    fn closing_connections_are_kept_only_up_to_a_bound() {
        // Four open and one more closing at most.
        let connections = Connections::new(4, 100, None);
        let mut slots: Vec<Slot> = (0..4).filter_map(|i| connections.admit(ip(i))).collect();
        assert!(connections.has_room());
        slots.extend(connections.admit(ip(4)));
        assert_eq!(
            slots
                .iter()
                .filter(|s| s.conn.closing.load(Ordering::Acquire))
                .count(),
            1
        );
        // One is still closing: no room until it ends, idle as the others are.
        assert!(!connections.has_room());
        slots.remove(0);
        assert!(connections.has_room());
        drop(slots);
        assert_eq!(*connections.kept.borrow(), 0);
    }

    /// What happens to a connection table, in any order.
    #[derive(Clone, Debug)]
    enum Event {
        /// A connection accepted from one of four addresses.
        Open(u8),
        /// A connection's task ends: the client closed, its header timeout or a 408 ended it,
        /// or it closed after being told to.
        End(usize),
        RequestStarts(usize),
        RequestEnds(usize),
        /// Idle for too long: the connection gives up its place while it closes.
        IdleClose(usize),
        /// The server stops.
        CloseAll,
    }

    fn event() -> impl proptest::strategy::Strategy<Value = Event> {
        use proptest::prelude::*;
        prop_oneof![
            4 => (0u8..4).prop_map(Event::Open),
            3 => any::<usize>().prop_map(Event::End),
            2 => any::<usize>().prop_map(Event::RequestStarts),
            2 => any::<usize>().prop_map(Event::RequestEnds),
            1 => any::<usize>().prop_map(Event::IdleClose),
            1 => Just(Event::CloseAll),
        ]
    }

    /// A connection of the model: its slot and the requests in flight on it.
    struct Held {
        slot: Slot,
        address: IpAddr,
        requests: Vec<InFlight>,
    }

    proptest::proptest! {
        /// Random opens, ends (client closes, header timeouts, 408s, shed connections going
        /// away), requests, idle closes and stops: after every step the table's counts are
        /// those of the connections the test holds, an address is refused exactly when it has
        /// its most, and once every connection has ended the table is empty.
        #[test]
        fn the_counts_are_always_those_of_the_connections_held(
            max_open in 1usize..8,
            max_per_address in 1usize..6,
            events in proptest::collection::vec(event(), 1..200),
        ) {
            let report = Arc::new(ListenerReport::default());
            let connections = Connections::new(max_open, max_per_address, Some(report.clone()));
            let mut held: Vec<Held> = Vec::new();
            for event in events {
                match event {
                    // The accept loop takes a connection only when there is room.
                    Event::Open(last) if connections.has_room() => {
                        let address = ip(last);
                        let from_address = held.iter().filter(|h| h.address == address).count();
                        let was_open = held.iter().filter(|h| !h.slot.is_closing()).count();
                        match connections.admit(address) {
                            Some(slot) => {
                                proptest::prop_assert!(from_address < max_per_address);
                                held.push(Held { slot, address, requests: Vec::new() });
                                // At the cap, an idle connection was told to close for it.
                                let open = held.iter().filter(|h| !h.slot.is_closing()).count();
                                proptest::prop_assert_eq!(open, (was_open + 1).min(max_open));
                            }
                            None => proptest::prop_assert!(from_address >= max_per_address),
                        }
                    }
                    Event::End(i) if !held.is_empty() => {
                        held.swap_remove(i % held.len());
                    }
                    Event::RequestStarts(i) if !held.is_empty() => {
                        let n = held.len();
                        let h = &mut held[i % n];
                        h.requests.push(h.slot.request());
                    }
                    Event::RequestEnds(i) if !held.is_empty() => {
                        let n = held.len();
                        held[i % n].requests.pop();
                    }
                    Event::IdleClose(i) if !held.is_empty() => {
                        let n = held.len();
                        held[i % n].slot.closing();
                    }
                    Event::CloseAll => connections.close_all(),
                    _ => {}
                }
                let open = held.iter().filter(|h| !h.slot.is_closing()).count();
                proptest::prop_assert_eq!(
                    connections.counts(),
                    ConnectionCounts { open, kept: held.len() }
                );
                proptest::prop_assert!(open <= max_open);
                proptest::prop_assert_eq!(*connections.kept.borrow(), held.len());
                proptest::prop_assert_eq!(report.connection_counts(), (open as u64, held.len() as u64));
                let idle_open = held
                    .iter()
                    .any(|h| !h.slot.is_closing() && h.requests.is_empty());
                let room = held.len() < connections.max_kept && (open < max_open || idle_open);
                proptest::prop_assert_eq!(connections.has_room(), room);
            }
            drop(held);
            proptest::prop_assert_eq!(connections.counts(), ConnectionCounts::default());
            proptest::prop_assert_eq!(*connections.kept.borrow(), 0);
        }
    }
}
