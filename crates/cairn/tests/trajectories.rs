//! Agent trajectories through the public API: insert, the three pools, procedure and
//! gotcha recall, idempotent insert, verbatim storage, forget, export/import.
mod common;
use cairn::{RecallOptions, TrajectoryInput, UnitKind};
use common::open;
use serde_json::json;
use std::collections::BTreeMap;

/// A small shop admin: one run that adds a product, one that fails to create a coupon
/// whose code exists, one that searches orders.
fn runs() -> Vec<TrajectoryInput> {
    let page = |title: &str, extra: &str| {
        format!("[1] banner 'ShopAdmin'\n[2] link 'Dashboard'\n[3] link 'Catalog'\n[4] link 'Marketing'\n[5] link 'Sales'\n[6] heading '{title}'\n{extra}")
    };
    let t = |v: serde_json::Value| serde_json::from_value::<TrajectoryInput>(v).unwrap();
    vec![
        t(
            json!({"id": "add-product", "domain": "shop", "goal": "Add a product named Blue Mug priced 12.50",
                "start_url": "http://shop/admin", "outcome": "success", "states": [
                {"url": "http://shop/admin", "action": "click [3]", "thought": "products live under Catalog",
                 "accessibility_tree": page("Dashboard", "[20] text 'Sales today: 14'")},
                {"url": "http://shop/admin/catalog/products", "action": "click [30]", "thought": "open the new product form",
                 "accessibility_tree": page("Products", "[30] button 'Add Product'\n[31] table 'Products'")},
                {"url": "http://shop/admin/catalog/products/new", "action": "type [40] \"Blue Mug\"",
                 "accessibility_tree": page("New Product", "[40] textbox 'Product Name'\n[41] textbox 'Price'\n[42] button 'Save'")},
                {"url": "http://shop/admin/catalog/products/new", "action": "type [41] \"12.50\"",
                 "accessibility_tree": page("New Product", "[40] textbox 'Product Name' value 'Blue Mug'\n[41] textbox 'Price'\n[42] button 'Save'")},
                {"url": "http://shop/admin/catalog/products/new", "action": "click [42]",
                 "accessibility_tree": page("New Product", "[40] textbox 'Product Name' value 'Blue Mug'\n[41] textbox 'Price' value '12.50'\n[42] button 'Save'")},
                {"url": "http://shop/admin/catalog/products/118", "thought": "saved",
                 "accessibility_tree": page("Blue Mug", "[50] alert 'You saved the product.'")}
            ]}),
        ),
        t(
            json!({"id": "coupon-dup", "domain": "shop", "goal": "Create a coupon SPRING10 for 10% off",
                "start_url": "http://shop/admin", "outcome": "failure", "states": [
                {"url": "http://shop/admin", "action": "click [4]", "thought": "coupons are under Marketing",
                 "accessibility_tree": page("Dashboard", "[20] text 'Sales today: 9'")},
                {"url": "http://shop/admin/marketing/coupons", "action": "click [60]",
                 "accessibility_tree": page("Cart Price Rules", "[60] button 'Add New Rule'")},
                {"url": "http://shop/admin/marketing/coupons/new", "action": "type [61] \"SPRING10\"",
                 "accessibility_tree": page("New Rule", "[61] textbox 'Coupon Code'\n[62] textbox 'Discount'\n[63] button 'Save Rule'")},
                {"url": "http://shop/admin/marketing/coupons/new", "action": "click [63]", "thought": "save the rule",
                 "accessibility_tree": page("New Rule", "[61] textbox 'Coupon Code' value 'SPRING10'\n[62] textbox 'Discount' value '10'\n[63] button 'Save Rule'")},
                {"url": "http://shop/admin/marketing/coupons/new", "thought": "the code is taken; giving up",
                 "accessibility_tree": page("New Rule", "[64] alert 'The coupon code SPRING10 already exists.'\n[61] textbox 'Coupon Code' value 'SPRING10'")}
            ]}),
        ),
        t(
            json!({"id": "find-order", "domain": "shop", "goal": "Find the status of order 000145",
                "start_url": "http://shop/admin", "outcome": true, "states": [
                {"url": "http://shop/admin", "action": "click [5]",
                 "accessibility_tree": page("Dashboard", "[20] text 'Sales today: 3'")},
                {"url": "http://shop/admin/sales/orders", "action": "type [70] \"000145\"",
                 "accessibility_tree": page("Orders", "[70] searchbox 'Search by keyword'\n[71] table 'Orders'")},
                {"url": "http://shop/admin/sales/orders?q=000145", "thought": "status is Processing",
                 "accessibility_tree": page("Orders", "[71] table 'Orders'\n[72] row '000145 | Jane Roe | Processing'")}
            ]}),
        ),
    ]
}

