//! GET /jobs and GET /jobs/{id}.

use job_listings::demo::Dataset;
use job_listings::domain::{Job, JobId, JobStatus};
use reqwest::StatusCode;
use uuid::Uuid;

use super::spawn_app;
use crate::support::data::{
    demo_dataset, has_domain, has_level, id_of, ids, job, known, q_matches, word_set,
};
use crate::support::{at, Resp, TestApp};

/// Hand-made jobs are the only ones posted after 2026-12-01; restricting a search to them
/// lets a test name the exact answer.
const DECEMBER: &str = "posted_after=2026-12-01";

#[tokio::test]
async fn get_jobs_answers_with_the_list_envelope() {
    let app = spawn_app().await;
    let r = app.get_jobs("").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(Resp::keys(&r.body), ["data", "links", "meta", "pagination"]);
    assert_eq!(
        Resp::keys(&r.body["pagination"]),
        ["page", "per_page", "total", "total_pages"]
    );
    assert!(r.body["links"].get("next").is_some() && r.body["links"].get("prev").is_some());
    assert!(r.body["meta"]["filters"].is_object());
    let first = &r.body["data"][0];
    for field in [
        "id",
        "role",
        "company_id",
        "company_name",
        "description",
        "domains",
        "seniority",
        "remote",
        "posted_at",
        "confidence",
    ] {
        assert!(first.get(field).is_some(), "job field {field} missing");
    }
}

#[tokio::test]
async fn get_jobs_defaults_to_page_1_of_20() {
    let app = spawn_app().await;
    let r = app.get_jobs("").await;
    let expected = app.expected_ids(|_| true);
    assert_eq!(r.body["pagination"]["page"], 1);
    assert_eq!(r.body["pagination"]["per_page"], 20);
    assert_eq!(r.total(), expected.len() as u64);
    assert_eq!(
        r.body["pagination"]["total_pages"],
        expected.len().div_ceil(20) as u64
    );
    assert_eq!(r.ids(), expected[..20]);
}

#[tokio::test]
async fn get_jobs_returns_up_to_50_a_page() {
    let app = spawn_app().await;
    let r = app.get_jobs("per_page=50").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["pagination"]["per_page"], 50);
    assert_eq!(r.ids(), app.expected_ids(|_| true)[..50]);
}

#[tokio::test]
async fn get_jobs_lists_only_active_jobs_newest_first_with_ties_by_id_across_all_pages() {
    let app = spawn_app().await;
    let expected = app.expected_ids(|_| true);
    assert!(expected.len() > 300, "the dataset has many active jobs");
    assert_eq!(app.all_job_ids("").await, expected);
    let closed = id_of(&known().closed);
    assert!(!expected.contains(&closed));
}

#[tokio::test]
async fn get_jobs_breaks_a_posted_at_tie_by_id_ascending() {
    let app = spawn_app().await;
    let k = known();
    assert_eq!(k.tie_first.posted_at, k.tie_second.posted_at);
    assert!(k.tie_first.id < k.tie_second.id);
    let r = app
        .get_jobs("domain=data&posted_after=2026-12-07T00:00:00Z")
        .await;
    assert_eq!(r.ids(), ids(&[&k.tie_first, &k.tie_second]));
}

#[tokio::test]
async fn get_jobs_with_page_2_continues_where_page_1_stopped() {
    let app = spawn_app().await;
    let expected = app.expected_ids(|_| true);
    let r = app.get_jobs("per_page=7&page=2").await;
    assert_eq!(r.body["pagination"]["page"], 2);
    assert_eq!(r.ids(), expected[7..14]);
}

#[tokio::test]
async fn get_jobs_past_the_last_page_returns_200_with_empty_data() {
    let app = spawn_app().await;
    let r = app.get_jobs("page=1000").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.ids(), Vec::<String>::new());
    assert_eq!(r.total(), app.expected_ids(|_| true).len() as u64);
    assert!(r.body["links"]["next"].is_null());
}

#[tokio::test]
async fn get_jobs_with_no_match_has_total_0_and_total_pages_0() {
    let app = spawn_app().await;
    let r = app.get_jobs("q=xylophonist").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.ids(), Vec::<String>::new());
    assert_eq!(r.body["pagination"]["total"], 0);
    assert_eq!(r.body["pagination"]["total_pages"], 0);
    assert!(r.body["links"]["next"].is_null());
    assert!(r.body["links"]["prev"].is_null());
}

