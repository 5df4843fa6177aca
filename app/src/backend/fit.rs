//! `GET /api/v1/fit` and `berth fit`: the memory a run needs and which kind,
//! of the pools the caller may book, holds it (`rules::fit`).

use crate::backend::calendar::planning::SlotRequest;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{FormRefusal, Principal};
use crate::rules::fit::{fit, FitAnswer, FitForm, FitPage, FitQuery, KindOffer};
use crate::rules::FieldError;
use sqlx::PgPool;

/// The kinds the principal may book: of pools open to every tenant or to
/// one of theirs (admins: every pool), whose units name their memory.
pub async fn offers(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<KindOffer>> {
    let pools = crate::backend::pools::list(db, principal).await?;
    Ok(pools
        .into_iter()
        .filter(|p| crate::backend::pools::may_book(principal, p))
        .flat_map(|p| {
            let (pool_id, pool) = (p.id.to_string(), p.name);
            p.kinds.into_iter().filter(|k| k.vram_gb_per_unit > 0).map(move |k| KindOffer {
                pool_id: pool_id.clone(),
                pool: pool.clone(),
                kind: k.kind,
                vram_gb: f64::from(k.vram_gb_per_unit),
                capacity: k.capacity,
                slices_per_gpu: k.slices_per_gpu,
                time_sliced: k.replicas_per_unit > 1,
            })
        })
        .collect())
}

pub async fn answer(db: &PgPool, principal: &Principal, query: &FitQuery) -> ServiceResult<FitAnswer> {
    let question = query.question()?;
    Ok(fit(&question, &offers(db, principal).await?))
}

/// Each field's label on the page, to say what is wrong with it.
fn label(field: &str) -> &str {
    match field {
        "model" => "Model",
        "params_b" => "Billions of parameters",
        "layers" => "Layers",
        "kv_heads" => "KV heads",
        "head_dim" => "Head dimension",
        "precision" => "Precision",
        "workload" => "What you will do",
        "context" => "Context",
        "sequences" => "Sequences at once",
        other => other,
    }
}

/// How long a window the page offers for the kind that holds the run.
const OFFERED_HOURS: i64 = 2;

/// The helper page: the answer once something was asked, and the next free
/// windows of the smallest kind that holds it (each one click from booked).
/// A question that cannot be answered is said beside the form.
pub async fn page(db: &PgPool, principal: &Principal, form: FitForm, tz: &str) -> ServiceResult<FitPage> {
    let mut page = FitPage {
        form: form.clone(),
        answer: None,
        next: None,
        form_key: uuid::Uuid::new_v4().to_string(),
        tz: crate::rules::local_time::zone(tz).name().to_string(),
    };
    if !form.asked() {
        return Ok(page);
    }
    let refused = |e: FieldError| FormRefusal::about(&e.field, label(&e.field), &e.reason);
    let answered = match form.query() {
        Ok(query) => match answer(db, principal, &query).await {
            Ok(answer) => Ok(answer),
            Err(ServiceError::Invalid(e)) => Err(refused(e)),
            Err(err) if err.can_be_acted_on() => Err(FormRefusal { field: None, sentence: err.public_message() }),
            Err(err) => return Err(err),
        },
        Err(e) => Err(refused(e)),
    };
    if let Ok(answer) = &answered {
        if let Some(best) = answer.kinds.first().filter(|k| k.units.is_some()) {
            if let Ok(pool_id) = best.pool_id.parse() {
                let now = crate::backend::db_now(db).await?;
                let ask = SlotRequest {
                    kind: &best.kind,
                    quantity: best.units.unwrap_or(1),
                    duration: chrono::Duration::hours(OFFERED_HOURS),
                    earliest: now,
                    latest_end: now + chrono::Duration::days(7),
                };
                let mut found = crate::backend::calendar::find::slots(db, principal, pool_id, &ask, tz).await?;
                found.windows.truncate(3);
                page.next = Some(found);
            }
        }
    }
    page.answer = Some(answered);
    Ok(page)
}
