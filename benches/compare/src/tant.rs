//! tantivy over the same jobs, in its best configuration for this workload.
//!
//! * Text is pre-tokenized with `job_listings::query::words` and stored whitespace-joined in
//!   fields analysed by a whitespace tokenizer plus lowercasing, so tantivy's terms are exactly
//!   our words: `all` (role, company name and description, for `q`) and `company` (for
//!   `company`). Only document ids are indexed (no frequencies, positions or field norms):
//!   nothing here is scored.
//! * Tags, levels and the company id are raw `STRING` terms; `remote` an indexed bool.
//! * `confidence` (f64, with `-0.0` stored as `0.0`: see [`positive_zero`]) and `posted` (i64
//!   nanoseconds, never truncated to seconds) are fast fields, so their range filters run on
//!   columns.
//! * `rank` is a u64 fast field holding each job's position in (newest `posted_at` first, id
//!   ascending) order, so ordering by that one field ascending is exactly the API's order and
//!   the page's ids come back as ranks (a vector maps a rank to its job id; nothing is read
//!   from a document store).
//! * Every query is a `BooleanQuery` of `Must` clauses (a list is a `Should` group), collected
//!   with `(Count, TopDocs::order_by_fast_field("rank", Asc))` with scoring disabled.
//! * The index lives in RAM and is merged into one segment before it is searched.
//! * For `sort=relevance`, `bm25` holds a job's words as our BM25 counts them (the role's
//!   twice, then the company name's and the post's), indexed with frequencies and field
//!   norms, and the `q` words are scored on it by tantivy's own BM25 (k1 1.2, b 0.75, norms
//!   kept to a byte, so scores and ties differ a little from ours: only totals are compared),
//!   the filters as `ConstScoreQuery`s worth 0, collected with `(Count, TopDocs)` by score.
//!
//! A second configuration (`--sorted-variant`) also sorts the index by `rank` (tantivy's index
//! sorting), so document order is result order, and collects with a small custom collector
//! that counts matches a block at a time and keeps the first page-end documents of each
//! segment: no per-document fast-field read and no top-K heap.

use std::cmp::Reverse;
use std::ops::Bound;

use job_listings::domain::{Job, JobId};
use job_listings::query::{words, JobFilter, JobQuery, SearchResult, Sort};
use tantivy::collector::{Collector, Count, SegmentCollector, TopDocs};
use tantivy::columnar::Column;
use tantivy::query::{
    AllQuery, BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery,
};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STRING,
};
use tantivy::tokenizer::{LowerCaser, TextAnalyzer, WhitespaceTokenizer};
use tantivy::{
    DocId, Index, IndexReader, IndexSettings, IndexSortByField, IndexWriter, Order, ReloadPolicy,
    Score, Searcher, SegmentReader, TantivyDocument, Term,
};

use crate::engine::Engine;

const TOKENIZER: &str = "job_words";

#[derive(Clone, Copy)]
struct Fields {
    all: Field,
    bm25: Field,
    company: Field,
    domain: Field,
    level: Field,
    company_id: Field,
    remote: Field,
    confidence: Field,
    posted: Field,
    rank: Field,
}

/// The tantivy side while documents are being added.
pub struct Builder {
    index: Index,
    writer: IndexWriter,
    fields: Fields,
    rank_of: Vec<u32>,
    ids_by_rank: Vec<JobId>,
    sorted: bool,
}

/// How the index ended up.
pub struct BuildInfo {
    /// Segments as committed, before the merge.
    pub segments_committed: usize,
    /// Segments searched.
    pub segments: usize,
    /// Bytes of the index files (tantivy's own space-usage count).
    pub bytes: u64,
}

/// The searchable tantivy index.
pub struct Tantivy {
    _index: Index,
    _reader: IndexReader,
    searcher: Searcher,
    fields: Fields,
    ids_by_rank: Vec<JobId>,
    sorted: bool,
}

fn nanos(t: chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_nanos_opt()
        .expect("generated times fit in i64 nanoseconds")
}

