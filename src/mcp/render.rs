//! The text of a tool's answer, for a model to read: a line per job (role, company, where,
//! when, id) or company, the totals, and what to call next. The structured content beside it
//! carries every field; this text is what a model reasons over, so it stays short.

use std::fmt::Write;

use serde_json::Value;

/// The longest stretch of a job's description quoted in `get_job`'s text, in characters.
const DESCRIPTION_CHARS: usize = 1_500;

/// The text for `tool`'s successful answer `value`.
pub(crate) fn render(tool: &str, value: &Value) -> String {
    let mut out = String::new();
    // Writing to a `String` cannot fail.
    let _ = match tool {
        "search_jobs" | "similar_jobs" => jobs_page(&mut out, value),
        "get_job" => job_detail(&mut out, value),
        "list_companies" => companies_page(&mut out, value),
        "get_company" => company_detail(&mut out, value),
        "follow_changes" => changes(&mut out, value),
        "get_usage" => usage(&mut out, value),
        "create_webhook" | "list_webhooks" => webhooks(&mut out, value),
        "delete_webhook" => write!(out, "Webhook {} deleted.", text(&value["id"])),
        _ => write!(out, "{value}"),
    };
    out
}

/// A JSON string as it is, anything else as JSON writes it; `null` as `-`.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The date of an RFC 3339 time, which is all a listing line needs.
fn day(value: &Value) -> String {
    let t = text(value);
    t.get(..10).map_or(t.clone(), str::to_owned)
}

/// `Role at Company (remote · Berlin), posted 2026-11-20, id …`; a job asked for with
/// `fields` has only some of these, and its line only those.
fn job_line(out: &mut String, job: &Value) -> std::fmt::Result {
    let whole = job.get("role").is_some() && job.get("posted_at").is_some();
    if !whole {
        return partial_job_line(out, job);
    }
    let mut place = Vec::new();
    if job["remote"].as_bool() == Some(true) {
        place.push("remote".to_owned());
    }
    if let Some(location) = job["location"].as_str().filter(|l| !l.is_empty()) {
        place.push(location.to_owned());
    }
    let place = if place.is_empty() {
        String::new()
    } else {
        format!(" ({})", place.join(" · "))
    };
    write!(
        out,
        "{} at {}{place}, posted {}, id {}",
        text(&job["role"]),
        text(&job["company_name"]),
        day(&job["posted_at"]),
        text(&job["id"]),
    )
}

/// The fields a job was asked for with, `name: value`, `id` last as in a whole job's line.
fn partial_job_line(out: &mut String, job: &Value) -> std::fmt::Result {
    let Some(fields) = job.as_object() else {
        return write!(out, "{job}");
    };
    let shown: Vec<String> = fields
        .iter()
        .filter(|(name, _)| *name != "id" && *name != "match")
        .map(|(name, value)| format!("{name}: {}", text(value)))
        .collect();
    if !shown.is_empty() {
        write!(out, "{}, ", shown.join("; "))?;
    }
    write!(out, "id {}", text(&job["id"]))
}

