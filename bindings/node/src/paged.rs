//! The lazy iterators of the listings that page by `limit`/`skip` (a room's or
//! a channel's messages, a room's members): core's `Pages` and `PageItems`,
//! each step written as the JSON text the JS layer's iterator reads. A step is
//! one request, run on a pool thread; the generated `records::open_paged` makes
//! the iterator of each listing.

use roomchat::{Error, Page, PageItems, Pages};
use serde::Serialize;
use serde_json::Value;

use crate::shape::{self, Paging};

/// A listing's iterator as JSON text, a step at a time.
pub trait PagedSteps: Send {
    /// The next step, `None` at the end: `{"skip": n, "items": [...]}` (every
    /// record of a page, never none) or `{"skip": n, "page": {...}}`, `n` being
    /// where core would resume after them. An error leaves core where it was:
    /// the next step fetches the same page again.
    fn step(&mut self) -> Option<Result<String, Error>>;
}

/// Over the records: a page's records handed over at once (core's `next_batch`),
/// which the JS layer yields one by one.
pub fn items<P>(inner: PageItems<P>, paging: &'static Paging) -> Box<dyn PagedSteps>
where
    P: Page + Send + 'static,
    P::Item: Serialize + Send,
{
    Box::new(ItemSteps { inner, paging })
}

/// Page by page.
pub fn pages<P>(inner: Pages<P>, paging: &'static Paging) -> Box<dyn PagedSteps>
where
    P: Page + Serialize + Send + 'static,
{
    Box::new(PageSteps { inner, paging })
}

struct ItemSteps<P: Page> {
    inner: PageItems<P>,
    paging: &'static Paging,
}

impl<P> PagedSteps for ItemSteps<P>
where
    P: Page + Send,
    P::Item: Serialize + Send,
{
    fn step(&mut self) -> Option<Result<String, Error>> {
        let batch = match self.inner.next_batch(None)? {
            Ok(batch) => batch,
            Err(e) => return Some(Err(e)),
        };
        let items: Vec<Value> = batch.iter().map(as_json).collect();
        Some(Ok(format!(
            "{{\"skip\":{},\"items\":{}}}",
            self.inner.next_skip(),
            shape::records(&Value::Array(items), self.paging.item)
        )))
    }
}

struct PageSteps<P> {
    inner: Pages<P>,
    paging: &'static Paging,
}

impl<P> PagedSteps for PageSteps<P>
where
    P: Page + Serialize + Send,
{
    fn step(&mut self) -> Option<Result<String, Error>> {
        let page = match self.inner.next_page()? {
            Ok(page) => page,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(format!(
            "{{\"skip\":{},\"page\":{}}}",
            self.inner.next_skip(),
            shape::record(&as_json(&page), self.paging.page)
        )))
    }
}

/// A record of core's as the JSON of its wire names (unknown fields flattened in).
fn as_json<T: Serialize>(record: &T) -> Value {
    // Core's records are strings, numbers and maps of JSON values: they always serialize.
    serde_json::to_value(record).unwrap_or(Value::Null)
}
