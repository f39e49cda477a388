use super::*;
use crate::demo::Dataset;
use crate::domain::JobStatus;
use crate::query::Sort;

/// The first `in_order` jobs loaded and compacted, the rest upserted one by one after,
/// so that they are kept out of order.
fn with_the_rest_out_of_order(jobs: &[Job], in_order: usize) -> JobIndex {
    let (first, rest) = jobs.split_at(in_order);
    let mut index = JobIndex::new();
    index.set_auto_compact(false);
    index.extend(first);
    index.compact();
    for job in rest {
        index.upsert(job);
    }
    index
}

/// `usize::MAX` asks for every match, with jobs in and out of order: it is answered,
/// not a capacity overflow.
#[test]
fn the_top_usize_max_is_every_match() {
    let data = Dataset::generate(3, 10, 600);
    let index = with_the_rest_out_of_order(&data.jobs, 400);
    let active = data.jobs.iter().filter(|j| j.is_active()).count();
    for filter in [
        JobFilter::default(),
        JobFilter::default().with_q(&data.jobs[0].role),
    ] {
        let all = index.search_top(&filter, usize::MAX);
        assert_eq!(all.ids.len() as u64, all.total, "{filter:?}");
        assert_eq!(all.ids, index.search_top(&filter, active).ids);
    }
    assert_eq!(
        index.search_top(&JobFilter::default(), usize::MAX).total,
        active as u64
    );
}

/// Every page, at every depth, of an index where many jobs came out of order: the
/// search for where a deep page starts among them must land on each possible place
/// (before, between and after them, at every bound it doubles through).
#[test]
fn every_page_is_in_result_order_when_many_jobs_came_out_of_order() {
    use crate::domain::{DomainTag, Page, PerPage};
    let data = Dataset::generate(9, 30, 2_400);
    let index = with_the_rest_out_of_order(&data.jobs, 1_200);
    assert!(index.unordered.cardinality() > WALK_AT_MOST as u64);

    let engineering = DomainTag::parse("engineering").ok();
    for filter in [
        JobFilter::default(),
        JobFilter {
            domains: engineering.into_iter().collect(),
            ..JobFilter::default()
        },
    ] {
        let mut expected: Vec<&Job> = data
            .jobs
            .iter()
            .filter(|j| j.is_active() && filter.matches(j))
            .collect();
        expected.sort_by_key(|j| (Reverse(nanos_clamped(j.posted_at)), j.id));
        let expected: Vec<JobId> = expected.iter().map(|j| j.id).collect();
        for per_page in [1, 7, 50] {
            let pages = expected.len() / per_page as usize + 2;
            for page in 1..=pages as u32 {
                let query = JobQuery {
                    filter: filter.clone(),
                    page: Page::new(page).expect("page in range"),
                    per_page: PerPage::new(per_page).expect("per page in range"),
                    facets: Vec::new(),
                    sort: Sort::PostedAt,
                };
                let from = ((page - 1) * per_page) as usize;
                let to = (from + per_page as usize).min(expected.len());
                let found = index.search(&query);
                assert_eq!(found.total, expected.len() as u64);
                assert_eq!(
                    found.ids,
                    expected.get(from..to).unwrap_or_default(),
                    "{filter:?} page {page} of {per_page}"
                );
            }
        }
    }
}

/// A compaction leaves the per-document vectors exactly full; the next job must not
/// reserve room for as many documents again.
#[test]
fn a_job_added_after_a_compaction_grows_the_document_vectors_by_a_sixteenth() {
    let data = Dataset::generate(5, 40, 90_000);
    let mut index = JobIndex::new();
    index.set_auto_compact(false);
    index.insert_in_parts(data.jobs.iter().filter(|j| j.is_active()));
    index.compact();
    let docs = index.slots.len();
    assert!(
        docs > 1 << 16,
        "the test needs more documents than doubling applies to"
    );
    assert_eq!(index.slots.capacity(), docs);

    let newest = data.jobs.iter().map(|j| j.posted_at).max();
    let newer = Job {
        id: JobId::new_random(),
        posted_at: newest.unwrap_or_else(chrono::Utc::now) + chrono::Duration::hours(1),
        status: JobStatus::Active,
        ..data.jobs[0].clone()
    };
    let before = index.heap_bytes();
    index.upsert(&newer);

    let room = docs + docs / 16;
    assert_eq!(index.slots.capacity(), room);
    assert_eq!(index.confidences.capacity(), room);
    assert_eq!(index.ordered.capacity(), room);
    assert_eq!(index.last_seen.capacity(), room);
    assert_eq!(index.signatures.capacity(), room);
    assert_eq!(index.role_keys.capacity(), room);
    // 64 bytes a document of vectors; doubling would have added all of them.
    let grown = index.heap_bytes() - before;
    assert!(
        grown < (64 * docs / 8) as u64,
        "one job grew the index by {grown} bytes"
    );
    let found = index.search_top(&JobFilter::default(), 1);
    assert_eq!(found.ids, vec![newer.id]);
}

