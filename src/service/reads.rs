use std::sync::Arc;

use super::conditional::Versioner;
use super::{CallResult, Caller, Catalog, Held, Read, ServiceError, ServiceResult, Version};
use crate::domain::{page_of, Company, CompanyId, FundingStage, Job, JobId, Page, PerPage};
use crate::query::{FacetCounts, JobFilter, JobIndex, JobQuery, ValueCount};

/// At most this many known values are named in an [`UnknownValue`]: the vocabularies are
/// open, so an operator's taxonomy may hold thousands of labels, and a warning must stay
/// small. The most common ones are named.
pub const MAX_KNOWN_VALUES: usize = 100;

/// A filter value that nothing in the data holds, so it can only narrow a search to nothing.
///
/// The vocabularies of domain tags, seniority levels and funding stages are open (an operator
/// imports their own taxonomy), so such a value is not an error; the answer says so instead,
/// with the values that do exist.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnknownValue {
    /// The filter parameter: `domain`, `seniority` or `funding_stage`.
    pub param: &'static str,
    /// The value as normalised.
    pub value: String,
    /// The values the data holds, most common first (then by value), at most
    /// [`MAX_KNOWN_VALUES`].
    pub known: Vec<String>,
    /// How many values the data holds in all, of which `known` names the first.
    pub known_total: usize,
}

impl UnknownValue {
    fn new(param: &'static str, value: &str, known: &[ValueCount]) -> Self {
        Self {
            param,
            value: value.to_owned(),
            known: known
                .iter()
                .take(MAX_KNOWN_VALUES)
                .map(|v| v.value.clone())
                .collect(),
            known_total: known.len(),
        }
    }
}

/// The filter values of a job search that no active job holds.
fn unknown_job_values(index: &JobIndex, filter: &JobFilter) -> Vec<UnknownValue> {
    let mut out = Vec::new();
    let unknown_domains: Vec<_> = filter
        .domains
        .iter()
        .filter(|d| index.jobs_with_domain(d) == 0)
        .collect();
    if !unknown_domains.is_empty() {
        let known = index.domain_values();
        out.extend(
            unknown_domains
                .into_iter()
                .map(|d| UnknownValue::new("domain", d.as_str(), &known)),
        );
    }
    let unknown_levels: Vec<_> = filter
        .seniority
        .iter()
        .filter(|s| index.jobs_with_seniority(s) == 0)
        .collect();
    if !unknown_levels.is_empty() {
        let known = index.seniority_values();
        out.extend(
            unknown_levels
                .into_iter()
                .map(|s| UnknownValue::new("seniority", s.as_str(), &known)),
        );
    }
    out
}

/// One page of job search results ([`Caller::search_jobs`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct JobPage {
    /// The jobs on this page, newest first.
    pub jobs: Vec<Arc<Job>>,
    /// Matches in all.
    pub total: u64,
    /// The page number.
    pub page: Page,
    /// The page size.
    pub per_page: PerPage,
    /// The facet counts the query asked for, over all the matches.
    pub facets: FacetCounts,
    /// The query's filter values that no active job holds (empty when there are none).
    pub warnings: Vec<UnknownValue>,
}

/// A job with its company's enrichment data ([`Caller::get_job`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct JobDetail {
    /// The job.
    pub job: Arc<Job>,
    /// The hiring company, when its record is known.
    pub company: Option<Arc<Company>>,
}

/// Which companies to list.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CompanyQuery {
    /// Only companies at this funding stage.
    pub funding_stage: Option<FundingStage>,
    /// Which page.
    pub page: Page,
    /// How many per page.
    pub per_page: PerPage,
    /// Whether to count the matching companies by funding stage
    /// ([`CompanyPage::funding_stage_counts`]).
    pub funding_stage_facet: bool,
}

setters!(CompanyQuery {
    page: Page,
    per_page: PerPage,
    funding_stage_facet: bool,
});
setters!(@some CompanyQuery {
    funding_stage: FundingStage,
});

/// A company in a listing, with its number of active jobs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompanySummary {
    /// The company.
    pub company: Arc<Company>,
    /// How many active jobs it has.
    pub active_jobs_total: u64,
}

/// One page of companies with active jobs, by name.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompanyPage {
    /// The companies on this page.
    pub companies: Vec<CompanySummary>,
    /// Matching companies in all.
    pub total: u64,
    /// The page number.
    pub page: Page,
    /// The page size.
    pub per_page: PerPage,
    /// When asked for, the matching companies by funding stage, most first (then by stage);
    /// only stages with at least one.
    pub funding_stage_counts: Option<Vec<ValueCount>>,
    /// The query's filter values that no company holds (empty when there are none).
    pub warnings: Vec<UnknownValue>,
}

