//! `min_confidence` by bitmap: one bitmap per step of a fixed grid, refined per document only
//! inside the one step the threshold falls in.

use super::bitmap::{from_sorted, portable, Docs};

/// Grid steps per unit of confidence: thresholds 0.05, 0.10 … 1.0 each have a bitmap.
const STEPS: u32 = 20;

/// The grid value of step `i`, computed one way everywhere so membership and lookups agree.
fn step_value(i: u32) -> f64 {
    f64::from(i) / f64::from(STEPS)
}

/// Documents by confidence: `at_least[i - 1]` holds the documents whose confidence is at
/// least `i / 20`. About 20 bits per document at most (dense bitmaps), so a threshold costs
/// one intersection instead of a check of every candidate.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct ConfidenceBitmaps {
    #[serde(with = "portable::list")]
    at_least: Vec<Docs>,
}

impl ConfidenceBitmaps {
    /// Records a document's confidence.
    pub(super) fn insert(&mut self, doc: u32, confidence: f64) {
        if self.at_least.is_empty() {
            self.at_least = vec![Docs::new(); STEPS as usize];
        }
        for i in 1..=STEPS {
            if confidence < step_value(i) {
                break;
            }
            self.at_least[i as usize - 1].add(doc);
        }
    }

    /// Every bitmap.
    pub(super) fn bitmaps(&self) -> impl Iterator<Item = &Docs> {
        self.at_least.iter()
    }

    /// Every bitmap, for renumbering.
    pub(super) fn bitmaps_mut(&mut self) -> impl Iterator<Item = &mut Docs> {
        self.at_least.iter_mut()
    }

    /// The grid step at or above which every document may pass `min` (0: any confidence),
    /// and whether `min` is exactly that step's value (no document then needs a check).
    pub(super) fn step_of(min: f64) -> (u32, bool) {
        // The largest step at or below `min`; step 0 (no bitmap) is "any confidence".
        let mut step = ((min * f64::from(STEPS))
            .floor()
            .clamp(0.0, f64::from(STEPS))) as u32;
        while step > 0 && step_value(step) > min {
            step -= 1;
        }
        while step < STEPS && step_value(step + 1) <= min {
            step += 1;
        }
        (step, step_value(step) == min)
    }

    /// The documents of confidence at least step `step`'s value (`step` in 1..=20); `None`
    /// when no document was ever recorded or past the last step.
    pub(super) fn at_least(&self, step: u32) -> Option<&Docs> {
        self.at_least.get((step as usize).checked_sub(1)?)
    }

    /// Narrows `docs` to those with confidence at least `min`; `confidence_of` gives a
    /// document's exact confidence for the few that share the threshold's grid step.
    pub(super) fn retain_at_least(
        &self,
        docs: &mut Docs,
        min: f64,
        confidence_of: impl Fn(u32) -> f64,
    ) {
        let (step, _) = Self::step_of(min);
        if step > 0 {
            match self.at_least(step) {
                Some(b) => *docs &= b,
                None => docs.clear(),
            }
        }
        self.retain_in_step(docs, min, confidence_of);
    }

    /// Narrows `docs`, documents at or above `min`'s grid step, to those with confidence at
    /// least `min`: only those below the next step can fall short.
    pub(super) fn retain_in_step(
        &self,
        docs: &mut Docs,
        min: f64,
        confidence_of: impl Fn(u32) -> f64,
    ) {
        let (step, exact) = Self::step_of(min);
        if exact {
            return;
        }
        // New bitmaps, not in place: CRoaring subtracts arrays with SIMD only into new ones.
        let boundary = match self.at_least(step + 1) {
            Some(next) => &*docs - next,
            None => docs.clone(),
        };
        // Read out in one call (iterating costs a foreign call a document), and removed in
        // one bitmap operation (one by one costs a container lookup each).
        let mut short = boundary.to_vec();
        short.retain(|&doc| confidence_of(doc) < min);
        if !short.is_empty() {
            *docs = &*docs - &from_sorted(&short);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn narrowed(confidences: &[f64], min: f64) -> Vec<u32> {
        let mut grid = ConfidenceBitmaps::default();
        for (doc, c) in confidences.iter().enumerate() {
            grid.insert(doc as u32, *c);
        }
        let mut docs: Docs = (0..confidences.len() as u32).collect();
        grid.retain_at_least(&mut docs, min, |d| confidences[d as usize]);
        docs.iter().collect()
    }

    #[test]
    fn thresholds_on_and_between_grid_steps_are_exact() {
        let c = [
            0.0, -0.0, 0.05, 0.049_999, 0.5, 0.5000001, 0.73, 0.75, 0.9, 1.0, 0.15,
        ];
        for min in [
            -1.0, -0.0, 0.0, 0.05, 0.05000001, 0.15, 0.5, 0.5000001, 0.74, 0.75, 0.9, 0.99, 1.0,
            1.5,
        ] {
            let expected: Vec<u32> = (0..c.len() as u32)
                .filter(|&d| c[d as usize] >= min)
                .collect();
            assert_eq!(narrowed(&c, min), expected, "min_confidence {min}");
        }
    }
}
