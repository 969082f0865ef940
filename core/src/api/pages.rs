//! Lazy iteration over every listing that pages by `limit`/`skip` (a room's
//! or a channel's messages, a room's members): written once, generic over the
//! page record. The generated `Client::<name>_pages` and `Client::iter_<name>`
//! make these iterators (the users listing keeps its own, [`crate::Users`]).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use crate::cancel::CancelToken;
use crate::error::{ErrorKind, Result};
use crate::send::client::Client;

/// The page size of the iterators when the caller sets none: the most a users
/// or members page may hold.
pub const DEFAULT_ITER_PAGE_SIZE: u64 = 200;

/// A page of a listing that pages by `limit`/`skip`: what [`Pages`] reads of it.
/// Implemented by the generated page records ([`MessagePage`](crate::MessagePage),
/// [`MemberPage`](crate::MemberPage)).
pub trait Page {
    /// The record the listing lists.
    type Item;

    /// This page's records, in the service's order.
    fn items(&self) -> &[Self::Item];

    /// This page's records, taken out of it.
    fn into_items(self) -> Vec<Self::Item>;

    /// How many records the whole listing holds, as this page says
    /// (`total`, `totalRecords`); `None` when it does not say.
    fn total(&self) -> Option<u64>;
}

/// Fetches the page of `limit` records from `skip` with the client given.
type Fetch<P> = dyn Fn(&Client, u64, u64) -> Result<P> + Send + Sync;

/// A listing page by page: made by the generated `Client::<name>_pages`
/// ([`Client::room_messages_pages`](crate::Client::room_messages_pages), …).
///
/// Each step fetches one page: `limit` = the page size, `skip` advancing by
/// the records the page held. It ends after an empty page, after a page that
/// brings `skip` to the listing's total, or, when the answer gives no total,
/// after a page shorter than the page size. It never ends because of an error:
/// an error (a timeout, a cancel, a 5xx, a lost connection) is yielded as an
/// `Err` item and the next step fetches the same page again, so a loop that
/// goes on after an error bounds its own retries (a revoked key comes back
/// every time). The one exception is a validation error (a page size out of
/// the declared limits: nothing was sent), which no retry can mend: yielded
/// once, then the iteration ends.
///
/// It keeps no record of what it yielded: memory stays one page, whatever the
/// listing's length. Records added behind the last page while it runs are
/// yielded too (the emulator lists messages oldest first); records removed
/// before the current offset shift the later pages. [`Pages::next_skip`] is
/// where to resume after a stop (pass it as the `skip` of a new iterator).
///
/// One page at a time for a binding: [`Pages::next_page`] (or
/// [`next_with_cancel`](Pages::next_with_cancel)) is one request, and each call
/// takes `&mut self` only for that request.
pub struct Pages<P> {
    client: Client,
    fetch: Arc<Fetch<P>>,
    page_size: u64,
    skip: u64,
    done: bool,
}

impl<P> fmt::Debug for Pages<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pages")
            .field("page_size", &self.page_size)
            .field("skip", &self.skip)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<P: Page> Pages<P> {
    /// Pages of `page_size` from `skip`, each fetched by `fetch(client, limit, skip)`.
    pub(crate) fn new(
        client: Client,
        page_size: u64,
        skip: u64,
        fetch: impl Fn(&Client, u64, u64) -> Result<P> + Send + Sync + 'static,
    ) -> Pages<P> {
        Pages {
            client,
            fetch: Arc::new(fetch),
            page_size,
            skip,
            done: false,
        }
    }

    /// The offset of the next page to fetch: after a stop, a new iterator
    /// given this `skip` goes on where this one left off.
    pub fn next_skip(&self) -> u64 {
        self.skip
    }

    /// The page size (`limit` of every request).
    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    /// Whether the iteration has ended: the next step yields `None` without a request.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The next page (as `next`): `None` at the end, `Some(Err(_))` for an
    /// error after which the next call fetches the same page again.
    pub fn next_page(&mut self) -> Option<Result<P>> {
        self.step(None)
    }

    /// The next page, this step's request cancelled by `token` (in place of
    /// the client's own token, if any). A cancelled step yields
    /// [`ErrorKind::Cancelled`] and cancels nothing else: the next step
    /// fetches the same page again.
    pub fn next_with_cancel(&mut self, token: &CancelToken) -> Option<Result<P>> {
        self.step(Some(token))
    }

    fn step(&mut self, cancel: Option<&CancelToken>) -> Option<Result<P>> {
        if self.done {
            return None;
        }
        let fetched = match cancel {
            Some(token) => (self.fetch)(
                &self.client.with_cancel(token.clone()),
                self.page_size,
                self.skip,
            ),
            None => (self.fetch)(&self.client, self.page_size, self.skip),
        };
        // After an error `skip` stays: the next step asks for the same page. A
        // validation error would come back at every step (nothing was sent), so
        // a `.flatten()` would spin for ever: it ends the iteration once yielded.
        let page = match fetched {
            Ok(page) => page,
            Err(e) => {
                self.done = e.kind() == ErrorKind::Validation;
                return Some(Err(e));
            }
        };
        let got = page.items().len() as u64;
        self.skip += got;
        // A short page ends the listing only when the answer gives no total:
        // a service that holds `limit` below the page size asked for must not
        // cut an export short.
        self.done = got == 0
            || match page.total() {
                Some(total) => self.skip >= total,
                None => got < self.page_size,
            };
        Some(Ok(page))
    }
}

