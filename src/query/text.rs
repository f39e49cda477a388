use unicode_segmentation::UnicodeSegmentation;

/// Splits text into lowercased search words.
///
/// Words are found at Unicode word boundaries (UAX #29) and then split again at any character
/// that is not a letter or digit, so `node.js` is the words `node` and `js` and `C++` is `c`.
/// Queries and documents go through this one function, so they always agree.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.unicode_words()
        .flat_map(|w| w.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_boundaries_and_punctuation_and_lowercase() {
        let w: Vec<String> = words("Senior Node.js Engineer (Remote) — Zürich, C++").collect();
        assert_eq!(
            w,
            ["senior", "node", "js", "engineer", "remote", "zürich", "c"]
        );
        assert_eq!(words("  ...  ").count(), 0);
    }
}
