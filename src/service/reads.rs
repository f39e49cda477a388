use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;

use super::{JobListingsService, Metered, ServiceError, ServiceResult};
use crate::domain::{ApiKey, Company, CompanyId, FundingStage, Job, JobId, Page, PerPage};
use crate::query::{JobFilter, JobQuery};
use crate::store::{StoreError, StoreResult};

/// One page of job search results: typed jobs ([`JobListingsService::search_jobs`]) or
/// their stored JSON ([`JobListingsService::search_jobs_json`]).
#[derive(Clone, Debug)]
pub struct JobPage<J = Job> {
    /// The jobs on this page, newest first.
    pub jobs: Vec<J>,
    /// Matches in all.
    pub total: u64,
    /// The page number.
    pub page: Page,
    /// The page size.
    pub per_page: PerPage,
}

/// A job with its company's enrichment data: the job typed ([`JobListingsService::get_job`])
/// or as its stored JSON ([`JobListingsService::get_job_json`]).
#[derive(Clone, Debug)]
pub struct JobDetail<J = Job> {
    /// The job.
    pub job: J,
    /// The hiring company, when its record is known.
    pub company: Option<Arc<Company>>,
}

/// Which companies to list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompanyQuery {
    /// Only companies at this funding stage.
    pub funding_stage: Option<FundingStage>,
    /// Which page.
    pub page: Page,
    /// How many per page.
    pub per_page: PerPage,
}

/// A company in a listing, with its number of active jobs.
#[derive(Clone, Debug)]
pub struct CompanySummary {
    /// The company.
    pub company: Arc<Company>,
    /// How many active jobs it has.
    pub active_jobs_total: u64,
}

/// One page of companies with active jobs, by name.
#[derive(Clone, Debug)]
pub struct CompanyPage {
    /// The companies on this page.
    pub companies: Vec<CompanySummary>,
    /// Matching companies in all.
    pub total: u64,
    /// The page number.
    pub page: Page,
    /// The page size.
    pub per_page: PerPage,
}

/// A company with all its enrichment data and its active jobs.
#[derive(Clone, Debug)]
pub struct CompanyDetail {
    /// The company.
    pub company: Arc<Company>,
    /// How many active jobs it has.
    pub active_jobs_total: u64,
    /// Its active jobs, newest first, at most [`CompanyDetail::MAX_JOBS`].
    pub active_jobs: Vec<Job>,
}

impl CompanyDetail {
    /// The most active jobs listed inline; the rest are reachable by searching.
    pub const MAX_JOBS: usize = 100;
}

impl JobListingsService {
    /// Searches active jobs.
    pub async fn search_jobs(
        &self,
        key: &ApiKey,
        query: JobQuery,
    ) -> ServiceResult<Metered<JobPage>> {
        let store = &self.inner.store;
        self.search_page(key, query, |ids| async move { store.get_jobs(&ids).await })
            .await
    }

    /// [`JobListingsService::search_jobs`] with each job as the JSON the store keeps
    /// (`serde_json::to_vec(&job)`), for frontends that send it on as it is.
    pub async fn search_jobs_json(
        &self,
        key: &ApiKey,
        query: JobQuery,
    ) -> ServiceResult<Metered<JobPage<Bytes>>> {
        let store = &self.inner.store;
        self.search_page(
            key,
            query,
            |ids| async move { store.get_jobs_json(&ids).await },
        )
        .await
    }

    async fn search_page<J, Fut>(
        &self,
        key: &ApiKey,
        query: JobQuery,
        fetch: impl FnOnce(Vec<JobId>) -> Fut,
    ) -> ServiceResult<Metered<JobPage<J>>>
    where
        Fut: Future<Output = StoreResult<Vec<J>>>,
    {
        self.metered(key, |_| async move {
            let found = self.read_index().search(&query);
            let jobs = fetch(found.ids).await?;
            Ok(JobPage {
                jobs,
                total: found.total,
                page: query.page,
                per_page: query.per_page,
            })
        })
        .await
    }

    /// One job with its company. A closed job is answered too, with its `status`: a client
    /// that kept its id learns that it closed, where searches only list active jobs.
    pub async fn get_job(&self, key: &ApiKey, id: JobId) -> ServiceResult<Metered<JobDetail>> {
        let store = &self.inner.store;
        self.job_detail(key, id, |id| async move {
            let job = store.get_job(id).await?;
            Ok(job.map(|j| (j.company_id, j)))
        })
        .await
    }

