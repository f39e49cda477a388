//! Why a job matched a search: the words of `q` it holds, and a snippet of its post with
//! them marked.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::text::{word_spans, words};
use crate::domain::Job;

/// How many characters a snippet holds at most, its `**` marks included.
pub const SNIPPET_CHARS: usize = 240;

/// About how many characters of the post a snippet shows before the word it is around.
const CONTEXT_BEFORE: usize = 60;

/// Why a job matched a search (`highlight=true`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Match {
    /// The words of `q`, as the engine reads them, that the job holds (in its role, company
    /// name or post), in `q`'s order.
    pub terms: Vec<String>,
    /// At most 240 characters of the post, around the first of `terms` the post holds (the
    /// post's start when it holds none), each of `terms` in it wrapped in `**`. Without the
    /// marks it is a passage of the post as written.
    pub snippet: String,
}

impl Match {
    /// The match of `job` for the search text `q`.
    pub fn of(job: &Job, q: &str) -> Match {
        let mut asked: Vec<String> = Vec::new();
        for word in words(q) {
            if !asked.contains(&word) {
                asked.push(word);
            }
        }
        let post = word_spans(&job.description);
        let elsewhere: Vec<String> = words(&job.role).chain(words(&job.company_name)).collect();
        let terms: Vec<String> = asked
            .into_iter()
            .filter(|w| elsewhere.contains(w) || post.iter().any(|(_, p)| p == w))
            .collect();
        let marked: Vec<(Range<usize>, String)> = post
            .into_iter()
            .filter(|(_, w)| terms.contains(w))
            .collect();
        // Around the first term the post holds, in `q`'s order.
        let anchor = terms
            .iter()
            .find_map(|t| marked.iter().find(|(_, w)| w == t))
            .map_or(0, |(at, _)| at.start);
        let marked: Vec<Range<usize>> = marked.into_iter().map(|(at, _)| at).collect();
        Match {
            snippet: snippet(&job.description, anchor, &marked),
            terms,
        }
    }
}

/// At most [`SNIPPET_CHARS`] characters of `post` from a little before byte `anchor`, the
/// `marked` byte ranges wrapped in `**`, cut at whitespace where it can be.
fn snippet(post: &str, anchor: usize, marked: &[Range<usize>]) -> String {
    // Back from the anchor by some context, then on to the start of a word.
    let mut start = post[..anchor]
        .char_indices()
        .rev()
        .nth(CONTEXT_BEFORE - 1)
        .map_or(0, |(i, _)| i);
    if start > 0 {
        if let Some(space) = post[start..anchor].find(char::is_whitespace) {
            start += space;
        }
    }
    let text = &post[start..];
    let text = text.trim_start();
    let start = post.len() - text.len();

    let mut out = String::new();
    let mut used = 0;
    let mut at = start;
    let mut marks = marked.iter().filter(|m| m.start >= start).peekable();
    let mut last_space = None;
    while at < post.len() {
        if let Some(m) = marks.peek().filter(|m| m.start == at) {
            let word = &post[m.start..m.end];
            let cost = word.chars().count() + 4;
            if used + cost > SNIPPET_CHARS {
                break;
            }
            out.push_str("**");
            out.push_str(word);
            out.push_str("**");
            used += cost;
            at = m.end;
            marks.next();
            continue;
        }
        let Some(c) = post[at..].chars().next() else {
            break;
        };
        if used + 1 > SNIPPET_CHARS {
            break;
        }
        if c.is_whitespace() {
            last_space = Some(out.len());
        }
        out.push(c);
        used += 1;
        at += c.len_utf8();
    }
    // Cut in the middle of a word: end at the last whitespace instead, if there is one.
    let cut_mid_word = at < post.len()
        && post[at..].chars().next().is_some_and(char::is_alphanumeric)
        && out.chars().last().is_some_and(char::is_alphanumeric);
    if let (true, Some(space)) = (cut_mid_word, last_space) {
        out.truncate(space);
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;

    fn job(role: &str, post: &str) -> Job {
        let mut job = Dataset::generate(1, 1, 1).jobs.remove(0);
        job.role = role.to_owned();
        job.company_name = "Nimbus".to_owned();
        job.description = post.to_owned();
        job
    }

    fn unmarked(snippet: &str) -> String {
        snippet.replace("**", "")
    }

    #[test]
    fn terms_follow_q_and_the_snippet_marks_them_in_place() {
        let post = "We build billing software. You will write Rust and some Go, \
                    and review Rust code with the team. Node.js is a plus.";
        let m = Match::of(
            &job("Backend Engineer", post),
            "RUST engineer nimbus python js",
        );
        assert_eq!(m.terms, ["rust", "engineer", "nimbus", "js"]);
        assert_eq!(
            m.snippet,
            "We build billing software. You will write **Rust** and some Go, and review \
             **Rust** code with the team. Node.**js** is a plus."
        );
        assert!(post.contains(&unmarked(&m.snippet)));
    }

    #[test]
    fn a_long_post_is_cut_around_the_first_term_within_the_limit() {
        let before = "lorem ipsum dolor ".repeat(30);
        let after = " sit amet consectetur".repeat(30);
        let post = format!("{before}we use Rust daily{after}");
        let m = Match::of(&job("Engineer", &post), "rust");
        assert!(m.snippet.chars().count() <= SNIPPET_CHARS, "{}", m.snippet);
        assert!(m.snippet.contains("**Rust**"));
        let plain = unmarked(&m.snippet);
        assert!(post.contains(&plain));
        // Whole words at both ends, some context before the term.
        assert!(
            plain.starts_with("lorem") || plain.starts_with("ipsum") || plain.starts_with("dolor")
        );
        assert!(!plain.ends_with(' '));
        assert!(plain.find("Rust").is_some_and(|i| i >= 40));
    }

    #[test]
    fn a_term_only_in_the_role_is_a_term_and_the_snippet_is_the_posts_start() {
        let m = Match::of(
            &job("Rust Engineer", "Ünïcode café déjà vu. ".repeat(20).trim()),
            "rust cafe café",
        );
        assert_eq!(m.terms, ["rust", "café"]);
        assert!(m.snippet.starts_with("Ünïcode **café** déjà vu."));
        assert!(m.snippet.chars().count() <= SNIPPET_CHARS);
        let none = Match::of(&job("Designer", "Short post."), "rust");
        assert!(none.terms.is_empty());
        assert_eq!(none.snippet, "Short post.");
    }
}
