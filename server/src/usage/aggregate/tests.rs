use super::*;

fn series(pairs: &[(&str, &str)], value: f64) -> Series {
    Series { labels: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), value }
}

fn booking(namespace: &str) -> LiveBooking {
    LiveBooking { id: Uuid::new_v4(), namespace: namespace.into(), units: 1 }
}

#[test]
fn the_selector_takes_label_matchers_and_nothing_else() {
    let selector: DcgmSelector =
        r#" job = "gpu-operator/nvidia-dcgm-exporter" , pod=~"dcgm-(a|b),x\"y" "#.parse().unwrap();
    assert_eq!(selector.0, r#"job="gpu-operator/nvidia-dcgm-exporter",pod=~"dcgm-(a|b),x\"y""#);
    let query = Metric::GpuUtil.query(&selector);
    assert!(query
        .contains(r#"GPU_UTIL{namespace=~"berth-.+",exported_namespace="",job="gpu-operator/nvidia-dcgm-exporter""#));
    assert!(query.contains(r#"{exported_namespace=~"berth-.+",namespace!~"berth-.+",job="#), "{query}");
    assert_eq!("".parse::<DcgmSelector>().unwrap(), DcgmSelector::default());
    assert!(!Metric::Power.query(&DcgmSelector::default()).contains(",}"));
    for bad in [
        r#"job="x"} or vector(1) or up{a="b""#,
        "job=x",
        r#"job="x""#.trim_end_matches('"'),
        r#"1job="x""#,
        r#"job="x",,"#,
        r#"job="x" extra"#,
        r#"job=="x""#,
    ] {
        assert!(bad.parse::<DcgmSelector>().is_err(), "{bad}");
    }
}

#[test]
fn both_label_spellings_and_a_mig_instance_are_measured() {
    let whole = booking("berth-team-a-11111111");
    let mig = booking("berth-team-b-22222222");
    let results = HashMap::from([
        (
            Metric::GpuUtil,
            vec![
                // honorLabels: the pod's namespace is `namespace`.
                series(&[("namespace", &whole.namespace), ("UUID", "GPU-a")], 80.0),
                series(&[("namespace", &whole.namespace), ("UUID", "GPU-b")], 40.0),
                // Not a session of Berth's.
                series(&[("namespace", "berth-other-33333333"), ("UUID", "GPU-c")], 100.0),
            ],
        ),
        (
            Metric::EngineActive,
            vec![series(
                &[
                    ("namespace", "gpu-operator"),
                    ("exported_namespace", &mig.namespace),
                    ("UUID", "GPU-d"),
                    ("GPU_I_ID", "3"),
                    ("GPU_I_PROFILE", "1g.24gb"),
                ],
                0.25,
            )],
        ),
        (
            Metric::MemoryUsed,
            vec![
                series(&[("namespace", &whole.namespace), ("UUID", "GPU-a")], 1000.0),
                series(&[("namespace", &whole.namespace), ("UUID", "GPU-b")], 500.0),
                series(&[("exported_namespace", &mig.namespace), ("UUID", "GPU-d"), ("GPU_I_ID", "3")], 2048.0),
            ],
        ),
        (
            Metric::Power,
            vec![
                series(&[("namespace", &whole.namespace), ("UUID", "GPU-a")], 300.0),
                series(&[("namespace", &whole.namespace), ("UUID", "GPU-b")], 200.0),
                series(&[("exported_namespace", &mig.namespace), ("UUID", "GPU-d"), ("GPU_I_ID", "3")], 450.0),
            ],
        ),
    ]);
    let rows = per_booking(&results, &[whole.clone(), mig.clone()], ActiveThreshold::default());
    let of = |b: &LiveBooking| rows.iter().find(|r| r.booking_id == b.id).unwrap().clone();
    let w = of(&whole);
    assert_eq!((w.devices, w.memory_used_mib, w.power_w), (2, 1500.0, Some(500.0)));
    assert!((w.busy - 0.6).abs() < 1e-9);
    assert_eq!(w.active_devices, 2, "80 % and 40 % both reach 10 %");
    let m = of(&mig);
    assert_eq!((m.devices, m.busy, m.memory_used_mib, m.power_w), (1, 0.25, 2048.0, None));
    assert_eq!(m.active_devices, 1);
    assert_eq!(rows.len(), 2);
    // At 50 %, only the GPU at 80 % is active; the slice at 25 % is not.
    let strict: ActiveThreshold = "50%".parse().unwrap();
    let rows = per_booking(&results, &[whole.clone(), mig.clone()], strict);
    let active = |b: &LiveBooking| rows.iter().find(|r| r.booking_id == b.id).unwrap().active_devices;
    assert_eq!((active(&whole), active(&mig)), (1, 0));
}

#[test]
fn the_engine_decides_activity_where_the_exporter_reports_it() {
    // A whole GPU whose utilisation counter says 30 % but whose engine
    // was active 5 % of the time (short kernels): not active at 10 %.
    let b = booking("berth-team-a-66666666");
    let results = HashMap::from([
        (Metric::GpuUtil, vec![series(&[("namespace", &b.namespace), ("UUID", "GPU-f")], 30.0)]),
        (Metric::EngineActive, vec![series(&[("namespace", &b.namespace), ("UUID", "GPU-f")], 0.05)]),
    ]);
    let row = &per_booking(&results, &[b], ActiveThreshold::default())[0];
    assert_eq!((row.devices, row.active_devices), (1, 0));
    assert!((row.busy - 0.3).abs() < 1e-9);
}

#[test]
fn the_threshold_is_a_percentage() {
    assert_eq!("25".parse::<ActiveThreshold>().unwrap().fraction(), 0.25);
    assert_eq!(" 5 % ".parse::<ActiveThreshold>().unwrap().fraction(), 0.05);
    for bad in ["0", "-3", "101", "ten", ""] {
        assert!(bad.parse::<ActiveThreshold>().is_err(), "{bad}");
    }
}

#[test]
fn a_booking_without_series_gets_no_row_and_memory_alone_is_no_measurement() {
    let silent = booking("berth-team-a-44444444");
    let memory_only = booking("berth-team-a-55555555");
    let results = HashMap::from([(
        Metric::MemoryUsed,
        vec![series(&[("namespace", &memory_only.namespace), ("UUID", "GPU-e")], 10.0)],
    )]);
    assert!(per_booking(&results, &[silent, memory_only], ActiveThreshold::default()).is_empty());
}

#[test]
fn every_query_reads_both_spellings_of_the_namespace() {
    for metric in Metric::ALL {
        let q = metric.query(&DcgmSelector::default());
        assert!(q.contains("{namespace=~\"berth-.+\",exported_namespace=\"\"}"), "{q}");
        assert!(q.contains("{exported_namespace=~\"berth-.+\",namespace!~\"berth-.+\"}"), "{q}");
    }
}
