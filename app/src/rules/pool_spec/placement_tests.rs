use super::*;
use std::collections::BTreeMap;

fn selector(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn a_pool_without_a_selector_gets_its_own_label() {
    assert_eq!(default_node_selector("Lab H100 (NVL)"), selector(&[("berth.io/pool", "lab-h100-nvl")]));
    assert_eq!(default_node_selector("ü"), selector(&[("berth.io/pool", "pool")]));
    let long = default_node_selector(&"a-".repeat(60));
    assert!(is_label_value(&long["berth.io/pool"]), "{long:?}");
    assert!(validate_placement(&BTreeMap::new(), &[]).unwrap_err().reason.contains("at least one"));
}

#[test]
fn selectors_that_contain_one_another_are_refused() {
    let gpu = selector(&[("nvidia.com/gpu.present", "true")]);
    let h100 = selector(&[("nvidia.com/gpu.present", "true"), ("nvidia.com/gpu.product", "H100")]);
    let l40s = selector(&[("nvidia.com/gpu.present", "true"), ("nvidia.com/gpu.product", "L40S")]);
    let others = [("h100".to_string(), h100.clone())];
    assert!(validate_separate(&gpu, &others).unwrap_err().reason.contains("pool h100's"));
    assert!(validate_separate(&h100, &[("all".to_string(), gpu)]).is_err(), "the wider one exists first");
    assert!(validate_separate(&h100, &others).is_err(), "the same selector");
    assert_eq!(validate_separate(&l40s, &others), Ok(()));
}

#[test]
fn a_pool_names_its_own_priority_and_runtime_classes_never_the_clusters_critical_ones() {
    assert_eq!(validate_pod_classes(None, None), Ok(()));
    assert_eq!(validate_pod_classes(Some("gpu-interactive"), Some("nvidia")), Ok(()));
    let field = |p: Option<&str>, r: Option<&str>| validate_pod_classes(p, r).unwrap_err().field;
    assert_eq!(field(Some("system-node-critical"), None), "priority_class");
    assert_eq!(field(Some("system-cluster-critical"), None), "priority_class");
    assert_eq!(field(Some("High Priority"), None), "priority_class");
    assert_eq!(field(None, Some("Nvidia")), "runtime_class");
    assert_eq!(field(None, Some("")), "runtime_class");
}
