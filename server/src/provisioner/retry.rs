//! Retries of single API requests inside a pass: conflicts, throttling and
//! server errors are usually gone a moment later, so a pass should not give
//! up (and wait for the next one) on the first.

use std::future::Future;
use std::time::Duration;

/// Whether `err` is worth trying again: 409 (a write raced another), 429
/// (throttled), 5xx, no answer at all, or the one 403 that passes by itself:
/// a quota whose usage the controller manager has not counted yet ("status
/// unknown for quota", seen on a real API server right after the worker
/// created the quota). Everything else (403, 404, 422…) would fail the same
/// way again.
pub fn retryable(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(status) if status.code == 403 => status.message.contains("status unknown for quota"),
        kube::Error::Api(status) => matches!(status.code, 409 | 429) || status.code >= 500,
        kube::Error::Service(_) | kube::Error::HyperError(_) => true,
        _ => false,
    }
}

/// Runs `call` up to `1 + retries` times, waiting `delay`, then twice as long,
/// and so on between attempts.
pub async fn retrying<T, F, Fut>(retries: u32, delay: Duration, mut call: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut attempt = 0;
    loop {
        match call().await {
            Err(err) if attempt < retries && retryable(&err) => {
                tokio::time::sleep(delay * 2u32.saturating_pow(attempt)).await;
                attempt += 1;
            }
            outcome => return outcome,
        }
    }
}

/// The longest refusal kept: admission messages can be long, and the text
/// goes to the booking card, the log and the worker page.
const MESSAGE_CHARS: usize = 600;

/// The cluster's refusal in its own words for the booking page — its
/// `Status.message`, such as "exceeded quota: berth-session, requested:
/// requests.storage=200Gi, …", which names what was refused and why — or
/// else the HTTP status; never a stack of internals.
/// A delete's (or a drain's) answer: a 404 is what it wanted.
pub fn gone<T>(result: Result<T, kube::Error>) -> Result<(), kube::Error> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(err) => Err(err),
    }
}

pub fn describe(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.trim().is_empty() => {
            let message = status.message.trim();
            match message.char_indices().nth(MESSAGE_CHARS) {
                Some((end, _)) => format!("{}…", &message[..end]),
                None => message.to_string(),
            }
        }
        kube::Error::Api(status) if !status.reason.is_empty() => {
            format!("the cluster answered {} {}", status.code, status.reason)
        }
        kube::Error::Api(status) => format!("the cluster answered {}", status.code),
        _ => "the cluster could not be reached".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status { code, reason: "Injected".into(), ..Default::default() }))
    }

    #[tokio::test]
    async fn transient_errors_are_retried_and_others_are_not() {
        for (code, expected_calls) in [(409, 3), (429, 3), (500, 3), (503, 3), (403, 1), (404, 1), (422, 1)] {
            let calls = AtomicU32::new(0);
            let outcome: Result<(), _> = retrying(2, Duration::from_millis(1), || {
                calls.fetch_add(1, Ordering::SeqCst);
                async move { Err(api(code)) }
            })
            .await;
            assert!(outcome.is_err());
            assert_eq!(calls.load(Ordering::SeqCst), expected_calls, "{code}");
        }
        let uncounted = kube::core::Status {
            code: 403,
            message: "routes \"workspace\" is forbidden: status unknown for quota: berth-session".into(),
            ..Default::default()
        };
        assert!(retryable(&kube::Error::Api(Box::new(uncounted))), "the quota is counted a moment later");
        let calls = AtomicU32::new(0);
        let outcome = retrying(3, Duration::from_millis(1), || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    Err(api(429))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(outcome.unwrap(), 2, "the third attempt succeeds");
    }

    #[test]
    fn refusals_are_described_in_the_clusters_words_or_by_status() {
        assert_eq!(describe(&api(403)), "the cluster answered 403 Injected");
        let quota = "persistentvolumeclaims \"berth-model-cache\" is forbidden: exceeded quota: berth-session";
        let refused =
            kube::core::Status { code: 403, reason: "Forbidden".into(), message: quota.into(), ..Default::default() };
        assert_eq!(describe(&kube::Error::Api(Box::new(refused))), quota);
        let long = kube::core::Status { code: 422, message: "é".repeat(2000), ..Default::default() };
        assert_eq!(
            describe(&kube::Error::Api(Box::new(long))).chars().count(),
            MESSAGE_CHARS + 1,
            "cut, with an ellipsis"
        );
    }
}