#[test]
fn pools_procedures_and_gotchas() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let r = m.trajectories().insert_many("agent", runs()).unwrap();
    assert_eq!(r.trajectories, 3);
    let again = m.trajectories().insert_many("agent", runs()).unwrap();
    assert_eq!(
        (again.trajectories, again.unchanged, again.units),
        (0, 3, 0)
    );
    let manifest = m.trajectories().manifest("agent").unwrap();
    assert_eq!(manifest.len(), 3, "inserting twice does not duplicate");
    assert_eq!(manifest[1].succeeded, Some(false));
    assert_eq!(manifest[0].steps, 6);
    assert!(manifest[0]
        .urls
        .contains(&"http://shop/admin/catalog/products/new".into()));
    let stored = m
        .trajectories()
        .get("agent", "coupon-dup")
        .unwrap()
        .unwrap();
    assert_eq!(stored.trajectory, runs()[1], "kept verbatim");
    assert_eq!(m.stats("agent").unwrap().trajectories, 3);

    let notes = RecallOptions {
        top_k: 1,
        token_budget: 800,
        scope: cairn::ScopeOptions {
            kinds: Some(vec![UnitKind::Note]),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m
        .recall(
            "agent",
            "How do I add a new product to the catalog?",
            &notes,
        )
        .unwrap();
    assert_eq!(r.hits[0].unit_id, "note:add-product");
    assert!(
        r.context.contains("Procedure (succeeded)") && r.context.contains("click [42]"),
        "{}",
        r.context
    );

    let all = RecallOptions {
        top_k: 5,
        token_budget: 1500,
        ..Default::default()
    };
    let r = m
        .recall(
            "agent",
            "What went wrong when creating a coupon code that already exists?",
            &all,
        )
        .unwrap();
    let failing = r
        .hits
        .iter()
        .find(|h| h.trajectory_id.as_deref() == Some("coupon-dup"))
        .expect("the failed run");
    assert!(failing.text.contains("already exists"), "{failing:?}");
    let [a, b] = failing.states.unwrap();
    assert!(a <= 4 && 4 < b, "cites the failing state 4: {failing:?}");
    assert!(r.context.contains("trajectory coupon-dup"), "{}", r.context);

    // Pools and quotas: slices only, then at most one note.
    let slices = RecallOptions {
        top_k: 3,
        scope: cairn::ScopeOptions {
            kinds: Some(vec![UnitKind::Slice]),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m
        .recall("agent", "where is the order search box", &slices)
        .unwrap();
    assert!(r.hits.iter().all(|h| h.kind == UnitKind::Slice));
    assert_eq!(r.hits[0].trajectory_id.as_deref(), Some("find-order"));
    assert_eq!(r.hits[0].states, Some([1, 2]));
    let quota = RecallOptions {
        top_k: 6,
        quotas: Some(BTreeMap::from([(UnitKind::Note, 1)])),
        ..Default::default()
    };
    let r = m
        .recall("agent", "procedure steps in the shop admin", &quota)
        .unwrap();
    assert!(r.hits.iter().filter(|h| h.kind == UnitKind::Note).count() <= 1);
}

#[test]
fn conflicts_forget_and_backup() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.trajectories().insert_many("agent", runs()).unwrap();
    let mut changed = runs().remove(0);
    changed.goal = "Something else".into();
    let e = m.trajectories().insert("agent", changed).unwrap_err();
    assert!(e.is_input() && e.to_string().contains("add-product"), "{e}");
    let bad: TrajectoryInput =
        serde_json::from_value(json!({"id": "x", "goal": "g", "states": []})).unwrap();
    let e = m
        .trajectories()
        .insert_many("agent", vec![runs().remove(2), bad])
        .unwrap_err();
    assert!(e.to_string().contains("`states` is empty"), "{e}");

    let mut out = Vec::new();
    assert_eq!(m.export("agent", &mut out).unwrap(), 3);
    let removed = m.trajectories().forget("agent", "coupon-dup").unwrap();
    assert!(removed > 5, "slices, events and the note: {removed}");
    assert!(m
        .trajectories()
        .get("agent", "coupon-dup")
        .unwrap()
        .is_none());
    let r = m
        .recall(
            "agent",
            "coupon code already exists",
            &RecallOptions::default(),
        )
        .unwrap();
    assert!(r
        .hits
        .iter()
        .all(|h| h.trajectory_id.as_deref() != Some("coupon-dup")));

    let dir2 = tempfile::tempdir().unwrap();
    let Some(m2) = open(dir2.path()) else { return };
    let report = m2.import(&out[..]).unwrap();
    assert_eq!(report.trajectories, 3);
    assert_eq!(
        m2.trajectories()
            .get("agent", "coupon-dup")
            .unwrap()
            .unwrap()
            .trajectory,
        runs()[1]
    );
    let check = m2.check(true).unwrap();
    assert!(check.units > 0);
    assert_eq!(m2.trajectories().manifest("agent").unwrap().len(), 3);
}
