//! A small revised simplex for the covering LP of column generation: minimise `c·x` subject to
//! `A x ≥ n`, `x ≥ 0`. The rows are pod classes (a few hundred at most), so the basis inverse is
//! kept as a dense matrix: the duals come for free and new columns enter warm, with no solver
//! crate (microlp has no duals; HiGHS needs a C++ build).
//!
//! The first basis is one artificial column per row at a cost no real cover can reach (big-M),
//! so any pool of columns starts feasible.

/// A column: its cost and its non-zero entries (row, coefficient).
#[derive(Debug, Clone)]
pub struct Column {
    /// Cost per unit.
    pub cost: f64,
    /// Non-zero coefficients, by row.
    pub entries: Vec<(usize, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Var {
    /// A pool column.
    Col(usize),
    /// The surplus of a row (`A x - s = n`).
    Surplus(usize),
    /// The artificial column of a row (cost big-M).
    Artificial(usize),
}

/// The LP and its current basis.
#[derive(Debug, Clone)]
pub struct Lp {
    m: usize,
    demand: Vec<f64>,
    big: f64,
    cols: Vec<Column>,
    basis: Vec<Var>,
    /// Basis inverse, row-major m×m.
    binv: Vec<f64>,
    /// Values of the basic variables.
    xb: Vec<f64>,
    pivots_since_refactor: usize,
}

const EPS: f64 = 1e-9;

impl Lp {
    /// An LP over `demand.len()` rows; `big` must exceed the cost of covering one unit of any row.
    pub fn new(demand: Vec<f64>, big: f64) -> Lp {
        let m = demand.len();
        let mut binv = vec![0.0; m * m];
        for i in 0..m {
            binv[i * m + i] = 1.0;
        }
        Lp {
            m,
            xb: demand.clone(),
            demand,
            big,
            cols: Vec::new(),
            basis: (0..m).map(Var::Artificial).collect(),
            binv,
            pivots_since_refactor: 0,
        }
    }

    /// Adds a column (it enters at the next solve if it prices out); returns its index.
    pub fn add(&mut self, col: Column) -> usize {
        self.cols.push(col);
        self.cols.len() - 1
    }

    /// Starts from a basis of one column per row covering only that row (`per_row[i]` covers
    /// row i alone): feasible at once, so no big-M phase. Rows without one keep the artificial.
    pub fn diagonal_basis(&mut self, per_row: &[Option<usize>]) {
        let m = self.m;
        for (i, j) in per_row.iter().enumerate().take(m) {
            let Some(j) = *j else { continue };
            let col = &self.cols[j];
            if let [(row, k)] = col.entries[..]
                && row == i
                && k > 0.0
            {
                self.basis[i] = Var::Col(j);
                self.binv[i * m + i] = 1.0 / k;
                self.xb[i] = self.demand[i] / k;
            }
        }
    }

    fn cost(&self, v: Var) -> f64 {
        match v {
            Var::Col(j) => self.cols[j].cost,
            Var::Surplus(_) => 0.0,
            Var::Artificial(_) => self.big,
        }
    }

    /// Duals of the rows: `c_B B⁻¹`.
    pub fn duals(&self) -> Vec<f64> {
        let m = self.m;
        let mut pi = vec![0.0; m];
        for r in 0..m {
            let c = self.cost(self.basis[r]);
            if c != 0.0 {
                let row = &self.binv[r * m..(r + 1) * m];
                for (p, b) in pi.iter_mut().zip(row) {
                    *p += c * b;
                }
            }
        }
        pi
    }

    /// The objective value of the current basis.
    pub fn objective(&self) -> f64 {
        (0..self.m)
            .map(|r| self.cost(self.basis[r]) * self.xb[r])
            .sum()
    }

    /// Whether an artificial column is still basic at a positive value (some row uncovered).
    pub fn infeasible(&self) -> bool {
        (0..self.m).any(|r| matches!(self.basis[r], Var::Artificial(_)) && self.xb[r] > 1e-7)
    }

    /// The value of every pool column.
    pub fn values(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.cols.len()];
        for r in 0..self.m {
            if let Var::Col(j) = self.basis[r] {
                x[j] = self.xb[r].max(0.0);
            }
        }
        x
    }

    /// `B⁻¹ a` for a sparse column.
    fn ftran(&self, entries: &[(usize, f64)], out: &mut [f64]) {
        let m = self.m;
        for (r, o) in out.iter_mut().enumerate() {
            let row = &self.binv[r * m..(r + 1) * m];
            *o = entries.iter().map(|&(i, a)| row[i] * a).sum();
        }
    }

    fn entries(&self, v: Var) -> Vec<(usize, f64)> {
        match v {
            Var::Col(j) => self.cols[j].entries.clone(),
            Var::Surplus(i) => vec![(i, -1.0)],
            Var::Artificial(i) => vec![(i, 1.0)],
        }
    }

    /// Rebuilds the basis inverse from the basic columns (Gauss-Jordan with partial pivoting),
    /// and the basic values from the demand, to shed rounding drift.
    fn refactor(&mut self) {
        let m = self.m;
        let mut a = vec![0.0; m * m];
        for (c, &v) in self.basis.iter().enumerate() {
            for (i, x) in self.entries(v) {
                a[i * m + c] = x;
            }
        }
        let mut inv = vec![0.0; m * m];
        for i in 0..m {
            inv[i * m + i] = 1.0;
        }
        for col in 0..m {
            let piv = (col..m)
                .max_by(|&x, &y| a[x * m + col].abs().total_cmp(&a[y * m + col].abs()))
                .unwrap_or(col);
            if a[piv * m + col].abs() < 1e-12 {
                // Singular (should not happen): keep the incrementally updated inverse.
                return;
            }
            if piv != col {
                for k in 0..m {
                    a.swap(piv * m + k, col * m + k);
                    inv.swap(piv * m + k, col * m + k);
                }
            }
            let d = a[col * m + col];
            for k in 0..m {
                a[col * m + k] /= d;
                inv[col * m + k] /= d;
            }
            for r in 0..m {
                if r != col {
                    let f = a[r * m + col];
                    if f != 0.0 {
                        for k in 0..m {
                            a[r * m + k] -= f * a[col * m + k];
                            inv[r * m + k] -= f * inv[col * m + k];
                        }
                    }
                }
            }
        }
        // inv is (B)⁻¹ with rows indexed by basis position.
        self.binv = inv;
        let mut xb = vec![0.0; m];
        for (r, x) in xb.iter_mut().enumerate() {
            let row = &self.binv[r * m..(r + 1) * m];
            *x = row.iter().zip(&self.demand).map(|(b, n)| b * n).sum();
        }
        self.xb = xb;
        self.pivots_since_refactor = 0;
    }

    /// Pivots to optimality over the pool (Dantzig's rule), at most `max_pivots`. Returns
    /// whether it reached optimality.
    pub fn solve(&mut self, max_pivots: usize) -> bool {
        self.solve_until(max_pivots, None)
    }

    /// [`Lp::solve`], counting each pivot's work (the pool it prices plus the m² update of the
    /// inverse) on `stop`'s meter and stopping when that phase's share is spent: the basis stays
    /// feasible, only not optimal.
    pub fn solve_until(&mut self, max_pivots: usize, stop: Option<crate::work::Stop>) -> bool {
        let m = self.m;
        let mut w = vec![0.0; m];
        // The duals, updated with each pivot (O(m) rather than O(m²) from the inverse) and
        // recomputed whenever the inverse is rebuilt.
        let mut pi = self.duals();
        for _ in 0..max_pivots {
            if let Some(stop) = stop {
                if stop.passed() {
                    return false;
                }
                stop.spend((self.cols.len() + m * m) as u64);
            }
            // Entering variable: the most negative reduced cost, relative to the column's cost.
            let mut best: Option<(f64, Var)> = None;
            for (j, c) in self.cols.iter().enumerate() {
                let d = c.cost - c.entries.iter().map(|&(i, a)| pi[i] * a).sum::<f64>();
                if d < -EPS * (1.0 + c.cost.abs()) && best.is_none_or(|(b, _)| d < b) {
                    best = Some((d, Var::Col(j)));
                }
            }
            for (i, &p) in pi.iter().enumerate() {
                if p < -EPS && best.is_none_or(|(b, _)| p < b) {
                    best = Some((p, Var::Surplus(i)));
                }
            }
            let Some((reduced, enter)) = best else {
                return true;
            };
            let entries = self.entries(enter);
            self.ftran(&entries, &mut w);
            // Leaving row: the smallest ratio; ties to the largest pivot element.
            let mut leave: Option<(f64, f64, usize)> = None;
            for (r, &wr) in w.iter().enumerate() {
                if wr > 1e-9 {
                    let t = self.xb[r].max(0.0) / wr;
                    let better = match leave {
                        None => true,
                        Some((bt, bw, _)) => t < bt - 1e-12 || (t <= bt + 1e-12 && wr > bw),
                    };
                    if better {
                        leave = Some((t, wr, r));
                    }
                }
            }
            let Some((t, _, r)) = leave else {
                // Unbounded cannot happen with non-negative costs; stop rather than loop.
                return false;
            };
            for (k, x) in self.xb.iter_mut().enumerate() {
                if k == r {
                    *x = t;
                } else {
                    *x -= w[k] * t;
                }
            }
            let piv = w[r];
            let (before, rest) = self.binv.split_at_mut(r * m);
            let (prow, after) = rest.split_at_mut(m);
            for v in prow.iter_mut() {
                *v /= piv;
            }
            for (k, row) in before.chunks_mut(m).enumerate() {
                let f = w[k];
                if f != 0.0 {
                    for (a, b) in row.iter_mut().zip(prow.iter()) {
                        *a -= f * b;
                    }
                }
            }
            for (k, row) in after.chunks_mut(m).enumerate() {
                let f = w[r + 1 + k];
                if f != 0.0 {
                    for (a, b) in row.iter_mut().zip(prow.iter()) {
                        *a -= f * b;
                    }
                }
            }
            self.basis[r] = enter;
            // π' = π + d_q · (row r of the new inverse): the entering column prices out to 0.
            for (p, b) in pi.iter_mut().zip(&self.binv[r * m..(r + 1) * m]) {
                *p += reduced * b;
            }
            self.pivots_since_refactor += 1;
            if self.pivots_since_refactor >= 64 {
                self.refactor();
                pi = self.duals();
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use karpenter_capi_testkit::rng::Lcg;

    #[test]
    fn covering_lp_optimum_and_duals() {
        // Two rows needing 4 and 3; columns: (2,0) at 3, (0,3) at 4, (1,1) at 2.5.
        let mut lp = Lp::new(vec![4.0, 3.0], 100.0);
        lp.add(Column {
            cost: 3.0,
            entries: vec![(0, 2.0)],
        });
        lp.add(Column {
            cost: 4.0,
            entries: vec![(1, 3.0)],
        });
        lp.add(Column {
            cost: 2.5,
            entries: vec![(0, 1.0), (1, 1.0)],
        });
        assert!(lp.solve(100));
        assert!(!lp.infeasible());
        // Optimum: 3×(1,1) + 0.5×(2,0) = 7.5 + 1.5 = 9.0.
        assert!((lp.objective() - 9.0).abs() < 1e-9, "{}", lp.objective());
        let pi = lp.duals();
        // Strong duality: n·pi equals the optimum.
        assert!((4.0 * pi[0] + 3.0 * pi[1] - 9.0).abs() < 1e-9);
        let x = lp.values();
        assert!((x[2] - 3.0).abs() < 1e-9 && (x[0] - 0.5).abs() < 1e-9);
    }

    /// Random covering LPs large enough for many pivots and rebuilt inverses: at the end the
    /// duals (recomputed from the inverse, not the ones the pivots updated) price every column
    /// and every surplus at zero or more, and prove the objective (strong duality).
    #[test]
    fn pivots_reach_a_proven_optimum() {
        let mut rng = Lcg(7);
        let mut next = move |n: u64| rng.below(n);
        for _ in 0..20 {
            let m = 5 + next(40) as usize;
            let demand: Vec<f64> = (0..m).map(|_| 1.0 + next(30) as f64).collect();
            let mut lp = Lp::new(demand.clone(), 1e4);
            let mut cols = Vec::new();
            for _ in 0..(3 * m + next(100) as usize) {
                let mut entries: Vec<(usize, f64)> = Vec::new();
                for _ in 0..1 + next(4) {
                    let row = next(m as u64) as usize;
                    if !entries.iter().any(|e| e.0 == row) {
                        entries.push((row, 1.0 + next(5) as f64));
                    }
                }
                entries.sort_by_key(|e| e.0);
                let col = Column {
                    cost: 1.0 + next(50) as f64,
                    entries,
                };
                cols.push(col.clone());
                lp.add(col);
            }
            assert!(lp.solve(10_000), "optimal within the pivot limit");
            let pi = lp.duals();
            let scale = 1e-6 * (1.0 + lp.objective().abs());
            for c in &cols {
                let reduced = c.cost - c.entries.iter().map(|&(i, a)| pi[i] * a).sum::<f64>();
                assert!(reduced >= -scale, "a column prices out at {reduced}");
            }
            assert!(
                pi.iter().all(|&p| p >= -scale),
                "a surplus prices out: {pi:?}"
            );
            let dual: f64 = pi.iter().zip(&demand).map(|(p, n)| p * n).sum();
            assert!(
                (dual - lp.objective()).abs() <= scale,
                "{dual} vs {}",
                lp.objective()
            );
        }
    }
}