impl Builder {
    /// An empty in-RAM index for the final jobs whose `(id, posted_at)` are `headers`, in job
    /// number order; the ranks are computed from them up front. With `sorted`, the index is
    /// sorted by rank (see the module docs).
    pub fn new(
        headers: Vec<(JobId, chrono::DateTime<chrono::Utc>)>,
        memory_budget: usize,
        sorted: bool,
    ) -> tantivy::Result<Self> {
        let mut order: Vec<(Reverse<i64>, JobId, u32)> = headers
            .iter()
            .enumerate()
            .map(|(i, (id, t))| (Reverse(nanos(*t)), *id, i as u32))
            .collect();
        drop(headers);
        order.sort_unstable();
        let mut rank_of = vec![0u32; order.len()];
        let mut ids_by_rank = Vec::with_capacity(order.len());
        for (rank, (_, id, i)) in order.into_iter().enumerate() {
            rank_of[i as usize] = rank as u32;
            ids_by_rank.push(id);
        }

        let words_only = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::Basic)
                .set_fieldnorms(false),
        );
        let scored = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqs)
                .set_fieldnorms(true),
        );
        let mut sb = Schema::builder();
        let fields = Fields {
            all: sb.add_text_field("all", words_only.clone()),
            bm25: sb.add_text_field("bm25", scored),
            company: sb.add_text_field("company", words_only),
            domain: sb.add_text_field("domain", STRING),
            level: sb.add_text_field("level", STRING),
            company_id: sb.add_text_field("company_id", STRING),
            remote: sb.add_bool_field("remote", INDEXED),
            confidence: sb.add_f64_field("confidence", FAST),
            posted: sb.add_i64_field("posted", FAST),
            rank: sb.add_u64_field("rank", FAST),
        };
        let index = if sorted {
            Index::builder()
                .schema(sb.build())
                .settings(IndexSettings {
                    sort_by_field: Some(IndexSortByField {
                        field: "rank".to_owned(),
                        order: Order::Asc,
                    }),
                    ..IndexSettings::default()
                })
                .create_in_ram()?
        } else {
            Index::create_in_ram(sb.build())
        };
        index.tokenizers().register(
            TOKENIZER,
            TextAnalyzer::builder(WhitespaceTokenizer::default())
                .filter(LowerCaser)
                .build(),
        );
        let writer = index.writer_with_num_threads(1, memory_budget)?;
        Ok(Self {
            index,
            writer,
            fields,
            rank_of,
            ids_by_rank,
            sorted,
        })
    }

    /// Adds final job number `i`.
    pub fn add(&mut self, i: usize, job: &Job) -> tantivy::Result<()> {
        let f = self.fields;
        let mut doc = TantivyDocument::new();
        let all: Vec<String> = words(&job.role)
            .chain(words(&job.company_name))
            .chain(words(&job.description))
            .collect();
        doc.add_text(f.all, all.join(" "));
        let role: Vec<String> = words(&job.role).collect();
        let counted = role.iter().chain(&all);
        doc.add_text(
            f.bm25,
            counted.map(String::as_str).collect::<Vec<_>>().join(" "),
        );
        doc.add_text(
            f.company,
            words(&job.company_name).collect::<Vec<_>>().join(" "),
        );
        for d in &job.domains {
            doc.add_text(f.domain, d.as_str());
        }
        for s in &job.seniority {
            doc.add_text(f.level, s.as_str());
        }
        doc.add_text(f.company_id, job.company_id.0.to_string());
        doc.add_bool(f.remote, job.remote);
        doc.add_f64(f.confidence, positive_zero(job.confidence.get()));
        doc.add_i64(f.posted, nanos(job.posted_at));
        doc.add_u64(f.rank, u64::from(self.rank_of[i]));
        self.writer.add_document(doc)?;
        Ok(())
    }

    /// Commits, merges everything into one segment (unless `merge` is false) and opens a
    /// searcher.
    pub fn finish(mut self, merge: bool) -> tantivy::Result<(Tantivy, BuildInfo)> {
        self.writer.commit()?;
        let committed = self.index.searchable_segment_ids()?;
        if merge && committed.len() > 1 {
            self.writer.merge(&committed).wait()?;
        }
        self.writer.wait_merging_threads()?;
        let reader = self
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let searcher = reader.searcher();
        let info = BuildInfo {
            segments_committed: committed.len(),
            segments: searcher.segment_readers().len(),
            bytes: searcher.space_usage()?.total().get_bytes(),
        };
        Ok((
            Tantivy {
                _index: self.index,
                _reader: reader,
                searcher,
                fields: self.fields,
                ids_by_rank: self.ids_by_rank,
                sorted: self.sorted,
            },
            info,
        ))
    }
}

