//! `--write-jsonl DIR`: the generated jobs as JSON Lines files for the bundled server's
//! `import` command (`benches/load/bulk.sh`).
//!
//! Writes `DIR/jobs.jsonl` (the final, active version of every job `0..n`, one
//! `job_listings::domain::Job` per line in its serde form) and `DIR/companies.jsonl` (one
//! `Company` per line for every company some job names, so every `company_id` resolves).
//! The generator keeps only each company's id and name; the rest of a company record (web
//! domain, funding stage, enrichment) is derived from its id, so the files are deterministic.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use job_listings::demo;
use job_listings::domain::{Company, CompanyId, Enrichment, FundingStage};

use crate::data::Generator;

/// What was written.
pub struct Written {
    /// Lines in `jobs.jsonl`.
    pub jobs: usize,
    /// Lines in `companies.jsonl`.
    pub companies: usize,
}

/// Writes `dir/jobs.jsonl` and `dir/companies.jsonl` for the final active jobs of `g`.
pub fn write(g: &Generator, dir: &Path) -> std::io::Result<Written> {
    std::fs::create_dir_all(dir)?;
    let mut companies: Vec<(CompanyId, String)> = Vec::new();
    let mut seen: HashSet<CompanyId> = HashSet::new();

    let mut out = BufWriter::with_capacity(1 << 20, File::create(dir.join("jobs.jsonl"))?);
    for i in 0..g.n() {
        let job = g.job(i);
        if seen.insert(job.company_id) {
            companies.push((job.company_id, job.company_name.clone()));
        }
        serde_json::to_writer(&mut out, &job)?;
        out.write_all(b"\n")?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;

    let mut out = BufWriter::new(File::create(dir.join("companies.jsonl"))?);
    for (id, name) in &companies {
        serde_json::to_writer(&mut out, &company(*id, name, g))?;
        out.write_all(b"\n")?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(Written {
        jobs: g.n(),
        companies: companies.len(),
    })
}

/// The company record of every company some job of `g` names.
pub fn companies(g: &Generator) -> Vec<Company> {
    let mut seen: HashSet<CompanyId> = HashSet::new();
    (0..g.n())
        .map(|i| g.job(i))
        .filter(|job| seen.insert(job.company_id))
        .map(|job| company(job.company_id, &job.company_name, g))
        .collect()
}

/// A company record for a generated company id and name.
fn company(id: CompanyId, name: &str, g: &Generator) -> Company {
    let h = u64::from_le_bytes(id.0.as_bytes()[..8].try_into().unwrap_or_default());
    let mut slug: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    slug.push_str(&format!("-{}", &id.0.simple().to_string()[..8]));
    let stage = demo::FUNDING_STAGES[(h % demo::FUNDING_STAGES.len() as u64) as usize];
    Company {
        id,
        name: name.to_owned(),
        domain: format!("{slug}.example.com"),
        funding_stage: FundingStage::parse(stage).expect("demo stages are valid labels"),
        blurb: format!("{name} builds software for teams everywhere."),
        enrichment: Enrichment {
            headcount: Some(3 + (h >> 8) as u32 % 5_000),
            founded_year: Some(1995 + ((h >> 24) % 31) as i32),
            links: [("website".to_owned(), format!("https://{slug}.example.com"))]
                .into_iter()
                .collect(),
            ..Enrichment::default()
        },
        updated_at: g.reference(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Churn;
    use job_listings::domain::Job;

    #[test]
    fn every_line_parses_validates_and_every_company_is_written() {
        let dir = std::env::temp_dir().join(format!("jsonl-test-{}", std::process::id()));
        let g = Generator::new(7, 3_000, Churn::LIGHT);
        let written = write(&g, &dir).expect("writes");
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect("readable");
        let companies: Vec<Company> = read("companies.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a company"))
            .collect();
        let jobs: Vec<Job> = read("jobs.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a job"))
            .collect();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            (jobs.len(), companies.len()),
            (written.jobs, written.companies)
        );
        assert_eq!(jobs.len(), 3_000);
        assert!(companies.iter().all(|c| c.validate().is_ok()));
        let ids: HashSet<CompanyId> = companies.iter().map(|c| c.id).collect();
        for (i, job) in jobs.iter().enumerate() {
            assert_eq!(*job, g.job(i));
            assert!(job.validate().is_ok() && job.is_active());
            assert!(ids.contains(&job.company_id));
        }
    }
}
