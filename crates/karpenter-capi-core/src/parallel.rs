//! Independent work on every core: the same function over a slice, results in slice order.
//! Used where the pieces share nothing mutable (least-waste's estimates, documents of a dump).

/// `f` over every item, on up to every core, the results in item order. A panic in a worker
/// is raised again here.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_with(items, || (), |_, item| f(item))
}

/// [`map`] where each worker first makes its own scratch state with `init` (a copy of what the
/// items are tried against) and `f` may change it between items.
pub(crate) fn map_with<T: Sync, S, R: Send>(
    items: &[T],
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
        .min(items.len());
    if threads <= 1 {
        let mut scratch = init();
        return items.iter().map(|item| f(&mut scratch, item)).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let (init, f) = (&init, &f);
                scope.spawn(move || {
                    let mut scratch = init();
                    part.iter()
                        .map(|item| f(&mut scratch, item))
                        .collect::<Vec<R>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_item_order_across_workers() {
        let items: Vec<u64> = (0..1_001).collect();
        let squares = super::map(&items, |x| x * x);
        assert_eq!(squares.len(), 1_001);
        assert!(
            squares
                .iter()
                .enumerate()
                .all(|(i, &s)| s == (i as u64) * (i as u64))
        );
        assert_eq!(super::map(&Vec::<u64>::new(), |x| *x), Vec::<u64>::new());
    }
}