/// `-0.0` as `0.0`. tantivy maps f64 to u64 by bit pattern, which puts `-0.0` below `0.0`, so
/// a job stored with confidence `-0.0` (which `Confidence` accepts) would miss
/// `min_confidence=0`, where our `>=` keeps it. Adding `0.0` turns `-0.0` into `0.0` and leaves
/// every other value as it is.
fn positive_zero(x: f64) -> f64 {
    x + 0.0
}

fn term_query(term: Term) -> Box<dyn Query> {
    Box::new(TermQuery::new(term, IndexRecordOption::Basic))
}

/// Any of the terms: one term query, or a `Should` group.
fn any_of(mut terms: Vec<Term>) -> Box<dyn Query> {
    if terms.len() == 1 {
        term_query(terms.pop().expect("one term"))
    } else {
        Box::new(BooleanQuery::new(
            terms
                .into_iter()
                .map(|t| (Occur::Should, term_query(t)))
                .collect(),
        ))
    }
}

impl Tantivy {
    /// The tantivy query for a filter, unscored.
    pub fn query(&self, filter: &JobFilter) -> Box<dyn Query> {
        self.query_scored(filter, false)
    }

    /// The tantivy query for a filter; `scored`: its `q` words scored by BM25 on `bm25` and
    /// every other clause worth 0.
    fn query_scored(&self, filter: &JobFilter, scored: bool) -> Box<dyn Query> {
        let f = self.fields;
        let mut must: Vec<Box<dyn Query>> = Vec::new();
        if !filter.domains.is_empty() {
            must.push(any_of(
                filter
                    .domains
                    .iter()
                    .map(|d| Term::from_field_text(f.domain, d.as_str()))
                    .collect(),
            ));
        }
        if !filter.seniority.is_empty() {
            must.push(any_of(
                filter
                    .seniority
                    .iter()
                    .map(|s| Term::from_field_text(f.level, s.as_str()))
                    .collect(),
            ));
        }
        if filter.remote_only {
            must.push(term_query(Term::from_field_bool(f.remote, true)));
        }
        if let Some(c) = filter.company_id {
            must.push(term_query(Term::from_field_text(
                f.company_id,
                &c.0.to_string(),
            )));
        }
        for w in &filter.company_words {
            must.push(term_query(Term::from_field_text(f.company, w)));
        }
        if !scored {
            for w in &filter.q_words {
                must.push(term_query(Term::from_field_text(f.all, w)));
            }
        }
        if let Some(m) = filter.min_confidence {
            must.push(Box::new(RangeQuery::new(
                Bound::Included(Term::from_field_f64(f.confidence, positive_zero(m.get()))),
                Bound::Unbounded,
            )));
        }
        if let Some(t) = filter.posted_after {
            // Instants outside i64 nanoseconds: before every job, or after every job.
            match t.timestamp_nanos_opt() {
                Some(n) => must.push(Box::new(RangeQuery::new(
                    Bound::Excluded(Term::from_field_i64(f.posted, n)),
                    Bound::Unbounded,
                ))),
                None if t.timestamp() < 0 => {}
                None => return Box::new(tantivy::query::EmptyQuery),
            }
        }
        if scored {
            must = must
                .into_iter()
                .map(|q| Box::new(ConstScoreQuery::new(q, 0.0)) as Box<dyn Query>)
                .collect();
            for w in &filter.q_words {
                must.push(Box::new(TermQuery::new(
                    Term::from_field_text(f.bm25, w),
                    IndexRecordOption::WithFreqs,
                )));
            }
        }
        match must.len() {
            0 => Box::new(AllQuery),
            1 => must.pop().expect("one clause"),
            _ => Box::new(BooleanQuery::new(
                must.into_iter().map(|q| (Occur::Must, q)).collect(),
            )),
        }
    }

