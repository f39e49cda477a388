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
    /// The yearly upper bound of each document's pay, read for those in a currency posting
    /// only: [`PAY_ELSEWHERE`] for an amount beyond 32 bits, which `large_pay` holds.
    pub(crate) pay: Vec<u32>,
    pub(crate) large_pay: HashMap<u32, u64>,
    /// The coordinates of every document's places, one document after the other, as numbers
    /// of `points`: document `d`'s are `place_points[point_ends[d - 1]..point_ends[d]]`. Jobs
    /// are mostly in the same cities, so a place costs four bytes, where a table by document
    /// took some fifty for each one with a place.
    pub(crate) place_points: Vec<u32>,
    pub(crate) point_ends: Vec<u32>,
    /// Every point a document has had, each once.
    pub(crate) points: Vec<(f64, f64)>,
    /// The number of each point in `points`, by its bits.
    #[serde(skip)]
    point_numbers: HashMap<(u64, u64), u32>,
    /// The numbers of the points in each cell.
    #[serde(skip)]
    cell_points: HashMap<(i16, i16), Vec<u32>>,
}

/// The cells a circle reaches, as their points settle it.
pub(crate) struct CellsNear<'a> {
    /// The postings of the cells with a point within the circle: every match is in one.
    pub(crate) reached: Vec<&'a Docs>,
    /// The postings of the cells whose every point lies within the circle.
    whole: Vec<&'a Docs>,
    /// The postings of the cells with points on both sides of its edge.
    split: Vec<&'a Docs>,
}

impl CellsNear<'_> {
    /// Whether some document must be measured: a cell has points on both sides of the edge.
    pub(crate) fn any_measured(&self) -> bool {
        !self.split.is_empty()
    }

    /// The documents that may still be outside the circle, `None` when there are none: those
    /// of the split cells, but for the documents of a cell whose every point lies within it.
    pub(crate) fn measured(&self) -> Option<Docs> {
        self.any_measured().then(|| {
            let mut measured = super::bitmap::union(&self.split);
            for docs in &self.whole {
                measured -= *docs;
            }
            measured
        })
    }
}

/// In [`PlaceIndex::pay`]: the amount is in `large_pay`.
const PAY_ELSEWHERE: u32 = u32::MAX;

/// A `near` search: a point and a radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Circle {
    pub(crate) lat: f64,
    pub(crate) lon: f64,
    pub(crate) radius_km: f64,
}

