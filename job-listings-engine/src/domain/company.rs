use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{CompanyId, DomainError};

/// A funding stage label such as `seed`, `series_a` or `public`; compared case-insensitively.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FundingStage(String);

impl FundingStage {
    /// Normalises a label: lowercased, spaces and hyphens become `_`
    /// (so "Series A", "series-a" and "series_a" are one stage).
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        let label: String = raw
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c == ' ' || c == '-' { '_' } else { c })
            .collect();
        if label.is_empty()
            || label.len() > 40
            || !label
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            return Err(DomainError::new(
                "funding_stage",
                "must be a label of 1 to 40 letters, digits, spaces, '-' or '_', such as series_a",
            ));
        }
        Ok(Self(label))
    }

    /// The normalised label.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

// Read as 1 to 40 letters, digits, spaces, '-' or '_' in any case; sent normalised.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for FundingStage {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FundingStage".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        if generator.contract().is_deserialize() {
            schemars::json_schema!({ "type": "string", "pattern": "^[A-Za-z0-9 _-]{1,40}$" })
        } else {
            schemars::json_schema!({ "type": "string", "pattern": "^[a-z0-9_]{1,40}$" })
        }
    }
}

impl TryFrom<String> for FundingStage {
    type Error = DomainError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<FundingStage> for String {
    fn from(v: FundingStage) -> String {
        v.0
    }
}

/// Enrichment data about a company: typed common fields plus free-form extras.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Enrichment {
    /// Approximate number of employees.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(range(max = u32::MAX)))]
    pub headcount: Option<u32>,
    /// Year the company was founded.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(range(min = i32::MIN, max = i32::MAX)))]
    pub founded_year: Option<i32>,
    /// Where the company is headquartered.
    #[serde(default)]
    pub headquarters: Option<String>,
    /// Named investors.
    #[serde(default)]
    pub investors: Vec<String>,
    /// Total funding raised, in USD.
    #[serde(default)]
    pub total_funding_usd: Option<u64>,
    /// Links by kind: `website`, `linkedin`, `careers`, …
    #[serde(default)]
    pub links: BTreeMap<String, String>,
    /// Anything else the enrichment source knows.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// A company that posts jobs, as the API sends it and as an import line or
/// `PUT /admin/v1/companies/{id}` takes it back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Company {
    /// The company's identifier.
    pub id: CompanyId,
    /// The company's name: not blank, at most 300 bytes.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub name: String,
    /// The company's web domain, such as `example.com`.
    pub domain: String,
    /// The latest funding stage.
    pub funding_stage: FundingStage,
    /// A short description.
    #[serde(default)]
    pub blurb: String,
    /// Enrichment data.
    #[serde(default)]
    pub enrichment: Enrichment,
    /// When the record last changed (set by the service on ingest).
    #[serde(default = "Utc::now")]
    pub updated_at: DateTime<Utc>,
}

impl Company {
    /// A company with what a record must have, no blurb and no enrichment yet, stamped now;
    /// the caller sets the rest.
    ///
    /// ```
    /// use job_listings_engine::domain::{Company, CompanyId, FundingStage};
    ///
    /// let mut company = Company::new(
    ///     CompanyId::new_random(),
    ///     "Nimbus Labs",
    ///     "nimbus.example.com",
    ///     FundingStage::parse("Series A")?,
    /// );
    /// company.blurb = "Weather data for farms.".to_owned();
    /// company.enrichment.headcount = Some(40);
    /// assert!(company.validate().is_ok());
    /// # Ok::<(), job_listings_engine::domain::DomainError>(())
    /// ```
    pub fn new(
        id: CompanyId,
        name: impl Into<String>,
        domain: impl Into<String>,
        funding_stage: FundingStage,
    ) -> Self {
        Self {
            id,
            name: name.into(),
            domain: domain.into(),
            funding_stage,
            blurb: String::new(),
            enrichment: Enrichment::default(),
            updated_at: Utc::now(),
        }
    }

    /// Checks the invariants that types alone do not carry.
    pub fn validate(&self) -> Result<(), DomainError> {
        if self.name.trim().is_empty() || self.name.len() > 300 {
            return Err(DomainError::new("name", "must be 1 to 300 bytes"));
        }
        if self.domain.len() > 253 {
            return Err(DomainError::new("domain", "must be at most 253 bytes"));
        }
        if self.blurb.len() > 10_000 {
            return Err(DomainError::new("blurb", "must be at most 10000 bytes"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn funding_stage_spellings_are_one_stage() {
        let a = FundingStage::parse("Series A").map(|s| s.0);
        assert_eq!(a, Ok("series_a".to_owned()));
        assert_eq!(FundingStage::parse("series-a").map(|s| s.0), a);
        assert!(FundingStage::parse("").is_err());
        assert!(FundingStage::parse("a/b").is_err());
    }
}
