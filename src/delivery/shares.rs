//! Each account's share of a delivery worker: at most [`SENDS_PER_ACCOUNT`] of its sends in
//! flight and [`HELD_PER_ACCOUNT`] of its deliveries held, so one tenant's backlog or slow
//! receivers leave slots, and room to claim, for every other tenant's deliveries.
//!
//! A claim adds at most [`HELD_PER_ACCOUNT`] rows, and an account holding its share is
//! skipped by the next claims: one account holds fewer than twice its share, half of what a
//! worker holds. The skipping claim walks past the skipped accounts' due rows (a backlog of
//! 40,000 rows took SQLite 5–10 ms), so after one that found nothing the worker rests before the
//! next: [`SKIPPING_CLAIM_REST`] at first, twice as long after each further one that found
//! nothing, up to [`SKIPPING_CLAIM_REST_MAX`]. Claims that skip nobody in between do not end
//! the rest: they say nothing about other accounts' rows. (Ending it had a lone flooding
//! account's worker walk its whole backlog every few turns: `make bench-delivery` spent ~5 µs
//! of SQLite's time a delivery on those walks.)

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Sends in flight at once per process (one account has [`SENDS_PER_ACCOUNT`] of them).
pub const IN_FLIGHT: usize = 128;
/// Deliveries a process holds at once: sending, waiting for a send slot, or sent and not yet
/// recorded. Each turn of the worker's loop records what finished and claims as many rows as
/// are free here, in one transaction, so a turn's cost is shared by many deliveries. A turn
/// (its gathering wait and its SQL) lasts ~4 ms under load, and one account's 64 sends drain
/// ~90 rows a millisecond from a local receiver, so an account needs ~400 rows in hand to
/// keep its sends busy from one claim to the next: with 256 (holding 8× the sends) its rows
/// ran out before each claim (measured: 41 held when a claim came, ~28 sends in flight of 64
/// on average, `make bench-delivery` 0.63–0.65 of the plain client; 0.82–0.87 holding 16×).
/// The held bodies are also bounded in bytes ([`HELD_BYTES`]).
pub const HELD: usize = 16 * IN_FLIGHT;
/// Sends of one account in flight at once.
pub const SENDS_PER_ACCOUNT: usize = IN_FLIGHT / 2;
/// Deliveries of one account a worker holds (sending or waiting for a send slot) before it
/// stops claiming that account's rows.
pub const HELD_PER_ACCOUNT: usize = HELD / 4;
/// Bytes of event bodies a process holds before it stops claiming (until sends bring it
/// under): a claim may go past it by one claim's bodies, at most [`HELD_PER_ACCOUNT`] of them.
pub const HELD_BYTES: usize = 64 * 1024 * 1024;
/// How soon a claim that skips accounts runs again after one that found nothing.
const SKIPPING_CLAIM_REST: Duration = Duration::from_millis(100);
/// The longest rest after skipping claims that kept finding nothing: how long another
/// account's delivery may wait for a claim while one account holds its share. Kept short (a
/// quiet tenant beside a flooding one waits this long at worst); 1.6 s walked the backlog
/// less often still, but a tenant's delivery waiting over a second is what fairness is for.
const SKIPPING_CLAIM_REST_MAX: Duration = Duration::from_millis(400);

/// What one account holds.
struct Share {
    held: usize,
    sends: Arc<Semaphore>,
}

#[derive(Default)]
pub struct Shares {
    accounts: HashMap<String, Share>,
    last_empty_skipping_claim: Option<Instant>,
    /// Skipping claims in a row that found nothing.
    empty_skipping_claims: u32,
}

impl Shares {
    /// Holds a delivery of `account`; returns the account's send permits to send it under.
    pub fn hold(&mut self, account: &str) -> Arc<Semaphore> {
        let share = match self.accounts.get_mut(account) {
            Some(share) => share,
            None => self
                .accounts
                .entry(account.to_string())
                .or_insert_with(|| Share { held: 0, sends: Arc::new(Semaphore::new(SENDS_PER_ACCOUNT)) }),
        };
        share.held += 1;
        share.sends.clone()
    }

