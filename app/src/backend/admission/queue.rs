//! The admission queue: requests that arrive while the previous batch is in
//! its transaction are decided together in the next one, whatever pools and
//! kinds they ask for — group commit for bookings. Under load this turns
//! N lock waits, reads and inserts into one of each; without load a batch is
//! a single request. One batch is in its transaction at a time: with the
//! kinds' locks shared by nearly every batch, a second would only wait for
//! them (measured: 73 % of pgbench with two at once, 77 % with one). Batches
//! of several server replicas take turns on the locks, which keeps them
//! correct.

use crate::backend::admission::admit::{admit_locked, Admission, Outcome};
use crate::backend::admission::locks::begin_locked_all;
use crate::backend::admission::request::Request;
use crate::backend::error::{ServiceError, ServiceResult};
use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Most requests decided in one transaction; bounds how long the locks are held.
const MAX_BATCH: usize = 128;
/// A queue with no work for this long ends its task.
const IDLE: Duration = Duration::from_secs(30);

struct Job {
    request: Request,
    reply: oneshot::Sender<ServiceResult<Admission>>,
}

#[derive(Clone)]
pub struct AdmissionQueue {
    db: PgPool,
    queue: Arc<Mutex<Option<mpsc::UnboundedSender<Job>>>>,
}

impl AdmissionQueue {
    pub fn new(db: PgPool) -> Self {
        Self { db, queue: Arc::default() }
    }

    /// Queues the request and waits for its verdict.
    pub async fn submit(&self, request: Request) -> ServiceResult<Admission> {
        let (reply, verdict) = oneshot::channel();
        let job = Job { request, reply };
        {
            let mut queue = self.queue.lock().map_err(|_| ServiceError::Internal("admission queue poisoned"))?;
            // A queue whose task has ended hands the job back; start a new one.
            let unsent = match queue.as_ref() {
                Some(sender) => sender.send(job).err().map(|returned| returned.0),
                None => Some(job),
            };
            if let Some(job) = unsent {
                let (sender, jobs) = mpsc::unbounded_channel();
                let _ = sender.send(job);
                *queue = Some(sender);
                tokio::spawn(run_queue(self.clone(), jobs));
            }
        }
        verdict.await.unwrap_or(Err(ServiceError::Internal("admission task ended")))
    }
}

