//! Batches that wait for SQLite's one write connection at the same time commit together.
//!
//! Every transaction writes each page it changes to the WAL once more, and concurrent
//! batches change mostly the same pages: the last leaf of each table and of each index on a
//! time-ordered key (a 3-node workflow call writes ~39 pages a call over two transactions).
//! So a task of its own takes the batches in arrival order and, when several have queued
//! while the one before ran, writes them in one transaction: each still runs as the query
//! it is alone (its statement cached by the connection), between one `BEGIN IMMEDIATE` and
//! one `COMMIT`. Measured on the calls bench's WAL (strace of the frames each commit wrote):
//! the pages of 4 consecutive transactions were 0.44 of their sum, of 8 0.31.
//!
//! Each batch keeps its own outcome: if anything in a group fails, the group is rolled back
//! and its batches run again one transaction each, so one failing batch fails alone. A batch
//! still queued when its turn's limit ([`WAIT_FOR_TURN`]) has passed is not run and answers
//! busy (503), as before. Once queued a batch runs even if its writer stops waiting (a
//! request whose client went away): it is whole or absent either way.

use super::batch::{bind_all, Batch};
use super::single_writer::{run_at_once, take_turn, SingleWriter, WAIT_FOR_TURN};
use super::RecordError;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio::time::Instant;

/// Batches one transaction holds at most.
const MAX_GROUP: usize = 32;

/// Where batches queue for the write connection.
#[derive(Clone)]
pub(crate) struct Committer {
    queue: mpsc::UnboundedSender<Queued>,
}

struct Queued {
    batch: Batch<'static>,
    /// Not run after this (it answers busy).
    deadline: Instant,
    done: oneshot::Sender<Result<(), RecordError>>,
}

impl Committer {
    /// Starts the task that commits what queues, on `single`; it ends with the last clone.
    pub(crate) fn spawn(single: Arc<Mutex<SingleWriter>>) -> Self {
        let (queue, arrivals) = mpsc::unbounded_channel();
        tokio::spawn(commit_in_groups(single, arrivals));
        Self { queue }
    }

