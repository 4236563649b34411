//! Page-numbered pagination shared by every list route.

use serde::{Deserialize, Serialize};

/// The largest `per_page` a list route serves; larger requests are clamped.
pub const MAX_PER_PAGE: u32 = 100;
/// `per_page` when the request names none.
pub const DEFAULT_PER_PAGE: u32 = 20;

/// Which page of a list to read. Always valid: construct it with
/// [`PageRequest::new`], which clamps, or parse it from a query string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PageRequest {
    /// The page to read, from 1.
    pub page: u32,
    /// Items per page, 1 to [`MAX_PER_PAGE`].
    pub per_page: u32,
}

impl Default for PageRequest {
    fn default() -> Self {
        Self {
            page: 1,
            per_page: DEFAULT_PER_PAGE,
        }
    }
}

/// Why a pagination value was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageError {
    /// The query parameter at fault (`page` or `per_page`).
    pub field: &'static str,
    /// What is wrong with it, for the field error the caller gets.
    pub message: String,
}

impl PageRequest {
    /// A page request with `per_page` clamped to [`MAX_PER_PAGE`]; zero values
    /// become the defaults.
    pub fn new(page: u32, per_page: u32) -> Self {
        Self {
            page: page.max(1),
            per_page: if per_page == 0 {
                DEFAULT_PER_PAGE
            } else {
                per_page.min(MAX_PER_PAGE)
            },
        }
    }

    /// Parses the raw `page` and `per_page` query values. Absent values take
    /// their defaults; zero, negative or non-integer values are refused.
    pub fn parse(page: Option<&str>, per_page: Option<&str>) -> Result<Self, PageError> {
        fn positive(
            field: &'static str,
            raw: Option<&str>,
            default: u32,
        ) -> Result<u32, PageError> {
            let Some(raw) = raw else { return Ok(default) };
            match raw.trim().parse::<i64>() {
                Ok(n) if n >= 1 => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
                _ => Err(PageError {
                    field,
                    message: format!("{field} must be a positive integer"),
                }),
            }
        }
        let page = positive("page", page, 1)?;
        let per_page = positive("per_page", per_page, DEFAULT_PER_PAGE)?.min(MAX_PER_PAGE);
        Ok(Self { page, per_page })
    }

    /// Rows to skip before this page.
    pub fn offset(&self) -> u64 {
        u64::from(self.page - 1) * u64::from(self.per_page)
    }
}

/// One page of a list plus the totals the envelope reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// How many items match over all pages.
    pub total: u64,
    /// The page these items are, from 1.
    pub page: u32,
    /// Items per page the request asked for (after clamping).
    pub per_page: u32,
}

impl<T> Page<T> {
    /// A page of `items` out of `total`, at the position `request` asked for.
    pub fn new(items: Vec<T>, total: u64, request: PageRequest) -> Self {
        Self {
            items,
            total,
            page: request.page,
            per_page: request.per_page,
        }
    }

    /// `ceil(total / per_page)`, and 1 for an empty list.
    pub fn pages(&self) -> u64 {
        let per_page = u64::from(self.per_page.max(1));
        total_pages(self.total, per_page)
    }

    /// The same page with every item converted by `f`.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            total: self.total,
            page: self.page,
            per_page: self.per_page,
        }
    }
}

fn total_pages(total: u64, per_page: u64) -> u64 {
    total.div_ceil(per_page).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_defaults_clamps_and_refuses() {
        assert_eq!(
            PageRequest::parse(None, None).unwrap(),
            PageRequest {
                page: 1,
                per_page: 20
            }
        );
        assert_eq!(
            PageRequest::parse(Some("3"), Some("500")).unwrap(),
            PageRequest {
                page: 3,
                per_page: 100
            }
        );
        assert_eq!(
            PageRequest::parse(Some("0"), None).unwrap_err().field,
            "page"
        );
        assert_eq!(
            PageRequest::parse(None, Some("-1")).unwrap_err().field,
            "per_page"
        );
        assert_eq!(
            PageRequest::parse(None, Some("x")).unwrap_err().field,
            "per_page"
        );
        assert_eq!(
            PageRequest::parse(Some("2"), Some("10")).unwrap().offset(),
            10
        );
    }

    #[test]
    fn pages_is_ceiling_and_one_when_empty() {
        let req = PageRequest::new(1, 20);
        assert_eq!(Page::<()>::new(vec![], 0, req).pages(), 1);
        assert_eq!(Page::<()>::new(vec![], 20, req).pages(), 1);
        assert_eq!(Page::<()>::new(vec![], 21, req).pages(), 2);
    }
}
