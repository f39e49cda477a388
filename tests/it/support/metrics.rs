//! Reading an exposition in the Prometheus text format: one sample's value by name and labels.

/// The value of the sample `name` whose labels include every pair of `labels`, if the
/// exposition has exactly one; panics when several match (the labels given are too few).
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut found = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (series_name, series_labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.strip_suffix('}')?),
                None => (series, ""),
            };
            let has_all = labels.iter().all(|(k, v)| {
                series_labels
                    .split(',')
                    .any(|pair| pair == format!("{k}=\"{v}\""))
            });
            (series_name == name && has_all).then(|| value.parse::<f64>().expect("a number"))
        });
    let first = found.next();
    assert!(
        found.next().is_none(),
        "several samples of {name} match {labels:?}"
    );
    first
}

/// [`sample`], 0 when the exposition has none (a counter not counted yet).
pub fn count(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(text, name, labels).unwrap_or(0.0)
}
