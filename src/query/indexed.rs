//! What the index reads of a job: a whole [`Job`], or a [`JobView`] of its stored JSON when
//! the index is rebuilt from the store.

use chrono::{DateTime, Utc};

use crate::domain::{CompanyId, DomainTag, Job, JobId, JobView, Seniority};

/// The fields of a job that indexing it reads.
pub(crate) trait IndexedJob {
    fn id(&self) -> JobId;
    fn is_active(&self) -> bool;
    fn posted_at(&self) -> DateTime<Utc>;
    fn confidence(&self) -> f64;
    fn domains(&self) -> &[DomainTag];
    fn seniority(&self) -> &[Seniority];
    fn remote(&self) -> bool;
    fn company_id(&self) -> CompanyId;
    fn company_name(&self) -> &str;
    fn role(&self) -> &str;
    fn description(&self) -> &str;
}

/// Both types name their fields alike; only the texts' types differ, and both deref to `str`.
macro_rules! indexed_job_fields {
    ($ty:ty) => {
        impl IndexedJob for $ty {
            fn id(&self) -> JobId {
                self.id
            }
            fn is_active(&self) -> bool {
                self.status == crate::domain::JobStatus::Active
            }
            fn posted_at(&self) -> DateTime<Utc> {
                self.posted_at
            }
            fn confidence(&self) -> f64 {
                self.confidence.get()
            }
            fn domains(&self) -> &[DomainTag] {
                &self.domains
            }
            fn seniority(&self) -> &[Seniority] {
                &self.seniority
            }
            fn remote(&self) -> bool {
                self.remote
            }
            fn company_id(&self) -> CompanyId {
                self.company_id
            }
            fn company_name(&self) -> &str {
                &self.company_name
            }
            fn role(&self) -> &str {
                &self.role
            }
            fn description(&self) -> &str {
                &self.description
            }
        }
    };
}

indexed_job_fields!(Job);
indexed_job_fields!(JobView<'_>);

impl<J: IndexedJob + ?Sized> IndexedJob for &J {
    fn id(&self) -> JobId {
        (**self).id()
    }
    fn is_active(&self) -> bool {
        (**self).is_active()
    }
    fn posted_at(&self) -> DateTime<Utc> {
        (**self).posted_at()
    }
    fn confidence(&self) -> f64 {
        (**self).confidence()
    }
    fn domains(&self) -> &[DomainTag] {
        (**self).domains()
    }
    fn seniority(&self) -> &[Seniority] {
        (**self).seniority()
    }
    fn remote(&self) -> bool {
        (**self).remote()
    }
    fn company_id(&self) -> CompanyId {
        (**self).company_id()
    }
    fn company_name(&self) -> &str {
        (**self).company_name()
    }
    fn role(&self) -> &str {
        (**self).role()
    }
    fn description(&self) -> &str {
        (**self).description()
    }
}
