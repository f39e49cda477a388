use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::DomainError;

/// A paid plan. Ordered: developer < agent_pro < enterprise.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[schemars(inline)]
#[serde(rename_all = "snake_case")]
pub enum Plan {
    /// Developer, 29 USD a month.
    Developer,
    /// Agent Pro, 99 USD a month; unlocks webhooks.
    AgentPro,
    /// Enterprise: negotiated.
    Enterprise,
}

impl Plan {
    /// Every plan, lowest first.
    pub const ALL: [Plan; 3] = [Plan::Developer, Plan::AgentPro, Plan::Enterprise];

    /// The lowest plan that includes webhooks.
    pub const LOWEST_WITH_WEBHOOKS: Plan = Plan::AgentPro;

    /// Whether the plan includes webhooks.
    pub fn includes_webhooks(self) -> bool {
        self >= Self::LOWEST_WITH_WEBHOOKS
    }

    /// The machine name used in the API and configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Developer => "developer",
            Plan::AgentPro => "agent_pro",
            Plan::Enterprise => "enterprise",
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Plan {
    type Err = DomainError;
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        match raw.trim().to_lowercase().replace([' ', '-'], "_").as_str() {
            "developer" => Ok(Plan::Developer),
            "agent_pro" => Ok(Plan::AgentPro),
            "enterprise" => Ok(Plan::Enterprise),
            _ => Err(DomainError::new(
                "plan",
                "must be one of developer, agent_pro, enterprise",
            )),
        }
    }
}

/// A key's usage in its current billing period, exactly the spec's fields: what its owner's
/// `GET /api/v1/usage` reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageReport {
    /// The key's plan.
    pub plan: Plan,
    /// Successful calls counted in this period.
    pub calls_used: u64,
    /// Calls left in this period.
    pub calls_remaining: u64,
    /// Calls allowed per period.
    pub monthly_quota: u64,
    /// When the current period began (UTC).
    pub period_start: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_ordered_and_parse_their_names() {
        assert!(Plan::Developer < Plan::AgentPro && Plan::AgentPro < Plan::Enterprise);
        assert_eq!("Agent Pro".parse::<Plan>(), Ok(Plan::AgentPro));
        assert_eq!("agent_pro".parse::<Plan>(), Ok(Plan::AgentPro));
        assert!("gold".parse::<Plan>().is_err());
    }
}
