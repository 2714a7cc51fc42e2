//! The leaves' dependency DAG: whom each leaf waits for, and how long a chain waits on it.
//! design: runtime.scheduler

use std::collections::HashMap;

use specc_ir::plan::TaskNode;

use crate::attempt::WorkOrder;

/// The leaves each leaf waits for: the leaves under every dependency of the leaf and of
/// each of its ancestors (a dependency on a plan node is a dependency on all its leaves).
pub(super) fn dependencies<'a>(
    tasks: &[TaskNode],
    orders: &'a [WorkOrder],
) -> HashMap<&'a str, Vec<String>> {
    let by_id: HashMap<&str, &TaskNode> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut leaves: Vec<&str> = orders.iter().map(|o| o.task.id.as_str()).collect();
    leaves.sort_unstable();
    // The leaves under `id` (itself, or below `id/`): one sorted range each.
    let under = |id: &str| -> Vec<String> {
        let prefix = format!("{id}/");
        let from = leaves.partition_point(|l| *l < id);
        leaves[from..]
            .iter()
            .take_while(|l| **l == id || l.starts_with(&prefix) || **l < prefix.as_str())
            .filter(|l| **l == id || l.starts_with(&prefix))
            .map(|l| (*l).to_owned())
            .collect()
    };
    let mut out = HashMap::new();
    for o in orders {
        let mut need: Vec<String> = Vec::new();
        let mut at = Some(&o.task);
        while let Some(t) = at {
            for d in &t.dependencies {
                need.extend(under(d));
            }
            at = t.parent.as_deref().and_then(|p| by_id.get(p).copied());
        }
        need.sort_unstable();
        need.dedup();
        need.retain(|d| d != &o.task.id);
        out.insert(o.task.id.as_str(), need);
    }
    out
}

/// For each leaf, the length of the longest chain of leaves that wait on it (itself
/// included): what critical-path-first orders by. Leaves are taken in reverse topological
/// order, so each is computed once; leaves on a cycle (the plan checks refuse cycles) count 1.
pub(super) fn critical_path<'a>(deps: &HashMap<&'a str, Vec<String>>) -> HashMap<&'a str, usize> {
    let mut dependents: HashMap<&str, Vec<&'a str>> = HashMap::new();
    let mut waiting: HashMap<&'a str, usize> = HashMap::new();
    for (&id, ds) in deps {
        let known = ds.iter().filter(|d| deps.contains_key(d.as_str())).count();
        waiting.insert(id, known);
        for d in ds {
            if let Some((&key, _)) = deps.get_key_value(d.as_str()) {
                dependents.entry(key).or_default().push(id);
            }
        }
    }
    // Kahn's order: a leaf comes after everything it waits for.
    let mut order: Vec<&'a str> = waiting
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(id, _)| *id)
        .collect();
    let mut i = 0;
    while i < order.len() {
        for &next in dependents.get(order[i]).map_or(&[][..], Vec::as_slice) {
            if let Some(n) = waiting.get_mut(next) {
                *n -= 1;
                if *n == 0 {
                    order.push(next);
                }
            }
        }
        i += 1;
    }
    let mut length: HashMap<&'a str, usize> = deps.keys().map(|id| (*id, 1)).collect();
    for id in order.iter().rev() {
        let below = dependents
            .get(id)
            .map_or(0, |ds| ds.iter().map(|d| length[d]).max().unwrap_or(0));
        length.insert(id, below + 1);
    }
    length
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::critical_path;

    #[test]
    fn the_longest_chain_below_each_leaf() {
        let deps: HashMap<&str, Vec<String>> = HashMap::from([
            ("a", vec![]),
            ("b", vec!["a".to_owned()]),
            ("c", vec!["b".to_owned()]),
            ("d", vec!["a".to_owned()]),
            ("e", vec![]),
        ]);
        let l = critical_path(&deps);
        assert_eq!((l["a"], l["b"], l["c"], l["d"], l["e"]), (3, 2, 1, 1, 1));
    }
}