#[tokio::test]
async fn get_jobs_links_lead_to_the_next_and_previous_pages_keeping_the_filters() {
    let app = spawn_app().await;
    let first = app.get_jobs("domain=ai&per_page=5").await;
    assert!(first.body["links"]["prev"].is_null());
    let next = first.body["links"]["next"]
        .as_str()
        .expect("a next link")
        .to_owned();
    assert!(next.starts_with("/api/v1/jobs?"), "{next}");
    assert!(
        next.contains("domain=ai") && next.contains("per_page=5"),
        "{next}"
    );
    let second = app.get(&next).await;
    assert_eq!(second.status, StatusCode::OK);
    assert_eq!(
        second.ids(),
        app.get_jobs("domain=ai&per_page=5&page=2").await.ids()
    );
    let prev = second.body["links"]["prev"].as_str().expect("a prev link");
    assert_eq!(app.get(prev).await.ids(), first.ids());

    let total_pages = first.body["pagination"]["total_pages"]
        .as_u64()
        .expect("total_pages");
    let last = app
        .get_jobs(&format!("domain=ai&per_page=5&page={total_pages}"))
        .await;
    assert!(!last.ids().is_empty());
    assert!(last.body["links"]["next"].is_null());
}

#[tokio::test]
async fn get_jobs_domain_is_or_within_the_list_and_case_insensitive() {
    let app = spawn_app().await;
    let expected = app.expected_ids(|j| has_domain(j, "design") || has_domain(j, "research"));
    assert_eq!(app.all_job_ids("domain=Design,RESEARCH").await, expected);
    let k = known();
    let december = app
        .get_jobs(&format!("domain=design,research&{DECEMBER}"))
        .await;
    assert_eq!(december.ids(), ids(&[&k.designer, &k.after_midnight]));
}

#[tokio::test]
async fn get_jobs_parameters_are_anded() {
    let app = spawn_app().await;
    let expected =
        app.expected_ids(|j| has_domain(j, "engineering") && has_level(j, "senior") && j.remote);
    assert!(!expected.is_empty());
    assert_eq!(
        app.all_job_ids("domain=engineering&seniority=senior&remote_only=true")
            .await,
        expected
    );
    let k = known();
    let r = app
        .get_jobs(&format!("domain=engineering&seniority=junior&{DECEMBER}"))
        .await;
    assert_eq!(r.ids(), ids(&[&k.tie_second]));
}

#[tokio::test]
async fn get_jobs_seniority_is_or_within_the_list_and_case_insensitive() {
    let app = spawn_app().await;
    let expected = app.expected_ids(|j| has_level(j, "lead") || has_level(j, "principal"));
    assert_eq!(app.all_job_ids("seniority=LEAD,Principal").await, expected);
    let k = known();
    let r = app
        .get_jobs(&format!("seniority=lead,principal&{DECEMBER}"))
        .await;
    assert_eq!(
        r.ids(),
        ids(&[&k.designer, &k.wombat_job, &k.after_midnight])
    );
}

#[tokio::test]
async fn get_jobs_remote_only_true_returns_only_remote_jobs() {
    let app = spawn_app().await;
    assert_eq!(
        app.all_job_ids("remote_only=true").await,
        app.expected_ids(|j| j.remote)
    );
    let k = known();
    let r = app.get_jobs(&format!("remote_only=true&{DECEMBER}")).await;
    assert_eq!(
        r.ids(),
        ids(&[&k.rust_staff, &k.tie_first, &k.after_midnight])
    );
}

#[tokio::test]
async fn get_jobs_remote_only_false_returns_remote_and_on_site_jobs() {
    let app = spawn_app().await;
    let r = app.get_jobs("remote_only=false&per_page=1").await;
    assert_eq!(r.total(), app.expected_ids(|_| true).len() as u64);
}

/// Clients send booleans as they spell them: Python's `requests` sends `True`.
#[tokio::test]
async fn get_jobs_remote_only_takes_true_and_false_in_any_case_and_1_and_0() {
    let app = spawn_app().await;
    let remote = app.expected_ids(|j| j.remote).len() as u64;
    let all = app.expected_ids(|_| true).len() as u64;
    for (value, total) in [
        ("True", remote),
        ("TRUE", remote),
        ("1", remote),
        ("False", all),
        ("0", all),
    ] {
        let r = app
            .get_jobs(&format!("remote_only={value}&per_page=1"))
            .await;
        assert_eq!(r.status, 200, "{value}: {}", r.body);
        assert_eq!(r.total(), total, "{value}");
    }
}

