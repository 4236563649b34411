//! Auto-paging: a list read page after page as one stream of items.

use crate::error::Result;
use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};
use orchestrator_core::api::{Page, PageRequest};
use std::future::Future;

/// The page size `list_all` asks for (the most the server gives).
pub(crate) const ALL_PER_PAGE: u32 = 100;

/// Every item of a page list: page 1, 2, ... until the last page (by
/// `total`) or an empty one. Stops at the first error, which it yields.
pub(crate) fn pages<T, F, Fut>(fetch: F) -> BoxStream<'static, Result<T>>
where
    T: Send + 'static,
    F: FnMut(PageRequest) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Page<T>>> + Send + 'static,
{
    stream::try_unfold((fetch, Some(1u32)), |(mut fetch, next)| async move {
        let Some(number) = next else {
            return Ok::<_, crate::Error>(None);
        };
        let page = fetch(PageRequest::new(number, ALL_PER_PAGE)).await?;
        let seen = u64::from(page.page) * u64::from(page.per_page);
        let more = !page.items.is_empty() && seen < page.total;
        let items = stream::iter(page.items.into_iter().map(Ok));
        Ok(Some((items, (fetch, more.then_some(number + 1)))))
    })
    .try_flatten()
    .boxed()
}

/// Every item of a cursor list: `fetch(None)`, then `fetch(cursor)` with
/// the cursor each page hands back, until it hands back none.
pub(crate) fn cursors<T, C, F, Fut>(fetch: F) -> BoxStream<'static, Result<T>>
where
    T: Send + 'static,
    C: Send + 'static,
    F: FnMut(Option<C>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(Vec<T>, Option<C>)>> + Send + 'static,
{
    stream::try_unfold((fetch, Some(None::<C>)), |(mut fetch, next)| async move {
        let Some(cursor) = next else {
            return Ok::<_, crate::Error>(None);
        };
        let (items, after) = fetch(cursor).await?;
        let next = if items.is_empty() {
            None
        } else {
            after.map(Some)
        };
        let items = stream::iter(items.into_iter().map(Ok));
        Ok(Some((items, (fetch, next))))
    })
    .try_flatten()
    .boxed()
}
