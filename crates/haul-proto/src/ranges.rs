//! Sets of extended sequence numbers kept as inclusive ranges, each with a value.
//!
//! Used for both loss lists: the sender's (what to retransmit) and the receiver's (what is missing,
//! with the time it was last reported).

use std::collections::BTreeMap;

/// Disjoint, non-adjacent inclusive ranges of `u64`, each carrying a `V`.
#[derive(Debug, Clone, Default)]
pub struct RangeMap<V: Copy> {
    /// start → (inclusive end, value)
    ranges: BTreeMap<u64, (u64, V)>,
    count: u64,
}

impl<V: Copy> RangeMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self {
            ranges: BTreeMap::new(),
            count: 0,
        }
    }

    /// Number of numbers held.
    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Smallest number held.
    pub fn first(&self) -> Option<u64> {
        self.ranges.keys().next().copied()
    }

    /// Adds `start..=end`, merging with what it overlaps or touches; merged ranges take `value`.
    /// Returns how many numbers were new.
    pub fn insert(&mut self, start: u64, end: u64, value: V) -> u64 {
        if start > end {
            return 0;
        }
        let mut new_start = start;
        let mut new_end = end;
        let mut covered = 0;
        // A range starting before `start` that reaches it (or touches it).
        if let Some((&s, &(e, _))) = self.ranges.range(..start).next_back() {
            if e.saturating_add(1) >= start {
                new_start = s;
                new_end = new_end.max(e);
                covered += e - s + 1;
                self.ranges.remove(&s);
            }
        }
        // Ranges starting inside `start..=end+1`.
        while let Some((&s, &(e, _))) = self.ranges.range(start..=end.saturating_add(1)).next() {
            new_end = new_end.max(e);
            covered += e - s + 1;
            self.ranges.remove(&s);
        }
        let total = new_end - new_start + 1;
        self.ranges.insert(new_start, (new_end, value));
        self.count = self.count - covered + total;
        total - covered
    }

    /// Removes `start..=end`, splitting ranges as needed. Returns how many numbers were removed.
    pub fn remove_range(&mut self, start: u64, end: u64) -> u64 {
        if start > end {
            return 0;
        }
        let mut removed = 0;
        let first_key = match self.ranges.range(..=start).next_back() {
            Some((&s, &(e, _))) if e >= start => s,
            _ => start,
        };
        let keys: Vec<u64> = self
            .ranges
            .range(first_key..=end)
            .map(|(&s, _)| s)
            .collect();
        for s in keys {
            let Some((e, v)) = self.ranges.remove(&s) else {
                continue;
            };
            let cut_start = s.max(start);
            let cut_end = e.min(end);
            removed += cut_end - cut_start + 1;
            if s < cut_start {
                self.ranges.insert(s, (cut_start - 1, v));
            }
            if e > cut_end {
                self.ranges.insert(cut_end + 1, (e, v));
            }
        }
        self.count -= removed;
        removed
    }

    /// Whether every number of `start..=end` is held.
    pub fn contains_range(&self, start: u64, end: u64) -> bool {
        self.ranges
            .range(..=start)
            .next_back()
            .is_some_and(|(_, &(e, _))| e >= end)
    }

    /// Removes one number. Returns whether it was held.
    pub fn remove(&mut self, n: u64) -> bool {
        self.remove_range(n, n) == 1
    }

    /// Removes every number below `n`.
    pub fn remove_below(&mut self, n: u64) {
        if let Some(first) = self.first() {
            if first < n {
                self.remove_range(first, n - 1);
            }
        }
    }

    /// Removes and returns the smallest number.
    pub fn pop_first(&mut self) -> Option<u64> {
        let first = self.first()?;
        self.remove(first);
        Some(first)
    }

    /// The ranges in order, with their values.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64, V)> + '_ {
        self.ranges.iter().map(|(&s, &(e, v))| (s, e, v))
    }

    /// The ranges in order, with mutable values.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u64, u64, &mut V)> + '_ {
        self.ranges.iter_mut().map(|(&s, (e, v))| (s, *e, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        #[test]
        fn behaves_like_a_set(ops in proptest::collection::vec((0u8..3, 0u64..200, 0u64..20), 1..200)) {
            let mut map = RangeMap::<()>::new();
            let mut model = BTreeSet::new();
            for (op, a, len) in ops {
                let b = a + len;
                match op {
                    0 => {
                        let added = map.insert(a, b, ());
                        let before = model.len();
                        model.extend(a..=b);
                        prop_assert_eq!(added as usize, model.len() - before);
                    }
                    1 => {
                        let removed = map.remove_range(a, b);
                        let before = model.len();
                        model.retain(|x| *x < a || *x > b);
                        prop_assert_eq!(removed as usize, before - model.len());
                    }
                    _ => {
                        map.remove_below(a);
                        model.retain(|x| *x >= a);
                    }
                }
                prop_assert_eq!(map.count() as usize, model.len());
                prop_assert_eq!(map.first(), model.iter().next().copied());
                prop_assert_eq!(map.contains_range(a, b), (a..=b).all(|x| model.contains(&x)));
                let flat: Vec<u64> = map.iter().flat_map(|(s, e, _)| s..=e).collect();
                prop_assert_eq!(flat, model.iter().copied().collect::<Vec<_>>());
                // Ranges stay disjoint and non-adjacent.
                let r: Vec<_> = map.iter().collect();
                for w in r.windows(2) {
                    prop_assert!(w[0].1 + 1 < w[1].0);
                }
            }
        }
    }
}
