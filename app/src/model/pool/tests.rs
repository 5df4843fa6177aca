use super::*;

#[test]
fn a_kind_defaults_to_the_units_its_mig_profile_fits_on_one_gpu() {
    let slices = |kind: &str| default_slices_per_gpu(&format!("nvidia.com/{kind}"));
    // The reference hardware: four 1g.24gb fill an RTX PRO 6000 or an H100 NVL.
    assert_eq!(slices("mig-1g.24gb"), 4);
    assert_eq!(slices("mig-2g.48gb"), 2);
    // The 7-slice GPUs.
    assert_eq!((slices("mig-1g.10gb"), slices("mig-2g.20gb"), slices("mig-3g.40gb")), (7, 3, 2));
    assert_eq!((slices("mig-4g.40gb"), slices("mig-7g.80gb"), slices("gpu")), (1, 1, 1));
    let kind = PoolKind::from(KindSpec {
        kind: "nvidia.com/mig-1g.24gb".into(),
        capacity: 4,
        replicas_per_unit: 1,
        vram_gb_per_unit: 24,
        cpu_millis_per_unit: 4000,
        memory_mib_per_unit: 1024,
        storage_gib_per_unit: 10,
        slices_per_gpu: None,
        price_per_unit_hour: None,
        lend_idle: false,
    });
    assert_eq!((kind.gpu_share(), kind.unit_price(8.0)), (0.25, 2.0));
    assert_eq!(PoolKind { price_per_unit_hour: Some(3.0), ..kind }.unit_price(8.0), 3.0);
}

#[test]
fn a_default_new_pool_is_what_the_api_makes_of_a_name_and_kinds_alone() {
    let pool = NewPool::default();
    assert_eq!((pool.time_zone.as_str(), pool.requires_approval, pool.price_per_gpu_hour), ("UTC", false, 0.0));
    assert!(pool.kinds.is_empty() && pool.images.is_empty() && pool.cluster.is_none());
}
