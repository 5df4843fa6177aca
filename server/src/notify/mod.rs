//! Notifications: the leading worker turns the outbox into mail and webhook
//! calls. Each round adds the timed events (window starts or ends in 15
//! min), fans new events out into deliveries and sends the due ones, each
//! marked delivered on success or retried later with a growing pause. A
//! worker that dies between sending and marking sends that delivery again
//! (same id, same `X-Berth-Delivery`) once its claim expires: at least
//! once, recognisably duplicated, never lost.

pub mod email;
pub mod message;
pub mod outbox;
pub mod webhook;

use outbox::Due;
use sqlx::PgPool;
use std::time::Duration;

/// How often a round runs: a notification waits at most this long.
const ROUND: Duration = Duration::from_secs(2);
/// Deliveries sent per round.
const BATCH: i64 = 50;

#[derive(Clone)]
pub struct Notifier {
    pub mail: Option<email::Mail>,
    pub webhooks: webhook::Webhooks,
    /// The portal's address, for the links in messages.
    pub portal_url: String,
    /// The worker provisions on the simulated cluster: mails say so.
    pub simulated: bool,
}

/// What one round did.
#[derive(Debug, Default, PartialEq)]
pub struct Round {
    pub scheduled: u64,
    pub fanned_out: u64,
    pub sent: usize,
    pub failed: usize,
}

impl Notifier {
    pub async fn round(&self, db: &PgPool) -> sqlx::Result<Round> {
        let mut round = Round {
            scheduled: outbox::schedule_timed(db).await?,
            fanned_out: outbox::fan_out(db, self.mail.is_some()).await?,
            ..Round::default()
        };
        let due = outbox::claim(db, BATCH).await?;
        let outcomes = futures::future::join_all(due.iter().map(|d| self.send(d))).await;
        for (d, outcome) in due.iter().zip(outcomes) {
            match outcome {
                Ok(()) => {
                    outbox::delivered(db, d.id).await?;
                    round.sent += 1;
                    crate::metrics::notification(&d.channel, "sent");
                }
                Err(error) => {
                    tracing::warn!(delivery = %d.id, event = %d.event, channel = %d.channel, attempt = d.attempts, %error, "notification not delivered");
                    outbox::failed(db, d, &error).await?;
                    round.failed += 1;
                    crate::metrics::notification(&d.channel, "failed");
                }
            }
        }
        Ok(round)
    }

    async fn send(&self, due: &Due) -> Result<(), String> {
        match (due.channel.as_str(), &self.mail) {
            ("email", Some(mail)) => {
                let to = due.recipient_email.as_deref().ok_or("the recipient has no address")?;
                let name = due.recipient_name.as_deref().unwrap_or_default();
                mail.send(to, name, due.id, &message::render(&self.portal_url, due, self.simulated)).await
            }
            ("email", None) => Err("this worker has no --smtp-url".into()),
            _ => {
                let (Some(url), Some(secret)) = (&due.webhook_url, &due.webhook_secret) else {
                    return Err("the webhook was removed".into());
                };
                let body = message::webhook_body(&self.portal_url, due);
                self.webhooks.send(url, secret, &due.event, due.id, &body).await
            }
        }
    }
}

/// Rounds every ROUND while this worker leads (the caller aborts it).
pub async fn run(notifier: Notifier, db: PgPool) {
    loop {
        match notifier.round(&db).await {
            Ok(round) if round != Round::default() => tracing::info!(?round, "notifications"),
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "notification round failed; trying again"),
        }
        tokio::time::sleep(ROUND).await;
    }
}