    /// A query by relevance: the total and the page's ids, best tantivy BM25 score first.
    fn search_by_score(&self, query: &JobQuery) -> SearchResult {
        let q = self.query_scored(&query.filter, true);
        let top = TopDocs::with_limit(query.per_page.get() as usize)
            .and_offset(query.offset())
            .order_by_score();
        let (total, page) = self
            .searcher
            .search(&*q, &(Count, top))
            .expect("tantivy search");
        let ids = page
            .into_iter()
            .map(|(_, at)| {
                let ranks = self
                    .searcher
                    .segment_reader(at.segment_ord)
                    .fast_fields()
                    .u64("rank")
                    .expect("a rank column");
                let rank = ranks.first(at.doc_id).expect("every document has a rank");
                self.ids_by_rank[rank as usize]
            })
            .collect();
        SearchResult::new(total as u64, ids)
    }
}

/// Counts matches and keeps, per segment, the first `want` documents in document order; on an
/// index sorted by rank those are the segment's best `want`. Fruit: the count and the ranks
/// of the best `want` documents overall, in order.
struct FirstByRank {
    want: usize,
}

struct FirstByRankSegment {
    count: u64,
    want: usize,
    docs: Vec<DocId>,
    ranks: Column<u64>,
}

impl Collector for FirstByRank {
    type Fruit = (u64, Vec<u64>);
    type Child = FirstByRankSegment;

    fn for_segment(
        &self,
        _segment_ord: u32,
        reader: &SegmentReader,
    ) -> tantivy::Result<FirstByRankSegment> {
        Ok(FirstByRankSegment {
            count: 0,
            want: self.want,
            docs: Vec::with_capacity(self.want),
            ranks: reader.fast_fields().u64("rank")?,
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<(u64, Vec<u64>)>) -> tantivy::Result<(u64, Vec<u64>)> {
        let count = fruits.iter().map(|f| f.0).sum();
        let mut ranks: Vec<u64> = fruits.into_iter().flat_map(|f| f.1).collect();
        ranks.sort_unstable();
        ranks.truncate(self.want);
        Ok((count, ranks))
    }
}

impl SegmentCollector for FirstByRankSegment {
    type Fruit = (u64, Vec<u64>);

    fn collect(&mut self, doc: DocId, _score: Score) {
        self.count += 1;
        if self.docs.len() < self.want {
            self.docs.push(doc);
        }
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        self.count += docs.len() as u64;
        let room = self.want - self.docs.len();
        if room > 0 {
            self.docs.extend_from_slice(&docs[..room.min(docs.len())]);
        }
    }

    fn harvest(self) -> (u64, Vec<u64>) {
        let ranks = self
            .docs
            .iter()
            .map(|&d| self.ranks.first(d).expect("every document has a rank"))
            .collect();
        (self.count, ranks)
    }
}

impl Engine for Tantivy {
    fn name(&self) -> &'static str {
        if self.sorted {
            "tantivy (rank-sorted index, custom collector)"
        } else {
            "tantivy (rank tie-break)"
        }
    }

    fn search(&self, query: &JobQuery) -> SearchResult {
        if query.sort == Sort::Relevance && !query.filter.q_words.is_empty() {
            return self.search_by_score(query);
        }
        let q = self.query(&query.filter);
        if self.sorted {
            let offset = query.offset();
            let want = offset + query.per_page.get() as usize;
            let (total, ranks) = self
                .searcher
                .search(&*q, &FirstByRank { want })
                .expect("tantivy search");
            return SearchResult::new(
                total,
                ranks
                    .into_iter()
                    .skip(offset)
                    .map(|r| self.ids_by_rank[r as usize])
                    .collect(),
            );
        }
        let top = TopDocs::with_limit(query.per_page.get() as usize)
            .and_offset(query.offset())
            .order_by_fast_field::<u64>("rank", Order::Asc);
        let (total, page) = self
            .searcher
            .search(&*q, &(Count, top))
            .expect("tantivy search");
        SearchResult::new(
            total as u64,
            page.into_iter()
                .map(|(rank, _)| {
                    self.ids_by_rank[rank.expect("every document has a rank") as usize]
                })
                .collect(),
        )
    }
}
