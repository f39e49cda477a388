use unicode_segmentation::UnicodeSegmentation;

/// Splits text into lowercased search words.
///
/// Words are found at Unicode word boundaries (UAX #29) and then split again at any character
/// that is not a letter or digit, so `node.js` is the words `node` and `js` and `C++` is `c`.
/// Queries and documents go through this one function, so they always agree.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let ascii = text.is_ascii();
    let fast = ascii.then(|| ascii_words(text).map(str::to_ascii_lowercase));
    let unicode = (!ascii).then(|| unicode_words(text).map(str::to_lowercase));
    fast.into_iter()
        .flatten()
        .chain(unicode.into_iter().flatten())
}

/// Calls `f` with each word of `text`, as [`words`] splits and lowercases them, without
/// allocating for words that are already lowercase ASCII (the common case when indexing).
pub(crate) fn for_each_word(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    if !text.is_ascii() {
        // Whole-word lowercasing, as `words` does: it is context-sensitive (a capital sigma
        // at the end of a word becomes `ς`, elsewhere `σ`), character by character is not.
        return unicode_words(text).for_each(|w| f(&w.to_lowercase()));
    }
    for w in ascii_words(text) {
        if w.bytes().any(|b| b.is_ascii_uppercase()) {
            buf.clear();
            buf.push_str(w);
            buf.make_ascii_lowercase();
            f(buf);
        } else {
            f(w);
        }
    }
}

/// Words by UAX #29, split again at every character that is not a letter or digit.
fn unicode_words(text: &str) -> impl Iterator<Item = &str> {
    text.unicode_words()
        .flat_map(|w| w.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
}

/// The same for ASCII text, where it comes down to splitting at every character that is not
/// a letter or digit: UAX #29 never breaks between two ASCII letters or digits, and a segment
/// without one is not a word.
fn ascii_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
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

    fn collected(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, &mut String::new(), |w| out.push(w.to_owned()));
        out
    }

    proptest::proptest! {
        /// The ASCII fast path splits exactly as UAX #29 does.
        #[test]
        fn ascii_text_splits_as_unicode_segmentation_does(text in "[ -~\t\n]{0,80}") {
            let unicode: Vec<String> = unicode_words(&text).map(str::to_lowercase).collect();
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), unicode.clone());
            proptest::prop_assert_eq!(collected(&text), unicode);
        }

        /// Any text: the allocation-free walk gives what `words` gives.
        #[test]
        fn for_each_word_gives_what_words_gives(text in "\\PC{0,60}") {
            proptest::prop_assert_eq!(collected(&text), words(&text).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_capital_sigma_ending_a_word_is_indexed_as_queries_spell_it() {
        for text in ["ΟΔΟΣ Αθηνάς, ΑΘΗΝΑΣ", "ΟΜΙΛΟΣ Labs", "Σ ΣΑΣ"] {
            assert_eq!(collected(text), words(text).collect::<Vec<_>>(), "{text}");
        }
        assert_eq!(collected("ΟΔΟΣ"), ["οδος"]);
    }

    #[test]
    fn ascii_edge_cases_split_as_unicode_segmentation_does() {
        for text in [
            "don't",
            "3.14",
            "a_b",
            "x--y",
            "C++ and C#",
            "e-mail@host.io",
            "1,000.5",
            "ABCdef123",
        ] {
            let unicode: Vec<String> = unicode_words(text).map(str::to_lowercase).collect();
            assert_eq!(words(text).collect::<Vec<_>>(), unicode, "{text}");
        }
    }
}