impl From<crate::query::Near> for Circle {
    fn from(near: crate::query::Near) -> Self {
        Circle {
            lat: near.lat,
            lon: near.lon,
            radius_km: near.radius_km,
        }
    }
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
        let mut kept = 0;
        if let Some((currency, yearly)) = pay {
            add(Label::Currency(currency));
            kept = match u32::try_from(yearly) {
                Ok(small) if small != PAY_ELSEWHERE => small,
                _ => {
                    self.large_pay.insert(doc, yearly);
                    PAY_ELSEWHERE
                }
            };
        }
        debug_assert_eq!(doc as usize, self.point_ends.len());
        super::index::push_per_doc(&mut self.pay, kept);
        for (lat, lon) in places.iter().filter_map(|p| p.coordinates()) {
            let (y, x) = cell_of(lat, lon);
            self.postings.entry(Label::Cell(y, x)).or_default().add(doc);
            let number = self.point_number((lat, lon));
            super::index::push_per_doc(&mut self.place_points, number);
        }
        super::index::push_per_doc(&mut self.point_ends, self.place_points.len() as u32);
    }

    /// The number of a point in `points`, added if it is new.
    fn point_number(&mut self, point: (f64, f64)) -> u32 {
        let bits = (point.0.to_bits(), point.1.to_bits());
        if let Some(&n) = self.point_numbers.get(&bits) {
            return n;
        }
        let n = self.points.len() as u32;
        self.points.push(point);
        self.point_numbers.insert(bits, n);
        self.cell_points
            .entry(cell_of(point.0, point.1))
            .or_default()
            .push(n);
        n
    }

    /// Builds what is derived from the points: their numbers, and the points of each cell.
    pub(crate) fn derive(&mut self) {
        self.point_numbers.clear();
        self.cell_points.clear();
        for (n, &(lat, lon)) in (0..).zip(&self.points) {
            self.point_numbers.insert((lat.to_bits(), lon.to_bits()), n);
            self.cell_points
                .entry(cell_of(lat, lon))
                .or_default()
                .push(n);
        }
    }

    /// The coordinates of a document's places.
    fn points_of(&self, doc: u32) -> impl Iterator<Item = (f64, f64)> + '_ {
        let doc = doc as usize;
        let start = doc
            .checked_sub(1)
            .map_or(0, |before| self.point_ends[before]);
        let end = self.point_ends.get(doc).copied().unwrap_or(start);
        self.place_points[start as usize..end as usize]
            .iter()
            .map(|&n| self.points[n as usize])
    }

    /// The index with every document renumbered (`GONE`, any number past the last, for
    /// those that leave); `old_of_new` gives the old number of each new one, in order.
    pub(crate) fn remapped(
        &self,
        renumber: &[u32],
        old_of_new: impl Iterator<Item = u32>,
        remap: impl Fn(&Docs) -> Docs,
    ) -> Self {
        let mut pay = Vec::new();
        let mut place_points = Vec::new();
        let mut point_ends = Vec::new();
        for old in old_of_new {
            pay.push(self.pay[old as usize]);
            let doc = old as usize;
            let start = doc
                .checked_sub(1)
                .map_or(0, |before| self.point_ends[before]);
            place_points.extend_from_slice(
                &self.place_points[start as usize..self.point_ends[doc] as usize],
            );
            point_ends.push(place_points.len() as u32);
        }
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
            pay,
            large_pay: self
                .large_pay
                .iter()
                .filter_map(|(doc, pay)| Some((new(doc)?, *pay)))
                .collect(),
            place_points,
            point_ends,
            points: self.points.clone(),
            point_numbers: self.point_numbers.clone(),
            cell_points: self.cell_points.clone(),
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

    /// The cells a circle may reach, as their points settle it: a cell whose every point
    /// lies within the circle is a match whole, one with no point within it none, and only
    /// the documents of the others are measured. Jobs are mostly in the same cities, so a
    /// search near one is mostly whole cells.
    pub(crate) fn cells_near(&self, circle: Circle) -> CellsNear<'_> {
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
        let mut reached = Vec::new();
        let (mut whole, mut split) = (Vec::new(), Vec::new());
        for row in rows {
            for &column in &columns {
                let cell = (row as i16, column);
                let Some(docs) = self.postings.get(&Label::Cell(cell.0, cell.1)) else {
                    continue;
                };
                let points = self.cell_points.get(&cell).map_or(&[][..], Vec::as_slice);
                let within = points
                    .iter()
                    .filter(|&&n| {
                        let p = self.points[n as usize];
                        distance_km((circle.lat, circle.lon), p) <= circle.radius_km
                    })
                    .count();
                match within {
                    0 => continue,
                    all if all == points.len() => whole.push(docs),
                    _ => split.push(docs),
                }
                reached.push(docs);
            }
        }
        CellsNear {
            reached,
            whole,
            split,
        }
    }

    /// Whether a document has a place within the circle.
    pub(crate) fn is_within(&self, doc: u32, circle: Circle) -> bool {
        self.points_of(doc)
            .any(|p| distance_km((circle.lat, circle.lon), p) <= circle.radius_km)
    }

    /// Whether a document's yearly pay is at least `floor`.
    pub(crate) fn pays_at_least(&self, doc: u32, floor: u64) -> bool {
        match self.pay.get(doc as usize) {
            Some(&PAY_ELSEWHERE) => self.large_pay.get(&doc).is_some_and(|&pay| pay >= floor),
            Some(&pay) => u64::from(pay) >= floor,
            None => false,
        }
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
        let pay = self.pay.capacity() * size_of::<u32>()
            + self.large_pay.capacity() * (size_of::<(u32, u64)>() + 1);
        let points = self.points.capacity() * size_of::<(f64, f64)>()
            + self.point_numbers.capacity() * (size_of::<((u64, u64), u32)>() + 1)
            + (self.place_points.capacity() + self.point_ends.capacity()) * size_of::<u32>();
        (postings + pay + points) as u64
    }

    /// Whether every document number it holds is below `docs`.
    pub(crate) fn fits(&self, docs: usize) -> bool {
        let max_doc = |b: &Docs| b.maximum().map_or(0, |d| d as usize + 1);
        self.postings.values().all(|b| max_doc(b) <= docs)
            && self.large_pay.keys().all(|&d| (d as usize) < docs)
            && self.pay.len() == docs
            && self.point_ends.len() == docs
            && self.point_ends.is_sorted()
            && self
                .point_ends
                .last()
                .is_none_or(|&end| end as usize == self.place_points.len())
            && self
                .place_points
                .iter()
                .all(|&n| (n as usize) < self.points.len())
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

    /// Pay beyond 32 bits is kept exactly beside the rest, and shared points keep each
    /// document's own places, through a renumbering.
    #[test]
    fn pay_of_any_size_and_shared_points_are_kept_exactly() {
        let mut index = PlaceIndex::default();
        let yearly = [
            None,
            Some(1),
            Some(u64::from(u32::MAX) - 1),
            Some(u64::from(u32::MAX)),
            Some(5_000_000_000),
        ];
        let points = [
            vec![],
            vec![place(1.5, 2.5)],
            vec![place(1.5, 2.5), place(-3.0, 4.0)],
        ];
        for (doc, pay) in yearly.iter().enumerate() {
            let salary = pay.map(|max| SalaryRange {
                min: None,
                max: Some(max),
                currency: "JPY".to_owned(),
                period: "year".to_owned(),
            });
            let at = &points[doc % points.len()];
            index.insert(doc as u32, at, false, &[], salary.as_ref());
        }
        assert_eq!(index.points.len(), 2, "each point is kept once");
        let check = |index: &PlaceIndex, doc_of: &dyn Fn(usize) -> u32| {
            for (old, pay) in yearly.iter().enumerate() {
                let doc = doc_of(old);
                if let Some(pay) = *pay {
                    assert!(index.pays_at_least(doc, pay), "{pay}");
                    assert!(!index.pays_at_least(doc, pay + 1), "{pay}");
                }
                let want: Vec<(f64, f64)> = points[old % points.len()]
                    .iter()
                    .filter_map(|p| p.coordinates())
                    .collect();
                assert_eq!(index.points_of(doc).collect::<Vec<_>>(), want);
            }
        };
        check(&index, &|old| old as u32);
        // Reversed.
        let n = yearly.len() as u32;
        let renumber: Vec<u32> = (0..n).map(|d| n - 1 - d).collect();
        let reversed = index.remapped(&renumber, (0..n).rev(), |b| b.clone());
        check(&reversed, &|old| n - 1 - old as u32);
        assert!(reversed.fits(yearly.len()));
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
            // In Berlin's cell, some 33 km from it: the cell is split for small circles.
            (52.52, 13.9),
            (52.9, 13.405),
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
                let near = index.cells_near(circle);
                let reached: Vec<u32> = near.reached.iter().flat_map(|d| d.iter()).collect();
                let measured = near.measured().unwrap_or_default();
                for (doc, &p) in points.iter().enumerate() {
                    let doc = doc as u32;
                    if distance_km((lat, lon), p) <= radius_km {
                        assert!(reached.contains(&doc), "{p:?} from {circle:?}");
                        assert!(index.is_within(doc, circle));
                    } else if reached.contains(&doc) {
                        // Reached but outside: measured, so it is dropped.
                        assert!(measured.contains(doc), "{p:?} from {circle:?}");
                    }
                }
            }
        }
    }
}