#[tokio::test]
async fn get_jobs_company_matches_whole_words_of_the_company_name_in_any_case() {
    let app = spawn_app().await;
    let k = known();
    let quokka_jobs = ids(&[
        &k.rust_staff,
        &k.designer,
        &k.tie_first,
        &k.tie_second,
        &k.midnight,
    ]);
    assert_eq!(app.get_jobs("company=quokka").await.ids(), quokka_jobs);
    assert_eq!(
        app.get_jobs("company=FROBNITZ%20Quokka").await.ids(),
        quokka_jobs
    );
    // Every word must match; prefixes do not; the post text is not the company name.
    assert_eq!(app.get_jobs("company=quokka%20wombat").await.total(), 0);
    assert_eq!(app.get_jobs("company=quok").await.total(), 0);
    assert_eq!(app.get_jobs("company=zephyrine").await.total(), 0);
    // Demo companies are "<Name> Labs".
    let demo = &app.dataset.companies[0].name;
    let first_word = demo.split(' ').next().expect("a word");
    let expected =
        app.expected_ids(|j| word_set(&j.company_name).contains(&first_word.to_lowercase()));
    assert!(!expected.is_empty());
    assert_eq!(
        app.all_job_ids(&format!("company={first_word}")).await,
        expected
    );
}

#[tokio::test]
async fn get_jobs_q_needs_every_word_in_role_company_or_post_text() {
    let app = spawn_app().await;
    let k = known();
    assert_eq!(
        app.get_jobs("q=zephyrine").await.ids(),
        ids(&[&k.rust_staff, &k.tie_first, &k.wombat_job])
    );
    // "staff" is in the roles, "zephyrine" in the post texts; case does not matter.
    assert_eq!(
        app.get_jobs("q=Zephyrine%20STAFF").await.ids(),
        ids(&[&k.rust_staff, &k.wombat_job])
    );
    // "quokka" is in the company name only.
    assert_eq!(
        app.get_jobs("q=quokka%20zephyrine").await.ids(),
        ids(&[&k.rust_staff, &k.tie_first])
    );
}

#[tokio::test]
async fn get_jobs_q_matches_whole_words_only() {
    let app = spawn_app().await;
    let k = known();
    // "zephyr" is a word of Wombat Zephyr Works, never a prefix of "zephyrine".
    assert_eq!(
        app.get_jobs("q=zephyr").await.ids(),
        ids(&[&k.wombat_job, &k.after_midnight])
    );
    assert_eq!(app.get_jobs("q=zephyrin").await.total(), 0);
    assert_eq!(app.get_jobs("q=marmalad").await.total(), 0);
    assert_eq!(app.get_jobs("q=marmalade").await.ids(), ids(&[&k.designer]));
}

#[tokio::test]
async fn get_jobs_q_node_js_means_the_words_node_and_js() {
    let app = spawn_app().await;
    let expected = app.expected_ids(|j| q_matches(j, "node js"));
    assert!(expected.contains(&id_of(&known().rust_staff)));
    assert!(expected.len() > 1, "demo jobs mention node.js too");
    assert_eq!(app.all_job_ids("q=node.js").await, expected);
    assert_eq!(app.all_job_ids("q=Node.JS").await, expected);
}

#[tokio::test]
async fn get_jobs_q_over_the_demo_data_matches_an_independent_computation() {
    let app = spawn_app().await;
    for q in ["rust kubernetes", "senior engineer", "python remote", "c++"] {
        let expected = app.expected_ids(|j| q_matches(j, q));
        let encoded = q.replace('+', "%2B").replace(' ', "%20");
        assert_eq!(
            app.all_job_ids(&format!("q={encoded}")).await,
            expected,
            "q={q}"
        );
    }
}

