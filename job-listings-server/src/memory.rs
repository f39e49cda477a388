//! How much memory the caches may use: `--memory`, or a share of what this machine (or the
//! container it runs in) has, split among sled's page cache, the decoded jobs and the
//! rendered answers. Fixed sizes left a server with a million long posts reading most of
//! each page from disk on a machine with memory to spare.

use std::path::Path;

use crate::cli::{ServeArgs, StoreArgs};

/// The share of the machine's memory the caches take when `--memory` is not given.
const DEFAULT_SHARE: u64 = 4;
/// The least budget chosen on its own, in MiB: the fixed sizes before the budget.
const MIN_DEFAULT_MB: u64 = 384;
/// The budget when the machine's memory cannot be read, in MiB.
const FALLBACK_MB: u64 = 1_536;

/// The caches' sizes in MiB, each given on the command line or its share of the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheSizes {
    /// The budget they were taken from.
    pub(crate) budget_mb: u64,
    /// Where the budget came from, for the start-up line.
    pub(crate) budget_from: &'static str,
    /// sled's page cache: 35 %.
    pub(crate) sled_mb: u64,
    /// Decoded jobs in front of sled: 40 %, the most, as a page served from it needs no
    /// decoding and no sled read.
    pub(crate) jobs_mb: u64,
    /// Rendered answers: the rest (the render cache uses 21/16 of its size, with companies
    /// and compressed answers).
    pub(crate) render_mb: u64,
}

impl CacheSizes {
    /// The sizes for these arguments on this machine.
    pub(crate) fn of(store: &StoreArgs, serve: Option<&ServeArgs>) -> Self {
        let (budget_mb, budget_from) = match store.memory_mb {
            Some(mb) => (mb, "--memory"),
            None => match machine_memory_mb(Path::new("/")) {
                Some(total) => (
                    (total / DEFAULT_SHARE).max(MIN_DEFAULT_MB),
                    "a quarter of this machine's memory",
                ),
                None => (FALLBACK_MB, "the default, this machine's memory unknown"),
            },
        };
        Self::split(
            budget_mb,
            budget_from,
            store.cache_mb,
            store.job_cache_mb,
            serve.and_then(|s| s.render_cache_mb),
        )
    }

    fn split(
        budget_mb: u64,
        budget_from: &'static str,
        sled: Option<u64>,
        jobs: Option<u64>,
        render: Option<u64>,
    ) -> Self {
        Self {
            budget_mb,
            budget_from,
            sled_mb: sled.unwrap_or(budget_mb * 35 / 100),
            jobs_mb: jobs.unwrap_or(budget_mb * 40 / 100),
            render_mb: render.unwrap_or(budget_mb * 25 / 100 * 16 / 21),
        }
    }
}

/// The memory this process may use, in MiB: the machine's, or its control group's limit when
/// lower (a container's). `root` is `/` but in tests.
fn machine_memory_mb(root: &Path) -> Option<u64> {
    let meminfo = std::fs::read_to_string(root.join("proc/meminfo")).ok()?;
    let total_kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    let machine = total_kib / 1024;
    // cgroup v2, then v1; "max" or an absurdly large v1 value means no limit.
    let limit = [
        "sys/fs/cgroup/memory.max",
        "sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|p| std::fs::read_to_string(root.join(p)).ok())
    .find_map(|v| v.trim().parse::<u64>().ok())
    .map(|bytes| bytes / (1024 * 1024));
    Some(limit.map_or(machine, |l| l.min(machine)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_split_and_explicit_sizes_win() {
        let s = CacheSizes::split(6_000, "--memory", None, None, None);
        assert_eq!((s.sled_mb, s.jobs_mb, s.render_mb), (2_100, 2_400, 1_142));
        // What the render cache uses with its extras stays within the budget.
        assert!(s.sled_mb + s.jobs_mb + s.render_mb * 21 / 16 <= 6_000);
        let s = CacheSizes::split(6_000, "--memory", Some(100), None, Some(0));
        assert_eq!((s.sled_mb, s.jobs_mb, s.render_mb), (100, 2_400, 0));
    }

    #[test]
    fn the_machine_s_memory_is_its_container_s_limit_when_lower() {
        let root = tempfile::tempdir().expect("a folder");
        let write = |path: &str, text: &str| {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("folders");
            std::fs::write(path, text).expect("written");
        };
        assert_eq!(machine_memory_mb(root.path()), None);
        write(
            "proc/meminfo",
            "MemTotal:       24576000 kB\nMemFree: 1 kB\n",
        );
        assert_eq!(machine_memory_mb(root.path()), Some(24_000));
        write("sys/fs/cgroup/memory.max", "max\n");
        assert_eq!(machine_memory_mb(root.path()), Some(24_000));
        write("sys/fs/cgroup/memory.max", "2147483648\n");
        assert_eq!(machine_memory_mb(root.path()), Some(2_048));
    }
}
