//! Admission queues: one per pool+kind with work waiting. Requests that
//! arrive while the kind's previous batch is in its transaction are decided
//! together in the next one — group commit for bookings. Under load this
//! turns N lock waits, reads and inserts into one of each; without load a
//! batch is a single request. Several server replicas stay correct because
//! each batch still takes the kind's advisory lock.

use super::admit::{admit_batch, Admission, Outcome, Request};
use crate::backend::error::{ServiceError, ServiceResult};
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

/// Most requests decided in one transaction; bounds how long the lock is held.
const MAX_BATCH: usize = 64;
/// A queue with no work for this long ends its task.
const IDLE: Duration = Duration::from_secs(30);

type Key = (Uuid, String);

struct Job {
    request: Request,
    reply: oneshot::Sender<ServiceResult<Admission>>,
}

#[derive(Clone)]
pub struct Admissions {
    db: PgPool,
    queues: Arc<Mutex<HashMap<Key, mpsc::UnboundedSender<Job>>>>,
}

impl Admissions {
    pub fn new(db: PgPool) -> Self {
        Self { db, queues: Arc::default() }
    }

    /// Queues the request behind its pool+kind and waits for its verdict.
    pub async fn submit(&self, request: Request) -> ServiceResult<Admission> {
        let (reply, verdict) = oneshot::channel();
        let key = (request.pool_id, request.kind.clone());
        let job = Job { request, reply };
        {
            let mut queues = self.queues.lock().map_err(|_| ServiceError::Internal("admission queues poisoned"))?;
            // A queue whose task has ended hands the job back; start a new one.
            let unsent = match queues.get(&key) {
                Some(queue) => queue.send(job).err().map(|returned| returned.0),
                None => Some(job),
            };
            if let Some(job) = unsent {
                let (queue, jobs) = mpsc::unbounded_channel();
                let _ = queue.send(job);
                queues.insert(key.clone(), queue);
                tokio::spawn(run_queue(self.clone(), key, jobs));
            }
        }
        verdict.await.unwrap_or(Err(ServiceError::Internal("admission task ended")))
    }
}

async fn run_queue(admissions: Admissions, key: Key, mut jobs: mpsc::UnboundedReceiver<Job>) {
    loop {
        let first = match tokio::time::timeout(IDLE, jobs.recv()).await {
            Ok(Some(job)) => job,
            _ => {
                // Retire under the map's lock, so no job can be sent to a queue
                // that nobody reads any more.
                let Ok(mut queues) = admissions.queues.lock() else { return };
                match jobs.try_recv() {
                    Ok(job) => job,
                    Err(_) => {
                        queues.remove(&key);
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
        let requests: Vec<&Request> = batch.iter().map(|job| &job.request).collect();
        match admit_batch(&admissions.db, &requests).await {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    match outcome {
                        Outcome::Decided(verdict) => {
                            let _ = job.reply.send(verdict);
                        }
                        Outcome::Crowded(crowded) => {
                            let db = admissions.db.clone();
                            tokio::spawn(async move {
                                let _ = job.reply.send(Err(crowded.refusal(&db, &job.request).await));
                            });
                        }
                    }
                }
            }
            Err(err) => {
                // An outage is the same answer for everyone in the batch; any
                // other failure is logged once and hidden.
                let unavailable = matches!(err, ServiceError::Unavailable);
                if !unavailable {
                    tracing::error!(error = %err.public_message(), size = batch.len(), "admission batch failed");
                }
                for job in batch {
                    let answer = if unavailable {
                        ServiceError::Unavailable
                    } else {
                        ServiceError::Internal("admission batch failed")
                    };
                    let _ = job.reply.send(Err(answer));
                }
            }
        }
    }
}
