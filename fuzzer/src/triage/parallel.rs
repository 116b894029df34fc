//! Runs independent jobs (one target process each) on N threads, results in input order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` applied to every item on `jobs` threads; `done(n)` after each finished item.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
    done: impl Fn(usize) + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                done(finished.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_input_order() {
        let items: Vec<u64> = (0..100).collect();
        let out = super::map(&items, 4, |&x| x * x, |_| {});
        assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert!(super::map(&[] as &[u64], 4, |&x| x, |_| {}).is_empty());
    }
}