/// Counting facets document by document and by intersecting postings agree, on an index with
/// dead and out-of-order documents, after compaction and after a snapshot.
#[test]
fn facets_counted_one_by_one_equal_those_counted_by_postings() {
    use crate::query::Facet;
    let data = Dataset::generate(11, 40, 3_000);
    let mut index = with_the_rest_out_of_order(&data.jobs, 2_000);
    index.set_auto_compact(false);
    for job in data.jobs.iter().step_by(7) {
        let mut changed = job.clone();
        changed.remote = !changed.remote;
        index.upsert(&changed);
    }
    for job in data.jobs.iter().step_by(11) {
        index.remove(job.id);
    }
    let filters = [
        JobFilter::default().with_q("senior"),
        JobFilter {
            remote_only: true,
            ..JobFilter::default()
        },
        JobFilter::default().with_q("rust"),
        JobFilter::default().with_q("nomatchwordatall"),
    ];
    let check = |index: &JobIndex| {
        assert_eq!(index.combos.of_doc.len(), index.slots.len());
        for filter in &filters {
            let matching = index.all_matches(filter);
            // Countries are counted by their postings either way.
            let by_combination = [Facet::Domain, Facet::Seniority, Facet::Remote];
            assert_eq!(
                index.facet_counts_one_by_one(&matching, &by_combination),
                index.facet_counts_by_postings(&matching, &by_combination),
                "{filter:?}"
            );
        }
    };
    check(&index);
    let loaded = JobIndex::from_snapshot(&index.to_snapshot()).expect("a snapshot loads");
    check(&loaded);
    index.compact();
    check(&index);
}

/// Two dense words that leave few matches are intersected on plain words: with jobs in and
/// out of order, dead ones, `min_confidence` and `posted_after`, every page and total is a
/// scan's.
#[test]
fn dense_words_that_leave_few_matches_are_answered_on_words_like_a_scan() {
    use super::dense::Matches;
    use crate::domain::{Confidence, Page, PerPage};
    let data = Dataset::generate(5, 40, 6_000);
    let mut index = with_the_rest_out_of_order(&data.jobs, 4_000);
    // Every 20th job taken out leaves dead documents behind.
    let removed: Vec<JobId> = data.jobs.iter().step_by(20).map(|j| j.id).collect();
    for id in &removed {
        index.remove(*id);
    }
    assert!(!index.dead.is_empty() && !index.unordered.is_empty());
    let dense: Vec<&str> = index
        .text
        .iter()
        .filter(|(_, docs)| !index.is_sparse(docs))
        .map(|(word, _)| &**word)
        .collect();
    let on_words = |filter: &JobFilter| {
        let terms = index.search_terms(filter).expect("the words are indexed");
        matches!(
            index.intersect_adaptive(terms, true),
            Some(Matches::Words(_))
        )
    };
    let pairs: Vec<JobFilter> = dense
        .iter()
        .flat_map(|a| {
            dense
                .iter()
                .map(move |b| JobFilter::default().with_q(&format!("{a} {b}")))
        })
        .filter(on_words)
        .take(12)
        .collect();
    assert!(!pairs.is_empty(), "no two dense words leave few matches");
    let afters: Vec<_> = (1..8)
        .map(|k| data.jobs[data.jobs.len() * k / 8].posted_at)
        .collect();
    for words in pairs {
        let filters = [
            words.clone(),
            words.clone().min_confidence(Confidence::new(0.62).ok()),
        ];
        let after = afters
            .iter()
            .map(|&after| words.clone().posted_after(after));
        for filter in filters.into_iter().chain(after) {
            let mut expected: Vec<&Job> = data
                .jobs
                .iter()
                .filter(|j| j.is_active() && filter.matches(j) && !removed.contains(&j.id))
                .collect();
            expected.sort_by_key(|j| (Reverse(nanos_clamped(j.posted_at)), j.id));
            let expected: Vec<JobId> = expected.iter().map(|j| j.id).collect();
            for page in 1..=(expected.len() / 7 + 2) as u32 {
                let query = JobQuery::new(filter.clone())
                    .page(Page::new(page).expect("page in range"))
                    .per_page(PerPage::new(7).expect("per page in range"));
                let from = ((page - 1) * 7) as usize;
                let to = (from + 7).min(expected.len());
                let found = index.search(&query);
                assert_eq!(found.total, expected.len() as u64, "{filter:?}");
                assert_eq!(
                    found.ids,
                    expected.get(from..to).unwrap_or_default(),
                    "{filter:?} page {page}"
                );
            }
        }
    }
}
