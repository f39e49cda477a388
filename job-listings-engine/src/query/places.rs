//! Where jobs are, where their remote applicants may live and what they pay: postings by
//! country, remote region, salary currency and map cell, and each document's yearly pay and
//! coordinates for the checks no posting answers exactly.
//!
//! `near` reads the postings of the cells (one degree of latitude by one of longitude) that a
//! circle can touch, then measures the distance of each of their documents' places: no scan
//! of every job, and the answer is exact.

use serde::{Deserialize, Serialize};

use rustc_hash::FxHashMap as HashMap;

use super::bitmap::Docs;
use crate::domain::{distance_km, Country, Currency, RemoteRegion, SalaryRange, EARTH_RADIUS_KM};

/// What a posting of the place index is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Label {
    /// Jobs with a place in this country.
    Country(Country),
    /// Remote jobs whose applicants may live there.
    RemoteFrom(RemoteRegion),
    /// Jobs paid in this currency with a yearly amount.
    Currency(Currency),
    /// Jobs with a place in this cell: the whole degrees of latitude and longitude below it.
    Cell(i16, i16),
}

/// The postings and per-document values of places and pay.
#[derive(Clone, Default, Serialize, Deserialize)]
pub(crate) struct PlaceIndex {
    #[serde(with = "super::bitmap::portable::map")]
    pub(crate) postings: HashMap<Label, Docs>,
    /// The yearly upper bound of each document's pay, for those in a currency posting.
    pub(crate) yearly_pay: HashMap<u32, u64>,
    /// The coordinates of each document's places, for those in a cell posting.
    pub(crate) coordinates: HashMap<u32, Box<[(f64, f64)]>>,
}

/// A `near` search: a point and a radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Circle {
    pub(crate) lat: f64,
    pub(crate) lon: f64,
    pub(crate) radius_km: f64,
}

/// Kilometres a degree of latitude spans.
const KM_PER_DEGREE: f64 = EARTH_RADIUS_KM * std::f64::consts::PI / 180.0;

/// The cell a point lies in, longitudes taken round to -180..180.
fn cell_of(lat: f64, lon: f64) -> (i16, i16) {
    (lat.floor() as i16, wrap_lon(lon.floor() as i32))
}

/// A whole degree of longitude taken round into -180..180.
fn wrap_lon(lon: i32) -> i16 {
    ((lon + 180).rem_euclid(360) - 180) as i16
}

impl PlaceIndex {
    /// Indexes a document's places, remote regions (when it is remote) and pay.
    pub(crate) fn insert(
        &mut self,
        doc: u32,
        places: &[crate::domain::Place],
        remote: bool,
        remote_regions: &[RemoteRegion],
        salary: Option<&SalaryRange>,
    ) {
        let mut add = |label: Label| {
            self.postings.entry(label).or_default().add(doc);
        };
        for place in places {
            add(Label::Country(place.country));
        }
        if remote {
            for region in remote_regions {
                add(Label::RemoteFrom(*region));
            }
        }
        // A search names a currency by three letters: pay in anything else no search finds.
        let pay = salary.and_then(|s| {
            let currency = Currency::parse(&s.currency)
                .ok()
                .filter(|_| s.currency.len() == 3)?;
            Some((currency, s.yearly_max()?))
        });
        if let Some((currency, yearly)) = pay {
            add(Label::Currency(currency));
            self.yearly_pay.insert(doc, yearly);
        }
        let points: Box<[(f64, f64)]> = places.iter().filter_map(|p| p.coordinates()).collect();
        if !points.is_empty() {
            for &(lat, lon) in points.iter() {
                let (y, x) = cell_of(lat, lon);
                self.postings.entry(Label::Cell(y, x)).or_default().add(doc);
            }
            self.coordinates.insert(doc, points);
        }
    }

    /// The index with every document renumbered (`GONE`, any number past the last, for
    /// those that leave).
    pub(crate) fn remapped(&self, renumber: &[u32], remap: impl Fn(&Docs) -> Docs) -> Self {
        let new = |doc: &u32| {
            renumber
                .get(*doc as usize)
                .copied()
                .filter(|&d| d != u32::MAX)
        };
        Self {
            postings: self
                .postings
                .iter()
                .map(|(label, docs)| (*label, remap(docs)))
                .filter(|(_, docs)| !docs.is_empty())
                .collect(),
            yearly_pay: self
                .yearly_pay
                .iter()
                .filter_map(|(doc, pay)| Some((new(doc)?, *pay)))
                .collect(),
            coordinates: self
                .coordinates
                .iter()
                .filter_map(|(doc, points)| Some((new(doc)?, points.clone())))
                .collect(),
        }
    }

    /// Every country with a posting, and the posting.
    pub(crate) fn countries(&self) -> impl Iterator<Item = (Country, &Docs)> {
        self.postings
            .iter()
            .filter_map(|(label, docs)| match label {
                Label::Country(country) => Some((*country, docs)),
                _ => None,
            })
    }

