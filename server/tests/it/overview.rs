//! The home page's data: what is free now, and occupancy without personal
//! details — not even a teammate's (carol sees ada's booking anonymously).

use crate::common;

use common::{slot, Fixture, GPU, MIG};

#[tokio::test]
async fn overview_shows_free_units_now_and_no_one_s_details() {
    let f = Fixture::new().await;
    f.book(&f.ada, MIG, 3, common::current_slot(), slot(4)).await;
    f.book(&f.bob, GPU, 1, slot(8), slot(12)).await;
    let carol = app::backend::accounts::tokens::authenticate(&f.db, &f.carol).await.unwrap().unwrap();
    let overview = app::backend::calendar::overview::load(&f.db, &carol).await.unwrap();
    let lab = &overview.pools[0];
    let free: Vec<(&str, i32, i32)> = lab.kinds.iter().map(|k| (k.kind.as_str(), k.free_now, k.capacity)).collect();
    assert_eq!(free, [(GPU, 1, 1), (MIG, 1, 4)], "the GPU booking has not started yet");
    assert_eq!(overview.bookings.len(), 2);
    for booking in &overview.bookings {
        assert!(booking.user_email.is_none() && booking.tenant.is_none() && booking.note.is_none() && !booking.mine);
    }
}