/// Every byte but ASCII letters and digits percent-encoded, for a query value.
fn encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Posts as people paste them: the same word typed precomposed and decomposed, capital
/// sigmas, CJK, Thai, emoji with VS16, keycaps and ZWJ sequences. Searches in every spelling
/// find what the tests' own reading of words finds, and the cases worked out by hand.
#[tokio::test]
async fn get_jobs_q_over_unicode_posts_matches_an_independent_computation() {
    let k = known();
    let posted = |day| at(2026, 6, day, 12, 0, 0);
    let post = |n: u128, role: &str, text: &str, day: u32| {
        job(
            JobId(Uuid::from_u128(0x0C0DE_u128 << 64 | n)),
            &k.wombat,
            role,
            text,
            &["engineering"],
            &["senior"],
            true,
            posted(day),
            0.9,
            JobStatus::Active,
        )
    };
    let precomposed = post(
        1,
        "Senior Caf\u{e9} Engineer",
        "Espresso machines in Z\u{fc}rich.",
        1,
    );
    let decomposed = post(
        2,
        "Senior Cafe\u{301} Engineer",
        "Grinders and kettles, A\u{30a}ngstro\u{308}m precision.",
        20,
    );
    let greek = post(
        3,
        "Backend Engineer",
        "Offices at \u{39f}\u{394}\u{39f}\u{3a3} \u{391}\u{398}\u{397}\u{39d}\u{391}\u{3a3} 12.",
        3,
    );
    let cjk = post(
        4,
        "\u{6771}\u{4eac}\u{306e}Rust\u{30a8}\u{30f3}\u{30b8}\u{30cb}\u{30a2}",
        "\u{30c7}\u{30fc}\u{30bf}\u{57fa}\u{76e4}\u{3092}\u{4f5c}\u{308b}",
        4,
    );
    let thai = post(
        5,
        "Data Engineer",
        "\u{e17}\u{e35}\u{e21}\u{e20}\u{e32}\u{e29}\u{e32}\u{e44}\u{e17}\u{e22} pipelines",
        5,
    );
    let emoji = post(
        6,
        "Platform Engineer",
        concat!(
            "We \u{2764}\u{fe0f} Rust \u{1f980}; 4\u{fe0f}\u{20e3} days a week; ",
            "\u{1f469}\u{200d}\u{1f4bb} \u{2139}\u{fe0f}nfo"
        ),
        6,
    );
    let posts = vec![
        precomposed.clone(),
        decomposed.clone(),
        greek.clone(),
        cjk.clone(),
        thai.clone(),
        emoji.clone(),
    ];
    let app = TestApp::builder()
        .seed(demo_dataset())
        .seed(Dataset {
            companies: k.companies(),
            jobs: k.jobs(),
        })
        .seed(Dataset {
            companies: Vec::new(),
            jobs: posts,
        })
        .spawn()
        .await;
    // Worked out by hand: the search words of each spelling.
    let by_hand: Vec<(&str, Vec<&Job>)> = vec![
        ("caf\u{e9}", vec![&decomposed, &precomposed]),
        ("cafe\u{301}", vec![&decomposed, &precomposed]),
        ("CAFE\u{301} senior", vec![&decomposed, &precomposed]),
        ("\u{c5}ngstr\u{f6}m", vec![&decomposed]),
        // Demo posts name Zürich too: another word of the post narrows it to this one.
        ("zu\u{308}rich espresso", vec![&precomposed]),
        ("\u{3bf}\u{3b4}\u{3bf}\u{3c2}", vec![&greek]),
        ("\u{39f}\u{394}\u{39f}\u{3a3}", vec![&greek]),
        ("\u{3b1}\u{3b8}\u{3b7}\u{3bd}\u{3b1}\u{3c2}", vec![&greek]),
        ("\u{6771}\u{4eac}", vec![&cjk]),
        ("\u{30a8}\u{30f3}\u{30b8}\u{30cb}\u{30a2} rust", vec![&cjk]),
        ("\u{30c7}\u{30fc}\u{30bf}", vec![&cjk]),
        ("\u{e44}\u{e17}\u{e22}", vec![&thai]),
        ("\u{e17}\u{e35}", vec![&thai]),
        ("4\u{fe0f}\u{20e3} \u{2139} nfo", vec![&emoji]),
        ("\u{2139}\u{fe0f}nfo", vec![&emoji]),
        // VS16 is no part of a word: it cuts `ℹ️nfo` in two.
        ("\u{2139}nfo", vec![]),
        ("\u{1f980}", vec![]),
        ("\u{1f469}\u{200d}\u{1f4bb}", vec![]),
    ];
    for (q, jobs) in &by_hand {
        let found = app.all_job_ids(&format!("q={}", encoded(q))).await;
        assert_eq!(found, ids(jobs), "q={q:?}, by hand");
        assert_eq!(found, app.expected_ids(|j| q_matches(j, q)), "q={q:?}");
    }
    // Words that the demo data holds too: only the computation says which jobs.
    for q in [
        "zu\u{308}rich",
        "rust \u{2764}\u{fe0f}",
        "senior engineer caf\u{e9}",
        "4",
        "data \u{e17}\u{e35}",
    ] {
        assert_eq!(
            app.all_job_ids(&format!("q={}", encoded(q))).await,
            app.expected_ids(|j| q_matches(j, q)),
            "q={q:?}"
        );
    }
}