/// `Matched rust, engineer: …**Rust**…` under a job asked for with `highlight`.
fn match_line(out: &mut String, job: &Value) -> std::fmt::Result {
    let Some(matched) = job.get("match") else {
        return Ok(());
    };
    let terms: Vec<String> = matched["terms"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    write!(
        out,
        "\n   Matched {}: {}",
        terms.join(", "),
        text(&matched["snippet"])
    )
}

fn page_line(out: &mut String, value: &Value, noun: &str, tool: &str) -> std::fmt::Result {
    let p = &value["pagination"];
    let (page, pages) = (
        p["page"].as_u64().unwrap_or(1),
        p["total_pages"].as_u64().unwrap_or(0),
    );
    writeln!(
        out,
        "{} {noun} in all; page {page} of {pages} ({} per page).",
        p["total"].as_u64().unwrap_or(0),
        p["per_page"].as_u64().unwrap_or(0),
    )?;
    let listed = value["data"].as_array().map_or(0, Vec::len);
    if listed == 0 && page > 1 {
        writeln!(out, "This page is past the end.")?;
    }
    if page < pages {
        writeln!(out, "More: call {tool} again with page={}.", page + 1)?;
    }
    Ok(())
}

fn warnings(out: &mut String, value: &Value) -> std::fmt::Result {
    for warning in value["meta"]["warnings"].as_array().into_iter().flatten() {
        writeln!(out, "Warning: {}", text(&warning["detail"]))?;
    }
    Ok(())
}

fn facets(out: &mut String, value: &Value) -> std::fmt::Result {
    let Some(facets) = value["meta"]["facets"].as_object() else {
        return Ok(());
    };
    for (name, counts) in facets {
        let listed = match counts {
            Value::Array(values) => values
                .iter()
                .map(|v| format!("{} {}", text(&v["value"]), v["count"]))
                .collect::<Vec<_>>()
                .join(", "),
            Value::Object(split) => split
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        writeln!(out, "Counts by {name}: {listed}")?;
    }
    Ok(())
}

/// `3 events. 1. job.updated: Role at Company …, id …` and where to go on from.
fn changes(out: &mut String, value: &Value) -> std::fmt::Result {
    let events = value["data"].as_array().map_or(&[][..], Vec::as_slice);
    writeln!(out, "{} events.", events.len())?;
    for (i, event) in events.iter().enumerate() {
        write!(out, "{}. {}: ", i + 1, text(&event["type"]))?;
        match event["job"] {
            Value::Null => write!(out, "job {}", text(&event["job_id"]))?,
            ref job => job_line(out, job)?,
        }
        out.push('\n');
    }
    let next = text(&value["next_cursor"]);
    match value["has_more"].as_bool() {
        Some(true) => writeln!(out, "More now: call follow_changes with after={next}."),
        _ => writeln!(
            out,
            "Up to date: call follow_changes with after={next} later for what changes next."
        ),
    }
}

fn jobs_page(out: &mut String, value: &Value) -> std::fmt::Result {
    page_line(out, value, "jobs match", "search_jobs")?;
    warnings(out, value)?;
    facets(out, value)?;
    for (i, job) in value["data"].as_array().into_iter().flatten().enumerate() {
        write!(out, "{}. ", i + 1)?;
        job_line(out, job)?;
        match_line(out, job)?;
        out.push('\n');
    }
    Ok(())
}

fn job_detail(out: &mut String, job: &Value) -> std::fmt::Result {
    job_line(out, job)?;
    writeln!(out, ".")?;
    let list = |v: &Value| {
        v.as_array()
            .map(|a| a.iter().map(text).collect::<Vec<_>>().join(", "))
            .unwrap_or_default()
    };
    writeln!(
        out,
        "Domains: {}; seniority: {}; status: {}; confidence {}; company_id {}.",
        list(&job["domains"]),
        list(&job["seniority"]),
        text(&job["status"]),
        text(&job["confidence"]),
        text(&job["company_id"]),
    )?;
    if let Some(salary) = job["salary"].as_object() {
        writeln!(out, "Salary: {}", Value::Object(salary.clone()))?;
    }
    if let Some(company) = job["company"].as_object() {
        writeln!(
            out,
            "Company: {} ({}, {}): {}",
            text(&company["name"]),
            text(&company["funding_stage"]),
            text(&company["domain"]),
            text(&company["blurb"]),
        )?;
    }
    writeln!(out, "Source: {}", text(&job["source_url"]))?;
    let description = text(&job["description"]);
    let mut quoted: String = description.chars().take(DESCRIPTION_CHARS).collect();
    if quoted.len() < description.len() {
        quoted.push_str(" […]");
    }
    write!(out, "\n{quoted}")
}

fn company_line(out: &mut String, company: &Value) -> std::fmt::Result {
    write!(
        out,
        "{} ({}, {}), {} active jobs, id {}: {}",
        text(&company["name"]),
        text(&company["funding_stage"]),
        text(&company["domain"]),
        text(&company["active_jobs_total"]),
        text(&company["id"]),
        text(&company["blurb"]),
    )
}

fn companies_page(out: &mut String, value: &Value) -> std::fmt::Result {
    page_line(out, value, "companies", "list_companies")?;
    warnings(out, value)?;
    facets(out, value)?;
    for (i, company) in value["data"].as_array().into_iter().flatten().enumerate() {
        write!(out, "{}. ", i + 1)?;
        company_line(out, company)?;
        out.push('\n');
    }
    Ok(())
}

fn company_detail(out: &mut String, company: &Value) -> std::fmt::Result {
    company_line(out, company)?;
    out.push('\n');
    let jobs = company["active_jobs"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if !jobs.is_empty() {
        writeln!(out, "Newest active jobs:")?;
    }
    for (i, job) in jobs.iter().enumerate() {
        write!(out, "{}. ", i + 1)?;
        job_line(out, job)?;
        out.push('\n');
    }
    Ok(())
}

fn usage(out: &mut String, report: &Value) -> std::fmt::Result {
    write!(
        out,
        "Plan {}: {} of {} calls used this period (since {}); {} left.",
        text(&report["plan"]),
        text(&report["calls_used"]),
        text(&report["monthly_quota"]),
        text(&report["period_start"]),
        text(&report["calls_remaining"]),
    )
}

fn webhook_line(out: &mut String, hook: &Value) -> std::fmt::Result {
    let domains = hook["domain_filters"]
        .as_array()
        .filter(|d| !d.is_empty())
        .map_or("all domains".to_owned(), |d| {
            d.iter().map(text).collect::<Vec<_>>().join(", ")
        });
    write!(
        out,
        "Webhook {} → {} ({}; {domains}{})",
        text(&hook["id"]),
        text(&hook["callback_url"]),
        text(&hook["status"]),
        if hook["remote_only"].as_bool() == Some(true) {
            "; remote only"
        } else {
            ""
        },
    )
}

fn webhooks(out: &mut String, value: &Value) -> std::fmt::Result {
    if value.get("data").is_some() {
        page_line(out, value, "webhooks", "list_webhooks")?;
        for hook in value["data"].as_array().into_iter().flatten() {
            webhook_line(out, hook)?;
            out.push('\n');
        }
        return Ok(());
    }
    webhook_line(out, value)?;
    if let Some(secret) = value["secret"].as_str() {
        write!(
            out,
            ".\nSigning secret (shown only now; store it to verify deliveries): {secret}"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_search_page_reads_as_one_line_a_job_with_what_to_call_next() {
        let page = json!({
            "data": [{"id": "j1", "role": "Rust Engineer", "company_name": "Nimbus",
                "remote": true, "location": "Berlin", "posted_at": "2026-11-20T08:00:00Z"}],
            "pagination": {"page": 1, "per_page": 1, "total": 2, "total_pages": 2},
            "meta": {"filters": {}},
        });
        let text = render("search_jobs", &page);
        assert!(text.contains("2 jobs match in all; page 1 of 2"), "{text}");
        assert!(
            text.contains("1. Rust Engineer at Nimbus (remote · Berlin), posted 2026-11-20, id j1"),
            "{text}"
        );
        assert!(text.contains("page=2"), "{text}");
    }

    #[test]
    fn a_created_webhook_shows_its_secret_once_said_so() {
        let hook = json!({"id": "w1", "callback_url": "https://x.example/h", "status": "active",
            "domain_filters": [], "remote_only": false, "secret": "whsec_abc"});
        let text = render("create_webhook", &hook);
        assert!(
            text.contains("whsec_abc") && text.contains("shown only now"),
            "{text}"
        );
    }
}
