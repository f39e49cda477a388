//! What sled alone costs for an import: the floor under `benches/load/bulk.sh`'s figures.
//!
//! Writes every line of a jobs JSON Lines file, as it is, into a fresh sled folder under its
//! job's id, in id order and in transactions of `--rows` rows that also bump a version in a
//! second tree, as the bundled server's import writes its jobs; then one flush, which makes
//! them durable. Nothing else happens while the clock runs: no parsing, no checking, no
//! re-encoding, no search index. Then it reads every record back in key order, as a start
//! that rebuilds the index from sled does first.
//!
//! ```text
//! cargo run --release -p job-listings-compare --bin sled_floor -- \
//!     --jobs /tmp/bulk/jsonl/jobs.jsonl --dir /tmp/sled-floor
//! ```
//!
//! An import of the same file cannot be faster than the write, nor a rebuild than the read.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use sled::transaction::ConflictableTransactionError;
use sled::Transactional;

/// The bundled server's allocator, so the floor is measured on the same one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(about = "Times sled alone writing and reading back a jobs JSON Lines file")]
struct Args {
    /// The jobs file, one job per line (`job-listings-compare --write-jsonl DIR` writes one).
    #[arg(long)]
    jobs: PathBuf,
    /// The sled folder to write; emptied first, and removed at the end.
    #[arg(long)]
    dir: PathBuf,
    /// sled's page cache in MiB (the bundled server's default is 256).
    #[arg(long, default_value_t = 256)]
    cache_mb: u64,
    /// Rows per transaction (the bundled server's import writes 512).
    #[arg(long, default_value_t = 512)]
    rows: usize,
}

/// The one field read from each line before the clock starts.
#[derive(serde::Deserialize)]
struct JobIdOnly {
    id: uuid::Uuid,
}

/// This process's CPU time (user and system), where `/proc` tells it.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux reports these in USER_HZ, which is 100 on every architecture it runs on.
    Some(Duration::from_millis(ticks * 10))
}

/// Wall clock and CPU time of `work`.
fn timed<T>(work: impl FnOnce() -> T) -> (T, Duration, Option<Duration>) {
    let (started, cpu_before) = (Instant::now(), cpu_time());
    let out = work();
    let cpu = cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    (out, started.elapsed(), cpu)
}

fn report(what: &str, records: usize, bytes: usize, wall: Duration, cpu: Option<Duration>) {
    let cpu = cpu.map_or_else(|| "n/a".to_owned(), |c| format!("{:.2} s", c.as_secs_f64()));
    println!(
        "{what}: {records} records, {:.0} MB in {:.2} s ({:.0} records/s), CPU {cpu}",
        bytes as f64 / 1e6,
        wall.as_secs_f64(),
        records as f64 / wall.as_secs_f64(),
    );
}

fn run(args: &Args) -> Result<(), String> {
    let file = std::fs::File::open(&args.jobs)
        .map_err(|e| format!("opening {}: {e}", args.jobs.display()))?;
    let mut rows: Vec<([u8; 16], Vec<u8>)> = Vec::new();
    for (number, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(|e| format!("reading {}: {e}", args.jobs.display()))?;
        if line.trim_ascii().is_empty() {
            continue;
        }
        let job: JobIdOnly = serde_json::from_slice(&line)
            .map_err(|e| format!("{}:{}: {e}", args.jobs.display(), number + 1))?;
        rows.push((*job.id.as_bytes(), line));
    }
    rows.sort_by_key(|(id, _)| *id);
    let bytes: usize = rows.iter().map(|(_, json)| json.len()).sum();

    let _ = std::fs::remove_dir_all(&args.dir);
    let db = sled::Config::new()
        .path(&args.dir)
        .cache_capacity(args.cache_mb * 1024 * 1024)
        .open()
        .map_err(|e| format!("opening {}: {e}", args.dir.display()))?;
    let open = |name: &str| db.open_tree(name).map_err(|e| e.to_string());
    let (jobs, meta) = (open("jobs")?, open("meta")?);

    let (written, wall, cpu) = timed(|| -> Result<(), String> {
        for (version, chunk) in (1u64..).zip(rows.chunks(args.rows.max(1))) {
            (&jobs, &meta)
                .transaction(|(jobs, meta)| {
                    for (id, json) in chunk {
                        jobs.insert(id.as_slice(), json.as_slice())?;
                    }
                    meta.insert(b"jobs_version".as_slice(), &version.to_be_bytes())?;
                    Ok::<_, ConflictableTransactionError<()>>(())
                })
                .map_err(|e| format!("writing: {e:?}"))?;
        }
        db.flush().map(drop).map_err(|e| format!("flushing: {e}"))
    });
    written?;
    report("sled write + flush", rows.len(), bytes, wall, cpu);

    let (read, wall, cpu) = timed(|| {
        jobs.iter().try_fold((0, 0), |(records, bytes), item| {
            item.map(|(_, json)| (records + 1, bytes + json.len()))
        })
    });
    let (records, read_bytes) = read.map_err(|e| format!("reading: {e}"))?;
    report("sled read in key order", records, read_bytes, wall, cpu);

    drop((jobs, meta, db));
    let _ = std::fs::remove_dir_all(&args.dir);
    Ok(())
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sled_floor: {e}");
            ExitCode::FAILURE
        }
    }
}