#[tokio::test]
async fn get_jobs_min_confidence_keeps_jobs_at_or_above_the_exact_value() {
    let app = spawn_app().await;
    let k = known();
    // The designer's confidence is exactly 0.7 (not representable in f32 either).
    assert_eq!(
        app.get_jobs(&format!("min_confidence=0.7&{DECEMBER}"))
            .await
            .ids(),
        ids(&[&k.rust_staff, &k.designer, &k.after_midnight])
    );
    assert_eq!(
        app.get_jobs(&format!("min_confidence=0.70001&{DECEMBER}"))
            .await
            .ids(),
        ids(&[&k.rust_staff, &k.after_midnight])
    );
    let expected = app.expected_ids(|j| j.confidence.get() >= 0.83);
    assert_eq!(app.all_job_ids("min_confidence=0.83").await, expected);
}

#[tokio::test]
async fn get_jobs_posted_after_is_strictly_after_and_a_bare_date_means_midnight_utc() {
    let app = spawn_app().await;
    let k = known();
    let after_midnight = ids(&[
        &k.rust_staff,
        &k.designer,
        &k.tie_first,
        &k.tie_second,
        &k.wombat_job,
        &k.after_midnight,
    ]);
    assert_eq!(k.midnight.posted_at, at(2026, 12, 1, 0, 0, 0));
    assert_eq!(
        app.get_jobs("posted_after=2026-12-01").await.ids(),
        after_midnight
    );
    assert_eq!(
        app.get_jobs("posted_after=2026-12-01T00:00:00Z")
            .await
            .ids(),
        after_midnight
    );
    assert_eq!(
        app.get_jobs("posted_after=2026-12-01T01:00:00%2B01:00")
            .await
            .ids(),
        after_midnight
    );
    let with_midnight = app.get_jobs("posted_after=2026-11-30T23:59:59Z").await;
    assert!(with_midnight.ids().contains(&id_of(&k.midnight)));
    assert_eq!(with_midnight.total(), 7);
    let cut = at(2026, 10, 1, 0, 0, 0);
    assert_eq!(
        app.all_job_ids("posted_after=2026-10-01").await,
        app.expected_ids(|j| j.posted_at > cut)
    );
}

#[tokio::test]
async fn get_jobs_posted_after_a_far_future_date_returns_nothing() {
    let app = spawn_app().await;
    // Beyond the range of i64 nanoseconds (year 2262): still a valid date, still after
    // every job.
    let r = app.get_jobs("posted_after=2300-01-01").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.total(), 0, "no job is posted after 2300");
    assert_eq!(r.ids(), Vec::<String>::new());
}

#[tokio::test]
async fn get_jobs_posted_after_a_far_past_date_returns_everything() {
    let app = spawn_app().await;
    let r = app.get_jobs("posted_after=1600-01-01&per_page=1").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.total(), app.expected_ids(|_| true).len() as u64);
}