    /// [`JobListingsService::get_job`] with the job as the JSON the store keeps.
    pub async fn get_job_json(
        &self,
        key: &ApiKey,
        id: JobId,
    ) -> ServiceResult<Metered<JobDetail<Bytes>>> {
        let store = &self.inner.store;
        self.job_detail(key, id, |id| async move {
            let Some(json) = store.get_jobs_json(&[id]).await?.pop() else {
                return Ok(None);
            };
            let company_id = company_id_in(&json).ok_or_else(|| StoreError::Corrupt {
                key: format!("jobs/{id}"),
                reason: "has no company_id".to_owned(),
            })?;
            Ok(Some((company_id, json)))
        })
        .await
    }

    async fn job_detail<J, Fut>(
        &self,
        key: &ApiKey,
        id: JobId,
        fetch: impl FnOnce(JobId) -> Fut,
    ) -> ServiceResult<Metered<JobDetail<J>>>
    where
        Fut: Future<Output = StoreResult<Option<(CompanyId, J)>>>,
    {
        self.metered(key, |_| async move {
            let (company_id, job) = fetch(id)
                .await?
                .ok_or(ServiceError::NotFound { resource: "job" })?;
            let company = self.read_companies().get(&company_id).cloned();
            Ok(JobDetail { job, company })
        })
        .await
    }

    /// Companies with active jobs, by name.
    pub async fn list_companies(
        &self,
        key: &ApiKey,
        query: CompanyQuery,
    ) -> ServiceResult<Metered<CompanyPage>> {
        self.metered(key, |_| async move {
            let counts: Vec<(CompanyId, u64)> =
                self.read_index().companies_with_active_jobs().collect();
            let companies = self.read_companies();
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
            let per = query.per_page.get() as usize;
            let start = (query.page.get() as usize - 1).saturating_mul(per);
            let page = matching.into_iter().skip(start).take(per).collect();
            Ok(CompanyPage {
                companies: page,
                total,
                page: query.page,
                per_page: query.per_page,
            })
        })
        .await
    }

    /// One company with its enrichment data and active jobs.
    pub async fn get_company(
        &self,
        key: &ApiKey,
        id: CompanyId,
    ) -> ServiceResult<Metered<CompanyDetail>> {
        self.metered(key, |_| async move {
            let company =
                self.read_companies()
                    .get(&id)
                    .cloned()
                    .ok_or(ServiceError::NotFound {
                        resource: "company",
                    })?;
            let filter = JobFilter {
                company_id: Some(id),
                ..JobFilter::default()
            };
            let found = self
                .read_index()
                .search_top(&filter, CompanyDetail::MAX_JOBS);
            let active_jobs = self.inner.store.get_jobs(&found.ids).await?;
            Ok(CompanyDetail {
                company,
                active_jobs_total: found.total,
                active_jobs,
            })
        })
        .await
    }
}

/// The `company_id` of a job's stored JSON, read without parsing the rest.
///
/// In JSON a quote inside a string is always escaped, so `"company_id":"` can only be the key
/// itself, and `Job` has that key at the top level only. Anything unexpected falls back to a
/// full parse.
fn company_id_in(json: &[u8]) -> Option<CompanyId> {
    const KEY: &[u8] = b"\"company_id\":\"";
    // Built once: setting up a searcher costs as much as the search.
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(KEY));
    let quick = FINDER
        .find(json)
        .and_then(|at| json.get(at + KEY.len()..at + KEY.len() + 36))
        .and_then(|id| uuid::Uuid::try_parse_ascii(id).ok())
        .map(CompanyId);
    quick.or_else(|| {
        #[derive(serde::Deserialize)]
        struct CompanyOf {
            company_id: CompanyId,
        }
        serde_json::from_slice::<CompanyOf>(json)
            .ok()
            .map(|of| of.company_id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn company_id_is_read_from_the_key_not_from_text_that_looks_like_it() {
        let company = CompanyId(uuid::Uuid::from_u128(7));
        let decoy = uuid::Uuid::from_u128(9);
        let role = format!("\"company_id\":\"{decoy}\" and a backslash \\");
        // As a job is stored: the role, with the decoy, before the key.
        let role = serde_json::to_string(&role).expect("encodes");
        let json = format!(
            "{{\"id\":\"x\",\"role\":{role},\"company_id\":\"{}\"}}",
            company.0
        );
        assert!(json.find(&decoy.to_string()) < json.find(&company.0.to_string()));
        assert_eq!(company_id_in(json.as_bytes()), Some(company));
    }

    #[test]
    fn company_id_falls_back_to_a_full_parse_and_fails_without_one() {
        let company = CompanyId(uuid::Uuid::from_u128(7));
        let spaced = format!("{{ \"company_id\" : \"{}\" }}", company.0);
        assert_eq!(company_id_in(spaced.as_bytes()), Some(company));
        assert_eq!(company_id_in(br#"{"id":"x"}"#), None);
        assert_eq!(company_id_in(br#"{"company_id":"not-a-uuid"}"#), None);
    }
}
