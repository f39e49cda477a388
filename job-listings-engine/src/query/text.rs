use std::borrow::Cow;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
use unicode_segmentation::UnicodeSegmentation;

/// Splits text into lowercased search words.
///
/// Text is first composed (Unicode NFC), so a letter typed as a base letter and a combining
/// accent (`e` + U+0301, as macOS and some keyboards send it) is the same letter as its
/// precomposed form (`é`). Words are then found at Unicode word boundaries (UAX #29) and split
/// again at any character that is not a letter, a digit or a mark within a word (an accent, a
/// vowel sign), so `node.js` is the words `node` and `js` and `C++` is `c`. Queries and
/// documents go through this one function, so they always agree.
pub fn words(text: &str) -> impl Iterator<Item = String> {
    let mut all = Vec::new();
    for_each_word(text, &mut String::new(), |w| all.push(w.to_owned()));
    all.into_iter()
}

/// Calls `f` with each word of `text`, as [`words`] splits and lowercases them, without
/// allocating for words that are already lowercase ASCII (the common case when indexing).
///
/// UAX #29 always breaks at ASCII whitespace, so only the pieces between ASCII whitespace
/// that hold a non-ASCII character go through the (much slower) Unicode segmentation; the
/// text between them is split as ASCII in one go.
pub(crate) fn for_each_word(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    split_ascii_runs(text, |piece| match piece {
        Piece::Ascii(run) => ascii_lowercase_words(run, buf, &mut f),
        // Whole-word lowercasing: it is context-sensitive (a capital sigma at the end of a
        // word becomes `ς`, elsewhere `σ`), character by character is not.
        Piece::Unicode(piece) => unicode_words(piece).for_each(|w| f(&w.to_lowercase())),
    });
}

