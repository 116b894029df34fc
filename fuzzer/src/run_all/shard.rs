//! `--shard K/N`: which functions of a harness directory one of N machines takes.
//!
//! K counts from 1, as a Slurm array (`--array=1-8`) and a CI matrix (`[1, 2, 3, 4]`) count.
//! Shard K takes the functions whose position in the name-sorted selection is K-1 mod N.
//! Sorted by name, not in the manifest's order, so that the share depends only on the
//! function names a machine reads, never on how a manifest happened to list them; by
//! position, not by a hash of the name, so that the N shares differ by at most one function
//! (a hash leaves 3 functions over 2 shards as 3 and 0 one time in four), and round robin so
//! that a family of neighbours (`gsl_sf_bessel_*`, often equally slow) is spread over the
//! machines instead of landing on one.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// From 1 to `n`.
    pub k: usize,
    pub n: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not K/N with 1 <= K <= N (K counts from 1: --shard 1/4 .. --shard 4/4)");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl Shard {
    /// Whether this shard takes `function` out of `selection` (the functions of the whole
    /// run, in any order).
    pub fn takes(&self, function: &str, selection: &[String]) -> bool {
        let mut sorted: Vec<&str> = selection.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        sorted
            .iter()
            .position(|f| *f == function)
            .is_some_and(|i| i % self.n == self.k - 1)
    }

    /// This shard's share of `selection`, in the selection's order.
    pub fn share(&self, selection: &[String]) -> Vec<String> {
        selection.iter().filter(|f| self.takes(f, selection)).cloned().collect()
    }
}

/// A digest of a manifest's text (64-bit FNV-1a), so that shards can tell whether they fuzzed
/// the same harness directory without the directory at hand: the standard library's hasher
/// may change between Rust releases, and shards may be built by different ones.
pub fn digest(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn k_counts_from_one_and_a_bad_shard_says_so() {
        assert_eq!("2/8".parse::<Shard>(), Ok(Shard { k: 2, n: 8 }));
        for bad in ["0/2", "3/2", "1", "a/2", "1/0", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("K counts from 1"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_shares_cover_the_selection_once_whatever_its_order() {
        let selection = names(&["d", "a", "c", "b", "e"]);
        let shares: Vec<Vec<String>> = (1..=2).map(|k| Shard { k, n: 2 }.share(&selection)).collect();
        assert_eq!(shares, [names(&["a", "c", "e"]), names(&["d", "b"])]);
        let reordered = names(&["e", "b", "a", "d", "c"]);
        let mut again = Shard { k: 1, n: 2 }.share(&reordered);
        again.sort();
        assert_eq!(again, names(&["a", "c", "e"]));
        assert!(Shard { k: 3, n: 8 }.share(&names(&["a", "b"])).is_empty());
    }

    #[test]
    fn the_digest_is_fnv1a() {
        assert_eq!(digest(b""), "cbf29ce484222325");
        assert_eq!(digest(b"a"), "af63dc4c8601ec8c");
    }
}
