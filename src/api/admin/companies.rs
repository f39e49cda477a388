//! `/admin/v1/companies/{id}` (read, create or replace) and `/admin/v1/companies/lookup`.

use bytes::Bytes;
use http::{Request, StatusCode};

use super::json_with_status;
use super::wire::{CompanyLookup, LookedUp};
use crate::api::error::ApiError;
use crate::api::handlers::{json_object, no_body, no_params, Handled};
use crate::api::Reply;
use crate::domain::{Company, CompanyId, DomainError};
use crate::service::JobListingsService;

/// Most ids one lookup takes.
const MAX_LOOKUP: usize = 10_000;

/// One company as stored.
pub(super) async fn get(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let company = service.stored_company(CompanyId::parse(id)?)?;
    Ok(Reply::json(&*company, None))
}

/// Creates (201) or replaces (200) a company; the body is the company as the `import`
/// command reads it, its `id` the path's or left out.
pub(super) async fn put(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let id = CompanyId::parse(id)?;
    let company: Company = super::jobs::record_with_id(req, &id.to_string(), Company::validate)?;
    let created = !service.has_company(id);
    service.upsert_company(company).await?;
    let stored = service.stored_company(id)?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(json_with_status(status, &*stored))
}

/// Deletes a company (204); refused (409 `company_has_jobs`) while active jobs name it.
pub(super) async fn delete(
    service: &JobListingsService,
    id: &str,
    req: &Request<Bytes>,
) -> Handled {
    no_params(req)?;
    no_body(req)?;
    service.delete_company(CompanyId::parse(id)?).await?;
    Ok(Reply::new(StatusCode::NO_CONTENT, None, None))
}

/// Which of up to 10,000 company ids are stored: what an import checks its jobs' companies
/// against before it writes anything.
pub(super) async fn lookup(service: &JobListingsService, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let asked: CompanyLookup = json_object(req, &["ids"], "with `ids`, a list of company ids")?;
    if asked.ids.len() > MAX_LOOKUP {
        return Err(ApiError::from(DomainError::new(
            "ids",
            format!(
                "holds {} ids; send at most {MAX_LOOKUP} at a time",
                asked.ids.len()
            ),
        ))
        .into());
    }
    let (found, missing) = asked
        .ids
        .into_iter()
        .partition(|id| service.has_company(*id));
    Ok(Reply::json(&LookedUp { found, missing }, None))
}