#[tokio::test]
async fn get_jobs_echoes_the_filters_as_it_read_them() {
    let app = spawn_app().await;
    let r = app
        .get_jobs(
            "domain=AI,Design,ai&seniority=Senior&remote_only=true&company=Quokka&q=Node.js%20Rust\
             &min_confidence=0.5&posted_after=2026-12-01",
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let f = &r.body["meta"]["filters"];
    assert_eq!(f["domains"], serde_json::json!(["ai", "design"]));
    assert_eq!(f["seniority"], serde_json::json!(["senior"]));
    assert_eq!(f["remote_only"], true);
    assert_eq!(f["company_words"], serde_json::json!(["quokka"]));
    let mut q: Vec<String> = f["q_words"]
        .as_array()
        .expect("q_words")
        .iter()
        .map(|w| w.as_str().expect("a word").to_owned())
        .collect();
    q.sort();
    assert_eq!(q, ["js", "node", "rust"]);
    assert_eq!(f["min_confidence"], 0.5);
    let parsed: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(f["posted_after"].clone()).expect("an instant");
    assert_eq!(parsed, at(2026, 12, 1, 0, 0, 0));
}

#[tokio::test]
async fn get_job_returns_the_job_with_its_company_enrichment() {
    let app = spawn_app().await;
    let k = known();
    let r = app.get_job(&id_of(&k.rust_staff)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["id"], id_of(&k.rust_staff));
    assert_eq!(r.body["role"], "Staff Rust Engineer");
    assert_eq!(r.body["remote"], true);
    assert_eq!(r.body["confidence"], 0.9);
    assert_eq!(r.body["domains"], serde_json::json!(["engineering", "ai"]));
    let company = &r.body["company"];
    assert_eq!(company["id"], k.quokka.id.to_string());
    assert_eq!(company["name"], "Quokka Frobnitz");
    assert_eq!(company["funding_stage"], "series_a");
    assert_eq!(company["domain"], "quokkafrobnitz.example.org");
    assert_eq!(company["blurb"], "Quokka Frobnitz makes things.");
    assert_eq!(company["enrichment"]["headcount"], 41);
    assert_eq!(
        company["enrichment"]["investors"],
        serde_json::json!(["Marsupial Ventures"])
    );
    assert_eq!(company["enrichment"]["extra"]["mascot"], "Quokka Frobnitz");

    // A demo job too, against the generated company record.
    let demo = app
        .dataset
        .jobs
        .iter()
        .find(|j| j.is_active())
        .expect("an active demo job");
    let c = app
        .dataset
        .companies
        .iter()
        .find(|c| c.id == demo.company_id)
        .expect("its company");
    let r = app.get_job(&id_of(demo)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.body["company"]["enrichment"],
        serde_json::to_value(&c.enrichment).expect("JSON")
    );
}

#[tokio::test]
async fn get_job_shows_the_company_as_last_updated() {
    let app = spawn_app().await;
    let k = known();
    let before = app.get_job(&id_of(&k.rust_staff)).await;
    assert_eq!(
        before.body["company"]["blurb"],
        "Quokka Frobnitz makes things."
    );

    let mut changed = k.quokka.clone();
    changed.blurb = "Quokka Frobnitz makes other things now.".to_owned();
    changed.enrichment.headcount = Some(42);
    app.service
        .upsert_company(changed)
        .await
        .expect("the company is updated");

    let after = app.get_job(&id_of(&k.rust_staff)).await;
    assert_eq!(after.status, StatusCode::OK, "{}", after.text);
    assert_eq!(
        after.body["company"]["blurb"],
        "Quokka Frobnitz makes other things now."
    );
    assert_eq!(after.body["company"]["enrichment"]["headcount"], 42);
}

#[tokio::test]
async fn a_job_read_before_an_update_is_served_as_updated_afterwards() {
    let app = spawn_app().await;
    let job = known().rust_staff.clone();
    let id = id_of(&job);
    // Read it both ways first, so whatever keeps read jobs has the old version.
    let before = app.get_job(&id).await;
    assert_eq!(before.body["role"], job.role.as_str());
    let query = "q=rust&per_page=50";
    let listed = app.get_jobs(query).await;
    assert!(listed.ids().contains(&id), "{}", listed.text);

    let mut changed = job.clone();
    changed.role = "Principal Rust Engineer (updated)".to_owned();
    app.service
        .upsert_job(changed)
        .await
        .expect("the job is updated");

    let after = app.get_job(&id).await;
    assert_eq!(after.status, StatusCode::OK, "{}", after.text);
    assert_eq!(after.body["role"], "Principal Rust Engineer (updated)");
    let listed = app.get_jobs(query).await;
    let row = listed.body["data"]
        .as_array()
        .expect("a data array")
        .iter()
        .find(|j| j["id"] == id.as_str())
        .expect("still listed")
        .clone();
    assert_eq!(row["role"], "Principal Rust Engineer (updated)");
}

#[tokio::test]
async fn get_job_returns_400_naming_id_when_the_id_is_not_a_uuid() {
    let app = spawn_app().await;
    app.get_job("not-a-uuid")
        .await
        .assert_problem(400, "invalid_parameter", Some("id"));
}

#[tokio::test]
async fn get_job_returns_404_for_an_unknown_id() {
    let app = spawn_app().await;
    app.get_job(&Uuid::new_v4().to_string())
        .await
        .assert_problem(404, "not_found", None);
}

/// A closed job is still answered, saying it is closed: a client that kept its id learns
/// that, rather than that it never existed.
#[tokio::test]
async fn get_job_answers_a_closed_job_with_its_status() {
    let app = spawn_app().await;
    let closed = &known().closed;
    let r = app.get_job(&id_of(closed)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["status"], "closed");
    assert_eq!(r.body["id"], id_of(closed));
    assert_eq!(r.body["company"]["id"], closed.company_id.to_string());
    assert!(!app
        .get_jobs("q=zephyrine")
        .await
        .ids()
        .contains(&id_of(closed)));
}

#[tokio::test]
async fn get_job_says_closed_once_the_job_is_closed() {
    let app = spawn_app().await;
    let id = id_of(&known().designer);
    assert_eq!(app.get_job(&id).await.status, StatusCode::OK);
    app.service
        .close_job(known().designer.id)
        .await
        .expect("closed");
    let r = app.get_job(&id).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["status"], "closed");
    assert!(!app.get_jobs("q=marmalade").await.ids().contains(&id));
}

