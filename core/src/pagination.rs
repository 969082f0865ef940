//! Lazy iteration over the users listing.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::client::Client;
use crate::error::Result;
use crate::models::{ListUsers, User, UserPage, MAX_PAGE_SIZE};

/// The users listing page by page: made by [`Client::user_pages`].
///
/// Each `next` fetches one page (`limit` = the page size, `skip` advancing by
/// what the service returned). It ends after a page that reaches `total`, a
/// short page, or an empty page. An error is yielded once, and the iterator
/// then ends: call [`UserPages::resume`] to try the same page again.
#[derive(Debug)]
pub struct UserPages {
    client: Client,
    page_size: u32,
    skip: u64,
    done: bool,
    failed: bool,
    /// Set by a [`ResumeHandle`]; read at the next `next`.
    resume_requested: Arc<AtomicBool>,
}

/// Resumes an iterator after an error from another thread, without access to
/// the iterator itself (which may be in the middle of fetching a page under a
/// lock its owner holds): made by [`UserPages::resume_handle`] and
/// [`Users::resume_handle`]. A resume asked for before the error it would
/// clear is dropped when that error comes: it resumes only what has failed.
#[derive(Debug, Clone)]
pub struct ResumeHandle(Arc<AtomicBool>);

impl ResumeHandle {
    /// Lets the iterator's next step fetch the failed page again. Never blocks.
    pub fn resume(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl UserPages {
    pub(crate) fn new(client: Client, page_size: u32) -> UserPages {
        UserPages {
            client,
            page_size,
            skip: 0,
            done: false,
            failed: false,
            resume_requested: Arc::default(),
        }
    }

    /// The offset of the next page to fetch.
    pub fn next_skip(&self) -> u64 {
        self.skip
    }

    /// After an error, lets the next `next` fetch the failed page again.
    pub fn resume(&mut self) {
        if self.failed {
            self.failed = false;
            self.done = false;
        }
    }

    /// A handle that does [`resume`](Self::resume) from anywhere, without `&mut self`.
    pub fn resume_handle(&self) -> ResumeHandle {
        ResumeHandle(self.resume_requested.clone())
    }
}

impl Iterator for UserPages {
    type Item = Result<UserPage>;

    fn next(&mut self) -> Option<Result<UserPage>> {
        if self.resume_requested.swap(false, Ordering::AcqRel) {
            self.resume();
        }
        if self.done {
            return None;
        }
        let page = match self
            .client
            .list_users(&ListUsers::page(self.page_size, self.skip))
        {
            Ok(page) => page,
            Err(e) => {
                // Validation errors (a bad page size) would fail forever: yield once, then stop.
                self.done = true;
                self.failed = true;
                // A resume asked for while this page was fetched predates its error.
                self.resume_requested.store(false, Ordering::Release);
                return Some(Err(e));
            }
        };
        let got = page.data.len() as u64;
        self.skip += got;
        if got == 0 || got < u64::from(self.page_size.min(MAX_PAGE_SIZE)) || self.skip >= page.total
        {
            self.done = true;
        }
        Some(Ok(page))
    }
}

impl std::iter::FusedIterator for UserPages {}

/// Every user, fetched lazily: made by [`Client::users`].
///
/// Users added or removed while it runs shift the offsets of later pages; the
/// iterator never yields one user id twice (it remembers the ids it yielded),
/// and it always ends. An error is yielded as an `Err` item, after which the
/// iterator ends (call [`Users::resume`] to go on from where it stopped).
#[derive(Debug)]
pub struct Users {
    pages: UserPages,
    buffered: VecDeque<User>,
    seen: HashSet<String>,
}

impl Users {
    pub(crate) fn new(client: Client, page_size: u32) -> Users {
        Users {
            pages: UserPages::new(client, page_size),
            buffered: VecDeque::new(),
            seen: HashSet::new(),
        }
    }

    /// After an error, lets iteration go on with the page that failed.
    pub fn resume(&mut self) {
        self.pages.resume();
    }

    /// A handle that does [`resume`](Self::resume) from anywhere, without `&mut self`.
    pub fn resume_handle(&self) -> ResumeHandle {
        self.pages.resume_handle()
    }
}

impl Iterator for Users {
    type Item = Result<User>;

    fn next(&mut self) -> Option<Result<User>> {
        loop {
            if let Some(user) = self.buffered.pop_front() {
                return Some(Ok(user));
            }
            match self.pages.next()? {
                Err(e) => return Some(Err(e)),
                Ok(page) => {
                    for user in page.data {
                        let fresh = match user.id() {
                            Some(id) => self.seen.insert(id.to_owned()),
                            None => true,
                        };
                        if fresh {
                            self.buffered.push_back(user);
                        }
                    }
                }
            }
        }
    }
}