/// A part of a text, as [`split_ascii_runs`] cuts it.
enum Piece<'a> {
    /// ASCII text that begins and ends at the text's ends or at ASCII whitespace.
    Ascii(&'a str),
    /// Text between ASCII whitespace that holds a non-ASCII character, composed (NFC).
    Unicode(&'a str),
}

/// Cuts `text` into ASCII runs and the pieces between them that hold a non-ASCII
/// character, and calls `visit` with each, in order. Every word of the text is a word of one
/// run or one piece.
///
/// UAX #29 always breaks at ASCII whitespace, so only the pieces between ASCII whitespace
/// that hold a non-ASCII character need the (much slower) Unicode segmentation; the text
/// between them is split as ASCII in one go.
fn split_ascii_runs(text: &str, mut visit: impl FnMut(Piece<'_>)) {
    if text.is_ascii() {
        return visit(Piece::Ascii(text));
    }
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = bytes[from..].iter().position(|b| !b.is_ascii()) {
        let at = from + offset;
        // ASCII whitespace is never part of a multi-byte character, so both ends are
        // character boundaries.
        let start = bytes[from..at]
            .iter()
            .rposition(u8::is_ascii_whitespace)
            .map_or(from, |p| from + p + 1);
        let end = bytes[at..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .map_or(bytes.len(), |p| at + p);
        visit(Piece::Ascii(&text[from..start]));
        // No composition reaches across ASCII whitespace, so composing each piece on its own
        // composes the whole text.
        visit(Piece::Unicode(&composed(&text[start..end])));
        from = end;
    }
    visit(Piece::Ascii(&text[from..]));
}

/// Whether every one of `wanted` (words as [`words`] makes them) is a word of one of
/// `texts`, as if each text were split with [`words`], but without splitting the ASCII runs
/// of the texts at all: a word is searched for in them directly, case-insensitively, at
/// word boundaries (an ASCII word is a longest run of ASCII letters and digits). Stops after
/// the text in which the last of them was found. The change feed and the webhook matcher
/// decide this for every job they look at, on posts of thousands of bytes.
pub(crate) fn has_all_words(wanted: &[String], texts: &[&str]) -> bool {
    let mut missing: Vec<&str> = wanted.iter().map(String::as_str).collect();
    // Each once: a word found is taken out once.
    missing.sort_unstable();
    missing.dedup();
    for text in texts {
        split_ascii_runs(text, |piece| match piece {
            Piece::Ascii(run) => missing.retain(|w| !has_ascii_word(run.as_bytes(), w.as_bytes())),
            Piece::Unicode(piece) => {
                for word in unicode_words(piece) {
                    let word = word.to_lowercase();
                    missing.retain(|w| *w != word);
                }
            }
        });
        if missing.is_empty() {
            return true;
        }
    }
    false
}

/// Whether ASCII `text` has `word` among its words: `word` must be lowercase ASCII letters
/// and digits (any other word is no word of ASCII text), found in `text` in any case with no
/// letter or digit just before or after it.
fn has_ascii_word(text: &[u8], word: &[u8]) -> bool {
    let wordlike = !word.is_empty()
        && word
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
    if !wordlike || word.len() > text.len() {
        return false;
    }
    // Look for the word's rarest byte, in either case: most of the text is skipped by
    // memchr, and a word absent from the text costs little more than one pass over it.
    let (anchor, byte) = word
        .iter()
        .copied()
        .enumerate()
        .min_by_key(|&(_, b)| byte_commonness(b))
        .unwrap_or((0, word[0]));
    let last_start = text.len() - word.len();
    // Every hit is at `anchor` or later: `start` never goes below 0.
    let mut from = anchor;
    while let Some(found) = memchr::memchr2(byte, byte.to_ascii_uppercase(), &text[from..]) {
        let hit = from + found;
        from = hit + 1;
        let start = hit - anchor;
        if start > last_start {
            return false;
        }
        let end = start + word.len();
        let bounded = (start == 0 || !text[start - 1].is_ascii_alphanumeric())
            && (end == text.len() || !text[end].is_ascii_alphanumeric());
        if bounded && text[start..end].eq_ignore_ascii_case(word) {
            return true;
        }
    }
    false
}

/// How common a lowercase letter or digit is in English text (higher: more common), to
/// pick the byte of a word that memchr finds least often.
fn byte_commonness(b: u8) -> u8 {
    const BY_FREQUENCY: &[u8] = b"zqxjkvbpygfwmucldrhsnioate";
    match BY_FREQUENCY.iter().position(|&c| c == b) {
        Some(rank) => rank as u8 + 10,
        // Digits: rarer than most letters in prose.
        None => 5,
    }
}

fn ascii_lowercase_words(text: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
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

/// `text` in Unicode NFC; borrowed when it already is, as nearly all text is.
fn composed(text: &str) -> Cow<'_, str> {
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        IsNormalized::No | IsNormalized::Maybe => Cow::Owned(text.nfc().collect()),
    }
}

/// Each word of `text` as [`words`] reads it, with where it lies in `text` (its bytes), for
/// showing the words in place. Found the way [`words`] finds them, on the text as written
/// rather than composed, so a word whose letters are written decomposed lies where they are.
pub(crate) fn word_spans(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut spans = Vec::new();
    for (at, segment) in text.unicode_word_indices() {
        let mut from = 0;
        for (i, c) in segment.char_indices().chain([(segment.len(), ' ')]) {
            if i < segment.len() && (c.is_alphanumeric() || is_mark_within_a_word(c)) {
                continue;
            }
            let piece = &segment[from..i];
            if piece.chars().any(char::is_alphanumeric) {
                spans.push((at + from..at + i, composed(piece).to_lowercase()));
            }
            from = i + c.len_utf8();
        }
    }
    spans
}

/// Words by UAX #29, split again at every character that is neither a letter, a digit nor a
/// [mark within a word](is_mark_within_a_word); a piece without a letter or digit (marks
/// alone) is no word.
fn unicode_words(text: &str) -> impl Iterator<Item = &str> {
    text.unicode_words()
        .flat_map(|w| w.split(|c: char| !c.is_alphanumeric() && !is_mark_within_a_word(c)))
        .filter(|w| w.chars().any(char::is_alphanumeric))
}

/// A combining mark that is part of the letter before it: an accent with no precomposed
/// letter, a vowel sign, a virama. Not a variation selector, which picks a glyph (U+FE0F, the
/// emoji form of `ℹ`), nor an enclosing mark, which draws around it (U+20E3, the keycap of
/// `5⃣`): they leave the letter what it is.
fn is_mark_within_a_word(c: char) -> bool {
    let picks_a_glyph = matches!(
        c,
        '\u{180B}'..='\u{180D}' | '\u{180F}' | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}'
    );
    let encloses = matches!(
        c,
        '\u{0488}'..='\u{0489}'
            | '\u{1ABE}'
            | '\u{20DD}'..='\u{20E0}'
            | '\u{20E2}'..='\u{20E4}'
            | '\u{A670}'..='\u{A672}'
    );
    is_combining_mark(c) && !picks_a_glyph && !encloses
}

/// The same for ASCII text, where it comes down to splitting at every character that is not
/// a letter or digit: UAX #29 never breaks between two ASCII letters or digits, and a segment
/// without one is not a word.
///
/// Scans bytes rather than characters: this is most of the work of indexing a job.
fn ascii_words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        // Both ends sit next to an ASCII byte (or the text's ends), so they are character
        // boundaries even when other parts of `text` are not ASCII.
        text.get(start..at).filter(|w| !w.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The integration tests' reading of the documented rule, on the Unicode crates directly
    // (NFC of the whole text, UAX #29, no fast path): what this module's fast paths must give.
    use crate::query::reference_words as reference;

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
        /// The ASCII fast path splits exactly as the plain reading of the rule does.
        #[test]
        fn ascii_text_splits_as_the_reference_does(text in "[ -~\t\n]{0,80}") {
            let expected = reference::words(&text);
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), expected.clone());
            proptest::prop_assert_eq!(collected(&text), expected);
        }

        /// Any text: composing and splitting piece by piece between ASCII whitespace gives
        /// what the rule gives on the whole text, whatever follows the whitespace (combining
        /// marks, joiners, format characters, variation selectors, enclosing marks).
        #[test]
        fn cutting_at_whitespace_first_splits_as_the_reference_does(
            text in concat!(
                "(\\PC|[ \t\r\n]|[\u{0300}-\u{036F}\u{093E}\u{200D}\u{200B}\u{00AD}]",
                "|[\u{FE0F}\u{20E3}\u{20DD}]){0,60}"
            )
        ) {
            let expected = reference::words(&text);
            proptest::prop_assert_eq!(collected(&text), expected.clone());
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), expected);
        }
    }

    /// What [`has_all_words`] must answer: whether every wanted word is among the words the
    /// reference reading of the rule finds in the texts.
    fn among_the_words(wanted: &[String], texts: &[&str]) -> bool {
        let all: std::collections::HashSet<String> =
            texts.iter().flat_map(|t| reference::words(t)).collect();
        wanted.iter().all(|w| all.contains(w))
    }

    proptest::proptest! {
        /// Searching the ASCII runs directly finds a word exactly when splitting finds it:
        /// at word boundaries only, in any case, with letters that lowercase to ASCII
        /// (the Kelvin sign) and words inside non-ASCII pieces found by splitting.
        #[test]
        fn searching_for_words_agrees_with_splitting(
            texts in proptest::collection::vec(
                concat!(
                    "([a-zA-Z0-9]{1,6}|[ .,:+#/-]{1,2}",
                    "|[\u{212A}éÉßΣς—\u{0301}\u{FE0F}\u{20E3}\u{200D}東ไ]|\\PC){0,40}"
                ),
                1..3,
            ),
            picked in proptest::collection::vec(0usize..64, 0..4),
            extra in proptest::collection::vec("[a-z0-9]{1,4}|[A-Z]{1,3}|[éσ!]{1,2}", 0..2),
        ) {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let found: Vec<String> = refs.iter().flat_map(|t| reference::words(t)).collect();
            let mut wanted: Vec<String> = picked
                .iter()
                .filter_map(|&i| found.get(i % found.len().max(1)).cloned())
                .collect();
            wanted.extend(extra);
            proptest::prop_assert_eq!(
                has_all_words(&wanted, &refs),
                among_the_words(&wanted, &refs),
                "{:?} in {:?}", wanted, refs
            );
        }
    }

    #[test]
    fn a_word_is_found_only_whole_and_in_any_case() {
        let yes = |w: &str, t: &str| has_all_words(&[w.to_owned()], &[t]);
        assert!(yes("rust", "Senior RUST engineer"));
        assert!(yes("rust", "rust"));
        assert!(yes("js", "Node.js"));
        assert!(!yes("rust", "rusty trust"));
        assert!(
            !yes("Rust", "Rust"),
            "a wanted word is lowercase, as words are"
        );
        assert!(!yes("c++", "C++"), "not a word");
        assert!(
            yes("kotlin", "\u{212A}otlin"),
            "the Kelvin sign lowercases to k"
        );
        assert!(yes("zürich", "Zu\u{308}rich office"));
        assert!(yes("2026", "from2025 to 2026"));
        assert!(!yes("2025", "from2025 to 2026"));
        assert!(has_all_words(&[], &["anything"]));
    }

    proptest::proptest! {
        /// Mostly ASCII words with a few non-ASCII characters among them, as in most job
        /// posts: the ASCII text between the non-ASCII pieces is split in one go.
        #[test]
        fn mostly_ascii_text_splits_as_the_reference_does(
            text in "([a-zA-Z0-9.,:'()+#/-]{1,9}|[ \t\r\n]{1,2}|[éüßΣΟ—’•\u{0301}\u{200D}]|\\PC){0,80}"
        ) {
            proptest::prop_assert_eq!(collected(&text), reference::words(&text));
        }

        /// Text as people paste it into posts: letters typed decomposed (a base letter, then
        /// marks in any order), lone marks, emoji and their ZWJ sequences, skin tones, VS16,
        /// keycaps, capital sigmas, CJK, Thai with its vowel signs, beside ASCII words.
        #[test]
        fn unicode_text_splits_as_the_reference_does(
            text in concat!(
                "([a-zA-Z0-9]{1,6}|[ .,'\n-]",
                "|[aeiouAEIOUqQ][\u{0300}-\u{0304}\u{0308}\u{0323}\u{0327}]{1,2}",
                "|[\u{0301}\u{0308}\u{20DD}\u{20E3}\u{FE0F}\u{200D}\u{00AD}]",
                "|[#*0-9]\u{FE0F}\u{20E3}|[\u{2139}\u{2764}]\u{FE0F}",
                "|[\u{1F469}\u{1F468}]\u{200D}[\u{1F4BB}\u{1F52C}]",
                "|\u{1F44D}[\u{1F3FB}-\u{1F3FF}]|\u{1F980}",
                "|[ΣσςΟΔΑΘΗΝ]{1,4}|[東京都大学開発で]|[エンジニアデーター]{1,4}|[かは]\u{3099}",
                "|[\u{0E01}-\u{0E2E}][\u{0E31}\u{0E34}-\u{0E3A}\u{0E47}-\u{0E4E}]{0,2}",
                "|[\u{1100}-\u{1112}][\u{1161}-\u{1175}][\u{11A8}-\u{11C2}]?){0,30}"
            )
        ) {
            let expected = reference::words(&text);
            proptest::prop_assert_eq!(collected(&text), expected.clone());
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), expected);
        }
    }

    /// Text typed decomposed (a base letter and a combining accent) is the same words as
    /// text typed precomposed, and a combining mark without a precomposed form (a Devanagari
    /// virama, a tilde on q) stays inside its word.
    #[test]
    fn decomposed_and_precomposed_text_split_into_the_same_words() {
        assert_eq!(collected("e\u{301}mojis"), ["\u{e9}mojis"]);
        assert_eq!(collected("\u{e9}mojis"), ["\u{e9}mojis"]);
        assert_eq!(
            words("A\u{30a}ngstro\u{308}m Zu\u{308}rich").collect::<Vec<_>>(),
            ["\u{e5}ngstr\u{f6}m", "z\u{fc}rich"]
        );
        assert_eq!(
            collected("Hindi: \u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}"),
            ["hindi", "\u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}"]
        );
        assert_eq!(collected("q\u{303}uery"), ["q\u{303}uery"]);
        // Marks that leave a letter what it is, or stand alone, make no word of their own.
        assert_eq!(
            collected("5\u{fe0f}\u{20e3} \u{2139}\u{fe0f} info"),
            ["5", "\u{2139}", "info"]
        );
        assert_eq!(collected("a_\u{301}_b"), ["a", "b"]);
        assert!(matches!(composed("plain \u{e9}"), Cow::Borrowed(_)));
        assert!(matches!(composed("e\u{301}"), Cow::Owned(_)));
    }

    #[test]
    fn a_capital_sigma_ending_a_word_is_indexed_as_queries_spell_it() {
        for text in ["ΟΔΟΣ Αθηνάς, ΑΘΗΝΑΣ", "ΟΜΙΛΟΣ Labs", "Σ ΣΑΣ"] {
            assert_eq!(collected(text), words(text).collect::<Vec<_>>(), "{text}");
            assert_eq!(collected(text), reference::words(text), "{text}");
        }
        assert_eq!(collected("ΟΔΟΣ"), ["οδος"]);
    }

    #[test]
    fn ascii_edge_cases_split_as_the_reference_does() {
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
            assert_eq!(
                words(text).collect::<Vec<_>>(),
                reference::words(text),
                "{text}"
            );
        }
    }
}
