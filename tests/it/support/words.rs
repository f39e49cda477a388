//! Search words worked out for the oracles from the documented rule alone, on the Unicode
//! crates directly and never on the engine's tokenizer (`job_listings::query::words`), so that
//! an oracle built on them can disagree with it.
//!
//! The rule (docs/api.md, "Search semantics", and the doc of `job_listings::query::words`):
//! 1. the text is composed (Unicode NFC), as a whole;
//! 2. its words are those of UAX #29, as `unicode-segmentation`'s `unicode_words` gives them;
//! 3. each is cut at every character that is not a letter, a digit or a mark within a word
//!    (a combining mark that is neither a variation selector nor an enclosing mark);
//! 4. a piece without a letter or digit is no word, and each word is lowercased whole, so
//!    that a capital sigma ending it becomes `ς`.
//!
//! No fast path, no cutting at whitespace first: this is the slow, plain reading the engine's
//! fast one must agree with. The library's unit tests of `query::text` compile this file too.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// The words of `text`, in order, repeats kept.
pub fn words(text: &str) -> Vec<String> {
    let composed: String = text.nfc().collect();
    let mut out = Vec::new();
    for segment in composed.unicode_words() {
        let mut piece = String::new();
        for c in segment.chars() {
            if is_letter_or_digit(c) || is_mark_within_a_word(c) {
                piece.push(c);
            } else {
                finish(&mut piece, &mut out);
            }
        }
        finish(&mut piece, &mut out);
    }
    out
}

/// Ends a piece: a word if it holds a letter or digit, lowercased whole.
fn finish(piece: &mut String, out: &mut Vec<String>) {
    if piece.chars().any(is_letter_or_digit) {
        out.push(piece.to_lowercase());
    }
    piece.clear();
}

/// Unicode Alphabetic or Numeric (General Category Nd, Nl or No).
fn is_letter_or_digit(c: char) -> bool {
    c.is_alphabetic() || c.is_numeric()
}

/// A combining mark (General Category M) that belongs to the letter before it. Not a
/// variation selector (the `Variation_Selector` property of PropList.txt), which only picks a
/// glyph, and not an enclosing mark (General Category Me in UnicodeData.txt), which draws
/// around a character (a keycap, a circle).
fn is_mark_within_a_word(c: char) -> bool {
    const VARIATION_SELECTORS: &[(char, char)] = &[
        ('\u{180B}', '\u{180D}'),
        ('\u{180F}', '\u{180F}'),
        ('\u{FE00}', '\u{FE0F}'),
        ('\u{E0100}', '\u{E01EF}'),
    ];
    const ENCLOSING_MARKS: &[(char, char)] = &[
        ('\u{0488}', '\u{0489}'),
        ('\u{1ABE}', '\u{1ABE}'),
        ('\u{20DD}', '\u{20E0}'),
        ('\u{20E2}', '\u{20E4}'),
        ('\u{A670}', '\u{A672}'),
    ];
    let within = |ranges: &[(char, char)]| ranges.iter().any(|&(a, b)| (a..=b).contains(&c));
    is_combining_mark(c) && !within(VARIATION_SELECTORS) && !within(ENCLOSING_MARKS)
}
