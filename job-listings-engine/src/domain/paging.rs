use serde::{Deserialize, Serialize};

use super::DomainError;

/// A 1-based page number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct Page(u32);

impl Page {
    /// The largest page number accepted; far past any real result set, small enough that
    /// `page * per_page` never overflows.
    pub const MAX: u32 = 1_000_000;

    /// Validates a page number: 1 up to [`Page::MAX`].
    pub fn new(n: u32) -> Result<Self, DomainError> {
        if (1..=Self::MAX).contains(&n) {
            Ok(Self(n))
        } else {
            Err(DomainError::new(
                "page",
                format!("must be an integer from 1 to {}", Self::MAX),
            ))
        }
    }

    /// Parses a query-string value.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        raw.trim()
            .parse::<u32>()
            .map_err(|_| {
                DomainError::new(
                    "page",
                    format!("must be an integer from 1 to {}", Self::MAX),
                )
            })
            .and_then(Self::new)
    }

    /// The page number.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl Default for Page {
    fn default() -> Self {
        Self(1)
    }
}

impl TryFrom<u32> for Page {
    type Error = DomainError;
    fn try_from(n: u32) -> Result<Self, Self::Error> {
        Self::new(n)
    }
}

impl From<Page> for u32 {
    fn from(p: Page) -> u32 {
        p.0
    }
}

/// Results per page: 1 to 50, default 20.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct PerPage(u32);

impl PerPage {
    /// The most results one page may hold.
    pub const MAX: u32 = 50;
    /// The page size when none is asked for.
    pub const DEFAULT: u32 = 20;

    /// Validates a page size: 1 up to [`PerPage::MAX`].
    pub fn new(n: u32) -> Result<Self, DomainError> {
        if (1..=Self::MAX).contains(&n) {
            Ok(Self(n))
        } else {
            Err(DomainError::new(
                "per_page",
                format!("must be an integer from 1 to {}", Self::MAX),
            ))
        }
    }

    /// Parses a query-string value.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        raw.trim()
            .parse::<u32>()
            .map_err(|_| {
                DomainError::new(
                    "per_page",
                    format!("must be an integer from 1 to {}", Self::MAX),
                )
            })
            .and_then(Self::new)
    }

    /// The page size.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl Default for PerPage {
    fn default() -> Self {
        Self(Self::DEFAULT)
    }
}

impl TryFrom<u32> for PerPage {
    type Error = DomainError;
    fn try_from(n: u32) -> Result<Self, Self::Error> {
        Self::new(n)
    }
}

impl From<PerPage> for u32 {
    fn from(p: PerPage) -> u32 {
        p.0
    }
}

/// Page `page` of `items`, `per_page` to a page: empty past the last page.
pub fn page_of<T>(items: Vec<T>, page: Page, per_page: PerPage) -> Vec<T> {
    let per = per_page.get() as usize;
    let start = (page.get() as usize - 1).saturating_mul(per);
    items.into_iter().skip(start).take(per).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_page_accepts_1_to_50_and_rejects_the_rest() {
        assert_eq!(PerPage::parse("1").map(PerPage::get), Ok(1));
        assert_eq!(PerPage::parse("50").map(PerPage::get), Ok(50));
        assert!(PerPage::parse("0").is_err());
        assert!(PerPage::parse("51").is_err());
        assert!(PerPage::parse("-1").is_err());
        assert!(PerPage::parse("ten").is_err());
        assert_eq!(PerPage::default().get(), 20);
    }

    #[test]
    fn page_of_takes_one_page_and_nothing_past_the_last() {
        let per = PerPage::new(2).expect("a size");
        let page = |n| Page::new(n).expect("a page");
        assert_eq!(page_of(vec![1, 2, 3], page(1), per), [1, 2]);
        assert_eq!(page_of(vec![1, 2, 3], page(2), per), [3]);
        assert!(page_of(vec![1, 2, 3], page(3), per).is_empty());
    }

    #[test]
    fn page_starts_at_one() {
        assert!(Page::parse("0").is_err());
        assert_eq!(Page::parse("3").map(Page::get), Ok(3));
        assert_eq!(Page::default().get(), 1);
    }
}