/// A company with all its enrichment data and its active jobs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompanyDetail {
    /// The company.
    pub company: Arc<Company>,
    /// How many active jobs it has.
    pub active_jobs_total: u64,
    /// Its active jobs, newest first, at most [`CompanyDetail::MAX_JOBS`].
    pub active_jobs: Vec<Arc<Job>>,
}

impl CompanyDetail {
    /// The most active jobs listed inline; the rest are reachable by searching.
    pub const MAX_JOBS: usize = 100;

    /// The company, its count of active jobs and the jobs listed.
    fn version(&self) -> Version {
        let c = &self.company;
        let mut v = Versioner::new()
            .add((c.id, c.updated_at))
            .add(self.active_jobs_total);
        for job in &self.active_jobs {
            v = v.add((job.revision(), job.updated_at));
        }
        v.finish()
    }
}

impl JobPage {
    /// What the page found. Counts over the whole result and the known values a warning
    /// names can change while the page stays the same, and they are part of the answer.
    fn version(&self) -> Version {
        let mut v = Versioner::new().add(self.total);
        for job in &self.jobs {
            v = v.add((job.revision(), job.updated_at));
        }
        v.add(&self.facets).add(&self.warnings).finish()
    }
}

impl JobDetail {
    /// The job and its company.
    fn version(&self) -> Version {
        Versioner::new()
            .add((self.job.revision(), self.job.updated_at))
            .add(self.company.as_ref().map(|c| (c.id, c.updated_at)))
            .finish()
    }
}

impl CompanyPage {
    /// What the page found, with its counts and warnings.
    fn version(&self) -> Version {
        let mut v = Versioner::new().add(self.total);
        for summary in &self.companies {
            let c = &summary.company;
            v = v.add((c.id, c.updated_at, summary.active_jobs_total));
        }
        v.add(&self.funding_stage_counts)
            .add(&self.warnings)
            .finish()
    }
}

impl Caller {
    /// Searches active jobs. Counted as one call unless the client holds the page's version
    /// ([`Held`]).
    pub async fn search_jobs(&self, query: JobQuery, held: Held) -> CallResult<Read<JobPage>> {
        self.read(&held, || self.catalog.find_jobs(query), JobPage::version)
            .await
    }

    /// One job with its company. A closed job is answered too, with its `status`: a client
    /// that kept its id learns that it closed, where searches only list active jobs. Counted
    /// as one call unless the client holds the answer's version ([`Held`]).
    pub async fn get_job(&self, id: JobId, held: Held) -> CallResult<Read<JobDetail>> {
        self.read(&held, || self.catalog.find_job(id), JobDetail::version)
            .await
    }

    /// The active jobs most like one ([`JobIndex::similar`](crate::query::JobIndex::similar)),
    /// best first, at most `per_page`: never the job itself, its copies or any repost. The
    /// job may be closed. Counted as one call unless the client holds the answer's version
    /// ([`Held`]).
    pub async fn similar_jobs(
        &self,
        id: JobId,
        per_page: PerPage,
        held: Held,
    ) -> CallResult<Read<JobPage>> {
        self.read(
            &held,
            || self.catalog.find_similar(id, per_page),
            JobPage::version,
        )
        .await
    }

    /// Companies with active jobs, by name. Counted as one call unless the client holds the
    /// page's version ([`Held`]).
    pub async fn list_companies(
        &self,
        query: CompanyQuery,
        held: Held,
    ) -> CallResult<Read<CompanyPage>> {
        self.read(
            &held,
            || self.catalog.find_companies(query),
            CompanyPage::version,
        )
        .await
    }

    /// One company with its enrichment data and active jobs. Counted as one call unless the
    /// client holds the answer's version ([`Held`]).
    pub async fn get_company(&self, id: CompanyId, held: Held) -> CallResult<Read<CompanyDetail>> {
        self.read(
            &held,
            || self.catalog.find_company(id),
            CompanyDetail::version,
        )
        .await
    }
}

