//! The iterators of the listings that page by `limit`/`skip` (a room's or a
//! channel's messages, a room's members): `Client.iter_<name>()` (every record) and
//! `Client.<name>_pages()` (every page), made by the generated methods
//! (`operations.rs`) over core's generic iterators ([`roomchat::PageItems`],
//! [`roomchat::Pages`]), which own the loop: page size, `skip`, where it ends, an
//! error that never ends it. Here they are only translated: each step runs with the
//! GIL released (or on `AsyncClient`'s dispatcher, with its own cancel token), and
//! its records become `roomchat._records` objects on the thread that holds the GIL.

use std::collections::VecDeque;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;
use roomchat::{CancelToken as CoreToken, Page};
use serde::Serialize;
use serde_json::Value;

use crate::client::{run_or_submit, IterLock};
use crate::declared::wrap_record;
use crate::errors::to_py;
use crate::logging;

/// A record (or page) in its wire form, for `Record._from_wire`.
fn wire<T: Serialize>(value: T) -> roomchat::Result<Value> {
    serde_json::to_value(value).map_err(|e| {
        roomchat::Error::new(
            roomchat::ErrorKind::Decode,
            format!("a record could not be read back: {e}"),
        )
    })
}

/// Core's record iterator, whatever its page record.
pub(crate) trait ItemSource: Send {
    fn next_item(&mut self) -> Option<roomchat::Result<Value>>;
    /// The rest of the current page, or the next page's records.
    fn next_batch(&mut self, cancel: Option<&CoreToken>) -> Option<roomchat::Result<Vec<Value>>>;
    fn next_skip(&self) -> u64;
}

impl<P> ItemSource for roomchat::PageItems<P>
where
    P: Page + Send,
    P::Item: Serialize + Send,
{
    fn next_item(&mut self) -> Option<roomchat::Result<Value>> {
        Some(self.next()?.and_then(wire))
    }

    fn next_batch(&mut self, cancel: Option<&CoreToken>) -> Option<roomchat::Result<Vec<Value>>> {
        let batch = roomchat::PageItems::next_batch(self, cancel)?;
        Some(batch.and_then(|items| items.into_iter().map(wire).collect()))
    }

    fn next_skip(&self) -> u64 {
        roomchat::PageItems::next_skip(self)
    }
}

/// Core's page iterator, whatever its page record.
pub(crate) trait PageSource: Send {
    fn next_page(&mut self, cancel: Option<&CoreToken>) -> Option<roomchat::Result<Value>>;
    fn next_skip(&self) -> u64;
}

impl<P> PageSource for roomchat::Pages<P>
where
    P: Page + Serialize + Send,
{
    fn next_page(&mut self, cancel: Option<&CoreToken>) -> Option<roomchat::Result<Value>> {
        let page = match cancel {
            Some(token) => self.next_with_cancel(token),
            None => roomchat::Pages::next_page(self),
        }?;
        Some(page.and_then(wire))
    }

    fn next_skip(&self) -> u64 {
        roomchat::Pages::next_skip(self)
    }
}

fn wrap_batch(py: Python<'_>, (items, record): (Vec<Value>, &'static str)) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for item in items {
        list.append(wrap_record(py, (item, record))?)?;
    }
    Ok(list.into_any().unbind())
}

fn wrap_next(py: Python<'_>, (page, record): (Option<Value>, &'static str)) -> PyResult<Py<PyAny>> {
    match page {
        Some(page) => wrap_record(py, (page, record)),
        None => Ok(py.None()),
    }
}

/// Every record of a listing, fetched lazily page by page (`Client.iter_room_messages()`,
/// …). An error never ends it: the step raises, and the next step fetches the same page
/// again. `next_skip` is where a new iterator (`skip=`) would go on after a stop. Memory
/// stays one page: no record of what was yielded is kept.
///
/// The state is locked only with the GIL released, as `UserIterator`'s is.
#[pyclass(frozen, module = "roomchat")]
pub struct RecordIterator {
    state: Arc<IterLock<Items>>,
    record: &'static str,
}

impl RecordIterator {
    pub(crate) fn new(items: impl ItemSource + 'static, record: &'static str) -> RecordIterator {
        RecordIterator {
            state: Arc::new(IterLock::new(Items {
                source: Box::new(items),
                held: VecDeque::new(),
            })),
            record,
        }
    }
}

/// A record iterator's source, and the records a step fetched when a signal's handler
/// (or a telemetry hook's `KeyboardInterrupt`, `SystemExit`) interrupted it (see
/// [`crate::telemetry::interrupted`], asked under the lock): the next steps yield them
/// first, so none is lost and none is fetched twice.
struct Items {
    source: Box<dyn ItemSource>,
    held: VecDeque<Value>,
}

impl Items {
    fn next_item(&mut self) -> Option<roomchat::Result<Value>> {
        let next = match self.held.pop_front() {
            Some(item) => Some(Ok(item)),
            None => self.source.next_item(),
        };
        match next {
            Some(Ok(item)) if crate::telemetry::interrupted() => {
                self.held.push_front(item);
                None
            }
            next => next,
        }
    }

    fn next_batch(&mut self, cancel: Option<&CoreToken>) -> Option<roomchat::Result<Vec<Value>>> {
        let batch = if self.held.is_empty() {
            self.source.next_batch(cancel)
        } else {
            Some(Ok(self.held.drain(..).collect()))
        };
        match batch {
            Some(Ok(items)) if crate::telemetry::interrupted() => {
                for item in items.into_iter().rev() {
                    self.held.push_front(item);
                }
                None
            }
            batch => batch,
        }
    }