impl<P: Page> Iterator for Pages<P> {
    type Item = Result<P>;

    fn next(&mut self) -> Option<Result<P>> {
        self.step(None)
    }
}

impl<P: Page> std::iter::FusedIterator for Pages<P> {}

/// A listing record by record, fetched lazily page by page: made by the
/// generated `Client::iter_<name>`
/// ([`Client::iter_room_messages`](crate::Client::iter_room_messages), …).
///
/// The rules are those of [`Pages`]: an error is an `Err` item, and the next
/// step fetches the page that failed again; memory stays one page. It yields
/// every record the pages hold, with no de-duplication (records added or
/// removed before the current offset while it runs shift later pages).
///
/// ```
/// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
/// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
/// use roomchat::{CreateChatRoom, RoomMessages};
/// let room = client.create_chat_room(&CreateChatRoom::new().name("Webinar"))?.room_id.unwrap();
/// # emu.seed_messages(&room, None, 450);
/// // The whole history, 200 messages a request, oldest first (as the emulator gives them).
/// let mut transcript = Vec::new();
/// let mut messages = client.iter_room_messages(&room, &RoomMessages::new());
/// for message in messages.by_ref() {
///     match message {
///         Ok(message) => transcript.push(message.message.unwrap_or_default()),
///         // The next step fetches the same page again; or stop here, and resume
///         // later from `messages.next_skip()` (pass it as `skip`).
///         Err(e) => return Err(e),
///     }
/// }
/// assert_eq!(transcript.len(), 450);
/// assert_eq!(messages.next_skip(), 450);
/// # Ok::<(), roomchat::Error>(())
/// ```
pub struct PageItems<P: Page> {
    pages: Pages<P>,
    buffered: VecDeque<P::Item>,
}

impl<P: Page> fmt::Debug for PageItems<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageItems")
            .field("pages", &self.pages)
            .field("buffered", &self.buffered.len())
            .finish()
    }
}

impl<P: Page> PageItems<P> {
    pub(crate) fn new(pages: Pages<P>) -> PageItems<P> {
        PageItems {
            pages,
            buffered: VecDeque::new(),
        }
    }

    /// The offset of the next record to yield: after a stop, a new iterator
    /// given this `skip` yields the records this one has not yet.
    pub fn next_skip(&self) -> u64 {
        self.pages.next_skip() - self.buffered.len() as u64
    }

    /// The next record as `next` gives it, a page fetched in this step
    /// cancelled by `token` (see [`Pages::next_with_cancel`]).
    pub fn next_with_cancel(&mut self, token: &CancelToken) -> Option<Result<P::Item>> {
        self.step(Some(token))
    }

