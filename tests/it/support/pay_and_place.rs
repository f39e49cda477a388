//! The rules of API.md for distance and yearly pay, worked out here for the tests' oracles,
//! apart from the engine's code.

use job_listings::domain::SalaryRange;

/// The haversine distance in km between two points in degrees, on a sphere of the mean
/// Earth radius (6,371.0088 km).
pub fn great_circle_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (p1, p2) = (a.0.to_radians(), b.0.to_radians());
    let (dp, dl) = ((b.0 - a.0).to_radians(), (b.1 - a.1).to_radians());
    let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * 6_371.008_8 * h.sqrt().min(1.0).asin()
}

/// The yearly upper bound of a salary paid in `currency` (any case): `max`, else `min`, times
/// the periods in a year; `None` in another currency, another period, or without an amount.
pub fn yearly_in(salary: Option<&SalaryRange>, currency: &str) -> Option<u64> {
    let s = salary?;
    if !s.currency.eq_ignore_ascii_case(currency) {
        return None;
    }
    let times = match s.period.to_lowercase().as_str() {
        "hour" => 2_080,
        "day" => 260,
        "week" => 52,
        "month" => 12,
        "year" => 1,
        _ => return None,
    };
    s.max.or(s.min)?.checked_mul(times)
}