    fn next_skip(&self) -> u64 {
        self.source.next_skip() - self.held.len() as u64
    }
}

#[pymethods]
impl RecordIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        logging::refresh(py);
        self.state.check_not_forked_mid_fetch()?;
        let state = self.state.clone();
        // A page fetched now belongs to the context `next()` is called in.
        // The iterator's client may carry the application's token: none of ours.
        let captured =
            crate::telemetry::Captured::now(py, crate::logging::current() != 0).without_token();
        // Interrupted: the exception is the caller's, the record fetched the next step's.
        let next = crate::exiting::detach(py, move || captured.run(|| state.lock().next_item()))
            .into_result()?;
        match next {
            None => Ok(None),
            Some(Ok(item)) => Ok(Some(wrap_record(py, (item, self.record))?)),
            Some(Err(e)) => Err(to_py(py, &e)),
        }
    }

    /// The offset of the next record to yield: pass it as `skip=` to a new iterator to go
    /// on after a stop.
    #[getter]
    fn next_skip(&self, py: Python<'_>) -> PyResult<u64> {
        self.state.check_not_forked_mid_fetch()?;
        let state = self.state.clone();
        Ok(crate::exiting::detach(py, move || state.lock().next_skip()))
    }

    /// The rest of the current page, or the next page's records (an empty list at the
    /// end): `AsyncClient` takes a page per hop, each with its own token.
    #[pyo3(signature = (*, _submit=None))]
    fn _next_batch(
        &self,
        py: Python<'_>,
        _submit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        logging::refresh(py);
        self.state.check_not_forked_mid_fetch()?;
        let state = self.state.clone();
        let record = self.record;
        run_or_submit(
            py,
            _submit,
            false,
            |token| {
                move || {
                    let batch = state.lock().next_batch(token.as_ref());
                    batch.unwrap_or(Ok(Vec::new())).map(|items| (items, record))
                }
            },
            wrap_batch,
        )
    }
}

/// A listing page by page (`Client.room_messages_pages()`, …). An error never ends it:
/// the step raises, and the next step fetches the same page again. Locked as
/// `RecordIterator` is.
#[pyclass(frozen, module = "roomchat")]
pub struct RecordPageIterator {
    pages: Arc<IterLock<PagesState>>,
    record: &'static str,
}

/// A page iterator's source, and the page a step fetched when a signal's handler (or a
/// telemetry hook's `KeyboardInterrupt`, `SystemExit`) interrupted it, with the offset
/// it was fetched at: the next step yields it, so none is lost and none is fetched
/// twice, and `next_skip` is its offset meanwhile.
struct PagesState {
    source: Box<dyn PageSource>,
    held: Option<(Value, u64)>,
}

impl PagesState {
    fn next_page(&mut self, cancel: Option<&CoreToken>) -> Option<roomchat::Result<Value>> {
        let (next, skip) = match self.held.take() {
            Some((page, skip)) => (Some(Ok(page)), skip),
            None => {
                let skip = self.source.next_skip();
                (self.source.next_page(cancel), skip)
            }
        };
        match next {
            Some(Ok(page)) if crate::telemetry::interrupted() => {
                self.held = Some((page, skip));
                None
            }
            next => next,
        }
    }

    fn next_skip(&self) -> u64 {
        match &self.held {
            Some((_, skip)) => *skip,
            None => self.source.next_skip(),
        }
    }
}

impl RecordPageIterator {
    pub(crate) fn new(
        pages: impl PageSource + 'static,
        record: &'static str,
    ) -> RecordPageIterator {
        RecordPageIterator {
            pages: Arc::new(IterLock::new(PagesState {
                source: Box::new(pages),
                held: None,
            })),
            record,
        }
    }
}

#[pymethods]
impl RecordPageIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let page = self._next_page(py, None)?;
        Ok((!page.is_none(py)).then_some(page))
    }

    /// The offset of the next page to fetch: pass it as `skip=` to a new iterator to go
    /// on after a stop.
    #[getter]
    fn next_skip(&self, py: Python<'_>) -> PyResult<u64> {
        self.pages.check_not_forked_mid_fetch()?;
        let pages = self.pages.clone();
        Ok(crate::exiting::detach(py, move || pages.lock().next_skip()))
    }

    /// The next page, or `None` at the end; fetched with `_submit`'s token, if any, as
    /// this step's only.
    #[pyo3(signature = (*, _submit=None))]
    fn _next_page(
        &self,
        py: Python<'_>,
        _submit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        logging::refresh(py);
        self.pages.check_not_forked_mid_fetch()?;
        let pages = self.pages.clone();
        let record = self.record;
        run_or_submit(
            py,
            _submit,
            false,
            |token| {
                move || {
                    let page = pages.lock().next_page(token.as_ref());
                    page.transpose().map(|page| (page, record))
                }
            },
            wrap_next,
        )
    }
}

/// `page_size=`: 1 to the listing's declared most (else any), 200 when not given.
pub(crate) fn page_size(value: Option<&Bound<'_, PyAny>>, max: Option<u64>) -> PyResult<u64> {
    match value {
        Some(v) => {
            Ok(crate::convert::whole("page_size", v, 1, max.unwrap_or(u64::MAX).into())? as u64)
        }
        None => Ok(roomchat::DEFAULT_ITER_PAGE_SIZE.min(max.unwrap_or(u64::MAX))),
    }
}

/// `skip=`: 0 or more, 0 when not given.
pub(crate) fn skip(value: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    match value {
        Some(v) => Ok(crate::convert::whole("skip", v, 0, u64::MAX.into())? as u64),
        None => Ok(0),
    }
}