    fn step(&mut self, cancel: Option<&CancelToken>) -> Option<Result<P::Item>> {
        loop {
            if let Some(item) = self.buffered.pop_front() {
                return Some(Ok(item));
            }
            // The buffer is empty: the page's records become it as they are.
            match self.pages.step(cancel)? {
                Ok(page) => self.buffered = page.into_items().into(),
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// The records not yet yielded of the current page, or, when none is left,
    /// every record of the next page (one request, cancelled by `cancel` if
    /// given): for a binding that hands records over a page at a time. `None`
    /// at the end; an `Err` as `next` yields it.
    pub fn next_batch(&mut self, cancel: Option<&CancelToken>) -> Option<Result<Vec<P::Item>>> {
        if !self.buffered.is_empty() {
            return Some(Ok(std::mem::take(&mut self.buffered).into()));
        }
        loop {
            match self.pages.step(cancel)? {
                Ok(page) => {
                    let items = page.into_items();
                    // An empty page ends the listing: no empty batch, the
                    // next step gives `None`.
                    if !items.is_empty() {
                        return Some(Ok(items));
                    }
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl<P: Page> Iterator for PageItems<P> {
    type Item = Result<P::Item>;

    fn next(&mut self) -> Option<Result<P::Item>> {
        self.step(None)
    }
}

impl<P: Page> std::iter::FusedIterator for PageItems<P> {}

/// A page of any declared listing, as the JSON [`Client::call_operation`]
/// gives it: for a binding that reads pages as JSON (Go, the JVM), made by
/// [`Client::operation_pages`]. Its items are the page's one list of records
/// ([`OperationSpec::items_field`](crate::wire::OperationSpec::items_field)).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPage {
    value: serde_json::Value,
    items_field: &'static str,
}

impl JsonPage {
    /// The page as the operation's JSON answer.
    pub fn value(&self) -> &serde_json::Value {
        &self.value
    }

    /// The page as the operation's JSON answer, taken.
    pub fn into_value(self) -> serde_json::Value {
        self.value
    }
}

impl Page for JsonPage {
    type Item = serde_json::Value;

    fn items(&self) -> &[serde_json::Value] {
        self.value
            .get(self.items_field)
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    fn into_items(mut self) -> Vec<serde_json::Value> {
        match self
            .value
            .get_mut(self.items_field)
            .map(serde_json::Value::take)
        {
            Some(serde_json::Value::Array(items)) => items,
            _ => Vec::new(),
        }
    }

    fn total(&self) -> Option<u64> {
        ["total", "totalRecords"]
            .into_iter()
            .find_map(|name| self.value.get(name)?.as_u64())
    }
}

impl Client {
    /// Every page of the declared listing `operation` (one whose declaration
    /// pages: `list_users`, `room_messages`, `channel_messages`,
    /// `list_members`), each the JSON [`Client::call_operation`] gives, under
    /// [`Pages`]' rules. `params` are the operation's JSON params: `limit` is
    /// the page size (default [`DEFAULT_ITER_PAGE_SIZE`]), `skip` where to
    /// start (default 0). An operation that does not page is a validation
    /// error, and so is `params` that is not an object (nothing is sent).
    pub fn operation_pages(
        &self,
        operation: crate::wire::Operation,
        params: &serde_json::Value,
    ) -> Result<Pages<JsonPage>> {
        let invalid = |message: String| crate::Error::validation(message);
        let spec = operation
            .spec()
            .filter(|spec| !spec.items_field.is_empty())
            .ok_or_else(|| invalid(format!("{} is not a listing that pages", operation.name())))?;
        let params = match params {
            serde_json::Value::Null => serde_json::Map::new(),
            serde_json::Value::Object(map) => map.clone(),
            _ => return Err(invalid("params must be a JSON object".to_owned())),
        };
        let number = |name: &str, default: u64| match params.get(name) {
            None | Some(serde_json::Value::Null) => Ok(default),
            Some(value) => value
                .as_u64()
                .ok_or_else(|| invalid(format!("{name} must be a whole number, not {value}"))),
        };
        let page_size = number("limit", DEFAULT_ITER_PAGE_SIZE)?;
        let skip = number("skip", 0)?;
        let items_field = spec.items_field;
        Ok(Pages::new(
            self.clone(),
            page_size,
            skip,
            move |client, limit, skip| {
                let mut params = params.clone();
                params.insert("limit".to_owned(), limit.into());
                params.insert("skip".to_owned(), skip.into());
                let value = client.call_operation(operation, &serde_json::Value::Object(params))?;
                Ok(JsonPage { value, items_field })
            },
        ))
    }
}