#[tokio::test]
async fn get_job_returns_the_confidence_exactly_as_ingested() {
    let app = spawn_app().await;
    let mut job = crate::support::data::another(&known().designer);
    // The largest f64 below 1: a classifier output, not a short decimal.
    let exact = 0.999_999_999_999_999_9_f64;
    assert!(exact < 1.0);
    job.confidence = job_listings::domain::Confidence::new(exact).expect("in range");
    app.service.upsert_job(job.clone()).await.expect("ingested");
    let r = app.get_job(&job.id.to_string()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // Compare the text: a JSON parser's float rounding is what is in question.
    assert!(
        r.text.contains("\"confidence\":0.9999999999999999,"),
        "confidence changed on the way through the store: {}",
        r.text
    );
}

#[tokio::test]
async fn a_job_is_served_over_http2_to_a_client_with_prior_knowledge() {
    let app = spawn_app().await;
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("an HTTP/2 client");
    let id = known().rust_staff.id;
    let r = h2
        .get(format!("{}/api/v1/jobs/{id}", app.base()))
        .header("x-api-key", &app.keys.enterprise.raw)
        .send()
        .await
        .expect("an answer over HTTP/2");
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers().contains_key("x-ratelimit-remaining"));
    let body: serde_json::Value = r.json().await.expect("a JSON job");
    assert_eq!(body["id"], id.to_string());
    assert_eq!(
        body["company"]["id"],
        known().rust_staff.company_id.to_string()
    );
}

#[tokio::test]
async fn get_jobs_with_a_q_or_company_of_no_words_matches_nothing_and_blank_means_no_filter() {
    let app = spawn_app().await;
    let every = app.expected_ids(|_| true).len() as u64;
    // Symbols and an emoji have no word in them: nothing matches, as Elasticsearch's `match`
    // does, rather than the condition being dropped.
    for query in [
        "q=%21%21%21",
        "q=%2B%2B",
        "company=%F0%9F%A6%98",
        "q=-&company=Quokka",
    ] {
        let r = app.get_jobs(query).await;
        assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.text);
        assert_eq!(r.total(), 0, "{query}");
    }
    let r = app.get_jobs("q=%21%21%21").await;
    assert_eq!(
        r.body["meta"]["filters"]["q_words"],
        serde_json::json!(["!!!"])
    );
    // A word among the symbols is searched for; blank text is no condition at all.
    let rust = app.get_jobs("q=Rust").await.total();
    assert!(rust > 0 && rust < every, "{rust} of {every}");
    assert_eq!(app.get_jobs("q=%2B%2BRust%21").await.total(), rust);
    for blank in ["q=", "q=%20%20", "company=+"] {
        assert_eq!(app.get_jobs(blank).await.total(), every, "{blank}");
    }
}

/// Percent-encoded characters in a path are the characters themselves (RFC 3986 6.2.2.2),
/// as a client library that encodes the braces of a braced id sends them.
#[tokio::test]
async fn percent_encoded_characters_in_the_path_are_the_characters_themselves() {
    let app = spawn_app().await;
    let id = id_of(&app.all_jobs()[0]);
    for path in [format!("%7B{id}%7D"), id.replacen('-', "%2D", 1)] {
        let r = app.get_job(&path).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        assert_eq!(r.body["id"], id.as_str(), "{path}");
    }
    let listed = app.get("/api/v1/%6Aobs?per_page=1").await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    let bad = app.get_job("%3Cjob-id%3E").await;
    bad.assert_problem(400, "invalid_parameter", Some("id"));
    assert!(bad.text.contains("<job-id>"), "{}", bad.text);
    // Bytes that are not UTF-8 are named as they were sent.
    let bad = app.get_job("%FF").await;
    bad.assert_problem(400, "invalid_parameter", Some("id"));
    assert!(bad.text.contains("`%FF`"), "{}", bad.text);
}