    /// A held delivery of `account` ended its attempt: the account holds one fewer (and
    /// nothing, once none).
    pub fn release(&mut self, account: &str) {
        if let Some(share) = self.accounts.get_mut(account) {
            share.held = share.held.saturating_sub(1);
            if share.held == 0 {
                self.accounts.remove(account);
            }
        }
    }

    /// The accounts the next claim skips, and how many rows it may take of `free`: none
    /// while a claim skipping accounts found nothing a moment ago, or while the held bodies
    /// weigh [`HELD_BYTES`] or more.
    pub fn next_claim(&self, free: usize, held_bytes: usize) -> (Vec<String>, usize) {
        let skip: Vec<String> = self
            .accounts
            .iter()
            .filter(|(_, share)| share.held >= HELD_PER_ACCOUNT)
            .map(|(account, _)| account.clone())
            .collect();
        let resting =
            !skip.is_empty() && self.last_empty_skipping_claim.is_some_and(|at| at.elapsed() < self.rest());
        let limit = if resting || held_bytes >= HELD_BYTES { 0 } else { free.min(HELD_PER_ACCOUNT) };
        (skip, limit)
    }

    /// How long skipping claims rest after the last that found nothing.
    fn rest(&self) -> Duration {
        let doublings = self.empty_skipping_claims.saturating_sub(1).min(16);
        (SKIPPING_CLAIM_REST * 2u32.pow(doublings)).min(SKIPPING_CLAIM_REST_MAX)
    }

    /// Notes how a claim went (one that skipped accounts and found nothing rests a while).
    pub fn claimed(&mut self, skipped: bool, found: usize) {
        match (skipped, found) {
            (false, _) => {}
            (true, 0) => {
                self.empty_skipping_claims += 1;
                self.last_empty_skipping_claim = Some(Instant::now());
            }
            (true, _) => {
                self.empty_skipping_claims = 0;
                self.last_empty_skipping_claim = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_holding_its_share_is_skipped_until_one_of_its_deliveries_ends() {
        let mut shares = Shares::default();
        for _ in 0..HELD_PER_ACCOUNT {
            shares.hold("flooding");
        }
        shares.hold("quiet");
        assert_eq!(shares.next_claim(HELD, 0).0, vec!["flooding".to_string()]);
        assert_eq!(shares.next_claim(HELD, 0).1, HELD_PER_ACCOUNT, "one claim adds at most a share");
        shares.release("flooding");
        assert!(shares.next_claim(HELD, 0).0.is_empty());
        shares.release("quiet");
        assert_eq!(shares.accounts.len(), 1, "an account holding nothing is forgotten");
    }

    #[test]
    fn a_skipping_claim_that_found_nothing_rests_before_the_next() {
        let mut shares = Shares::default();
        for _ in 0..HELD_PER_ACCOUNT {
            shares.hold("flooding");
        }
        shares.claimed(true, 0);
        assert_eq!(shares.next_claim(HELD, 0).1, 0);
        shares.claimed(false, 5);
        assert_eq!(shares.next_claim(HELD, 0).1, 0, "a claim skipping nobody does not end the rest");
        shares.claimed(true, 3);
        assert_eq!(shares.next_claim(HELD, 0).1, HELD_PER_ACCOUNT);
    }

    #[test]
    fn skipping_claims_that_keep_finding_nothing_rest_longer_up_to_a_limit() {
        let mut shares = Shares::default();
        let rests: Vec<Duration> = (0..8)
            .map(|_| {
                shares.claimed(true, 0);
                shares.rest()
            })
            .collect();
        assert_eq!(rests[0], SKIPPING_CLAIM_REST);
        assert_eq!(rests[1], 2 * SKIPPING_CLAIM_REST);
        assert_eq!(rests[7], SKIPPING_CLAIM_REST_MAX);
        shares.claimed(true, 1);
        shares.claimed(true, 0);
        assert_eq!(shares.rest(), SKIPPING_CLAIM_REST, "one that found rows starts over");
    }

    #[test]
    fn nothing_is_claimed_while_the_held_bodies_weigh_the_budget() {
        let shares = Shares::default();
        assert_eq!(shares.next_claim(HELD, HELD_BYTES - 1).1, HELD_PER_ACCOUNT);
        assert_eq!(shares.next_claim(HELD, HELD_BYTES).1, 0);
        assert_eq!(shares.next_claim(3, 0).1, 3, "never more than are free");
    }
}
