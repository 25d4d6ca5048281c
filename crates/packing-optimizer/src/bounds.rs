//! Lower bounds on the price of any plan: per resource, and one that charges every node a plan
//! must open (a small covering LP's duals, scaled into feasibility).

use crate::colgen::Problem;

/// A simple lower bound: in any one resource, every pod pays at least its share of the
/// cheapest offering per unit of that resource it may use (a node's price covers its pods'
/// shares). The best resource wins.
pub fn resource_bound(problem: &Problem) -> f64 {
    let dims = problem.cap.first().map_or(0, Vec::len);
    (0..dims)
        .map(|d| {
            problem
                .classes
                .iter()
                .map(|class| {
                    if class.req[d] <= 0 {
                        return 0.0;
                    }
                    let per_unit = (0..problem.cap.len())
                        .filter(|&o| class.allowed[o] && problem.cap[o][d] > 0)
                        .map(|o| problem.price[o] / problem.cap[o][d] as f64)
                        .fold(f64::INFINITY, f64::min);
                    if per_unit.is_finite() {
                        per_unit * class.req[d] as f64 * f64::from(class.count)
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// Pods of one-per-node classes that conflict pairwise (a greedy clique, largest classes first)
/// each need a node of their own: a lower bound on the number of nodes any plan opens.
pub fn min_nodes(problem: &Problem) -> u64 {
    let clique = problem.conflict_clique();
    let any = problem.classes.iter().any(|c| c.count > 0);
    clique
        .iter()
        .map(|&c| u64::from(problem.classes[c].count))
        .sum::<u64>()
        .max(u64::from(any))
}

/// A lower bound that charges every node it must open: any plan is a count `y_o` of nodes per
/// offering (one some class may use) whose allocatable covers the summed requests in every
/// dimension, with at least [`min_nodes`] nodes. Any duals `w_d, δ ≥ 0` scaled so that
/// `Σ_d w_d·cap_d(o) + δ ≤ price(o)` for every offering then prove
/// `price ≥ Σ_d w_d·demand_d + δ·min_nodes` (each node pays for its room and its overhead);
/// the duals come from this small covering LP, the scaling makes them valid whatever the
/// solver reached.
pub fn node_count_bound(problem: &Problem) -> f64 {
    resource_prices(problem).1
}

/// The duals behind [`node_count_bound`]: a price per unit of each dimension (made valid for
/// every offering) and the bound they prove.
pub fn resource_prices(problem: &Problem) -> (Vec<f64>, f64) {
    let offerings: Vec<usize> = (0..problem.cap.len())
        .filter(|&o| problem.classes.iter().any(|c| c.count > 0 && c.allowed[o]))
        .collect();
    let Some(&first) = offerings.first() else {
        return (Vec::new(), 0.0);
    };
    let dims = problem.cap[first].len();
    let scale: Vec<f64> = (0..dims)
        .map(|d| {
            offerings
                .iter()
                .map(|&o| problem.cap[o][d])
                .max()
                .unwrap_or(0)
                .max(1) as f64
        })
        .collect();
    let mut demand: Vec<f64> = (0..dims)
        .map(|d| {
            problem
                .classes
                .iter()
                .map(|c| c.req[d].max(0) as f64 * f64::from(c.count))
                .sum::<f64>()
                / scale[d]
        })
        .collect();
    demand.push(min_nodes(problem) as f64);
    let max_price = offerings
        .iter()
        .map(|&o| problem.price[o])
        .fold(0.0, f64::max);
    let mut lp = crate::lp::Lp::new(demand.clone(), 10.0 * max_price + 1.0);
    let column = |o: usize| -> Vec<(usize, f64)> {
        let mut entries: Vec<(usize, f64)> = (0..dims)
            .filter(|&d| problem.cap[o][d] > 0)
            .map(|d| (d, problem.cap[o][d] as f64 / scale[d]))
            .collect();
        entries.push((dims, 1.0));
        entries
    };
    for &o in &offerings {
        lp.add(crate::lp::Column {
            cost: problem.price[o],
            entries: column(o),
        });
    }
    lp.solve(50 * (dims + 1) + 10 * offerings.len());
    let duals: Vec<f64> = lp.duals().into_iter().map(|p| p.max(0.0)).collect();
    // Scale the duals into feasibility for every offering.
    let mut t = 1.0f64;
    for &o in &offerings {
        let charged: f64 = column(o).iter().map(|&(r, a)| duals[r] * a).sum();
        if charged > 0.0 {
            t = t.min(problem.price[o].max(0.0) / charged);
        }
    }
    let value: f64 = duals.iter().zip(&demand).map(|(w, n)| w * n).sum();
    // Dimensions nothing requests carry no price (their dual is arbitrary).
    let prices = (0..dims)
        .map(|d| {
            if demand[d] > 0.0 {
                t * duals[d] / scale[d]
            } else {
                0.0
            }
        })
        .collect();
    (prices, (t * value).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::colgen::ClassSpec;

    fn class(count: u32, req: Vec<i64>, one_per_node: bool, conflicts: Vec<usize>) -> ClassSpec {
        ClassSpec {
            count,
            req,
            allowed: vec![true, true],
            one_per_node,
            conflicts,
        }
    }

    #[test]
    fn node_count_bound_charges_the_nodes_conflicting_pods_force() {
        // Two offerings at the same price per allocatable cpu; three pods that repel each
        // other (two classes) need three nodes even though they would fit one.
        let problem = Problem {
            cap: vec![vec![1000, 1000], vec![4000, 4000]],
            price: vec![1.0, 4.0],
            classes: vec![
                class(2, vec![100, 100], true, vec![1]),
                class(1, vec![100, 100], true, vec![0]),
            ],
        };
        assert_eq!(min_nodes(&problem), 3);
        let b = node_count_bound(&problem);
        assert!((b - 3.0).abs() < 1e-6, "{b}");
        assert!(resource_bound(&problem) < 0.31);
        // Without conflicts the pods share a node: one node's price at most.
        let free = Problem {
            classes: vec![class(3, vec![100, 100], false, vec![])],
            ..problem
        };
        assert_eq!(min_nodes(&free), 1);
        assert!(node_count_bound(&free) <= 1.0 + 1e-9);
    }
}
