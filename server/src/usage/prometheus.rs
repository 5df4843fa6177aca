//! The one thing Berth asks Prometheus: an instant vector query over its
//! HTTP API (`GET /api/v1/query`), with an optional bearer token.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::HashMap;
use std::time::Duration;

/// One series of an instant vector: its labels and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub labels: HashMap<String, String>,
    pub value: f64,
}

#[derive(Clone)]
pub struct Prometheus {
    base: url::Url,
    token: Option<String>,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct Answer {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<Sample>,
}

#[derive(Deserialize)]
struct Sample {
    metric: HashMap<String, String>,
    /// `[unix seconds, "value"]`
    value: (f64, String),
}

/// Why a query's answer could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PrometheusError {
    #[error("the query's address: {0}")]
    Url(#[from] url::ParseError),
    #[error("Prometheus could not be asked: {0}")]
    Http(#[from] reqwest::Error),
    #[error("Prometheus refused the query: {0}")]
    Refused(String),
    #[error("Prometheus answered without data")]
    NoData,
    #[error("Prometheus answered a {0} instead of a vector")]
    NotAVector(String),
}

impl Prometheus {
    pub fn new(base: url::Url, token: Option<String>) -> reqwest::Result<Self> {
        // A sampling round must finish well inside its minute.
        let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build()?;
        Ok(Self { base, token, http })
    }

    /// `query` evaluated at `at`. NaN and infinite values (a counter reset,
    /// a division by zero in the exporter) are dropped, never stored.
    pub async fn vector(&self, query: &str, at: DateTime<Utc>) -> Result<Vec<Series>, PrometheusError> {
        let url = self.base.join("api/v1/query")?;
        let mut request = self.http.get(url).query(&[("query", query), ("time", &at.timestamp().to_string())]);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let answer: Answer = request.send().await?.json().await?;
        if answer.status != "success" {
            return Err(PrometheusError::Refused(answer.error.unwrap_or_default()));
        }
        let data = answer.data.ok_or(PrometheusError::NoData)?;
        if data.result_type != "vector" {
            return Err(PrometheusError::NotAVector(data.result_type));
        }
        Ok(data
            .result
            .into_iter()
            .filter_map(|s| {
                let value: f64 = s.value.1.parse().ok()?;
                value.is_finite().then_some(Series { labels: s.metric, value })
            })
            .collect())
    }
}
