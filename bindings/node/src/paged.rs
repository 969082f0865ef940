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
    Box::new(ItemSteps {
        inner,
        paging,
        size_hint: FIRST_SIZE_HINT,
    })
}

/// The first step's text is sized for this many bytes (then like the last step's).
const FIRST_SIZE_HINT: usize = 16 * 1024;

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
    /// Bytes the next step's text is sized for.
    size_hint: usize,
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
        // One text, sized like the last step's (pages are alike), written
        // record by record: no list of the page's records as JSON values, no
        // text grown by doubling and copied into another.
        let mut out = Vec::with_capacity(self.size_hint);
        out.extend_from_slice(b"{\"skip\":");
        out.extend_from_slice(self.inner.next_skip().to_string().as_bytes());
        out.extend_from_slice(b",\"items\":");
        shape::write_items(&mut out, &batch, self.paging.item);
        out.push(b'}');
        drop(batch);
        self.size_hint = out.len() + out.len() / 16;
        // Only whole UTF-8 strings and ASCII were written.
        Some(Ok(
            String::from_utf8(out).unwrap_or_else(|_| "null".to_owned())
        ))
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