    /// Runs `batch` as one transaction, alone or with others queued beside it.
    pub(crate) async fn run(&self, batch: &Batch<'_>) -> Result<(), RecordError> {
        let (done, outcome) = oneshot::channel();
        let queued = Queued { batch: batch.to_owned(), deadline: Instant::now() + WAIT_FOR_TURN, done };
        self.queue.send(queued).map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

fn stopped() -> RecordError {
    RecordError::Unavailable("the record store's writer has stopped".into())
}

fn busy() -> RecordError {
    RecordError::Query(sqlx::Error::PoolTimedOut)
}

async fn commit_in_groups(single: Arc<Mutex<SingleWriter>>, mut arrivals: mpsc::UnboundedReceiver<Queued>) {
    while let Some(first) = arrivals.recv().await {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match arrivals.try_recv() {
                Ok(queued) => group.push(queued),
                Err(_) => break,
            }
        }
        let mut writer = match take_turn(&single).await {
            Ok(writer) => writer,
            Err(err) => {
                tracing::warn!(error = %err, "no turn on the write connection");
                group.into_iter().for_each(|queued| answer(queued, Err(busy())));
                continue;
            }
        };
        let now = Instant::now();
        let (group, late): (Vec<_>, Vec<_>) = group.into_iter().partition(|queued| queued.deadline > now);
        late.into_iter().for_each(|queued| answer(queued, Err(busy())));
        if group.len() <= 1 {
            for queued in group {
                let outcome = run_at_once(&mut writer, &queued.batch).await;
                answer(queued, outcome);
            }
            continue;
        }
        let batches: Vec<&Batch<'static>> = group.iter().map(|queued| &queued.batch).collect();
        match run_together(&mut writer, &batches).await {
            Ok(()) => group.into_iter().for_each(|queued| answer(queued, Ok(()))),
            Err(err) => {
                tracing::debug!(error = %err, batches = group.len(), "a group failed; its batches run alone");
                for queued in group {
                    let outcome = run_at_once(&mut writer, &queued.batch).await;
                    answer(queued, outcome);
                }
            }
        }
    }
}

fn answer(queued: Queued, outcome: Result<(), RecordError>) {
    // Its writer may have stopped waiting.
    let _ = queued.done.send(outcome);
}

/// Every batch of `batches` in one transaction; on an error it is rolled back.
async fn run_together(writer: &mut SingleWriter, batches: &[&Batch<'static>]) -> Result<(), RecordError> {
    writer.open = true;
    let mut outcome = sqlx::query("BEGIN IMMEDIATE").execute(&mut writer.conn).await.map(|_| ());
    for batch in batches {
        if outcome.is_err() {
            break;
        }
        let (sql, args) = batch.joined();
        outcome = bind_all(sqlx::query(&sql), &args).execute(&mut writer.conn).await.map(|_| ());
    }
    if outcome.is_ok() {
        outcome = sqlx::query("COMMIT").execute(&mut writer.conn).await.map(|_| ());
    }
    if outcome.is_err() {
        let _ = sqlx::query("ROLLBACK").execute(&mut writer.conn).await;
    }
    writer.open = false;
    Ok(outcome?)
}

#[cfg(test)]
mod tests {
    use super::super::batch::{Batch, Statement};
    use super::super::Records;
    use sqlx::Row;

    /// A batch of two inserts: `(key, 'first')` and `(key, 'second')` in table `t`, whose
    /// `key` is unique.
    fn pair(key: &str) -> Batch<'static> {
        let mut batch = Batch::default();
        for part in ["first", "second"] {
            batch.add(
                Statement::new("INSERT INTO t (key, part) VALUES ($1, $2)").arg(key.to_string()).arg(part),
            );
        }
        batch
    }

    /// Starts writing one [`pair`] per key while the write connection is held, so that they
    /// queue; releases it; returns whether each write succeeded.
    async fn queued_together(records: &Records, keys: &[&str]) -> Vec<bool> {
        let held = records.write().await.unwrap();
        let writes: Vec<_> = keys
            .iter()
            .map(|key| {
                let records = records.clone();
                let batch = pair(key);
                tokio::spawn(async move { records.write_batch(&batch).await })
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        drop(held);
        let mut outcomes = Vec::new();
        for write in writes {
            outcomes.push(write.await.unwrap().is_ok());
        }
        outcomes
    }

    async fn rows(records: &Records) -> Vec<String> {
        let rows =
            sqlx::query("SELECT key || '/' || part AS row FROM t ORDER BY row").fetch_all(&records.pool);
        rows.await.unwrap().iter().map(|row| row.get("row")).collect()
    }

    #[tokio::test]
    async fn batches_queued_together_commit_each_whole_and_a_failing_one_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let records = Records::connect(&crate::data_dir::prepare_sqlite(dir.path()).unwrap()).await.unwrap();
        let mut conn = records.write().await.unwrap();
        sqlx::query("CREATE TABLE t (key TEXT NOT NULL, part TEXT NOT NULL, UNIQUE (key, part))")
            .execute(&mut *conn)
            .await
            .unwrap();
        sqlx::query("INSERT INTO t VALUES ('taken', 'second')").execute(&mut *conn).await.unwrap();
        drop(conn);

        assert_eq!(queued_together(&records, &["a", "b"]).await, [true, true]);
        let outcomes = queued_together(&records, &["c", "taken", "d"]).await;
        assert_eq!(outcomes, [true, false, true], "only the batch that breaks the key fails");
        let expected = ["a/first", "a/second", "b/first", "b/second", "c/first", "c/second", "d/first"];
        let expected: Vec<String> =
            expected.iter().chain(&["d/second", "taken/second"]).map(|row| row.to_string()).collect();
        assert_eq!(rows(&records).await, expected, "the failing batch left not even its first insert");
    }
}