async fn run_queue(admissions: AdmissionQueue, mut jobs: mpsc::UnboundedReceiver<Job>) {
    loop {
        let first = match tokio::time::timeout(IDLE, jobs.recv()).await {
            Ok(Some(job)) => job,
            _ => {
                // Retire under the queue's lock, so no job can be sent to a
                // queue that nobody reads any more.
                let Ok(mut queue) = admissions.queue.lock() else { return };
                match jobs.try_recv() {
                    Ok(job) => job,
                    Err(_) => {
                        *queue = None;
                        return;
                    }
                }
            }
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        // What arrives meanwhile waits in the channel for the next batch.
        decide(&admissions.db, batch).await;
    }
}

/// Decides a batch and answers each request. If it fails for anything but
/// an outage, its kinds are decided again one at a time, so that one kind's
/// failure is not every kind's.
async fn decide(db: &PgPool, batch: Vec<Job>) {
    let requests: Vec<&Request> = batch.iter().map(|job| &job.request).collect();
    let failure = match admit_batch(db, &requests).await {
        Ok(outcomes) => return answer(db, batch, outcomes),
        Err(err) => err,
    };
    let several_kinds = requests.iter().any(|r| (r.pool_id, &r.kind) != (requests[0].pool_id, &requests[0].kind));
    if matches!(failure, ServiceError::Unavailable) || !several_kinds {
        return fail(batch, failure);
    }
    tracing::warn!(error = %failure.public_message(), size = batch.len(), "admission batch failed; deciding its kinds one at a time");
    let mut rest = batch;
    while let Some(first) = rest.first() {
        let (pool_id, kind) = (first.request.pool_id, first.request.kind.clone());
        let (same, others): (Vec<Job>, Vec<Job>) =
            rest.into_iter().partition(|job| job.request.pool_id == pool_id && job.request.kind == kind);
        rest = others;
        let requests: Vec<&Request> = same.iter().map(|job| &job.request).collect();
        match admit_batch(db, &requests).await {
            Ok(outcomes) => answer(db, same, outcomes),
            Err(err) => fail(same, err),
        }
    }
}

fn answer(db: &PgPool, batch: Vec<Job>, outcomes: Vec<Outcome>) {
    for (job, outcome) in batch.into_iter().zip(outcomes) {
        match outcome {
            Outcome::Decided(verdict) => {
                let _ = job.reply.send(verdict);
            }
            // `admit_batch` has joined every request that waits.
            Outcome::Waits(_) => {
                let _ = job.reply.send(Err(ServiceError::Internal("waitlist entry not joined")));
            }
            Outcome::Crowded(crowded) => {
                let db = db.clone();
                tokio::spawn(async move {
                    let _ = job.reply.send(Err(crowded.refusal(&db, (&job.request).into()).await));
                });
            }
        }
    }
}

/// An outage is the same answer for everyone in the batch; any other
/// failure is logged once and hidden.
fn fail(batch: Vec<Job>, err: ServiceError) {
    let unavailable = matches!(err, ServiceError::Unavailable);
    if !unavailable {
        tracing::error!(error = %err.public_message(), size = batch.len(), "admission batch failed");
    }
    for job in batch {
        let answer =
            if unavailable { ServiceError::Unavailable } else { ServiceError::Internal("admission batch failed") };
        let _ = job.reply.send(Err(answer));
    }
}

/// Decides and records every request of the batch in one transaction,
/// whatever pools and kinds they ask for, and puts those refused that asked
/// to wait on the waitlist in it (so no capacity frees unseen in between).
/// The outer error is a failure of the whole batch.
pub async fn admit_batch(db: &PgPool, requests: &[&Request]) -> ServiceResult<Vec<Outcome>> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let kinds: Vec<(uuid::Uuid, &str)> = requests.iter().map(|r| (r.pool_id, r.kind.as_str())).collect();
    // Round trips matter here: the kinds' locks are held from the first to the last.
    let decided = async {
        let mut tx = begin_locked_all(db, &kinds).await?;
        let outcomes = admit_locked(&mut tx, requests).await?;
        let outcomes = join_waitlists(&mut tx, requests, outcomes).await?;
        tx.commit().await?;
        Ok(outcomes)
    }
    .await;
    count(requests.len(), &decided);
    decided
}

/// Admission decisions by outcome, and batch sizes, for `/metrics`.
fn count(batch: usize, decided: &ServiceResult<Vec<Outcome>>) {
    metrics::histogram!("berth_admission_batch_size").record(batch as f64);
    let Ok(outcomes) = decided else {
        metrics::counter!("berth_admission_decisions_total", "outcome" => "error").increment(batch as u64);
        return;
    };
    for outcome in outcomes {
        let label = match outcome {
            Outcome::Decided(Ok(Admission::Booked(_))) => "booked",
            Outcome::Decided(Ok(Admission::Waitlisted(_))) | Outcome::Waits(_) => "waitlisted",
            Outcome::Crowded(_) => "refused_capacity",
            Outcome::Decided(Err(ServiceError::QuotaExceeded(_))) => "refused_quota",
            Outcome::Decided(Err(_)) => "refused_other",
        };
        metrics::counter!("berth_admission_decisions_total", "outcome" => label).increment(1);
    }
}

/// The decided batch with a waitlist entry for each request that waits,
/// joined one pool+kind at a time (each list keeps its own order).
async fn join_waitlists(
    tx: &mut PgConnection,
    requests: &[&Request],
    outcomes: Vec<Outcome>,
) -> ServiceResult<Vec<Outcome>> {
    let mut waiting: Vec<(uuid::Uuid, &Request)> = (outcomes.iter().zip(requests))
        .filter_map(|(o, r)| match o {
            Outcome::Waits(id) => Some((*id, *r)),
            _ => None,
        })
        .collect();
    if waiting.is_empty() {
        return Ok(outcomes);
    }
    let mut entries = HashMap::new();
    while let Some(&(_, first)) = waiting.first() {
        let (same, rest): (Vec<_>, Vec<_>) =
            waiting.into_iter().partition(|(_, r)| r.pool_id == first.pool_id && r.kind == first.kind);
        entries.extend(crate::backend::waitlist::entries::join(tx, &same).await?);
        waiting = rest;
    }
    Ok(outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Outcome::Waits(id) => Outcome::Decided(match entries.remove(&id) {
                Some(joined) => joined.map(Admission::Waitlisted),
                None => Err(ServiceError::Internal("waitlist entry not read back")),
            }),
            decided => decided,
        })
        .collect())
}