    /// The posting of a label, if any document has it.
    pub(crate) fn posting(&self, label: &Label) -> Option<&Docs> {
        self.postings.get(label)
    }

    /// The postings of the cells a circle may reach.
    pub(crate) fn cells_near(&self, circle: Circle) -> Vec<&Docs> {
        let reach = circle.radius_km / KM_PER_DEGREE;
        let (south, north) = (circle.lat - reach, circle.lat + reach);
        // How far in longitude the circle reaches at the latitude where it reaches
        // furthest; all the way round when it holds a pole.
        let angle = circle.radius_km / EARTH_RADIUS_KM;
        let widest = circle.lat.abs().to_radians().cos();
        let lon_reach = if north >= 90.0 || south <= -90.0 || angle.sin() >= widest {
            180.0
        } else {
            (angle.sin() / widest).asin().to_degrees()
        };
        // A margin for rounding: what lies just past an edge is measured anyway.
        let (west, east) = (circle.lon - lon_reach - 0.01, circle.lon + lon_reach + 0.01);
        let rows =
            (south - 0.01).floor().max(-90.0) as i32..=(north + 0.01).floor().min(90.0) as i32;
        let columns: Vec<i16> = if lon_reach >= 180.0 {
            (-180..180).collect()
        } else {
            let mut c: Vec<i16> = (west.floor() as i32..=east.floor() as i32)
                .map(wrap_lon)
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        };
        let mut found = Vec::new();
        for row in rows {
            for &column in &columns {
                if let Some(docs) = self.postings.get(&Label::Cell(row as i16, column)) {
                    found.push(docs);
                }
            }
        }
        found
    }

    /// Whether a document has a place within the circle.
    pub(crate) fn is_within(&self, doc: u32, circle: Circle) -> bool {
        self.coordinates.get(&doc).is_some_and(|points| {
            points
                .iter()
                .any(|&p| distance_km((circle.lat, circle.lon), p) <= circle.radius_km)
        })
    }

    /// Whether a document's yearly pay is at least `floor`.
    pub(crate) fn pays_at_least(&self, doc: u32, floor: u64) -> bool {
        self.yearly_pay.get(&doc).is_some_and(|&pay| pay >= floor)
    }

    /// About how many bytes of heap it holds.
    pub(crate) fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        let postings: usize = self
            .postings
            .values()
            .map(super::bitmap::heap_bytes)
            .sum::<usize>()
            + self.postings.capacity() * (size_of::<Label>() + size_of::<Docs>() + 1);
        let pay = self.yearly_pay.capacity() * (size_of::<(u32, u64)>() + 1);
        let points: usize = self
            .coordinates
            .values()
            .map(|p| p.len() * size_of::<(f64, f64)>())
            .sum::<usize>()
            + self.coordinates.capacity() * (size_of::<(u32, Box<[(f64, f64)]>)>() + 1);
        (postings + pay + points) as u64
    }

    /// Whether every document number it holds is below `docs`.
    pub(crate) fn fits(&self, docs: usize) -> bool {
        let max_doc = |b: &Docs| b.maximum().map_or(0, |d| d as usize + 1);
        self.postings.values().all(|b| max_doc(b) <= docs)
            && self.yearly_pay.keys().all(|&d| (d as usize) < docs)
            && self.coordinates.keys().all(|&d| (d as usize) < docs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Place;

    fn place(lat: f64, lon: f64) -> Place {
        let mut p = Place::new(Country::parse("FJ").unwrap());
        (p.lat, p.lon) = (Some(lat), Some(lon));
        p
    }

    /// Points on either side of the antimeridian and near a pole are found from any centre
    /// within the radius: the cells read cover every point within it.
    #[test]
    fn the_cells_near_a_circle_hold_every_place_within_it() {
        let points = [
            (-17.7, 179.9),
            (-17.7, -179.9),
            (89.9, 10.0),
            (89.9, -170.0),
            (0.0, 0.0),
            (52.52, 13.405),
            (-90.0, 0.0),
            (90.0, 180.0),
        ];
        let mut index = PlaceIndex::default();
        for (doc, &(lat, lon)) in points.iter().enumerate() {
            index.insert(doc as u32, &[place(lat, lon)], false, &[], None);
        }
        for &(lat, lon) in &points {
            for radius_km in [1.0, 50.0, 400.0, 1_000.0] {
                let circle = Circle {
                    lat,
                    lon,
                    radius_km,
                };
                let reached: Vec<u32> = index
                    .cells_near(circle)
                    .iter()
                    .flat_map(|d| d.iter())
                    .collect();
                for (doc, &p) in points.iter().enumerate() {
                    if distance_km((lat, lon), p) <= radius_km {
                        assert!(reached.contains(&(doc as u32)), "{p:?} from {circle:?}");
                        assert!(index.is_within(doc as u32, circle));
                    }
                }
            }
        }
    }
}
