//! `GET /api/v1/fit` and `berth fit`: the memory a run needs and which kind,
//! of the pools the caller may book, holds it (`rules::fit`).

use crate::backend::error::ServiceResult;
use crate::model::Principal;
use crate::rules::fit::{fit, FitAnswer, FitQuery, KindOffer};
use sqlx::PgPool;

/// The kinds the principal may book: of pools open to every tenant or to
/// one of theirs (admins: every pool), whose units name their memory.
pub async fn offers(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<KindOffer>> {
    let pools = crate::backend::pools::list(db, principal).await?;
    let mine = |tenants: &[String]| {
        tenants.is_empty() || principal.is_admin() || principal.tenants.iter().any(|t| tenants.contains(&t.slug))
    };
    Ok(pools
        .into_iter()
        .filter(|p| mine(&p.tenants))
        .flat_map(|p| {
            let pool = p.name;
            p.kinds.into_iter().filter(|k| k.vram_gb_per_unit > 0).map(move |k| KindOffer {
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