/// Answers are rendered once per state of a job and company: a change made while the clock
/// stands still is still a new state, so the next answers show it.
#[tokio::test]
async fn a_job_and_a_company_changed_in_the_same_instant_are_answered_as_changed() {
    let clock = std::sync::Arc::new(job_listings::service::ManualClock::new(at(
        2026, 11, 2, 12, 0, 0,
    )));
    let data = job_listings::demo::Dataset::generate(5, 3, 10);
    let app = crate::support::TestApp::builder()
        .clock(clock)
        .seed(data.clone())
        .spawn()
        .await;
    let mut job = data
        .jobs
        .iter()
        .find(|j| j.is_active())
        .expect("an active job")
        .clone();
    let id = id_of(&job);
    let first = app.get_job(&id).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text);
    let search = format!("company_id={}&per_page=50", job.company_id);
    let listed = app.get_jobs(&search).await;
    assert!(listed.ids().contains(&id));

    job.role = "Renamed While The Clock Stood Still".to_owned();
    app.service.upsert_job(job.clone()).await.expect("ingested");
    let mut company = data
        .companies
        .iter()
        .find(|c| c.id == job.company_id)
        .expect("its company")
        .clone();
    company.blurb = "A blurb written in the same instant.".to_owned();
    app.service
        .upsert_company(company.clone())
        .await
        .expect("the company");

    let second = app.get_job(&id).await;
    assert_eq!(second.body["role"], job.role.as_str());
    assert_eq!(second.body["company"]["blurb"], company.blurb.as_str());
    let updated = |r: &Resp| {
        let text = r.body["updated_at"].as_str().expect("updated_at");
        chrono::DateTime::parse_from_rfc3339(text).expect("an RFC 3339 time")
    };
    assert!(
        updated(&second) > updated(&first),
        "a new state, a later time"
    );
    let listed = app.get_jobs(&search).await;
    let shown = listed.body["data"]
        .as_array()
        .expect("a page")
        .iter()
        .find(|j| j["id"] == id.as_str())
        .expect("the job");
    assert_eq!(shown["role"], job.role.as_str());
}

/// Each write that changes a search's answer, made between two askings of that search,
/// and the answers seen: (total, ids of the page).
async fn answers_across_writes(app: &crate::support::TestApp) -> Vec<(u64, Vec<String>)> {
    let k = known();
    let query = "q=zephyrine&per_page=50";
    let mut seen = Vec::new();
    let ask = async |seen: &mut Vec<(u64, Vec<String>)>| {
        // Asked twice: the second asking is the one a kept result would answer.
        let first = app.get_jobs(query).await;
        let again = app.get_jobs(query).await;
        assert_eq!(again.body, first.body, "nothing was written in between");
        seen.push((again.total(), again.ids()));
    };
    ask(&mut seen).await;
    let new = crate::support::data::another(&k.rust_staff);
    app.service.upsert_job(new).await.expect("a new job");
    ask(&mut seen).await;
    app.service
        .close_job(k.wombat_job.id)
        .await
        .expect("closed");
    ask(&mut seen).await;
    app.service
        .delete_job(k.rust_staff.id)
        .await
        .expect("deleted");
    ask(&mut seen).await;
    seen
}

#[tokio::test]
async fn a_search_asked_again_answers_every_write_made_since() {
    let app = spawn_app().await;
    let seen = answers_across_writes(&app).await;
    let totals: Vec<u64> = seen.iter().map(|(t, _)| *t).collect();
    let start = totals[0];
    assert_eq!(totals, [start, start + 1, start, start - 1]);
    let (wombat, staff) = (id_of(&known().wombat_job), id_of(&known().rust_staff));
    assert!(seen[1].1.contains(&wombat) && !seen[2].1.contains(&wombat));
    assert!(seen[2].1.contains(&staff) && !seen[3].1.contains(&staff));

    // Without kept results the same writes give the same answers.
    let config = job_listings::service::ServiceConfig::default().search_memo_entries(0);
    let fresh = super::spawn_app_with(config).await;
    let unkept = answers_across_writes(&fresh).await;
    let without_new = |s: &[(u64, Vec<String>)]| -> Vec<(u64, usize)> {
        s.iter().map(|(t, ids)| (*t, ids.len())).collect()
    };
    assert_eq!(without_new(&unkept), without_new(&seen));
}
