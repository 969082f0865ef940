//! Lazy iteration over the users listing.

use std::collections::{HashSet, VecDeque};

use crate::cancel::CancelToken;
use crate::error::Result;
use crate::send::client::Client;
use crate::wire::models::{ListUsers, User, UserPage, MAX_PAGE_SIZE};

// The listing's iterators, made by the client (here, so that the client does
// not reach up into this layer).
impl Client {
    /// Every user, fetched lazily page by page (200 a page). See [`Users`].
    ///
    /// ```
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).chat_url(emu.chat_url()).public_key(emu.public_key()).build()?;
    /// # emu.seed_users(450);
    /// let names: Vec<String> = client.users().map(|u| u.map(|u| u.username.unwrap_or_default())).collect::<Result<_, _>>()?;
    /// assert_eq!(names.len(), 450);
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn users(&self) -> Users {
        Users::new(self.clone(), MAX_PAGE_SIZE)
    }

    /// Every user, fetched lazily `page_size` at a time (1 to 200).
    pub fn users_with_page_size(&self, page_size: u32) -> Users {
        Users::new(self.clone(), page_size)
    }

    /// The users listing page by page, `page_size` at a time (1 to 200). See [`UserPages`].
    pub fn user_pages(&self, page_size: u32) -> UserPages {
        UserPages::new(self.clone(), page_size)
    }
}

/// The users listing page by page: made by [`Client::user_pages`].
///
/// Each `next` fetches one page (`limit` = the page size, `skip` advancing by
/// what the service returned). It ends after a page that reaches `total`, a
/// short page, or an empty page, and never because of an error: an error
/// (a timeout, a cancel, a 5xx, a lost connection) is yielded as an `Err` item
/// and the next `next` fetches the same page again. A loop that goes on after
/// an error bounds its own retries: some errors (a revoked key) come back
/// every time. The one exception is a page size out of 1 to 200: its
/// validation error, which no retry can mend, is yielded once, then the
/// iterator ends.
#[derive(Debug)]
pub struct UserPages {
    client: Client,
    page_size: u32,
    skip: u64,
    done: bool,
}

impl UserPages {
    pub(crate) fn new(client: Client, page_size: u32) -> UserPages {
        UserPages {
            client,
            page_size,
            skip: 0,
            done: false,
        }
    }

    /// The offset of the next page to fetch.
    pub fn next_skip(&self) -> u64 {
        self.skip
    }

    /// The next page as `next` fetches it, this step's calls cancelled by
    /// `token` (in place of the client's own token, if any). A cancelled step
    /// yields [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) and
    /// cancels nothing else: the next step fetches the same page again.
    pub fn next_with_cancel(&mut self, token: &CancelToken) -> Option<Result<UserPage>> {
        self.step(Some(token))
    }

    fn step(&mut self, cancel: Option<&CancelToken>) -> Option<Result<UserPage>> {
        if self.done {
            return None;
        }
        let params = ListUsers::page(self.page_size, self.skip);
        let fetched = match cancel {
            Some(token) => self.client.with_cancel(token.clone()).list_users(&params),
            None => self.client.list_users(&params),
        };
        // After an error `skip` stays: the next step asks for the same page. A
        // validation error (a page size out of 1..=200: nothing was sent) would
        // come back at every step, so a `.flatten()` would spin for ever: it
        // ends the iteration once it has been yielded.
        let page = match fetched {
            Ok(page) => page,
            Err(e) => {
                self.done = e.kind() == crate::error::ErrorKind::Validation;
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

impl Iterator for UserPages {
    type Item = Result<UserPage>;

    fn next(&mut self) -> Option<Result<UserPage>> {
        self.step(None)
    }
}

impl std::iter::FusedIterator for UserPages {}

/// Every user, fetched lazily: made by [`Client::users`].
///
/// Users added or removed while it runs shift the offsets of later pages; the
/// iterator never yields one user id twice (it remembers the ids it yielded),
/// and it always ends, never because of an error: an error is yielded as an
/// `Err` item and the next `next` fetches the page that failed again (see
/// [`UserPages`]).
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

    /// The next user as `next` gives it, a page fetched in this step cancelled
    /// by `token` (see [`UserPages::next_with_cancel`]).
    pub fn next_with_cancel(&mut self, token: &CancelToken) -> Option<Result<User>> {
        self.step(Some(token))
    }

    fn step(&mut self, cancel: Option<&CancelToken>) -> Option<Result<User>> {
        loop {
            if let Some(user) = self.buffered.pop_front() {
                return Some(Ok(user));
            }
            match self.pages.step(cancel)? {
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

impl Iterator for Users {
    type Item = Result<User>;

    fn next(&mut self) -> Option<Result<User>> {
        self.step(None)
    }
}