impl Catalog {
    pub(super) async fn find_jobs(&self, query: JobQuery) -> ServiceResult<JobPage> {
        let memoized = {
            let index = self.read_index();
            let generation = self.index_generation.current();
            let kept = self.search_memo.get(&query, generation);
            self.shared.metrics.search(kept.is_some());
            match kept {
                Some(memoized) => memoized,
                None => self.search_memo.keep(
                    &query,
                    generation,
                    index.search(&query),
                    unknown_job_values(&index, &query.filter),
                ),
            }
        };
        let jobs = self.store.get_jobs(&memoized.found.ids).await?;
        Ok(JobPage {
            jobs,
            total: memoized.found.total,
            page: query.page,
            per_page: query.per_page,
            facets: memoized.found.facets.clone(),
            warnings: memoized.warnings.clone(),
        })
    }

    pub(super) async fn find_similar(
        &self,
        id: JobId,
        per_page: PerPage,
    ) -> ServiceResult<JobPage> {
        let job = self
            .store
            .get_job(id)
            .await?
            .ok_or(ServiceError::NotFound { resource: "job" })?;
        // Its copies: those it lists, or, for a repost, its canonical job and those that lists.
        let mut copies: Vec<JobId> = job.reposts.iter().map(|r| r.id).collect();
        if let Some(canonical) = job.repost_of {
            copies.push(canonical);
            if let Some(c) = self.store.get_job(canonical).await? {
                copies.extend(c.reposts.iter().map(|r| r.id));
            }
        }
        let ids = self
            .read_index()
            .similar(&job, &copies, per_page.get() as usize);
        let jobs = self.store.get_jobs(&ids).await?;
        Ok(JobPage {
            total: jobs.len() as u64,
            jobs,
            page: Page::default(),
            per_page,
            facets: FacetCounts::default(),
            warnings: Vec::new(),
        })
    }

    pub(super) async fn find_job(&self, id: JobId) -> ServiceResult<JobDetail> {
        let job = self
            .store
            .get_job(id)
            .await?
            .ok_or(ServiceError::NotFound { resource: "job" })?;
        let company = self.read_companies().get(&job.company_id).cloned();
        Ok(JobDetail { job, company })
    }

    pub(super) async fn find_companies(&self, query: CompanyQuery) -> ServiceResult<CompanyPage> {
        let counts: Vec<(CompanyId, u64)> =
            self.read_index().companies_with_active_jobs().collect();
        let companies = self.read_companies();
        let warnings = match &query.funding_stage {
            Some(stage) if !companies.values().any(|c| c.funding_stage == *stage) => {
                let known = stage_counts(companies.values().map(|c| &c.funding_stage));
                vec![UnknownValue::new("funding_stage", stage.as_str(), &known)]
            }
            _ => Vec::new(),
        };
        let mut matching: Vec<CompanySummary> = counts
            .into_iter()
            .filter_map(|(id, active_jobs_total)| {
                let company = companies.get(&id)?;
                let stage_ok = query
                    .funding_stage
                    .as_ref()
                    .is_none_or(|s| *s == company.funding_stage);
                stage_ok.then(|| CompanySummary {
                    company: company.clone(),
                    active_jobs_total,
                })
            })
            .collect();
        drop(companies);
        matching.sort_by(|a, b| {
            a.company
                .name
                .to_lowercase()
                .cmp(&b.company.name.to_lowercase())
                .then(a.company.id.cmp(&b.company.id))
        });
        let total = matching.len() as u64;
        let funding_stage_counts = query
            .funding_stage_facet
            .then(|| stage_counts(matching.iter().map(|s| &s.company.funding_stage)));
        Ok(CompanyPage {
            companies: page_of(matching, query.page, query.per_page),
            total,
            page: query.page,
            per_page: query.per_page,
            funding_stage_counts,
            warnings,
        })
    }

    pub(super) async fn find_company(&self, id: CompanyId) -> ServiceResult<CompanyDetail> {
        let company = self
            .read_companies()
            .get(&id)
            .cloned()
            .ok_or(ServiceError::NotFound {
                resource: "company",
            })?;
        let filter = JobFilter::default().company_id(id);
        let found = self
            .read_index()
            .search_top(&filter, CompanyDetail::MAX_JOBS);
        let active_jobs = self.store.get_jobs(&found.ids).await?;
        Ok(CompanyDetail {
            company,
            active_jobs_total: found.total,
            active_jobs,
        })
    }
}

/// How many of the stages are each stage, most first, then by stage.
fn stage_counts<'a>(stages: impl Iterator<Item = &'a FundingStage>) -> Vec<ValueCount> {
    let mut counts: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for stage in stages {
        *counts.entry(stage.as_str()).or_default() += 1;
    }
    let mut out: Vec<ValueCount> = counts
        .into_iter()
        .map(|(value, count)| ValueCount {
            value: value.to_owned(),
            count,
        })
        .collect();
    out.sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    out
}
